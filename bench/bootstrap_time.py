"""Wall time of bootstrap/install-openlineage.sh per run against a local moto_server S3.

Runs the real script with bash and the AWS CLI from .venv/bin in fresh sandbox node trees and
prints the median (and min/max) of several runs for three cases:

  first run, Spark installed   download + verify + install into /usr/lib/spark/jars
  first run, before Spark      download + verify + start the watcher (the real EMR boot order)
  second run                   idempotent re-run: checksum check only, no download

The staged jar is a generated jar of about the real listener's size (--jar-mib, default 15).
Usage: .venv/bin/python bench/bootstrap_time.py [--runs 7] [--jar-mib 15]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import boto3

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from emr_lineage.aws.artifacts import BOOTSTRAP_SCRIPT_NAME  # noqa: E402
from emr_lineage.listener.artifact import bootstrap_arguments, listener_s3_key  # noqa: E402
from emr_lineage.settings.loader import load_settings  # noqa: E402

BIN = Path(sys.executable).parent
BUCKET = "bench-artifacts"


def make_jar(mib: int) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        jar.writestr("payload.bin", os.urandom(mib * 1024 * 1024))
    return buffer.getvalue()


def start_moto() -> tuple[subprocess.Popen, str]:
    """moto_server on port 0 (the kernel picks a free port, moto prints it); output discarded after."""
    process = subprocess.Popen(
        [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    for line in process.stdout:
        found = re.search(r"Running on (http://127\.0\.0\.1:\d+)", line)
        if found:
            threading.Thread(target=lambda: [None for _ in process.stdout], daemon=True).start()
            return process, found.group(1)
    process.kill()
    raise SystemExit("moto_server did not start")


def run(root: Path, env: dict[str, str], args: list[str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        ["bash", str(REPO / "bootstrap" / BOOTSTRAP_SCRIPT_NAME), *args],
        env={**env, "EMR_NODE_ROOT": str(root)},
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"bootstrap failed: {result.stderr.strip()}")
    pid_file = root / "var/lib/emr-lineage/watcher.pid"
    if pid_file.exists():  # stop the watcher this run started (by its pid)
        try:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        except ProcessLookupError:
            pass
    return elapsed


def new_node(base: Path, name: str, *, spark: bool) -> Path:
    root = base / name
    (root / "mnt/var/lib/info").mkdir(parents=True)
    (root / "mnt/var/lib/info/extraInstanceData.json").write_text(
        '{"releaseLabel": "emr-7.10.0", "region": "us-east-1"}'
    )
    if spark:
        (root / "usr/lib/spark/jars").mkdir(parents=True)
    return root


def summary(label: str, times: list[float]) -> str:
    return (
        f"{label:<30} median {statistics.median(times):6.3f} s   "
        f"min {min(times):6.3f}   max {max(times):6.3f}   (n={len(times)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--jar-mib", type=int, default=15)
    options = parser.parse_args()

    jar = make_jar(options.jar_mib)
    sha256 = hashlib.sha256(jar).hexdigest()
    settings = load_settings("dev")
    artifact = settings.versions.openlineage_spark.model_copy(update={"sha256": sha256})
    settings = settings.model_copy(
        update={"versions": settings.versions.model_copy(update={"openlineage_spark": artifact})}
    )
    args = bootstrap_arguments(settings, BUCKET) + ["--watch-timeout", "30"]

    moto, url = start_moto()
    base = Path(tempfile.mkdtemp(prefix="bootstrap-bench-"))
    try:
        s3 = boto3.client(
            "s3",
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key=listener_s3_key(artifact), Body=jar)
        env = {
            "PATH": f"{BIN}:/usr/bin:/bin",
            "HOME": str(base),
            "LANG": "C.UTF-8",
            "AWS_ENDPOINT_URL": url,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
        run(new_node(base, "warmup", spark=True), env, args)  # first AWS CLI start pays for .pyc compilation

        with_spark, before_spark, second = [], [], []
        for i in range(options.runs):
            root = new_node(base, f"spark-{i}", spark=True)
            with_spark.append(run(root, env, args))
            second.append(run(root, env, args))
            before_spark.append(run(new_node(base, f"nospark-{i}", spark=False), env, args))

        print(f"bootstrap/install-openlineage.sh against moto_server S3 on 127.0.0.1, jar {len(jar) / 2**20:.1f} MiB")
        print(summary("first run, Spark installed", with_spark))
        print(summary("first run, before Spark", before_spark))
        print(summary("second run (idempotent)", second))
    finally:
        moto.terminate()
        moto.wait(timeout=10)
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
