"""checkov over the synthesized templates: one run per test run, shared by every pytest-xdist worker.

checkov lives in its own virtualenv (``.venv-checkov``, ``make setup``: its pins clash with
requirements.lock) and takes its options from ``.checkov.yaml``, as ``make lint`` does. Its start-up is
most of its cost (about 2.5 s of a 5 s scan of six templates), so one process scans every template at
once: each stack of each environment, a variant's template where it differs from its environment's
(as the cfn-lint test does), and a probe template with one unacknowledged and one acknowledged
finding, which proves in the same run that a finding fails the check and an acknowledgement holds.

The report lives next to the assemblies (``synth_cache``), named after a hash of checkov's pins and
options and of every scanned template, made under a file lock by the first worker that asks; the
test run's prefetch (tests/prefetch.py) makes it right after the synths, in the background.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from tests.paths import REPO_ROOT
from tests.stacks.synth_cache import CACHE_ENV, AssemblyCache, Synth

CHECKOV = REPO_ROOT / ".venv-checkov" / "bin" / "checkov"
CONFIG = REPO_ROOT / ".checkov.yaml"
PINS = REPO_ROOT / "requirements-checkov.lock"
PROBE = "checkov-probe"
PROBE_CHECK = "CKV_AWS_158"  # a log group without a KMS key
PROBE_REASON = "The probe's acknowledged log group: it shows an acknowledgement in its metadata holds."
# checkov's exit status: 0 when every check passed, 1 when one failed; anything else is a crash.
CHECKOV_FINDINGS_EXIT = 1


@dataclass(frozen=True)
class Finding:
    template: str  # the label of the scanned template, e.g. "prod/lineage" or "checkov-probe"
    resource: str  # its logical id
    check: str  # e.g. CKV_AWS_158
    title: str

    def __str__(self) -> str:
        return f"{self.template}: {self.check} on {self.resource} ({self.title})"


@dataclass(frozen=True)
class Scan:
    templates: dict[str, Path]  # label -> template scanned
    findings: list[Finding]  # the failed checks
    summary: dict  # checkov's counts: passed, failed, skipped, parsing_errors, resource_count


def templates_to_scan(synths: dict[str, Synth], environments: tuple[str, ...]) -> dict[str, Path]:
    """label -> template: every stack of each environment; of the other variants, what differs from theirs (or
    what their environment has not: a spoke's hub link)."""
    found = {}
    for name, synth in synths.items():
        base = synths[synth.env]
        for stack, stack_name in synth.stack_names.items():
            own = name in environments or stack not in base.stack_names
            if own or synth.template_json(stack) != base.template_json(stack):
                found[f"{name}/{stack}"] = synth.outdir / f"{stack_name}.template.json"
    return found


def write_probe(directory: Path) -> Path:
    """A template with two log groups without a KMS key, the second acknowledged the project's way."""
    import aws_cdk as cdk
    from aws_cdk import aws_logs as logs
    from aws_cdk.assertions import Template

    from stacks.shared.nag import acknowledge_checkov

    stack = cdk.Stack(cdk.App(), "CheckovProbe")
    logs.CfnLogGroup(stack, "Unacknowledged", retention_in_days=30)
    acknowledge_checkov(logs.CfnLogGroup(stack, "Acknowledged", retention_in_days=30), PROBE_CHECK, PROBE_REASON)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{PROBE}.template.json"
    # Every worker writes the same file while another process may be scanning it: whole or not at all.
    partial = path.with_name(f"{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(Template.from_stack(stack).to_json(), indent=1, sort_keys=True))
    partial.replace(path)
    return path


def run_checkov(paths: list[Path]) -> dict:
    """checkov's JSON report on ``paths`` (its cloudformation part)."""
    if not CHECKOV.exists():
        raise AssertionError(f"{CHECKOV} is missing: run `make setup` (checkov has a virtualenv of its own)")
    command = [str(CHECKOV), "--config-file", str(CONFIG), "--output", "json", "--file", *map(str, paths)]
    # Its own interpreter and libraries only: nothing of the test process's import path. One process, no
    # workers of its own: the test workers keep the cores busy, and forking them costs 15% more CPU.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"CHECKOV_PARALLELIZATION_TYPE": "none"}
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, env=env)
    if done.returncode not in (0, CHECKOV_FINDINGS_EXIT):
        raise AssertionError(f"checkov exited {done.returncode}:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout)
    # One framework scanned: one report object (checkov writes a list when there are several).
    reports = report if isinstance(report, list) else [report]
    (cloudformation,) = [r for r in reports if r["check_type"] == "cloudformation"]
    return cloudformation


def _digest(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in (PINS, CONFIG, *paths):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def scan(cache: AssemblyCache, synths: dict[str, Synth], environments: tuple[str, ...]) -> Scan:
    """The checkov scan of every template ``templates_to_scan`` picks and the probe: made once per run."""
    templates = {**templates_to_scan(synths, environments), PROBE: write_probe(cache.root / PROBE)}
    labels = {str(path.resolve()): label for label, path in templates.items()}
    report_path = cache.root / f"checkov-{_digest(list(templates.values()))}.json"
    with FileLock(str(cache.root / "checkov.lock")):
        if not report_path.exists():
            report = run_checkov(list(templates.values()))
            partial = report_path.with_suffix(".partial")
            partial.write_text(json.dumps(report))
            partial.replace(report_path)
    report = json.loads(report_path.read_text())
    findings = [
        Finding(
            template=labels[str(Path(failed["file_abs_path"]).resolve())],
            resource=failed["resource"].rsplit(".", 1)[-1],
            check=failed["check_id"],
            title=failed["check_name"],
        )
        for failed in report["results"].get("failed_checks", [])
    ]
    return Scan(templates=templates, findings=findings, summary=report["summary"])


if __name__ == "__main__":  # python -m tests.stacks.checkov_scan FOLDER: every variant synthesized, scanned, then
    # the settings switches' variants (tests/stacks/test_update_safety.py)
    from tests.stacks.variants import ENVS, all_variants, cdk_json_context, switch_variants

    cache = AssemblyCache(Path(os.environ.get(CACHE_ENV) or sys.argv[1]))
    context = cdk_json_context(REPO_ROOT)
    scan(cache, cache.ensure(all_variants(context)), ENVS)
    cache.switches().ensure(switch_variants(context))
