"""One synth per environment, shared by every stack test (synth takes seconds, not ms)."""

from __future__ import annotations

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
    return {
        env: synthesize({**cdk_context, "env": env}, tmp_path_factory.mktemp(f"cdk-out-{env}"))
        for env in ENVS
    }


@pytest.fixture(scope="session", params=ENVS)
def synth(request: pytest.FixtureRequest, synths: dict[str, Synth]) -> Synth:
    """Each environment in turn."""
    return synths[request.param]
