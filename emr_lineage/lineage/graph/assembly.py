"""Phase 2 of building a graph from events: what was merged per run and per dataset
(:class:`~emr_lineage.lineage.graph.from_events.GraphBuilder`) becomes the graph. Every choice here is
a fixed rule over sets, so the graph does not depend on the order of the events.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.naming import UNNAMED_JOB, job_node_id

# Order of run states, so the merged state of a run does not depend on event order (and, among a
# run's events of one instant, the later state in its life wins: analysis/runs.py).
STATE_RANK = {"OTHER": 0, "START": 1, "RUNNING": 2, "COMPLETE": 3, "ABORT": 4, "FAIL": 5}


@dataclass(slots=True)
class RunRecord:
    """What the events of one run say, merged."""

    jobs: set[tuple[str, str]] = field(default_factory=set)
    parents: set[tuple[str, str]] = field(default_factory=set)
    inputs: set[tuple[str, str]] = field(default_factory=set)
    outputs: set[tuple[str, str]] = field(default_factory=set)
    states: set[str] = field(default_factory=set)
    is_application: bool = False


@dataclass(slots=True)
class DatasetRecord:
    """What the events say of one dataset, merged."""

    aliases: set[tuple[str, str, str]] = field(default_factory=set)
    # A field's type: the string reported (the usual case: one string object per field, not a set),
    # or the set of every type reported when there are several (or one that is not a string).
    fields: dict[str, str | set[Any]] = field(default_factory=dict)
    # A 128-bit digest of the compact JSON of the facets merged last (only of wide ones, see
    # from_events._FINGERPRINT_FROM_FIELDS): merging is a union, so facets equal to these (a
    # redelivered event, the same schema reported again) add nothing new. Not the facets
    # themselves: keeping a decoded event's facets alive keeps dozens of small objects per
    # dataset, scattered among the freed events (1M events held 2 GiB that way).
    last_facets: bytes | None = None


def pick_job(candidates: set[tuple[str, str]]) -> tuple[str, str]:
    """A run's job among the (namespace, name) its events gave: the most specific name (Spark may report
    a generic one in early events of a run), a real name over the placeholder of events without one."""
    if len(candidates) == 1:
        for only in candidates:
            return only
    named = [job for job in candidates if job[1] != UNNAMED_JOB] or candidates
    return max(named, key=lambda job: (len(job[1]), job))


def union_of_types(first: str | set[Any], second: str | set[Any]) -> str | set[Any]:
    """The types of a field reported with ``first`` and with ``second`` (see DatasetRecord.fields)."""
    if first == second:
        return first
    merged = {first} if type(first) is str else set(first)
    merged |= {second} if type(second) is str else second
    return merged


def _field_type(types: str | set[Any]) -> str:
    """One field's type; a field reported with several types lists them all (``a|b``)."""
    if type(types) is str:
        return types
    if len(types) == 1:
        for only in types:
            return only if isinstance(only, str) else str(only)
    return "|".join(sorted(str(t) for t in types if t))


# The known states from the highest rank down; a set holding none of them (only OTHER or states the
# schema does not know, in events read without checks) is ranked by STATE_RANK, then by name.
_BY_RANK = tuple(sorted((state for state, rank in STATE_RANK.items() if rank > 0), key=STATE_RANK.__getitem__))[::-1]


def _final_state(states: set[str]) -> str:
    """A run's state: the highest ranked of its events' states."""
    for state in _BY_RANK:
        if state in states:
            return state
    return max(states, key=lambda state: (STATE_RANK.get(state, 0), state))


def _application_of(
    runs: Iterable[tuple[tuple[str, str], RunRecord]],
) -> dict[tuple[str, str], tuple[str, str]]:
    """Map each action job to the application job it folds into.

    A job folds into its ``parent`` facet's job when that parent is itself a job of these
    events or the child's name starts with ``<parent>.`` (Spark names actions
    ``<app>.<action>``). An application's own parent (an orchestrator such as Airflow, set by
    ``spark.openlineage.parent*``) is neither, so applications are not folded into it.
    """
    known: set[tuple[str, str]] = set()
    parents: dict[tuple[str, str], set[tuple[str, str]]] = {}
    applications: set[tuple[str, str]] = set()
    for job, run in runs:
        known.add(job)
        if run.parents:
            mine = parents.get(job)
            parents[job] = run.parents if mine is None else mine | run.parents  # a run's own set is not changed
        if run.is_application:
            applications.add(job)

    direct: dict[tuple[str, str], tuple[str, str]] = {}
    for job, candidates in parents.items():
        if job in applications:
            continue
        if len(candidates) == 1:  # the usual case, without building a list
            for parent in candidates:
                if parent != job and (parent in known or job[1].startswith(parent[1] + ".")):
                    direct[job] = parent
            continue
        eligible = [p for p in candidates if p != job and (p in known or job[1].startswith(p[1] + "."))]
        if eligible:
            direct[job] = min(eligible)

    # Follow parents up to the application (one step for Spark), guarding against cycles.
    folded: dict[tuple[str, str], tuple[str, str]] = {}
    for job, parent in direct.items():
        if parent not in direct:  # one step: the usual case
            folded[job] = parent
            continue
        seen = {job}
        target = parent
        while target in direct and direct[target] not in seen and target not in seen:
            seen.add(target)
            target = direct[target]
        folded[job] = target
    return folded


def assemble(
    merged_runs: dict[Any, RunRecord],
    datasets: dict[tuple[str, str], DatasetRecord],
    columns: dict[tuple[str, str], dict[str, set[tuple[str, str, str, str]]]],
    level: str,
    source: str = "events",
) -> LineageGraph:
    """The graph of what was merged (``source``: where the events came from, ``events`` or ``marquez``).
    Empties the three maps as it goes: the memory of the runs and datasets is reused for the graph's nodes
    instead of adding to the peak (1M events: ~150 MiB)."""
    graph = LineageGraph(level=level, source=source)
    runs = [(pick_job(run.jobs), run) for run in merged_runs.values()]
    merged_runs.clear()
    folded = _application_of(runs) if level == "application" else {}
    job_runs: dict[tuple[str, str], int] = defaultdict(int)
    job_states: dict[tuple[str, str], set[str]] = defaultdict(set)
    job_actions: dict[tuple[str, str], set[str]] = defaultdict(set)
    job_inputs: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    job_outputs: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for own, run in runs:
        job = folded.get(own)
        if job is None:
            job = own
            job_runs[job] += 1
        else:
            job_actions[job].add(own[1])
        if run.states:
            job_states[job].add(_final_state(run.states))
        job_inputs[job] |= run.inputs
        job_outputs[job] |= run.outputs
    del runs
    # Fold targets (whether or not they sent events of their own) are job nodes.
    for job in set(folded.values()):
        job_runs.setdefault(job, 0)

    # Added in bulk: instead of 100k's of single calls (see LineageGraph.add_bulk).
    dataset_ids = {key: f"dataset:{key[0]}:{key[1]}" for key in datasets}
    nodes = list(_dataset_nodes(datasets, dataset_ids))
    edges: list[tuple[str, str]] = []
    for job in sorted(job_runs):
        job_id = job_node_id(job[0], job[1])
        nodes.append(
            (
                job_id,
                {
                    "id": job_id,
                    "type": "JOB",
                    "namespace": job[0],
                    "name": job[1],
                    "runs": job_runs[job],
                    "states": sorted(job_states.get(job, ())),
                    "actions": sorted(job_actions.get(job, ())),
                },
            )
        )
        edges.extend((dataset_ids[ds_key], job_id) for ds_key in job_inputs.get(job, ()))
        edges.extend((job_id, dataset_ids[ds_key]) for ds_key in job_outputs.get(job, ()))
    graph.add_bulk(nodes, edges)
    del nodes, edges, dataset_ids
    graph.column_edges = _column_edges(columns)  # unsorted here: to_dict() and the renderers sort
    return graph


def _dataset_nodes(
    datasets: dict[tuple[str, str], DatasetRecord], ids: dict[tuple[str, str], str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each dataset's node, its record dropped once it is made."""
    for key in list(datasets):
        info = datasets.pop(key)
        node_id, fields = ids[key], info.fields
        yield (
            node_id,
            {
                "id": node_id,
                "type": "DATASET",
                "namespace": key[0],
                "name": key[1],
                "aliases": [{"namespace": a[0], "name": a[1], "type": a[2]} for a in sorted(info.aliases)]
                if info.aliases
                else [],
                # (a field's usual single type is its string: no call for it)
                "fields": [
                    {"name": n, "type": t if type(t) is str else _field_type(t)} for n, t in sorted(fields.items())
                ]
                if fields
                else [],
            },
        )


def _column_edges(
    columns: dict[tuple[str, str], dict[str, set[tuple[str, str, str, str]]]],
) -> list[dict[str, Any]]:
    """The column edges (``columns`` is emptied)."""
    edges = [
        {
            "source": f"datasetField:{src[0]}:{src[1]}:{src[2]}",
            "target": f"datasetField:{namespace}:{name}:{field}",
            "transformation": src[3],
        }
        for (namespace, name), by_field in columns.items()
        for field, sources in by_field.items()
        for src in sources
    ]
    columns.clear()
    return edges
