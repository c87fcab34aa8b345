"""One synth per environment, shared by every stack test of the run (synth takes seconds, not ms).

Under pytest-xdist each worker has its own session fixtures, so the assemblies live on disk
(``synth_cache``): the first worker to need a variant synthesizes it, the others read it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from tests.stacks.synth_cache import AssemblyCache, Synth

ENVS = ("dev", "prod")
# prod with every optional part on (OIDC sign-in); dev with HTTPS, Cognito sign-in, an ECR image and no retention.
OPTIONAL = "prod+optional"
COGNITO = "dev+cognito"
# Fake but well-formed values (they match emr_lineage/settings/operations.py).
CERTIFICATE_ARN = "arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
OIDC_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:emr-lineage/marquez-oidc-AbCdEf"
OIDC_UI_AUTH = {
    "type": "oidc",
    "issuer": "https://login.example.com",
    "authorization_endpoint": "https://login.example.com/oauth2/authorize",
    "token_endpoint": "https://login.example.com/oauth2/token",
    "user_info_endpoint": "https://login.example.com/oauth2/userinfo",
    "client_id": "marquez-web",
    "client_secret_arn": OIDC_SECRET_ARN,
}
COGNITO_UI_AUTH = {
    "type": "cognito",
    "user_pool_arn": "arn:aws:cognito-idp:eu-west-1:123456789012:userpool/eu-west-1_AbCdEf123",
    "user_pool_client_id": "4example5client6id7",
    "user_pool_domain": "emr-lineage-dev",
}
ECR_MIRROR = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/docker-hub/marquezproject"


def cdk_json_context(repo_root: Path) -> dict:
    return json.loads((repo_root / "cdk.json").read_text())["context"]


def _optional_variant(context: dict) -> dict:
    """prod with the optional parts switched on: long-running cluster, Lake Formation runtime role,
    HTTPS (certificate and domain name) and OIDC sign-in on the web UI."""
    variant = copy.deepcopy(context)
    prod = variant["emr-lineage"]["environments"]["prod"]
    prod["emr"].update(long_running_cluster=True, lake_formation_runtime_role=True, ec2_key_name="platform-ops")
    prod["marquez"].update(
        certificate_arn=CERTIFICATE_ARN, domain_name="lineage.prod.example.com", ui_auth=OIDC_UI_AUTH
    )
    return {**variant, "env": "prod"}


def _cognito_variant(context: dict) -> dict:
    """dev with HTTPS and Cognito sign-in, the Marquez images from an ECR mirror, and no retention task."""
    variant = copy.deepcopy(context)
    marquez = variant["emr-lineage"]["environments"]["dev"]["marquez"]
    marquez.update(
        certificate_arn=CERTIFICATE_ARN,
        domain_name="lineage.dev.example.com",
        ui_auth=COGNITO_UI_AUTH,
        retention_days=None,
    )
    variant["emr-lineage"]["versions"]["marquez_image"] = {
        "api": f"{ECR_MIRROR}/marquez",
        "web": f"{ECR_MIRROR}/marquez-web",
    }
    return {**variant, "env": "dev"}


@pytest.fixture(scope="session")
def cdk_context(repo_root: Path) -> dict:
    return cdk_json_context(repo_root)


@pytest.fixture(scope="session")
def assemblies(tmp_path_factory: pytest.TempPathFactory) -> AssemblyCache:
    return AssemblyCache.for_run(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def variants(cdk_context: dict) -> dict[str, dict]:
    """Every configuration the stack tests synthesize: each environment, prod with the optional parts,
    and dev with HTTPS and Cognito sign-in."""
    return {
        **{env: {**cdk_context, "env": env} for env in ENVS},
        OPTIONAL: _optional_variant(cdk_context),
        COGNITO: _cognito_variant(cdk_context),
    }


@pytest.fixture(scope="session")
def synths(variants: dict[str, dict], assemblies: AssemblyCache) -> dict[str, Synth]:
    """Both environments, synthesized once for the whole test run (with the other variants: they cost
    little more once the first synth has loaded the CDK)."""
    made = assemblies.ensure(variants)
    return {env: made[env] for env in ENVS}


@pytest.fixture(scope="session")
def optional_synth(variants: dict[str, dict], assemblies: AssemblyCache) -> Synth:
    """prod with every optional part: long-running cluster, runtime role, HTTPS, OIDC sign-in."""
    return assemblies.ensure(variants)[OPTIONAL]


@pytest.fixture(scope="session")
def cognito_synth(variants: dict[str, dict], assemblies: AssemblyCache) -> Synth:
    """dev with HTTPS, Cognito sign-in, ECR images and no retention task."""
    return assemblies.ensure(variants)[COGNITO]


@pytest.fixture(scope="session", params=[*ENVS, OPTIONAL, COGNITO])
def any_synth(request: pytest.FixtureRequest, synths: dict[str, Synth]) -> Synth:
    """Every synthesized variant, for the compliance checks."""
    if request.param in synths:
        return synths[request.param]
    return request.getfixturevalue({OPTIONAL: "optional_synth", COGNITO: "cognito_synth"}[request.param])


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
