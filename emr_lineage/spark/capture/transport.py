"""The openlineage-python client of the capture, configured from Spark conf.

The same ``spark.openlineage.transport.*`` keys that configure the OpenLineage jar on EMR
(``emr_lineage.spark.conf``) configure the local capture: ``type`` = ``file`` (JSONL, appended;
``.location``), ``http`` (``.url``, ``.endpoint``, ``.timeoutInMillis``, ``.compression``) or
``console``. Without ``spark.openlineage.transport.type`` the client's own configuration
applies (``OPENLINEAGE_URL``, ``OPENLINEAGE__TRANSPORT__*``, ``openlineage.yml``).
"""

from __future__ import annotations

from collections.abc import Mapping

from openlineage.client import OpenLineageClient

from emr_lineage.errors import EmrLineageError
from emr_lineage.spark.conf import LINEAGE_ENDPOINT

PREFIX = "spark.openlineage.transport."


class TransportConfigError(EmrLineageError, ValueError):
    """spark.openlineage.transport.* names an unsupported or incomplete transport."""


def transport_config(conf: Mapping[str, str]) -> dict | None:
    """openlineage-python transport config from Spark conf entries; None = client defaults."""
    kind = conf.get(PREFIX + "type")
    if not kind:
        return None
    if kind == "file":
        location = conf.get(PREFIX + "location")
        if not location:
            raise TransportConfigError(f"{PREFIX}type=file needs {PREFIX}location (the JSONL file)")
        return {"type": "file", "log_file_path": location, "append": True}
    if kind == "http":
        url = conf.get(PREFIX + "url")
        if not url:
            raise TransportConfigError(f"{PREFIX}type=http needs {PREFIX}url (the Marquez URL)")
        config = {
            "type": "http",
            "url": url,
            "endpoint": conf.get(PREFIX + "endpoint", LINEAGE_ENDPOINT).lstrip("/"),
            "timeout": int(conf.get(PREFIX + "timeoutInMillis", "5000")) / 1000,
        }
        if conf.get(PREFIX + "compression"):
            config["compression"] = conf[PREFIX + "compression"]
        if conf.get(PREFIX + "auth.apiKey"):
            config["auth"] = {"type": "api_key", "apiKey": conf[PREFIX + "auth.apiKey"]}
        return config
    if kind == "console":
        return {"type": "console"}
    raise TransportConfigError(f"{PREFIX}type={kind!r} is not supported locally (file, http or console)")


def make_client(conf: Mapping[str, str]) -> OpenLineageClient:
    transport = transport_config(conf)
    if transport is None:
        return OpenLineageClient()
    return OpenLineageClient(config={"transport": transport})
