"""``doctor``: every prerequisite of a working environment, checked in the order a first deploy meets
them, each with its fix.

A check that cannot run because an earlier one failed (no credentials, a missing SSM parameter)
is "skipped (needs ...)"; a check the settings make pointless (TLS without in-transit encryption,
the gateway when it is off) is "not needed". The report passes when no check failed.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsError
from emr_lineage.aws.stacks import LINEAGE_SERVICE, stack_name, stack_parts
from emr_lineage.http import DEFAULT_TIMEOUT
from emr_lineage.operations import checks, gateway_key, hub, images, lake, network, probes, trusted_ca
from emr_lineage.operations.checks import CheckResult, DoctorClients, Status, not_needed, skipped
from emr_lineage.settings.images import EcrPullThroughCache
from emr_lineage.settings.model import EnvironmentSettings

Connect = Callable[[EnvironmentSettings, float], DoctorClients]
AWS_NEEDS = "working AWS credentials and region"


@dataclass(frozen=True)
class DoctorOptions:
    marquez_url: str | None = None  # instead of the SSM parameter (a port-forward to the internal ALB)
    gateway_url: str | None = None  # default: the Marquez URL (the same load balancer)
    timeout: float = DEFAULT_TIMEOUT  # seconds, for each AWS call and HTTP request
    clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)  # "now": certificate expiry, the API key's age


@dataclass(frozen=True)
class Report:
    env: str
    results: tuple[CheckResult, ...] = field(default_factory=tuple)

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.status is Status.FAIL)

    @property
    def passed(self) -> bool:
        return not self.failed

    def counts(self) -> dict[str, int]:
        return {status.value: sum(1 for r in self.results if r.status is status) for status in Status}

    def as_json(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "passed": self.passed,
            "counts": self.counts(),
            "checks": [
                {"check": r.check, "title": r.title, "status": r.status.value, "detail": r.detail, "fix": r.fix}
                for r in self.results
            ],
        }


def run_doctor(
    settings: EnvironmentSettings, options: DoctorOptions, connect: Connect = DoctorClients.for_settings
) -> Report:
    env = settings.name
    results: list[CheckResult] = []
    clients, account = _credentials(settings, options, connect, results)

    if clients and account:
        results.append(checks.cdk_bootstrap(clients, account))
        results.append(checks.emr_cleanup_role(clients))
    else:
        results.append(skipped("cdk-bootstrap", f"CDK bootstrap ({checks.CDK_TOOLKIT_STACK} stack)", AWS_NEEDS))
        results.append(skipped("emr-cleanup-role", "EMR cleanup service-linked role", AWS_NEEDS))
    results.append(_subnet_tags(settings, clients if account else None))
    results.append(_image_secret(settings, clients if account else None))
    results.append(_existing_lake(settings, clients if account else None))

    for part in stack_parts(settings):
        name = stack_name(env, part)
        results.append(
            checks.stack(clients, settings, part)
            if clients and account
            else skipped(f"stack:{name}", f"stack {name}", AWS_NEEDS)
        )
    results += _image_rows(settings, clients if account else None)
    values: dict[str, str] = {}
    if clients and account:
        row, values = checks.tool_parameter_values(clients, settings)
        results.append(row)
    else:
        results.append(skipped("ssm-parameters", "SSM parameters the commands read", AWS_NEEDS))
    results.append(_hub_endpoint(settings, values, clients if account else None))
    results.append(_database_check(settings, values, clients if account else None))

    pin = checks.listener_pin(settings)
    results.append(pin)
    bucket = values.get(parameters.artifacts_bucket(env))
    bucket_needs = AWS_NEEDS if not (clients and account) else f"SSM parameter {parameters.artifacts_bucket(env)}"
    if pin.status is not Status.PASS:
        results.append(skipped("listener-jar", "listener jar staged", "the listener pin"))
    elif bucket and clients:
        results.append(checks.listener_jar(clients, settings, bucket))
    else:
        results.append(skipped("listener-jar", "listener jar staged", bucket_needs))

    tls_title = "TLS certificate zip (in-transit encryption)"
    if not settings.emr.in_transit_encryption:
        results.append(not_needed("tls-certificates", tls_title, "emr.in_transit_encryption is false"))
    elif bucket and clients:
        results.append(checks.tls_certificates(clients, settings, bucket, options.clock()))
    else:
        results.append(skipped("tls-certificates", tls_title, bucket_needs))

    results += _http_checks(settings, options, values, reachable_aws=bool(clients and account))
    results.append(_trusted_ca(settings, options, values, clients if account else None))
    results += _gateway_aws_checks(settings, values, clients if account else None, options.clock())
    results.append(_serverless_check(settings, values, clients if account else None))
    return Report(env, tuple(results))


def _subnet_tags(settings: EnvironmentSettings, clients: DoctorClients | None) -> CheckResult:
    existing = settings.network.existing_vpc
    if existing is None:
        return not_needed(
            network.SUBNET_TAGS_CHECK, network.SUBNET_TAGS_TITLE, "the network stack tags the subnets it creates"
        )
    if clients is None:
        return skipped(network.SUBNET_TAGS_CHECK, network.SUBNET_TAGS_TITLE, AWS_NEEDS)
    return network.emr_subnet_tags(clients, existing)


def _database_check(
    settings: EnvironmentSettings, values: dict[str, str], clients: DoctorClients | None
) -> CheckResult:
    """Marquez's database, by the identifier the lineage stack published."""
    parameter = parameters.marquez_database_id(settings.name)
    if settings.hub is not None:
        return not_needed(checks.DATABASE_CHECK, checks.DATABASE_TITLE, NO_MARQUEZ)
    if clients is None:
        return skipped(checks.DATABASE_CHECK, checks.DATABASE_TITLE, AWS_NEEDS)
    if not values.get(parameter):
        return skipped(checks.DATABASE_CHECK, checks.DATABASE_TITLE, f"SSM parameter {parameter}")
    return checks.database(clients, settings, values[parameter])


DIRECT_IMAGES = "marquez.image_registry is direct"
# A spoke (hub): Marquez and the gateway are the hub's.
NO_MARQUEZ = "a spoke (hub) runs no Marquez of its own"
HUBS_GATEWAY = "a spoke (hub) sends to the hub's gateway"


def _hub_endpoint(settings: EnvironmentSettings, values: dict[str, str], clients: DoctorClients | None) -> CheckResult:
    """A spoke's endpoint to its hub, by the id the HubLink stack published."""
    parameter = parameters.hub_endpoint_id(settings.name)
    if settings.hub is None:
        return not_needed(hub.CHECK, hub.TITLE, "no hub: this environment runs its own lineage service")
    if clients is None:
        return skipped(hub.CHECK, hub.TITLE, AWS_NEEDS)
    if not values.get(parameter):
        return skipped(hub.CHECK, hub.TITLE, f"SSM parameter {parameter}")
    return hub.hub_endpoint(clients, settings, values[parameter])


def _image_secret(settings: EnvironmentSettings, clients: DoctorClients | None) -> CheckResult:
    """The pull-through cache's credentials secret, which must exist before the deploy creates the rule."""
    registry = settings.marquez.image_registry
    if settings.hub is not None:
        return not_needed(images.SECRET_CHECK, images.SECRET_TITLE, NO_MARQUEZ)
    if not isinstance(registry, EcrPullThroughCache):
        return not_needed(images.SECRET_CHECK, images.SECRET_TITLE, DIRECT_IMAGES)
    if clients is None:
        return skipped(images.SECRET_CHECK, images.SECRET_TITLE, AWS_NEEDS)
    return images.credentials_secret(clients, registry)


def _existing_lake(settings: EnvironmentSettings, clients: DoctorClients | None) -> CheckResult:
    """The existing bucket and databases the stacks import, which must be right before the deploy."""
    if not lake.configured(settings):
        return not_needed(lake.CHECK, lake.TITLE, lake.NOT_CONFIGURED)
    if clients is None:
        return skipped(lake.CHECK, lake.TITLE, AWS_NEEDS)
    return lake.existing_lake(clients, settings)


def _image_rows(settings: EnvironmentSettings, clients: DoctorClients | None) -> list[CheckResult]:
    """The cache rule the LineageService stack creates, then where each Marquez image is pulled from."""
    registry = settings.marquez.image_registry
    if settings.hub is not None:
        return [
            not_needed(images.RULE_CHECK, images.RULE_TITLE, NO_MARQUEZ),
            not_needed(images.IMAGES_CHECK, images.IMAGES_TITLE, NO_MARQUEZ),
        ]
    if not isinstance(registry, EcrPullThroughCache):
        rule = not_needed(images.RULE_CHECK, images.RULE_TITLE, DIRECT_IMAGES)
    elif clients is None:
        rule = skipped(images.RULE_CHECK, images.RULE_TITLE, AWS_NEEDS)
    else:
        rule = images.cache_rule(clients, settings, registry)
    if clients is None and images.needs_aws(settings):
        return [rule, skipped(images.IMAGES_CHECK, images.IMAGES_TITLE, AWS_NEEDS)]
    return [rule, images.marquez_images(clients, settings)]


def _serverless_check(
    settings: EnvironmentSettings, values: dict[str, str], clients: DoctorClients | None
) -> CheckResult:
    """The EMR Serverless application, when ``emr_serverless.enabled``."""
    check, title = checks.SERVERLESS_CHECK, checks.SERVERLESS_TITLE
    parameter = parameters.serverless_application_id(settings.name)
    if not settings.emr_serverless.enabled:
        return not_needed(check, title, "emr_serverless.enabled is false")
    if clients is None:
        return skipped(check, title, AWS_NEEDS)
    if not values.get(parameter):
        return skipped(check, title, f"SSM parameter {parameter}")
    return checks.serverless_application(clients, settings, values[parameter])


def _credentials(
    settings: EnvironmentSettings, options: DoctorOptions, connect: Connect, results: list[CheckResult]
) -> tuple[DoctorClients | None, str | None]:
    try:
        clients = connect(settings, options.timeout)
    except AwsError as exc:  # no region, a broken profile: the first check fails, the rest are skipped
        results.append(
            CheckResult(
                "credentials",
                "AWS credentials and region",
                Status.FAIL,
                checks.error_of(exc),
                "set what the problem names: a region (AWS_REGION, or region in cdk.json), credentials "
                "(AWS_PROFILE, aws configure), an endpoint URL with its scheme",
            )
        )
        return None, None
    row, account = checks.credentials(settings, clients)
    results.append(row)
    return clients, account


def _trusted_ca(
    settings: EnvironmentSettings, options: DoctorOptions, values: dict[str, str], clients: DoctorClients | None
) -> CheckResult:
    """The load balancer's certificate chains to ``openlineage.trusted_ca`` (at the URL the gateway check
    uses: where the listener posts)."""
    check, title = trusted_ca.CHECK, trusted_ca.TITLE
    configured = settings.openlineage.trusted_ca
    parameter = parameters.marquez_api_url(settings.name)
    url = options.gateway_url or options.marquez_url or values.get(parameter)
    if configured is None:
        return not_needed(check, title, "no openlineage.trusted_ca (Java's own trust)")
    if clients is None:
        return skipped(check, title, AWS_NEEDS)
    if not url:
        return skipped(check, title, f"SSM parameter {parameter} or --marquez URL")
    if not url.startswith("https://"):
        return skipped(check, title, f"an https:// URL of the load balancer, not {url}")
    return trusted_ca.trusted_ca_chain(clients, configured, url, timeout=options.timeout)


def _gateway_aws_checks(
    settings: EnvironmentSettings, values: dict[str, str], clients: DoctorClients | None, now: dt.datetime
) -> list[CheckResult]:
    """The API key secret (and how to rotate it), the spoke accounts' ones, then the dead-letter queue;
    ``clients`` None: no working AWS."""
    env = settings.name
    secret = parameters.gateway_api_key_secret(env)
    dlq = parameters.gateway_dead_letter_queue_url(env)
    rows: list[CheckResult] = []
    for check, title, parameter, run in (
        (
            gateway_key.CHECK,
            gateway_key.TITLE,
            secret,
            lambda c, arn: gateway_key.api_key_secret(
                c, arn, env, now, serverless=settings.emr_serverless.enabled, spoke=settings.hub is not None
            ),
        ),
        ("dead-letter-queue", "gateway dead-letter queue empty", dlq, checks.dead_letter_queue),
    ):
        value = values.get(parameter)
        if settings.hub is not None and parameter == dlq:
            rows.append(not_needed(check, title, HUBS_GATEWAY))
        elif not settings.sends_api_key:
            rows.append(not_needed(check, title, "gateway.enabled is false"))
        elif clients is None:
            rows.append(skipped(check, title, AWS_NEEDS))
        elif not value:
            rows.append(skipped(check, title, f"SSM parameter {parameter}"))
        else:
            rows.append(run(clients, value))
    rows.insert(1, _spoke_keys_check(settings, values, clients, now))
    return rows


def _spoke_keys_check(
    settings: EnvironmentSettings, values: dict[str, str], clients: DoctorClients | None, now: dt.datetime
) -> CheckResult:
    """Each spoke account's key secret (its ARN from SSM), where gateway.spoke_accounts lists any."""
    check, title = gateway_key.SPOKES_CHECK, gateway_key.SPOKES_TITLE
    names = {a: parameters.gateway_spoke_key_secret(settings.name, a) for a in settings.gateway.spoke_accounts}
    if settings.hub is not None:
        return not_needed(check, title, HUBS_GATEWAY)
    if not settings.gateway.enabled:
        return not_needed(check, title, "gateway.enabled is false")
    if not names:
        return not_needed(check, title, "no gateway.spoke_accounts")
    if clients is None:
        return skipped(check, title, AWS_NEEDS)
    missing = [name for name in names.values() if not values.get(name)]
    if missing:
        return skipped(check, title, f"SSM parameter {', '.join(missing)}")
    secrets = {account: values[name] for account, name in names.items()}
    return gateway_key.spoke_key_secrets(clients, secrets, settings.name, now)


def _http_checks(
    settings: EnvironmentSettings, options: DoctorOptions, values: dict[str, str], *, reachable_aws: bool
) -> list[CheckResult]:
    env = settings.name
    if settings.hub is not None:
        return _spoke_http_checks(settings, options)
    api_parameter = parameters.marquez_api_url(env)
    marquez_url = options.marquez_url or values.get(api_parameter)
    from_parameter = options.marquez_url is None
    needs = (
        f"--marquez URL, or AWS access to read SSM parameter {api_parameter} ({stack_name(env, LINEAGE_SERVICE)})"
        if not reachable_aws
        else f"SSM parameter {api_parameter} ({stack_name(env, LINEAGE_SERVICE)}) or --marquez URL"
    )
    rows = [
        probes.marquez(marquez_url, timeout=options.timeout, from_parameter=from_parameter)
        if marquez_url
        else skipped("marquez", "Marquez API reachable", needs)
    ]
    title = "lineage gateway reachable"
    gateway_url = options.gateway_url or marquez_url
    if not settings.gateway.enabled:
        rows.append(not_needed("gateway", title, "gateway.enabled is false"))
    elif gateway_url:
        from_parameter = options.gateway_url is None and options.marquez_url is None
        rows.append(probes.gateway(gateway_url, env=env, timeout=options.timeout, from_parameter=from_parameter))
    else:
        rows.append(skipped("gateway", title, needs))
    return rows


def _spoke_http_checks(settings: EnvironmentSettings, options: DoctorOptions) -> list[CheckResult]:
    """A spoke has no Marquez; the hub's gateway answers at the hub's URL, from inside the spoke's VPC only."""
    title = "lineage gateway reachable"
    rows = [not_needed("marquez", "Marquez API reachable", NO_MARQUEZ)]
    if options.gateway_url:
        rows.append(
            probes.gateway(options.gateway_url, env=settings.name, timeout=options.timeout, from_parameter=False)
        )
    else:
        needs = "--gateway URL: the hub's, as Spark reaches it (the HubLink stack's HubLineageUrl output)"
        rows.append(skipped("gateway", title, needs))
    return rows
