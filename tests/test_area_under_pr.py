"""area_under_pr (Spark MLlib's trapezoid areaUnderPR) on every engine.

A worked example in exact fractions, ties, weights as repeated rows and weights of 0 as absent
rows against the plain-Python definition (``tests.references.spark_area_under_pr``), the
one-class and NULL rules, and (long, Spark) pyspark's own
``BinaryClassificationEvaluator(metricName='areaUnderPR')`` on random data with ties and weights.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pyarrow as pa
import pytest

from tests.references import spark_area_under_pr

COLUMNS = ("actual", "score")
#: eight rows, dyadic scores, 4 positives (the worked example of tests/test_score_aggregates.py)
ACTUAL = [1, 1, 0, 1, 0, 0, 1, 0]
SCORE = [1.0, 0.75, 0.75, 0.5, 0.375, 0.25, 0.125, 0.0]
#: the points (recall, precision) from the highest score: (0, 1) put first, then (1/4, 1),
#: (1/2, 2/3), (3/4, 3/4), (3/4, 3/5), (3/4, 1/2), (1, 4/7), (1, 1/2); the trapezoids are
#: 1/4 · 1, 1/4 · (1 + 2/3) / 2, 1/4 · (2/3 + 3/4) / 2, 0, 0, 1/4 · (1/2 + 4/7) / 2, 0
WORKED = Fraction(1, 4) + Fraction(5, 24) + Fraction(17, 96) + Fraction(15, 112)


def table(actual: list, score: list, weight: list | None = None) -> pa.Table:
    columns = {"actual": pa.array(actual, pa.int64()), "score": pa.array(score, pa.float64())}
    if weight is not None:
        columns["w"] = pa.array(weight, pa.float64())
    return pa.table(columns)


def value(engine, actual: list, score: list, weight: list | None = None, **params):
    if weight is not None:
        params["sample_weight"] = "w"
    return engine.aggregate(
        "area_under_pr", table(actual, score, weight), columns=COLUMNS, **params
    )


def close(got, want) -> bool:
    return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15)


@pytest.mark.long_cases("spark")
def test_worked_example_is_exact(engine):
    assert Fraction(517, 672) == WORKED
    assert close(value(engine, ACTUAL, SCORE), WORKED)
    # the oracle agrees with the hand-worked points
    assert spark_area_under_pr(ACTUAL, SCORE) == WORKED


def test_it_is_not_the_step_wise_average_precision(engine):
    """Same data, another number: AP takes the precision at each step, not the trapezoid."""
    ap = engine.aggregate("average_precision_score", table(ACTUAL, SCORE), columns=COLUMNS)
    assert close(ap, (1 + Fraction(2, 3) + Fraction(3, 4) + Fraction(4, 7)) / 4)
    assert not close(ap, WORKED)


def test_first_point_takes_the_first_precision(engine):
    """A negative scored highest: the first point is (0, 1/2) (Spark), not (0, 1)."""
    # points (0, 1/2), (1/2, 1/2), (1, 2/3): 1/2 · 1/2 + 1/2 · (1/2 + 2/3) / 2
    want = Fraction(1, 4) + Fraction(7, 24)
    assert close(value(engine, [0, 1, 1], [0.9, 0.9, 0.1]), want)
    # negatives only on top: points (0, 0), (0, 0), (1, 1/2); area 1 · (0 + 1/2) / 2
    assert close(value(engine, [0, 1], [0.9, 0.1]), Fraction(1, 4))


def test_random_scores_with_ties_match_the_definition(engine):
    rng = random.Random(34)
    actual, score, weight = [], [], []
    for _ in range(60):
        actual.append(rng.randint(0, 1))
        score.append(rng.choice([0.0, -0.0, 0.1, 0.25, 0.5, 0.5, 0.9, 1e300]))
        weight.append(rng.choice([0.0, 0.5, 1.0, 2.0, 3.25]))
    assert close(value(engine, actual, score), spark_area_under_pr(actual, score))
    assert close(value(engine, actual, score, weight), spark_area_under_pr(actual, score, weight))


def test_integer_weights_are_repeated_rows_and_zero_weights_absent_rows(engine):
    actual = [0, 1, 1, 0, 1, 0, 1]
    score = [0.9, 0.8, 0.8, 0.6, 0.3, 0.3, 0.1]
    weight = [0.0, 2.0, 1.0, 3.0, 0.0, 1.0, 2.0]
    repeated = [
        (y, s) for y, s, w in zip(actual, score, weight, strict=True) for _ in range(int(w))
    ]
    want = value(engine, [y for y, _ in repeated], [s for _, s in repeated])
    assert close(value(engine, actual, score, weight), want)
    assert close(want, spark_area_under_pr(actual, score, weight))


@pytest.mark.long_cases("spark")
def test_one_class_and_null_rows(engine):
    # no positive: Spark's recall is 0 everywhere, area 0; zero_division says so
    assert value(engine, [0, 0], [0.2, 0.9]) == 0
    assert value(engine, [0, 0], [0.2, 0.9], zero_division="diagnose") == 1
    assert math.isnan(value(engine, [0, 0], [0.2, 0.9], zero_division=float("nan")))
    # positives only: precision 1 everywhere
    assert value(engine, [1, 1, 1], [0.2, 0.9, 0.9]) == 1
    # NULL rows are skipped; none known: NULL; all weights 0: no positive weight, zero_division
    assert close(value(engine, [*ACTUAL, None, 1], [*SCORE, 0.5, None]), WORKED)
    assert value(engine, [None, 1], [0.5, None]) is None
    assert value(engine, [1, 0], [0.5, 0.2], [0.0, 0.0]) == 0


@pytest.mark.long
def test_spark_matches_pysparks_own_evaluator():
    """pyspark's BinaryClassificationEvaluator(metricName='areaUnderPR') (numBins 0: exact;
    weightCol) on random data with ties, over several partitions."""
    from pyspark.ml.evaluation import BinaryClassificationEvaluator
    from pyspark.sql import functions as F

    import mlsql.spark as ms
    from tests.engines.spark_engine import session

    spark = session()
    rng = random.Random(2026)
    for n in (5, 40, 300):
        rows = [
            (
                float(rng.randint(0, 1)),
                rng.choice([0.05, 0.2, 0.35, 0.5, 0.5, 0.8, 0.95]),
                rng.choice([0.5, 1.0, 2.0, 4.5]),
            )
            for _ in range(n)
        ]
        df = spark.createDataFrame(rows, "label double, score double, w double").repartition(3)
        got = df.agg(
            ms.area_under_pr(F.col("label").cast("int"), "score").alias("plain"),
            ms.area_under_pr(F.col("label").cast("int"), "score", sample_weight="w").alias("w"),
        ).first()
        evaluator = BinaryClassificationEvaluator(
            rawPredictionCol="score", labelCol="label", metricName="areaUnderPR", numBins=0
        )
        assert math.isclose(got["plain"], evaluator.evaluate(df), rel_tol=1e-12)
        weighted = evaluator.copy({evaluator.weightCol: "w"})
        assert math.isclose(got["w"], weighted.evaluate(df), rel_tol=1e-12)
