"""The Spark job of ``emr-lineage graph --spark MASTER`` and ``--on-emr``: the lineage graph of event
files or of the gateway's archive, built by the partitions and merged on the driver
(:mod:`emr_lineage.analysis.spark_graph`), written as ``emr-lineage graph --format json`` writes it.

Run by path with ``spark-submit`` (the executors import ``emr_lineage``: the same Python environment
on a local master, ``--py-files`` with the package's zip on EMR)::

    spark-submit emr_lineage/analysis/spark_graph_job.py --events events/ --output graph.json
    spark-submit --py-files emr_lineage.zip spark_graph_job.py --archive s3://bucket --since 2026-11-20 \\
        --output s3://artifacts/emr-logs/graphs/run/graph.json

``--report FILE`` (a local path) gets what was read, as JSON (events, parts, problems, the driver's
peak RSS, seconds); exit 0 when the graph is written, 2 when the input is refused (that line is the
report's ``error``).
"""

from __future__ import annotations

import argparse
import functools
import json
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from emr_lineage.analysis.spark_graph import (
    BuildOptions,
    Summary,
    archive_globs,
    archive_part,
    json_files_part,
    lines_part,
    merge_parts,
)
from emr_lineage.errors import EXIT_CANNOT_RUN, EXIT_OK
from emr_lineage.lineage.events.sources import event_sources
from emr_lineage.lineage.graph.model import LEVELS, LineageGraph
from emr_lineage.lineage.report.render import json_bytes
from emr_lineage.lineage.times import Window, parse_instant

APP_NAME = "emr_lineage_graph"


def _is_uri(path: str) -> bool:
    return "://" in path


def _hadoop(sc: Any) -> tuple[Any, Any]:
    return sc._jvm.org.apache.hadoop.fs.Path, sc._jsc.hadoopConfiguration()


def _matching(sc: Any, globs: Sequence[str]) -> list[str]:
    """The globs that match a file: Hadoop refuses a read of one that matches none."""
    hadoop_path, conf = _hadoop(sc)
    kept = []
    for glob in globs:
        path = hadoop_path(glob)
        found = path.getFileSystem(conf).globStatus(path)
        if found is not None and len(found):
            kept.append(glob)
    return kept


def parts_of_events(sc: Any, paths: Sequence[str], options: BuildOptions) -> list[Any]:
    """The parts of event files: JSON Lines split by Spark into lines, ``.json`` files whole."""
    lines, whole = [], []
    for path in paths:
        if _is_uri(path):
            (whole if path.removesuffix(".gz").endswith(".json") else lines).append(path)
            continue
        for source in event_sources([path]):  # directories expanded as the loader expands them
            (lines if source.is_lines else whole).append(str(source.path))
    parts = []
    if lines:
        rdd = sc.textFile(",".join(lines), sc.defaultParallelism, use_unicode=False)
        parts += rdd.mapPartitionsWithIndex(functools.partial(lines_part, options)).collect()
    if whole:
        offset = len(parts)
        rdd = sc.parallelize(whole, min(len(whole), sc.defaultParallelism))
        found = rdd.mapPartitionsWithIndex(functools.partial(json_files_part, options)).collect()
        for part in found:
            part.index += offset
        parts += found
    return parts


def parts_of_archive(sc: Any, root: str, window: Window, options: BuildOptions) -> list[Any]:
    """The parts of the archive's objects in ``window``'s hours (an hour without objects is skipped)."""
    globs = _matching(sc, archive_globs(root, window))
    if not globs:
        return []
    from pyspark.sql import SparkSession  # the job's session (never a second one)

    # The file source packs small objects into partitions counting each one's opening cost
    # (spark.sql.files.openCostInBytes): an archive of many small objects is spread over the cores.
    objects = SparkSession.builder.getOrCreate().read.format("binaryFile").load(globs).select("path", "content")
    return objects.rdd.mapPartitionsWithIndex(functools.partial(archive_part, options, window)).collect()


def build_on_spark(
    sc: Any,
    options: BuildOptions,
    events: Sequence[str] = (),
    archive: str | None = None,
    window: Window | None = None,
) -> tuple[LineageGraph, Summary]:
    """The graph of ``events`` (files, directories) or of ``archive`` in ``window``, built on ``sc``."""
    return merge_parts(collect_parts(sc, options, events, archive, window), options)


def collect_parts(
    sc: Any, options: BuildOptions, events: Sequence[str], archive: str | None, window: Window | None
) -> list[Any]:
    """What the partitions merged, collected on the driver."""
    if archive:
        return parts_of_archive(sc, archive, window or Window(), options)
    return parts_of_events(sc, events, options)


def write_output(sc: Any, data: bytes, output: str) -> None:
    """``data`` to a local path, or through Hadoop's file system to a URI (``s3://`` on EMR)."""
    if not _is_uri(output):
        Path(output).write_bytes(data)
        return
    with tempfile.TemporaryDirectory() as directory:
        local = Path(directory) / "graph.json"
        local.write_bytes(data)
        hadoop_path, conf = _hadoop(sc)
        target = hadoop_path(output)
        target.getFileSystem(conf).copyFromLocalFile(True, True, hadoop_path(local.as_uri()), target)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=APP_NAME, description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--events", nargs="+", metavar="PATH")
    source.add_argument("--archive", metavar="URI")
    parser.add_argument("--since")
    parser.add_argument("--until")
    parser.add_argument("--level", choices=LEVELS, default="application")
    parser.add_argument("--no-column-lineage", action="store_true")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--skip-invalid", action="store_true")
    parser.add_argument("--with-runs", action="store_true")
    parser.add_argument("--schema-dir")
    parser.add_argument("--output", required=True)
    parser.add_argument("--report")
    return parser.parse_args(argv)


def _refusal(args: argparse.Namespace, summary: Summary) -> str | None:
    """Why the graph is not written (one line), or None."""
    where = args.archive or ", ".join(args.events)
    if summary.problems and args.events and not args.skip_invalid:
        return f"{summary.details[0]} ({summary.problems} invalid event(s) in {where}; --skip-invalid skips them)"
    if not summary.events:
        return f"{where}: no events to build a graph from"
    return None


def run(sc: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Build and write the graph; the report (``error`` set when the input is refused)."""
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    options = BuildOptions(args.level, not args.no_column_lineage, args.strict, args.schema_dir, args.with_runs)
    window = Window(
        parse_instant(args.since, "--since") if args.since else None,
        parse_instant(args.until, "--until") if args.until else None,
    )
    parts = collect_parts(sc, options, args.events or (), args.archive, window)
    collected = time.perf_counter()
    graph, summary = merge_parts(parts, options)
    del parts
    built = time.perf_counter()
    report: dict[str, Any] = {**summary.as_dict(), "source": "archive" if args.archive else "events"}
    report["error"] = _refusal(args, summary)
    if report["error"] is None:
        write_output(sc, json_bytes(graph), args.output)
        report["nodes"] = len(graph.nodes)
    seconds = {"partitions": collected - started, "merge": built - collected, "build": built - started}
    report["seconds"] = {key: round(value, 3) for key, value in seconds.items()}
    report["seconds"]["total"] = round(time.perf_counter() - started, 3)
    report["driver_rss_at_start"] = before
    report["driver_peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return report


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    from pyspark.sql import SparkSession  # on the driver only: the executors never import this module

    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        report = run(spark.sparkContext, args)
        line = json.dumps(report, sort_keys=True)
        print(line, flush=True)
        if args.report:
            Path(args.report).write_text(line + "\n", encoding="utf-8")
        if _is_uri(args.output):  # beside the graph, for whoever downloads it (graph --on-emr)
            write_output(spark.sparkContext, line.encode() + b"\n", args.output + ".report.json")
    finally:
        spark.stop()
    if report["error"]:
        print(f"error: {report['error']}", file=sys.stderr)
    return EXIT_CANNOT_RUN if report["error"] else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
