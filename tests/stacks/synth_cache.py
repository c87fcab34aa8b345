"""Synthesized cloud assemblies, made once per test run and shared by every pytest-xdist worker.

A synth takes seconds. The first worker that needs them synthesizes every configuration variant
(context), each into a directory named after a hash of the context, the library versions, the
first-party modules ``app.py`` imports (followed statically) and the folders it uploads as
assets; a file lock keeps the other workers from doing it twice, and they load the templates
from the assembly's JSON.

The directory is the test run's shared temporary directory (``EMR_LINEAGE_SYNTH_CACHE`` may name
another one, to keep assemblies across runs: the hash makes a stale one impossible to pick up).
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import aws_cdk as cdk
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks
from filelock import FileLock, Timeout

from stacks.gateway.asset import asset_files, schema_files
from stacks.gateway.packages import wheels
from tests.paths import REPO_ROOT, SYNTH_FOLDER, run_shared_dir

# What a synth reads besides its context: app.py and the first-party modules it imports, the
# folders the stacks upload as assets, and the files of the gateway's Lambda asset.
APP = "app.py"
FIRST_PARTY = ("stacks", "emr_lineage")
ASSET_FOLDERS = ("bootstrap", "jobs")
LIBRARIES = ("aws-cdk-lib", "cdk-nag", "constructs", "jsii")
INDEX_FILE = "emr-lineage-stacks.json"
NAG_FILE = "emr-lineage-nag.json"
CACHE_ENV = "EMR_LINEAGE_SYNTH_CACHE"
SWITCHES_FOLDER = "switches"


@dataclass
class Synth:
    """One synthesized variant: its templates by short stack name, read from the assembly."""

    name: str  # the variant's (tests/stacks/variants.py), e.g. "dev" or "spoke"
    env: str
    outdir: Path
    # short name ("network", "lineage", "data_lake", "emr", "gateway") -> CloudFormation stack name
    stack_names: dict[str, str]
    # short name -> cdk-nag AwsSolutions findings on the live stack right after synth
    nag_findings: dict[str, list[str]]
    _templates: dict[str, Template] = field(default_factory=dict, repr=False)
    _json: dict[str, dict] = field(default_factory=dict, repr=False)

    def template_json(self, short_name: str) -> dict:
        """The stack's template as a dict (a copy: tests may not change what others read)."""
        if short_name not in self._json:
            path = self.outdir / f"{self.stack_names[short_name]}.template.json"
            self._json[short_name] = json.loads(path.read_text())
        return copy.deepcopy(self._json[short_name])

    def template(self, short_name: str) -> Template:
        """The stack's template for ``aws_cdk.assertions``."""
        if short_name not in self._templates:
            self._templates[short_name] = Template.from_json(self.template_json(short_name))
        return self._templates[short_name]

    @property
    def templates(self) -> dict[str, dict]:
        return {name: self.template_json(name) for name in self.stack_names}


def _first_party_file(module: str) -> Path | None:
    parts = module.split(".")
    if parts[0] not in FIRST_PARTY:
        return None
    base = REPO_ROOT.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_modules(path: Path) -> list[str]:
    """Absolute names of the modules a file imports, with their parent packages."""
    package = list(path.relative_to(REPO_ROOT).parent.parts)
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1] if node.level else [])
            module = ".".join(part for part in (base, node.module or "") if part)
            names += [module, *(f"{module}.{alias.name}" for alias in node.names)]
    return [".".join(name.split(".")[:i]) for name in names for i in range(1, name.count(".") + 2)]


def _source_files() -> list[Path]:
    """app.py and every first-party module it reaches, then every file of the asset folders."""
    seen: set[Path] = set()
    todo = [REPO_ROOT / APP]
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo += [f for f in map(_first_party_file, _imported_modules(path)) if f is not None]
    assets = [
        p
        for folder in ASSET_FOLDERS
        for p in sorted((REPO_ROOT / folder).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]
    gateway = [REPO_ROOT / name for name in asset_files(REPO_ROOT)]
    return sorted(seen) + assets + gateway


@functools.cache
def _code_digest() -> str:
    """The libraries' versions and the sources' contents (read once per worker)."""
    digest = hashlib.sha256()
    for library in LIBRARIES:
        digest.update(f"{library}=={metadata.version(library)}\n".encode())
    for path in _source_files():
        digest.update(str(path.relative_to(REPO_ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    # What else the gateway asset holds: the schemas it carries and its wheels (named by version).
    for path in schema_files():
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for wheel in wheels():
        digest.update(wheel.name.encode() + b"\0")
    return digest.hexdigest()


def cache_key(context: dict) -> str:
    return hashlib.sha256((_code_digest() + json.dumps(context, sort_keys=True)).encode()).hexdigest()


def _synthesize(context: dict, outdir: Path) -> None:
    """``cdk synth`` of the whole app into ``outdir``, plus the index and nag findings the tests read."""
    import app as cdk_app

    app = cdk.App(context=context, outdir=str(outdir))
    stacks = cdk_app.build_app(app)
    # Full synth, as `cdk synth` does: cdk-nag runs here and fails it on any unacknowledged finding.
    app.synth()
    findings = {}
    for name, stack in stacks.items():
        report = AwsSolutionsChecks().validate_scope(stack)
        findings[name] = [
            f"{v.rule_name}: {', '.join(r.resource_logical_id for r in v.violating_resources)}"
            for v in report.violations
        ]
        if not report.success and not findings[name]:
            findings[name] = ["cdk-nag reported a failure without violations"]
    (outdir / NAG_FILE).write_text(json.dumps(findings))
    # Written last: its presence marks a complete assembly.
    (outdir / INDEX_FILE).write_text(json.dumps({name: stack.stack_name for name, stack in stacks.items()}))


def _warm_up() -> None:
    """One tiny synth: a process's first synth spends about two seconds loading what every synth uses
    (the template validation, the cloud assembly writer); the next ones skip that."""
    with tempfile.TemporaryDirectory() as outdir:
        app = cdk.App(outdir=outdir)
        cdk.CfnWaitConditionHandle(cdk.Stack(app, "WarmUp"), "Nothing")
        app.synth()


class AssemblyCache:
    """Assemblies under ``root``, one directory per (variant name, cache key).

    One lock for the whole cache: the first worker synthesizes every missing variant it is asked
    for in one go (after the first synth of a process, the next take a fraction of a second), and
    the other workers wait for it instead of paying for a cold synth of their own.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self._lock = FileLock(str(root / "assemblies.lock"))

    @classmethod
    def for_run(cls, basetemp: Path) -> AssemblyCache:
        """The cache of this test run: the workers' common temporary directory under xdist."""
        if os.environ.get(CACHE_ENV):
            return cls(Path(os.environ[CACHE_ENV]))
        return cls(run_shared_dir(basetemp) / SYNTH_FOLDER)

    def switches(self) -> AssemblyCache:
        """The settings switches' assemblies, under a lock of their own: the stack tests' variants are not
        kept waiting while they are made."""
        return AssemblyCache(self.root / SWITCHES_FOLDER)

    def _directory(self, name: str, context: dict) -> Path:
        return self.root / f"{name}-{cache_key(context)[:24]}"

    def ensure(self, variants: dict[str, dict]) -> dict[str, Synth]:
        """Each variant (name -> context), synthesized unless a worker already did."""
        directories = {name: self._directory(name, context) for name, context in variants.items()}
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            # Another worker is synthesizing: warm the CDK up meanwhile, which this worker's own
            # synths (tests/stacks/network/test_vpc_cidr.py) would otherwise pay for later.
            _warm_up()
            self._lock.acquire()
        try:
            for name, directory in directories.items():
                if not (directory / INDEX_FILE).exists():
                    partial = directory.with_name(directory.name + ".partial")
                    shutil.rmtree(partial, ignore_errors=True)
                    _synthesize(variants[name], partial)
                    shutil.rmtree(directory, ignore_errors=True)
                    partial.rename(directory)
        finally:
            self._lock.release()
        return {
            name: Synth(
                name=name,
                env=variants[name]["env"],
                outdir=directory,
                stack_names=json.loads((directory / INDEX_FILE).read_text()),
                nag_findings=json.loads((directory / NAG_FILE).read_text()),
            )
            for name, directory in directories.items()
        }


if __name__ == "__main__":  # python -m tests.stacks.synth_cache FOLDER: every variant, ahead of the tests
    from tests.stacks.variants import all_variants, cdk_json_context

    AssemblyCache(Path(os.environ.get(CACHE_ENV) or sys.argv[1])).ensure(all_variants(cdk_json_context(REPO_ROOT)))
