"""Expected-graph contracts: load a YAML contract and compare it with a lineage graph.

A contract lists the jobs a pipeline must report, each with its input and output datasets.
Datasets are storage URIs with ``${placeholders}`` for environment-specific roots (the lake
base URI is ``s3://bucket`` on EMR and a local directory for the demo) or catalog tables in
the alias form ``table:<name>`` / ``table:<db>.<name>``, matched against the catalog
symlinks of a dataset (local Spark catalog ``default.t`` or Glue ``table/<db>/<t>``). So the
same contract checks a local demo run and a deployed run. The format is documented in
``docs/contracts.md``.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from emr_lineage.naming import (
    NamingError,
    canonical_dataset,
    dataset_identity,
    dataset_node_id,
    dataset_uri,
    job_node_id,
)

CONTRACT_VERSION = 1
_PLACEHOLDER_RE = re.compile(r"\$\{([^}]*)\}")
_VAR_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TABLE_PREFIX = "table:"
LEVELS = ("application", "action")


class ContractError(ValueError):
    """A contract that cannot be read or used; the message names the file and line."""


# --- YAML with line numbers -------------------------------------------------------------


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


# --- contract model ------------------------------------------------------------------------


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


@dataclass(frozen=True)
class DatasetMatcher:
    """A resolved expected dataset: a storage identity, or a catalog table alias."""

    label: str
    line: int
    optional: bool = False
    namespace: str | None = None
    name: str | None = None
    table: str | None = None
    database: str | None = None

    @property
    def is_table(self) -> bool:
        return self.table is not None

    def matches(self, node: Mapping[str, Any]) -> bool:
        """True if a DATASET node of the graph is this dataset (by identity or catalog alias)."""
        if not self.is_table:
            return node["namespace"] == self.namespace and node["name"] == self.name
        candidates = [(node["namespace"], node["name"])]
        candidates += [(alias["namespace"], alias["name"]) for alias in node.get("aliases", ())]
        return any(self._table_matches(ns, name) for ns, name in candidates)

    def _table_matches(self, namespace: str, name: str) -> bool:
        parsed = parse_table_name(namespace, name)
        if parsed is None:
            return False
        database, table = parsed
        if table.lower() != (self.table or "").lower():
            return False
        return self.database is None or (database or "").lower() == self.database.lower()


def parse_table_name(namespace: str, name: str) -> tuple[str | None, str] | None:
    """``(database, table)`` of a catalog identifier, or None if it is not one.

    Glue (namespace ``arn:aws:glue:...``): ``table/<db>/<table>``. Hive metastore and the
    Spark session catalog: ``<db>.<table>`` (optionally ``<catalog>.<db>.<table>``).
    Storage paths (``/``-separated, or in an ``s3://``/``file`` namespace) are not tables.
    """
    if namespace.startswith("arn:aws:glue:"):
        parts = name.split("/")
        if len(parts) == 3 and parts[0] == "table":
            return parts[1], parts[2]
        return None
    if namespace == "file" or re.match(r"^(s3a?|s3n|gs|hdfs)://[^/]+/?$", namespace):
        return None
    if "/" in name or not name:
        return None
    parts = name.split(".")
    return (parts[-2] if len(parts) >= 2 else None), parts[-1]


@dataclass(frozen=True)
class ExpectedJob:
    namespace: str
    name: str
    inputs: tuple[DatasetMatcher, ...]
    outputs: tuple[DatasetMatcher, ...]
    line: int

    @property
    def node_id(self) -> str:
        return job_node_id(self.namespace, self.name)


@dataclass(frozen=True)
class EdgeDiff:
    """A difference between the contract and the graph, as one table row."""

    status: str  # "missing" | "unexpected" | "optional-missing"
    job: str  # job node id
    direction: str  # "input" | "output"
    dataset: str  # readable dataset (URI, table alias or node id)
    hint: str = ""

    def as_dict(self) -> dict[str, str]:
        return {
            "status": self.status,
            "job": self.job,
            "direction": self.direction,
            "dataset": self.dataset,
            "hint": self.hint,
        }


@dataclass
class ContractResult:
    """Outcome of :func:`validate`; ``ok`` is True when nothing is missing or unexpected."""

    contract: str
    variables: dict[str, str]
    matched: list[EdgeDiff] = field(default_factory=list)
    missing: list[EdgeDiff] = field(default_factory=list)
    unexpected: list[EdgeDiff] = field(default_factory=list)
    optional_missing: list[EdgeDiff] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    ignored_jobs: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.unexpected

    @property
    def differences(self) -> list[EdgeDiff]:
        return self.missing + self.unexpected

    def as_dict(self) -> dict[str, Any]:
        return {
            "contract": self.contract,
            "ok": self.ok,
            "variables": dict(sorted(self.variables.items())),
            "matched": [d.as_dict() for d in self.matched],
            "missing": [d.as_dict() for d in self.missing],
            "unexpected": [d.as_dict() for d in self.unexpected],
            "optional_missing": [d.as_dict() for d in self.optional_missing],
            "hints": list(self.hints),
            "ignored_jobs": list(self.ignored_jobs),
        }


# --- loading -------------------------------------------------------------------------------


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
    default_namespace = document.get("namespace", "${namespace}")
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
                raise fail(f"placeholder ${{{match.group(1)}}} is not a declared variable", None, line)
        if "${" in _PLACEHOLDER_RE.sub("", text):
            raise fail(f"unterminated placeholder in {text!r}", None, line)

    for job in contract.jobs:
        check(job.namespace, job.line)
        for spec in job.inputs + job.outputs:
            check(spec.text, spec.line)


# --- resolving -----------------------------------------------------------------------------


def substitute(text: str, variables: Mapping[str, str]) -> str:
    """Replace every ``${name}`` in ``text``; a trailing slash of a value is not doubled."""

    def replace(match: re.Match[str]) -> str:
        value = variables[match.group(1)]
        after = text[match.end() : match.end() + 1]
        return value.rstrip("/") if after == "/" and value not in ("/", "") else value

    return _PLACEHOLDER_RE.sub(replace, text)


def resolve_dataset(spec: DatasetSpec, variables: Mapping[str, str], path: str) -> DatasetMatcher:
    """Turn a contract dataset into a matcher (storage identity via :mod:`emr_lineage.naming`)."""
    text = substitute(spec.text, variables)
    if text.startswith(_TABLE_PREFIX):
        reference = text[len(_TABLE_PREFIX) :].strip()
        parts = reference.split(".")
        if not reference or len(parts) > 2 or not all(parts):
            raise ContractError(
                f"{path}:{spec.line}: table alias must be table:<name> or table:<db>.<name>, got {text!r}"
            )
        database, table = (parts[0], parts[1]) if len(parts) == 2 else (None, parts[0])
        return DatasetMatcher(label=text, line=spec.line, optional=spec.optional, table=table, database=database)
    try:
        namespace, name = dataset_identity(text)
    except NamingError as exc:
        raise ContractError(f"{path}:{spec.line}: {exc}") from None
    return DatasetMatcher(
        label=dataset_uri(namespace, name), line=spec.line, optional=spec.optional, namespace=namespace, name=name
    )


def resolve(contract: Contract, variables: Mapping[str, str] | None = None) -> list[ExpectedJob]:
    """The contract's jobs with placeholders replaced (``variables`` overlay the defaults)."""
    values = contract.resolve_variables(variables)
    return [
        ExpectedJob(
            namespace=substitute(job.namespace, values),
            name=job.name,
            inputs=tuple(resolve_dataset(spec, values, contract.path) for spec in job.inputs),
            outputs=tuple(resolve_dataset(spec, values, contract.path) for spec in job.outputs),
            line=job.line,
        )
        for job in contract.jobs
    ]


# --- validating ----------------------------------------------------------------------------


def validate(contract: Contract, graph: Any, variables: Mapping[str, str] | None = None) -> ContractResult:
    """Compare ``graph`` (a :class:`emr_lineage.graph.LineageGraph`) with the contract.

    Expected edges are ``dataset -> job`` for inputs and ``job -> dataset`` for outputs.
    Edges of contract jobs that the contract does not list are unexpected, and so are all
    edges of unlisted jobs in a namespace the contract covers; jobs of other namespaces are
    ignored (listed in ``ignored_jobs``). Raises :class:`ContractError` for bad variables.
    """
    values = contract.resolve_variables(variables)
    expected_jobs = resolve(contract, values)
    result = ContractResult(contract=contract.path, variables=values)
    nodes = graph.nodes  # id -> attribute mapping
    datasets = [node for node in nodes.values() if node["type"] == "DATASET"]
    jobs_by_name: dict[str, list[str]] = defaultdict(list)
    for node in nodes.values():
        if node["type"] == "JOB":
            jobs_by_name[node["name"]].append(node["namespace"])

    for expected in expected_jobs:
        job_id = expected.node_id
        present = job_id in nodes
        for direction, matchers, actual_ids in (
            ("input", expected.inputs, graph.inputs_of(job_id) if present else []),
            ("output", expected.outputs, graph.outputs_of(job_id) if present else []),
        ):
            remaining = set(actual_ids)
            unmatched: list[DatasetMatcher] = []
            for matcher in matchers:
                hits = sorted(i for i in actual_ids if matcher.matches(nodes[i]))
                if hits:
                    remaining.difference_update(hits)
                    result.matched.extend(EdgeDiff("matched", job_id, direction, _label(nodes[h])) for h in hits)
                    continue
                unmatched.append(matcher)
                hint = _job_hint(expected, jobs_by_name) if not present else _dataset_hint(matcher, datasets)
                row = EdgeDiff("missing", job_id, direction, matcher.label, hint)
                (result.optional_missing if matcher.optional else result.missing).append(row)
            for dataset_id in sorted(remaining):
                hint = _respelling_hint(nodes[dataset_id], unmatched)
                result.unexpected.append(EdgeDiff("unexpected", job_id, direction, _label(nodes[dataset_id]), hint))

    expected_ids = {job.node_id for job in expected_jobs}
    covered_namespaces = {job.namespace for job in expected_jobs}
    for node_id, node in sorted(nodes.items()):
        if node["type"] != "JOB" or node_id in expected_ids:
            continue
        if node["namespace"] not in covered_namespaces:
            result.ignored_jobs.append(node_id)
            continue
        hint = "job not in the contract"
        for dataset_id in graph.inputs_of(node_id):
            result.unexpected.append(EdgeDiff("unexpected", node_id, "input", _label(nodes[dataset_id]), hint))
        for dataset_id in graph.outputs_of(node_id):
            result.unexpected.append(EdgeDiff("unexpected", node_id, "output", _label(nodes[dataset_id]), hint))

    result.hints = _graph_hints(datasets, expected_jobs)
    for rows in (result.matched, result.missing, result.unexpected, result.optional_missing):
        rows.sort(key=lambda d: (d.job, d.direction, d.dataset))
    return result


def _label(node: Mapping[str, Any]) -> str:
    return dataset_uri(node["namespace"], node["name"])


def _job_hint(expected: ExpectedJob, jobs_by_name: Mapping[str, list[str]]) -> str:
    elsewhere = sorted(ns for ns in jobs_by_name.get(expected.name, ()) if ns != expected.namespace)
    if elsewhere:
        return (
            f"job {expected.name!r} seen in namespace {elsewhere[0]!r}, contract expects "
            f"{expected.namespace!r} (check --var namespace / spark.openlineage.namespace)"
        )
    return f"job {expected.name!r} not in the graph"


def _dataset_hint(matcher: DatasetMatcher, datasets: Iterable[Mapping[str, Any]]) -> str:
    if matcher.is_table:
        names = sorted(_label(node) for node in datasets if matcher.matches(node))
        if names:
            return f"table seen as {', '.join(names)} but not on this edge"
        return ""
    want = canonical_dataset(matcher.namespace or "", matcher.name or "")
    for node in datasets:
        if canonical_dataset(node["namespace"], node["name"]) == want:
            return "namespace misalignment: " + _spelling_difference(
                (matcher.namespace or "", matcher.name or ""), (node["namespace"], node["name"])
            )
    return ""


def _respelling_hint(node: Mapping[str, Any], unmatched: list[DatasetMatcher]) -> str:
    seen = canonical_dataset(node["namespace"], node["name"])
    for matcher in unmatched:
        if not matcher.is_table and canonical_dataset(matcher.namespace or "", matcher.name or "") == seen:
            return f"another spelling of the expected {matcher.label}"
    return ""


def _spelling_difference(expected: tuple[str, str], seen: tuple[str, str]) -> str:
    (exp_ns, exp_name), (seen_ns, seen_name) = expected, seen
    seen_text = f"seen as namespace {seen_ns!r} name {seen_name!r}"
    if exp_ns.split("://")[0] != seen_ns.split("://")[0]:
        return f"{seen_text}: {seen_ns.split('://')[0]}:// vs {exp_ns.split('://')[0]}:// (report s3:// everywhere)"
    if seen_ns.endswith("/") or seen_name.endswith("/"):
        return f"{seen_text}: trailing slash"
    if seen_name.startswith("/") != exp_name.startswith("/"):
        return f"{seen_text}: leading slash on the name"
    return seen_text


def _graph_hints(datasets: list[Mapping[str, Any]], expected_jobs: list[ExpectedJob]) -> list[str]:
    """Graph-wide misalignment: one dataset under two spellings, one table under two names."""
    hints: list[str] = []
    by_canonical: dict[tuple[str, str], list[str]] = defaultdict(list)
    for node in datasets:
        by_canonical[canonical_dataset(node["namespace"], node["name"])].append(node["id"])
    for ids in by_canonical.values():
        if len(ids) > 1:
            hints.append(f"one dataset under {len(ids)} spellings (s3 vs s3a, slashes): {', '.join(sorted(ids))}")
    tables = {m.label: m for job in expected_jobs for m in job.inputs + job.outputs if m.is_table}
    for label, matcher in sorted(tables.items()):
        ids = sorted(node["id"] for node in datasets if matcher.matches(node))
        if len(ids) > 1:
            hints.append(f"{label} seen under {len(ids)} names: {', '.join(ids)}")
    return sorted(hints)


def expected_dataset_ids(contract: Contract, variables: Mapping[str, str] | None = None) -> list[str]:
    """Marquez node ids of the contract's storage datasets (tables excluded), for reports."""
    ids = set()
    for job in resolve(contract, variables):
        for matcher in job.inputs + job.outputs:
            if not matcher.is_table:
                ids.add(dataset_node_id(matcher.namespace or "", matcher.name or ""))
    return sorted(ids)
