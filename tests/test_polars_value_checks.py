"""Polars value checks run once per query, on the measure's result.

A check of input values (finite numbers, 0/1 flags, probabilities, weights)
needs a Python call; Polars does not merge Python calls as common
subexpressions, so a check on the input ran at every place a formula read it
(a dozen times for the regression measures, per streaming batch). The plan of
a measure now holds one Python call, and its verdicts are unchanged.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import mlsql.polars as mp
from mlsql._errors import MlsqlError

FRAME = pl.DataFrame(
    {
        "g": [1, 1, 2, 2],
        "y": [1.0, 2.0, 3.0, 5.0],
        "p": [1.5, 2.0, 3.0, 4.0],
        "flag": [1, 0, 1, 0],
        "prob": [0.9, 0.2, 0.6, 0.4],
        "w": [1.0, 2.0, 1.0, 0.5],
    }
)

CASES = {
    "mse": lambda: mp.mse("y", "p"),
    "r2": lambda: mp.r2("y", "p"),
    "explained_variance": lambda: mp.explained_variance("y", "p"),
    "logloss": lambda: mp.logloss("flag", "prob"),
    "brier_score_loss": lambda: mp.brier_score_loss("flag", "prob"),
    "auc": lambda: mp.auc("flag", "prob"),
    "weighted mse": lambda: mp.mse("y", "p", sample_weight="w"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_measure_plan_holds_one_python_call(name: str):
    plan = FRAME.lazy().select(CASES[name]()).explain(optimized=False)
    assert plan.count("python_udf") <= 1, plan


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        ("p", float("nan"), "mse takes finite numbers for predicted"),
        ("y", float("inf"), "mse takes finite numbers for actual"),
        ("w", -1.0, "The 'sample_weight' parameter of mse must be a finite number >= 0"),
    ],
)
def test_a_bad_value_in_one_group_fails_the_query(
    engine: str, column: str, value: Any, expected: str
):
    bad = FRAME.with_columns(
        pl.when(pl.col("g") == 2).then(value).otherwise(pl.col(column)).alias(column)
    )
    query = bad.lazy().group_by("g").agg(mp.mse("y", "p", sample_weight="w"))
    with pytest.raises(MlsqlError, match=expected):
        query.collect(engine=engine)


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_groups_get_their_own_values(engine: str):
    out = FRAME.lazy().group_by("g").agg(mp.mse("y", "p"), mp.mae("y", "p"))
    rows = out.sort("g").collect(engine=engine).rows()
    # g=1: errors -0.5, 0; g=2: errors 0, 1
    assert rows == [(1, 0.125, 0.25), (2, 0.5, 0.5)]
