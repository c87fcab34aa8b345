"""``emr-lineage doctor``: one table of every prerequisite of an environment, pass or fail, with the
fix of each failure (docs/cli.md; the first deploy from zero: docs/operations.md).

Exit codes: 0 every check passed (or was not needed); 1 a check failed; 2 doctor could not run
(bad settings or options); 130 interrupted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from emr_lineage.cli.options import format_option, http_base_url, marquez_option, settings_options, timeout_option
from emr_lineage.cli.output import Command, stdout_console
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.http import DEFAULT_TIMEOUT
from emr_lineage.operations.checks import Status
from emr_lineage.operations.doctor import DoctorOptions, Report, run_doctor
from emr_lineage.settings.loader import load_settings

STATUS_STYLES = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "red", Status.SKIP: "dim"}


@click.command("doctor", cls=Command)
@settings_options
@marquez_option(
    "Check this Marquez instead of the URL in SSM (its load balancer is internal: from outside, a port forward)",
    callback=http_base_url,
)
@click.option(
    "--gateway",
    "gateway_url",
    default=None,
    metavar="URL",
    callback=http_base_url,
    help="Base URL of the lineage gateway's load balancer (default: the Marquez URL).",
)
@timeout_option(DEFAULT_TIMEOUT)
@format_option(("table", "json"), "table")
def doctor_command(
    env: str, cdk_json: Path, marquez_url: str | None, gateway_url: str | None, timeout: float, fmt: str
) -> None:
    """Check credentials, CDK bootstrap, EMR's cleanup role, the Marquez images (and their ECR
    pull-through cache), the listener jar, the TLS zip, the deployed stacks and their SSM parameters,
    Marquez and the gateway, the gateway's API key (and how to rotate it), and the dead-letter queue.
    --marquez replaces the SSM parameter's URL (the load balancer is internal: a port forward,
    docs/e2e.md).

    \b
    emr-lineage doctor --env dev --marquez http://localhost:5080
    """
    settings = load_settings(env, cdk_json)
    options = DoctorOptions(marquez_url=marquez_url, gateway_url=gateway_url, timeout=timeout)
    report = run_doctor(settings, options)
    if fmt == "json":
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        _print_table(report)
    if not report.passed:
        sys.exit(EXIT_CHECK_FAILED)


def _print_table(report: Report) -> None:
    from rich.table import Table

    # Rows are plain text: a secret's ARN has ":secret:" (an emoji code to rich) and a fix may have "[...]".
    console = stdout_console(markup=False, emoji=False)
    table = Table(title=f"emr-lineage doctor --env {report.env}")
    for column in ("check", "status", "detail", "fix"):
        table.add_column(column, overflow="fold")
    for row in report.results:
        table.add_row(row.title, row.status.value, row.detail, row.fix, style=STATUS_STYLES[row.status])
    console.print(table)
    counts = report.counts()
    verdict = "all checks passed" if report.passed else f"{counts['fail']} check(s) failed"
    tally = f"{counts['pass']} passed, {counts['warn']} warned, {counts['fail']} failed, {counts['skip']} skipped"
    console.print(f"{verdict} ({tally})")
