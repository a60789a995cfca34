"""A NaN label score ranks above every other score, in every engine (DuckDB, Polars on both
paths, Spark).

DuckDB and Spark order doubles with NaN above +infinity (all NaNs equal); the
label-score aggregates follow that order everywhere. The expected value is
scikit-learn's on the indicator matrix with each NaN replaced by a number above
every score (1e300, all tied) and each missing label scored below every score
(-1e300, the documented lowest).
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

import mlsql
import mlsql.polars as mp
from mlsql.polars import _native

LABELS = ["a", "b", "c", "d"]


def rows(seed: int, n: int = 40) -> tuple[list[list[str]], list[list[dict[str, Any]]]]:
    """Rows with one to three true labels of four, scores in tenths (ties) and NaN."""
    rng = random.Random(seed)
    actual, scores = [], []
    for _ in range(n):
        true = rng.sample(LABELS, rng.randint(1, 3))
        scored = rng.sample(LABELS, rng.randint(2, 4))
        actual.append(true)
        scores.append(
            [
                {"label": x, "score": math.nan if rng.random() < 0.2 else rng.randint(0, 10) / 10}
                for x in scored
            ]
        )
    return actual, scores


def sklearn(
    actual: list, scores: list, average: str, measure: str, labels: list[str] = LABELS
) -> float:
    y = np.array([[x in a for x in labels] for a in actual], dtype=int)
    s = np.full(y.shape, -1e300)
    for i, entries in enumerate(scores):
        for e in entries:
            s[i, labels.index(e["label"])] = 1e300 if math.isnan(e["score"]) else e["score"]
    f = average_precision_score if measure == "ap" else roc_auc_score
    return float(f(y, s, average=average))


def polars_value(actual: list, scores: list, average: str, measure: str) -> float:
    frame = pl.DataFrame({"actual": actual, "scores": scores})
    f = mp.multilabel_average_precision if measure == "ap" else mp.multilabel_roc_auc
    return frame.select(f("actual", "scores", average=average)).item()


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "samples"])
@pytest.mark.parametrize("measure", ["ap", "auc"])
def test_nan_ranks_above_every_score(
    monkeypatch: pytest.MonkeyPatch, seed: int, average: str, measure: str
) -> None:
    actual, scores = rows(seed)
    if average == "samples":  # every row needs a negative: a fifth label is never true
        scores = [[*s, {"label": "e", "score": 0.05}] for s in scores]
        expected = sklearn(actual, scores, average, measure, [*LABELS, "e"])
    else:
        expected = sklearn(actual, scores, average, measure)
    monkeypatch.setenv(_native.ENV, "0")
    assert polars_value(actual, scores, average, measure) == pytest.approx(expected, rel=1e-12)
    monkeypatch.delenv(_native.ENV)
    assert polars_value(actual, scores, average, measure) == pytest.approx(expected, rel=1e-12)
    con = mlsql.connect()
    con.register("t", pl.DataFrame({"actual": actual, "scores": scores}).to_arrow())
    f = "multilabel_average_precision" if measure == "ap" else "multilabel_roc_auc"
    ((got,),) = con.sql(f"SELECT {f}(actual, scores, average := '{average}') FROM t").fetchall()
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.long
def test_spark_ranks_nan_above_every_score() -> None:
    import mlsql.spark as ms
    from tests.engines.spark_engine import session

    actual, scores = rows(1)
    frame = session().createDataFrame(
        [(a, {e["label"]: e["score"] for e in s}) for a, s in zip(actual, scores, strict=True)],
        "actual array<string>, scores map<string, double>",
    )
    cases = [(av, m) for av in ("micro", "macro", "weighted") for m in ("ap", "auc")]
    functions = {"ap": ms.multilabel_average_precision, "auc": ms.multilabel_roc_auc}
    got = frame.select(
        *(functions[m]("actual", "scores", average=av).alias(f"{av}_{m}") for av, m in cases)
    ).collect()[0]
    for (av, m), value in zip(cases, got, strict=True):
        assert value == pytest.approx(sklearn(actual, scores, av, m), rel=1e-12), (av, m)
