"""The third-party packages of the gateway's Lambda asset, without Docker.

The event checks the ingest shares with the readers import a few distributions besides boto3
(:data:`~emr_lineage.gateway.config.ASSET_DISTRIBUTIONS`). Their wheels, for the Lambda's Python and
architecture at the versions of ``requirements.lock``, are downloaded once by pip into the user
cache (``make setup`` runs ``python -m stacks.gateway.packages --host``) and unpacked into the asset
when it is bundled. pip takes binary wheels only: no source build for another platform. ``--host``
also fetches them for this machine's Python, with which the tests run an asset bundled the same way.
"""

from __future__ import annotations

import argparse
import platform
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from emr_lineage.errors import EmrLineageError
from emr_lineage.gateway.config import ASSET_DISTRIBUTIONS, LAMBDA_ARCHITECTURE, LAMBDA_PYTHON

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCK_FILE = REPO_ROOT / "requirements.lock"
# Lambda's Python runtimes run on Amazon Linux 2023 (glibc 2.34); pip takes only the platform tags
# it is given, so each manylinux level that glibc runs is named.
_MANYLINUX = ("manylinux_2_34", "manylinux_2_28", "manylinux_2_17", "manylinux2014")
_MACHINE = {"arm64": "aarch64", "x86_64": "x86_64"}
_PIP_TIMEOUT_SECONDS = 600


class PackagesError(EmrLineageError):
    """The Lambda's packages cannot be had (one line, with the way out)."""


def normalized(name: str) -> str:
    """A distribution name as wheel file names spell it (PEP 427: runs of ``-_.`` as ``_``, lower case)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def pinned_versions(lock: Path = LOCK_FILE) -> dict[str, str]:
    """Version of each of :data:`ASSET_DISTRIBUTIONS` in ``lock`` (``name==version`` lines)."""
    pins = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        name, sep, version = line.partition("==")
        if sep and not line.startswith((" ", "#")):
            pins[normalized(name)] = version.strip()
    missing = [name for name in ASSET_DISTRIBUTIONS if normalized(name) not in pins]
    if missing:
        raise PackagesError(f"{lock}: no pinned version of {', '.join(missing)} (run `make lock`)")
    return {name: pins[normalized(name)] for name in ASSET_DISTRIBUTIONS}


@dataclass(frozen=True)
class Target:
    """A Python version and an architecture (Lambda's names: ``arm64``, ``x86_64``) to get wheels for."""

    python: str
    architecture: str

    @property
    def wheel_dir(self) -> Path:
        """The user cache folder of this target's wheels."""
        from platformdirs import user_cache_dir

        tag = f"cp{self.python.replace('.', '')}-{self.architecture}"
        return Path(user_cache_dir("emr-lineage")) / "gateway-packages" / tag


LAMBDA = Target(LAMBDA_PYTHON, LAMBDA_ARCHITECTURE)


def host() -> Target:
    """This interpreter and machine."""
    machine = {"aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), platform.machine())
    return Target(f"{sys.version_info.major}.{sys.version_info.minor}", machine)


def _present(directory: Path, pins: dict[str, str]) -> dict[str, Path]:
    found = {}
    for name, version in pins.items():
        matches = sorted(directory.glob(f"{normalized(name)}-{version}-*.whl"))
        if matches:
            found[name] = matches[0]
    return found


def _download(target: Target, pins: dict[str, str]) -> None:
    machine = _MACHINE.get(target.architecture, target.architecture)
    platforms = [arg for level in _MANYLINUX for arg in ("--platform", f"{level}_{machine}")]
    command = [
        sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
        "--only-binary=:all:", "--implementation", "cp", "--python-version", target.python, *platforms,
        "--dest", str(target.wheel_dir), *(f"{name}=={version}" for name, version in pins.items()),
    ]  # fmt: skip
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=_PIP_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PackagesError(f"pip download of the gateway Lambda's packages failed ({exc})") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = lines[-1].removeprefix("ERROR: ") if lines else f"exit {done.returncode}"
        raise PackagesError(
            f"the gateway Lambda's packages for Python {target.python} on {target.architecture} could not be "
            f"downloaded from PyPI: {reason} (run `make setup` where PyPI is reachable)"
        )


def wheels(target: Target = LAMBDA, *, download: bool = True) -> list[Path]:
    """The wheel of each of :data:`ASSET_DISTRIBUTIONS` for ``target``, downloaded first if missing
    (and ``download``)."""
    pins = pinned_versions()
    directory = target.wheel_dir
    found = _present(directory, pins)
    if len(found) < len(pins) and download:
        directory.mkdir(parents=True, exist_ok=True)
        _download(target, {name: pins[name] for name in pins if name not in found})
        found = _present(directory, pins)
    missing = [f"{name}=={pins[name]}" for name in pins if name not in found]
    if missing:
        raise PackagesError(f"no wheel of {', '.join(missing)} in {directory} (run `make setup`)")
    return [found[name] for name in pins]


def unpack(wheel_files: list[Path], out: Path) -> None:
    """Each wheel's files into ``out``, as pip installs a pure wheel (Lambda puts ``out`` on sys.path)."""
    for wheel in wheel_files:
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stacks.gateway.packages", description=__doc__.splitlines()[0])
    parser.add_argument("--host", action="store_true", help="also for this machine's Python (the asset's test)")
    targets = [LAMBDA, host()] if parser.parse_args(argv).host else [LAMBDA]
    try:
        for target in dict.fromkeys(targets):
            found = wheels(target)
            print(f"gateway Lambda packages: {len(found)} wheels in {target.wheel_dir}", file=sys.stderr)
    except PackagesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
