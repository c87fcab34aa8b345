"""The archive's key layout with the source account: keys written before accounts were recorded and after
are read by the same rules (hours, a run's folder, eventTime order, one copy of a resent body)."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from emr_lineage.aws.archive import (
    ACCOUNT_IN_KEY,
    archive_key,
    archive_prefixes,
    copy_id,
    group_of,
    is_account_id,
    source_account,
)

RUN = "0190f3f2-7a3b-7c2d-9e1f-123456789abc"
HUB, SPOKE = "123456789012", "210987654321"
RECEIVED = dt.datetime(2026, 11, 23, 17, 5, 9, tzinfo=dt.UTC)
EVENT_TIME = dt.datetime(2026, 11, 23, 17, 5, 8, 250000, tzinfo=dt.UTC)
DEDUP = "0123456789abcdef" + "0" * 48


def test_the_account_ends_the_file_name() -> None:
    assert archive_key(RECEIVED, RUN, EVENT_TIME, DEDUP, SPOKE) == (
        f"raw/date=2026-11-23/hour=17/{RUN}/20261123T170508250000Z-0123456789abcdef-{SPOKE}.json"
    )
    assert archive_key(RECEIVED, RUN, EVENT_TIME, DEDUP) == (
        f"raw/date=2026-11-23/hour=17/{RUN}/20261123T170508250000Z-0123456789abcdef.json"
    )


@pytest.mark.parametrize("account", [SPOKE, HUB, None])
def test_the_source_account_is_read_back_and_none_without_one(account: str | None) -> None:
    assert source_account(archive_key(RECEIVED, RUN, EVENT_TIME, DEDUP, account)) == account


@pytest.mark.parametrize("dedup", ["1234567890123456", "abcdef012345" + "6789", "-" * 16])
def test_a_key_without_an_account_never_reads_as_one(dedup: str) -> None:
    """Twelve digits end an old name's deduplication id too: the hyphen before them is what tells."""
    key = archive_key(RECEIVED, RUN, EVENT_TIME, dedup)
    assert source_account(key) is None
    assert source_account("s3://archive/" + key) is None  # as Athena's "$path" gives it


def test_the_pattern_reads_the_whole_s3_uri_as_athena_gives_it() -> None:
    path = "s3://archive/copy/" + archive_key(RECEIVED, RUN, EVENT_TIME, DEDUP, SPOKE)
    assert re.search(ACCOUNT_IN_KEY, path).group(1) == SPOKE


@pytest.mark.parametrize("bad", ["1234", "12345678901a", "1234567890123", ""])
def test_an_account_that_is_not_twelve_digits_is_refused(bad: str) -> None:
    assert not is_account_id(bad)
    with pytest.raises(ValueError, match="is not an AWS account id"):
        archive_key(RECEIVED, RUN, EVENT_TIME, DEDUP, bad)


def test_a_body_resent_in_another_hour_is_one_copy_whichever_key_and_layout() -> None:
    """The queue deduplicates the same body from any key; the archive's readers keep one copy likewise."""
    later = RECEIVED + dt.timedelta(hours=1)
    copies = {
        archive_key(RECEIVED, RUN, EVENT_TIME, DEDUP, SPOKE),
        archive_key(later, RUN, EVENT_TIME, DEDUP, SPOKE),
        archive_key(later, RUN, EVENT_TIME, DEDUP, HUB),
        archive_key(later, RUN, EVENT_TIME, DEDUP),  # archived before accounts were recorded
    }
    assert len(copies) == 4
    assert {copy_id(key) for key in copies} == {f"{RUN}/20261123T170508250000Z-0123456789abcdef.json"}
    other = archive_key(RECEIVED, RUN, EVENT_TIME, "fedcba9876543210", SPOKE)
    assert copy_id(other) != copy_id(archive_key(RECEIVED, RUN, EVENT_TIME, DEDUP, SPOKE))


def test_a_runs_prefix_and_group_hold_keys_with_and_without_an_account() -> None:
    (prefix,) = archive_prefixes(RECEIVED, RECEIVED, RUN)
    for account in (SPOKE, None):
        key = archive_key(RECEIVED, RUN, EVENT_TIME, DEDUP, account)
        assert key.startswith(prefix) and group_of(key) == RUN


def test_one_runs_keys_sort_by_event_time_whatever_their_accounts() -> None:
    times = [EVENT_TIME + dt.timedelta(seconds=s) for s in (0, 1, 59)]
    keys = [archive_key(RECEIVED, RUN, t, DEDUP, account) for t, account in zip(times, (SPOKE, None, HUB), strict=True)]
    assert sorted(keys) == keys
