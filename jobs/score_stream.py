"""score_stream: Structured Streaming that scores new orders with ``<lake>/models/order_value_model``
and writes ``<lake>/curated/order_scores``.

Source: the file stream ``<lake>/raw/orders_stream/`` (CSV), or a Kafka topic when
``--kafka-bootstrap`` and ``--kafka-topic`` are given (JSON values with the raw order columns; the
``spark-sql-kafka-0-10`` package must be on the classpath). The query runs with the available-now
trigger: it processes everything there is, then ends.

    spark-submit score_stream.py --lake s3://my-lake-bucket [--kafka-bootstrap b:9092 --kafka-topic orders]
"""

from __future__ import annotations

import argparse
import sys

from pyspark.ml import PipelineModel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StringType, StructField, StructType

APP_NAME = "score_stream"
RAW_COLUMNS = [
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
RAW_SCHEMA = StructType([StructField(name, StringType()) for name in RAW_COLUMNS])


def lake_path(lake: str, relative: str) -> str:
    return f"{lake.rstrip('/')}/{relative}"


def read_order_stream(spark: SparkSession, args: argparse.Namespace) -> DataFrame:
    if args.kafka_bootstrap:
        messages = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", args.kafka_bootstrap)
            .option("subscribe", args.kafka_topic)
            .option("startingOffsets", "earliest")
            .load()
        )
        return messages.select(F.from_json(F.col("value").cast("string"), RAW_SCHEMA).alias("o")).select("o.*")
    return (
        spark.readStream.option("header", "true")
        .option("maxFilesPerTrigger", 2)
        .schema(RAW_SCHEMA)
        .csv(lake_path(args.lake, "raw/orders_stream/"))
    )


def prepare_features(raw: DataFrame) -> DataFrame:
    """The model's input columns, typed like the table orders_clean; unusable rows are dropped."""
    typed = raw.select(
        F.trim("order_id").alias("order_id"),
        F.trim("customer_id").alias("customer_id"),
        F.to_timestamp("order_ts", "yyyy-MM-dd HH:mm:ss").alias("order_ts"),
        F.lower(F.trim("product_category")).alias("product_category"),
        F.upper(F.trim("country")).alias("country"),
        F.col("quantity").cast("double").alias("quantity"),
        F.col("unit_price").cast("double").alias("unit_price"),
        F.coalesce(F.col("discount").cast("double"), F.lit(0.0)).alias("discount"),
    )
    return typed.where(F.col("order_id").isNotNull() & (F.col("quantity") > 0) & (F.col("unit_price") > 0))


def score(model: PipelineModel, orders: DataFrame) -> DataFrame:
    return model.transform(orders).select(
        "order_id",
        "customer_id",
        "order_ts",
        F.round("prediction", 2).alias("predicted_value"),
    )


def write_scores(scored: DataFrame, target: str, checkpoint: str) -> StreamingQuery:
    """Start the query that appends each micro-batch to ``target`` (parquet), checkpointed at ``checkpoint``.

    It writes with ``foreachBatch``, not the parquet file sink: the OpenLineage Spark listener reports
    no output dataset for a file sink (seen with 1.53.0 on Spark 3.5.6, as in
    https://github.com/OpenLineage/OpenLineage/issues/4110), while it reports each batch write with
    ``target`` as its output.
    """
    return (
        scored.writeStream.foreachBatch(lambda batch, _batch_id: batch.write.mode("append").parquet(target))
        .option("checkpointLocation", checkpoint)
        .queryName("order_scores")
        .trigger(availableNow=True)
        .start()
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="score new orders with the order value model")
    parser.add_argument("--lake", required=True, help="lake base URI: s3://bucket on EMR, a local directory here")
    parser.add_argument(
        "--checkpoint", default=None, help="checkpoint location (default <lake>/curated/_checkpoints/score_stream)"
    )
    parser.add_argument("--kafka-bootstrap", default=None, help="Kafka bootstrap servers; file source when absent")
    parser.add_argument("--kafka-topic", default=None, help="Kafka topic of new orders")
    args = parser.parse_args(argv)
    if bool(args.kafka_bootstrap) != bool(args.kafka_topic):
        parser.error("--kafka-bootstrap and --kafka-topic go together")
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        model = PipelineModel.load(lake_path(args.lake, "models/order_value_model"))
        scored = score(model, prepare_features(read_order_stream(spark, args)))
        checkpoint = args.checkpoint or lake_path(args.lake, "curated/_checkpoints/score_stream")
        query = write_scores(scored, lake_path(args.lake, "curated/order_scores"), checkpoint)
        query.awaitTermination()
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
