"""A spoke's hub (``hub``): the lineage service of another account that this environment's Spark sends to
(part of the typed cdk.json model, :mod:`emr_lineage.settings.model`).

The hub publishes its gateway's ingest as a VPC endpoint service (``gateway.spoke_accounts``,
stacks/gateway/spokes.py); a spoke connects an interface endpoint of its own to it (stacks/hub_link). The
ports of the hub's listener for spokes are defined here, once, for both sides.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field, model_validator

from emr_lineage.settings.base import Strict
from emr_lineage.settings.operations import AWS_REGION, DOMAIN_NAME, SECRET_ARN

# The hub's listener for spokes: HTTPS where the hub has a certificate (its marquez.certificate_arn), else HTTP.
SPOKE_HTTPS_PORT = 8443
SPOKE_HTTP_PORT = 8080

# com.amazonaws.vpce.<region>.vpce-svc-<8 or 17 hex digits>, the name EC2 gives an endpoint service.
_SERVICE_NAME = re.compile(
    rf"^com\.amazonaws\.vpce\.(?P<region>{AWS_REGION.strip('^$')})\.vpce-svc-(?:[0-9a-f]{{8}}|[0-9a-f]{{17}})$"
)


def _service_name(value: str) -> str:
    if not _SERVICE_NAME.match(value):
        raise ValueError(
            f"{value!r} is not a VPC endpoint service name (com.amazonaws.vpce.<region>.vpce-svc-<hex>): copy the "
            "hub's GatewayEndpointServiceName output"
        )
    return value


class HubSettings(Strict):
    """Where a spoke's lineage goes: the hub's endpoint service, and how to reach and authenticate to it."""

    endpoint_service_name: Annotated[str, AfterValidator(_service_name)] = Field(
        description="The hub's VPC endpoint service (`com.amazonaws.vpce.<region>.vpce-svc-<hex>`): its gateway "
        "stack's output `GatewayEndpointServiceName` (SSM `/emr-lineage/<hub env>/gateway/endpoint-service-name`). "
        "The spoke connects an interface endpoint in its VPC to it; the hub accepts only the accounts of its "
        "`gateway.spoke_accounts`."
    )
    region: Annotated[str, Field(pattern=AWS_REGION)] = Field(
        description="The hub's AWS region: the one in `endpoint_service_name`. Another region than the spoke's "
        "makes the endpoint a cross-region one."
    )
    hostname: Annotated[str, Field(pattern=DOMAIN_NAME)] | None = Field(
        default=None,
        description="The name on the hub's certificate (the hub's `marquez.domain_name`): Spark sends HTTPS to "
        f"`https://<hostname>:{SPOKE_HTTPS_PORT}`, resolved by a private hosted zone in the spoke's VPC whose apex "
        "points at the endpoint. Required when the hub has `marquez.certificate_arn`. Null: plain HTTP to the "
        f"endpoint's DNS name on port {SPOKE_HTTP_PORT}, only where `marquez.allow_plain_http` allows it.",
    )
    api_key_secret_arn: Annotated[str, Field(pattern=SECRET_ARN)] | None = Field(
        default=None,
        description="The Secrets Manager secret holding this spoke's API key, by its complete ARN: usually the hub's "
        "secret for this account (an output of the hub's gateway stack), in the hub's account. The clusters' instance "
        "role and the serverless job role may read it and decrypt it through Secrets Manager in its region. Null: the "
        "spoke makes a secret of its own "
        "(`emr-lineage-<env>/hub/api-key`, empty) for the operator to fill with the key "
        "([many accounts](deploy-into-existing.md#many-accounts-one-lineage-service)).",
    )

    @model_validator(mode="after")
    def _service_in_region(self) -> HubSettings:
        match = _SERVICE_NAME.match(self.endpoint_service_name)
        if match and match["region"] != self.region:
            raise ValueError(
                f"endpoint_service_name is a service of {match['region']}, but region is {self.region}: set region "
                f"{match['region']}"
            )
        return self

    @property
    def https(self) -> bool:
        return self.hostname is not None

    @property
    def port(self) -> int:
        return SPOKE_HTTPS_PORT if self.https else SPOKE_HTTP_PORT

    @property
    def secret_arn_parts(self) -> tuple[str, str, str] | None:
        """The partition, region and account of ``api_key_secret_arn`` (None without one)."""
        if self.api_key_secret_arn is None:
            return None
        _, partition, _, region, account, *_ = self.api_key_secret_arn.split(":")
        return partition, region, account


def spoke_problem(
    hub: HubSettings,
    *,
    gateway_enabled: bool,
    spoke_accounts: list[str],
    certificate_arn: str | None,
    plain_http_allowed: bool,
) -> str | None:
    """What contradicts ``hub`` in the rest of a spoke's settings, as one line with its fix (None: nothing)."""
    if spoke_accounts:
        return "a spoke (hub) takes no spokes of its own: remove gateway.spoke_accounts, or hub"
    if gateway_enabled:
        return (
            "a spoke (hub) deploys no gateway, its lineage goes to the hub's: set gateway.enabled false, or remove hub"
        )
    if certificate_arn is not None:
        return (
            "a spoke (hub) has no load balancer of its own: remove marquez.certificate_arn and domain_name (the "
            "hub's name goes in hub.hostname)"
        )
    if not hub.https and not plain_http_allowed:
        return (
            "no hub.hostname, so lineage would go to the hub over plain HTTP: set hub.hostname (the hub's "
            "marquez.domain_name; HTTPS), or marquez.allow_plain_http: true"
        )
    return None
