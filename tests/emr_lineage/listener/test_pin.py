"""``listener fetch --pin``: the real jar through the real ``mvn`` into a copy of cdk.json that must change by
exactly one value; signatures Maven copies beside a jar of a throwaway repository; the gpg check itself on
files; and every refusal that needs no Maven before Maven runs."""

from __future__ import annotations

import difflib
import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.listener.jar import ListenerError
from emr_lineage.listener.pin import pin_listener
from emr_lineage.listener.signature import Keyring, SignatureError
from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.pin import PinFileError
from tests.emr_lineage.listener.maven import TestKey, build_test_jar, throwaway
from tests.helpers import one_error_line
from tests.versions import ICEBERG_RUNTIME, LISTENER, LISTENER_JAR, RUNTIME_JAR

PIN = LISTENER.sha256
RUNTIME_PIN = ICEBERG_RUNTIME.sha256


def only_change(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]


def fetch(*args: str):
    return CliRunner().invoke(main, ["listener", "fetch", *args])


# --- the real jar, through the command line -----------------------------------------------------


@pytest.mark.maven
def test_cli_pin_writes_the_sha256_maven_verified_into_cdk_json(make_cdk_json, cache_dir, monkeypatch):
    cdk_json = make_cdk_json()
    before = cdk_json.read_text()
    result = fetch("--cdk-json", str(cdk_json), "--pin")
    assert result.exit_code == 0, result.output
    jar, runtime = cache_dir / LISTENER_JAR, cache_dir / RUNTIME_JAR
    sha1, runtime_sha1 = (hashlib.sha1(path.read_bytes()).hexdigest() for path in (jar, runtime))
    assert result.stdout.splitlines() == [
        f"{jar}: fetched {LISTENER.coordinates} with Maven ({jar.stat().st_size} bytes, sha256 {PIN})",
        f"verified: SHA-1 {sha1}, the one the Maven repository published",
        f"{cdk_json}: pinned versions.openlineage_spark.sha256 = {PIN}; commit it, then stage it and redeploy "
        "(make stage-listener deploy ENV=dev) so clusters get it",
        f"{runtime}: fetched {ICEBERG_RUNTIME.coordinates} with Maven ({runtime.stat().st_size} bytes, sha256 "
        f"{RUNTIME_PIN})",
        f"verified: SHA-1 {runtime_sha1}, the one the Maven repository published",
        f"{cdk_json}: versions.iceberg_spark_runtime.sha256 already pins {RUNTIME_PIN}; unchanged",
    ]
    assert only_change(before, cdk_json.read_text()) == ['-          "sha256": null,', f'+          "sha256": "{PIN}",']
    assert load_settings("dev", cdk_json).versions.openlineage_spark.sha256 == PIN
    assert sorted(p.name for p in cache_dir.iterdir()) == [RUNTIME_JAR, LISTENER_JAR]

    # The pinned jar is in the cache now: no Maven needed any more.
    monkeypatch.setenv("PATH", str(cache_dir / "no-such-bin"))
    plain = fetch("--cdk-json", str(cdk_json))
    assert plain.exit_code == 0 and "already fetched, verified against the pin" in plain.stdout


@pytest.mark.maven
def test_cli_a_different_pin_is_refused_then_replaced(make_cdk_json, cache_dir):
    cdk_json = make_cdk_json(sha256="1" * 64)
    before = cdk_json.read_text()
    refused = fetch("--cdk-json", str(cdk_json), "--pin")
    line = one_error_line(refused, stdout_empty=True)
    assert (
        f"pins {'1' * 64}, but {LISTENER.coordinates} (verified by Maven against the repository's SHA-1) is {PIN}"
        in (line)
    )
    assert line.endswith(
        "nothing kept, cdk.json unchanged; pass --replace-pin to replace the pin (e.g. after changing the version)"
    )
    assert cdk_json.read_text() == before and list(cache_dir.iterdir()) == []

    replaced = fetch("--cdk-json", str(cdk_json), "--pin", "--replace-pin")
    assert replaced.exit_code == 0, replaced.output
    assert f"{cdk_json}: replaced the pin versions.openlineage_spark.sha256 = {PIN}" in replaced.stdout
    assert only_change(before, cdk_json.read_text()) == [
        f'-          "sha256": "{"1" * 64}",',
        f'+          "sha256": "{PIN}",',
    ]


@pytest.mark.maven
def test_cli_pin_writes_the_iceberg_runtime_s_pin_and_a_conflict_on_it_keeps_nothing(make_cdk_json, cache_dir):
    cdk_json = make_cdk_json(sha256=PIN, runtime_sha256=None)
    before = cdk_json.read_text()
    result = fetch("--cdk-json", str(cdk_json), "--pin")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        f"{cdk_json}: pinned versions.iceberg_spark_runtime.sha256 = {RUNTIME_PIN}; commit it so local runs get it"
    )
    assert only_change(before, cdk_json.read_text()) == [
        '-          "sha256": null',
        f'+          "sha256": "{RUNTIME_PIN}"',
    ]
    assert load_settings("dev", cdk_json).versions.iceberg_spark_runtime.sha256 == RUNTIME_PIN

    # Another pin of the runtime: refused after both jars were verified; neither is kept, cdk.json unchanged.
    conflicting = make_cdk_json(sha256=None, runtime_sha256="2" * 64)
    before = conflicting.read_text()
    for path in cache_dir.iterdir():
        path.unlink()
    line = one_error_line(fetch("--cdk-json", str(conflicting), "--pin"), stdout_empty=True)
    assert f"versions.iceberg_spark_runtime.sha256 pins {'2' * 64}, but {ICEBERG_RUNTIME.coordinates}" in line
    assert conflicting.read_text() == before and list(cache_dir.iterdir()) == []


# --- signatures Maven copies beside the jar (a throwaway repository) ----------------------------


@pytest.mark.maven
def test_pin_checks_the_signature_maven_copies_beside_the_jar(repositories, signer, test_jar, make_cdk_json, tmp_path):
    artifact = throwaway(pgp_fingerprint=signer.fingerprint)
    repositories.publish(artifact, {"jar": test_jar, "jar.asc": signer.sign(test_jar)})
    cdk_json = make_cdk_json()
    result = pin_listener(
        artifact,
        cdk_json,
        directory=tmp_path / "cache",
        pgp_key=signer.public_key,
        maven_settings=repositories.settings,
    )
    assert result.signature is not None and result.signature.fingerprint == signer.fingerprint
    assert "Signer <signer@example.com>" in result.signature.signer
    assert result.published_sha1 == hashlib.sha1(test_jar).hexdigest()
    assert result.jar.path == tmp_path / "cache" / artifact.file_name and result.jar.path.read_bytes() == test_jar
    assert load_settings("dev", cdk_json).versions.openlineage_spark.sha256 == hashlib.sha256(test_jar).hexdigest()


# --- the signature check itself (gpg on files) --------------------------------------------------


@pytest.fixture
def signed(tmp_path: Path, test_jar: bytes):
    """Write the jar and a signature (of ``content``, by ``key``) to files; return both paths."""

    def write(key: TestKey, content: bytes = test_jar, signature: bytes | None = None) -> tuple[Path, Path]:
        jar, asc = tmp_path / "listener.jar", tmp_path / "listener.jar.asc"
        jar.write_bytes(test_jar)
        asc.write_bytes(signature if signature is not None else key.sign(content))
        return jar, asc

    return write


def verify(key: TestKey, jar: Path, asc: Path, fingerprint: str | None = None):
    with Keyring(key.public_key, fingerprint or key.fingerprint) as keyring:
        return keyring.verify(jar, asc, what="g:a:1:jar.asc")


def test_a_good_signature_by_the_configured_key_is_accepted(signer, signed):
    good = verify(signer, *signed(signer))
    assert good.fingerprint == signer.fingerprint and "Signer" in good.signer


def test_a_signature_by_another_key_is_refused(signer, stranger, signed):
    with pytest.raises(SignatureError, match=rf"signed by key {stranger.fingerprint}, not by the configured key"):
        verify(signer, *signed(stranger))


def test_a_signature_of_other_content_is_a_bad_signature(signer, signed):
    with pytest.raises(SignatureError, match=r"g:a:1:jar\.asc: BAD signature.*; nothing kept"):
        verify(signer, *signed(signer, content=build_test_jar(created_by="tampered")))


@pytest.mark.parametrize("state", ["expired", "revoked"])
def test_a_signature_by_an_expired_or_revoked_key_is_refused(signed, tmp_path, state):
    if state == "expired":  # made and used in 2020, valid for one day
        key = TestKey(tmp_path / "old", "Old", made_at="20200101T000000", expires="1d")
        files = signed(key)
    else:
        key = TestKey(tmp_path / "revoked", "Revoked")
        files = signed(key)
        key.revoke()
    try:
        with pytest.raises(SignatureError, match=f"signed by an? {state.upper()} key"):
            verify(key, *files)
    finally:
        key.close()


def test_a_signature_file_that_holds_no_signature_is_refused(signer, signed):
    with pytest.raises(SignatureError, match="holds no OpenPGP signature"):
        verify(signer, *signed(signer, signature=b"<html>login</html>"))


def test_a_key_file_without_the_configured_fingerprint_or_no_key_is_refused(signer, stranger, tmp_path):
    with pytest.raises(SignatureError, match=rf"holds key {stranger.fingerprint}, not the key with fingerprint"):
        Keyring(stranger.public_key, signer.fingerprint)
    junk = tmp_path / "key.asc"
    junk.write_text("not a key\n")
    with pytest.raises(SignatureError, match="holds no OpenPGP public key"):
        Keyring(junk, signer.fingerprint)


def test_without_gpg_the_signature_cannot_be_checked(signer):
    with pytest.raises(SignatureError, match="no-such-gpg not found: install GnuPG"):
        Keyring(signer.public_key, signer.fingerprint, gpg="no-such-gpg")


# --- refused before Maven runs ------------------------------------------------------------------


def test_the_key_file_and_the_fingerprint_go_together(make_cdk_json, signer, tmp_path, no_mvn):
    with pytest.raises(ListenerError, match="pgp_fingerprint .*: pass --pgp-key FILE"):
        pin_listener(LISTENER.model_copy(update={"pgp_fingerprint": signer.fingerprint}), make_cdk_json())
    with pytest.raises(ListenerError, match="--pgp-key needs versions.openlineage_spark.pgp_fingerprint"):
        pin_listener(LISTENER, make_cdk_json(), pgp_key=signer.public_key)


def test_a_key_file_with_another_fingerprint_stops_before_maven(make_cdk_json, signer, stranger, tmp_path, no_mvn):
    artifact = LISTENER.model_copy(update={"pgp_fingerprint": signer.fingerprint})
    with pytest.raises(SignatureError, match=rf"holds key {stranger.fingerprint}"):
        pin_listener(artifact, make_cdk_json(), directory=tmp_path / "cache", pgp_key=stranger.public_key)
    assert not (tmp_path / "cache").exists()


def test_a_cdk_json_that_cannot_take_the_pin_stops_before_maven(tmp_path, no_mvn):
    cdk_json = tmp_path / "cdk.json"
    cdk_json.write_text('{"context": {"emr-lineage": {"versions": {"openlineage_spark": {}}}}}')
    with pytest.raises(PinFileError, match="cannot pin"):
        pin_listener(LISTENER, cdk_json, directory=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize(
    "settings, options, fragment",
    [
        ({"fingerprint": "FINGERPRINT"}, ["--pin"], "pass --pgp-key FILE"),
        ({}, ["--pin", "--pgp-key", "KEY"], "--pgp-key needs versions.openlineage_spark.pgp_fingerprint"),
        ({}, ["--pin", "--pgp-key", "MISSING"], "does not exist"),
    ],
)
def test_cli_refusals_before_maven_are_one_line_exit_2(
    make_cdk_json, signer, cache_dir, tmp_path, no_mvn, settings, options, fragment
):
    values = {"FINGERPRINT": signer.fingerprint, "KEY": str(signer.public_key), "MISSING": str(tmp_path / "x")}
    cdk_json = make_cdk_json(**{k: values[v] for k, v in settings.items()})
    before = cdk_json.read_bytes()
    one_error_line(
        fetch("--cdk-json", str(cdk_json), *(values.get(o, o) for o in options)), fragment, stdout_empty=True
    )
    assert cdk_json.read_bytes() == before and not cache_dir.exists()
