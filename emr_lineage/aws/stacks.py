"""The CloudFormation stacks of one environment and the SSM parameters the tools read from them.

The one place stack names are spelled: ``app.py`` names its stacks with :func:`stack_name` and
these parts, and the tools find them the same way; :func:`stack_parts` lists the parts ``app.py``
builds for the settings (tests/stacks checks the two agree). The parameter names themselves come
from :mod:`emr_lineage.aws.parameters`.
"""

from __future__ import annotations

from emr_lineage.aws import parameters
from emr_lineage.settings.model import EnvironmentSettings

NETWORK = "Network"
LINEAGE_SERVICE = "LineageService"
DATA_LAKE = "DataLake"
GATEWAY = "Gateway"
EMR = "Emr"
MONITORING = "Monitoring"
HUB_LINK = "HubLink"  # a spoke's (settings.hub): its endpoint to the hub, the clients' group, the API key secret


def stack_name(env: str, part: str) -> str:
    """``EmrLineage-<env>-<Part>``, e.g. ``EmrLineage-dev-Network``."""
    return f"EmrLineage-{env}-{part}"


def stack_parts(settings: EnvironmentSettings) -> tuple[str, ...]:
    """The stacks ``app.py`` builds for these settings that hold resources (what a deploy leaves), in deploy
    order. In an existing VPC without endpoints to make, the network stack holds none: `cdk deploy` may skip it. A
    spoke has no lineage service and no gateway: its hub link instead."""
    network = settings.network
    own_network = () if network.existing_vpc and not network.create_endpoints else (NETWORK,)
    if settings.hub is not None:
        return (*own_network, DATA_LAKE, HUB_LINK, EMR, MONITORING)
    gateway = (GATEWAY,) if settings.gateway.enabled else ()
    return (*own_network, LINEAGE_SERVICE, DATA_LAKE, *gateway, EMR, MONITORING)


def tool_parameters(settings: EnvironmentSettings) -> dict[str, str]:
    """SSM parameter name -> the stack part that publishes it, for every parameter a command reads."""
    env = settings.name
    names = {
        parameters.data_lake_bucket(env): DATA_LAKE,
        parameters.artifacts_bucket(env): EMR,
        parameters.emr_launch_spec(env): EMR,
    }
    if settings.hub is not None:  # the key's secret where the gateway's would be: launch and attach read it alike
        names |= {parameters.gateway_api_key_secret(env): HUB_LINK, parameters.hub_endpoint_id(env): HUB_LINK}
    else:
        names |= {
            parameters.marquez_api_url(env): LINEAGE_SERVICE,
            parameters.marquez_web_url(env): LINEAGE_SERVICE,
            parameters.marquez_database_id(env): LINEAGE_SERVICE,
        }
    if settings.gateway.enabled:
        names |= {
            parameters.gateway_archive_bucket(env): GATEWAY,
            parameters.gateway_queue_url(env): GATEWAY,
            parameters.gateway_dead_letter_queue_url(env): GATEWAY,
            parameters.gateway_api_key_secret(env): GATEWAY,
            parameters.gateway_athena_workgroup(env): GATEWAY,
            parameters.gateway_archive_database(env): GATEWAY,
            parameters.gateway_athena_results(env): GATEWAY,
            **{parameters.gateway_spoke_key_secret(env, a): GATEWAY for a in settings.gateway.spoke_accounts},
        }
    if settings.emr_serverless.enabled:
        names |= {
            parameters.serverless_application_id(env): EMR,
            parameters.serverless_job_role_arn(env): EMR,
        }
    return names
