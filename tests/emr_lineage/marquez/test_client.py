"""The Marquez client against a real local HTTP server serving Marquez's own responses
(tests/emr_lineage/fake_marquez.py), and servers that are not Marquez or misbehave."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.lineage.graph.from_marquez import graph_from_marquez, merged_lineage
from emr_lineage.lineage.schemas.checks import check_event
from emr_lineage.marquez.api import API_ROOT, LINEAGE_ENDPOINT
from emr_lineage.marquez.client import MarquezClient, MarquezError, NotMarquezError
from emr_lineage.spark.conf import listener_properties
from tests.emr_lineage.fake_marquez import Answer
from tests.helpers import one_error_line

JOB = "job:food_delivery:example.etl_delivery_7_days"


def test_reference_responses_conform_to_the_openapi_spec(openapi_validator, marquez) -> None:
    for node_id in (JOB, "dataset:food_delivery:public.customers"):
        assert openapi_validator("LineageGraph", marquez.lineage[node_id]) == []


def test_spec_drift_of_marquez_test_fixtures_is_known(openapi_validator, marquez) -> None:
    # Marquez's own test fixtures predate the spec: epoch-number timestamps and the
    # DATASET_FIELD node type are not in openapi.yml. The client must still read them.
    node_errors = openapi_validator("GraphNode", marquez.lineage["dataset:namespace:commonDataset"]["graph"][0])
    assert len(node_errors) == 1 and node_errors[0].startswith("['data']")
    column_errors = openapi_validator("LineageGraph", marquez.column_lineage["dataset:namespace:commonDataset"])
    assert column_errors == ["['graph', 0, 'type']: 'DATASET_FIELD' is not one of ['JOB', 'DATASET']"]


def test_lineage_read(marquez, openapi_validator) -> None:
    with MarquezClient(marquez.url) as client:
        reply = client.lineage(JOB, depth=3)
    assert openapi_validator("LineageGraph", reply) == []
    assert marquez.requests == ["GET /api/v1/lineage?nodeId=job%3Afood_delivery%3Aexample.etl_delivery_7_days&depth=3"]
    graph = graph_from_marquez(reply)
    assert graph.outputs_of(JOB) == ["dataset:food_delivery:public.delivery_7_days"]


def test_column_lineage_read(marquez) -> None:
    with MarquezClient(marquez.url + "/api/v1/") as client:
        reply = client.column_lineage("dataset:namespace:commonDataset", depth=2, with_downstream=True)
    assert reply["graph"][0]["id"] == "datasetField:namespace:commonDataset:columnA"
    assert "withDownstream=true" in marquez.requests[0]


def test_jobs_and_datasets_are_paged_with_total_count(marquez, openapi_validator) -> None:
    client = MarquezClient(marquez.url, page_size=3)
    jobs = client.jobs("food_delivery")
    assert [j["name"] for j in jobs] == [f"example.job_{i}" for i in range(7)]
    assert len(marquez.requests) == 3
    assert openapi_validator("JobList", {"jobs": jobs, "totalCount": 7}) == []
    datasets = client.datasets("food_delivery")
    assert [d["name"] for d in datasets] == ["public.customers"]
    assert openapi_validator("DatasetList", {"datasets": datasets, "totalCount": 1}) == []


def test_run_read(marquez, openapi_validator) -> None:
    run_id = next(iter(marquez.runs))
    run = MarquezClient(marquez.url).run(run_id)
    assert run["state"] == "COMPLETED"
    assert openapi_validator("Run", run) == []


def test_4xx_is_a_clear_error(marquez) -> None:
    with pytest.raises(MarquezError) as info:
        MarquezClient(marquez.url).jobs("no_such_namespace")
    assert info.value.status == 404
    assert "HTTP 404 (client error): Namespace 'no_such_namespace' not found" in str(info.value)


def test_5xx_is_retried_then_succeeds(marquez) -> None:
    marquez.fail_next.extend([503, 502])
    reply = MarquezClient(marquez.url, retries=3, backoff=0.01).lineage(JOB)
    assert reply["graph"]
    assert len(marquez.requests) == 3


def test_persistent_5xx_is_reported_with_marquez_message(marquez) -> None:
    marquez.fail_next.extend([500] * 5)
    with pytest.raises(MarquezError) as info:
        MarquezClient(marquez.url, retries=2, backoff=0.01).lineage(JOB)
    assert info.value.status == 500
    assert "HTTP 500 (server error): injected failure 500" in str(info.value)
    assert len(marquez.requests) == 3


def test_unreachable_marquez(closed_port_url: str) -> None:
    with pytest.raises(MarquezError, match=f"Marquez at {closed_port_url}/ is unreachable"):
        MarquezClient(closed_port_url, retries=1, backoff=0.01).jobs("n")


def test_timeout(marquez) -> None:
    marquez.delay_seconds = 1.0
    with pytest.raises(MarquezError, match=r"timed out after 0.2s"):
        MarquezClient(marquez.url, timeout=0.2, retries=0).lineage(JOB)


def test_reply_that_is_not_json(marquez) -> None:
    with pytest.raises(MarquezError, match="reply is not JSON"):
        MarquezClient(marquez.url).lineage("job:broken:json")


def test_bad_base_url() -> None:
    with pytest.raises(MarquezError, match=r"not an http\(s\) URL"):
        MarquezClient("localhost:5000")


def test_merged_lineage_skips_unknown_start_nodes_only_when_asked(marquez) -> None:
    client = MarquezClient(marquez.url)
    reply = merged_lineage(client, [JOB, "dataset:food_delivery:public.customers", "job:x:never_ran"], missing_ok=True)
    assert sorted(n["id"] for n in reply["graph"]) == ["dataset:food_delivery:public.customers", JOB]
    with pytest.raises(MarquezError, match="404"):
        merged_lineage(client, ["job:x:never_ran"])


def test_replay_posts_are_retried_after_a_503(marquez, gen) -> None:
    events = gen.pipeline("s3://lake")[:3]
    client = MarquezClient(marquez.url, retries=2, backoff=0.01)
    marquez.fail_next.append(503)
    assert [client.post_lineage_body(json.dumps(e).encode()) for e in events] == [201, 201, 201]
    assert marquez.posted == events
    assert all(check_event(e, strict=True) is None for e in marquez.posted)
    assert marquez.requests.count("POST /api/v1/lineage") == 4  # one retry after the 503


def test_rejected_replay_is_a_clear_error(marquez, closed_port_url: str) -> None:
    with pytest.raises(MarquezError) as info:
        MarquezClient(marquez.url).post_lineage_body(b'{"eventType": "START"}')
    assert info.value.status == 422 and "job must not be null" in str(info.value)
    with pytest.raises(MarquezError, match="unreachable"):
        MarquezClient(closed_port_url, retries=0).post_lineage_body(
            b'{"eventType": "START", "job": {"namespace": "n", "name": "j"}}'
        )


# --- a server that is not Marquez ---------------------------------------------------------------

CONTRACT = (
    "version: 1\nlevel: action\nnamespace: food_delivery\njobs:\n"
    "  - name: example.etl_delivery_7_days\n    outputs: ['table:public.delivery_7_days']\n"
)


def not_marquez(marquez, kind: str) -> None:
    """Make the fake server something else: 404 everywhere, or an HTML site answering 200."""
    marquez.routes.clear()
    if kind == "html-200":
        marquez.fallback = Answer(200, b"<html><body>Welcome to nginx!</body></html>")


@pytest.mark.parametrize("kind", ["404-everywhere", "html-200"])
def test_validate_against_a_server_that_is_not_marquez_is_exit_2(marquez, tmp_path: Path, kind: str) -> None:
    not_marquez(marquez, kind)
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    result = CliRunner().invoke(main, ["validate", "--marquez", marquez.url, "--contract", str(contract)])
    line = one_error_line(result, stdout_empty=True)
    assert line.startswith(f"error: not a Marquez API at {marquez.url}/ (GET {marquez.url}/api/v1/namespaces ")
    # the probe came first: no lineage read was taken for "node unknown"
    assert [r.split("?")[0] for r in marquez.requests] == ["GET /api/v1/namespaces"]


@pytest.mark.parametrize("kind", ["404-everywhere", "html-200"])
def test_graph_from_a_server_that_is_not_marquez_is_exit_2(marquez, kind: str) -> None:
    not_marquez(marquez, kind)
    result = CliRunner().invoke(main, ["graph", "--marquez", marquez.url, "--node", "job:a:b"])
    assert one_error_line(result, stdout_empty=True).startswith(f"error: not a Marquez API at {marquez.url}/")


def test_an_unknown_start_node_of_a_real_marquez_is_still_just_missing(marquez) -> None:
    client = MarquezClient(marquez.url)
    assert merged_lineage(client, ["job:x:never_ran", "job:y:never_ran"], missing_ok=True) == {"graph": []}
    assert merged_lineage(client, [JOB], missing_ok=True)["graph"]
    # one probe per client, then only lineage reads
    assert [r.split("?")[0] for r in marquez.requests] == ["GET /api/v1/namespaces"] + ["GET /api/v1/lineage"] * 3


def test_merged_lineage_refuses_a_server_that_is_not_marquez(marquez) -> None:
    not_marquez(marquez, "404-everywhere")
    with pytest.raises(NotMarquezError, match="not a Marquez API at .* -> HTTP 404") as info:
        merged_lineage(MarquezClient(marquez.url), ["job:x:never_ran"], missing_ok=True)
    assert info.value.exit_code == 2 and info.value.status is None


def test_a_probe_answer_of_another_shape_is_not_marquez(marquez) -> None:
    marquez.routes[f"GET {API_ROOT}/namespaces"] = lambda state, request: Answer(200, {"items": []})
    with pytest.raises(NotMarquezError, match="answered JSON without a 'namespaces' list"):
        MarquezClient(marquez.url).probe()


def test_a_probe_that_cannot_be_made_is_not_a_verdict(marquez, closed_port_url: str) -> None:
    marquez.fail_next.extend([500] * 10)
    with pytest.raises(MarquezError, match=r"HTTP 500 \(server error\)") as info:
        MarquezClient(marquez.url, retries=1, backoff=0.01).probe()
    assert not isinstance(info.value, NotMarquezError)
    with pytest.raises(MarquezError, match="is unreachable") as info:
        MarquezClient(closed_port_url, retries=0).probe()
    assert not isinstance(info.value, NotMarquezError)


# --- deadline and size cap ----------------------------------------------------------------------


def test_a_dripping_marquez_is_cut_at_the_timeout(marquez) -> None:
    reply = marquez.lineage[JOB]
    marquez.routes[f"GET {API_ROOT}/lineage"] = lambda state, request: Answer(200, reply, drip=0.2)
    started = time.monotonic()
    result = CliRunner().invoke(main, ["graph", "--marquez", marquez.url, "--node", JOB, "--timeout", "1"])
    elapsed = time.monotonic() - started
    assert one_error_line(result, stdout_empty=True).startswith(
        f"error: Marquez at {marquez.url}/ timed out after 1s (GET "
    )
    assert elapsed < 2.5  # the whole reply would take minutes at 0.2 s a byte


def test_a_reply_over_the_size_cap_is_refused(marquez) -> None:
    with pytest.raises(
        MarquezError, match=r"/api/v1/lineage: reply too large \(\d+ bytes announced, the limit is 1000"
    ):
        MarquezClient(marquez.url, max_bytes=1000).lineage(JOB)


def test_the_api_prefix_comes_from_one_module() -> None:
    from emr_lineage.spark import conf

    assert conf.LINEAGE_ENDPOINT is LINEAGE_ENDPOINT == API_ROOT + "/lineage" == "/api/v1/lineage"
    properties = listener_properties(conf.ListenerConfig(api_url="http://m:5000", namespace="n", timeout_ms=1000))
    assert properties["spark.openlineage.transport.endpoint"] == LINEAGE_ENDPOINT
    assert MarquezClient("http://m:5000" + API_ROOT + "/").base_url == "http://m:5000/"
