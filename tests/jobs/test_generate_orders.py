"""The seeded generator: deterministic, sized by --rows, realistic and a little dirty."""

from __future__ import annotations

import csv

import pytest


def _rows(directory):
    rows = []
    for path in sorted(directory.glob("*.csv")):
        with path.open(newline="") as handle:
            rows += list(csv.DictReader(handle))
    return rows


def test_same_seed_gives_identical_files(job, tmp_path):
    generate = job("generate_orders").generate
    generate(tmp_path / "a", 3000, seed=11)
    generate(tmp_path / "b", 3000, seed=11)
    generate(tmp_path / "c", 3000, seed=12)
    a = (tmp_path / "a/raw/orders/part-00000.csv").read_bytes()
    assert a == (tmp_path / "b/raw/orders/part-00000.csv").read_bytes()
    assert a != (tmp_path / "c/raw/orders/part-00000.csv").read_bytes()


def test_rows_and_stream_sizes(job, tmp_path):
    counts = job("generate_orders").generate(tmp_path, 4000, seed=3)
    batch = _rows(tmp_path / "raw/orders")
    stream = _rows(tmp_path / "raw/orders_stream")
    assert counts == {"orders": 4000, "stream_orders": 400}
    assert len({r["order_id"] for r in batch}) == 4000  # plus ~1% duplicate deliveries
    assert 4000 < len(batch) < 4100
    assert len(stream) == 400 and len(list((tmp_path / "raw/orders_stream").glob("*.csv"))) == 4
    # Stream orders are new orders, placed after the history.
    assert not {r["order_id"] for r in stream} & {r["order_id"] for r in batch}
    assert min(r["order_ts"] for r in stream) > max(r["order_ts"] for r in batch)


def test_data_is_realistic_and_a_little_dirty(job, tmp_path):
    job("generate_orders").generate(tmp_path, 5000, seed=5)
    batch = _rows(tmp_path / "raw/orders")
    statuses = {r["status"] for r in batch}
    assert {"completed", "cancelled", "returned", "test"} == statuses
    bad_quantity = [r for r in batch if not r["quantity"].lstrip("-").isdigit() or int(r["quantity"]) <= 0]
    assert 0 < len(bad_quantity) < len(batch) * 0.03
    customers = [r["customer_id"] for r in batch]
    assert len(set(customers)) < len(customers) / 2  # repeat customers


def test_bad_rows_argument_is_one_message(job, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        job("generate_orders").main(["--lake", str(tmp_path), "--rows", "0"])
    assert exit_info.value.code == 2
    assert "--rows must be at least 1" in capsys.readouterr().err
