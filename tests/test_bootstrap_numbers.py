"""bootstrap() and compare() of the regression and score aggregates, in every engine.

References written here, never the code under test: the measures themselves
(DuckDB's aggregates, with and without ``sample_weight``), scikit-learn, and a
plain numpy per-row Poisson bootstrap whose measures are computed from each
resample's weights directly (pairwise comparisons for AUC).
"""

from __future__ import annotations

import functools
import math
import random
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from sklearn import metrics as skm

import mlsql
from mlsql._errors import MlsqlError
from mlsql._resample import numbers as NUM
from tests.conftest import _engines
from tests.references import spark_area_under_pr as spark_area_under_pr_exact
from tests.test_bootstrap import run_engine

REGRESSION = [
    "mse",
    "rmse",
    "mae",
    "mape",
    "rse",
    "rrse",
    "rae",
    "pearson_corr",
    "r2",
    ("r2", {"zero_division": "diagnose"}),
    "explained_variance",
]
SCORES = [
    "logloss",
    "auc",
    "average_precision_score",
    "area_under_pr",
    ("area_under_pr", {"zero_division": "diagnose"}),
    "brier_score_loss",
    "expected_calibration_error",
    ("expected_calibration_error", {"n_bins": 4}),
    ("expected_calibration_error", {"n_bins": 4, "norm": "l2"}),
    ("expected_calibration_error", {"norm": "max"}),
]


def regression_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """y ~ N(0, 1), ŷ = y + N(0, 0.5²), rounded to 2 places (so some rows repeat)."""
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    return np.round(y, 2), np.round(y + rng.normal(scale=0.5, size=n), 2)


def score_data(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels drawn from a logistic model, scores its probabilities rounded to 2 places (ties)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    score = np.round(1 / (1 + np.exp(-1.5 * (x + rng.normal(scale=0.7, size=n)))), 2)
    return (rng.random(n) < 1 / (1 + np.exp(-1.5 * x))).astype(int), score


def with_gaps(y: np.ndarray, p: np.ndarray, w: list | None = None) -> pa.Table:
    """The data with NULL on either side of a few rows, a -0.0, and weights if given."""
    actual, predicted = y.tolist(), p.tolist()
    actual[1], predicted[4] = None, None
    predicted[6] = -0.0 if isinstance(predicted[6], float) else predicted[6]
    columns: dict[str, Any] = {"actual": actual, "predicted": predicted}
    if w is not None:
        columns["w"] = w
    return pa.table(columns)


def weights(n: int, seed: int) -> list:
    """Row weights with zeros, fractions and one NULL."""
    rng = random.Random(seed)
    out: list = [rng.choice([0.0, 0.5, 1.0, 2.0, 3.25]) for _ in range(n)]
    out[2] = None
    return out


def _sql(entry: Any, weighted: bool) -> str:
    name, params = (entry, {}) if isinstance(entry, str) else entry
    args = "".join(f", {k} := {v!r}" for k, v in params.items())
    if weighted:
        args += ", sample_weight := w"
    return f"{name}(actual, predicted{args})"


# ------------------------------------------------------------------ estimates
def estimate_case(family: str, weighted: bool) -> tuple[pa.Table, list]:
    y, p = regression_data(80, 1) if family == "regression" else score_data(80, 1)
    chosen = REGRESSION if family == "regression" else SCORES
    return with_gaps(y, p, weights(80, 2) if weighted else None), chosen


@functools.cache
def measured(family: str, weighted: bool) -> tuple:
    """The measures themselves on the case's data (DuckDB's aggregates), once per case."""
    data, chosen = estimate_case(family, weighted)
    con = mlsql.connect()
    con.register("data", data)
    return con.sql(f"SELECT {', '.join(_sql(e, weighted) for e in chosen)} FROM data").fetchall()[0]


@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize("family", ["regression", "scores"])
@pytest.mark.parametrize("weighted", [False, True])
def test_estimate_is_the_measure_itself(engine: str, family: str, weighted: bool) -> None:
    data, chosen = estimate_case(family, weighted)
    kw = {"sample_weight": "w"} if weighted else {}
    got = run_engine(engine, "bootstrap", data, "actual", "predicted", chosen, n_resamples=20, **kw)
    assert len(got) == len(chosen)
    for row, want in zip(got, measured(family, weighted), strict=True):
        assert row[1] == pytest.approx(want, rel=1e-12, abs=1e-15), row[0]
        assert row[2] <= row[3] and row[4] > 0, row[0]


def test_estimates_equal_scikit_learn_with_weights() -> None:
    y, p = regression_data(60, 3)
    w = np.array([x or 0.25 for x in weights(60, 4)])
    names = ["mse", "mae", "mape", "r2", "explained_variance"]
    got = mlsql.bootstrap(
        pa.table({"actual": y, "predicted": p, "w": w}), "actual", "predicted", names,
        n_resamples=5, sample_weight="w",
    ).fetchall()  # fmt: skip
    sk = [
        skm.mean_squared_error,
        skm.mean_absolute_error,
        skm.mean_absolute_percentage_error,
        skm.r2_score,
        skm.explained_variance_score,
    ]
    for row, f in zip(got, sk, strict=True):
        assert row[1] == pytest.approx(f(y, p, sample_weight=w), rel=1e-12), row[0]
    label, score = score_data(60, 5)
    got = mlsql.bootstrap(
        pa.table({"actual": label, "predicted": score, "w": w}), "actual", "predicted",
        ["auc", "average_precision_score", "brier_score_loss", "logloss"], n_resamples=5,
        sample_weight="w",
    ).fetchall()  # fmt: skip
    sk = [
        skm.roc_auc_score,
        skm.average_precision_score,
        skm.brier_score_loss,
        skm.log_loss,
    ]
    for row, f in zip(got, sk, strict=True):
        assert row[1] == pytest.approx(f(label, score, sample_weight=w), rel=1e-12), row[0]
    w[score == score.max()] = 0.0  # rows that weigh 0 are as absent: the first point is lower
    (row,) = mlsql.bootstrap(
        pa.table({"actual": label, "predicted": score, "w": w}), "actual", "predicted",
        ["area_under_pr"], n_resamples=5, sample_weight="w",
    ).fetchall()  # fmt: skip
    want = spark_area_under_pr_exact(label.tolist(), score.tolist(), w.tolist())
    assert row[1] == pytest.approx(float(want), rel=1e-12)


# ------------------------------------------------------------------ the independent bootstrap
def numpy_regression(y: np.ndarray, p: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """rmse, r2 and rae under each row of the weights ``w`` (resamples x rows), from sums."""
    n = w.sum(1)
    mean = (w @ y) / n
    sse = w @ (y - p) ** 2
    sst = w @ y**2 - n * mean**2
    sad = (w * np.abs(y[None, :] - mean[:, None])).sum(1)
    return {"rmse": np.sqrt(sse / n), "r2": 1 - sse / sst, "rae": (w @ np.abs(y - p)) / sad}


def numpy_scores(label: np.ndarray, score: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """AUC by all (positive, negative) pairs, brier and log loss, under each row of ``w``."""
    pos, neg = label == 1, label == 0
    above = (score[pos][:, None] > score[neg][None, :]) + 0.5 * (
        score[pos][:, None] == score[neg][None, :]
    )
    wp, wn = w[:, pos], w[:, neg]
    auc = ((wp @ above) * wn).sum(1) / (wp.sum(1) * wn.sum(1))
    clipped = np.clip(score, 1e-15, 1 - 1e-15)
    loss = -(label * np.log(clipped) + (1 - label) * np.log(1 - clipped))
    n = w.sum(1)
    return {
        "auc": auc,
        "brier_score_loss": (w @ (score - label) ** 2) / n,
        "logloss": (w @ loss) / n,
        "area_under_pr": np.array([spark_area_under_pr(label, score, row) for row in w]),
    }


def spark_area_under_pr(label: np.ndarray, score: np.ndarray, w: np.ndarray) -> float:
    """Spark MLlib's areaUnderPR as its code reads: the distinct scores from the highest (of the
    rows that weigh), cumulative (weighted) true and false positives at each, the points
    (recall, precision), (0, first precision) put first, and the trapezoid rule over them."""
    kept = w > 0
    order = np.argsort(-score[kept], kind="stable")
    y, s, v = label[kept][order], score[kept][order], w[kept][order]
    last = np.r_[s[1:] != s[:-1], True]  # the last row of each distinct score
    tp, seen = np.cumsum(v * y)[last], np.cumsum(v)[last]
    precision = np.r_[tp[0] / seen[0], tp / seen]
    recall = np.r_[0.0, tp / tp[-1]]
    return float(np.sum(np.diff(recall) * (precision[1:] + precision[:-1]) / 2))


def _agrees(row: tuple, reference: np.ndarray) -> None:
    low, high = np.quantile(reference, [0.05, 0.95])
    se = reference.std(ddof=1)
    # Monte Carlo error of a standard deviation over 3000 draws is about 1.3%
    assert row[4] == pytest.approx(se, rel=0.07), row[0]
    assert row[2] == pytest.approx(low, abs=0.3 * se), row[0]
    assert row[3] == pytest.approx(high, abs=0.3 * se), row[0]


@pytest.mark.parametrize("weighted", [False, True])
def test_regression_intervals_agree_with_a_per_row_numpy_bootstrap(weighted: bool) -> None:
    y, p = regression_data(300, 6)
    w = np.array([x or 0.0 for x in weights(300, 7)]) if weighted else np.ones(300)
    draws = np.random.default_rng(8).poisson(1.0, (3000, 300)) * w
    reference = numpy_regression(y, p, draws)
    data = pa.table({"actual": y, "predicted": p, "w": w})
    rows = mlsql.bootstrap(
        data, "actual", "predicted", list(reference), n_resamples=3000, confidence=0.9,
        sample_weight="w",
    ).fetchall()  # fmt: skip
    for row in rows:
        assert row[1] == pytest.approx(numpy_regression(y, p, w[None, :])[row[0]][0], rel=1e-12)
        _agrees(row, reference[row[0]])


def test_score_intervals_agree_with_a_per_row_numpy_bootstrap() -> None:
    label, score = score_data(300, 9)
    reference = numpy_scores(label, score, np.random.default_rng(10).poisson(1.0, (3000, 300)))
    data = pa.table({"actual": label, "predicted": score})
    rows = mlsql.bootstrap(
        data, "actual", "predicted", list(reference), n_resamples=3000, confidence=0.9
    ).fetchall()
    for row in rows:
        _agrees(row, reference[row[0]])
    ap = [  # average precision by scikit-learn on each resample's weights
        skm.average_precision_score(label, score, sample_weight=w)
        for w in np.random.default_rng(11).poisson(1.0, (400, 300))
    ]
    (row,) = mlsql.bootstrap(
        data, "actual", "predicted", ["average_precision_score"], n_resamples=2000, seed=1
    ).fetchall()
    # the sd of 400 draws is within 3.6% of the truth (one sd), of 2000 draws within 1.6%
    assert row[4] == pytest.approx(np.std(ap, ddof=1), rel=0.15)


def test_ninety_percent_intervals_cover_the_population_value() -> None:
    """150 samples of 100 rows, y ~ N(0, 1), ŷ = y + N(0, 0.5²): population mse = 0.25."""
    con = mlsql.connect()
    hits = 0
    for i in range(150):
        rng = np.random.default_rng(100 + i)
        y = rng.normal(size=100)
        data = pa.table({"actual": y, "predicted": y + rng.normal(scale=0.5, size=100)})
        (row,) = mlsql.bootstrap(
            data, "actual", "predicted", ["mse"], n_resamples=300, confidence=0.9, seed=i, con=con
        ).fetchall()
        hits += row[2] <= 0.25 <= row[3]
    # binomial sd of a coverage over 150 sets is about 0.024; percentile intervals of a
    # mean of squares under-cover a little at n = 100
    assert 0.8 <= hits / 150 <= 0.96, hits / 150


# ------------------------------------------------------------------ seeds, engines, compare
@pytest.mark.parametrize("engine", _engines())
def test_same_seed_same_result_other_seed_other_result(engine: str) -> None:
    y, p = regression_data(50, 12)
    data = with_gaps(y, p)
    args = ("actual", "predicted", ["rmse", "rae"])
    one = run_engine(engine, "bootstrap", data, *args, n_resamples=50, seed=3)
    assert one == run_engine(engine, "bootstrap", data, *args, n_resamples=50, seed=3)
    other = run_engine(engine, "bootstrap", data, *args, n_resamples=50, seed=4)
    assert [r[:2] for r in one] == [r[:2] for r in other]
    assert [r[2:] for r in one] != [r[2:] for r in other]


@pytest.mark.long  # 13-15 s a family on two cores
@pytest.mark.parametrize("family", ["regression", "scores"])
def test_engines_agree_on_one_dataset(family: str) -> None:
    y, p = regression_data(90, 13) if family == "regression" else score_data(90, 13)
    data = with_gaps(y, p, weights(90, 14)).append_column("g", pa.array([i % 3 for i in range(90)]))
    chosen = (
        ["r2", "rae"]
        if family == "regression"
        else ["auc", "average_precision_score", "area_under_pr"]
    )
    args = ("actual", "predicted", chosen)
    results = {
        e: run_engine(e, "bootstrap", data, *args, by="g", n_resamples=200, sample_weight="w")
        for e in _engines()
    }
    first = results[_engines()[0]]
    for engine, rows in results.items():
        assert len(rows) == len(first) == 3 * len(chosen)
        for got, want in zip(rows, first, strict=True):
            assert got[:2] == want[:2], engine
            # Spark draws regression's resamples in its executors from its own hash: its
            # intervals agree within Monte Carlo error (tests/test_spark_bootstrap.py), its
            # estimates exactly
            n = 3 if engine == "spark" and family == "regression" else None
            assert got[2:n] == pytest.approx(want[2:n], rel=1e-12), engine


def paired(actual: np.ndarray, a: np.ndarray, b: np.ndarray) -> pa.Table:
    n = len(actual)
    return pa.table(
        {
            "id": list(range(n)) * 2,
            "model": ["A"] * n + ["B"] * n,
            "actual": np.concatenate([actual, actual]),
            "predicted": np.concatenate([a, b]),
        }
    )


@pytest.mark.parametrize("engine", _engines())
def test_identical_models_differ_by_zero_with_p_one(engine: str) -> None:
    y, p = regression_data(40, 15)
    rows = run_engine(
        engine, "compare", paired(y, p, p), "actual", "predicted", ["rmse", "r2", "rae"],
        n_resamples=100,
    )  # fmt: skip
    label, score = score_data(40, 16)
    rows += run_engine(
        engine, "compare", paired(label, score, score), "actual", "predicted",
        ["auc", "area_under_pr"], n_resamples=100,
    )  # fmt: skip
    assert len(rows) == 5
    for row in rows:
        assert row[0] == "B" and row[2] == row[3] and row[4] == 0.0, row
        assert row[5] == row[6] == 0.0 and row[7] == 1.0 and row[8] is None, row


def test_a_real_difference_is_found() -> None:
    y, worse = regression_data(200, 17)
    better = y + np.random.default_rng(18).normal(scale=0.3, size=200)
    (row,) = mlsql.compare(paired(y, worse, better), "actual", "predicted", ["rmse"]).fetchall()
    want = math.sqrt(np.mean((y - better) ** 2)) - math.sqrt(np.mean((y - worse) ** 2))
    assert row[4] == pytest.approx(want, rel=1e-12)
    assert row[6] < 0 and row[7] < 0.01


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize(
    ("columns", "measures", "message"),
    [
        ({"actual": ["a", "b"], "predicted": [1.0, 2.0]}, ["r2"], "takes numbers for actual"),
        ({"actual": [1.0, 2.0], "predicted": [[1.0], [2.0]]}, ["mse"], "numbers for predicted"),
        ({"actual": [1.0, None], "predicted": [float("inf"), 2.0]}, ["mse"], "Got inf"),
        ({"actual": [0, 2], "predicted": [0.5, 0.5]}, ["auc"], "0/1 values. Got 2 instead"),
        ({"actual": ["x", "y"], "predicted": [0.5, 0.5]}, ["auc"], "0/1 values for actual"),
        ({"actual": [0, 1], "predicted": [0.5, 1.5]}, ["brier_score_loss"], "Got a value above"),
        ({"actual": [0, 1], "predicted": [0.5, float("nan")]}, ["auc"], "predicted.*Got NaN"),
        ({"actual": [0, 1], "predicted": [0.5, 0.4]}, ["auc", "r2"], "one kind of input"),
        ({"actual": [0, 1], "predicted": [0.5, 0.4]}, ["hivemall_r2"], "cannot resample"),
    ],
)
def test_bad_input_is_a_clear_error(
    engine: str, columns: dict, measures: list, message: str
) -> None:
    with pytest.raises(MlsqlError, match=message):
        run_engine(engine, "bootstrap", pa.table(columns), "actual", "predicted", measures)


def test_a_boolean_label_is_a_binary_label() -> None:
    label, score = score_data(30, 19)
    as_bool = mlsql.bootstrap(
        pa.table({"actual": label.astype(bool), "predicted": score}), "actual", "predicted",
        ["auc"], n_resamples=30,
    ).fetchall()  # fmt: skip
    as_int = mlsql.bootstrap(
        pa.table({"actual": label, "predicted": score}), "actual", "predicted", ["auc"],
        n_resamples=30,
    ).fetchall()  # fmt: skip
    assert as_bool == as_int


# ------------------------------------------------------------------ the draws
def test_table_draws_are_the_inverse_cdf_of_the_uniforms() -> None:
    u = np.random.default_rng(20).random((50, 2000))
    cdf = np.cumsum([math.exp(-1) / math.factorial(k) for k in range(30)])
    want = np.searchsorted(cdf, u, side="right")
    got = NUM.poisson_one(np.random.default_rng(20), (50, 2000))
    assert (got == want).all()
    counts = np.bincount(NUM.poisson_one(np.random.default_rng(21), (1, 400_000))[0].astype(int))
    for k in range(5):  # each frequency within 5 binomial sd of e^-1 / k!
        prob = math.exp(-1) / math.factorial(k)
        assert abs(counts[k] - 400_000 * prob) < 5 * math.sqrt(400_000 * prob * (1 - prob)), k


@pytest.mark.parametrize("engine", _engines())
def test_hostile_column_names_are_only_names(engine: str) -> None:
    hostile = 'y"); DROP TABLE t; --'
    y, p = regression_data(30, 22)
    data = pa.table({hostile: y, "p'q": p, 'g"': [i % 2 for i in range(30)]})
    rows = run_engine(engine, "bootstrap", data, hostile, "p'q", ["mse"], by='g"', n_resamples=20)
    assert rows[0][0] == 0 and rows[0][2] == pytest.approx(np.mean((y - p)[0::2] ** 2), rel=1e-12)


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
