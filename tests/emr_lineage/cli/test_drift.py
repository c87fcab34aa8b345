"""emr-lineage drift: the schema history, --fail-on-change, and the archive as a source."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import boto3
import pytest
from click.testing import CliRunner
from moto import mock_aws

from emr_lineage.aws.archive import archive_key
from emr_lineage.cli.app import main
from emr_lineage.lineage.door.event import canonical_json, dedup_id
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.conftest import write_jsonl
from tests.helpers import fake_aws_credentials, one_error_line

BUCKET = "lineage-archive"
SPOKE = "210987654321"
FIRST_VERSION_EVENTS = 4  # the first load: its application and its action, each START and COMPLETE


def _events() -> list[dict]:
    def write(fields: dict[str, str], minutes: float) -> list[dict]:
        return app_run("load", at(minutes), outputs=[dataset("s3://lake/orders", fields, output=True)])

    reader = app_run(
        "report",
        at(30),
        inputs=[dataset("s3://lake/orders")],
        outputs=[
            dataset("s3://lake/report", {"t": "double"}, columns={"t": [("s3://lake/orders", "amount")]}, output=True)
        ],
    )
    return write({"id": "string", "amount": "double"}, 0) + write({"id": "string", "amount": "string"}, 20) + reader


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_the_history_and_fail_on_change(tmp_path: Path) -> None:
    events = str(write_jsonl(tmp_path / "e.jsonl", _events()))
    result = _run("drift", "--events", events, "--dataset", "s3://lake/orders")
    assert result.exit_code == 0, result.output
    assert "~amount double->string; read by: report" in result.stdout
    assert "amount reaches s3://lake/report.t (through report)" in result.stdout
    assert "1 schema change(s) in 2 version(s) of s3://lake/orders" in result.stdout
    assert _run("drift", "--events", events, "--dataset", "s3://lake/orders", "--fail-on-change").exit_code == 1
    as_json = json.loads(_run("drift", "--events", events, "--dataset", "s3://lake/orders", "--format", "json").stdout)
    assert as_json["changes"][0]["retyped"] == [{"name": "amount", "from": "double", "to": "string"}]
    quiet = _run("drift", "--events", events, "--dataset", "s3://lake/report", "--fail-on-change")
    assert quiet.exit_code == 0 and "0 schema change(s) in 1 version(s)" in quiet.stdout


@pytest.fixture
def archive(monkeypatch: pytest.MonkeyPatch):
    fake_aws_credentials(monkeypatch, "us-east-1")
    with mock_aws():
        s3 = boto3.client("s3")
        s3.create_bucket(Bucket=BUCKET)
        for index, event in enumerate(_events()):
            moment = dt.datetime.fromisoformat(event["eventTime"])
            account = SPOKE if index < FIRST_VERSION_EVENTS else None  # the first load, from a spoke's key
            key = archive_key(moment, event["run"]["runId"], moment, dedup_id(canonical_json(event)), account)
            s3.put_object(Bucket=BUCKET, Key=key, Body=json.dumps(event).encode())
        yield s3


def test_the_archive_as_a_source(archive) -> None:
    result = _run(
        "drift", "--archive", f"s3://{BUCKET}", "--dataset", "s3://lake/orders", "--since", "2026-11-23T09:10Z"
    )
    assert result.exit_code == 0, result.output
    assert "0 schema change(s) in 1 version(s)" in result.stdout  # the first version is before the window
    assert "1 schema change(s)" in _run("drift", "--archive", f"s3://{BUCKET}", "--dataset", "s3://lake/orders").stdout
    one_error_line(
        _run("drift", "--archive", "s3://no-such-bucket", "--dataset", "x"), "cannot list s3://no-such-bucket/raw/"
    )


def test_a_source_account_keeps_the_archived_events_its_key_sent(archive) -> None:
    spoke = _run("drift", "--archive", f"s3://{BUCKET}", "--dataset", "s3://lake/orders", "--source-account", SPOKE)
    assert spoke.exit_code == 0, spoke.output
    assert "0 schema change(s) in 1 version(s)" in spoke.stdout  # the first load only
    other = _run(
        "drift", "--archive", f"s3://{BUCKET}", "--dataset", "s3://lake/orders", "--source-account", "345678901234"
    )
    one_error_line(other, f"s3://{BUCKET}/ (source account 345678901234): no events to analyse")


@pytest.mark.parametrize(
    "source, fragment",
    [
        (["--events", "e.jsonl", "--source-account", SPOKE], "--source-account selects archived events"),
        (["--graph", "g.json", "--source-account", SPOKE], "--source-account selects archived events"),
        (["--archive", f"s3://{BUCKET}", "--source-account", "spoke"], "--source-account 'spoke': not an AWS account"),
    ],
)
def test_a_source_account_needs_the_archive_and_twelve_digits(tmp_path: Path, monkeypatch, source, fragment) -> None:
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "e.jsonl", _events())
    (tmp_path / "g.json").write_text("{}")
    one_error_line(_run("drift", *source, "--dataset", "s3://lake/orders"), fragment)
