"""The gateway Lambdas' code: a plain asset of a few repository files, bundled without Docker.

A local bundling step copies :data:`emr_lineage.gateway.config.ASSET_FILES` and every file of
``emr_lineage/gateway/`` (no ``__pycache__``) into the asset directory; nothing else of the
repository ships. The Docker image named in the bundling options is never used: local bundling
always succeeds (CDK only falls back to a container when it returns false).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_

from emr_lineage.gateway.config import ASSET_FILES

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


@jsii.implements(ILocalBundling)
class _CopyAssetFiles:
    def try_bundle(self, output_dir: str, *_options, **_keywords) -> bool:
        out = Path(output_dir)
        for name in asset_files():
            target = out / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO_ROOT / name, target)
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
            local=_CopyAssetFiles(),
        ),
    )
