"""Seeded generator of realistic sample orders for the pipeline (local lake only).

Writes ``<lake>/raw/orders/part-NNNNN.csv`` (the batch history) and
``<lake>/raw/orders_stream/batch-NNNNN.csv`` (new orders for ``score_stream``). The same seed
and row count always give byte-identical files. A small share of rows is deliberately dirty
(duplicates, empty or negative quantities, unparsable prices, test orders) so ``ingest_orders``
has real cleaning to do.

    python jobs/generate_orders.py --lake /tmp/lake --rows 100000 [--seed 7]
"""

from __future__ import annotations

import argparse
import csv
import random
import shutil
import sys
from datetime import datetime, timedelta
from pathlib import Path

COLUMNS = [
    "order_id",
    "customer_id",
    "order_ts",
    "product_category",
    "country",
    "quantity",
    "unit_price",
    "discount",
    "status",
]
# category -> (mean unit price, spread); prices are log-normal-ish around the mean.
CATEGORIES = {
    "books": (18.0, 0.35),
    "electronics": (240.0, 0.6),
    "grocery": (6.5, 0.4),
    "home": (55.0, 0.5),
    "toys": (25.0, 0.45),
    "apparel": (40.0, 0.4),
    "sports": (70.0, 0.5),
}
CATEGORY_WEIGHTS = [14, 9, 30, 12, 8, 17, 10]
COUNTRIES = ["US", "DE", "FR", "GB", "ES", "IT", "NL", "PL", "SE", "JP"]
COUNTRY_WEIGHTS = [35, 12, 10, 12, 6, 6, 5, 5, 4, 5]
STATUSES = ["completed", "cancelled", "returned"]
STATUS_WEIGHTS = [88, 8, 4]
DISCOUNTS = [0.0, 0.0, 0.0, 0.05, 0.1, 0.15, 0.2]
START = datetime(2026, 8, 1)
DAYS = 90
ROWS_PER_FILE = 250_000
STREAM_FILES = 4


def _order(rng: random.Random, order_no: int, customers: int, start: datetime, days: int) -> list[str]:
    category = rng.choices(list(CATEGORIES), CATEGORY_WEIGHTS)[0]
    mean, spread = CATEGORIES[category]
    price = round(mean * rng.lognormvariate(0.0, spread), 2)
    ts = start + timedelta(seconds=rng.randrange(days * 86_400))
    # Repeat customers: a skewed draw so a few customers place many orders.
    customer = int(customers * rng.random() ** 2) + 1
    row = [
        f"O{order_no:09d}",
        f"C{customer:07d}",
        ts.strftime("%Y-%m-%d %H:%M:%S"),
        category,
        rng.choices(COUNTRIES, COUNTRY_WEIGHTS)[0],
        str(rng.choice([1, 1, 1, 2, 2, 3, 4, 5])),
        f"{price:.2f}",
        f"{rng.choice(DISCOUNTS):.2f}",
        rng.choices(STATUSES, STATUS_WEIGHTS)[0],
    ]
    dirt = rng.random()
    if dirt < 0.005:
        row[5] = ""  # missing quantity
    elif dirt < 0.01:
        row[5] = "-1"  # impossible quantity
    elif dirt < 0.013:
        row[6] = "n/a"  # unparsable price
    elif dirt < 0.015:
        row[8] = "test"  # internal test order
    return row


def _write(path: Path, rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)


def generate(lake: Path, rows: int, seed: int = 7, stream_rows: int | None = None) -> dict[str, int]:
    """Write the raw batch and stream files; return how many rows each got."""
    if rows < 1:
        raise ValueError(f"--rows must be at least 1, got {rows}")
    stream_rows = max(1, rows // 10) if stream_rows is None else stream_rows
    rng = random.Random(seed)
    customers = max(10, rows // 8)
    batch_dir, stream_dir = lake / "raw" / "orders", lake / "raw" / "orders_stream"
    for directory in (batch_dir, stream_dir):
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)

    chunk: list[list[str]] = []
    part = 0
    for order_no in range(1, rows + 1):
        chunk.append(_order(rng, order_no, customers, START, DAYS))
        if rng.random() < 0.01:
            chunk.append(list(chunk[-1]))  # duplicate delivery of the same order
        if len(chunk) >= ROWS_PER_FILE:
            _write(batch_dir / f"part-{part:05d}.csv", chunk)
            chunk, part = [], part + 1
    if chunk:
        _write(batch_dir / f"part-{part:05d}.csv", chunk)

    # Stream: orders placed after the batch history, split into a few arrival files.
    stream_start = START + timedelta(days=DAYS)
    per_file = -(-stream_rows // STREAM_FILES)
    order_no = rows
    for index in range(STREAM_FILES):
        count = min(per_file, stream_rows - index * per_file)
        if count <= 0:
            break
        batch = []
        for _ in range(count):
            order_no += 1
            batch.append(_order(rng, order_no, customers, stream_start, 1))
        _write(stream_dir / f"batch-{index:05d}.csv", batch)
    return {"orders": rows, "stream_orders": stream_rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lake", required=True, help="local lake directory (created if missing)")
    parser.add_argument("--rows", type=int, default=100_000, help="orders in the batch history")
    parser.add_argument("--stream-rows", type=int, default=None, help="orders in the stream (default rows/10)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    if "://" in args.lake and not args.lake.startswith("file://"):
        parser.error(f"--lake must be a local directory, got {args.lake}")
    try:
        counts = generate(Path(args.lake.removeprefix("file://")), args.rows, args.seed, args.stream_rows)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"generated {counts['orders']} orders and {counts['stream_orders']} stream orders in {args.lake}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
