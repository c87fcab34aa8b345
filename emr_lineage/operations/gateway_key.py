"""The doctor's checks of the lineage gateway's API key secret and of each spoke account's
(``gateway.spoke_accounts``), and how to rotate a key without loss.

The ingest Lambda (:func:`emr_lineage.gateway.aws_lambda.api_keys`) accepts each secret's current
value and its previous one, and reads them again every ``KEY_CACHE_SECONDS``. These checks read
both with the ingest's own rule (:func:`~emr_lineage.gateway.config.key_in`), so they say what
the ingest accepts; they never print a key. docs/gateway.md "Rotating the API key" tells the whole
procedure. In the hub, a spoke account's secret that is missing or holds no key refuses that
spoke's events (401) only; in a spoke environment, its key secret is the one its clusters send.

With EMR Serverless on, the current value must also be the bare key: job runs name the secret
(``EMR.secret@<ARN>``) and EMR Serverless hands the listener its whole string
(https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/secrets-manager.html), where the
ingest would take the ``apiKey`` of a JSON object or strip spaces. Nothing else can tell: the CLI
never reads the value.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from emr_lineage.gateway.config import (
    CURRENT,
    KEY_CACHE_SECONDS,
    PREVIOUS,
    SECRET_JSON_FIELD,
    GatewayConfigError,
    key_in,
)
from emr_lineage.operations.checks import CheckResult, DoctorClients, Status, aws_call

CHECK = "gateway-api-key"
TITLE = "gateway API key secret"
SPOKES_CHECK = "gateway-spoke-keys"
SPOKES_TITLE = "gateway spoke accounts' API key secrets"
ROTATION_DOC = "docs/gateway.md#rotating-the-api-key"
NEW_KEY = "<new key>"  # docs/gateway.md shows how to generate one
USABLE = f'the key itself, or a JSON object with a string "{SECRET_JSON_FIELD}"'
READ_FIX = (
    "doctor reads the secret's values (it never prints them): give its identity secretsmanager:GetSecretValue "
    "on the secret and kms:Decrypt on the gateway's KMS key"
)


def rotation_steps(secret_arn: str) -> str:
    """The rotation without loss, in one line with the command to run first."""
    minutes = round(KEY_CACHE_SECONDS / 60)
    return (
        f"rotate without loss: aws secretsmanager put-secret-value --secret-id {secret_arn} --secret-string {NEW_KEY}; "
        f"within {minutes} minutes every ingest Lambda accepts the new key and the previous one; "
        "then update the clients (new EMR clusters read the key at boot, long-running ones need it placed: "
        f"{ROTATION_DOC}); the next put retires the old key"
    )


def api_key_secret(
    clients: DoctorClients,
    secret_arn: str,
    env: str,
    now: dt.datetime,
    *,
    serverless: bool = False,
    spoke: bool = False,
) -> CheckResult:
    """The secret exists and its current value is a key the ingest accepts (``serverless``: the key
    alone, as EMR Serverless job runs send it); whether the previous value is still accepted too, and
    since when the current one has been in place. A ``spoke``'s key is the hub's: it rotates it."""
    current, problem = _value(clients, secret_arn, CURRENT)
    if problem:
        return _spoke_unreadable(secret_arn, problem) if spoke else _unreadable(secret_arn, env, problem)
    secret = current.get("SecretString") or ""
    try:
        key = key_in(secret, secret_arn)
    except GatewayConfigError as exc:
        return _unusable_current(clients, secret_arn, current, exc)
    if serverless and key != secret:
        return _not_bare(secret_arn)
    since = current.get("CreatedDate")
    if spoke:
        detail = f"{secret_arn}: current value ({CURRENT}) since {_date(since)}: the key clusters and job runs send"
        return CheckResult(CHECK, TITLE, Status.PASS, f"{detail} to the hub, which rotates it")
    problem, accepted = _previous(clients, secret_arn, since)
    if problem:
        return CheckResult(CHECK, TITLE, Status.FAIL, f"{secret_arn}: reading {PREVIOUS}: {problem}", READ_FIX)
    days = f" ({_days(since, now)})" if since else ""
    detail = (
        f"{secret_arn}: current value ({CURRENT}) since {_date(since)}{days}; {accepted}. {rotation_steps(secret_arn)}"
    )
    return CheckResult(CHECK, TITLE, Status.PASS, detail)


def _previous(clients: DoctorClients, secret_arn: str, since: dt.datetime | None) -> tuple[str | None, str]:
    """Whether the ingest also accepts the secret's previous value, in words; or a problem reading it."""
    previous, problem = _value(clients, secret_arn, PREVIOUS)
    if problem and not problem.startswith("ResourceNotFoundException"):
        return problem, ""
    if previous is None:
        return None, f"no {PREVIOUS} value: only the current key is accepted"
    try:
        key_in(previous.get("SecretString") or "", secret_arn)
    except GatewayConfigError as exc:
        return None, f"the previous value is not a key ({exc}): only the current key is accepted"
    return None, (
        f"the previous value ({PREVIOUS}, current until {_date(since)}) is still accepted: "
        "clients not yet updated still get in"
    )


def spoke_rotation_steps() -> str:
    """The rotation of one spoke account's key without loss, in one line."""
    minutes = round(KEY_CACHE_SECONDS / 60)
    return (
        "rotate a spoke's key without loss: aws secretsmanager put-secret-value --secret-id <its ARN> "
        f"--secret-string {NEW_KEY}; within {minutes} minutes every ingest Lambda accepts that account's new key "
        "and its previous one; the spoke's clients take the new value where they read the secret (new clusters "
        f"at boot: {ROTATION_DOC}); the next put retires the old key"
    )


def spoke_key_secrets(clients: DoctorClients, secrets: Mapping[str, str], env: str, now: dt.datetime) -> CheckResult:
    """Each spoke account's secret (account -> ARN) exists and holds a key the ingest accepts (else that
    account's events are refused, 401), since when, and whether its previous value is still accepted."""
    states, problems, fixes = [], [], []
    for account, secret_arn in secrets.items():
        current, problem = _value(clients, secret_arn, CURRENT)
        if problem:
            detail, fix = _spoke_key_unreadable(secret_arn, env, problem)
        else:
            try:
                key_in(current.get("SecretString") or "", secret_arn)
            except GatewayConfigError as exc:
                put = f"aws secretsmanager put-secret-value --secret-id {secret_arn} --secret-string {NEW_KEY}"
                detail, fix = str(exc), f"put a usable value ({USABLE}): {put}"
            else:
                since = current.get("CreatedDate")
                problem, accepted = _previous(clients, secret_arn, since)
                days = f" ({_days(since, now)})" if since else ""
                state = f"{account} ({secret_arn}): current value since {_date(since)}{days}; {accepted}"
                detail, fix = (f"{secret_arn}: reading {PREVIOUS}: {problem}", READ_FIX) if problem else (state, "")
        if fix:
            problems.append(f"spoke account {account}: {detail}")
            fixes.append(fix)
        else:
            states.append(detail)
    if problems:
        detail = "; ".join(problems) + ": their events are refused (401)"
        return CheckResult(SPOKES_CHECK, SPOKES_TITLE, Status.FAIL, detail, "; ".join(dict.fromkeys(fixes)))
    return CheckResult(SPOKES_CHECK, SPOKES_TITLE, Status.PASS, f"{'; '.join(states)}. {spoke_rotation_steps()}")


def _spoke_key_unreadable(secret_arn: str, env: str, problem: str) -> tuple[str, str]:
    """What a spoke account's secret in the hub lacks (detail) and what to do (fix)."""
    if problem.startswith("ResourceNotFoundException"):
        return f"no secret {secret_arn}", f"deploy the Gateway stack (make deploy ENV={env})"
    if problem.startswith("InvalidRequestException") and "deleted" in problem:
        return f"{secret_arn} is scheduled for deletion", f"aws secretsmanager restore-secret --secret-id {secret_arn}"
    return f"{secret_arn}: {problem}", READ_FIX


def _not_bare(secret_arn: str) -> CheckResult:
    """A value the ingest takes but EMR Serverless job runs would send whole as their key."""
    detail = (
        f"{secret_arn}: the current value is not the key alone (a JSON object, or spaces around the key): "
        "the ingest and the clusters take it, but EMR Serverless job runs send the whole string as their "
        "key and the gateway refuses their events (401)"
    )
    fix = (
        f"put the same key alone as the value (clients keep working): aws secretsmanager put-secret-value "
        f"--secret-id {secret_arn} --secret-string <the key>"
    )
    return CheckResult(CHECK, TITLE, Status.FAIL, detail, fix)


def _value(clients: DoctorClients, secret_arn: str, stage: str) -> tuple[Any, str | None]:
    return aws_call(lambda: clients.secretsmanager.get_secret_value(SecretId=secret_arn, VersionStage=stage))


def _unreadable(secret_arn: str, env: str, problem: str) -> CheckResult:
    if problem.startswith("ResourceNotFoundException"):
        detail = f"no secret {secret_arn}: the ingest refuses every event (500) and new clusters fail at boot"
        return CheckResult(CHECK, TITLE, Status.FAIL, detail, f"deploy the Gateway stack (make deploy ENV={env})")
    if problem.startswith("InvalidRequestException") and "deleted" in problem:
        detail = f"{secret_arn} is scheduled for deletion: the ingest refuses every event (500)"
        return CheckResult(
            CHECK, TITLE, Status.FAIL, detail, f"aws secretsmanager restore-secret --secret-id {secret_arn}"
        )
    return CheckResult(CHECK, TITLE, Status.FAIL, f"{secret_arn}: {problem}", READ_FIX)


def _spoke_unreadable(secret_arn: str, problem: str) -> CheckResult:
    """A spoke's key secret without a value (its own, not filled yet) or out of reach (the hub's)."""
    if not problem.startswith("ResourceNotFoundException"):
        return CheckResult(CHECK, TITLE, Status.FAIL, f"{secret_arn}: {problem}", READ_FIX)
    detail = f"no key in {secret_arn}: new clusters fail at boot, and the hub would refuse their lineage (401)"
    fix = (
        f"put the hub's key for this account: aws secretsmanager put-secret-value --secret-id {secret_arn} "
        f"--secret-string <the key>; the hub's own secret (hub.api_key_secret_arn) exists once the hub lists this "
        "account in gateway.spoke_accounts"
    )
    return CheckResult(CHECK, TITLE, Status.FAIL, detail, fix)


def _unusable_current(
    clients: DoctorClients, secret_arn: str, current: dict[str, Any], exc: GatewayConfigError
) -> CheckResult:
    """A current value the ingest cannot use: every event is refused. When the previous value is a key,
    moving the current label back to it lets the clients that hold it in again at once."""
    detail = f"{exc}: the ingest refuses every event (500) and new clusters fail at boot"
    put = f"aws secretsmanager put-secret-value --secret-id {secret_arn} --secret-string {NEW_KEY}"
    previous, _ = _value(clients, secret_arn, PREVIOUS)
    try:
        key_in((previous or {}).get("SecretString") or "", secret_arn)
    except GatewayConfigError:
        return CheckResult(CHECK, TITLE, Status.FAIL, detail, f"put a usable value ({USABLE}): {put}")
    fix = (
        f"give {CURRENT} back to the previous value, which the clients hold: aws secretsmanager "
        f"update-secret-version-stage --secret-id {secret_arn} --version-stage {CURRENT} "
        f"--move-to-version-id {previous['VersionId']} --remove-from-version-id {current['VersionId']}; "
        f"rotate later with a usable value ({USABLE})"
    )
    return CheckResult(CHECK, TITLE, Status.FAIL, detail, fix)


def _date(moment: dt.datetime | None) -> str:
    return f"{moment.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC" if moment else "an unknown date"


def _days(moment: dt.datetime, now: dt.datetime) -> str:
    days = max((now - moment).days, 0)
    return f"{days} day{'s' if days != 1 else ''}"
