"""Messages speak of JSON and the network in their own words, never Python's (``NoneType``, ``list``,
``URLError: <urlopen error ...>``): each place that names a JSON value's kind or a network failure."""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.errors import json_type, network_reason
from emr_lineage.gateway.forward import forward_batch
from emr_lineage.gateway.ingest import check_batch, check_request
from emr_lineage.lineage.event_rule import event_problem
from emr_lineage.lineage.schemas.store import PINNED_SCHEMAS, SchemaStoreError, check_document
from emr_lineage.settings.loader import ConfigError, settings_from_context

PYTHON_WORDS = ("NoneType", "list", "dict", "str", "int", "URLError", "urlopen", "Errno", "gaierror")


def _plain(message: str) -> str:
    assert not any(word in message.split() or f"{word}:" in message for word in PYTHON_WORDS), message
    assert "<" not in message, message
    return message


@pytest.mark.parametrize(
    "value, kind", [(None, "null"), ([], "array"), ({}, "object"), ("x", "string"), (1.5, "number"), (True, "boolean")]
)
def test_json_type_is_jsons_word(value, kind) -> None:
    assert json_type(value) == kind


def test_an_event_that_is_not_an_object() -> None:
    assert _plain(event_problem(None)) == "the event is a JSON null, not an object"
    assert "a JSON null" in _plain(check_request(None, b"null", api_keys=None, max_bytes=1000).reason)
    assert "not a JSON object" in _plain(
        check_batch(None, b"{}", api_keys=None, max_bytes=1000, max_batch_bytes=1000).reason
    )


def test_graph_of_a_null_line(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("null\n")
    result = CliRunner().invoke(main, ["graph", "--events", str(events)])
    assert result.exit_code == 2 and "a JSON null" in _plain(result.stderr)


def test_a_schema_that_is_not_an_object() -> None:
    with pytest.raises(SchemaStoreError) as caught:
        check_document(b"[]", PINNED_SCHEMAS[0], "OpenLineage.json")
    assert "a JSON array" in _plain(str(caught.value))


def test_an_environment_that_is_not_an_object() -> None:
    with pytest.raises(ConfigError) as caught:
        settings_from_context({"environments": {"dev": []}}, "dev")
    assert "not a JSON array" in _plain(str(caught.value))


@pytest.mark.parametrize(
    "failure, reason",
    [
        (urllib.error.URLError(ConnectionRefusedError(111, "Connection refused")), "Connection refused"),
        (urllib.error.URLError(socket.gaierror(-2, "Name or service not known")), "Name or service not known"),
        (urllib.error.URLError(TimeoutError("timed out")), "timed out"),
        (TimeoutError("timed out"), "timed out"),
        (ConnectionResetError(104, "Connection reset by peer"), "Connection reset by peer"),
        (http.client.RemoteDisconnected("Remote end closed connection without response"), "Remote end closed"),
    ],
)
def test_a_network_failure_of_the_forwarder(failure: Exception, reason: str) -> None:
    assert reason in _plain(network_reason(failure))

    def post(body: bytes) -> tuple[int, str]:
        raise failure

    record = {"messageId": "m1", "body": json.dumps({"a": 1}), "attributes": {"MessageGroupId": "g"}}
    (outcome,) = forward_batch([record], post, retries=0, sleep=lambda s: None).outcomes
    assert reason in _plain(outcome.detail)
