"""Check a lineage graph against a contract: which expected edges it has, lacks, and has besides.

An expected dataset is a storage identity, a location tree (``<uri>/**``: the location and every
dataset under it, e.g. the parts a Spark ML model is saved as) or a catalog table alias.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.lineage.contracts.model import (
    _TABLE_PREFIX,
    TREE_SUFFIX,
    Contract,
    ContractError,
    DatasetSpec,
    substitute,
)
from emr_lineage.lineage.naming import (
    NamingError,
    canonical_dataset,
    dataset_identity,
    dataset_node_id,
    dataset_uri,
    job_node_id,
)


@dataclass(frozen=True)
class DatasetMatcher:
    """A resolved expected dataset: a storage identity (with ``tree``: it and everything under it), or a
    catalog table alias."""

    label: str
    line: int
    optional: bool = False
    namespace: str | None = None
    name: str | None = None
    table: str | None = None
    database: str | None = None
    tree: bool = False

    @property
    def is_table(self) -> bool:
        return self.table is not None

    def matches(self, node: Mapping[str, Any]) -> bool:
        """True if a DATASET node of the graph is this dataset (by identity, location tree or catalog alias)."""
        if not self.is_table:
            if node["namespace"] != self.namespace:
                return False
            name = self.name or ""
            return node["name"] == name or (self.tree and node["name"].startswith(name.rstrip("/") + "/"))
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


def resolve_dataset(spec: DatasetSpec, variables: Mapping[str, str], path: str) -> DatasetMatcher:
    """Turn a contract dataset into a matcher (storage identity via :mod:`emr_lineage.lineage.naming`)."""
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
    tree = text.endswith(TREE_SUFFIX)
    try:
        namespace, name = dataset_identity(text.removesuffix(TREE_SUFFIX) if tree else text)
    except NamingError as exc:
        raise ContractError(f"{path}:{spec.line}: {exc}") from None
    label = dataset_uri(namespace, name) + (TREE_SUFFIX if tree else "")
    return DatasetMatcher(
        label=label, line=spec.line, optional=spec.optional, namespace=namespace, name=name, tree=tree
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


def validate(contract: Contract, graph: Any, variables: Mapping[str, str] | None = None) -> ContractResult:
    """Compare ``graph`` (a :class:`emr_lineage.lineage.graph.model.LineageGraph`) with the contract.

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
    """Marquez node ids of the contract's storage datasets (tables and location trees excluded), for reports."""
    ids = set()
    for job in resolve(contract, variables):
        for matcher in job.inputs + job.outputs:
            if not matcher.is_table and not matcher.tree:
                ids.add(dataset_node_id(matcher.namespace or "", matcher.name or ""))
    return sorted(ids)
