"""The SQL table macro ``compare`` (DuckDB), on plain ``mlsql.sql`` (``mlsql sql-path``) and on ``mlsql.connect()``.

Expected values come from elsewhere: the estimates from the measure macros on
each model's paired rows, and from the Python call ``mlsql.compare``; McNemar's
p-value from an exact binomial tail computed here with ``math.comb`` and
``fractions``; the interval of the difference from the Python call and from a
plain per-row numpy paired bootstrap written here (every id one Poisson(1)
weight, shared by both models); p-values under no difference against the
uniform distribution (a Kolmogorov-Smirnov statistic computed here).
"""

from __future__ import annotations

import math
import random
import uuid
from fractions import Fraction
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import mlsql
from mlsql._front.tables import missing_column_message
from mlsql._resample.front import COMPARE_COLUMNS
from mlsql._resample.measures import LABEL_SET_MEASURES
from mlsql._sqlexpr import quote_ident
from tests.test_bootstrap import LABELS, micro_f1, row_counts, simulate, weights_for
from tests.test_sql_bootstrap import (
    POOLED,
    _macro,
    literal,
    named,
    same_rows_on_threads_and_in_another_process,
    sql_connection,
)


#: the plain library's cases are long (CI's long step runs them): mlsql.connect() loads the
#: same macros, the native kernels in place of a few; they cost a part of a minute of the
#: README's suite
@pytest.fixture(scope="module", params=[pytest.param("plain", marks=pytest.mark.long), "native"])
def con(request: Any) -> Any:
    return sql_connection(request.param)


def compare_sql(con: Any, data: pa.Table, measures: list[str], **params: Any) -> Any:
    """``FROM compare(...)`` over ``data`` (registered under a fresh name): (rows, columns)."""
    name = f"t_{uuid.uuid4().hex}"
    con.register(name, data)
    try:
        rel = con.sql(
            f"FROM compare({literal(name)}, 'actual', 'predicted', "
            f"measures := {literal(measures)}{named(params)})"
        )
        return rel.fetchall(), rel.columns
    finally:
        con.unregister(name)


def cmp(con: Any, data: pa.Table, measures: list[str], **params: Any) -> list[tuple]:
    return compare_sql(con, data, measures, **params)[0]


def python_compare(data: pa.Table, measures: list[Any], **kwargs: Any) -> list[tuple]:
    return mlsql.compare(data, "actual", "predicted", measures, **kwargs).fetchall()


def paired(actual: list, by_model: dict[Any, list], **extra: list) -> pa.Table:
    """One row per (model, id): the same ``actual`` for every model, its own predictions."""
    n = len(actual)
    models = list(by_model)
    columns: dict[str, list] = {
        "id": list(range(n)) * len(models),
        "model": [m for m in models for _ in range(n)],
        "actual": actual * len(models),
        "predicted": [p for m in models for p in by_model[m]],
    }
    columns.update({k: v * len(models) if len(v) == n else v for k, v in extra.items()})
    return pa.table(columns)


def noisy(rng: random.Random, actual: list, flip: float) -> list:
    """Predictions of ``actual`` with each label flipped w.p. ``flip``."""
    return [[x for x in LABELS if (x in a) != (rng.random() < flip)] for a in actual]


def gappy(n: int, seed: int) -> pa.Table:
    """Three models, unknown rows, NULL elements, empty sets, two groups, weights."""
    rng = random.Random(seed)
    actual, pa_ = simulate(rng, n)
    pb, pc = noisy(rng, actual, 0.1), noisy(rng, actual, 0.3)
    actual[3], pb[5], pc[6] = None, None, None
    actual[7], pa_[7] = ["a", "a", None], ["a", None]
    actual[8], pa_[8], pb[8] = [], [], []
    return paired(
        actual, {"A": pa_, "B": pb, "C": pc}, g=[i % 2 for i in range(n)], w=weights_for(n, seed)
    )


# ------------------------------------------------------------------ columns and estimates
def test_the_columns_are_the_python_calls(con: Any) -> None:
    data = gappy(30, 1)
    rows, columns = compare_sql(con, data, ["micro_f1"], by=["g"], n_resamples=5)
    python = mlsql.compare(data, "actual", "predicted", ["micro_f1"], by="g", n_resamples=5)
    assert columns == ["g", *COMPARE_COLUMNS] == python.columns
    assert [r[:3] for r in rows] == [r[:3] for r in python.fetchall()]
    assert [r[:2] for r in rows] == [(0, "B"), (0, "C"), (1, "B"), (1, "C")]


def _python_entry(name: str, zd: Any) -> Any:
    if name == "fmeasure":
        return ("fmeasure", {"options": "-beta 2"})
    if name == "hamming_loss":
        return ("hamming_loss", {"n_labels": 4})
    params: dict[str, Any] = {"beta": 2.0} if "fbeta" in name else {}
    if name not in ("subset_accuracy", "zero_one_loss"):
        params["zero_division"] = zd
    return (name, params)


def _same(got: Any, want: Any, exact: bool) -> None:
    if want is None or got is None or exact:
        assert got == want
    else:
        assert got == pytest.approx(want, rel=1e-12, abs=1e-15)


# long: the SQL compare, 2.8-5.7 s each on a machine at load 8 (the weighted macros bind
# for seconds; two fresh connections and a subprocess; 60 replicates in one call)
@pytest.mark.long
@pytest.mark.parametrize(("weighted", "zd"), [(False, 0), (True, "ignore")])
def test_estimates_are_the_measure_macros_and_the_python_calls(
    con: Any, weighted: bool, zd: Any
) -> None:
    """Each model's and the baseline's estimate is the measure macro over the ids both have."""
    data = gappy(80, 2)
    measures = list(LABEL_SET_MEASURES)
    params: dict[str, Any] = dict(beta=2.0, n_labels=4, options="-beta 2", zero_division=zd)
    if weighted:
        params["sample_weight"] = "w"
    got = cmp(con, data, measures, by=["g"], n_resamples=20, **params)
    python = python_compare(
        data,
        [_python_entry(m, zd) for m in measures],
        by="g",
        n_resamples=20,
        sample_weight="w" if weighted else None,
    )
    exprs = ", ".join(_macro(m, zd, weighted) for m in measures)
    con.register("expected_rows", data)
    try:  # one query: the weighted macros take DuckDB seconds to bind
        rows = con.sql(f"SELECT g, model, {exprs} FROM expected_rows GROUP BY g, model").fetchall()
        expected = {(r[0], r[1]): r[2:] for r in rows}
    finally:
        con.unregister("expected_rows")
    assert [r[:3] for r in got] == [
        (g, model, m) for g in (0, 1) for model in ("B", "C") for m in measures
    ]
    assert [r[:3] for r in got] == [(r[0], r[1], r[2].split("(")[0]) for r in python]
    for i, row in enumerate(got):
        j = i % len(measures)
        exact = row[2].startswith(POOLED) and not weighted
        _same(row[3], expected[(row[0], "A")][j], exact)
        _same(row[4], expected[(row[0], row[1])][j], exact)
        theirs = python[i]
        for k in (3, 4, 5):  # baseline_estimate, estimate, difference
            if theirs[k] is not None and math.isnan(theirs[k]):
                assert math.isnan(row[k])
            else:
                _same(row[k], theirs[k], exact)
        if row[4] is not None and row[3] is not None:
            assert row[5] == row[4] - row[3]
        # McNemar: the Python call's, for the 0/1 outcomes only
        if row[2] in ("subset_accuracy", "zero_one_loss"):
            assert (row[9] is None) == (theirs[9] is None), (row, theirs)
            if row[9] is not None:
                assert row[9] == pytest.approx(theirs[9], rel=1e-11)
        else:
            assert row[9] is None and theirs[9] is None


def test_identical_models_differ_by_zero_with_p_one(con: Any) -> None:
    actual, predicted = simulate(random.Random(9), 60)
    data = paired(actual, {"A": predicted, "B": predicted}, w=weights_for(60, 3))
    for weight in (None, "w"):
        rows = cmp(
            con,
            data,
            ["micro_f1", "samples_f1", "subset_accuracy"],
            n_resamples=100,
            sample_weight=weight,
        )
        for row in rows:
            assert row[0] == "B" and row[2] == row[3] and row[4] == 0.0
            assert row[5] == row[6] == 0.0 and row[7] == 1.0
        assert rows[2][8] == 1.0  # McNemar: no discordant pair


# ------------------------------------------------------------------ McNemar
def exact_mcnemar(b: int, c: int) -> float:
    """min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2), in exact fractions."""
    n = b + c
    if n == 0:
        return 1.0
    tail = Fraction(sum(math.comb(n, i) for i in range(min(b, c) + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))


@pytest.mark.parametrize(
    ("b", "c"), [(0, 0), (0, 1), (0, 5), (3, 9), (9, 3), (40, 61), (150, 150), (1000, 1100)]
)
def test_the_mcnemar_macro_is_the_exact_binomial_test(con: Any, b: int, c: int) -> None:
    got = con.sql(f"SELECT _mlsql_mcnemar_p({b}, {c})").fetchall()[0][0]
    assert got == pytest.approx(exact_mcnemar(b, c), rel=1e-11)


def test_mcnemar_counts_the_discordant_ids(con: Any) -> None:
    """b ids exactly right for the baseline only, c for the model only (NULL rows left out)."""
    rng = random.Random(12)
    actual, pa_ = simulate(rng, 120, flip=0.1)
    pb = noisy(rng, actual, 0.05)
    pb[4] = None  # an unknown row is no discordant pair
    w = [float(rng.choice([1, 2, 3])) for _ in actual]
    data = paired(actual, {"A": pa_, "B": pb}, w=w)
    right_a = [set(a) == set(p) for a, p in zip(actual, pa_, strict=True)]
    right_b = [p is not None and set(a) == set(p) for a, p in zip(actual, pb, strict=True)]
    known = [p is not None for p in pb]
    b = sum(1 for i in range(120) if known[i] and right_a[i] and not right_b[i])
    c = sum(1 for i in range(120) if known[i] and right_b[i] and not right_a[i])
    assert b + c > 10
    (row,) = cmp(con, data, ["subset_accuracy"], n_resamples=20)
    assert row[8] == pytest.approx(exact_mcnemar(b, c), rel=1e-11)
    (loss,) = cmp(con, data, ["zero_one_loss"], n_resamples=20)
    assert loss[8] == row[8]
    # whole weights equal for both rows of an id count as repeated ids
    bw = sum(int(w[i]) for i in range(120) if known[i] and right_a[i] and not right_b[i])
    cw = sum(int(w[i]) for i in range(120) if known[i] and right_b[i] and not right_a[i])
    (weighted,) = cmp(con, data, ["subset_accuracy"], n_resamples=20, sample_weight="w")
    assert weighted[8] == pytest.approx(exact_mcnemar(bw, cw), rel=1e-11)
    # fractional weights are no counts of ids: no test, as in the Python call
    halves = data.set_column(4, "w", pa.array([x + 0.5 for x in w] * 2))
    (fractional,) = cmp(con, halves, ["subset_accuracy"], n_resamples=20, sample_weight="w")
    assert fractional[8] is None
    (theirs,) = python_compare(halves, ["subset_accuracy"], n_resamples=20, sample_weight="w")
    assert theirs[8] is None
    # nor are whole weights that differ between the two rows of an id
    apart = data.set_column(4, "w", pa.array(w + [x + 1 for x in w]))
    (differ,) = cmp(con, apart, ["subset_accuracy"], n_resamples=20, sample_weight="w")
    (theirs,) = python_compare(apart, ["subset_accuracy"], n_resamples=20, sample_weight="w")
    assert differ[8] is None and theirs[8] is None


# ------------------------------------------------------------------ same seed, same rows
#: a query whose result must not depend on the process or the number of threads
STABLE = (
    "FROM compare('SELECT i % 200 AS id, chr((65 + i // 200)::INT) AS model, i % 200 % 3 AS g, "
    "(i % 4) / 2 AS w, [chr((97 + i % 3)::INT), chr((97 + i % 5)::INT)] AS actual, "
    "[chr((97 + (i * 7) % 4)::INT)] AS predicted FROM range(600) t(i)', 'actual', 'predicted', "
    "measures := ['micro_f1', 'samples_f1', 'subset_accuracy'], \"by\" := ['g'], "
    "n_resamples := 300, sample_weight := 'w')"
)


@pytest.mark.long
def test_the_result_does_not_depend_on_threads_or_the_process() -> None:
    rows = same_rows_on_threads_and_in_another_process(STABLE)
    assert [r[1] for r in rows[:6]] == ["B", "B", "B", "C", "C", "C"]


def test_same_seed_same_rows_other_seed_other_rows(con: Any) -> None:
    data = gappy(60, 6)
    kw: dict[str, Any] = dict(by=["g"], n_resamples=50, sample_weight="w")
    one = cmp(con, data, ["micro_f1", "samples_f1"], seed=3, **kw)
    assert one == cmp(con, data, ["micro_f1", "samples_f1"], seed=3, **kw)
    other = cmp(con, data, ["micro_f1", "samples_f1"], seed=4, **kw)
    assert [r[:6] for r in one] == [r[:6] for r in other]
    assert [r[6:9] for r in one] != [r[6:9] for r in other]


# ------------------------------------------------------------------ intervals and p-values
def numpy_paired_bootstrap(
    counts_a: np.ndarray, counts_b: np.ndarray, n_resamples: int, seed: int
) -> np.ndarray:
    """Micro F1 of B minus A under the plain per-id Poisson bootstrap (one weight per id)."""
    weights = np.random.default_rng(seed).poisson(1.0, (n_resamples, len(counts_a)))
    weights = weights.astype(float)
    return micro_f1(counts_b, weights) - micro_f1(counts_a, weights)


def test_intervals_agree_with_python_and_a_per_row_numpy_paired_bootstrap(con: Any) -> None:
    rng = random.Random(4)
    actual, pa_ = simulate(rng, 400)
    # B is A with a fifth of its rows predicted anew, a little better: the models are correlated
    pb = [
        noisy(rng, [a], 0.1)[0] if rng.random() < 0.2 else p
        for a, p in zip(actual, pa_, strict=True)
    ]
    data = paired(actual, {"A": pa_, "B": pb})
    got = cmp(con, data, ["micro_f1"], n_resamples=2000, confidence=0.9)
    (theirs,) = python_compare(data, ["micro_f1"], n_resamples=2000, confidence=0.9)
    ca, cb = row_counts(actual, pa_), row_counts(actual, pb)
    reference = numpy_paired_bootstrap(ca, cb, 4000, seed=11)
    se = reference.std(ddof=1)
    low, high = np.quantile(reference, [0.05, 0.95])
    (row,) = got
    ones = np.ones((1, len(actual)))
    assert row[4] == pytest.approx(micro_f1(cb, ones)[0] - micro_f1(ca, ones)[0], rel=1e-12)
    # the pairing matters: unpaired resampling would give a wider interval
    unpaired = np.sqrt(
        np.var(numpy_bootstrap_one(ca, 4000, 12), ddof=1)
        + np.var(numpy_bootstrap_one(cb, 4000, 13), ddof=1)
    )
    assert se < 0.8 * unpaired
    # the width of a 90% interval is 3.29 std errors; its Monte Carlo error over 2000 draws ~3%
    assert (row[6] - row[5]) / 3.29 == pytest.approx(se, rel=0.1)
    assert row[5] == pytest.approx(low, abs=0.3 * se)
    assert row[6] == pytest.approx(high, abs=0.3 * se)
    assert row[5] == pytest.approx(theirs[5], abs=0.3 * se)
    assert row[6] == pytest.approx(theirs[6], abs=0.3 * se)
    assert row[7] == pytest.approx(theirs[7], abs=0.02)


def numpy_bootstrap_one(counts: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    weights = np.random.default_rng(seed).poisson(1.0, (n_resamples, len(counts)))
    return micro_f1(counts, weights.astype(float))


@pytest.mark.long
def test_p_values_under_no_difference_are_roughly_uniform() -> None:
    """60 replicates of two equally good models, one group each, in one call."""
    rng = random.Random(11)
    n_sets, rows = 60, 80
    actual: list = []
    pa_: list = []
    pb: list = []
    for _ in range(n_sets):
        a, p = simulate(rng, rows)
        actual += a
        pa_ += p
        pb += noisy(rng, a, 0.2)
    data = paired(actual, {"A": pa_, "B": pb}, rep=[i // rows for i in range(n_sets * rows)])
    got = cmp(mlsql.connect(), data, ["micro_f1"], by=["rep"], n_resamples=300)
    found = np.sort([r[8] for r in got])
    assert len(found) == n_sets
    # Kolmogorov-Smirnov distance to U(0, 1); its 1% critical value is 1.63 / sqrt(n)
    steps = np.arange(1, n_sets + 1) / n_sets
    distance = max(np.max(steps - found), np.max(found - (steps - 1 / n_sets)))
    assert distance < 1.63 / math.sqrt(n_sets), distance
    # about 6 of 60 below 0.1 (binomial sd 2.3)
    assert 1 <= np.sum(found < 0.1) <= 14, found


def test_a_real_difference_is_found(con: Any) -> None:
    rng = random.Random(10)
    actual, worse = simulate(rng, 300, flip=0.3)
    better = noisy(rng, actual, 0.1)
    data = paired(actual, {"A": worse, "B": better})
    rows = cmp(con, data, ["micro_f1", "subset_accuracy", "hamming_loss"], n_labels=4)
    ca, cb = row_counts(actual, worse), row_counts(actual, better)
    ones = np.ones((1, len(actual)))
    assert rows[0][4] == pytest.approx(micro_f1(cb, ones)[0] - micro_f1(ca, ones)[0], rel=1e-12)
    assert rows[0][5] > 0 and rows[0][7] < 0.01
    assert rows[1][5] > 0 and rows[1][7] < 0.01 and rows[1][8] < 0.01
    assert rows[2][6] < 0 and rows[2][7] < 0.01  # a loss: lower is better


# ------------------------------------------------------------------ errors
def _python_message(data: pa.Table, measures: Any = ("micro_f1",), **kwargs: Any) -> str:
    with pytest.raises(mlsql.MlsqlError) as info:
        mlsql.compare(data, "actual", "predicted", list(measures), **kwargs)
    return str(info.value)


def _sql_message(con: Any, data: pa.Table, measures: Any = ("micro_f1",), **kwargs: Any) -> str:
    with pytest.raises(duckdb.Error) as info:
        cmp(con, data, list(measures), **kwargs)
    return str(info.value)


def _two_models(n: int = 20, seed: int = 13) -> pa.Table:
    actual, predicted = simulate(random.Random(seed), n)
    return paired(actual, {"A": predicted, "B": noisy(random.Random(seed), actual, 0.2)})


def test_unpaired_rows_are_the_python_calls_error_unless_dropped(con: Any) -> None:
    data = _two_models()
    # B lacks ids 17, 18, 19; C has ids 0, 1 only, and id 30 that A lacks
    extra = pa.table(
        {
            "id": [0, 1, 30],
            "model": ["C"] * 3,
            "actual": [["a"]] * 3,
            "predicted": [["b"]] * 3,
        }
    )
    data = pa.concat_tables([data.slice(0, 37), extra.cast(data.schema)])
    message = _python_message(data)
    assert "22 rows have no partner" in message and "1 of model 'C' without" in message
    assert message in _sql_message(con, data)
    dropped = cmp(con, data, ["micro_f1"], drop_unpaired=True, n_resamples=10)
    theirs = python_compare(data, ["micro_f1"], drop_unpaired=True, n_resamples=10)
    assert [r[:5] for r in dropped] == [r[:5] for r in theirs]
    assert [r[0] for r in dropped] == ["B", "C"]


@pytest.mark.long_cases("native")
def test_an_unknown_baseline_is_the_python_calls_error(con: Any) -> None:
    data = _two_models()
    for baseline in ("Z", 1, "it's"):
        message = _python_message(data, baseline=baseline)
        assert "is not a value of the model column 'model'. Its values: 'A', 'B'." in message
        assert message in _sql_message(con, data, baseline=baseline)
    empty = data.slice(0, 0)  # no rows: no model value at all
    message = _python_message(empty)
    assert message.endswith("Its values: .")
    assert message in _sql_message(con, empty)


def test_integer_models_pair_with_an_integer_baseline(con: Any) -> None:
    data = _two_models()
    numbered = data.set_column(1, "model", pa.array([1] * 20 + [2] * 20))
    rows = cmp(con, numbered, ["micro_f1"], baseline=1, n_resamples=10)
    theirs = python_compare(numbered, ["micro_f1"], baseline=1, n_resamples=10)
    assert [r[:5] for r in rows] == [r[:5] for r in theirs] and rows[0][0] == 2
    assert _python_message(numbered) in _sql_message(con, numbered)  # baseline 'A'


def test_repeated_ids_are_the_python_calls_error(con: Any) -> None:
    data = _two_models()
    data = pa.concat_tables([data, data.slice(25, 2)])
    message = _python_message(data)
    assert "Got 2 repeated rows" in message
    assert message in _sql_message(con, data)


@pytest.mark.parametrize("measure", ["nope", "label_metrics"])
def test_other_measures_are_the_python_calls_error(con: Any, measure: str) -> None:
    message = _sql_message(con, _two_models(), ["micro_f1", measure])
    with pytest.raises(mlsql.MlsqlError) as python:
        mlsql.compare(_two_models(), "actual", "predicted", ["micro_f1", measure])
    assert str(python.value) in message


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_resamples": 1},
        {"n_resamples": 2.5},
        {"confidence": 1.0},
        {"confidence": "x"},
        {"seed": -1},
        {"by": ["model"]},
        {"by": ["p_value"]},
    ],
)
def test_settings_errors_are_the_python_calls_messages(con: Any, kwargs: dict) -> None:
    data = _two_models()
    if "by" in kwargs:
        data = data.append_column("p_value", pa.array([0] * 40))
    message = _python_message(data, **kwargs)
    assert message in _sql_message(con, data, **kwargs)


def test_measure_parameters_and_drop_unpaired_are_checked(con: Any) -> None:
    data = _two_models()
    assert "'beta' parameter of compare" in _sql_message(con, data, ["micro_fbeta"], beta=-1)
    assert "'n_labels' parameter of compare" in _sql_message(con, data, ["hamming_loss"])
    message = _sql_message(con, data, drop_unpaired="yes")
    assert "The 'drop_unpaired' parameter of compare must be a boolean. Got 'yes'" in message


@pytest.mark.parametrize(
    ("role", "params"),
    [
        ("model", {"model": "nope"}),
        ("id", {"id": "nope"}),
        ("sample_weight", {"sample_weight": "nope"}),
        ("by", {"by": ["nope"]}),
    ],
)
def test_a_missing_column_is_named(con: Any, role: str, params: dict) -> None:
    data = _two_models()
    message = missing_column_message("compare", role, "nope", data.column_names)
    assert message in _sql_message(con, data, **params)


HOSTILE = "x'); DROP TABLE t; --\""


def test_hostile_table_column_model_and_by_names_are_only_names(con: Any) -> None:
    rng = random.Random(15)
    actual, predicted = simulate(rng, 30)
    base, other = "A'); DROP TABLE t; --", 'B"x'
    data = pa.table(
        {
            HOSTILE: actual * 2,
            "p'q": predicted + noisy(rng, actual, 0.3),
            'm"': [base] * 30 + [other] * 30,
            "i'd": list(range(30)) * 2,
            'g"': [i % 2 for i in range(30)] * 2,
        }
    )
    con.register(HOSTILE, data)
    name = quote_ident(HOSTILE)
    try:
        call = (
            f"FROM compare({literal(HOSTILE)}, {literal(HOSTILE)}, 'p''q', model := 'm\"', "
            f"id := 'i''d', measures := ['micro_f1']"
        )
        by = '"by" := [\'g"\']'
        rows = con.sql(f"{call}, baseline := {literal(base)}, {by}, n_resamples := 10)").fetchall()
        want = con.sql(
            f'SELECT "g""", "m""", micro_f1({name}, "p\'q") FROM {name} GROUP BY ALL ORDER BY 1, 2'
        ).fetchall()
        f1 = {(g, m): v for g, m, v in want}
        assert [r[:3] for r in rows] == [(g, other, "micro_f1") for g in (0, 1)]
        for r in rows:
            assert r[3] == f1[(r[0], base)] and r[4] == f1[(r[0], other)]
        absent = "nope'); DROP TABLE t; --"
        with pytest.raises(duckdb.Error) as info:
            con.sql(f"{call}, baseline := {literal(absent)})").fetchall()
        assert f"the baseline {absent!r} is not a value of the model column 'm\"'" in str(
            info.value
        )
        assert f"Its values: {base!r}, {other!r}." in str(info.value)
        with pytest.raises(duckdb.Error) as info:
            con.sql(f'{call}, baseline := {literal(base)}, "by" := [{literal(absent)}])').fetchall()
        assert f"the by column '{absent}' is not in the source" in str(info.value)
        assert con.sql(f"SELECT count(*) FROM {name}").fetchall() == [(60,)]
    finally:
        con.unregister(HOSTILE)


def test_groups_and_models_come_in_the_python_calls_order(con: Any) -> None:
    """By group (NULL first), then model, then measure as listed."""
    rng = random.Random(16)
    actual, _ = simulate(rng, 40)
    models = {m: noisy(rng, actual, 0.2) for m in ("C", "A", "B")}
    data = paired(actual, models, g=[[2, None, 1, 10][i % 4] for i in range(40)])
    measures = ["samples_f1", "micro_f1"]
    got = cmp(con, data, measures, by=["g"], n_resamples=5)
    theirs = python_compare(data, measures, by="g", n_resamples=5)
    assert [r[:3] for r in got] == [r[:3] for r in theirs]
    assert [r[:2] for r in got[::2]] == [(g, m) for g in (None, 1, 2, 10) for m in ("B", "C")]


def test_one_call_takes_any_mix_of_label_list_measures(con: Any) -> None:
    data = gappy(40, 21)
    measures = ["macro_f1", "subset_accuracy", "micro_f1", "weighted_recall"]
    got = cmp(con, data, measures, by=["g"], n_resamples=30)
    want = python_compare(data, measures, by="g", n_resamples=30)
    assert [r[:3] for r in got] == [r[:3] for r in want]
    for row, expected in zip(got, want, strict=True):
        # estimates, differences and McNemar's test are the data's: the Python call's
        assert row[3:6] == pytest.approx(expected[3:6], rel=1e-12, abs=1e-15), row[:3]
        assert (row[9] is None) == (expected[9] is None) == (row[2] != "subset_accuracy")
        if row[9] is not None:
            assert row[9] == pytest.approx(expected[9], rel=1e-12), row[:3]
        assert row[6] <= row[7], row[:3]
