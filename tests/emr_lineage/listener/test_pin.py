"""``stage-listener --pin``: a local Maven repository with checksum files and signatures, test PGP keys,
moto S3, and a copy of the real cdk.json that must change by exactly one value."""

from __future__ import annotations

import difflib
import functools
import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.listener.checksums import ChecksumError
from emr_lineage.listener.pin import PinConflictError, SignatureMissingError, pin_listener
from emr_lineage.listener.signature import Keyring, SignatureError
from emr_lineage.listener.stage import ListenerError, NotAJarError, download_client
from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.pin import PinFileError
from tests.emr_lineage.listener.maven import BUCKET, TestKey, build_test_jar, keys
from tests.helpers import one_error_line
from tests.versions import LISTENER_JAR

fast_http = functools.partial(download_client, backoff=0.01)
ARTIFACT = load_settings("dev").versions.openlineage_spark


@pytest.fixture
def make_cdk_json(tmp_path: Path, repo_root: Path):
    """A copy of the real cdk.json, with the fingerprint and pin set by a targeted text edit."""

    def make(fingerprint: str | None = None, sha256: str | None = None) -> Path:
        text = (repo_root / "cdk.json").read_text()
        if fingerprint:
            text = text.replace('"pgp_fingerprint": null', f'"pgp_fingerprint": "{fingerprint}"', 1)
        if sha256:
            text = text.replace('"sha256": null', f'"sha256": "{sha256}"', 1)
        path = tmp_path / "cdk.json"
        path.write_text(text)
        return path

    return make


def only_change(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]


def pin(cdk_json: Path, s3, maven, **kwargs):
    artifact = load_settings("dev", cdk_json).versions.openlineage_spark
    return pin_listener(
        artifact, BUCKET, cdk_json, s3_client=s3, http=fast_http(), maven_repository=maven.url, **kwargs
    )


def jar_path(maven, suffix: str = "") -> str:
    return maven.path_of(ARTIFACT, suffix)


# --- published checksums ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("published", "used", "asked"),
    [
        (("sha1",), "SHA-1", [".sha512", ".sha256", ".sha1"]),
        (("sha256", "sha1"), "SHA-256", [".sha512", ".sha256"]),
        (("sha512", "sha256", "sha1"), "SHA-512", [".sha512"]),
    ],
)
def test_the_strongest_published_checksum_is_used_then_the_pin_is_written(
    maven, s3, make_cdk_json, test_jar, test_jar_sha256, published, used, asked
):
    maven.publish_checksums(ARTIFACT, test_jar, *published)
    cdk_json = make_cdk_json()
    before = cdk_json.read_text()

    result = pin(cdk_json, s3, maven)

    assert result.checksum.label == used and result.signature is None
    assert result.staged.uploaded and result.staged.sha256 == test_jar_sha256 and result.changed
    assert maven.requests == [jar_path(maven, suffix) for suffix in asked] + [jar_path(maven)]
    assert keys(s3) == [f"listener/{LISTENER_JAR}"]
    assert s3.head_object(Bucket=BUCKET, Key=f"listener/{LISTENER_JAR}")["Metadata"] == {"sha256": test_jar_sha256}
    assert only_change(before, cdk_json.read_text()) == [
        '-          "sha256": null,',
        f'+          "sha256": "{test_jar_sha256}",',
    ]
    assert load_settings("dev", cdk_json).versions.openlineage_spark.sha256 == test_jar_sha256


def test_a_checksum_file_with_the_file_name_after_the_digest_is_read(maven, s3, make_cdk_json, test_jar):
    maven.publish(ARTIFACT, f"{hashlib.sha256(test_jar).hexdigest().upper()}  {LISTENER_JAR}\n".encode(), ".sha256")
    assert pin(make_cdk_json(), s3, maven).checksum.label == "SHA-256"


@pytest.mark.parametrize("wrong", ["sha512", "sha256", "sha1"])
def test_a_wrong_checksum_is_refused_nothing_uploaded_cdk_json_untouched(maven, s3, make_cdk_json, wrong):
    maven.publish_checksums(ARTIFACT, build_test_jar(created_by="someone else"), wrong)
    cdk_json = make_cdk_json()
    before = cdk_json.read_bytes()
    label = {"sha512": "SHA-512", "sha256": "SHA-256", "sha1": "SHA-1"}[wrong]
    with pytest.raises(ChecksumError, match=rf"{label} mismatch: .*\.jar hashes to .* but .*\.jar\.{wrong} says"):
        pin(cdk_json, s3, maven)
    assert keys(s3) == []
    assert cdk_json.read_bytes() == before


def test_a_strong_wrong_checksum_is_not_outvoted_by_a_weaker_right_one(maven, s3, make_cdk_json, test_jar):
    maven.publish_checksums(ARTIFACT, test_jar, "sha1", "sha256")
    maven.publish_checksums(ARTIFACT, b"something else", "sha512")
    with pytest.raises(ChecksumError, match="SHA-512 mismatch"):
        pin(make_cdk_json(), s3, maven)
    assert keys(s3) == []


def test_no_published_checksum_is_an_error_naming_the_urls_tried(maven, s3, make_cdk_json):
    with pytest.raises(ChecksumError) as raised:
        pin(make_cdk_json(), s3, maven)
    message = str(raised.value)
    assert "publishes no checksum" in message
    for suffix in (".sha512", ".sha256", ".sha1"):
        assert f"{maven.root}{jar_path(maven, suffix)}" in message
    assert jar_path(maven) not in maven.requests  # the jar itself is not even downloaded
    assert keys(s3) == []


def test_a_failing_checksum_url_is_an_error_not_an_absent_file(maven, s3, make_cdk_json, test_jar):
    maven.publish_checksums(ARTIFACT, test_jar, "sha1")
    maven.statuses[jar_path(maven, ".sha512")] = 403
    with pytest.raises(ChecksumError, match=r"cannot read the published checksum: GET .*\.sha512 -> HTTP 403"):
        pin(make_cdk_json(), s3, maven)
    assert keys(s3) == []


def test_a_checksum_file_without_a_digest_is_refused(maven, s3, make_cdk_json):
    maven.publish(ARTIFACT, b"<html>not found</html>", ".sha256")
    with pytest.raises(ChecksumError, match=r"\.sha256 does not hold a SHA-256 digest \(64 hex digits\)"):
        pin(make_cdk_json(), s3, maven)


def test_a_published_body_that_is_not_the_listener_jar_is_refused(maven, s3, make_cdk_json):
    body = build_test_jar(listener=False)
    maven.publish(ARTIFACT, body)
    maven.publish_checksums(ARTIFACT, body, "sha512")
    with pytest.raises(NotAJarError, match="without io/openlineage/spark/agent/OpenLineageSparkListener.class"):
        pin(make_cdk_json(), s3, maven)
    assert keys(s3) == []


# --- the pin already in cdk.json ----------------------------------------------------------------


def test_the_same_pin_changes_nothing(maven, s3, make_cdk_json, test_jar, test_jar_sha256):
    maven.publish_checksums(ARTIFACT, test_jar, "sha512")
    cdk_json = make_cdk_json(sha256=test_jar_sha256)
    before = cdk_json.read_bytes()
    result = pin(cdk_json, s3, maven)
    assert not result.changed and result.previous == test_jar_sha256
    assert cdk_json.read_bytes() == before


def test_another_pin_is_refused_unless_replaced(maven, s3, make_cdk_json, test_jar, test_jar_sha256):
    maven.publish_checksums(ARTIFACT, test_jar, "sha512")
    cdk_json = make_cdk_json(sha256="0" * 64)
    before = cdk_json.read_text()
    with pytest.raises(PinConflictError, match=f"pins {'0' * 64}, but .* is {test_jar_sha256}; nothing uploaded"):
        pin(cdk_json, s3, maven)
    assert keys(s3) == [] and cdk_json.read_text() == before

    result = pin(cdk_json, s3, maven, replace=True)
    assert result.changed and result.previous == "0" * 64
    assert only_change(before, cdk_json.read_text()) == [
        f'-          "sha256": "{"0" * 64}",',
        f'+          "sha256": "{test_jar_sha256}",',
    ]


def test_a_cdk_json_that_cannot_take_the_pin_stops_before_any_download(maven, s3, tmp_path):
    cdk_json = tmp_path / "cdk.json"
    cdk_json.write_text('{"context": {"emr-lineage": {"versions": {"openlineage_spark": {}}}}}')
    with pytest.raises(PinFileError, match="cannot pin"):
        pin_listener(ARTIFACT, BUCKET, cdk_json, s3_client=s3, http=fast_http(), maven_repository=maven.url)
    assert maven.requests == []


# --- PGP signatures -----------------------------------------------------------------------------


def test_a_good_signature_by_the_configured_key_is_accepted(maven, s3, make_cdk_json, test_jar, signer):
    maven.publish_checksums(ARTIFACT, test_jar, "sha512")
    maven.publish(ARTIFACT, signer.sign(test_jar), ".asc")
    cdk_json = make_cdk_json(fingerprint=signer.fingerprint)
    result = pin(cdk_json, s3, maven, pgp_key=signer.public_key)
    assert result.signature is not None
    assert result.signature.fingerprint == signer.fingerprint and "Signer" in result.signature.signer
    assert load_settings("dev", cdk_json).versions.openlineage_spark.sha256 == result.staged.sha256


def test_a_signature_by_another_key_is_refused(maven, s3, make_cdk_json, test_jar, signer, stranger):
    maven.publish_checksums(ARTIFACT, test_jar, "sha512")
    maven.publish(ARTIFACT, stranger.sign(test_jar), ".asc")
    cdk_json = make_cdk_json(fingerprint=signer.fingerprint)
    before = cdk_json.read_bytes()
    with pytest.raises(SignatureError, match=rf"signed by key {stranger.fingerprint}, not by the configured key"):
        pin(cdk_json, s3, maven, pgp_key=signer.public_key)
    assert keys(s3) == [] and cdk_json.read_bytes() == before


def test_a_signature_of_other_content_is_a_bad_signature(maven, s3, make_cdk_json, test_jar, signer):
    tampered = build_test_jar(created_by="tampered")
    maven.publish(ARTIFACT, tampered)
    maven.publish_checksums(ARTIFACT, tampered, "sha512")  # the repository's checksums follow the tampering
    maven.publish(ARTIFACT, signer.sign(test_jar), ".asc")
    with pytest.raises(SignatureError, match=r"\.jar\.asc: BAD signature"):
        pin(make_cdk_json(fingerprint=signer.fingerprint), s3, maven, pgp_key=signer.public_key)
    assert keys(s3) == []


@pytest.mark.parametrize("state", ["expired", "revoked"])
def test_a_signature_by_an_expired_or_revoked_key_is_refused(maven, s3, make_cdk_json, test_jar, tmp_path, state):
    if state == "expired":  # made and used in 2020, valid for one day
        key = TestKey(tmp_path / "old", "Old", made_at="20200101T000000", expires="1d")
        signature = key.sign(test_jar)
    else:
        key = TestKey(tmp_path / "revoked", "Revoked")
        signature = key.sign(test_jar)
        key.revoke()
    try:
        maven.publish_checksums(ARTIFACT, test_jar, "sha512")
        maven.publish(ARTIFACT, signature, ".asc")
        with pytest.raises(SignatureError, match=f"signed by an? {state.upper()} key"):
            pin(make_cdk_json(fingerprint=key.fingerprint), s3, maven, pgp_key=key.public_key)
        assert keys(s3) == []
    finally:
        key.close()


def test_a_missing_signature_is_refused_when_a_fingerprint_is_configured(maven, s3, make_cdk_json, test_jar, signer):
    maven.publish_checksums(ARTIFACT, test_jar, "sha512")
    with pytest.raises(SignatureMissingError, match=r"\.jar\.asc: not found \(HTTP 404\)"):
        pin(make_cdk_json(fingerprint=signer.fingerprint), s3, maven, pgp_key=signer.public_key)
    assert keys(s3) == []


def test_a_signature_file_that_holds_no_signature_is_refused(maven, s3, make_cdk_json, test_jar, signer):
    maven.publish_checksums(ARTIFACT, test_jar, "sha512")
    maven.publish(ARTIFACT, b"<html>login</html>", ".asc")
    with pytest.raises(SignatureError, match="holds no OpenPGP signature"):
        pin(make_cdk_json(fingerprint=signer.fingerprint), s3, maven, pgp_key=signer.public_key)


def test_a_key_file_without_the_configured_fingerprint_stops_before_any_download(
    maven, s3, make_cdk_json, signer, stranger
):
    with pytest.raises(SignatureError, match=rf"holds key {stranger.fingerprint}, not the key with fingerprint"):
        pin(make_cdk_json(fingerprint=signer.fingerprint), s3, maven, pgp_key=stranger.public_key)
    assert maven.requests == []


def test_a_key_file_that_is_no_key_is_refused(maven, s3, make_cdk_json, signer, tmp_path):
    junk = tmp_path / "key.asc"
    junk.write_text("not a key\n")
    with pytest.raises(SignatureError, match="holds no OpenPGP public key"):
        pin(make_cdk_json(fingerprint=signer.fingerprint), s3, maven, pgp_key=junk)


def test_the_key_file_and_the_fingerprint_go_together(maven, s3, make_cdk_json, signer):
    with pytest.raises(ListenerError, match="pgp_fingerprint .*: pass --pgp-key FILE"):
        pin(make_cdk_json(fingerprint=signer.fingerprint), s3, maven)
    with pytest.raises(ListenerError, match="--pgp-key needs versions.openlineage_spark.pgp_fingerprint"):
        pin(make_cdk_json(), s3, maven, pgp_key=signer.public_key)
    assert maven.requests == []


def test_without_gpg_the_signature_cannot_be_checked(signer):
    with pytest.raises(SignatureError, match="no-such-gpg not found: install GnuPG"):
        Keyring(signer.public_key, signer.fingerprint, gpg="no-such-gpg")


# --- the command line ---------------------------------------------------------------------------


def stage(*args: str):
    return CliRunner().invoke(main, ["stage-listener", *args])


def test_cli_first_use_pins_then_a_plain_stage_is_unchanged(maven, s3, make_cdk_json, test_jar, test_jar_sha256):
    maven.publish_checksums(ARTIFACT, test_jar, "sha512", "sha1")
    cdk_json = make_cdk_json()
    before = cdk_json.read_text()
    common = ("--cdk-json", str(cdk_json), "--bucket", BUCKET, "--maven-repository", maven.url)

    result = stage(*common, "--pin")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"s3://{BUCKET}/listener/{LISTENER_JAR}: uploaded ({len(test_jar)} bytes, sha256 {test_jar_sha256})",
        f"verified: SHA-512 published at {maven.root}{jar_path(maven, '.sha512')}",
        f"{cdk_json}: pinned versions.openlineage_spark.sha256 = {test_jar_sha256}; commit it and redeploy "
        "the EMR stack (make deploy ENV=dev) so clusters get it",
    ]
    assert only_change(before, cdk_json.read_text()) == [
        '-          "sha256": null,',
        f'+          "sha256": "{test_jar_sha256}",',
    ]

    plain = stage(*common)
    assert plain.exit_code == 0, plain.output
    assert "already staged, unchanged" in plain.stdout

    again = stage(*common, "--pin")
    assert again.exit_code == 0, again.output
    assert f"{cdk_json}: already pins sha256 {test_jar_sha256}; unchanged" in again.stdout


def test_cli_pin_with_a_signature(maven, s3, make_cdk_json, test_jar, signer):
    maven.publish_checksums(ARTIFACT, test_jar, "sha256")
    maven.publish(ARTIFACT, signer.sign(test_jar), ".asc")
    cdk_json = make_cdk_json(fingerprint=signer.fingerprint)
    common = ("--cdk-json", str(cdk_json), "--bucket", BUCKET, "--maven-repository", maven.url)
    result = stage(*common, "--pin", "--pgp-key", str(signer.public_key))
    assert result.exit_code == 0, result.output
    assert f"verified: PGP signature by {signer.fingerprint} (Signer <signer@example.com>)" in result.stdout


@pytest.mark.parametrize(
    ("case", "fragment"),
    [
        ("stranger", "not by the configured key"),
        ("no signature", ".asc: not found (HTTP 404)"),
        ("no key file option", "pass --pgp-key FILE"),
        ("conflict", "pass --replace-pin"),
        ("no checksum", "publishes no checksum"),
    ],
)
def test_cli_refusals_are_one_line_exit_2(maven, s3, make_cdk_json, test_jar, signer, stranger, case, fragment):
    with_key = ["--pin", "--pgp-key", str(signer.public_key)]
    setups = {  # case: (cdk.json settings, options)
        "stranger": ({"fingerprint": signer.fingerprint}, with_key),
        "no signature": ({"fingerprint": signer.fingerprint}, with_key),
        "no key file option": ({"fingerprint": signer.fingerprint}, ["--pin"]),
        "conflict": ({"sha256": "1" * 64}, ["--pin"]),
        "no checksum": ({}, ["--pin"]),
    }
    settings, options = setups[case]
    cdk_json = make_cdk_json(**settings)
    if case != "no checksum":
        maven.publish_checksums(ARTIFACT, test_jar, "sha512")
    if case == "stranger":
        maven.publish(ARTIFACT, stranger.sign(test_jar), ".asc")
    before = cdk_json.read_bytes()
    result = stage("--cdk-json", str(cdk_json), "--bucket", BUCKET, "--maven-repository", maven.url, *options)
    one_error_line(result, fragment, stdout_empty=True)
    assert keys(s3) == [] and cdk_json.read_bytes() == before


@pytest.mark.parametrize("option", [["--replace-pin"], ["--pgp-key", "KEY"]])
def test_cli_pin_options_without_pin_are_usage_errors(maven, s3, make_cdk_json, signer, option):
    option = [str(signer.public_key) if part == "KEY" else part for part in option]
    result = stage("--cdk-json", str(make_cdk_json()), "--bucket", BUCKET, *option)
    assert f"{option[0]} only goes with --pin" in one_error_line(result, stdout_empty=True)
    assert maven.requests == []


def test_cli_a_pgp_key_file_that_does_not_exist_is_a_usage_error(make_cdk_json, tmp_path):
    result = stage("--cdk-json", str(make_cdk_json()), "--bucket", BUCKET, "--pin", "--pgp-key", str(tmp_path / "x"))
    assert "--pgp-key" in one_error_line(result, "does not exist", stdout_empty=True)
