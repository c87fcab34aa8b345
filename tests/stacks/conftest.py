"""One synth per environment, shared by every stack test of the run (synth takes seconds, not ms).

Under pytest-xdist each worker has its own session fixtures, so the assemblies live on disk
(``synth_cache``): the first worker to need a variant synthesizes it, the others read it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.stacks import checkov_scan
from tests.stacks.synth_cache import AssemblyCache, Synth
from tests.stacks.variants import COGNITO, ENVS, OPTIONAL, SPOKE, all_variants, cdk_json_context, switch_variants


@pytest.fixture(scope="session")
def cdk_context(repo_root: Path) -> dict:
    return cdk_json_context(repo_root)


@pytest.fixture(scope="session")
def assemblies(tmp_path_factory: pytest.TempPathFactory) -> AssemblyCache:
    return AssemblyCache.for_run(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def variants(cdk_context: dict) -> dict[str, dict]:
    """Every configuration the stack tests synthesize (tests/stacks/variants.py)."""
    return all_variants(cdk_context)


@pytest.fixture(scope="session")
def synths(variants: dict[str, dict], assemblies: AssemblyCache) -> dict[str, Synth]:
    """Both environments, synthesized once for the whole test run (with the other variants: they cost
    little more once the first synth has loaded the CDK)."""
    made = assemblies.ensure(variants)
    return {env: made[env] for env in ENVS}


@pytest.fixture(scope="session")
def switch_synths(cdk_context: dict, assemblies: AssemblyCache) -> dict[str, Synth]:
    """SWITCH_BASE with each settings switch a user makes after the first deploy (variants.SWITCHES)."""
    return assemblies.switches().ensure(switch_variants(cdk_context))


@pytest.fixture(scope="session")
def optional_synth(variants: dict[str, dict], assemblies: AssemblyCache) -> Synth:
    """prod with every optional part: long-running cluster, runtime role, HTTPS, OIDC sign-in."""
    return assemblies.ensure(variants)[OPTIONAL]


@pytest.fixture(scope="session")
def cognito_synth(variants: dict[str, dict], assemblies: AssemblyCache) -> Synth:
    """dev with HTTPS, Cognito sign-in, ECR images and no retention task."""
    return assemblies.ensure(variants)[COGNITO]


@pytest.fixture(scope="session")
def spoke_synth(variants: dict[str, dict], assemblies: AssemblyCache) -> Synth:
    """dev as a spoke of another account's lineage service, in an existing VPC, with EMR Serverless."""
    return assemblies.ensure(variants)[SPOKE]


@pytest.fixture(scope="session", params=[*ENVS, OPTIONAL, COGNITO, SPOKE])
def any_synth(request: pytest.FixtureRequest, synths: dict[str, Synth]) -> Synth:
    """Every synthesized variant, for the compliance checks."""
    if request.param in synths:
        return synths[request.param]
    named = {OPTIONAL: "optional_synth", COGNITO: "cognito_synth", SPOKE: "spoke_synth"}
    return request.getfixturevalue(named[request.param])


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


@pytest.fixture(scope="session")
def checkov(variants: dict[str, dict], assemblies: AssemblyCache) -> checkov_scan.Scan:
    """checkov's scan of both environments' templates and the variants' own, once per run (checkov_scan.py)."""
    return checkov_scan.scan(assemblies, assemblies.ensure(variants), ENVS)
