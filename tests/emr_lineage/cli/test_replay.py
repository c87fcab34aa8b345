"""`emr-lineage gateway replay`'s options (the replay itself: tests/emr_lineage/gateway/test_replay.py)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from emr_lineage.cli import replay as replay_command
from emr_lineage.cli.app import main
from emr_lineage.errors import EmrLineageError
from tests.helpers import one_error_line


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
@pytest.mark.parametrize("url", ["notaurl", "http://", "http://[::1", "ftp://marquez:5000"])
def test_a_bad_marquez_url_is_refused_before_the_archive_is_listed(
    url: str, dry_run: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    aws_calls: list[str] = []

    def no_aws(service: str, *args: object, **kwargs: object) -> None:
        aws_calls.append(service)
        raise EmrLineageError("the archive was reached")

    monkeypatch.setattr(replay_command, "aws_client", no_aws)
    args = ["gateway", "replay", "--archive", "s3://lineage-archive", "--marquez", url, *dry_run]
    line = one_error_line(CliRunner().invoke(main, args), f"--marquez {url!r}", stdout_empty=True)
    assert "http" in line and "Error" not in line and "Invalid" not in line
    assert aws_calls == []
