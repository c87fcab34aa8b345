"""Lineage contracts: loading (with file:line errors), placeholders and comparison with graphs."""

from __future__ import annotations

from pathlib import Path

import pytest

from emr_lineage.lineage.contracts.check import resolve, validate
from emr_lineage.lineage.contracts.model import ContractError, load_contract, parse_contract, substitute
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.graph.model import LineageGraph

NS = "emr-lineage-dev"


@pytest.fixture(scope="session")
def example_text(repo_root: Path) -> str:
    """The sample pipeline's contract exactly as docs/contracts.md shows it."""
    doc = (repo_root / "docs" / "contracts.md").read_text(encoding="utf-8")
    return doc.split("```yaml\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="session")
def contract(example_text: str):
    return parse_contract(example_text, "lineage_contract.yaml")


def test_example_contract_loads(contract) -> None:
    assert contract.level == "application"
    assert [j.name for j in contract.jobs] == [
        "ingest_orders",
        "revenue_daily",
        "customer_ltv",
        "train_model",
        "score_stream",
    ]
    assert contract.variables["lake"].default == "/tmp/emr-lineage/lake"
    assert contract.variables["namespace"].default == NS


def test_load_contract_from_file(tmp_path: Path, example_text: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(example_text)
    assert load_contract(path).path == str(path)


def test_same_contract_checks_a_local_demo_run(gen, contract, tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    graph = build_graph(gen.pipeline(lake, NS))
    result = validate(contract, graph, {"lake": lake})
    assert result.ok, result.as_dict()
    assert len(result.matched) == 11
    # file: URIs and plain paths are the same datasets.
    assert validate(contract, graph, {"lake": f"file://{lake}/"}).ok


def test_same_contract_checks_a_deployed_run_with_glue(gen, contract) -> None:
    glue = ("arn:aws:glue:eu-west-1:123456789012", "table/analytics/customer_ltv", "TABLE")
    graph = build_graph(gen.pipeline("s3://prod-lake", "emr-lineage-prod", table=glue))
    result = validate(contract, graph, {"lake": "s3://prod-lake", "namespace": "emr-lineage-prod"})
    assert result.ok, result.as_dict()
    # s3a:// in the --var is the same lake.
    assert validate(contract, graph, {"lake": "s3a://prod-lake/", "namespace": "emr-lineage-prod"}).ok


def _graph(edges: list[tuple[str, str, str, str, str]], aliases: dict | None = None) -> LineageGraph:
    """edges: (job ns, job name, direction, dataset ns, dataset name)."""
    graph = LineageGraph()
    for job_ns, job_name, direction, ds_ns, ds_name in edges:
        job = graph.add_job(job_ns, job_name)
        dataset = graph.add_dataset(
            ds_ns,
            ds_name,
            **({"aliases": aliases[(ds_ns, ds_name)]} if aliases and (ds_ns, ds_name) in aliases else {}),
        )
        graph.add_edge(dataset, job) if direction == "in" else graph.add_edge(job, dataset)
    return graph


SMALL = """
version: 1
variables: {lake: "s3://b", namespace: ns}
jobs:
  - name: ingest
    inputs: ["${lake}/raw/orders/"]
    outputs: ["${lake}/clean/orders"]
  - name: ltv
    inputs: ["${lake}/clean/orders"]
    outputs: ["table:customer_ltv", {dataset: "${lake}/tmp/scratch", optional: true}]
"""


def _ok_edges(ingest_in: tuple[str, str] = ("s3://b", "raw/orders")) -> list:
    return [
        ("ns", "ingest", "in", *ingest_in),
        ("ns", "ingest", "out", "s3://b", "clean/orders"),
        ("ns", "ltv", "in", "s3://b", "clean/orders"),
        ("ns", "ltv", "out", "s3://b", "warehouse/customer_ltv"),
    ]


LOCAL_ALIAS = {
    ("s3://b", "warehouse/customer_ltv"): [{"namespace": "file:/w", "name": "default.customer_ltv", "type": "TABLE"}]
}


def test_match_and_optional_edge() -> None:
    result = validate(parse_contract(SMALL), _graph(_ok_edges(), LOCAL_ALIAS))
    assert result.ok
    assert [(d.job, d.dataset) for d in result.optional_missing] == [("job:ns:ltv", "s3://b/tmp/scratch")]


@pytest.mark.parametrize(
    ("ingest_in", "fragment"),
    [
        (("s3a://b", "raw/orders"), "s3a:// vs s3://"),
        (("s3://b", "raw/orders/"), "trailing slash"),
        (("s3://b", "/raw/orders"), "leading slash"),
    ],
)
def test_namespace_misalignment_is_flagged_with_a_hint(ingest_in, fragment: str) -> None:
    result = validate(parse_contract(SMALL), _graph(_ok_edges(ingest_in), LOCAL_ALIAS))
    assert not result.ok
    [missing] = result.missing
    assert (missing.job, missing.direction, missing.dataset) == ("job:ns:ingest", "input", "s3://b/raw/orders")
    assert fragment in missing.hint
    [unexpected] = result.unexpected
    assert unexpected.job == "job:ns:ingest" and unexpected.direction == "input"
    assert unexpected.hint == "another spelling of the expected s3://b/raw/orders"


TREE = """
version: 1
variables: {lake: "s3://b", namespace: ns}
jobs:
  - name: train
    outputs: ["${lake}/models/m/**"]
"""


def test_a_location_tree_matches_the_location_and_what_is_below_it() -> None:
    """A Spark ML model is saved as metadata/ and stages/*/{data,metadata}: the listener reports each."""
    parts = [
        "models/m/metadata",
        "models/m/stages/0_StringIndexer_1/data",
        "models/m/stages/0_StringIndexer_1/metadata",
    ]
    result = validate(parse_contract(TREE), _graph([("ns", "train", "out", "s3://b", part) for part in parts]))
    assert result.ok, result.as_dict()
    assert sorted(d.dataset for d in result.matched) == [f"s3://b/{part}" for part in sorted(parts)]
    assert validate(parse_contract(TREE), _graph([("ns", "train", "out", "s3://b", "models/m")])).ok


def test_a_location_tree_is_not_a_name_prefix() -> None:
    result = validate(parse_contract(TREE), _graph([("ns", "train", "out", "s3://b", "models/m2/metadata")]))
    assert [(d.status, d.dataset) for d in result.missing] == [("missing", "s3://b/models/m/**")]
    assert [d.dataset for d in result.unexpected] == ["s3://b/models/m2/metadata"]
    other_bucket = validate(parse_contract(TREE), _graph([("ns", "train", "out", "s3://c", "models/m/metadata")]))
    assert [d.dataset for d in other_bucket.missing] == ["s3://b/models/m/**"]


def test_table_seen_under_two_names_is_flagged() -> None:
    edges = _ok_edges() + [("ns", "ltv", "out", "arn:aws:glue:eu-west-1:1", "table/db/customer_ltv")]
    result = validate(parse_contract(SMALL), _graph(edges, LOCAL_ALIAS))
    assert any("table:customer_ltv seen under 2 names" in h for h in result.hints)


def test_table_alias_database_and_glue_forms() -> None:
    text = SMALL.replace("table:customer_ltv", "table:analytics.customer_ltv")
    glue = {
        ("s3://b", "warehouse/customer_ltv"): [
            {"namespace": "arn:aws:glue:eu-west-1:1", "name": "table/analytics/customer_ltv", "type": "TABLE"}
        ]
    }
    assert validate(parse_contract(text), _graph(_ok_edges(), glue)).ok
    wrong_db = {
        ("s3://b", "warehouse/customer_ltv"): [
            {"namespace": "hive://metastore", "name": "default.customer_ltv", "type": "TABLE"}
        ]
    }
    result = validate(parse_contract(text), _graph(_ok_edges(), wrong_db))
    assert [d.dataset for d in result.missing] == ["table:analytics.customer_ltv"]


def test_missing_job_unexpected_job_and_ignored_namespaces() -> None:
    edges = _ok_edges()[:2] + [("ns", "rogue", "out", "s3://b", "x"), ("other-ns", "theirs", "out", "s3://b", "y")]
    result = validate(parse_contract(SMALL), _graph(edges, LOCAL_ALIAS))
    assert {(d.job, d.dataset) for d in result.missing} == {
        ("job:ns:ltv", "s3://b/clean/orders"),
        ("job:ns:ltv", "table:customer_ltv"),
    }
    assert all("not in the graph" in d.hint for d in result.missing)
    assert [(d.job, d.dataset, d.hint) for d in result.unexpected] == [
        ("job:ns:rogue", "s3://b/x", "job not in the contract")
    ]
    assert result.ignored_jobs == ["job:other-ns:theirs"]


def test_job_in_another_namespace_gets_a_hint() -> None:
    edges = [(("prod" if e[0] == "ns" else e[0]),) + e[1:] for e in _ok_edges()]
    result = validate(parse_contract(SMALL), _graph(edges, LOCAL_ALIAS))
    assert "seen in namespace 'prod'" in result.missing[0].hint
    assert validate(parse_contract(SMALL), _graph(edges, LOCAL_ALIAS), {"namespace": "prod"}).ok


def test_substitute_does_not_double_slashes() -> None:
    assert substitute("${lake}/raw", {"lake": "s3://b/"}) == "s3://b/raw"
    assert substitute("${a}${b}", {"a": "x", "b": "y"}) == "xy"


def test_resolve_uses_naming_module() -> None:
    [ingest, _] = resolve(parse_contract(SMALL), {"lake": "s3a://other/"})
    assert (ingest.inputs[0].namespace, ingest.inputs[0].name) == ("s3://other", "raw/orders")
    assert ingest.node_id == "job:ns:ingest"


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"lakee": "x"}, "unknown variable 'lakee'"),
        ({}, "variable 'root' has no default; give it with --var root=VALUE"),
    ],
)
def test_variable_errors(overrides, fragment: str) -> None:
    contract = parse_contract(
        "version: 1\nvariables: {root: null}\nnamespace: n\njobs:\n  - {name: a, inputs: ['${root}/x']}\n", "c.yaml"
    )
    with pytest.raises(ContractError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        contract.resolve_variables(overrides)


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("version: 1\njobs: [\n", 3, "invalid YAML"),
        ("- a\n- b\n", 1, "a contract is a YAML mapping"),
        ("version: 2\njobs: []\n", 1, "'version' must be 1"),
        ("version: 1\nlevel: job\njobs: []\n", 2, "'level' must be one of"),
        ("version: 1\nfoo: 1\njobs: []\n", 2, "unknown key 'foo'"),
        ("version: 1\nnamespace: n\njobs: []\n", 3, "'jobs' must be a non-empty list"),
        ("version: 1\nnamespace: n\njobs:\n  - just-a-string\n", 4, "each job is a mapping"),
        ("version: 1\nnamespace: n\njobs:\n  - inputs: [a]\n", 4, "job without a 'name'"),
        ("version: 1\nnamespace: n\njobs:\n  - name: a\n", 4, "lists neither inputs nor outputs"),
        ("version: 1\nnamespace: n\njobs:\n  - name: a\n    inputs: s3://b/x\n", 5, "'inputs' must be a list"),
        (
            "version: 1\nnamespace: n\njobs:\n  - name: a\n    inputs:\n      - s3://b/x\n      - 42\n",
            7,
            "dataset must be a non-empty string",
        ),
        (
            "version: 1\nnamespace: n\njobs:\n  - name: a\n    inputs: ['${lake}/x']\n",
            5,
            "placeholder ${lake} is not a declared variable",
        ),
        (
            "version: 1\njobs:\n  - name: a\n    inputs: [x]\n",
            3,
            "the jobs' namespace is ${namespace} and no variable 'namespace' is declared: set 'namespace:'",
        ),
        (
            "version: 1\nnamespace: n\nvariables: {lake: x}\njobs:\n  - name: a\n    inputs: ['${lake/x']\n",
            6,
            "unterminated placeholder",
        ),
        (
            "version: 1\nnamespace: n\njobs:\n  - name: a\n    inputs: [x]\n  - name: a\n    outputs: [y]\n",
            6,
            "job 'a' listed twice (first on line 4)",
        ),
        ("version: 1\nnamespace: n\njobs:\n  - name: a\n    nme: b\n    inputs: [x]\n", 4, "unknown key 'nme'"),
        ("version: 1\nversion: 1\n", 2, "duplicate key 'version'"),
        (
            "version: 1\nnamespace: n\njobs:\n  - name: a\n    inputs: [{dataset: x, optional: maybe}]\n",
            5,
            "'optional' must be true or false",
        ),
        (
            "version: 1\nvariables: {9lives: x}\nnamespace: n\njobs: [{name: a, inputs: [x]}]\n",
            2,
            "invalid variable name",
        ),
    ],
)
def test_malformed_contracts_name_file_and_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ContractError) as info:
        parse_contract(text, "c.yaml")
    message = str(info.value)
    assert message.startswith(f"c.yaml:{line}: "), message
    assert fragment in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("dataset", "fragment"),
    [
        ("table:", "table alias must be"),
        ("table:a.b.c", "table alias must be"),
        ("s3:///nobucket", "URI without a bucket"),
    ],
)
def test_bad_datasets_fail_when_resolved(dataset: str, fragment: str) -> None:
    contract = parse_contract(
        f"version: 1\nnamespace: n\njobs:\n  - name: a\n    inputs:\n      - '{dataset}'\n", "c.yaml"
    )
    with pytest.raises(ContractError, match="c.yaml:6: " + fragment):
        resolve(contract)


def test_unreadable_contract(tmp_path: Path) -> None:
    with pytest.raises(ContractError, match="cannot read contract: No such file or directory"):
        load_contract(tmp_path / "missing.yaml")
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ContractError, match="bin.yaml: cannot read contract"):
        load_contract(tmp_path / "bin.yaml")
