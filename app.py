#!/usr/bin/env python3
"""emr-lineage CDK app: `cdk synth -c env=dev|prod`.

All cross-stack wiring happens here, in the open: each stack exposes what others need as
attributes, and this file passes them on as props. CloudFormation exports and imports follow
from those references (and so does the deploy order); no stack reads another's SSM parameters.
"""

from __future__ import annotations

import sys

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from cdk_nag import AwsSolutionsChecks

from emr_lineage.aws.stacks import DATA_LAKE, EMR, GATEWAY, HUB_LINK, LINEAGE_SERVICE, MONITORING, NETWORK, stack_name
from emr_lineage.errors import EmrLineageError
from emr_lineage.settings.loader import CONTEXT_KEY, ENV_CONTEXT_KEY, settings_from_context
from emr_lineage.settings.model import EnvironmentSettings
from stacks.data_lake import DataLakeStack
from stacks.emr import EmrStack
from stacks.emr.roles import DataLakeAccess, GatewayAccess, GatewayArchive
from stacks.gateway import GatewayStack
from stacks.hub_link import HubLinkStack
from stacks.lineage_service import LineageServiceStack
from stacks.monitoring import MonitoredGateway, MonitoredService, MonitoringStack
from stacks.network import NetworkStack


def settings_for(app: cdk.App) -> EnvironmentSettings:
    """The selected environment's settings from cdk.json context (raises ConfigError)."""
    return settings_from_context(app.node.try_get_context(CONTEXT_KEY), app.node.try_get_context(ENV_CONTEXT_KEY))


def environment(settings: EnvironmentSettings) -> cdk.Environment | None:
    """The account and region to deploy to; without either the stacks stay environment-agnostic (synth
    needs no credentials)."""
    if settings.account or settings.region:
        return cdk.Environment(account=settings.account, region=settings.region)
    return None


def network_stack(app: cdk.App, settings: EnvironmentSettings, env: cdk.Environment | None) -> NetworkStack:
    existing = settings.network.existing_vpc
    return NetworkStack(
        app,
        stack_name(settings.name, NETWORK),
        settings=settings,
        env=env,
        description=f"emr-lineage: endpoints in the existing VPC {existing.vpc_id}"
        if existing
        else "emr-lineage: VPC, endpoints and flow logs",
    )


def lineage_service_stack(
    app: cdk.App, settings: EnvironmentSettings, env: cdk.Environment | None, *, network: NetworkStack
) -> LineageServiceStack:
    return LineageServiceStack(
        app,
        stack_name(settings.name, LINEAGE_SERVICE),
        settings=settings,
        env=env,
        vpc=network.vpc,
        description="emr-lineage: Marquez lineage service (ECS Fargate + RDS PostgreSQL)",
    )


def data_lake_stack(app: cdk.App, settings: EnvironmentSettings, env: cdk.Environment | None) -> DataLakeStack:
    return DataLakeStack(
        app,
        stack_name(settings.name, DATA_LAKE),
        settings=settings,
        env=env,
        description="emr-lineage: data lake bucket, Glue databases, Lake Formation",
    )


def gateway_stack(
    app: cdk.App,
    settings: EnvironmentSettings,
    env: cdk.Environment | None,
    *,
    network: NetworkStack,
    lineage: LineageServiceStack,
    data_lake: DataLakeStack,
) -> GatewayStack:
    return GatewayStack(
        app,
        stack_name(settings.name, GATEWAY),
        settings=settings,
        env=env,
        vpc=network.vpc,
        listener=lineage.load_balancer.listener,
        load_balancer=lineage.load_balancer.load_balancer,
        marquez_api_target_group=lineage.load_balancer.api_target_group,
        access_logs_bucket=data_lake.access_logs_bucket,
        description="emr-lineage: lineage gateway (ALB POST /api/v1/lineage -> ingest, S3 archive, SQS FIFO, "
        "forwarder to Marquez)",
    )


def hub_link_stack(
    app: cdk.App, settings: EnvironmentSettings, env: cdk.Environment | None, *, network: NetworkStack
) -> HubLinkStack:
    return HubLinkStack(
        app,
        stack_name(settings.name, HUB_LINK),
        settings=settings,
        env=env,
        vpc=network.vpc,
        description="emr-lineage: a spoke's link to its hub (interface VPC endpoint, lineage clients' group, API key)",
    )


def emr_stack(
    app: cdk.App,
    settings: EnvironmentSettings,
    env: cdk.Environment | None,
    *,
    network: NetworkStack,
    lineage_clients: ec2.ISecurityGroup,
    lineage_url: str,
    data_lake: DataLakeStack,
    gateway: GatewayAccess | None,
    monitoring: MonitoringStack,
) -> EmrStack:
    emr = EmrStack(
        app,
        stack_name(settings.name, EMR),
        settings=settings,
        env=env,
        vpc=network.vpc,
        lineage_clients_security_group=lineage_clients,
        marquez_api_url=lineage_url,
        data_lake=DataLakeAccess(
            bucket=data_lake.bucket,
            key=data_lake.key,
            databases=data_lake.databases,
            existing_databases=data_lake.existing_databases,
        ),
        access_logs_bucket=data_lake.access_logs_bucket,
        alarm_topic=monitoring.topic,
        gateway=gateway,
        description="emr-lineage: EMR roles, security, launch spec and optional long-running cluster",
    )
    # Not implied by any reference: the Lake Formation grants need the Glue databases (passed by
    # name) and the deploy role's Lake Formation admin rights, both created by the data lake stack.
    emr.add_stack_dependency(data_lake, "Lake Formation grants need the Glue databases and Lake Formation admins")
    return emr


def gateway_access(gateway: GatewayStack) -> GatewayAccess:
    """What EMR uses of this environment's gateway: its API key (under the gateway's key) and its archive."""
    return GatewayAccess(
        api_key=gateway.api_key,
        api_key_kms_key_arn=gateway.key.key_arn,
        archive=GatewayArchive(bucket=gateway.archive_bucket, key=gateway.key),
    )


def monitoring_stack(
    app: cdk.App,
    settings: EnvironmentSettings,
    env: cdk.Environment | None,
    *,
    lineage: LineageServiceStack | None,
    gateway: GatewayStack | None,
) -> MonitoringStack:
    """Alarms on the lineage service and the gateway, when this environment runs them (a spoke does not)."""
    return MonitoringStack(
        app,
        stack_name(settings.name, MONITORING),
        settings=settings,
        env=env,
        service=MonitoredService(
            load_balancer=lineage.load_balancer.load_balancer,
            api_target_group=lineage.load_balancer.api_target_group,
            web_target_group=lineage.load_balancer.web_target_group,
            marquez_service=lineage.marquez.service,
            database=lineage.database.instance,
            marquez_log_group=lineage.marquez.log_group,
        )
        if lineage
        else None,
        gateway=MonitoredGateway(
            queue=gateway.queue,
            dead_letter_queue=gateway.dead_letter_queue,
            ingest_function=gateway.ingest_function,
            forward_function=gateway.forward_function,
            ingest_target_group=gateway.ingest_target_group,
        )
        if gateway
        else None,
        description="emr-lineage: alarms to one SNS topic, EMR failure events, lineage dashboard"
        if lineage
        else "emr-lineage: one SNS topic for EMR failure events",
    )


def lineage_service_stacks(
    app: cdk.App, settings: EnvironmentSettings, env: cdk.Environment | None, network: NetworkStack
) -> dict[str, cdk.Stack]:
    """An environment with its own lineage service (and, with the gateway, the hub of its spokes)."""
    lineage = lineage_service_stack(app, settings, env, network=network)
    data_lake = data_lake_stack(app, settings, env)
    # The gateway comes before EMR: the clusters' bootstrap reads its API key (an EMR -> gateway
    # reference); the gateway needs nothing from EMR.
    gateway = None
    if settings.gateway.enabled:
        gateway = gateway_stack(app, settings, env, network=network, lineage=lineage, data_lake=data_lake)
    # Before EMR: the serverless application's failed job runs notify its topic.
    monitoring = monitoring_stack(app, settings, env, lineage=lineage, gateway=gateway)
    emr = emr_stack(
        app,
        settings,
        env,
        network=network,
        lineage_clients=lineage.clients_security_group,
        lineage_url=lineage.api_url,
        data_lake=data_lake,
        gateway=gateway_access(gateway) if gateway else None,
        monitoring=monitoring,
    )
    stacks: dict[str, cdk.Stack] = {"lineage": lineage, "data_lake": data_lake, "emr": emr, "monitoring": monitoring}
    if gateway:
        stacks["gateway"] = gateway
    return stacks


def spoke_stacks(
    app: cdk.App, settings: EnvironmentSettings, env: cdk.Environment | None, network: NetworkStack
) -> dict[str, cdk.Stack]:
    """A spoke (``hub``): no lineage service and no gateway; EMR sends to the hub through the hub link."""
    data_lake = data_lake_stack(app, settings, env)
    hub_link = hub_link_stack(app, settings, env, network=network)
    monitoring = monitoring_stack(app, settings, env, lineage=None, gateway=None)
    emr = emr_stack(
        app,
        settings,
        env,
        network=network,
        lineage_clients=hub_link.clients_security_group,
        lineage_url=hub_link.lineage_url,
        data_lake=data_lake,
        gateway=GatewayAccess(
            api_key=hub_link.api_key,
            api_key_kms_key_arn=hub_link.api_key_kms_key_arn,
            api_key_region=hub_link.api_key_region,
        ),
        monitoring=monitoring,
    )
    return {"hub_link": hub_link, "data_lake": data_lake, "emr": emr, "monitoring": monitoring}


def build_app(app: cdk.App) -> dict[str, cdk.Stack]:
    """Add every stack of the selected environment to ``app``; return them by short name."""
    settings = settings_for(app)
    env = environment(settings)
    network = network_stack(app, settings, env)
    if settings.hub is not None:
        stacks = spoke_stacks(app, settings, env, network)
    else:
        stacks = lineage_service_stacks(app, settings, env, network)
    # In an existing VPC nothing refers to the network stack: its endpoints still come first.
    for name in ("lineage", "gateway", "hub_link", "emr"):
        if name in stacks and settings.network.existing_vpc:
            stacks[name].add_stack_dependency(network, "the VPC's endpoints come first")
    stacks = {"network": network, **stacks}

    for key, value in settings.tags.items():
        cdk.Tags.of(app).add(key, value)
    # cdk-nag AwsSolutions runs on every synth; an unacknowledged finding fails it.
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    return stacks


def main() -> int:
    app = cdk.App()
    try:
        build_app(app)
    except EmrLineageError as exc:  # the settings, or what the assets need (one line each)
        print(f"emr-lineage: {exc}", file=sys.stderr)
        return 2
    app.synth()
    return 0


if __name__ == "__main__":
    sys.exit(main())
