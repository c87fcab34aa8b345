"""OpenLineage dataset naming of storage URIs (https://openlineage.io/docs/spec/naming)."""

from __future__ import annotations

import os

import pytest

from emr_lineage.lineage.naming import (
    NamingError,
    canonical_dataset,
    dataset_identity,
    dataset_node_id,
    dataset_uri,
    job_node_id,
)


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("s3://bucket/clean/orders_clean", ("s3://bucket", "clean/orders_clean")),
        ("s3a://bucket/clean/orders_clean", ("s3://bucket", "clean/orders_clean")),
        ("s3n://bucket/clean/orders_clean/", ("s3://bucket", "clean/orders_clean")),
        ("s3://bucket//raw/orders//", ("s3://bucket", "raw/orders")),
        ("s3://bucket", ("s3://bucket", "/")),
        ("gs://b/k/", ("gs://b", "k")),
        ("file:/tmp/lake/raw/orders", ("file", "/tmp/lake/raw/orders")),
        ("file:///tmp/lake/raw/orders/", ("file", "/tmp/lake/raw/orders")),
        ("file://localhost/tmp/x", ("file", "/tmp/x")),
        ("/tmp/lake/clean/", ("file", "/tmp/lake/clean")),
        ("/", ("file", "/")),
        ("hdfs://namenode:8020/warehouse/t/", ("hdfs://namenode:8020", "/warehouse/t")),
        ("abfss://c@acct.dfs.core.windows.net/p", ("abfss://c@acct.dfs.core.windows.net", "/p")),
    ],
)
def test_dataset_identity_follows_openlineage_naming(uri: str, expected: tuple[str, str]) -> None:
    assert dataset_identity(uri) == expected


def test_relative_path_is_made_absolute(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert dataset_identity("lake/raw/") == ("file", os.path.join(str(tmp_path), "lake", "raw"))


@pytest.mark.parametrize("bad", ["", "   ", "s3:///key-without-bucket", "file://otherhost/tmp/x"])
def test_unusable_uris_raise_naming_error(bad: str) -> None:
    with pytest.raises(NamingError):
        dataset_identity(bad)


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("s3a://b", "k/", ("s3://b", "k")),
        ("s3://b/", "/k", ("s3://b", "k")),
        ("file", "/tmp/x/", ("file", "/tmp/x")),
        ("hdfs://nn:8020", "/p/", ("hdfs://nn:8020", "/p")),
        ("arn:aws:glue:eu-west-1:123456789012", "table/db/t", ("arn:aws:glue:eu-west-1:123456789012", "table/db/t")),
    ],
)
def test_canonical_dataset_merges_spellings(namespace: str, name: str, expected: tuple[str, str]) -> None:
    assert canonical_dataset(namespace, name) == expected


def test_canonical_agrees_with_dataset_identity() -> None:
    for uri in ("s3a://b/x/y/", "file:/tmp/a/", "hdfs://nn:1/p"):
        assert canonical_dataset(*dataset_identity(uri)) == dataset_identity(uri)


def test_marquez_node_ids() -> None:
    assert dataset_node_id("s3://b", "clean/x") == "dataset:s3://b:clean/x"
    assert job_node_id("emr-lineage-dev", "ingest_orders") == "job:emr-lineage-dev:ingest_orders"


def test_dataset_uri_is_readable() -> None:
    assert dataset_uri("s3://b", "k") == "s3://b/k"
    assert dataset_uri("file", "/tmp/x") == "/tmp/x"
    assert dataset_uri("hdfs://nn:8020", "/p") == "hdfs://nn:8020/p"
    assert dataset_uri("arn:aws:glue:r:1", "table/db/t") == "arn:aws:glue:r:1:table/db/t"
