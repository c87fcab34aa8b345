"""The third-party packages of the gateway's Lambda asset, without Docker.

The event checks the ingest shares with the readers import a few distributions besides boto3
(:data:`~emr_lineage.gateway.config.ASSET_DISTRIBUTIONS`). Their wheels, for the Lambda's Python and
architecture at the versions installed here (``requirements.lock``'s), are downloaded once by pip
into the user cache (``make setup`` runs ``python -m stacks.gateway.packages``) and unpacked into the
asset when it is bundled; the synth never downloads. pip takes binary wheels only: no source build
for another platform.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from emr_lineage.errors import EmrLineageError
from emr_lineage.gateway.config import ASSET_DISTRIBUTIONS, LAMBDA_ARCHITECTURE, LAMBDA_PYTHON

# Lambda's Python runtimes run on Amazon Linux 2023 (glibc 2.34); pip takes only the platform tags
# it is given, so each manylinux level that glibc runs is named.
_MANYLINUX = ("manylinux_2_34", "manylinux_2_28", "manylinux_2_17", "manylinux2014")
_MACHINE = {"arm64": "aarch64", "x86_64": "x86_64"}
_PIP_TIMEOUT_SECONDS = 600


class PackagesError(EmrLineageError):
    """The Lambda's packages cannot be had (one line, with the way out)."""


def pinned_versions() -> dict[str, str]:
    """Version of each of :data:`ASSET_DISTRIBUTIONS` as installed here (from ``requirements.lock``)."""
    try:
        return {name: metadata.version(name) for name in ASSET_DISTRIBUTIONS}
    except metadata.PackageNotFoundError as exc:
        raise PackagesError(f"{exc.name} is not installed here (run `make setup`)") from None


def wheel_dir() -> Path:
    """The user cache folder of the wheels for the Lambda's Python and architecture."""
    from platformdirs import user_cache_dir

    tag = f"cp{LAMBDA_PYTHON.replace('.', '')}-{LAMBDA_ARCHITECTURE}"
    return Path(user_cache_dir("emr-lineage")) / "gateway-packages" / tag


def _present(directory: Path, pins: dict[str, str]) -> dict[str, Path]:
    found = {}
    for name, version in pins.items():
        # A wheel's name spells the distribution as PEP 427 does: runs of -_. as _.
        matches = sorted(directory.glob(f"{re.sub(r'[-_.]+', '_', name)}-{version}-*.whl"))
        if matches:
            found[name] = matches[0]
    return found


def _download(directory: Path, pins: dict[str, str]) -> None:
    machine = _MACHINE[LAMBDA_ARCHITECTURE]
    platforms = [arg for level in _MANYLINUX for arg in ("--platform", f"{level}_{machine}")]
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
        "--only-binary=:all:", "--implementation", "cp", "--python-version", LAMBDA_PYTHON, *platforms,
        "--dest", str(directory), *(f"{name}=={version}" for name, version in pins.items()),
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_PIP_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PackagesError(f"pip download of the gateway Lambda's packages failed ({exc})") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = lines[-1].removeprefix("ERROR: ") if lines else f"exit {done.returncode}"
        raise PackagesError(
            f"the gateway Lambda's packages for Python {LAMBDA_PYTHON} on {LAMBDA_ARCHITECTURE} could not be "
            f"downloaded from PyPI: {reason} (run `make setup` where PyPI is reachable)"
        )


def wheels(*, download: bool = False) -> list[Path]:
    """The wheel of each of :data:`ASSET_DISTRIBUTIONS`, downloaded first if missing and ``download``."""
    pins = pinned_versions()
    directory = wheel_dir()
    found = _present(directory, pins)
    if len(found) < len(pins) and download:
        directory.mkdir(parents=True, exist_ok=True)
        _download(directory, {name: pins[name] for name in pins if name not in found})
        found = _present(directory, pins)
    missing = [f"{name}=={pins[name]}" for name in pins if name not in found]
    if missing:
        raise PackagesError(f"no wheel of {', '.join(missing)} in {directory} (run `make setup`)")
    return [found[name] for name in pins]


def unpack(wheel_files: list[Path], out: Path) -> None:
    """Each wheel's files into ``out``, as pip installs a wheel without a ``.data`` folder (none of
    these has one; one that had would be refused rather than half installed)."""
    for wheel in wheel_files:
        with zipfile.ZipFile(wheel) as archive:
            if any(name.split("/", 1)[0].endswith(".data") for name in archive.namelist()):
                raise PackagesError(f"{wheel.name} has a .data folder, which the asset cannot install")
            archive.extractall(out)


def main() -> int:
    try:
        found = wheels(download=True)
    except PackagesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"gateway Lambda packages: {len(found)} wheels in {wheel_dir()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
