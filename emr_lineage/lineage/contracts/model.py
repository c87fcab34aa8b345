"""Expected-graph contracts: load a YAML contract and compare it with a lineage graph.

A contract lists the jobs a pipeline must report, each with its input and output datasets.
Datasets are storage URIs with ``${placeholders}`` for environment-specific roots (the lake
base URI is ``s3://bucket`` on EMR and a local directory for the demo) or catalog tables in
the alias form ``table:<name>`` / ``table:<db>.<name>``, matched against the catalog
symlinks of a dataset (local Spark catalog ``default.t`` or Glue ``table/<db>/<t>``), or location
trees ``<uri>/**`` (the location and every dataset below it). So the
same contract checks a local demo run and a deployed run. The format is documented in
``docs/contracts.md``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from emr_lineage.errors import EmrLineageError
from emr_lineage.lineage.graph.model import LEVELS

CONTRACT_VERSION = 1
_PLACEHOLDER_RE = re.compile(r"\$\{([^}]*)\}")
_VAR_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TABLE_PREFIX = "table:"
# A dataset ending so is a location tree: the location and every dataset below it.
TREE_SUFFIX = "/**"


class ContractError(EmrLineageError, ValueError):
    """A contract that cannot be read or used; the message names the file and line."""


class _Str(str):
    line: int = 0


class _Dict(dict):
    line: int = 0


class _List(list):
    line: int = 0
    item_lines: list[int] = []


class _LineLoader(yaml.SafeLoader):
    """SafeLoader that remembers the 1-based line of every mapping, sequence and string."""


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode) -> _Dict:
    keys_seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in keys_seen:
            raise yaml.MarkedYAMLError(
                problem=f"duplicate key {key!r} (first on line {keys_seen[key]})",
                problem_mark=key_node.start_mark,
            )
        keys_seen[key] = key_node.start_mark.line + 1
    result = _Dict(loader.construct_mapping(node, deep=True))
    result.line = node.start_mark.line + 1
    return result


def _construct_sequence(loader: _LineLoader, node: yaml.SequenceNode) -> _List:
    result = _List(loader.construct_sequence(node, deep=True))
    result.line = node.start_mark.line + 1
    result.item_lines = [item.start_mark.line + 1 for item in node.value]
    return result


def _construct_str(loader: _LineLoader, node: yaml.ScalarNode) -> _Str:
    result = _Str(loader.construct_scalar(node))
    result.line = node.start_mark.line + 1
    return result


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


_LineLoader.add_constructor("tag:yaml.org,2002:str", _construct_str)


def _line(value: Any, fallback: int) -> int:
    return getattr(value, "line", 0) or fallback


@dataclass(frozen=True)
class Variable:
    """A placeholder declared by the contract; ``default`` None means it must be given."""

    name: str
    default: str | None
    description: str = ""


@dataclass(frozen=True)
class DatasetSpec:
    """One expected dataset as written in the contract (before placeholders are resolved)."""

    text: str
    line: int
    optional: bool = False


@dataclass(frozen=True)
class JobSpec:
    """One expected job: its name, namespace template and datasets, as written."""

    name: str
    namespace: str
    inputs: tuple[DatasetSpec, ...]
    outputs: tuple[DatasetSpec, ...]
    line: int


@dataclass(frozen=True)
class Contract:
    """A loaded contract. Use :func:`validate` to compare it with a graph."""

    path: str
    level: str
    variables: Mapping[str, Variable]
    jobs: tuple[JobSpec, ...]
    description: str = ""

    def resolve_variables(self, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
        """Defaults overlaid with ``overrides`` (e.g. from ``--var``); every variable must end set.

        Raises :class:`ContractError` for an undeclared or missing variable.
        """
        overrides = dict(overrides or {})
        unknown = sorted(set(overrides) - set(self.variables))
        if unknown:
            declared = ", ".join(sorted(self.variables)) or "none"
            raise ContractError(f"{self.path}: unknown variable {unknown[0]!r} (declared: {declared})")
        values: dict[str, str] = {}
        for name, variable in self.variables.items():
            value = overrides.get(name, variable.default)
            if value is None:
                raise ContractError(f"{self.path}: variable {name!r} has no default; give it with --var {name}=VALUE")
            values[name] = value
        return values


def load_contract(path: str | Path) -> Contract:
    """Read and check a contract file. Raises :class:`ContractError` naming file and line."""
    path_text = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ContractError(f"{path_text}: cannot read contract: {reason}") from None
    return parse_contract(text, path_text)


def parse_contract(text: str, path: str = "<contract>") -> Contract:
    """Parse contract YAML text (``path`` is only used in messages)."""
    try:
        document = yaml.load(text, Loader=_LineLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = exc.problem or str(exc)
        raise ContractError(f"{path}{where}: invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:
        raise ContractError(f"{path}: invalid YAML: {exc}") from None

    def fail(message: str, at: Any = None, line: int = 1) -> ContractError:
        return ContractError(f"{path}:{_line(at, line)}: {message}")

    if not isinstance(document, dict):
        raise fail("a contract is a YAML mapping with 'version' and 'jobs'", document)
    known_keys = {"version", "description", "level", "namespace", "variables", "jobs"}
    for key in document:
        if key not in known_keys:
            raise fail(f"unknown key {key!r} (expected one of {', '.join(sorted(known_keys))})", key)
    version = document.get("version")
    if version != CONTRACT_VERSION:
        raise fail(f"'version' must be {CONTRACT_VERSION}, got {version!r}", document)
    level = document.get("level", "application")
    if level not in LEVELS:
        raise fail(f"'level' must be one of {', '.join(LEVELS)}, got {level!r}", level, document.line)
    description = document.get("description", "") or ""
    if not isinstance(description, str):
        raise fail("'description' must be a string", description, document.line)

    variables = _parse_variables(document.get("variables", {}), fail, document.line)
    default_namespace = document.get("namespace", _DEFAULT_NAMESPACE)
    if not isinstance(default_namespace, str) or not default_namespace:
        raise fail("'namespace' must be a non-empty string", default_namespace, document.line)

    raw_jobs = document.get("jobs")
    if not isinstance(raw_jobs, list) or not raw_jobs:
        raise fail("'jobs' must be a non-empty list of jobs", raw_jobs, document.line)
    jobs: list[JobSpec] = []
    seen: dict[tuple[str, str], int] = {}
    for raw_job in raw_jobs:
        job = _parse_job(raw_job, default_namespace, fail, raw_jobs.line)
        key = (job.namespace, job.name)
        if key in seen:
            raise fail(f"job {job.name!r} listed twice (first on line {seen[key]})", raw_job)
        seen[key] = job.line
        jobs.append(job)

    contract = Contract(path=path, level=level, variables=variables, jobs=tuple(jobs), description=description)
    _check_placeholders(contract, fail)
    return contract


def _parse_variables(raw: Any, fail: Any, line: int) -> dict[str, Variable]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise fail("'variables' must be a mapping of name to default (or to {default, description})", raw, line)
    variables: dict[str, Variable] = {}
    for name, spec in raw.items():
        if not isinstance(name, str) or not _VAR_NAME_RE.match(name):
            raise fail(f"invalid variable name {name!r} (letters, digits, underscore)", name, raw.line)
        if isinstance(spec, dict):
            unknown = set(spec) - {"default", "description"}
            if unknown:
                raise fail(f"variable {name!r}: unknown key {sorted(unknown)[0]!r}", spec)
            default, description = spec.get("default"), spec.get("description", "") or ""
        else:
            default, description = spec, ""
        if default is not None and not isinstance(default, (str, int, float)):
            raise fail(f"variable {name!r}: default must be a string", spec, raw.line)
        variables[name] = Variable(
            name=name, default=None if default is None else str(default), description=str(description)
        )
    return variables


_DEFAULT_NAMESPACE = "${namespace}"
_NO_NAMESPACE = (
    f"the jobs' namespace is {_DEFAULT_NAMESPACE} and no variable 'namespace' is declared: "
    "set 'namespace:' (at the top or in the job) or declare the variable"
)


def _parse_job(raw: Any, default_namespace: str, fail: Any, line: int) -> JobSpec:
    if not isinstance(raw, dict):
        raise fail("each job is a mapping with 'name', 'inputs' and 'outputs'", raw, line)
    unknown = set(raw) - {"name", "namespace", "inputs", "outputs"}
    if unknown:
        raise fail(f"job: unknown key {sorted(unknown)[0]!r}", raw)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise fail("job without a 'name'", raw)
    namespace = raw.get("namespace", default_namespace)
    if not isinstance(namespace, str) or not namespace:
        raise fail(f"job {name!r}: 'namespace' must be a non-empty string", raw)

    def datasets(key: str) -> tuple[DatasetSpec, ...]:
        value = raw.get(key, [])
        if value is None:
            return ()
        if not isinstance(value, list):
            raise fail(f"job {name!r}: '{key}' must be a list of datasets", value, raw.line)
        specs = []
        item_lines = getattr(value, "item_lines", [])
        for index, item in enumerate(value):
            optional = False
            if isinstance(item, dict):
                extra = set(item) - {"dataset", "optional"}
                if extra or "dataset" not in item:
                    raise fail(f"job {name!r}: a dataset is a string or {{dataset: ..., optional: true}}", item)
                optional = item.get("optional", False)
                if not isinstance(optional, bool):
                    raise fail(f"job {name!r}: 'optional' must be true or false", item)
                item_line, item = item.line, item["dataset"]
            else:
                item_line = item_lines[index] if index < len(item_lines) else value.line
            if not isinstance(item, str) or not item.strip():
                raise fail(f"job {name!r}: dataset must be a non-empty string, got {item!r}", item, item_line)
            specs.append(DatasetSpec(text=str(item).strip(), line=item_line, optional=optional))
        return tuple(specs)

    inputs, outputs = datasets("inputs"), datasets("outputs")
    if not inputs and not outputs:
        raise fail(f"job {name!r} lists neither inputs nor outputs", raw)
    return JobSpec(name=str(name), namespace=str(namespace), inputs=inputs, outputs=outputs, line=raw.line)


def _check_placeholders(contract: Contract, fail: Any) -> None:
    def check(text: str, line: int) -> None:
        for match in _PLACEHOLDER_RE.finditer(text):
            if match.group(1) not in contract.variables:
                if text == _DEFAULT_NAMESPACE:  # maybe never written: the namespace a contract has by default
                    raise fail(_NO_NAMESPACE, None, line)
                raise fail(f"placeholder ${{{match.group(1)}}} is not a declared variable", None, line)
        if "${" in _PLACEHOLDER_RE.sub("", text):
            raise fail(f"unterminated placeholder in {text!r}", None, line)

    for job in contract.jobs:
        check(job.namespace, job.line)
        for spec in job.inputs + job.outputs:
            check(spec.text, spec.line)


def substitute(text: str, variables: Mapping[str, str]) -> str:
    """Replace every ``${name}`` in ``text``; a trailing slash of a value is not doubled."""

    def replace(match: re.Match[str]) -> str:
        value = variables[match.group(1)]
        after = text[match.end() : match.end() + 1]
        return value.rstrip("/") if after == "/" and value not in ("/", "") else value

    return _PLACEHOLDER_RE.sub(replace, text)
