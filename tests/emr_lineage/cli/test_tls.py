"""``emr-lineage tls`` against moto: stage the zip, check who reads it, never overwrite by surprise."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.aws.artifacts import TLS_CERTIFICATES_KEY
from emr_lineage.cli.app import main
from tests.emr_lineage.operations.prepared_account import (
    BUCKET,
    ENV,
    SECURITY_CONFIGURATION,
    cdk_json_copy,
    client,
    deploy_emr_stack_outputs,
    moto_account,
)
from tests.helpers import one_error_line

URI = f"s3://{BUCKET}/{TLS_CERTIFICATES_KEY}"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


def tls(cdk_json: Path, *args: str):
    return CliRunner().invoke(main, ["tls", "--env", ENV, "--cdk-json", str(cdk_json), *args])


def staged() -> bytes | None:
    try:
        return client("s3").get_object(Bucket=BUCKET, Key=TLS_CERTIFICATES_KEY)["Body"].read()
    except client("s3").exceptions.NoSuchKey:
        return None


def test_stages_the_zip_and_the_security_configuration_reads_it(aws, tmp_path: Path) -> None:
    deploy_emr_stack_outputs()
    result = tls(cdk_json_copy(tmp_path))
    assert result.exit_code == 0, result.output
    assert f"uploaded {URI}: self-signed *.eu-west-1.compute.internal" in result.stdout
    assert f"security configuration {SECURITY_CONFIGURATION} reads {URI}" in result.stdout
    with zipfile.ZipFile(io.BytesIO(staged())) as archive:
        assert sorted(archive.namelist()) == ["certificateChain.pem", "privateKey.pem", "trustedCertificates.pem"]


def test_an_existing_zip_is_replaced_only_with_replace(aws, tmp_path: Path) -> None:
    deploy_emr_stack_outputs()
    cdk_json = cdk_json_copy(tmp_path)
    assert tls(cdk_json).exit_code == 0
    first = staged()
    one_error_line(tls(cdk_json), "exists and running clusters use it; pass --replace")
    assert staged() == first
    assert tls(cdk_json, "--replace").exit_code == 0
    assert staged() != first


def test_out_keeps_a_copy_and_is_never_overwritten(aws, tmp_path: Path) -> None:
    deploy_emr_stack_outputs()
    out = tmp_path / "tls.zip"
    result = tls(cdk_json_copy(tmp_path), "--output", str(out), "--days", "30")
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == staged() and out.stat().st_mode & 0o777 == 0o600
    assert f"wrote {out}" in result.stderr
    before = staged()
    one_error_line(tls(cdk_json_copy(tmp_path), "--output", str(out), "--replace"), f"--output {out} exists")
    assert staged() == before  # refused before anything was made or uploaded


def test_an_output_in_a_missing_folder_is_refused_before_anything_is_staged(aws, tmp_path: Path) -> None:
    deploy_emr_stack_outputs()
    out = tmp_path / "nodir" / "tls.zip"
    one_error_line(tls(cdk_json_copy(tmp_path), "--output", str(out)), "does not exist; create it first (mkdir -p")
    assert staged() is None and not out.parent.exists()


def test_the_bucket_option_skips_ssm_and_a_missing_bucket_is_one_line(aws, tmp_path: Path) -> None:
    one_error_line(tls(cdk_json_copy(tmp_path)), "or pass --bucket")
    one_error_line(tls(cdk_json_copy(tmp_path), "--bucket", "no-such-bucket"), "no-such-bucket")


def test_a_security_configuration_reading_elsewhere_exits_1(aws, tmp_path: Path) -> None:
    deploy_emr_stack_outputs(certificates="s3://another-bucket/certs.zip")
    result = tls(cdk_json_copy(tmp_path))
    assert result.exit_code == 1 and staged() is not None
    assert "reads s3://another-bucket/certs.zip, not" in result.stderr and "make deploy ENV=dev" in result.stderr


def test_without_in_transit_encryption_nothing_is_needed_unless_forced(aws, tmp_path: Path) -> None:
    deploy_emr_stack_outputs(certificates=None)
    cdk_json = cdk_json_copy(tmp_path, in_transit_encryption=False)
    result = tls(cdk_json)
    assert result.exit_code == 0 and "no zip is needed (--force makes one anyway)" in result.stdout
    assert staged() is None
    result = tls(cdk_json, "--force")
    assert result.exit_code == 0 and staged() is not None
    assert "no security configuration reads it" in result.stdout


@pytest.mark.parametrize("args", [["--days", "0"], ["--days", "x"], ["--env", "nope"]])
def test_bad_options_and_env_are_one_line_exit_2(args: list[str], tmp_path: Path) -> None:
    one_error_line(tls(cdk_json_copy(tmp_path), *args), stdout_empty=True)


def test_the_old_out_spelling_still_keeps_a_copy_with_one_warning(aws, tmp_path: Path) -> None:
    deploy_emr_stack_outputs()
    out = tmp_path / "old.zip"
    result = tls(cdk_json_copy(tmp_path), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == staged()
    assert [line for line in result.stderr.splitlines() if "deprecated" in line] == [
        "warning: --out is deprecated and will be removed in the next release; use -o/--output FILE"
    ]
