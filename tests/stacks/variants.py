"""The configurations the stack tests synthesize, built from cdk.json's context.

Plain data and functions (no pytest), so tests can import the values they assert on.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

ENVS = ("dev", "prod")
# prod with every optional part on (OIDC sign-in, an existing lake bucket, a private CA's bundle in S3); dev with
# HTTPS, Cognito sign-in, an ECR image, no retention, an existing VPC and an AWS Private CA.
OPTIONAL = "prod+optional"
COGNITO = "dev+cognito"
# dev as a spoke of another account's lineage service (hub), in an existing VPC, with EMR Serverless on.
SPOKE = "spoke"
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
# The platform team's role, granted the archive's Athena tables (gateway.archive_readers).
ARCHIVE_READER = "arn:aws:iam::123456789012:role/platform-team"
ECR_MIRROR = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/docker-hub/marquezproject"
# An estate's VPC (network.existing_vpc): the database in subnets of its own, the endpoints made here.
EXISTING_VPC = {
    "vpc_id": "vpc-0a1b2c3d4e5f60718",
    "cidr": "10.90.0.0/16",
    "availability_zones": ["eu-west-1a", "eu-west-1b"],
    "private_subnet_ids": ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712"],
    "isolated_subnet_ids": ["subnet-0a1b2c3d4e5f60721", "subnet-0a1b2c3d4e5f60722"],
    "route_table_ids": ["rtb-0a1b2c3d4e5f60731", "rtb-0a1b2c3d4e5f60732", "rtb-0a1b2c3d4e5f60731"],
}
EXISTING_VPC_ENDPOINTS = ["sts", "logs"]
# The account and region of the estate's ARNs below.
ESTATE_ACCOUNT, ESTATE_REGION = "123456789012", "eu-west-1"
ESTATE_ZONES = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
# Accounts whose Spark sends lineage to prod's gateway through PrivateLink (gateway.spoke_accounts).
SPOKE_ACCOUNTS = ["210987654321", "345678901234"]
# Another region whose spokes connect across regions (gateway.spoke_regions).
SPOKE_REGIONS = ["eu-central-1"]
# A spoke's hub (hub): prod+optional's endpoint service, certificate name and its secret for SPOKE_ACCOUNTS[0].
HUB_SERVICE_NAME = "com.amazonaws.vpce.eu-west-1.vpce-svc-0a1b2c3d4e5f60789"
HUB_HOSTNAME = "lineage.prod.example.com"
HUB_API_KEY_SECRET_ARN = (
    f"arn:aws:secretsmanager:eu-west-1:123456789012:secret:emr-lineage-prod/gateway/spokes/{SPOKE_ACCOUNTS[0]}-AbCdEf"
)
HUB = {
    "endpoint_service_name": HUB_SERVICE_NAME,
    "region": "eu-west-1",
    "hostname": HUB_HOSTNAME,
    "api_key_secret_arn": HUB_API_KEY_SECRET_ARN,
}
# An existing lake bucket, its key and Glue databases of the estate (data_lake.existing_*).
EXISTING_BUCKET = "estate-lake-123456789012"
EXISTING_KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
EXISTING_DATABASES = ["sales", "finance-reporting"]
# The CA of the load balancer's certificate (openlineage.trusted_ca): a pinned bundle, or an AWS Private CA.
TRUSTED_CA_BUNDLE = {
    "type": "s3",
    "uri": "s3://estate-pki-eu-west-1/ca/company-root.pem",
    "sha256": "5f3c9a0e1b7d2c4e6a8b0d1f3e5c7a9b2d4f6e8a0c1b3d5f7e9a2c4b6d8f0e1a",
}
PRIVATE_CA_ARN = "arn:aws:acm-pca:eu-west-1:210987654321:certificate-authority/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"


def _https_on(env: dict) -> None:
    """A real prod's HTTPS: with its certificate it no longer allows plain HTTP (docs/deploy.md)."""
    env["marquez"].update(certificate_arn=CERTIFICATE_ARN, domain_name="lineage.prod.example.com")
    env["marquez"].pop("allow_plain_http", None)


def cdk_json_context(repo_root: Path) -> dict:
    return json.loads((repo_root / "cdk.json").read_text())["context"]


def _optional_variant(context: dict) -> dict:
    """prod with the optional parts switched on: long-running cluster, Lake Formation runtime role,
    HTTPS (certificate and domain name), OIDC sign-in on the web UI, readers of the archive's tables, an
    existing lake bucket (SSE-KMS) with existing Glue databases, two spoke accounts (and a spoke region), and
    a private CA's bundle in S3; bound to an account and region, as a deploy is (their names are literals in
    the templates)."""
    variant = copy.deepcopy(context)
    prod = variant["emr-lineage"]["environments"]["prod"]
    prod.update(account=ESTATE_ACCOUNT, region=ESTATE_REGION)
    prod["data_lake"].pop("noncurrent_version_expiration_days")
    prod["data_lake"].update(
        existing_bucket={"name": EXISTING_BUCKET, "kms_key_arn": EXISTING_KEY_ARN},
        existing_databases=EXISTING_DATABASES,
    )
    prod["emr"].update(long_running_cluster=True, lake_formation_runtime_role=True, ec2_key_name="platform-ops")
    prod["gateway"].update(archive_readers=[ARCHIVE_READER], spoke_accounts=SPOKE_ACCOUNTS, spoke_regions=SPOKE_REGIONS)
    _https_on(prod)
    prod["marquez"]["ui_auth"] = OIDC_UI_AUTH
    prod["openlineage"]["trusted_ca"] = TRUSTED_CA_BUNDLE
    # What the CDK CLI's lookup of the account's zones records in cdk.context.json on the first synth.
    zones = {f"availability-zones:account={ESTATE_ACCOUNT}:region={ESTATE_REGION}": ESTATE_ZONES}
    return {**variant, **zones, "env": "prod"}


def _cognito_variant(context: dict) -> dict:
    """dev with HTTPS and Cognito sign-in, the Marquez images from an ECR mirror, no retention task, in an
    existing VPC (with endpoints the stacks make), its certificate from an AWS Private CA."""
    variant = copy.deepcopy(context)
    variant["emr-lineage"]["environments"]["dev"]["network"] = {
        "existing_vpc": EXISTING_VPC,
        "create_endpoints": True,
        "interface_endpoints": EXISTING_VPC_ENDPOINTS,
    }
    marquez = variant["emr-lineage"]["environments"]["dev"]["marquez"]
    marquez.update(
        certificate_arn=CERTIFICATE_ARN,
        domain_name="lineage.dev.example.com",
        ui_auth=COGNITO_UI_AUTH,
        retention_days=None,
    )
    variant["emr-lineage"]["environments"]["dev"]["openlineage"]["trusted_ca"] = {
        "type": "aws_private_ca",
        "arn": PRIVATE_CA_ARN,
    }
    variant["emr-lineage"]["versions"]["marquez_image"] = {
        "api": f"{ECR_MIRROR}/marquez",
        "web": f"{ECR_MIRROR}/marquez-web",
    }
    return {**variant, "env": "dev"}


def as_spoke(env: dict, hub: dict = HUB) -> None:
    """An environment's settings made a spoke of ``hub``: no gateway of its own, in the estate's VPC (with endpoints
    the stacks make)."""
    env["hub"] = hub
    env["gateway"]["enabled"] = False
    env["network"] = {
        "existing_vpc": EXISTING_VPC,
        "create_endpoints": True,
        "interface_endpoints": EXISTING_VPC_ENDPOINTS,
    }


def _spoke_variant(context: dict) -> dict:
    """dev as a spoke of prod+optional's gateway (HTTPS by its name, its secret for this account), in an existing
    VPC, with EMR Serverless on."""
    variant = copy.deepcopy(context)
    dev = variant["emr-lineage"]["environments"]["dev"]
    as_spoke(dev)
    dev["emr_serverless"]["enabled"] = True
    return {**variant, "env": "dev"}


def all_variants(context: dict) -> dict[str, dict]:
    """Every configuration the stack tests synthesize: each environment, prod with the optional parts,
    dev with HTTPS and Cognito sign-in, and dev as a spoke."""
    return {
        **{env: {**context, "env": env} for env in ENVS},
        OPTIONAL: _optional_variant(context),
        COGNITO: _cognito_variant(context),
        SPOKE: _spoke_variant(context),
    }


# The settings a user changes after the first deploy, each applied alone to SWITCH_BASE's
# (tests/stacks/test_update_safety.py deploys each over the base and back, but for ONE_WAY).
SWITCH_BASE = "prod"


def _retention(env: dict) -> None:
    env.update(log_retention_days=400, removal_policy="retain")
    env["marquez"]["retention_days"] = None
    env["gateway"]["dead_letter_retention_days"] = 7
    env["database"]["backup_retention_days"] = 7
    env["network"]["flow_logs_retention_days"] = 30


def _toggle(section: str, key: str):
    def switch(env: dict) -> None:
        env[section][key] = not env[section][key]

    return switch


SWITCHES = {
    "https": _https_on,
    "in-transit-encryption": _toggle("emr", "in_transit_encryption"),
    "runtime-role": _toggle("emr", "lake_formation_runtime_role"),
    "serverless": _toggle("emr_serverless", "enabled"),
    "gateway": _toggle("gateway", "enabled"),
    "autoscaling": lambda env: env["marquez"].update(autoscaling=None),
    "retention": _retention,
    "long-running-cluster": lambda env: env["emr"].update(long_running_cluster=True, ec2_key_name="platform-ops"),
    "image-registry": lambda env: env["marquez"].update(image_registry={"type": "direct"}),
    # Not data_lake.existing_bucket: from the stack's own bucket it is a destroy and redeploy (docs/deploy.md).
    "existing-databases": lambda env: env["data_lake"].update(existing_databases=EXISTING_DATABASES),
    "spoke-accounts": lambda env: env["gateway"].update(spoke_accounts=SPOKE_ACCOUNTS),
}
# Turning HTTPS off takes a step by hand (docs/deploy.md): the port-80 listener it made must go first.
ONE_WAY = frozenset({"https"})


def switch_variants(context: dict) -> dict[str, dict]:
    """SWITCH_BASE's settings with each switch of SWITCHES, by switch name."""
    variants = {}
    for name, switch in SWITCHES.items():
        variant = copy.deepcopy(context)
        switch(variant["emr-lineage"]["environments"][SWITCH_BASE])
        variants[name] = {**variant, "env": SWITCH_BASE}
    return variants
