"""``emr-lineage e2e`` end to end through click: moto plays AWS (EMR states driven between
polls), the Marquez stand-in receives the demo's own events as the listener reports them under the
e2e's parent run. Exit codes, the contract table, the graph URL and the cluster's fate are checked."""

from __future__ import annotations

import os
import re
import signal
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from emr_lineage.aws import emr as emr_cluster
from emr_lineage.aws import parameters
from emr_lineage.cli.app import main
from emr_lineage.pipeline import definition as pipeline
from tests.emr_lineage.e2e_support import (
    FAILURE,
    GRAPH_PAGE,
    LAKE_BUCKET,
    MARQUEZ_WEB,
    NAMESPACE,
    SUCCESS,
    EmrPlayer,
    aws_environment,
    fresh,
    without_job,
)
from tests.emr_lineage.lineage.rule_events import run_event

# The Marquez UI page the e2e points at: the lineage of the first job's first output dataset (Marquez's UI
# shows no edges on a Spark application's own job).

FAST = ["--rows", "100", "--poll-interval", "1", "--lineage-interval", "15", "--lineage-timeout", "60"]


def invoke(*args: str):
    return CliRunner().invoke(main, ["e2e", "--env", "dev", *FAST, *args])


def test_pass_prints_the_contract_table_and_the_graph_url(
    e2e_aws, e2e_marquez, e2e_events, demo_run, e2e_parent, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    e2e_marquez.phases = [fresh(e2e_events)]
    result = invoke()
    assert result.exit_code == 0, result.output
    stdout = result.stdout
    assert "Lineage contract" in stdout and f"contract holds ({demo_run.contract_edges()} edge(s) matched)" in stdout
    for name in pipeline.PIPELINE:
        assert f"job:{NAMESPACE}:{name}" in stdout
    assert f"s3://{LAKE_BUCKET}/raw/orders" in stdout
    assert f"graph: {MARQUEZ_WEB}{GRAPH_PAGE}\n" in stdout
    assert "e2e passed on j-" in stdout
    # Progress: one line per state change, then the lineage read.
    assert "cluster RUNNING: ingest_orders COMPLETED, revenue_daily RUNNING" in result.stderr
    assert f"lineage read 1: {demo_run.contract_edges()} edges matched, 0 missing, 0 unexpected" in result.stderr
    assert e2e_aws.cluster().state == "TERMINATED"


def test_marquez_override_also_gives_the_graph_url_on_that_host(
    e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    legacy = run_event(NAMESPACE, "legacy", eventTime=datetime.now(UTC).isoformat())
    legacy["run"]["facets"] = {"custom": {"value": 1}}  # Marquez takes a facet without _producer/_schemaURL
    this_run = fresh(e2e_events)
    e2e_marquez.phases = [lambda: [*this_run(), legacy]]
    result = invoke("--marquez", e2e_marquez.url + "/api/v1")
    assert result.exit_code == 0, result.output
    assert f"graph: {MARQUEZ_WEB}{GRAPH_PAGE}\n" in result.stdout
    assert f"graph: {e2e_marquez.url}/{GRAPH_PAGE}\n" in result.stdout
    assert "(from --marquez)" in result.stderr
    assert "0 unexpected, 1 event(s) skipped (they fail the event checks)" in result.stderr


def test_missing_job_fails_the_contract_with_the_table(
    e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    complete = fresh(e2e_events)
    e2e_marquez.phases = [lambda: without_job(complete(), "train_model")]
    result = invoke("--lineage-timeout", "30")
    assert result.exit_code == 1, result.output
    missing = [line for line in result.stdout.splitlines() if "missing" in line and "train_model" in line]
    assert len(missing) == 2  # its input and its output
    assert "contract fails: 2 missing, 0 unexpected edge(s)" in result.stdout
    assert "error: lineage in Marquez did not match the contract within 30s (3 reads): 2 missing" in result.stderr
    assert e2e_aws.cluster().state == "TERMINATED"


def test_lineage_not_yet_in_marquez_is_read_again(
    e2e_aws, e2e_marquez, e2e_events, demo_run, e2e_parent, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    e2e_marquez.phases = [lambda: [], fresh(e2e_events)]  # no events yet, then the run's
    result = invoke()
    assert result.exit_code == 0, result.output
    assert "lineage read 1: 0 edges matched, 11 missing" in result.stderr
    assert f"lineage read 2: {demo_run.contract_edges()} edges matched" in result.stderr
    assert lineage_clock.pauses == [15]


def test_deadline_expiring_is_a_failure_with_a_clear_message(e2e_marquez, lineage_clock, monkeypatch):
    """Without the Marquez stack's web URL, the e2e says how to see the lineage from the API instead."""
    for aws in aws_environment(monkeypatch, e2e_marquez.url, skip=(parameters.marquez_web_url("dev"),)):
        monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(aws, SUCCESS))
        e2e_marquez.phases = [lambda: []]
        result = invoke("--lineage-timeout", "45")
        assert result.exit_code == 1, result.output
        assert "error: lineage in Marquez did not match the contract within 45s (4 reads): 11 missing" in result.stderr
        assert lineage_clock.pauses == [15, 15, 15]
        [line] = [line for line in result.stdout.splitlines() if line.startswith("graph: ")]
        # this run's events (from a little before the cluster started), every job the first one reaches
        marquez = re.escape(e2e_marquez.url)
        assert re.match(
            rf"graph: Marquez web URL unknown; the pipeline's lineage: emr-lineage graph --marquez {marquez} "
            r"--since \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ --node job:",
            line,
        )
        assert line.endswith(":ingest_orders --format html -o lineage.html")


def test_failed_step_exits_1_and_terminates(e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, FAILURE))
    e2e_marquez.phases = [fresh(e2e_events)]
    result = invoke()
    assert result.exit_code == 1, result.output
    cluster = e2e_aws.cluster()
    assert "error: step revenue_daily" in result.stderr and "FAILED" in result.stderr
    assert f"/{cluster.id}/steps/" in result.stderr  # where the failed step's log lands
    assert cluster.state == "TERMINATED" and "terminating" in result.stderr
    assert "Lineage contract" not in result.stdout


def test_keep_cluster_does_not_terminate(e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, [("WAITING", *(["COMPLETED"] * 5))]))
    e2e_marquez.phases = [fresh(e2e_events)]
    result = invoke("--keep-cluster")
    assert result.exit_code == 0, result.output
    cluster = e2e_aws.cluster()
    assert cluster.state == "WAITING"
    assert (
        f"kept (--keep-cluster); stop it with: aws emr terminate-clusters --cluster-ids {cluster.id}" in result.stderr
    )


def test_ctrl_c_terminates_and_exits_130(e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS, interrupt_at=1))
    e2e_marquez.phases = [fresh(e2e_events)]
    result = invoke()
    assert result.exit_code == 130, result.output
    cluster = e2e_aws.cluster()
    assert cluster.state == "TERMINATED"
    assert f"interrupted; cluster {cluster.id} terminating" in result.stderr


def test_sigterm_terminates_the_cluster_and_exits_130(
    e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch
):
    # A CI runner cancelling the job sends SIGTERM: the cluster this run started must not outlive it.
    player = EmrPlayer(e2e_aws, SUCCESS)

    def terminated_by_ci(seconds: float) -> None:
        player(seconds)
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(emr_cluster, "pause", terminated_by_ci)
    e2e_marquez.phases = [fresh(e2e_events)]
    handler_before = signal.getsignal(signal.SIGTERM)
    result = invoke()
    assert result.exit_code == 130, result.output
    cluster = e2e_aws.cluster()
    assert cluster.state == "TERMINATED"
    assert f"error: interrupted; cluster {cluster.id} terminating" in result.stderr
    assert signal.getsignal(signal.SIGTERM) is handler_before


def test_ctrl_c_with_keep_cluster_leaves_it(e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS, interrupt_at=1))
    e2e_marquez.phases = [fresh(e2e_events)]
    result = invoke("--keep-cluster")
    assert result.exit_code == 130, result.output
    assert e2e_aws.cluster().state != "TERMINATED"
    assert "kept (--keep-cluster)" in result.stderr


# --- bad input: exit 2, one line, nothing started ----------------------------------------------


@pytest.mark.parametrize("option", ["--poll-interval", "--lineage-interval"])
def test_a_zero_interval_is_exit_2(option):
    # 0 would poll AWS or Marquez in a busy loop until throttled.
    result = CliRunner().invoke(main, ["e2e", option, "0"])
    assert result.exit_code == 2 and result.stderr.startswith(f"error: Invalid value for '{option}'")


def test_unknown_env_is_exit_2():
    result = CliRunner().invoke(main, ["e2e", "--env", "nope"])
    assert result.exit_code == 2
    assert "unknown environment 'nope'" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize(
    "missing",
    [
        parameters.data_lake_bucket("dev"),
        parameters.marquez_api_url("dev"),
        parameters.emr_launch_spec("dev"),
        parameters.artifacts_bucket("dev"),
    ],
)
def test_missing_ssm_parameter_is_exit_2(monkeypatch, e2e_marquez, missing):
    for e2e_aws in aws_environment(monkeypatch, e2e_marquez.url, skip=(missing,)):
        result = invoke()
        assert result.exit_code == 2, result.output
        assert f"SSM parameter {missing} not found" in result.stderr and "make deploy ENV=dev" in result.stderr
        assert e2e_aws.clusters() == [] and e2e_aws.keys(LAKE_BUCKET) == []


@pytest.mark.parametrize(
    "parameter, bucket",
    [
        (parameters.data_lake_bucket("dev"), "no-such-lake-bucket"),
        (parameters.data_lake_bucket("dev"), "Not_A_Bucket_Name"),
        (parameters.artifacts_bucket("dev"), "no-such-artifacts-bucket"),
    ],
)
def test_a_missing_or_invalid_bucket_is_one_line_and_exit_2(e2e_aws, e2e_marquez, parameter, bucket):
    e2e_aws.clients.ssm.put_parameter(Name=parameter, Value=bucket, Type="String", Overwrite=True)
    result = invoke()
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and bucket in errors[0] and "Traceback" not in result.output
    assert e2e_aws.clusters() == []


def test_unreachable_marquez_is_exit_2_before_any_cost(e2e_aws, closed_port_url):
    result = invoke("--marquez", closed_port_url)
    assert result.exit_code == 2, result.output
    assert f"Marquez API {closed_port_url} (from --marquez) does not answer" in result.stderr
    assert "docs/e2e.md" in result.stderr and "Traceback" not in result.output
    assert e2e_aws.clusters() == [] and e2e_aws.keys(LAKE_BUCKET) == []


def test_too_few_rows_is_exit_2():
    result = CliRunner().invoke(main, ["e2e", "--env", "dev", "--rows", "5"])
    assert result.exit_code == 2 and "--rows" in result.stderr
