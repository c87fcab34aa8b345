"""train_model: Spark ML pipeline trained on the table ``orders_clean``, saved to
``<lake>/models/order_value_model``. It predicts an order's value from what is known when the
order is placed (category, country, quantity, unit price, discount).

    spark-submit train_model.py --lake s3://my-lake-bucket --orders-table lakehouse.clean.orders_clean
"""

from __future__ import annotations

import argparse
import sys

import as_of  # jobs/as_of.py, beside this file (--py-files on EMR)
from pyspark.ml import Pipeline, PipelineModel
from pyspark.ml.feature import OneHotEncoder, SQLTransformer, StringIndexer, VectorAssembler
from pyspark.ml.regression import LinearRegression
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

APP_NAME = "train_model"
CATEGORICAL = ["product_category", "country"]
NUMERIC = ["quantity", "unit_price", "discount"]
LABEL = "order_value"


def lake_path(lake: str, relative: str) -> str:
    return f"{lake.rstrip('/')}/{relative}"


def training_frame(orders: DataFrame) -> DataFrame:
    return orders.where(F.col("status") == "completed").select(
        *CATEGORICAL, *[F.col(c).cast("double").alias(c) for c in NUMERIC], F.col(LABEL).cast("double").alias(LABEL)
    )


def order_value_pipeline() -> Pipeline:
    # The derived feature is a pipeline stage, so score_stream needs nothing but the saved model.
    gross = SQLTransformer(statement="SELECT *, quantity * unit_price * (1 - discount) AS gross FROM __THIS__")
    indexers = [StringIndexer(inputCol=c, outputCol=f"{c}_idx", handleInvalid="keep") for c in CATEGORICAL]
    encoder = OneHotEncoder(inputCols=[f"{c}_idx" for c in CATEGORICAL], outputCols=[f"{c}_vec" for c in CATEGORICAL])
    assembler = VectorAssembler(inputCols=[f"{c}_vec" for c in CATEGORICAL] + NUMERIC + ["gross"], outputCol="features")
    regression = LinearRegression(featuresCol="features", labelCol=LABEL, maxIter=20, regParam=0.01)
    return Pipeline(stages=[gross, *indexers, encoder, assembler, regression])


def train(orders: DataFrame) -> PipelineModel:
    return order_value_pipeline().fit(training_frame(orders))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="clean orders -> order value model")
    parser.add_argument("--lake", required=True, help="lake base URI: s3://bucket on EMR, a local directory here")
    parser.add_argument("--orders-table", required=True, help="the clean orders' table: catalog.database.table")
    as_of.add_options(parser)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        model = train(as_of.read_table(spark, args.orders_table, as_of.pins(spark, args)))
        model.write().overwrite().save(lake_path(args.lake, "models/order_value_model"))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
