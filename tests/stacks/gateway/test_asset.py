"""The gateway's Lambda asset runs on its own: bundled as the stack bundles it (with this machine's
installed copies of the distributions it names, at the same pinned versions), its forwarder starts
without the event checks' packages, its ingest imports nothing beyond boto3 and the standard library
from outside it, and checks events against the schemas it carries as the readers do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import boto3

from emr_lineage.gateway import config
from emr_lineage.lineage.schemas.checks import door_problem, load_schemas
from stacks.gateway.asset import bundle, schema_files
from tests.emr_lineage.lineage.rule_events import listener_events

_PROBE = """
import json, sys
import boto3, botocore.exceptions
with_boto3 = set(sys.modules)
from emr_lineage.gateway import aws_lambda
forwarder_loads = sorted({m.split(".")[0] for m in set(sys.modules) - with_boto3})
from emr_lineage.gateway.ingest import Ingestor
from emr_lineage.lineage.schemas.checks import door_problem
schemas = aws_lambda.ingest_schemas()
verdicts = [door_problem(event, schemas) for event in json.load(sys.stdin)]
files = {name: getattr(module, "__file__", None) for name, module in sys.modules.items()
         if name not in with_boto3 and name.split(".")[0] not in sys.stdlib_module_names}
print(json.dumps({"verdicts": verdicts, "schema_dir": str(schemas.directory), "files": files,
                  "forwarder_loads": forwarder_loads}))
"""
# What Lambda's Python runtime puts on sys.path besides the standard library: boto3 and its dependencies.
_RUNTIME = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six")


def _site() -> Path:
    return Path(boto3.__file__).parents[1]


def _runtime(directory: Path) -> Path:
    """A folder holding this machine's copies of :data:`_RUNTIME`, as Lambda's runtime folder holds its own."""
    directory.mkdir()
    for name in _RUNTIME:
        source = _site() / name if (_site() / name).is_dir() else _site() / f"{name}.py"
        (directory / source.name).symlink_to(source)
    return directory


def _installed(distributions: tuple[str, ...], out: Path) -> None:
    """This machine's installed files of ``distributions`` into ``out``, as their wheels would unpack."""
    for name in distributions:
        for file in metadata.distribution(name).files or ():
            source = Path(file.locate())
            if "__pycache__" in file.parts or not source.is_file() or not source.is_relative_to(_site()):
                continue
            (out / file).parent.mkdir(parents=True, exist_ok=True)
            (out / file).symlink_to(source)


def _typed_wrong(event: dict) -> dict:
    """``event`` with a column-lineage transformation's type a boolean: the event rule lets it
    through, OpenLineage's ColumnLineageDatasetFacet does not."""
    changed = json.loads(json.dumps(event))
    fields = changed["outputs"][0]["facets"]["columnLineage"]["fields"]
    first = next(iter(fields.values()))["inputFields"][0]
    first["transformations"] = [{"type": False, "subtype": "IDENTITY"}]
    return changed


def test_the_bundled_ingest_checks_events_as_the_readers_with_only_its_own_files(tmp_path: Path) -> None:
    asset = tmp_path / "asset"
    asset.mkdir()
    bundle(asset, schema_files(), [])
    _installed(config.ASSET_DISTRIBUTIONS, asset)
    with_lineage = [
        e for e in listener_events() if e.get("outputs") and "columnLineage" in e["outputs"][0].get("facets", {})
    ]
    events = [with_lineage[0], _typed_wrong(with_lineage[0])]
    env = {
        **os.environ,
        "PYTHONPATH": f"{asset}:{_runtime(tmp_path / 'runtime')}",  # and no site-packages (-S)
        "PYTHONDONTWRITEBYTECODE": "1",
        "LAMBDA_TASK_ROOT": str(asset),
    }
    done = subprocess.run(
        [sys.executable, "-S", "-c", _PROBE], cwd=tmp_path, env=env, input=json.dumps(events),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["forwarder_loads"] == ["emr_lineage"]  # the handlers' module loads no checks' package
    assert found["schema_dir"] == str(asset / config.SCHEMA_ASSET_DIR)
    outside = {name: path for name, path in found["files"].items() if path and not path.startswith(f"{asset}/")}
    assert outside == {}  # what the ingest imports beyond the runtime's comes from the asset
    loaded = {name.split(".")[0] for name in found["files"]}
    assert {"emr_lineage", "jsonschema", "jsonschema_rs", "referencing", "rpds"} <= loaded
    here = [door_problem(event, load_schemas()) for event in events]
    assert found["verdicts"] == here
    assert here[0] is None and "transformations[0].type: False is not of type 'string'" in here[1]
