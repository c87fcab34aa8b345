"""check_request: key, size and shape; normalisation, deduplication id, FIFO group, archive key."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Collection
from typing import Any

import pytest

from emr_lineage.aws.archive import archive_key, archive_prefixes, source_account
from emr_lineage.gateway.ingest import Accepted, Rejected, check_batch, check_request, key_account
from emr_lineage.lineage.naming import canonical_dataset, canonical_namespace
from tests.emr_lineage.gateway.events import KEY, PARENT_RUN_ID, ROOT_RUN_ID, RUN_ID, auth, body, clock, event


def check(
    headers: Any, raw: bytes, *, api_keys: Collection[str] | None = (KEY,), max_bytes: int = 1 << 20
) -> Accepted | Rejected:
    return check_request(headers, raw, api_keys=api_keys, max_bytes=max_bytes, clock=clock)


def accepted(raw: bytes) -> Accepted:
    result = check(auth(), raw)
    assert isinstance(result, Accepted), result
    return result


def rejected(raw: bytes, status: int = 400, headers: Any = "auth") -> str:
    result = check(auth() if headers == "auth" else headers, raw)
    assert isinstance(result, Rejected), result
    assert result.status == status
    assert "\n" not in result.reason and result.reason
    return result.reason


# --- key ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {},
        None,
        auth(key="wrong"),
        auth(key=""),
        auth(scheme="Basic"),
        {"Authorization": KEY},
        auth(key=KEY + "x"),
        auth(key="ключ"),  # non-ASCII must not crash the constant-time comparison
    ],
    ids=["missing", "no-headers", "wrong", "empty", "basic", "no-scheme", "longer", "non-ascii"],
)
def test_a_missing_or_wrong_key_is_401(headers: Any) -> None:
    reason = rejected(body(event()), 401, headers)
    assert "Authorization" in reason


@pytest.mark.parametrize("name", ["Authorization", "authorization", "AUTHORIZATION"])
@pytest.mark.parametrize("scheme", ["Bearer", "bearer"])
def test_the_right_key_passes_whatever_the_case_of_the_header(name: str, scheme: str) -> None:
    assert accepted_with(auth(name=name, scheme=scheme)).run_id == RUN_ID


def accepted_with(headers: dict[str, str]) -> Accepted:
    result = check(headers, body(event()))
    assert isinstance(result, Accepted), result
    return result


def test_no_key_configured_means_no_key_required() -> None:
    assert isinstance(check({}, body(event()), api_keys=None), Accepted)


def test_an_empty_configured_key_opens_nothing() -> None:
    for keys in ((), ("",)):
        result = check({"Authorization": "Bearer "}, body(event()), api_keys=keys)
        assert isinstance(result, Rejected) and result.status == 401


def test_any_of_several_keys_is_accepted_during_a_rotation() -> None:
    keys = ("new-key", KEY)
    assert isinstance(check(auth(key="new-key"), body(event()), api_keys=keys), Accepted)
    assert isinstance(check(auth(), body(event()), api_keys=keys), Accepted)
    result = check(auth(key="other"), body(event()), api_keys=keys)
    assert isinstance(result, Rejected) and result.status == 401


HUB, SPOKE = "123456789012", "210987654321"
BY_ACCOUNT = {KEY: HUB, "spoke-new": SPOKE, "spoke-old": SPOKE}


@pytest.mark.parametrize(("key", "account"), [(KEY, HUB), ("spoke-new", SPOKE), ("spoke-old", SPOKE)])
def test_keys_by_account_archive_each_event_under_its_keys_account(key: str, account: str) -> None:
    result = check(auth(key=key), body(event()), api_keys=BY_ACCOUNT)
    assert isinstance(result, Accepted), result
    assert source_account(result.archive_key) == account
    assert result.archive_key.endswith(f"-{result.dedup_id[:16]}-{account}.json")
    assert key_account(auth(key=key), BY_ACCOUNT) == account


def test_keys_by_account_refuse_any_other_key() -> None:
    for headers in ({}, auth(key="other"), auth(key="")):
        result = check(headers, body(event()), api_keys=BY_ACCOUNT)
        assert isinstance(result, Rejected) and result.status == 401
        assert key_account(headers, BY_ACCOUNT) is None
    assert key_account({"Authorization": "Bearer "}, {"": HUB}) is None  # an empty key opens nothing


def test_a_batch_with_a_spokes_key_archives_each_event_under_that_account() -> None:
    raw = json.dumps([event(eventType="START"), event()]).encode()
    results = check_batch(auth(key="spoke-new"), raw, api_keys=BY_ACCOUNT, max_bytes=1 << 20, max_batch_bytes=1 << 20)
    assert isinstance(results, list)
    assert [source_account(r.archive_key) for r in results if isinstance(r, Accepted)] == [SPOKE, SPOKE]
    refused = check_batch(auth(key="x"), raw, api_keys=BY_ACCOUNT, max_bytes=1 << 20, max_batch_bytes=1 << 20)
    assert isinstance(refused, Rejected) and refused.status == 401


def test_keys_without_accounts_archive_without_one() -> None:
    assert source_account(accepted(body(event())).archive_key) is None
    assert source_account(check({}, body(event()), api_keys=None).archive_key) is None


def test_the_key_is_checked_before_the_size() -> None:
    result = check({}, b"x" * 100, max_bytes=10)
    assert isinstance(result, Rejected) and result.status == 401


# --- size -------------------------------------------------------------------------------------


def test_a_body_over_the_limit_is_413() -> None:
    raw = body(event())
    result = check(auth(), raw, max_bytes=len(raw) - 1)
    assert isinstance(result, Rejected) and result.status == 413
    assert result.reason == f"the body is {len(raw)} bytes; the limit is {len(raw) - 1}"
    assert isinstance(check(auth(), raw, max_bytes=len(raw)), Accepted)


def test_an_event_over_the_limit_once_canonical_is_413() -> None:
    raw = json.dumps(event(job={"namespace": "n", "name": "é" * 50}), ensure_ascii=False).encode()
    result = check(auth(), raw, max_bytes=len(raw) + 10)  # \u00e9 is 6 bytes where é was 2
    assert isinstance(result, Rejected) and result.status == 413 and "once normalised" in result.reason


# --- shape ------------------------------------------------------------------------------------


def without(path: str) -> dict[str, Any]:
    value = event()
    *parents, last = path.split(".")
    node = value
    for part in parents:
        node = node[part]
    del node[last]
    return value


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"\xff\xfe{}", "not UTF-8"),
        (b"{not json", "not JSON"),
        (b"", "not JSON"),
        (b"[1, 2]", "JSON array; send a batch to /api/v1/lineage/batch"),
        (b'"COMPLETE"', "JSON string, not an object"),
        (body(without("eventType")), "eventType is missing"),
        (body(without("eventTime")), "eventTime is missing"),
        (body(event(eventTime="yesterday")), "eventTime: 'yesterday' is not an RFC 3339 date-time"),
        (body(event(eventTime="2026-11-21T12:00:00")), "has no UTC offset"),
        (body({"eventTime": "2026-11-21T12:00:00Z"}), "producer is missing or not a string"),
        (body(without("schemaURL")), "schemaURL is missing or not a string"),
        (body(event(run=[])), "run is missing or not an object"),
        (body(without("run.runId")), "run.runId is missing"),
        (body(event(run_id="../../etc")), "run.runId: '../../etc' is not a UUID"),
        (body(without("job")), "job is missing"),
        (body(without("job.namespace")), "job.namespace is missing"),
        (body(without("job.name")), "job.name is missing"),
        (body(event(inputs={"namespace": "s3://b"})), "inputs is not a list"),
        (body(event(outputs=[{"name": "k"}])), "outputs[0].namespace is missing"),
        (body(event(parent="not-a-uuid")), "run.facets.parent.run.runId: 'not-a-uuid' is not a UUID"),
    ],
)
def test_a_malformed_event_is_400_with_the_reason(raw: bytes, fragment: str) -> None:
    assert fragment in rejected(raw)


# --- what an accepted event carries ----------------------------------------------------------


@pytest.mark.parametrize(
    ("event_time", "compact"),
    [
        ("2026-11-21T11:00:03.250Z", "20261121T110003250000Z"),
        ("2026-11-21T11:00:03.123456789Z", "20261121T110003123456Z"),  # Java's nanoseconds
        ("2026-11-21T16:30:03+05:30", "20261121T110003000000Z"),
    ],
)
def test_event_times_are_read_as_iso_8601_with_an_offset(event_time: str, compact: str) -> None:
    result = accepted(body(event(eventTime=event_time)))
    assert f"/{RUN_ID}/{compact}-" in result.archive_key
    assert result.event["eventTime"] == event_time  # forwarded as sent


def test_dataset_namespaces_are_normalised_by_the_shared_function() -> None:
    result = accepted(body(event()))
    assert result.event["inputs"][0]["namespace"] == "s3://lake"
    assert result.event["outputs"][0]["namespace"] == "s3://lake"
    fields = result.event["outputs"][0]["facets"]["columnLineage"]["fields"]
    assert fields["amount"]["inputFields"][0]["namespace"] == "s3://lake"
    assert json.loads(result.canonical) == result.event
    assert result.event["job"] == {"namespace": "emr-lineage-dev", "name": "app.write"}  # not a dataset


@pytest.mark.parametrize(
    ("namespace", "expected"),
    [("s3a://b", "s3://b"), ("s3n://b/", "s3://b"), ("S3A://b", "s3://b"), ("gs://b", "gs://b"), ("db", "db")],
)
def test_canonical_namespace_is_what_canonical_dataset_uses(namespace: str, expected: str) -> None:
    assert canonical_namespace(namespace) == expected
    assert canonical_dataset(namespace, "k")[0] == expected


def test_the_canonical_form_is_sorted_compact_ascii() -> None:
    result = accepted(body(event(job={"name": "é", "namespace": "n"})))
    text = result.canonical.decode("ascii")
    assert text.startswith('{"eventTime":') and ", " not in text and "\\u00e9" in text


def test_the_dedup_id_is_stable_under_key_order_and_whitespace() -> None:
    value = event()
    reordered = dict(reversed(list(value.items())))
    one = accepted(json.dumps(value).encode())
    two = accepted(json.dumps(reordered, indent=4, separators=(" ,  ", " : ")).encode())
    three = accepted(body(event(eventType="FAIL")))
    assert one.dedup_id == two.dedup_id != three.dedup_id
    assert len(one.dedup_id) == 64 and int(one.dedup_id, 16) >= 0


def test_s3a_and_s3_spellings_are_one_event_for_deduplication() -> None:
    s3 = event(
        inputs=[{"namespace": "s3://lake", "name": "raw/orders"}],
        outputs=[{"namespace": "s3://lake", "name": "clean/orders"}],
    )
    spelled = event(
        inputs=[{"namespace": "s3a://lake", "name": "raw/orders"}],
        outputs=[{"namespace": "s3n://lake/", "name": "clean/orders"}],
    )
    other = event(inputs=[{"namespace": "s3://other", "name": "raw/orders"}], outputs=[])
    assert accepted(body(s3)).dedup_id == accepted(body(spelled)).dedup_id != accepted(body(other)).dedup_id


def test_the_group_is_the_parent_run_when_there_is_one() -> None:
    assert accepted(body(event())).group_id == RUN_ID
    child = accepted(body(event(parent=PARENT_RUN_ID)))
    assert (child.group_id, child.run_id) == (PARENT_RUN_ID, RUN_ID)


def test_the_group_is_the_root_run_when_the_parent_facet_names_one() -> None:
    # An application (parent: the launch's run) and its action (parent: the application) share the root.
    application = accepted(body(event(run_id=PARENT_RUN_ID, parent=ROOT_RUN_ID, root=ROOT_RUN_ID)))
    action = accepted(body(event(parent=PARENT_RUN_ID, root=ROOT_RUN_ID)))
    assert application.group_id == action.group_id == ROOT_RUN_ID
    assert action.archive_key.split("/")[3] == ROOT_RUN_ID
    refused = check_request(
        auth(), body(event(parent=PARENT_RUN_ID, root="x")), api_keys=[KEY], max_bytes=1 << 20, clock=clock
    )
    assert refused == Rejected(400, "run.facets.parent.root.run.runId: 'x' is not a UUID")


def test_the_archive_key_uses_the_gateways_clock_not_the_event_time() -> None:
    result = accepted(body(event(parent=PARENT_RUN_ID)))
    assert result.archive_key == (
        f"raw/date=2026-11-23/hour=17/{PARENT_RUN_ID}/20261121T110003250000Z-{result.dedup_id[:16]}.json"
    )


def test_archive_keys_of_one_run_sort_by_event_time() -> None:
    received = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC)
    times = [dt.datetime(2026, 1, 2, 3, 0, s, tzinfo=dt.UTC) for s in (9, 10, 59)]
    keys = [archive_key(received, RUN_ID, t, "ffff0000") for t in reversed(times)]
    assert sorted(keys) == list(reversed(keys))


def test_archive_prefixes_list_a_time_range_by_hour_and_by_run() -> None:
    start = dt.datetime(2026, 11, 23, 22, 59, tzinfo=dt.UTC)
    end = dt.datetime(2026, 11, 24, 1, 0, tzinfo=dt.timezone(dt.timedelta(hours=1)))  # 00:00 UTC
    assert archive_prefixes(start, end) == ["raw/date=2026-11-23/hour=22/", "raw/date=2026-11-23/hour=23/",
                                            "raw/date=2026-11-24/hour=00/"]  # fmt: skip
    assert archive_prefixes(start, start, RUN_ID) == [f"raw/date=2026-11-23/hour=22/{RUN_ID}/"]
    key = accepted(body(event())).archive_key
    assert key.startswith(archive_prefixes(clock(), clock(), RUN_ID)[0])
