"""What a Spark query read and wrote, read off its analyzed logical plan through py4j.

Two sources, each for what it does best: ``plan.toJSON()`` gives the whole expression tree in
one py4j call (column lineage is computed from it in Python), and a handful of py4j calls on the
leaf relations and the write command give what JSON leaves out (paths, tables, save modes).
Everything here is plain data; turning it into OpenLineage events is ``emr_lineage.spark.capture.facets``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

_EXPR = "org.apache.spark.sql.catalyst.expressions."
ATTRIBUTE = _EXPR + "AttributeReference"
ALIAS = _EXPR + "Alias"
AGGREGATE = _EXPR + "aggregate.AggregateExpression"
WINDOW = _EXPR + "WindowExpression"
# Plan fields whose expressions define new columns, and those that only shape which rows
# survive (the latter become dataset-level INDIRECT lineage, as in the Spark integration).
_DEFINING_FIELDS = ("projectList", "aggregateExpressions", "windowExpressions")
_INDIRECT_FIELDS = {
    "condition": "FILTER",
    "groupingExpressions": "GROUP_BY",
    "order": "SORT",
    "keys": "GROUP_BY",  # Deduplicate
    "partitionSpec": "WINDOW",
}


_JOIN = "org.apache.spark.sql.catalyst.plans.logical.Join"
# A persisted Spark ML pipeline writes and reads one Parquet file per stage under
# <model>/stages/<i>_<uid>/data; the model directory is the dataset users know.
_ML_STAGE_DATA = re.compile(r"^(?P<model>.+)/stages/\d+_[^/]+/data/?$")


@dataclass(frozen=True)
class Column:
    name: str
    type: str


@dataclass(frozen=True)
class TableRef:
    """A catalog table a dataset is known as (becomes a ``symlinks`` identifier)."""

    database: str
    table: str


@dataclass
class DatasetRef:
    uri: str
    columns: list[Column] = field(default_factory=list)
    table: TableRef | None = None


@dataclass
class OutputRef(DatasetRef):
    lifecycle: str | None = None  # OVERWRITE / CREATE / None for plain appends


@dataclass(frozen=True)
class InputColumn:
    uri: str
    column: str
    type: str  # DIRECT / INDIRECT
    subtype: str  # IDENTITY / TRANSFORMATION / AGGREGATION / FILTER / GROUP_BY / SORT / JOIN / WINDOW


@dataclass
class QueryLineage:
    """One Spark action: the command that ran and the datasets on each side."""

    node_name: str
    inputs: list[DatasetRef]
    outputs: list[OutputRef]
    # output column -> its input columns; dataset-level (INDIRECT) inputs apart
    column_lineage: dict[str, list[InputColumn]] = field(default_factory=dict)
    dataset_lineage: list[InputColumn] = field(default_factory=list)


def normalize_uri(uri: str) -> str:
    """Collapse ML stage files onto their model directory; drop trailing slashes."""
    uri = uri.rstrip("/") or uri
    match = _ML_STAGE_DATA.match(uri)
    return match.group("model") if match else uri


def _seq(jseq) -> Iterator:
    """Iterate a Scala Seq through py4j."""
    iterator = jseq.iterator()
    while iterator.hasNext():
        yield iterator.next()


def _option(jopt):
    return jopt.get() if jopt.isDefined() else None


def _class_name(jobj) -> str:
    return jobj.getClass().getName()


def _columns(attributes: Iterable, names: list[str] | None = None) -> list[Column]:
    columns = []
    for index, attribute in enumerate(attributes):
        name = names[index] if names and index < len(names) else attribute.name()
        columns.append(Column(name, attribute.dataType().typeName()))
    return columns


def _table_ref(jtable) -> TableRef:
    identifier = jtable.identifier()
    return TableRef(_option(identifier.database()) or "default", identifier.table())


def _leaf_datasets(leaf) -> list[tuple[DatasetRef, list[int]]]:
    """Datasets of one leaf relation, each with the exprIds of the leaf's output columns."""
    kind = _class_name(leaf)
    if kind.endswith(".LogicalRelation"):
        relation = leaf.relation()
        if not _class_name(relation).endswith(".HadoopFsRelation"):
            return []
        jtable = _option(leaf.catalogTable())
        uris = [str(path.toString()) for path in _seq(relation.location().rootPaths())]
    elif kind.endswith(".HiveTableRelation"):
        jtable = leaf.tableMeta()
        location = _option(jtable.storage().locationUri())
        uris = [str(location.toString())] if location is not None else []
    else:
        return []  # in-memory data (LocalRelation, LogicalRDD, Range...) is not a dataset
    attributes = list(_seq(leaf.output()))
    ids = [attribute.exprId().id() for attribute in attributes]
    columns = _columns(attributes)
    table = _table_ref(jtable) if jtable is not None else None
    return [(DatasetRef(normalize_uri(uri), columns, table), ids) for uri in uris]


def _write_target(command, session) -> tuple[OutputRef, object] | None:
    """(output dataset, the query that produced it) of a write command; None if not a write."""
    kind = _class_name(command).rsplit(".", 1)[-1]
    if kind == "InsertIntoHadoopFsRelationCommand":
        query = command.query()
        names = [str(n) for n in _seq(command.outputColumnNames())]
        mode = str(command.mode().toString())
        jtable = _option(command.catalogTable())
        output = OutputRef(
            normalize_uri(str(command.outputPath().toString())),
            _columns(_seq(query.output()), names),
            _table_ref(jtable) if jtable is not None else None,
            lifecycle="OVERWRITE" if mode == "Overwrite" else None,
        )
        return output, query
    if kind in ("CreateDataSourceTableAsSelectCommand", "CreateHiveTableAsSelectCommand"):
        query = command.query()
        jtable = command.tableDesc() if kind.startswith("CreateHive") else command.table()
        location = _option(jtable.storage().locationUri())
        if location is None:
            location = session.sessionState().catalog().defaultTablePath(jtable.identifier())
        names = [str(n) for n in _seq(command.outputColumnNames())]
        output = OutputRef(
            normalize_uri(str(location.toString())),
            _columns(_seq(query.output()), names),
            _table_ref(jtable),
            lifecycle="CREATE",
        )
        return output, query
    return None


def _expression_lists(node: dict, key: str) -> list[list[dict]]:
    """A JSON plan field holding one flattened expression tree or a list of them."""
    value = node.get(key)
    if not isinstance(value, list) or not value:
        return []
    if isinstance(value[0], dict):
        return [value]
    return [item for item in value if isinstance(item, list) and item and isinstance(item[0], dict)]


def _attribute_ids(expression: list[dict]) -> list[int]:
    return [e["exprId"]["id"] for e in expression if e.get("class") == ATTRIBUTE and "exprId" in e]


def _subtype(expression: list[dict]) -> str:
    classes = [e.get("class") for e in expression]
    if AGGREGATE in classes or WINDOW in classes:
        return "AGGREGATION"
    body = [c for c in classes if c != ALIAS]
    return "IDENTITY" if body == [ATTRIBUTE] else "TRANSFORMATION"


_STRENGTH = {"IDENTITY": 0, "TRANSFORMATION": 1, "AGGREGATION": 2}


def _combine(outer: str, inner: str) -> str:
    return outer if _STRENGTH[outer] >= _STRENGTH[inner] else inner


def _derivations(plan_json: list[dict]) -> tuple[dict[int, list[tuple[int, str]]], list[tuple[int, str]]]:
    """exprId -> [(source exprId, subtype)] for every column a plan node defines, plus the
    exprIds that filter/group/sort/join rows (dataset-level lineage)."""
    derived: dict[int, list[tuple[int, str]]] = {}
    indirect: list[tuple[int, str]] = []
    for node in plan_json:
        for key in _DEFINING_FIELDS:
            for expression in _expression_lists(node, key):
                top = expression[0]
                if top.get("class") == ALIAS and "exprId" in top:
                    subtype = _subtype(expression)
                    derived[top["exprId"]["id"]] = [(i, subtype) for i in _attribute_ids(expression[1:])]
        for key, subtype in _INDIRECT_FIELDS.items():
            for expression in _expression_lists(node, key):
                indirect += [(i, subtype) for i in _attribute_ids(expression)]
        if node.get("class") == _JOIN:
            for expression in _expression_lists(node, "condition"):
                indirect += [(i, "JOIN") for i in _attribute_ids(expression)]
    return derived, indirect


def _resolve(expr_id: int, derived, sources, subtype: str = "IDENTITY", seen=None) -> Iterator[tuple[int, str]]:
    """Follow derivations down to leaf columns, keeping the strongest transformation seen."""
    seen = set() if seen is None else seen
    if expr_id in seen:
        return
    seen.add(expr_id)
    if expr_id in sources:
        yield expr_id, subtype
        return
    for source, step in derived.get(expr_id, []):
        yield from _resolve(source, derived, sources, _combine(subtype, step), seen)


def _column_lineage(plan_json, query, output_names, leaf_columns):
    derived, indirect = _derivations(plan_json)
    lineage: dict[str, list[InputColumn]] = {}
    for index, attribute in enumerate(_seq(query.output())):
        name = output_names[index] if index < len(output_names) else attribute.name()
        found: dict[tuple[str, str], str] = {}
        for leaf_id, subtype in _resolve(attribute.exprId().id(), derived, leaf_columns):
            key = leaf_columns[leaf_id]
            found[key] = _combine(found.get(key, "IDENTITY"), subtype)
        if found:
            lineage[name] = [InputColumn(uri, column, "DIRECT", st) for (uri, column), st in found.items()]
    dataset_level: dict[tuple[str, str, str], None] = {}
    for expr_id, subtype in indirect:
        for leaf_id, _ in _resolve(expr_id, derived, leaf_columns):
            uri, column = leaf_columns[leaf_id]
            dataset_level[(uri, column, subtype)] = None
    return lineage, [InputColumn(uri, column, "INDIRECT", st) for uri, column, st in dataset_level]


def physical_node_name(query_execution) -> str:
    """snake_case name of the executed plan's root, e.g. execute_insert_into_hadoop_fs_relation_command."""
    node = query_execution.executedPlan()
    if node.nodeName() == "AdaptiveSparkPlan":
        node = node.executedPlan()
    if _class_name(node).endswith(".WholeStageCodegenExec"):
        node = node.child()
    return snake_case(str(node.nodeName()))


def snake_case(name: str) -> str:
    name = re.sub(r"[^0-9A-Za-z]+", "_", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"_+", "_", name).strip("_").lower()


def _collect_inputs(query, remap=None) -> tuple[dict[str, DatasetRef], dict[int, tuple[str, str]]]:
    """Input datasets of a query's leaves (``remap`` may fold a leaf's URI onto another) and
    the leaf exprId -> (dataset URI, column) map column lineage resolves to."""
    inputs: dict[str, DatasetRef] = {}
    leaf_columns: dict[int, tuple[str, str]] = {}
    for leaf in _seq(query.collectLeaves()):
        for dataset, ids in _leaf_datasets(leaf):
            if remap is not None:
                dataset.uri = remap(dataset.uri)
            known = inputs.setdefault(dataset.uri, dataset)
            if not known.columns:
                known.columns = dataset.columns
            for expr_id, column in zip(ids, dataset.columns, strict=False):
                leaf_columns[expr_id] = (known.uri, column.name)
    return inputs, leaf_columns


def _add_column_lineage(lineage: QueryLineage, query, leaf_columns) -> None:
    try:
        plan_json = json.loads(query.toJSON())
    except Exception:  # noqa: BLE001 - a node Spark cannot serialize: datasets without columns
        return
    names = [column.name for column in lineage.outputs[0].columns]
    lineage.column_lineage, lineage.dataset_lineage = _column_lineage(plan_json, query, names, leaf_columns)


def query_lineage(query_execution, session, *, column_lineage: bool = True) -> QueryLineage | None:
    """Lineage of one finished Spark action, or None when it touched no dataset."""
    plan = query_execution.analyzed()
    target = _write_target(plan, session)
    outputs: list[OutputRef] = []
    query = plan
    if target is not None:
        output, query = target
        outputs.append(output)
    inputs, leaf_columns = _collect_inputs(query)
    if not inputs and not outputs:
        return None
    lineage = QueryLineage(physical_node_name(query_execution), list(inputs.values()), outputs)
    if outputs and inputs and column_lineage:
        _add_column_lineage(lineage, query, leaf_columns)
    return lineage


def streaming_lineage(execution, source_uris: list[str], sink_uri: str | None) -> QueryLineage | None:
    """Lineage of a streaming query from its sources/sink (progress descriptions) and, when a
    micro-batch has run, its last IncrementalExecution (schemas and column lineage)."""
    roots = [normalize_uri(uri) for uri in source_uris]

    def to_root(uri: str) -> str:
        # A file-stream batch reads individual files; the dataset is the watched directory.
        return next((root for root in roots if uri == root or uri.startswith(root + "/")), uri)

    inputs: dict[str, DatasetRef] = {root: DatasetRef(root) for root in roots}
    outputs = [OutputRef(normalize_uri(sink_uri))] if sink_uri else []
    node_name = "write_to_micro_batch_data_source_v1"
    leaf_columns: dict[int, tuple[str, str]] = {}
    query = None
    if execution is not None:
        plan = execution.analyzed()
        node_name = snake_case(str(plan.nodeName()))
        query = plan.query() if _class_name(plan).endswith("WriteToMicroBatchDataSourceV1") else plan
        found, leaf_columns = _collect_inputs(query, to_root)
        for uri, dataset in found.items():
            inputs.setdefault(uri, dataset).columns = dataset.columns
        if outputs:
            outputs[0].columns = _columns(_seq(query.output()))
    if not inputs and not outputs:
        return None
    lineage = QueryLineage(node_name, list(inputs.values()), outputs)
    if query is not None and outputs and leaf_columns:
        _add_column_lineage(lineage, query, leaf_columns)
    return lineage
