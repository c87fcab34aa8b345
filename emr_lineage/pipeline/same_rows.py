"""Whether an Iceberg table holds the same rows at a snapshot as at others (a multiset: EXCEPT ALL both ways is
empty).

    spark-submit same_rows.py TABLE RESULT_JSON SNAPSHOT_A SNAPSHOT_B [SNAPSHOT_C ...]

Run by the demo's reproduction (:mod:`emr_lineage.pipeline.reproduce`) without the listener: a check, not
part of the lineage. Writes, for each snapshot after A, ``{"rowsA", "rowsB", "onlyInA", "onlyInB"}`` to
RESULT_JSON (a list, in the order given).
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import SparkSession


def main(argv: list[str]) -> int:
    table, result, first, *others = argv
    spark = SparkSession.builder.appName("same_rows").getOrCreate()
    try:
        a = spark.read.option("snapshot-id", first).table(table)
        rows_a = a.count()
        counts = []
        for other in others:
            b = spark.read.option("snapshot-id", other).table(table)
            counts.append(
                {
                    "rowsA": rows_a,
                    "rowsB": b.count(),
                    "onlyInA": a.exceptAll(b).count(),
                    "onlyInB": b.exceptAll(a).count(),
                }
            )
    finally:
        spark.stop()
    with open(result, "w", encoding="utf-8") as handle:
        json.dump(counts, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
