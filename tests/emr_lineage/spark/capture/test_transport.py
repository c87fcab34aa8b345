"""Transport selection from spark.openlineage.transport.* (the keys the jar reads on EMR)."""

from __future__ import annotations

import pytest
from openlineage.client.transport.console import ConsoleTransport
from openlineage.client.transport.file import FileTransport
from openlineage.client.transport.http import HttpTransport

from emr_lineage.spark.capture.transport import TransportConfigError, make_client, transport_config

P = "spark.openlineage.transport."


def test_file_transport_appends_jsonl(tmp_path):
    client = make_client({P + "type": "file", P + "location": str(tmp_path / "e.jsonl")})
    assert isinstance(client.transport, FileTransport)
    assert client.transport.config.append is True


def test_http_transport_to_marquez():
    config = transport_config(
        {P + "type": "http", P + "url": "http://marquez:5000", P + "timeoutInMillis": "2500", P + "compression": "gzip"}
    )
    assert config == {
        "type": "http",
        "url": "http://marquez:5000",
        "endpoint": "api/v1/lineage",
        "timeout": 2.5,
        "compression": "gzip",
    }
    client = make_client({P + "type": "http", P + "url": "http://marquez:5000"})
    assert isinstance(client.transport, HttpTransport)
    assert client.transport.url == "http://marquez:5000"


def test_console_transport():
    assert isinstance(make_client({P + "type": "console"}).transport, ConsoleTransport)


def test_without_type_the_client_configures_itself():
    assert transport_config({}) is None


@pytest.mark.parametrize(
    ("conf", "message"),
    [
        ({P + "type": "file"}, "needs spark.openlineage.transport.location"),
        ({P + "type": "http"}, "needs spark.openlineage.transport.url"),
        ({P + "type": "kafka"}, "'kafka' is not supported locally"),
    ],
)
def test_bad_transport_conf_is_one_clear_error(conf, message):
    with pytest.raises(TransportConfigError, match=message):
        transport_config(conf)
