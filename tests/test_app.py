"""app.py as the CDK CLI runs it: bad configuration stops synth with one clear message."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest


@pytest.fixture(scope="module")
def cdk_context(repo_root) -> dict:
    return json.loads((repo_root / "cdk.json").read_text())["context"]


def _run_app(repo_root, tmp_path, context: dict) -> subprocess.CompletedProcess:
    # The CDK CLI hands context to the app through CDK_CONTEXT_JSON; do the same.
    env = {**os.environ, "CDK_CONTEXT_JSON": json.dumps(context), "CDK_OUTDIR": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "app.py"], cwd=repo_root, env=env, capture_output=True, text=True, timeout=300
    )


def test_mistyped_key_fails_synth_naming_the_key(repo_root, tmp_path, cdk_context):
    context = copy.deepcopy(cdk_context)
    database = context["emr-lineage"]["environments"]["prod"]["database"]
    database["backup_retention"] = database.pop("backup_retention_days")
    result = _run_app(repo_root, tmp_path, {**context, "env": "prod"})
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        "emr-lineage.environments.prod.database.backup_retention: unknown key (did you mean 'backup_retention_days'?)"
        in result.stderr
    )
    assert "emr-lineage.environments.prod.database.backup_retention_days: missing required key" in result.stderr
    assert not list(tmp_path.glob("*.template.json"))


def test_vpc_too_small_for_the_subnets_fails_synth_without_a_traceback(repo_root, tmp_path, cdk_context):
    """A /19 used to pass the config and crash inside the VPC construct with a jsii traceback."""
    context = copy.deepcopy(cdk_context)
    context["emr-lineage"]["environments"]["dev"]["network"]["vpc_cidr"] = "10.40.0.0/19"
    result = _run_app(repo_root, tmp_path, {**context, "env": "dev"})
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert (
        "emr-lineage.environments.dev.network.vpc_cidr: vpc_cidr 10.40.0.0/19 must be between /16 and" in result.stderr
    )
    assert not list(tmp_path.glob("*.template.json"))


def test_cdk_cli_reports_an_unknown_environment(repo_root, tmp_path):
    """Through the pinned CDK CLI itself, as `make synth ENV=stage` would run it."""
    env = {
        **os.environ,
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
        "PATH": f"{repo_root / '.venv' / 'bin'}:{os.environ['PATH']}",
    }
    result = subprocess.run(
        [
            str(repo_root / "node_modules" / ".bin" / "cdk"),
            "synth",
            "--no-notices",
            "-c",
            "env=stage",
            "--output",
            str(tmp_path / "out"),
            "--quiet",
        ],
        cwd=repo_root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert (
        "emr-lineage: unknown environment 'stage' (--env, or -c env= for cdk); cdk.json defines: dev, prod"
        in result.stderr
    )
    assert "Traceback" not in result.stderr
