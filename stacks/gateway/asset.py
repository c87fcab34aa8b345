"""The gateway Lambdas' code: an asset of a few repository files and the event checks' packages, bundled without Docker.

A local bundling step copies :data:`emr_lineage.gateway.config.ASSET_FILES` and every file of
``emr_lineage/gateway/`` (no ``__pycache__``) into the asset directory, the pinned OpenLineage
schemas into :data:`~emr_lineage.gateway.config.SCHEMA_ASSET_DIR`, and unpacks the wheels of
:mod:`stacks.gateway.packages`; nothing else of the repository ships. Both are found before the
bundling starts, so a missing one stops the synth with one line. The Docker image named in the
bundling options is never used: local bundling always succeeds (CDK only falls back to a container
when it returns false).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_

from emr_lineage.gateway.config import ASSET_FILES, SCHEMA_ASSET_DIR
from emr_lineage.lineage.schemas.store import PINNED_SCHEMAS, SchemaStoreError, missing_message, read_store, schema_dir
from stacks.gateway.packages import unpack, wheels

# stacks/gateway/asset.py -> the checkout.
REPO_ROOT = Path(__file__).resolve().parents[2]
GATEWAY_PACKAGE = "emr_lineage/gateway"


def asset_files(root: Path = REPO_ROOT) -> list[str]:
    """Repository-relative paths of every file the Lambda asset holds, sorted."""
    package = root / GATEWAY_PACKAGE
    gateway = [
        p.relative_to(root).as_posix()
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]
    return sorted({*ASSET_FILES, *gateway})


def schema_files() -> list[Path]:
    """The pinned OpenLineage schemas of the schema directory, each checked (raises SchemaStoreError)."""
    directory = schema_dir()
    if read_store(directory) is None:
        raise SchemaStoreError(
            f"the gateway checks events against the OpenLineage schemas; {missing_message(directory)}"
        )
    return [directory / pinned.filename for pinned in PINNED_SCHEMAS]


def bundle(out: Path, schemas: list[Path], wheel_files: list[Path]) -> None:
    """The asset's files in ``out``: the repository's, the schemas, the unpacked wheels."""
    for name in asset_files():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO_ROOT / name, target)
    (out / SCHEMA_ASSET_DIR).mkdir()
    for schema in schemas:
        shutil.copyfile(schema, out / SCHEMA_ASSET_DIR / schema.name)
    unpack(wheel_files, out)


@jsii.implements(ILocalBundling)
class _BundleAsset:
    def __init__(self, schemas: list[Path], wheel_files: list[Path]) -> None:
        self.schemas, self.wheel_files = schemas, wheel_files

    def try_bundle(self, output_dir: str, *_options, **_keywords) -> bool:
        bundle(Path(output_dir), self.schemas, self.wheel_files)
        return True


def gateway_code() -> lambda_.Code:
    """The Lambda code asset (one per call; both functions share one)."""
    return lambda_.Code.from_asset(
        # Only the cache key: the bundling step below picks the files.
        str(REPO_ROOT),
        asset_hash_type=AssetHashType.OUTPUT,
        bundling=BundlingOptions(
            # Required by the API, never pulled: local bundling always succeeds.
            image=DockerImage.from_registry("public.ecr.aws/docker/library/busybox:latest"),
            local=_BundleAsset(schema_files(), wheels()),
        ),
    )
