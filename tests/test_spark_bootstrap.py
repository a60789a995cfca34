"""Spark's bootstrap and compare drawn in the executors (mlsql.spark.resample_exec).

References written here: scipy's Poisson quantile function for the draws; the
DuckDB engine's intervals, with a tolerance from the percentile's Monte Carlo
error at the number of resamples; exact fractions for the estimates.
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from mlsql._errors import MlsqlError
from mlsql._resample import run
from tests.conftest import _engines
from tests.test_bootstrap import paired_table, run_engine, simulate, table

#: every test here is long: Spark's own tests, where each Spark call plans for a second (with
#: the Spark engine's doctests, a tenth of the README's suite)
pytestmark = [
    pytest.mark.skipif("spark" not in _engines(), reason="a Spark test"),
    pytest.mark.long,
]


@pytest.fixture
def executors() -> Any:
    """Numbers resampled in the executors however small their table (the budget of tuples
    resampled on the driver set to 0 for the test)."""
    from mlsql.spark.resample_exec import DRIVER_TUPLES_CONF
    from tests.engines.spark_engine import session

    conf = session().conf
    conf.set(DRIVER_TUPLES_CONF, "0")
    yield
    conf.unset(DRIVER_TUPLES_CONF)


def spark_frame(data: pa.Table, partitions: int) -> Any:
    from tests.engines.spark_engine import frame

    return frame(data).repartition(partitions)


def test_poisson_draws_are_the_inverse_cdf() -> None:
    from scipy.stats import poisson

    from mlsql.spark import resample_draw as D
    from tests.engines.spark_engine import session

    rng = np.random.default_rng(5)
    cases = [(m, float(u)) for m in (1, 2, 7, 40, 1000, 250_000) for u in rng.random(60)]
    cases += [(1, 1e-12), (1, 1 - 1e-12), (3, 0.5)]
    df = session().createDataFrame(cases, "m long, u double")
    got = {(r[0], r[1]): r[2] for r in D.inverse(df, "m", "u").collect()}
    for m, u in cases:
        assert got[(m, u)] == int(poisson.ppf(u, m)), (m, u)


def test_the_driver_resamples_nothing(monkeypatch: pytest.MonkeyPatch, executors: None) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("resampled on the driver")

    monkeypatch.setattr(run, "bootstrap", refuse)
    monkeypatch.setattr(run, "compare", refuse)
    import mlsql.spark as ms

    sets = table(*simulate(random.Random(1), 30))
    frame = spark_frame(sets, 2)
    (row,) = ms.bootstrap(frame, "actual", "predicted", ["micro_f1"], n_resamples=20).collect()
    assert row.low is not None
    a = ["x", "y", "x", "y"] * 5
    data = paired_table(a, a, ["x"] * 20)
    frame = spark_frame(data, 2)
    (row,) = ms.compare(frame, "actual", "predicted", ["accuracy"], n_resamples=20).collect()
    assert row.difference == -0.5
    y = [float(i % 5) for i in range(20)]
    numbers = spark_frame(paired_table(y, y, [v + 1 for v in y]), 2)
    (row,) = ms.bootstrap(numbers, "actual", "predicted", ["r2"], n_resamples=20).collect()
    assert row.low is not None
    (row,) = ms.compare(numbers, "actual", "predicted", ["mae"], n_resamples=20).collect()
    assert (row.baseline_estimate, row.estimate) == (0.0, 1.0)
    labels = [i % 2 for i in range(20)]
    scores = [0.1 * (i % 7) + 0.05 * (i % 2) for i in range(20)]
    scored = spark_frame(paired_table(labels, scores, scores), 2)
    measures = ["auc", "logloss", "expected_calibration_error"]
    rows = ms.bootstrap(scored, "actual", "predicted", measures, n_resamples=20).collect()
    assert all(r.low is not None for r in rows)


@pytest.mark.parametrize("budget", ["-1", "1e6", "many", ""])
def test_a_bad_budget_is_a_clear_error(budget: str) -> None:
    import mlsql.spark as ms
    from mlsql.spark.resample_exec import DRIVER_TUPLES_CONF
    from tests.engines.spark_engine import session

    data = table([1.0, 2.0, 3.0], [1.5, 2.0, 2.5])
    conf = session().conf
    conf.set(DRIVER_TUPLES_CONF, budget)
    try:
        with pytest.raises(MlsqlError, match=r"driverTuples must be a whole number.*Got '"):
            ms.bootstrap(spark_frame(data, 1), "actual", "predicted", ["mse"], n_resamples=5)
    finally:
        conf.unset(DRIVER_TUPLES_CONF)


@pytest.mark.parametrize("budget", [None, "5", "0"])
def test_numbers_resample_on_the_driver_within_its_budget(budget: str | None) -> None:
    """A table of numbers of at most the budget's tuples is resampled on the driver: the
    DuckDB engine's result exactly (same seed, same draws); a larger one in the executors."""
    import mlsql.spark as ms
    from mlsql.spark.resample_exec import DRIVER_TUPLES_CONF
    from tests.engines.spark_engine import session

    rng = random.Random(16)
    y = [rng.gauss(0, 1) for _ in range(40)]
    data = table(y, [v + rng.gauss(0, 0.3) for v in y])
    args = ("actual", "predicted", ["mse", "r2"])
    conf = session().conf
    if budget is not None:
        conf.set(DRIVER_TUPLES_CONF, budget)
    try:
        got = [
            tuple(r) for r in ms.bootstrap(spark_frame(data, 3), *args, n_resamples=50).collect()
        ]
    finally:
        conf.unset(DRIVER_TUPLES_CONF)
    want = run_engine("duckdb", "bootstrap", data, *args, n_resamples=50)
    assert [g[0] for g in got] == [w[0] for w in want]
    for g, w in zip(got, want, strict=True):
        assert g[1] == pytest.approx(w[1], rel=1e-12)
        if budget is None:  # 40 tuples, within the default budget: the same draws
            assert g[2:] == pytest.approx(w[2:], rel=1e-12)
        else:  # in the executors: Spark's own draws
            assert g[2:] != pytest.approx(w[2:], rel=1e-12)


@pytest.mark.parametrize("func", ["compare"])
def test_averages_past_the_drivers_budget_are_a_clear_error(func: str) -> None:
    """compare of the macro averages resamples each distinct pair of label sets on the
    driver: past the budget the call says so (and how to go on) instead of filling the
    driver; within it, the DuckDB engine's result exactly. (bootstrap draws them in the
    executors past the budget.)"""
    import mlsql.spark as ms
    from mlsql.spark.resample_exec import DRIVER_TUPLES_CONF
    from tests.engines.spark_engine import session

    actual, predicted = simulate(random.Random(9), 30)
    other = simulate(random.Random(10), 30)[1]
    data = (
        table(actual, predicted) if func == "bootstrap" else paired_table(actual, predicted, other)
    )
    args = ("actual", "predicted", ["macro_f1"])
    conf = session().conf
    conf.set(DRIVER_TUPLES_CONF, "5")
    try:
        message = (
            f"{func}: the macro and weighted averages of label lists resample each distinct "
            "pair of label sets on Spark's driver, and this table holds more than 5 of them "
            f"(the Spark conf {DRIVER_TUPLES_CONF}, default 1,000,000, is how many the driver "
            "may hold). Raise it with the driver's memory, or resample a micro or samples "
            "measure (drawn in the executors), or sample the rows."
        )
        with pytest.raises(MlsqlError, match=re.escape(message)):
            getattr(ms, func)(spark_frame(data, 2), *args, n_resamples=20)
        conf.set(DRIVER_TUPLES_CONF, "1000")
        got = [
            tuple(r)
            for r in getattr(ms, func)(spark_frame(data, 2), *args, n_resamples=20).collect()
        ]
    finally:
        conf.unset(DRIVER_TUPLES_CONF)
    want = run_engine("duckdb", func, data, *args, n_resamples=20)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        for x, y in zip(g, w, strict=True):
            assert x == (y if isinstance(y, str | None) else pytest.approx(y, rel=1e-12))


def _weighted_sets() -> pa.Table:
    actual, predicted = simulate(random.Random(2), 60)
    actual[3] = None
    w = [0.1 * (i % 7) + 0.35 for i in range(60)]
    return table(actual, predicted, g=[i % 2 for i in range(60)], w=w)


def _weighted_classes() -> pa.Table:
    rng = random.Random(3)
    a = [rng.choice("xyz") for _ in range(60)]
    p = [x if rng.random() < 0.7 else rng.choice("xyz") for x in a]
    a[5] = None
    return table(a, p, g=[i % 2 for i in range(60)], w=[0.3 + 0.01 * i for i in range(60)])


def _weighted_numbers() -> pa.Table:
    """Regression values far from zero (the centred sums matter), a NULL, fractional weights."""
    rng = np.random.default_rng(13)
    y = rng.normal(size=60) * 1e3 + 5e3
    actual, predicted = y.tolist(), (y + rng.normal(scale=40, size=60)).tolist()
    actual[4] = None
    return table(
        actual, predicted, g=[i % 2 for i in range(60)], w=[0.1 * (i % 7) + 0.35 for i in range(60)]
    )


def _weighted_scores() -> pa.Table:
    """0/1 labels and scores with ties (rounded), a NULL, fractional weights."""
    rng = random.Random(14)
    scores = [round(rng.random(), 2) for _ in range(80)]
    labels: list = [int(rng.random() < s) for s in scores]
    labels[6] = None
    w = [0.1 * (i % 7) + 0.35 for i in range(80)]
    return table(labels, scores, g=[i % 2 for i in range(80)], w=w)


CALLS = {
    "label sets": (
        "bootstrap",
        _weighted_sets,
        {"measures": ["micro_f1", "samples_f1", ("hamming_loss", {"n_labels": 4})]},
    ),
    "classes": (
        "bootstrap",
        _weighted_classes,
        {"measures": ["accuracy", ("f1_score", {"average": "macro"}), "cohen_kappa_score"]},
    ),
    "label averages": (
        "bootstrap",
        _weighted_sets,
        {"measures": ["macro_f1", ("weighted_fbeta", {"beta": 2}), "micro_f1"]},
    ),
    "regression": ("bootstrap", _weighted_numbers, {"measures": ["r2", "rae", "mape", "rmse"]}),
    "scores": (
        "bootstrap",
        _weighted_scores,
        {
            "measures": [
                "auc",
                "average_precision_score",
                "area_under_pr",
                "logloss",
                "brier_score_loss",
                "expected_calibration_error",
            ]
        },
    ),
}


@pytest.mark.parametrize("kind", sorted(CALLS))
def test_same_seed_same_result_on_any_partitioning(kind: str, executors: None) -> None:
    """Fractional weights: every float sum must run in one order whatever the partitions."""
    import mlsql.spark as ms

    func, make, kwargs = CALLS[kind]
    data = make()
    results = [
        [
            tuple(r)
            for r in getattr(ms, func)(
                spark_frame(data, n),
                "actual",
                "predicted",
                by="g",
                sample_weight="w",
                n_resamples=60,
                seed=9,
                **kwargs,
            ).collect()
        ]
        for n in (1, 4, 7)
    ]
    assert results[0] == results[1] == results[2]
    assert all(r[3] is not None for r in results[0])


@pytest.mark.parametrize("kind", ["classes", "regression"])
def test_compare_gives_the_same_result_on_any_partitioning(kind: str, executors: None) -> None:
    import mlsql.spark as ms

    rng = random.Random(4)
    if kind == "classes":
        a: list = [rng.choice("xyz") for _ in range(50)]
        pa_ = [x if rng.random() < 0.8 else rng.choice("xyz") for x in a]
        pb = [x if rng.random() < 0.6 else rng.choice("xyz") for x in a]
        measures: list[Any] = ["accuracy", "f1_score"]
    else:
        a = [rng.gauss(1e4, 100) for _ in range(50)]
        pa_ = [x + rng.gauss(0, 30) for x in a]
        pb = [x + rng.gauss(10, 40) for x in a]
        measures = ["rmse", "r2", "rae"]
    data = paired_table(a, pa_, pb)
    data = data.append_column("w", pa.array([0.1 * (i % 7) + 0.35 for i in range(100)]))
    results = [
        [
            tuple(r)
            for r in ms.compare(
                spark_frame(data, n),
                "actual",
                "predicted",
                measures,
                n_resamples=60,
                sample_weight="w",
            ).collect()
        ]
        for n in (1, 4, 7)
    ]
    assert results[0] == results[1] == results[2]
    assert all(r[5] is not None and r[5] < r[6] for r in results[0])


def _tolerance(se: float, p: float, n_resamples: int) -> float:
    """4 standard errors of the difference of two engines' p-quantiles of B resamples.

    A p-quantile estimated from B draws has standard error sqrt(p (1 - p) / B) / f(q),
    f the density at the quantile: for a near-normal bootstrap distribution of
    standard deviation se, f(q) = phi(z_p) / se. Two independent engines: sqrt(2) times that.
    """
    z = _z(p)
    density = math.exp(-z * z / 2) / math.sqrt(2 * math.pi) / se
    return 4 * math.sqrt(2) * math.sqrt(p * (1 - p) / n_resamples) / density


def _z(p: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(p))


def _micro_f1(actual: list, predicted: list) -> Fraction:
    tp = na = np_ = 0
    for a, p in zip(actual, predicted, strict=True):
        if a is None or p is None:
            continue
        tp += len(set(a) & set(p))
        na += len(set(a))
        np_ += len(set(p))
    return Fraction(2 * tp, na + np_)


@pytest.mark.parametrize(
    "kind", ["label sets", "label averages", "classes", "regression", "scores"]
)
def test_intervals_match_duckdb_within_monte_carlo_error(kind: str, executors: None) -> None:
    n_resamples = 1000
    if kind.startswith("label"):
        actual, predicted = simulate(random.Random(11), 400)
        measures: list[Any] = ["micro_f1", "samples_f1", "subset_accuracy"]
        if kind == "label averages":
            measures = ["macro_f1", "weighted_recall", ("macro_fbeta", {"beta": 2}), "micro_f1"]
    else:
        rng = random.Random(12)
        actual = [rng.choice("wxyz") for _ in range(400)]
        predicted = [x if rng.random() < 0.7 else rng.choice("wxyz") for x in actual]
        measures = ["accuracy", ("f1_score", {"average": "macro"}), "matthews_corrcoef"]
    if kind == "regression":
        rng = random.Random(13)
        actual = [rng.gauss(0, 1) for _ in range(400)]
        predicted = [x + rng.gauss(0, 0.5) for x in actual]
        measures = ["mse", "r2", "rae", "mae"]
    if kind == "scores":
        rng = random.Random(15)
        predicted = [round(rng.random(), 3) for _ in range(400)]
        actual = [int(rng.random() < s) for s in predicted]
        measures = ["auc", "average_precision_score", "logloss", "expected_calibration_error"]
    data = table(actual, predicted)
    args = ("actual", "predicted", measures)
    spark = run_engine("spark", "bootstrap", data, *args, n_resamples=n_resamples, seed=1)
    duck = run_engine("duckdb", "bootstrap", data, *args, n_resamples=n_resamples, seed=1)
    for got, want in zip(spark, duck, strict=True):
        assert got[0] == want[0]
        assert got[1] == pytest.approx(want[1], rel=1e-12)
        _, _, low, high, se = want
        assert abs(got[2] - low) <= _tolerance(se, 0.025, n_resamples), (got, want)
        assert abs(got[3] - high) <= _tolerance(se, 0.975, n_resamples), (got, want)
        # the sample standard deviation of B draws has standard error se / sqrt(2 (B - 1))
        assert abs(got[4] - se) <= 4 * math.sqrt(2) * se / math.sqrt(2 * (n_resamples - 1))
    if kind == "label sets":
        assert spark[0][1] == float(_micro_f1(actual, predicted))


def test_half_binomial_draws_are_the_inverse_cdf() -> None:
    from scipy.stats import binom

    from mlsql.spark import resample_draw as D
    from tests.engines.spark_engine import session

    rng = np.random.default_rng(6)
    cases = [(m, float(u)) for m in (1, 2, 7, 192, 193, 5000) for u in rng.random(60)]
    cases += [(1, 0.5), (1, 0.5 + 1e-12), (4, 1 - 1e-12)]
    df = session().createDataFrame(cases, "m long, u double")
    got = {(r[0], r[1]): r[2] for r in D.inverse(df, "m", "u", law=D.half_binomial_cdf).collect()}
    for m, u in cases:
        assert got[(m, u)] == int(binom.ppf(u, m, 0.5)), (m, u)


def _paired_numbers(n: int, seed: int) -> tuple[pa.Table, list, list, list]:
    """Two models' predictions of n values in two groups, one id unknown for model A."""
    rng = random.Random(seed)
    a = [rng.gauss(0, 1) for _ in range(n)]
    pa_ = [x + rng.gauss(0, 1) for x in a]
    pb = [x + rng.gauss(0.15, 1) for x in a]
    pa_[3] = None
    data = paired_table(a, pa_, pb)
    data = data.append_column("g", pa.array(["even", "odd"] * n))
    return data, a, pa_, pb


def _refuse_driver_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    from mlsql._resample import front, paired

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("tested on the driver")

    monkeypatch.setattr(paired, "p_values", refuse)
    monkeypatch.setattr(front, "apply_test", refuse)


def test_student_test_of_numbers_runs_in_the_executors(
    monkeypatch: pytest.MonkeyPatch, executors: None
) -> None:
    """Student's p-values from the executors' sums equal scipy's ttest_rel of the per-id
    differences (the id with a NULL left out)."""
    from scipy.stats import ttest_rel

    import mlsql.spark as ms

    _refuse_driver_tests(monkeypatch)
    data, a, pa_, pb = _paired_numbers(120, 21)
    measures = ["mse", "mae", "mape"]
    rows = ms.compare(
        spark_frame(data, 3),
        "actual",
        "predicted",
        measures,
        by="g",
        n_resamples=20,
        test="student",
    ).collect()
    per_row = {
        "mse": lambda y, p: (y - p) ** 2,
        "mae": lambda y, p: abs(y - p),
        "mape": lambda y, p: abs(y - p) / max(abs(y), np.finfo(float).eps),
    }
    assert len(rows) == 6
    for row in rows:
        parity = 0 if row.g == "even" else 1
        ids = [i for i in range(120) if i % 2 == parity and pa_[i] is not None]
        f = per_row[row.measure]
        want = ttest_rel([f(a[i], pb[i]) for i in ids], [f(a[i], pa_[i]) for i in ids]).pvalue
        assert row.p_value == pytest.approx(want, rel=1e-9), row


def test_fisher_test_of_numbers_runs_in_the_executors(
    monkeypatch: pytest.MonkeyPatch, executors: None
) -> None:
    """Fisher's p-values from the executors' flips: the same on 1, 4 and 7 partitions, and
    the DuckDB engine's within Monte Carlo error (4 standard errors of the difference of
    two shares of B permutations)."""
    import mlsql.spark as ms

    data, *_ = _paired_numbers(160, 22)
    args = ("actual", "predicted", ["mse", "mae"])
    n = 1000
    want = {
        (r[0], r[1], r[2]): r[8]
        for r in run_engine("duckdb", "compare", data, *args, by="g", n_resamples=n, test="fisher")
    }
    _refuse_driver_tests(monkeypatch)
    results = [
        sorted(
            (r.g, r.model, r.measure, r.p_value)
            for r in ms.compare(
                spark_frame(data, parts), *args, by="g", n_resamples=n, test="fisher"
            ).collect()
        )
        for parts in (1, 4, 7)
    ]
    assert results[0] == results[1] == results[2]
    assert len(results[0]) == 4
    for g, model, measure, p in results[0]:
        duck = want[(g, model, measure)]
        assert 0 < p < 1
        assert abs(p - duck) <= 4 * math.sqrt(2 * duck * (1 - duck) / n), (g, measure, p, duck)


def test_a_weighted_test_of_numbers_is_the_drivers_error(executors: None) -> None:
    import mlsql.spark as ms

    data, *_ = _paired_numbers(20, 23)
    weights = [1.0] * 40
    weights[7] = 0.0
    weights[12] = None
    ok = data.append_column("w", pa.array(weights, pa.float64()))
    args = ("actual", "predicted", ["mse"])
    (row,) = ms.compare(
        spark_frame(ok, 2), *args, n_resamples=10, test="student", sample_weight="w"
    ).collect()
    assert row.p_value is not None
    weights[9] = 2.5
    bad = data.append_column("w", pa.array(weights, pa.float64()))
    with pytest.raises(MlsqlError, match=r"test 'student' takes unweighted rows.*Got 2\.5"):
        ms.compare(spark_frame(bad, 2), *args, n_resamples=10, test="student", sample_weight="w")
