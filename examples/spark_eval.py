"""Evaluate a partitioned Parquet directory with mlsql.spark, grouped by a column.

Usage::

    python examples/spark_eval.py                      # writes a small example dataset first
    python examples/spark_eval.py data/preds --by model --actual actual --predicted predicted

Without a path, a small dataset (three models, two days, a few hundred rows of
tags, some with repeated labels, NULL elements or NULL lists) is written to a
temporary directory as Parquet partitioned by ``day``, and evaluated from
there. Spark reads the partition column back as a column, so ``--by day``
works too.

Three results are printed:

1. every aggregate per group, computed in one ``groupBy().agg`` pass;
2. ``multilabel_counts`` stored per (group, day) and merged later into the
   same micro measures (how daily partitions are scored once and combined);
3. the same micro F1 in plain Spark SQL, from the stored counts, with the SQL
   functions of ``mlsql.spark.register``.
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import mlsql.spark as ms

TAGS = ["cat", "dog", "bird", "fish", "horse", "cow"]


def example_dataset(spark: SparkSession, path: Path, rows: int = 600, seed: int = 7) -> None:
    """Write ``rows`` predictions of three models over two days, partitioned by day."""
    rng = random.Random(seed)
    skill = {"m_good": 0.85, "m_fair": 0.65, "m_poor": 0.45}
    data = []
    for i in range(rows):
        actual = rng.sample(TAGS, rng.randint(1, 3))
        model = list(skill)[i % 3]
        predicted = [t for t in actual if rng.random() < skill[model]]
        wrong = [t for t in TAGS if t not in actual and rng.random() < 1 - skill[model]]
        predicted += wrong[:2]
        if rng.random() < 0.05:
            predicted.append(predicted[0] if predicted else "cat")  # a repeated label
        if rng.random() < 0.03:
            actual.append(None)  # a NULL element: not a label
        if rng.random() < 0.02:
            predicted = None  # an unknown row: skipped by every aggregate
        data.append((model, f"2024-06-0{1 + i % 2}", actual, predicted))
    schema = "model string, day string, actual array<string>, predicted array<string>"
    spark.createDataFrame(data, schema).write.partitionBy("day").parquet(str(path))


def per_group(df: DataFrame, by: str, actual: str, predicted: str, n_labels: int) -> DataFrame:
    """Every multi-label aggregate of each group, in one pass over the data."""
    a, p = df[actual], df[predicted]
    return (
        df.groupBy(by)
        .agg(
            F.count(F.lit(1)).alias("rows"),
            ms.micro_precision(a, p),
            ms.micro_recall(a, p),
            ms.micro_f1(a, p),
            ms.micro_fbeta(a, p, beta=2.0).alias("micro_f2"),
            ms.samples_f1(a, p, zero_division="diagnose"),
            ms.samples_jaccard(a, p),
            ms.subset_accuracy(a, p),
            ms.hamming_loss(a, p, n_labels=n_labels),
            ms.fmeasure(a, p, "-beta 2."),
        )
        .orderBy(by)
    )


def stored_counts(df: DataFrame, by: str, actual: str, predicted: str) -> DataFrame:
    """``multilabel_counts`` per group and partition: what a daily job would store."""
    keys = [by, "day"] if "day" in df.columns and by != "day" else [by]
    return df.groupBy(*keys).agg(ms.multilabel_counts(df[actual], df[predicted]).alias("counts"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", help="a Parquet file or (partitioned) directory")
    parser.add_argument("--by", default="model", help="grouping column (default: model)")
    parser.add_argument("--actual", default="actual")
    parser.add_argument("--predicted", default="predicted")
    parser.add_argument(
        "--n-labels", type=int, default=None, help="label universe size for Hamming loss"
    )
    args = parser.parse_args()

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("mlsql-spark-eval")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    with tempfile.TemporaryDirectory() as tmp:
        path = args.path
        if path is None:
            path = str(Path(tmp) / "preds")
            example_dataset(spark, Path(path))
            print(f"wrote an example dataset to {path} (partitioned by day)\n")
        df = spark.read.parquet(path)
        n_labels = args.n_labels
        if n_labels is None:  # every label seen on either side
            labels = df.select(F.explode(F.array_union(args.actual, args.predicted)).alias("l"))
            n_labels = labels.where(F.col("l").isNotNull()).distinct().count()

        print(f"1. per {args.by}, one pass (Hamming loss over {n_labels} labels)")
        per_group(df, args.by, args.actual, args.predicted, n_labels).show(truncate=False)

        counts = stored_counts(df, args.by, args.actual, args.predicted).cache()
        print("2. stored counts per partition, merged later")
        counts.show(truncate=False)
        merged = counts.groupBy(args.by).agg(ms.merge_counts("counts").alias("counts"))
        merged.select(
            args.by,
            ms.micro_f1_from_counts("counts"),
            ms.micro_fbeta_from_counts("counts", beta=2.0).alias("micro_f2_from_counts"),
            ms.subset_accuracy_from_counts("counts"),
        ).orderBy(args.by).show(truncate=False)

        print("3. the same from plain Spark SQL")
        ms.register(spark)
        merged.createOrReplaceTempView("merged_counts")
        by = "`" + args.by.replace("`", "``") + "`"  # a quoted identifier, whatever the name
        spark.sql(
            f"SELECT {by}, micro_f1_from_counts(counts) AS micro_f1, "
            "micro_jaccard_from_counts(counts, zero_division => 'diagnose') AS micro_jaccard "
            f"FROM merged_counts ORDER BY {by}"
        ).show(truncate=False)
    spark.stop()


if __name__ == "__main__":
    main()
