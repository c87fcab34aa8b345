"""Small helpers shared by the test modules (fixtures live in the conftest files)."""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest


def fake_aws_credentials(monkeypatch: pytest.MonkeyPatch, region: str) -> None:
    """Credentials moto accepts, in ``region``; no profile of the machine's leaks in."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": region,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


_CREDENTIAL_SOURCES = (
    *(
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_REGION",
        "AWS_ENDPOINT_URL",
    ),
    *("AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"),
)


def without_aws_credentials(monkeypatch: pytest.MonkeyPatch, nowhere: Path, region: str) -> None:
    """No credentials anywhere botocore looks (``nowhere``: a path with no file; no instance or container
    metadata either: no network wait), and ``region``."""
    for name in _CREDENTIAL_SOURCES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", region)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(nowhere))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(nowhere))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@contextlib.contextmanager
def moto_s3(monkeypatch: pytest.MonkeyPatch, region: str, bucket: str) -> Iterator[Any]:
    """moto's S3 in this process (every client the test makes, the code's too) with ``bucket`` in ``region``;
    yields a client."""
    import boto3
    from moto import mock_aws

    fake_aws_credentials(monkeypatch, region)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        client = boto3.client("s3", region_name=region)
        # us-east-1 takes no location constraint (S3 refuses it, and so does moto)
        where = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        client.create_bucket(Bucket=bucket, **where)
        yield client


def one_error_line(result: Any, fragment: str = "", *, stdout_empty: bool = False) -> str:
    """A click result that ended as docs/cli.md says bad input ends: exit 2, one ``error:`` line
    on stderr (containing ``fragment``), no traceback. Returns the line."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and fragment in lines[0], lines[0]
    assert "Traceback" not in result.output + result.stderr
    if stdout_empty:
        assert result.stdout == "", result.stdout
    return lines[0]


def ctrl_c_as_in_a_terminal() -> None:
    """``preexec_fn`` of a child a test interrupts with SIGINT: a test run started as a background job inherits
    SIGINT ignored (POSIX), and Python then turns it into no KeyboardInterrupt; a terminal's Ctrl-C would."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def command_contexts(*, groups: bool = False) -> dict[str, click.Context]:
    """Each command of ``emr-lineage`` (a group that runs, ``runs``, too; with ``groups``, each group, ``emr-lineage``
    itself ``""``) by its
    command line after ``emr-lineage``, in the context its help is written in (imports them all)."""
    from emr_lineage.cli.app import main
    from emr_lineage.cli.output import CommandGroup

    found: dict[str, click.Context] = {}

    def walk(command: click.Command, names: list[str], parent: click.Context | None) -> None:
        context = click.Context(command, info_name=names[-1] if names else "emr-lineage", parent=parent)
        if not isinstance(command, click.Group) or isinstance(command, CommandGroup) or groups:  # runs, too
            found[" ".join(names)] = context
        if isinstance(command, click.Group):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None and sub.name == name, name  # each entry names its command
                walk(sub, [*names, name], context)

    walk(main, [], None)
    return found


def every_command() -> dict[str, click.Command]:
    """Every command of ``emr-lineage`` that runs (not a group), by its command line after ``emr-lineage``:
    ``graph``, ``listener fetch``, ``gateway archive query``... (imports them all)."""
    return {name: context.command for name, context in command_contexts().items()}
