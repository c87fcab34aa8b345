"""impact: what a change to a dataset or a column reaches, on the demo's real events and on
hand-built column lineage."""

from __future__ import annotations

import json

import pytest

from emr_lineage.analysis.impact import Lineage, dataset_matcher, impact
from emr_lineage.analysis.sources import AnalysisError
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.demo_run import DemoRun

LAKE = "s3://lake"


def _names(rows) -> dict[str, int]:
    return {row.label if row.kind != "column" else f"{row.label}#{row.field}": row.distance for row in rows}


@pytest.fixture(scope="module")
def demo_lineage(demo_run: DemoRun) -> tuple[Lineage, str]:
    assert demo_run.returncode == 0, demo_run.stderr
    return Lineage.of(demo_run.events()), str(demo_run.out)


def test_everything_downstream_of_the_demo_source_with_distances(demo_lineage, demo_run: DemoRun) -> None:
    lineage, out = demo_lineage
    report = impact(lineage, f"{out}/lake/raw/orders")
    assert _names(report.jobs) == {
        "ingest_orders": 1,
        "revenue_daily": 2,
        "customer_ltv": 2,
        "train_model": 2,
        "score_stream": 3,
    }
    datasets = _names(report.datasets)
    model = {name: distance for name, distance in datasets.items() if name.startswith(f"{out}/lake/models/")}
    assert (set(model), set(model.values())) == (demo_run.model_parts()[0], {2})  # the saved model's parts
    assert {name: distance for name, distance in datasets.items() if name not in model} == {
        f"{out}/lake/clean/orders_clean": 1,
        f"{out}/lake/curated/revenue_daily": 2,
        f"{out}/lake/curated/customer_ltv": 2,
        f"{out}/lake/curated/order_scores": 3,
    }
    assert [row.distance for row in report.jobs] == sorted(row.distance for row in report.jobs)


def test_depth_and_upstream_on_the_demo(demo_lineage) -> None:
    lineage, out = demo_lineage
    near = impact(lineage, f"file://{out}/lake/raw/orders/", depth=1)
    assert _names(near.jobs) == {"ingest_orders": 1} and _names(near.datasets) == {f"{out}/lake/clean/orders_clean": 1}
    up = impact(lineage, f"{out}/lake/curated/order_scores", direction="upstream")
    assert _names(up.jobs) == {"score_stream": 1, "train_model": 2, "ingest_orders": 3}
    assert f"{out}/lake/raw/orders_stream" in _names(up.datasets)


def test_a_table_alias_names_the_demo_table(demo_lineage) -> None:
    lineage, out = demo_lineage
    for name in ("table:customer_ltv", "table:curated.customer_ltv", "table:CURATED.Customer_LTV"):
        report = impact(lineage, name, direction="upstream")
        assert report.matched == [f"{out}/lake/curated/customer_ltv"]
        assert _names(report.jobs) == {"customer_ltv": 1, "ingest_orders": 2}
    assert impact(lineage, "table:customer_ltv").reached == []


def test_column_lineage_of_the_demo(demo_lineage) -> None:
    lineage, out = demo_lineage
    report = impact(lineage, f"{out}/lake/raw/orders", column="unit_price")
    columns = _names(report.columns)
    assert columns[f"{out}/lake/clean/orders_clean#unit_price"] == 1
    assert columns[f"{out}/lake/curated/revenue_daily#revenue"] == 2
    assert "train_model" not in _names(report.jobs)  # the model reads orders_clean, but no column of it


def test_an_unknown_dataset_suggests_the_closest(demo_lineage) -> None:
    lineage, out = demo_lineage
    with pytest.raises(AnalysisError, match=r"no such dataset .*did you mean '.*/lake/raw/orders'"):
        impact(lineage, f"{out}/lake/raw/order")
    with pytest.raises(AnalysisError, match=r"did you mean 'table:customer_ltv'"):
        impact(lineage, "table:customer_lvt")


def _column_pipeline() -> Lineage:
    """raw -> clean (amount <- price, id <- id) -> report (total <- amount) and a second reader of clean."""
    return Lineage.of(
        app_run(
            "clean",
            at(0),
            inputs=[dataset(f"{LAKE}/raw", {"id": "string", "price": "double"})],
            outputs=[
                dataset(
                    f"{LAKE}/clean",
                    {"id": "string", "amount": "double"},
                    columns={"amount": [(f"{LAKE}/raw", "price")], "id": [(f"{LAKE}/raw", "id")]},
                    output=True,
                )
            ],
        )
        + app_run(
            "report",
            at(5),
            inputs=[dataset(f"{LAKE}/clean", {"id": "string", "amount": "double"})],
            outputs=[
                dataset(
                    f"{LAKE}/report", {"total": "double"}, columns={"total": [(f"{LAKE}/clean", "amount")]}, output=True
                )
            ],
        )
        + app_run(
            "audit_ids",
            at(10),
            inputs=[dataset(f"{LAKE}/clean")],
            outputs=[dataset(f"{LAKE}/ids", {"id": "string"}, columns={"id": [(f"{LAKE}/clean", "id")]}, output=True)],
        )
    )


def test_column_level_impact_follows_only_the_column() -> None:
    lineage = _column_pipeline()
    price = impact(lineage, "s3a://lake/raw/", column="price")
    assert _names(price.columns) == {"s3://lake/clean#amount": 1, "s3://lake/report#total": 2}
    assert _names(price.jobs) == {"clean": 1, "report": 2}
    assert _names(price.datasets) == {"s3://lake/clean": 1, "s3://lake/report": 2}
    assert _names(impact(lineage, f"{LAKE}/raw", column="price", depth=1).columns) == {"s3://lake/clean#amount": 1}
    back = impact(lineage, f"{LAKE}/report", column="total", direction="upstream")
    assert _names(back.columns) == {"s3://lake/clean#amount": 1, "s3://lake/raw#price": 2}
    assert _names(back.jobs) == {"report": 1, "clean": 2}


def test_an_unknown_column_and_a_column_without_lineage() -> None:
    lineage = _column_pipeline()
    with pytest.raises(AnalysisError, match=r"--column 'prise'.*did you mean 'price'"):
        impact(lineage, f"{LAKE}/raw", column="prise")
    report = impact(lineage, f"{LAKE}/report", column="total")
    assert report.reached == [] and "no column lineage from 'total'" in report.notes[0]


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty dataset URI"),
        ("table:", "table:<name>"),
        ("table:a.b.c", "table:<name>"),
        ("${lake}/x", "placeholders"),
    ],
)
def test_a_bad_dataset_name_is_an_error(text: str, message: str) -> None:
    with pytest.raises(AnalysisError, match=message):
        dataset_matcher(text)


def test_a_graph_file_answers_as_the_events_do(demo_lineage) -> None:
    """impact --graph FILE: the same datasets, jobs and columns as from the events the graph came from."""
    from emr_lineage.lineage.graph.model import LineageGraph

    lineage, out = demo_lineage
    from_file = Lineage.of_graph(LineageGraph.from_dict(json.loads(lineage.graph.to_json())))
    assert sorted(from_file.columns.edges) == sorted(lineage.columns.edges)
    for column in (None, "unit_price"):
        for direction in ("downstream", "upstream"):
            dataset = f"{out}/lake/raw/orders" if direction == "downstream" else f"{out}/lake/curated/revenue_daily"
            column_here = column if direction == "downstream" else None
            expected = impact(lineage, dataset, column=column_here, direction=direction).as_dict()
            assert impact(from_file, dataset, column=column_here, direction=direction).as_dict() == expected
