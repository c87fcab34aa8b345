"""``emr-lineage tls``: make the self-signed certificate zip EMR's in-transit encryption reads, stage
it in the artifacts bucket, and check that the environment's security configuration reads it.

Exit codes (docs/cli.md): 0 staged and read by the security configuration (or nothing to do:
in-transit encryption is off); 1 staged, but the deployed security configuration does not read
it (or cannot be read); 2 it could not (a zip already staged without --replace, an existing
--output, missing SSM parameter or bucket, AWS error); 130 interrupted.
"""

from __future__ import annotations

from pathlib import Path

import click

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsClients, AwsError, read_parameter
from emr_lineage.cli.emr_options import artifacts_bucket_option
from emr_lineage.cli.options import force_option, output_option, settings_options
from emr_lineage.cli.output import Command, fail
from emr_lineage.cli.output_paths import refuse_missing_directory
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.operations import tls
from emr_lineage.settings.loader import load_settings


@click.command("tls", cls=Command)
@settings_options
@click.option(
    "--days",
    type=click.IntRange(1, tls.MAX_VALIDITY_DAYS),
    default=tls.DEFAULT_VALIDITY_DAYS,
    show_default=True,
    help="Days the certificate is valid.",
)
@output_option(
    "Also keep the zip here: a new file (it holds the private key; written owner-only).",
    old="--out",
    type=click.Path(path_type=Path, dir_okay=False),
)
@artifacts_bucket_option
@click.option("--replace", is_flag=True, help="Replace a zip already staged (running clusters keep the old one).")
@force_option("Make and upload the zip even though emr.in_transit_encryption is false.")
def tls_command(
    env: str, cdk_json: Path, days: int, output: Path | None, bucket: str | None, replace: bool, force: bool
) -> None:
    """Make a self-signed wildcard certificate for the region's internal domain, zip it as EMR expects
    (privateKey.pem, certificateChain.pem, trustedCertificates.pem) and upload it to
    s3://<artifacts bucket>/tls/emr-tls-certificates.zip. -o FILE also keeps the zip there (a new
    file: it holds the private key).

    \b
    emr-lineage tls --env prod --days 365 -o prod-tls.zip
    """
    settings = load_settings(env, cdk_json)
    if not settings.emr.in_transit_encryption and not force:
        click.echo(
            f"emr.in_transit_encryption is false for env {env!r}: its security configuration reads no "
            "certificates, so no zip is needed (--force makes one anyway)"
        )
        return
    if output is not None and output.exists():
        fail(f"--output {output} exists; choose a new file name (the zip is never overwritten)")
    if output is not None:
        refuse_missing_directory("--output", str(output))  # before the certificate is made and staged

    clients = AwsClients.for_settings(settings)
    region = clients.s3.meta.region_name
    if bucket is None:
        try:
            bucket = read_parameter(clients.ssm, parameters.artifacts_bucket(env), env=env, published_by="EMR stack")
        except AwsError as exc:
            raise AwsError(f"{exc}, or pass --bucket") from None
    if not replace:
        tls.refuse_to_overwrite(clients.s3, bucket)

    bundle = tls.certificate_zip(region, days=days)
    if output is not None:
        tls.write_new_file(output, bundle.data)
        click.echo(f"wrote {output}", err=True)
    staged = tls.stage(clients.s3, bucket, bundle)
    click.echo(
        f"uploaded {staged.uri}: self-signed {bundle.common_name}, valid until {bundle.not_after:%Y-%m-%d} "
        f"(sha256 fingerprint {bundle.sha256_fingerprint})"
    )

    if not settings.emr.in_transit_encryption:
        click.echo("note: emr.in_transit_encryption is false, so no security configuration reads it")
        return
    try:
        use = tls.security_configuration_use(clients.ssm, clients.emr, env)
    except AwsError as exc:
        fail(f"cannot check the security configuration: {exc}", EXIT_CHECK_FAILED)
    if not use.reads(staged.uri):
        what = use.certificates_uri if use.in_transit_encryption else "nothing (in-transit encryption off)"
        fail(
            f"security configuration {use.name} reads {what}, not {staged.uri}; deploy the EMR stack "
            f"(make deploy ENV={env})",
            EXIT_CHECK_FAILED,
        )
    click.echo(f"security configuration {use.name} reads {staged.uri}: clusters started from now on use it")
