"""The doctor's checks of an AWS account: each answers pass or fail, says what it saw and, when it
fails, the command that fixes it. The order and the "skipped (needs ...)" logic live in
:mod:`emr_lineage.operations.doctor`; the HTTP checks in :mod:`emr_lineage.operations.probes`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.clients import AwsError, aws_message, client_maker, regional_client_maker
from emr_lineage.aws.stacks import stack_name, tool_parameters
from emr_lineage.aws.upload import SHA256_METADATA_KEY, head_object
from emr_lineage.listener.artifact import listener_s3_key
from emr_lineage.operations.tls import TlsError, certificates_uri, read_certificate_zip, staged_zip_data
from emr_lineage.settings.model import EnvironmentSettings

CDK_TOOLKIT_STACK = "CDKToolkit"
# The bootstrap version aws-cdk-lib's DefaultStackSynthesizer requires of a deployment
# (MIN_BOOTSTRAP_STACK_VERSION in core/lib/stack-synthesizers/default-synthesizer.js); every
# synthesized template's CheckBootstrapVersion rule enforces it.
MIN_BOOTSTRAP_VERSION = 6
# EMR's service-linked role for cleaning up EC2 resources when its service role cannot
# (https://docs.aws.amazon.com/emr/latest/ManagementGuide/using-service-linked-roles-cleanup.html).
EMR_CLEANUP_ROLE = "AWSServiceRoleForEMRCleanup"
EMR_SERVICE_PRINCIPAL = "elasticmapreduce.amazonaws.com"
SERVICE_ROLE_PATH = "/aws-service-role/"
# The states of a stack whose last operation succeeded. Every other one fails: in progress, failed,
# or rolled back (ROLLBACK_COMPLETE: a failed first create, nothing usable; UPDATE_ROLLBACK_COMPLETE
# and IMPORT_ROLLBACK_COMPLETE: the last deploy failed, the stack runs the template before it).
WORKING_STACK_STATES = frozenset({"CREATE_COMPLETE", "UPDATE_COMPLETE", "IMPORT_COMPLETE"})


class Status(StrEnum):
    PASS = "pass"
    # Works, with a risk worth knowing (e.g. anonymous Docker Hub pulls): the report still passes.
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


@dataclass(frozen=True)
class CheckResult:
    """One row of the doctor's table."""

    check: str  # a stable id, e.g. "cdk-bootstrap" or "stack:EmrLineage-dev-Network"
    title: str  # what is checked, for people
    status: Status
    detail: str
    fix: str = ""


class _Client:
    """An attribute of :class:`DoctorClients`: the client of the service it is named after, made on first use."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.service = name.replace("_", "-")

    def __get__(self, clients: DoctorClients | None, owner: type | None = None) -> Any:
        return self if clients is None else clients.of(self.service)


class DoctorClients:
    """The AWS clients the checks use: one session, the environment's region, bounded timeouts. Each is
    made when a check first calls its service, so a run makes only those its settings need (no ECR
    client for images pulled from Docker Hub, no SQS one without the gateway)."""

    sts = _Client()
    cloudformation = _Client()
    iam = _Client()
    s3 = _Client()
    ssm = _Client()
    sqs = _Client()
    secretsmanager = _Client()
    emr_serverless = _Client()
    rds = _Client()
    ecr = _Client()
    ec2 = _Client()
    glue = _Client()
    lakeformation = _Client()
    kms = _Client()

    def __init__(self, make: Callable[[str], Any], make_in: Callable[[str, str], Any] | None = None) -> None:
        self._make, self._make_in = make, make_in
        self._made: dict[str, Any] = {}

    def in_region(self, service: str) -> Callable[[str], Any]:
        """What makes the client of ``service`` in a region of its own (an AWS Private CA's)."""
        return lambda region: self._make_in(service, region) if self._make_in else self.of(service)

    def of(self, service: str) -> Any:
        """The client of ``service`` (a boto3 name, e.g. ``emr-serverless``), made once."""
        if service not in self._made:
            self._made[service] = self._make(service)
        return self._made[service]

    @property
    def region(self) -> str:
        return self.sts.meta.region_name

    @classmethod
    def for_settings(cls, settings: EnvironmentSettings, timeout: float) -> DoctorClients:
        # The region is resolved as every other command resolves it (aws_session: cdk.json, AWS_REGION, boto3).
        config = Config(connect_timeout=timeout, read_timeout=timeout, retries={"mode": "standard", "max_attempts": 2})
        clients = cls(
            client_maker(settings, config),
            lambda service, region: regional_client_maker(settings, service, config)(region),
        )
        clients.of("sts")  # made now: a region botocore cannot resolve fails here, as the credentials row
        return clients


def aws_call(call: Callable[[], Any]) -> tuple[Any, str | None]:
    """``(result, None)``, or ``(None, the AWS error on one line)``."""
    try:
        return call(), None
    except (ClientError, BotoCoreError) as exc:
        return None, aws_message(exc)


# --- account -----------------------------------------------------------------------------------


def credentials(settings: EnvironmentSettings, clients: DoctorClients) -> tuple[CheckResult, str | None]:
    """Who the credentials are, in which region; and the account (None when they do not work)."""
    title = "AWS credentials and region"
    identity, problem = aws_call(clients.sts.get_caller_identity)
    if problem:
        fix = "configure credentials (aws configure, aws sso login, or AWS_PROFILE=NAME)"
        return CheckResult("credentials", title, Status.FAIL, f"STS GetCallerIdentity: {problem}", fix), None
    account = identity["Account"]
    detail = f"account {account} as {identity['Arn']}, region {clients.region}"
    if settings.account and settings.account != account:
        fix = (
            f"use credentials of account {settings.account}, or correct "
            f"emr-lineage.environments.{settings.name}.account in cdk.json"
        )
        return CheckResult("credentials", title, Status.FAIL, f"{detail}; cdk.json says {settings.account}", fix), None
    return CheckResult("credentials", title, Status.PASS, detail), account


def cdk_bootstrap(clients: DoctorClients, account: str) -> CheckResult:
    title = f"CDK bootstrap ({CDK_TOOLKIT_STACK} stack)"
    fix = f"npx cdk bootstrap aws://{account}/{clients.region}"
    stacks, problem = aws_call(lambda: clients.cloudformation.describe_stacks(StackName=CDK_TOOLKIT_STACK)["Stacks"])
    if problem:
        missing = "does not exist" in problem
        detail = f"no {CDK_TOOLKIT_STACK} stack in {account}/{clients.region}" if missing else problem
        return CheckResult("cdk-bootstrap", title, Status.FAIL, detail, fix)
    stack = stacks[0]
    state = stack["StackStatus"]
    outputs = {o["OutputKey"]: o.get("OutputValue") for o in stack.get("Outputs", [])}
    version = outputs.get("BootstrapVersion")
    if state not in WORKING_STACK_STATES:
        return CheckResult("cdk-bootstrap", title, Status.FAIL, f"{CDK_TOOLKIT_STACK} is {state}", fix)
    if not (version or "").isdigit() or int(version) < MIN_BOOTSTRAP_VERSION:
        detail = f"bootstrap version {version or 'unknown'}; deployments need {MIN_BOOTSTRAP_VERSION} or later"
        return CheckResult("cdk-bootstrap", title, Status.FAIL, detail, fix)
    return CheckResult("cdk-bootstrap", title, Status.PASS, f"bootstrap version {version} ({state})")


def emr_cleanup_role(clients: DoctorClients) -> CheckResult:
    title = "EMR cleanup service-linked role"
    fix = f"aws iam create-service-linked-role --aws-service-name {EMR_SERVICE_PRINCIPAL}"
    role, problem = aws_call(lambda: clients.iam.get_role(RoleName=EMR_CLEANUP_ROLE)["Role"])
    if problem:
        detail = f"no role {EMR_CLEANUP_ROLE}" if problem.startswith("NoSuchEntity") else problem
        return CheckResult("emr-cleanup-role", title, Status.FAIL, detail, fix)
    if not role.get("Path", "").startswith(SERVICE_ROLE_PATH):
        detail = f"{EMR_CLEANUP_ROLE} has path {role.get('Path')}, not a service-linked role's {SERVICE_ROLE_PATH}"
        return CheckResult("emr-cleanup-role", title, Status.FAIL, detail, f"delete that role, then {fix}")
    return CheckResult("emr-cleanup-role", title, Status.PASS, f"{role['Arn']}")


# --- the environment's stacks and what they publish ---------------------------------------------


def stack(clients: DoctorClients, settings: EnvironmentSettings, part: str) -> CheckResult:
    name = stack_name(settings.name, part)
    check, title = f"stack:{name}", f"stack {name}"
    deploy = f"make deploy ENV={settings.name}"
    found, problem = aws_call(lambda: clients.cloudformation.describe_stacks(StackName=name)["Stacks"])
    if problem:
        detail = "not deployed" if "does not exist" in problem else problem
        return CheckResult(check, title, Status.FAIL, detail, deploy)
    state = found[0]["StackStatus"]
    outputs = len(found[0].get("Outputs", []))
    detail = f"{state}, {outputs} output{'s' if outputs != 1 else ''}"
    verdict = stack_state_problem(name, state, deploy)
    if verdict is None:
        return CheckResult(check, title, Status.PASS, detail)
    why, fix = verdict
    return CheckResult(check, title, Status.FAIL, f"{detail} ({why})" if why else detail, fix)


def stack_state_problem(name: str, state: str, deploy: str) -> tuple[str, str] | None:
    """None for a stack whose last operation succeeded (:data:`WORKING_STACK_STATES`); otherwise what
    the state means (may be empty) and the fix, ``deploy`` being the command that deploys it."""
    if state in WORKING_STACK_STATES:
        return None
    events = f"read why in its events (aws cloudformation describe-stack-events --stack-name {name})"
    if state.endswith("_IN_PROGRESS"):
        return "", "wait for the stack operation to end, then run doctor again"
    if state == "ROLLBACK_COMPLETE":
        return (
            "its first create failed",
            f"{events}, fix it, aws cloudformation delete-stack --stack-name {name}, then {deploy}",
        )
    if state == "UPDATE_ROLLBACK_FAILED":
        fix = f"{events}, fix it, aws cloudformation continue-update-rollback --stack-name {name}, then {deploy}"
        return "an update failed and so did its rollback", fix
    if state in ("UPDATE_ROLLBACK_COMPLETE", "IMPORT_ROLLBACK_COMPLETE"):
        return (
            "its last deploy failed and was rolled back: it runs the template before it",
            f"{events}, fix it, then {deploy}",
        )
    if state.endswith("_FAILED"):
        return "its last operation failed", f"{events}, fix it, then {deploy}"
    return "", f"{events}, then {deploy}"


def tool_parameter_values(clients: DoctorClients, settings: EnvironmentSettings) -> tuple[CheckResult, dict[str, str]]:
    """Read every SSM parameter the commands need; the row names the missing ones and their stacks."""
    wanted = tool_parameters(settings)
    title = "SSM parameters the commands read"
    names = list(wanted)
    values: dict[str, str] = {}
    missing: list[str] = []
    for start in range(0, len(names), 10):  # GetParameters takes at most 10 names
        batch = names[start : start + 10]
        reply, problem = aws_call(lambda batch=batch: clients.ssm.get_parameters(Names=batch))
        if problem:
            return CheckResult("ssm-parameters", title, Status.FAIL, f"SSM GetParameters: {problem}"), values
        values |= {p["Name"]: p["Value"] for p in reply["Parameters"]}
        missing += reply.get("InvalidParameters", [])
    if missing:
        by_stack = sorted({stack_name(settings.name, wanted[name]) for name in missing})
        detail = f"{len(missing)} of {len(names)} missing: {', '.join(sorted(missing))}"
        fix = f"deploy {', '.join(by_stack)} (make deploy ENV={settings.name})"
        return CheckResult("ssm-parameters", title, Status.FAIL, detail, fix), values
    return CheckResult("ssm-parameters", title, Status.PASS, f"all {len(names)} present"), values


# --- artifacts ---------------------------------------------------------------------------------


def listener_pin(settings: EnvironmentSettings) -> CheckResult:
    title = "listener jar pinned (cdk.json)"
    artifact = settings.versions.openlineage_spark
    if artifact.sha256 is None:
        detail = f"versions.openlineage_spark.sha256 is null for {artifact.file_name}"
        return CheckResult(
            "listener-pin", title, Status.FAIL, detail, f"emr-lineage listener stage --env {settings.name} --pin"
        )
    return CheckResult("listener-pin", title, Status.PASS, f"{artifact.file_name} sha256 {artifact.sha256[:12]}…")


def listener_jar(clients: DoctorClients, settings: EnvironmentSettings, bucket: str) -> CheckResult:
    title = "listener jar staged"
    artifact = settings.versions.openlineage_spark
    uri = f"s3://{bucket}/{listener_s3_key(artifact)}"
    fix = f"emr-lineage listener stage --env {settings.name}"
    try:
        head = head_object(clients.s3, bucket, listener_s3_key(artifact))
    except AwsError as exc:
        return CheckResult("listener-jar", title, Status.FAIL, str(exc), fix)
    if head is None:
        return CheckResult("listener-jar", title, Status.FAIL, f"nothing at {uri}", fix)
    staged = head.get("Metadata", {}).get(SHA256_METADATA_KEY)
    if staged != artifact.sha256:
        detail = f"{uri} carries sha256 {staged or 'none'}, the pin is {artifact.sha256}"
        return CheckResult("listener-jar", title, Status.FAIL, detail, fix)
    return CheckResult("listener-jar", title, Status.PASS, f"{uri} matches the pin")


def tls_certificates(
    clients: DoctorClients, settings: EnvironmentSettings, bucket: str, now: dt.datetime
) -> CheckResult:
    """The staged zip is in EMR's layout and its certificate is good for more than RENEW_BEFORE at ``now``."""
    title = "TLS certificate zip (in-transit encryption)"
    fix = f"emr-lineage tls --env {settings.name}"
    replace = f"{fix} --replace"
    uri = certificates_uri(bucket)
    try:
        data = staged_zip_data(clients.s3, bucket)
    except AwsError as exc:
        return CheckResult("tls-certificates", title, Status.FAIL, str(exc), fix)
    except TlsError as exc:
        return CheckResult("tls-certificates", title, Status.FAIL, str(exc), replace)
    if data is None:
        return CheckResult("tls-certificates", title, Status.FAIL, f"nothing at {uri}; clusters cannot start", fix)
    try:
        certificate = read_certificate_zip(data)
    except TlsError as exc:
        return CheckResult("tls-certificates", title, Status.FAIL, f"{uri}: {exc}", replace)
    problem = certificate.validity_problem(now)
    if problem:
        detail = f"{uri}: {certificate.common_name} {problem}"
        return CheckResult("tls-certificates", title, Status.FAIL, detail, replace)
    days = (certificate.not_after - now).days
    detail = f"{uri}: {certificate.common_name}, valid until {certificate.not_after:%Y-%m-%d} ({days} days)"
    return CheckResult("tls-certificates", title, Status.PASS, detail)


def dead_letter_queue(clients: DoctorClients, queue_url: str) -> CheckResult:
    title = "gateway dead-letter queue empty"
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "QueueArn"]
    reply, problem = aws_call(lambda: clients.sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=names))
    if problem:
        return CheckResult("dead-letter-queue", title, Status.FAIL, f"{queue_url}: {problem}")
    attributes = reply["Attributes"]
    count = sum(int(attributes.get(name, 0)) for name in names[:2])
    arn = attributes.get("QueueArn", queue_url)
    if count:
        fix = (
            f"once Marquez is healthy: aws sqs start-message-move-task --source-arn {arn} "
            "(back to the queue; or emr-lineage gateway replay, docs/gateway.md)"
        )
        return CheckResult("dead-letter-queue", title, Status.FAIL, f"{count} message(s) in {arn}", fix)
    return CheckResult("dead-letter-queue", title, Status.PASS, f"{arn} is empty")


# An application takes job runs in these states: a created or stopped one starts itself on the
# first run (auto-start, https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/applications.html).
SERVERLESS_USABLE_STATES = frozenset({"CREATED", "STARTING", "STARTED", "STOPPING", "STOPPED"})
SERVERLESS_CHECK, SERVERLESS_TITLE = "emr-serverless", "EMR Serverless application"


def serverless_application(clients: DoctorClients, settings: EnvironmentSettings, application_id: str) -> CheckResult:
    """The application exists, takes job runs, and runs the release the clusters run."""
    reply, problem = aws_call(lambda: clients.emr_serverless.get_application(applicationId=application_id))
    deploy = f"redeploy the EMR stack: make deploy ENV={settings.name}"
    if problem:
        return CheckResult(SERVERLESS_CHECK, SERVERLESS_TITLE, Status.FAIL, f"{application_id}: {problem}", deploy)
    application = reply["application"]
    state, release = application.get("state", "?"), application.get("releaseLabel", "?")
    seen = f"{application_id} ({application.get('name', '?')}): {state}, {release}"
    if state not in SERVERLESS_USABLE_STATES:
        return CheckResult(SERVERLESS_CHECK, SERVERLESS_TITLE, Status.FAIL, f"{seen}: takes no job runs", deploy)
    if release != settings.emr.release_label:
        detail = f"{seen}, but emr.release_label is {settings.emr.release_label}"
        return CheckResult(SERVERLESS_CHECK, SERVERLESS_TITLE, Status.FAIL, detail, deploy)
    return CheckResult(SERVERLESS_CHECK, SERVERLESS_TITLE, Status.PASS, seen)


DATABASE_CHECK, DATABASE_TITLE = "database", "Marquez database engine"
# The RDS instance states in which Marquez cannot use the database (the rest pass or pass soon:
# backing-up, modifying, upgrading...), https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/accessing-monitoring.html
DATABASE_DOWN_STATES = frozenset(
    {
        "failed", "inaccessible-encryption-credentials", "incompatible-network", "incompatible-option-group",
        "incompatible-parameters", "incompatible-restore", "restore-error", "stopped", "stopping", "storage-full",
    }
)  # fmt: skip


def database(clients: DoctorClients, settings: EnvironmentSettings, identifier: str) -> CheckResult:
    """The engine version Marquez's database (RDS instance ``identifier``) runs, against
    ``database.postgres_version``, and its state."""
    reply, problem = aws_call(lambda: clients.rds.describe_db_instances(DBInstanceIdentifier=identifier))
    deploy = f"deploy the lineage service: make deploy ENV={settings.name}"
    if problem:
        return CheckResult(DATABASE_CHECK, DATABASE_TITLE, Status.FAIL, f"{identifier}: {problem}", deploy)
    instance = reply["DBInstances"][0]
    version, state = instance.get("EngineVersion", "?"), instance.get("DBInstanceStatus", "?")
    seen = f"{identifier}: {instance.get('Engine', '?')} {version}, {state}"
    if state in DATABASE_DOWN_STATES:
        fix = (
            "see the instance's events: aws rds describe-events --source-type db-instance --source-identifier "
            + identifier
        )
        return CheckResult(DATABASE_CHECK, DATABASE_TITLE, Status.FAIL, seen, fix)
    wanted, running = settings.database.postgres_version, version.split(".")[0]
    if running == wanted:
        return CheckResult(DATABASE_CHECK, DATABASE_TITLE, Status.PASS, seen)
    detail = f"{seen}, but database.postgres_version is {wanted}"
    if running.isdigit() and int(running) > int(wanted):  # RDS has no downgrade: the settings follow
        fix = f"set database.postgres_version to {running} in cdk.json"
    else:
        fix = f"upgrade it (docs/operations.md, Upgrading PostgreSQL): make deploy ENV={settings.name}"
    return CheckResult(DATABASE_CHECK, DATABASE_TITLE, Status.FAIL, detail, fix)


def skipped(check: str, title: str, needs: str) -> CheckResult:
    return CheckResult(check, title, Status.SKIP, f"skipped (needs {needs})")


def not_needed(check: str, title: str, why: str) -> CheckResult:
    return CheckResult(check, title, Status.SKIP, f"not needed: {why}")


def error_of(exc: Exception) -> str:
    return " ".join(str(exc).split())
