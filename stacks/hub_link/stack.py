"""HubLinkStack: how a spoke's Spark reaches its hub's lineage service (``hub``), in the spoke's account.

- The interface VPC endpoint to the hub's endpoint service (PrivateLink: the hub's gateway stack,
  stacks/gateway/spokes.py), in the private subnets, one per availability zone. Its security group admits the
  lineage clients' group on the hub's spoke port only; a hub in another region makes it a cross-region endpoint.
- The lineage clients' group: EMR nodes and serverless job runs join it, as they join the lineage service's
  clients' group elsewhere; it may send to the endpoint on that port, nothing else.
- With ``hub.hostname``: a private hosted zone of that name in the spoke's VPC, its apex an alias of the
  endpoint, so Spark verifies the hub's certificate by its name (HTTPS). Without: plain HTTP to the endpoint's
  own DNS name.
- The API key: the secret ``hub.api_key_secret_arn`` names (the hub's for this account, usually in the hub's
  account: the roles' identity policies name it and any key of its account, through Secrets Manager only), or
  else an empty secret of the spoke's own under a key of its own, which the operator fills with the key.

Published for the tools, as a hub-less environment publishes them: the API key secret's ARN where the gateway's
would be (``launch``, ``launch --serverless`` and ``attach`` read it) and the endpoint's id (``doctor``). The
lineage URL goes into the EMR stack's launch spec (``app.py`` passes it).
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Aws, CfnCondition, CfnOutput, Fn, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_route53 as route53
from aws_cdk import aws_route53_targets as route53_targets
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from emr_lineage.aws import parameters
from emr_lineage.settings.hub import HubSettings
from emr_lineage.settings.model import EnvironmentSettings
from stacks.gateway.storage import let_emr_serverless_decrypt, let_emr_serverless_read
from stacks.shared.nag import acknowledge
from stacks.shared.published import publish
from stacks.shared.settings_mapping import removal_policy
from stacks.shared.storage import rotating_key


class HubLinkStack(Stack):
    """Exposes ``endpoint``, ``clients_security_group``, ``lineage_url`` (the hub's, for the launch spec),
    ``api_key`` (the secret), ``api_key_kms_key_arn`` and ``api_key_region`` (what decrypts it, and where)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, vpc: ec2.IVpc, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        hub = settings.hub
        if hub is None:
            raise ValueError("HubLinkStack is a spoke's: its settings need hub")
        self.clients_security_group, endpoint_security_group = self._security_groups(settings, vpc, hub.port)
        self.endpoint = ec2.InterfaceVpcEndpoint(
            self,
            "Endpoint",
            vpc=vpc,
            service=ec2.InterfaceVpcEndpointService(hub.endpoint_service_name, hub.port),
            subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            security_groups=[endpoint_security_group],
            open=False,
            # The hub's service has no private DNS name of its own: hub.hostname gets a zone below.
            private_dns_enabled=False,
            service_region=self._service_region(settings.region, hub.region),
        )
        self.lineage_url = self._lineage_url(hub, vpc)
        self._api_key(settings, hub)
        self._publish(settings)

    def _security_groups(
        self, settings: EnvironmentSettings, vpc: ec2.IVpc, port: int
    ) -> tuple[ec2.SecurityGroup, ec2.SecurityGroup]:
        """The lineage clients' group, and the endpoint's, which admits it on ``port`` only."""
        prefix = settings.resource_prefix
        clients = ec2.SecurityGroup(
            self,
            "ClientsSecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{prefix} lineage clients: members may send lineage to the endpoint of the hub",
        )
        endpoint = ec2.SecurityGroup(
            self,
            "EndpointSecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{prefix} endpoint to the lineage service of the hub: from the lineage clients only",
        )
        endpoint.connections.allow_from(clients, ec2.Port.tcp(port), "Lineage to the hub (EMR nodes, job runs)")
        return clients, endpoint

    def _service_region(self, region: str | None, hub_region: str) -> str | None:
        """The hub's region where it is not the spoke's (a cross-region endpoint); an environment-agnostic
        synth leaves it to the deploy's region."""
        if region is not None:
            return hub_region if hub_region != region else None
        same = CfnCondition(self, "HubInThisRegion", expression=Fn.condition_equals(Aws.REGION, hub_region))
        return Fn.condition_if(same.logical_id, Aws.NO_VALUE, hub_region).to_string()

    def _lineage_url(self, hub: HubSettings, vpc: ec2.IVpc) -> str:
        """HTTPS to the hub's name, which a private zone of the spoke's VPC points at the endpoint; else plain
        HTTP to the endpoint's own name."""
        if hub.hostname is None:
            # Each DNS entry reads "<hosted zone id>:<name>"; the first is the endpoint's regional name.
            dns_name = Fn.select(1, Fn.split(":", Fn.select(0, self.endpoint.vpc_endpoint_dns_entries)))
            return f"http://{dns_name}:{hub.port}"
        zone = route53.PrivateHostedZone(
            self,
            "HubZone",
            zone_name=hub.hostname,
            vpc=vpc,
            comment=f"{hub.hostname}: the hub's lineage service, through its endpoint in this VPC",
        )
        route53.ARecord(
            self,
            "HubRecord",
            zone=zone,
            target=route53.RecordTarget.from_alias(route53_targets.InterfaceVpcEndpointTarget(self.endpoint)),
        )
        return f"https://{hub.hostname}:{hub.port}"

    def _api_key(self, settings: EnvironmentSettings, hub: HubSettings) -> None:
        """The secret hub.api_key_secret_arn names (decrypted by a key of its account, through Secrets Manager in
        its region), or an empty one of the spoke's own under a key of its own."""
        parts = hub.secret_arn_parts
        if hub.api_key_secret_arn is not None and parts is not None:
            partition, region, account = parts
            self.api_key: secretsmanager.ISecret = secretsmanager.Secret.from_secret_complete_arn(
                self, "HubApiKey", hub.api_key_secret_arn
            )
            self.api_key_kms_key_arn = f"arn:{partition}:kms:{region}:{account}:key/*"
            self.api_key_region = region
            return
        prefix = settings.resource_prefix
        key = rotating_key(self, "Key", settings=settings, alias="hub-api-key", description=f"{prefix} hub API key")
        secret = secretsmanager.Secret(
            self,
            "ApiKey",
            secret_name=f"{prefix}/hub/api-key",
            description=f"{prefix}: the API key of the hub's lineage gateway (put by the operator)",
            encryption_key=key,
            removal_policy=removal_policy(settings),
        )
        # Empty until the operator puts the hub's key: a generated value would only be refused by the hub (401).
        secret.node.default_child.add_property_deletion_override("GenerateSecretString")
        acknowledge(
            secret,
            "AwsSolutions-SMG4",
            "The hub's lineage gateway issues this key; it changes when the hub rotates it, and the operator "
            "puts the new value here then.",
        )
        if settings.emr_serverless.enabled:
            let_emr_serverless_read(secret)
            let_emr_serverless_decrypt(key)
        self.api_key, self.api_key_kms_key_arn, self.api_key_region = secret, key.key_arn, Aws.REGION

    def _publish(self, settings: EnvironmentSettings) -> None:
        env = settings.name
        publish(
            self,
            parameter_id="ApiKeySecretArnParameter",
            parameter_name=parameters.gateway_api_key_secret(env),
            value=self.api_key.secret_arn,
            description="Secrets Manager secret of the hub's API key (clusters and job runs read it)",
            output_id="ApiKeySecretArn",
        )
        publish(
            self,
            parameter_id="EndpointIdParameter",
            parameter_name=parameters.hub_endpoint_id(env),
            value=self.endpoint.vpc_endpoint_id,
            description="Interface VPC endpoint to the hub's lineage service (doctor checks it is available)",
            output_id="HubEndpointId",
        )
        CfnOutput(self, "HubLineageUrl", value=self.lineage_url, description="Where Spark sends lineage: the hub")
        CfnOutput(
            self,
            "LineageClientsSecurityGroupId",
            value=self.clients_security_group.security_group_id,
            description="Security group that lineage clients join to reach the hub's endpoint",
        )
