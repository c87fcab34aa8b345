"""One synth per environment, shared by every stack test (synth takes seconds, not ms)."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

import app as cdk_app

ENVS = ("dev", "prod")


@dataclass(frozen=True)
class Synth:
    env: str
    stacks: dict[str, cdk.Stack]
    templates: dict[str, Template]
    outdir: Path

    def template(self, short_name: str) -> Template:
        return self.templates[short_name]

    def template_json(self, short_name: str) -> dict:
        return self.templates[short_name].to_json()


def cdk_json_context(repo_root: Path) -> dict:
    return json.loads((repo_root / "cdk.json").read_text())["context"]


def synthesize(context: dict, outdir: Path) -> Synth:
    app = cdk.App(context=context, outdir=str(outdir))
    stacks = cdk_app.build_app(app)
    # Full synth, as `cdk synth` does: cdk-nag runs here and fails it on any unacknowledged finding.
    app.synth()
    templates = {name: Template.from_stack(stack) for name, stack in stacks.items()}
    return Synth(env=context["env"], stacks=stacks, templates=templates, outdir=outdir)


@pytest.fixture(scope="session")
def cdk_context(repo_root: Path) -> dict:
    return cdk_json_context(repo_root)


@pytest.fixture(scope="session")
def synths(cdk_context: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Synth]:
    """Both environments, synthesized once for the whole test session."""
    return {env: synthesize({**cdk_context, "env": env}, tmp_path_factory.mktemp(f"cdk-out-{env}")) for env in ENVS}


def _long_running_variant(context: dict) -> dict:
    """prod with the optional parts switched on: long-running cluster and Lake Formation runtime role."""
    variant = copy.deepcopy(context)
    emr = variant["emr-lineage"]["environments"]["prod"]["emr"]
    emr.update(long_running_cluster=True, lake_formation_runtime_role=True, ec2_key_name="platform-ops")
    return {**variant, "env": "prod"}


@pytest.fixture(scope="session")
def long_running_synth(cdk_context: dict, tmp_path_factory: pytest.TempPathFactory) -> Synth:
    return synthesize(_long_running_variant(cdk_context), tmp_path_factory.mktemp("cdk-out-prod-long-running"))


@pytest.fixture(scope="session", params=[*ENVS, "prod+long-running"])
def any_synth(request: pytest.FixtureRequest, synths: dict[str, Synth]) -> Synth:
    """Every synthesized variant, for the compliance checks."""
    if request.param in synths:
        return synths[request.param]
    return request.getfixturevalue("long_running_synth")


def _render(value) -> str:
    """A CloudFormation string value with intrinsics written as placeholders, e.g. ``{Ref:Bucket}``."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        ((fn, arg),) = value.items()
        if fn == "Fn::Join":
            return arg[0].join(_render(part) for part in arg[1])
        if fn == "Ref":
            return f"{{Ref:{arg}}}"
        if fn == "Fn::GetAtt":
            return f"{{GetAtt:{arg[0]}.{arg[1]}}}"
        if fn == "Fn::ImportValue":
            return f"{{Import:{_render(arg)}}}"
        if fn == "Fn::Sub":
            return f"{{Sub:{_render(arg)}}}"
    raise AssertionError(f"unexpected CloudFormation value {value!r}")


@pytest.fixture(scope="session")
def render():
    """Render CloudFormation values as strings with ``{Ref:X}``-style placeholders."""
    return _render


@pytest.fixture(scope="session", params=ENVS)
def synth(request: pytest.FixtureRequest, synths: dict[str, Synth]) -> Synth:
    """Each environment in turn."""
    return synths[request.param]
