"""bootstrap() and compare() in every engine, against independent references.

References written here, never the code under test: each row's statistics
from Python sets; a plain numpy per-row Poisson bootstrap; scikit-learn with
``sample_weight`` for the class measures; scipy's exact binomial test for
McNemar. Coverage runs on simulated data whose population value is known.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import mlsql
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._resample import measures as M
from mlsql._resample import run
from tests.conftest import _engines

LABELS = ["a", "b", "c", "d"]


# ------------------------------------------------------------------ data and references
def simulate(rng: random.Random, n: int, flip: float = 0.2) -> tuple[list, list]:
    """Rows whose labels are each true w.p. 1/2 and predicted wrongly w.p. ``flip``.

    Population micro F1 = 2 E[tp] / (E|A| + E|P|) = 2 (1 - flip) / 2 = 1 - flip per label.
    """
    actual, predicted = [], []
    for _ in range(n):
        a = [x for x in LABELS if rng.random() < 0.5]
        p = [x for x in LABELS if (x in a) != (rng.random() < flip)]
        actual.append(a)
        predicted.append(p)
    return actual, predicted


def row_counts(actual: list, predicted: list) -> np.ndarray:
    """(tp, |A|, |P|) per row from Python sets."""
    return np.array(
        [
            (len(set(a) & set(p)), len(set(a)), len(set(p)))
            for a, p in zip(actual, predicted, strict=True)
        ],
        dtype=float,
    )


def micro_f1(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted micro F1 of per-row counts, one value per row of ``weights``."""
    tp, na, npred = (weights @ counts).T
    return 2 * tp / (na + npred)


def numpy_bootstrap(counts: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The plain per-row Poisson bootstrap: every row its own Poisson(1) weight."""
    weights = np.random.default_rng(seed).poisson(1.0, (n_resamples, len(counts)))
    return micro_f1(counts, weights.astype(float))


def table(actual: list, predicted: list, **extra: list) -> pa.Table:
    return pa.table({"actual": actual, "predicted": predicted, **extra})


def run_engine(engine: str, func: str, data: pa.Table, *args: Any, **kwargs: Any) -> list[tuple]:
    """``func`` of ``engine`` on ``data``, its result as row tuples."""
    if engine == "duckdb":
        return getattr(mlsql, func)(data, *args, **kwargs).fetchall()
    if engine == "polars":
        import polars as pl

        import mlsql.polars as mp

        return getattr(mp, func)(pl.from_arrow(data), *args, **kwargs).rows()
    import mlsql.spark as ms
    from tests.engines.spark_engine import frame

    return [tuple(r) for r in getattr(ms, func)(frame(data), *args, **kwargs).collect()]


@pytest.fixture(scope="module")
def con() -> Any:
    return mlsql.connect()


def select_on(con: Any, data: pa.Table, exprs: str) -> tuple:
    """``SELECT exprs FROM data`` on the module's connection, ``data`` registered for this query
    only (a name another test registered must not answer for it)."""
    con.register("data", data)
    try:
        [row] = con.sql(f"SELECT {exprs} FROM data").fetchall()
    finally:
        con.unregister("data")
    return row


# ------------------------------------------------------------------ estimates
LABEL_SET = [
    "micro_precision",
    "micro_recall",
    "micro_f1",
    ("micro_fbeta", {"beta": 2.0}),
    "micro_jaccard",
    "samples_precision",
    "samples_recall",
    "samples_f1",
    ("samples_fbeta", {"beta": 0.5}),
    "samples_jaccard",
    ("samples_f1", {"zero_division": "ignore"}),
    "subset_accuracy",
    "zero_one_loss",
    ("hamming_loss", {"n_labels": 4}),
    ("fmeasure", {"options": "-beta 2"}),
]


def _sql_call(entry: Any) -> str:
    name, params = (entry, {}) if isinstance(entry, str) else entry
    if name == "fmeasure":
        return f"fmeasure(actual, predicted, '{params['options']}')"
    args = "".join(f", {k} := {v!r}" for k, v in params.items())
    return f"{name}(actual, predicted{args})"


@pytest.mark.long_cases("duckdb")
@pytest.mark.parametrize("engine", _engines())
def test_estimate_is_the_measure_itself(engine: str, con: Any) -> None:
    actual, predicted = simulate(random.Random(1), 60)
    actual[3], predicted[5] = None, None  # unknown rows are skipped
    actual[7], predicted[7] = ["a", "a", None], ["a", None]  # repeats and NULL elements
    actual[8], predicted[8] = [], []  # nothing to score
    data = table(actual, predicted)
    got = run_engine(engine, "bootstrap", data, "actual", "predicted", LABEL_SET, n_resamples=20)
    expected = select_on(con, data, ", ".join(map(_sql_call, LABEL_SET)))
    assert len(got) == len(LABEL_SET)
    for row, want in zip(got, expected, strict=True):
        assert row[1] == pytest.approx(want, rel=1e-12, abs=1e-15), row[0]
        assert row[2] <= row[3]


CLASS = [
    "accuracy",
    "error_rate",
    "f1_score",
    ("precision_score", {"average": "micro"}),
    ("recall_score", {"average": "weighted"}),
    ("fbeta_score", {"beta": 2.0}),
    "balanced_accuracy_score",
    "cohen_kappa_score",
    ("cohen_kappa_score", {"weights": "quadratic"}),
    "matthews_corrcoef",
]


def _sklearn(entry: Any, y: list, p: list, w: np.ndarray | None = None) -> float:
    from sklearn import metrics as skm

    name, params = (entry, {}) if isinstance(entry, str) else entry
    if name == "error_rate":
        return 1 - skm.accuracy_score(y, p, sample_weight=w)
    fn = {"accuracy": skm.accuracy_score, "matthews_corrcoef": skm.matthews_corrcoef}.get(name)
    if fn is None:
        fn = getattr(skm, name)
        if name in ("f1_score", "precision_score", "recall_score", "fbeta_score"):
            params = {"average": "macro", **params, "zero_division": 0}
    return float(fn(y, p, sample_weight=w, **params))


def single_label(rng: random.Random, n: int) -> tuple[list, list]:
    classes = ["x", "y", "z"]
    y = [rng.choice(classes) for _ in range(n)]
    p = [c if rng.random() < 0.7 else rng.choice(classes) for c in y]
    return y, p


@pytest.mark.parametrize("engine", _engines())
def test_single_label_estimates_equal_scikit_learn(engine: str) -> None:
    y, p = single_label(random.Random(2), 80)
    got = run_engine(engine, "bootstrap", table(y, p), "actual", "predicted", CLASS, n_resamples=20)
    for row, entry in zip(got, CLASS, strict=True):
        assert row[1] == pytest.approx(_sklearn(entry, y, p), rel=1e-12), row[0]


def test_resampled_class_measures_equal_scikit_learn_with_the_weights() -> None:
    """Each resample's value is the measure with the drawn weights (scikit-learn's sample_weight)."""
    y, p = single_label(random.Random(3), 50)
    rows = sorted({(a, b) for a, b in zip(y, p, strict=True)})
    m = np.array([sum(1 for r in zip(y, p, strict=True) if r == t) for t in rows], dtype=float)
    cols = run.columns([(*t, 0) for t in rows], M.STATS["classes"], 0)
    weights = run.draw(np.random.default_rng(5), m, 30)
    for entry in CLASS:
        (chosen,) = M.resolve([entry], "bootstrap")
        values, nulls = run.evaluate(chosen, cols, weights)
        for r in range(len(weights)):
            # one row per tuple carrying the tuple's weight: the same weighted data
            ys, ps = [t[0] for t in rows], [t[1] for t in rows]
            want = _sklearn(entry, ys, ps, weights[r])
            assert not nulls[r]
            assert values[r] == pytest.approx(want, rel=1e-9, abs=1e-12), (entry, r)


# ------------------------------------------------------------------ the resample itself
def test_intervals_agree_with_a_per_row_numpy_bootstrap() -> None:
    actual, predicted = simulate(random.Random(4), 400)
    counts = row_counts(actual, predicted)
    reference = numpy_bootstrap(counts, 4000, seed=11)
    (row,) = run_engine(
        "duckdb",
        "bootstrap",
        table(actual, predicted),
        "actual",
        "predicted",
        ["micro_f1"],
        n_resamples=4000,
        confidence=0.9,
    )
    low, high = np.quantile(reference, [0.05, 0.95])
    se = reference.std(ddof=1)
    # Monte Carlo error of a standard deviation over 4000 draws is about 1.1%
    assert row[4] == pytest.approx(se, rel=0.06)
    assert row[2] == pytest.approx(low, abs=0.3 * se)
    assert row[3] == pytest.approx(high, abs=0.3 * se)


@pytest.mark.long
def test_ninety_percent_intervals_cover_the_population_value(con: Any) -> None:
    """200 samples of 150 rows; population micro F1 = 0.8. Coverage as the numpy bootstrap's."""
    rng = random.Random(5)
    truth, n_sets, hits, reference_hits = 0.8, 200, 0, 0
    for i in range(n_sets):
        actual, predicted = simulate(rng, 150)
        (row,) = mlsql.bootstrap(
            table(actual, predicted),
            "actual",
            "predicted",
            ["micro_f1"],
            n_resamples=400,
            confidence=0.9,
            seed=i,
            con=con,
        ).fetchall()
        hits += row[2] <= truth <= row[3]
        ref = numpy_bootstrap(row_counts(actual, predicted), 400, seed=i)
        low, high = np.quantile(ref, [0.05, 0.95])
        reference_hits += low <= truth <= high
    coverage, reference = hits / n_sets, reference_hits / n_sets
    # binomial sd of a coverage over 200 sets is about 0.021
    assert 0.83 <= coverage <= 0.96, coverage
    assert abs(coverage - reference) <= 0.06, (coverage, reference)


@pytest.mark.parametrize("engine", _engines())
def test_same_seed_same_result_other_seed_other_result(engine: str) -> None:
    data = table(*simulate(random.Random(6), 50))
    args = ("actual", "predicted", ["micro_f1", "samples_f1"])
    one = run_engine(engine, "bootstrap", data, *args, n_resamples=50, seed=3)
    assert one == run_engine(engine, "bootstrap", data, *args, n_resamples=50, seed=3)
    other = run_engine(engine, "bootstrap", data, *args, n_resamples=50, seed=4)
    assert [r[:2] for r in one] == [r[:2] for r in other]
    assert [r[2:] for r in one] != [r[2:] for r in other]


@pytest.mark.parametrize("engine", _engines())
def test_a_group_without_a_known_row_gives_null(engine: str) -> None:
    """A group whose rows are all unknown gives a NULL estimate and interval for every
    measure, the macro and weighted averages too (their tuples crashed numpy's indexing
    with no cell at all), and the other group its own (one row, all right: 1)."""
    lists = pa.list_(pa.string())
    data = pa.table(
        {
            "actual": pa.array([["a"], None], lists),
            "predicted": pa.array([["a"], ["b"]], lists),
            "g": ["x", "y"],
        }
    )
    measures = ["macro_f1", "weighted_jaccard", "micro_f1"]
    got = run_engine(engine, "bootstrap", data, "actual", "predicted", measures, by="g")
    assert [r[:3] for r in got] == [("x", m, 1.0) for m in measures] + [
        ("y", m, None) for m in measures
    ]
    assert all(x is None for r in got[3:] for x in r[2:])


@pytest.mark.long
def test_engines_agree_on_one_dataset() -> None:
    actual, predicted = simulate(random.Random(7), 80)
    actual[0] = None
    data = table(actual, predicted, g=[i % 3 for i in range(80)])
    args = ("actual", "predicted", ["micro_f1", "samples_jaccard", "subset_accuracy"])
    results = {
        e: run_engine(e, "bootstrap", data, *args, by="g", n_resamples=300) for e in _engines()
    }
    first = results[_engines()[0]]
    for engine, rows in results.items():
        assert len(rows) == len(first) == 9
        for got, want in zip(rows, first, strict=True):
            assert got[:2] == want[:2], engine
            # Spark draws in its executors from its own hash: its intervals agree within
            # Monte Carlo error (tests/test_spark_bootstrap.py), its estimates exactly
            n = 3 if engine == "spark" else None
            assert got[2:n] == pytest.approx(want[2:n], rel=1e-12), engine


def test_groups_are_resampled_independently() -> None:
    actual, predicted = simulate(random.Random(8), 40)
    data = table(actual * 2, predicted * 2, g=["x"] * 40 + ["y"] * 40)
    x, y = run_engine("duckdb", "bootstrap", data, "actual", "predicted", ["micro_f1"], by="g")
    assert (x[0], y[0]) == ("x", "y")
    assert x[2] == y[2]  # the same rows: the same estimate
    assert x[3:] != y[3:]  # but each group its own random stream


# ------------------------------------------------------------------ compare
def paired_table(a: list, pa_: list, pb: list, models: tuple = ("A", "B")) -> pa.Table:
    n = len(a)
    return pa.table(
        {
            "id": list(range(n)) * 2,
            "model": [models[0]] * n + [models[1]] * n,
            "actual": a * 2,
            "predicted": pa_ + pb,
        }
    )


@pytest.mark.parametrize("engine", _engines())
def test_identical_models_differ_by_zero_with_p_one(engine: str) -> None:
    actual, predicted = simulate(random.Random(9), 40)
    data = paired_table(actual, predicted, predicted)
    rows = run_engine(
        engine,
        "compare",
        data,
        "actual",
        "predicted",
        ["micro_f1", "subset_accuracy"],
        n_resamples=100,
    )
    for row in rows:
        assert row[0] == "B"
        assert row[2] == row[3] and row[4] == 0.0
        assert row[5] == row[6] == 0.0
        assert row[7] == 1.0
    assert rows[1][8] == 1.0  # McNemar: no discordant pair


def test_a_real_difference_is_found() -> None:
    rng = random.Random(10)
    actual, worse = simulate(rng, 300, flip=0.3)
    better = [[x for x in LABELS if (x in a) != (rng.random() < 0.1)] for a in actual]
    data = paired_table(actual, worse, better)
    rows = mlsql.compare(
        data, "actual", "predicted", ["micro_f1", "subset_accuracy"], n_resamples=1000
    ).fetchall()
    counts_a, counts_b = row_counts(actual, worse), row_counts(actual, better)
    ones = np.ones((1, len(actual)))
    f1 = micro_f1(counts_b, ones)[0] - micro_f1(counts_a, ones)[0]
    assert rows[0][4] == pytest.approx(f1, rel=1e-12)
    assert rows[0][5] > 0 and rows[0][7] < 0.01
    assert rows[1][5] > 0 and rows[1][7] < 0.01 and rows[1][8] < 0.01


@pytest.mark.long
def test_p_values_under_no_difference_are_uniform(con: Any) -> None:
    from scipy import stats

    rng = random.Random(11)
    found = []
    for i in range(120):
        actual, pa_ = simulate(rng, 100)
        pb = [[x for x in LABELS if (x in a) != (rng.random() < 0.2)] for a in actual]
        (row,) = mlsql.compare(
            paired_table(actual, pa_, pb),
            "actual",
            "predicted",
            ["micro_f1"],
            n_resamples=400,
            seed=i,
            con=con,
        ).fetchall()
        found.append(row[7])
    assert stats.kstest(found, "uniform").pvalue > 0.01
    assert 0.02 <= np.mean(np.array(found) < 0.1) <= 0.2


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 5), (3, 9), (40, 61), (3000, 3150)])
def test_mcnemar_is_the_exact_binomial_test(b: int, c: int) -> None:
    from scipy import stats

    want = 1.0 if b + c == 0 else stats.binomtest(b, b + c, 0.5).pvalue
    assert run.mcnemar_p_value(b, c) == pytest.approx(want, rel=1e-9)


def test_mcnemar_counts_the_discordant_rows() -> None:
    from scipy import stats

    y, p = single_label(random.Random(12), 60)
    q = [c if random.Random(i).random() < 0.5 else p[i] for i, c in enumerate(y)]
    data = paired_table(y, p, q)
    (row,) = mlsql.compare(data, "actual", "predicted", ["accuracy"], n_resamples=50).fetchall()
    b = sum(1 for i in range(60) if p[i] == y[i] and q[i] != y[i])
    c = sum(1 for i in range(60) if p[i] != y[i] and q[i] == y[i])
    assert row[8] == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-9)


@pytest.mark.parametrize("engine", _engines())
def test_unpaired_rows_are_an_error_unless_dropped(engine: str) -> None:
    actual, predicted = simulate(random.Random(13), 20)
    data = paired_table(actual, predicted, predicted).slice(0, 37)  # B lacks ids 17, 18, 19
    with pytest.raises(MlsqlError, match=r"3 rows have no partner.*3 of the baseline without"):
        run_engine(engine, "compare", data, "actual", "predicted", ["micro_f1"])
    dropped = run_engine(
        engine, "compare", data, "actual", "predicted", ["micro_f1"], drop_unpaired=True
    )
    ones = np.ones((1, 17))
    want = micro_f1(row_counts(actual[:17], predicted[:17]), ones)[0]
    assert dropped[0][2] == pytest.approx(want, rel=1e-12)


# ------------------------------------------------------------------ errors and names
@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"measures": ["label_metrics"]}, "cannot resample label_metrics: .* no single value"),
        ({"measures": [("macro_f1", {"by": "g"})]}, "drop by from macro_f1"),
        ({"measures": ["micro_f1", "accuracy"]}, "measures of one kind of input"),
        ({"measures": ["accuracy"]}, "from one label per row: actual must be a label"),
        ({"measures": "micro_f1"}, "The 'measures' parameter of bootstrap"),
        ({"measures": ["micro_f1"], "n_resamples": 1}, "'n_resamples' .* integer from 2 to 100000"),
        (
            {"measures": ["micro_f1"], "n_resamples": 100_001},
            r"'n_resamples' .* integer from 2 to 100000\. Got 100001 instead",
        ),
        ({"measures": ["micro_f1"], "confidence": 1.0}, "'confidence' .* strictly between"),
        ({"measures": ["micro_f1"], "seed": -1}, "'seed' .* integer >= 0"),
        ({"measures": ["micro_f1"], "by": "nope"}, "the by column 'nope' is not in the source"),
        ({"measures": [("micro_fbeta", {"beta": -1})]}, "'beta' parameter of micro_fbeta"),
    ],
)
def test_bad_input_is_a_clear_error(engine: str, kwargs: dict, message: str) -> None:
    data = table(*simulate(random.Random(14), 5))
    with pytest.raises(MlsqlError, match=message):
        run_engine(engine, "bootstrap", data, "actual", "predicted", **kwargs)


@pytest.mark.parametrize("engine", _engines())
def test_label_types_must_match(engine: str) -> None:
    data = pa.table({"actual": [["a"]], "predicted": [[1]]})
    with pytest.raises(MlsqlError, match="same label type"):
        run_engine(engine, "bootstrap", data, "actual", "predicted", ["micro_f1"])


def test_the_baseline_must_exist() -> None:
    data = paired_table([["a"]], [["a"]], [["b"]])
    with pytest.raises(MlsqlError, match=r"baseline 'C' is not a value.*'A', 'B'"):
        mlsql.compare(data, "actual", "predicted", ["micro_f1"], baseline="C")


def test_repeated_ids_are_an_error() -> None:
    data = pa.table(
        {"id": [1, 1, 1], "model": ["A", "B", "B"], "actual": [["a"]] * 3, "predicted": [["a"]] * 3}
    )
    with pytest.raises(MlsqlError, match=r"must be unique within each model.*1 repeated"):
        mlsql.compare(data, "actual", "predicted", ["micro_f1"])


@pytest.mark.parametrize("engine", _engines())
def test_hostile_column_names_are_only_names(engine: str) -> None:
    hostile = 'x"); DROP TABLE t; --'
    actual, predicted = simulate(random.Random(15), 30)
    data = pa.table({hostile: actual, "p'q": predicted, 'g"': [i % 2 for i in range(30)]})
    rows = run_engine(engine, "bootstrap", data, hostile, "p'q", ["micro_f1"], by='g"')
    ones = np.ones((1, 15))
    want = micro_f1(row_counts(actual[0::2], predicted[0::2]), ones)[0]
    assert rows[0][0] == 0 and rows[0][2] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(("engine", "star"), [(e, s) for e in _engines() for s in ("`y`", "*")])
def test_names_spark_would_parse_are_only_names(engine: str, star: str) -> None:
    """Columns named ``a.b``, `` `x` `` and ``*`` (or `` `y` ``) as actual, predicted, by, model,
    id and sample_weight: the numbers of plain names (Spark parsed them: AnalysisException)."""
    actual, predicted = simulate(random.Random(16), 30)
    w = [float(i % 3) for i in range(30)]
    data = pa.table({"a.b": actual, "`x`": predicted, star: [i % 2 for i in range(30)], "w.": w})
    rows = run_engine(
        engine, "bootstrap", data, "a.b", "`x`", ["micro_f1"], by=star, sample_weight="w."
    )
    want = micro_f1(row_counts(actual[0::2], predicted[0::2]), np.array([w[0::2]]))[0]
    assert rows[0][0] == 0 and rows[0][2] == pytest.approx(want, rel=1e-12)
    paired = paired_table(actual, predicted, predicted).rename_columns([star, "a.b", "a", "`x`"])
    rows = run_engine(
        engine, "compare", paired, "a", "`x`", ["micro_f1"], model="a.b", id=star, n_resamples=50
    )
    want = micro_f1(row_counts(actual, predicted), np.ones((1, 30)))[0]
    assert rows[0][0] == "B" and rows[0][2] == rows[0][3] == pytest.approx(want, rel=1e-12)


# ------------------------------------------------------------------ sample_weight
def weights_for(n: int, seed: int) -> list:
    """Row weights with zeros, a NULL and fractions."""
    rng = random.Random(seed)
    out: list = [rng.choice([0.0, 0.5, 1.0, 2.0, 3.25]) for _ in range(n)]
    out[2] = None
    return out


def _weighted_sql(entry: Any) -> str:
    name, params = (entry, {}) if isinstance(entry, str) else entry
    if name == "fmeasure":
        return f"fmeasure(actual, predicted, '{params['options']}', sample_weight := w)"
    args = "".join(f", {k} := {v!r}" for k, v in params.items())
    return f"{name}(actual, predicted, sample_weight := w{args})"


@pytest.mark.long_cases("label_sets-duckdb", "label_sets-polars")
@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize("kind", ["label_sets", "classes"])
def test_weighted_estimate_is_the_weighted_measure(engine: str, kind: str, con: Any) -> None:
    rng = random.Random(20)
    if kind == "label_sets":
        actual, predicted = simulate(rng, 60)
        actual[3] = None
        chosen = LABEL_SET
    else:
        actual, predicted = single_label(rng, 60)
        chosen = CLASS
    data = table(actual, predicted, w=weights_for(60, 21))
    got = run_engine(
        engine, "bootstrap", data, "actual", "predicted", chosen, n_resamples=20, sample_weight="w"
    )
    expected = select_on(con, data, ", ".join(map(_weighted_sql, chosen)))
    for row, want in zip(got, expected, strict=True):
        assert row[1] == pytest.approx(want, rel=1e-12, abs=1e-15), row[0]


def test_weighted_class_estimates_equal_scikit_learn() -> None:
    y, p = single_label(random.Random(22), 80)
    w = [x or 0.0 for x in weights_for(80, 23)]
    w = [x if x > 0 else 0.25 for x in w]  # every row counts: scikit-learn keeps zero-weight labels
    got = mlsql.bootstrap(
        table(y, p, w=w), "actual", "predicted", CLASS, n_resamples=10, sample_weight="w"
    ).fetchall()
    for row, entry in zip(got, CLASS, strict=True):
        assert row[1] == pytest.approx(_sklearn(entry, y, p, np.array(w)), rel=1e-12), row[0]


@pytest.mark.parametrize("engine", _engines())
def test_weighted_class_estimates_keep_the_classes_of_rows_weighing_0(engine: str) -> None:
    """A class met only in rows weighing 0 is a class (without weight), as scikit-learn's
    labels are the values seen whatever their weight: DuckDB's and Polars' estimates left it
    out (macro precision 1 where it is 1/2)."""
    y, p = single_label(random.Random(28), 40)
    y += ["w", "w", "v"]
    p += ["w", "x", "v"]
    w = [1.0 + (i % 3) for i in range(40)] + [0.0, 0.0, 0.0]
    got = run_engine(
        engine, "bootstrap", table(y, p, w=w), "actual", "predicted", CLASS,
        n_resamples=5, sample_weight="w",
    )  # fmt: skip
    for row, entry in zip(got, CLASS, strict=True):
        assert row[1] == pytest.approx(_sklearn(entry, y, p, np.array(w)), rel=1e-12), row[0]


@pytest.mark.parametrize("engine", _engines())
def test_rows_that_all_weigh_0_give_the_zero_division_value(engine: str) -> None:
    """As ``evaluate`` and the aggregates give it (the semantics guide's sample weights):
    DuckDB's and Polars' bootstrap, compare and slices gave NULL, taking rows of weight 0
    for no rows."""
    sets = {"actual": [["a"], ["b"]], "predicted": [["a"], ["c"]], "w": [0.0, 0.0]}
    chosen = [("micro_f1", {"zero_division": 1}), "samples_f1"]
    got = run_engine(
        engine, "bootstrap", pa.table(sets), "actual", "predicted", chosen,
        n_resamples=5, sample_weight="w",
    )  # fmt: skip
    assert [r[1] for r in got] == [1.0, 0.0]  # tp = fp = fn = 0; the samples' F of each row 0
    single = pa.table({"actual": ["a", "b"], "predicted": ["a", "c"], "w": [0.0, 0.0]})
    classes = ["f1_score", ("precision_score", {"zero_division": 1}), "matthews_corrcoef"]
    got = run_engine(
        engine, "bootstrap", single, "actual", "predicted", classes,
        n_resamples=5, sample_weight="w",
    )  # fmt: skip
    assert [r[1] for r in got] == [0.0, 1.0, 0.0]
    paired = pa.table(
        {"id": [1, 2, 1, 2], "model": ["A", "A", "B", "B"], "actual": [["a"], ["b"]] * 2,
         "predicted": [["a"], ["c"], ["a"], ["b"]], "w": [0.0, 0.0, 1.0, 1.0]}
    )  # fmt: skip
    (row,) = run_engine(
        engine, "compare", paired, "actual", "predicted", ["micro_f1"],
        n_resamples=5, sample_weight="w",
    )  # fmt: skip
    assert row[:5] == ("B", "micro_f1", 0.0, 1.0, 1.0)  # baseline's micro F1 of no weight: 0
    n = 40
    sliced = table(
        [["a"], ["a", "b"]] * (n // 2), [["b"], ["a"]] * (n // 2),
        lang=["de", "en"] * (n // 2), w=[0.0, 2.0] * (n // 2),
    )  # fmt: skip
    got = run_engine(
        engine, "slices", sliced, "actual", "predicted", "lang", "micro_f1",
        n_resamples=20, min_rows=5, sample_weight="w",
    )  # fmt: skip
    estimates = {r[0]: r[2] for r in got}
    assert estimates == {"lang = 'de'": 0.0, "lang = 'en'": pytest.approx(2 / 3, rel=1e-12)}


def test_weighted_intervals_agree_with_a_per_row_numpy_bootstrap() -> None:
    """Each row weighs its weight times its own Poisson(1) draw."""
    actual, predicted = simulate(random.Random(24), 400)
    w = np.array([x or 0.0 for x in weights_for(400, 25)])
    counts = row_counts(actual, predicted)
    draws = np.random.default_rng(12).poisson(1.0, (4000, 400)) * w
    reference = micro_f1(counts, draws)
    (row,) = mlsql.bootstrap(
        table(actual, predicted, w=w.tolist()),
        "actual",
        "predicted",
        ["micro_f1"],
        n_resamples=4000,
        confidence=0.9,
        sample_weight="w",
    ).fetchall()
    assert row[1] == pytest.approx(micro_f1(counts, w[None, :])[0], rel=1e-12)
    low, high = np.quantile(reference, [0.05, 0.95])
    se = reference.std(ddof=1)
    assert row[4] == pytest.approx(se, rel=0.06)
    assert row[2] == pytest.approx(low, abs=0.3 * se)
    assert row[3] == pytest.approx(high, abs=0.3 * se)
    unweighted = mlsql.bootstrap(
        table(actual, predicted), "actual", "predicted", ["micro_f1"], n_resamples=4000
    ).fetchall()[0]
    assert row[4] > 1.1 * unweighted[4]  # unequal weights: fewer effective rows, wider


@pytest.mark.long
def test_weighted_engines_agree_and_take_expressions() -> None:
    actual, predicted = simulate(random.Random(26), 60)
    data = table(actual, predicted, w=weights_for(60, 27), g=[i % 2 for i in range(60)])
    args = ("actual", "predicted", ["micro_f1", "samples_f1"])
    kw = {"by": "g", "n_resamples": 200}
    first = run_engine("duckdb", "bootstrap", data, *args, sample_weight="w", **kw)
    for engine in _engines():
        got = run_engine(engine, "bootstrap", data, *args, sample_weight="w", **kw)
        assert len(got) == len(first) == 4
        n = 3 if engine == "spark" else None  # Spark's own draws: estimates only
        for a, b in zip(got, first, strict=True):
            assert a[:2] == b[:2] and a[2:n] == pytest.approx(b[2:n], rel=1e-12), engine
    import polars as pl

    import mlsql.polars as mp

    doubled = mp.bootstrap(pl.from_arrow(data), *args, sample_weight=pl.col("w") * 2, **kw)
    # doubling every weight changes no ratio, and the draws are the same
    for a, b in zip(doubled.rows(), first, strict=True):
        assert a[2:] == pytest.approx(b[2:], rel=1e-12)
    if "spark" in _engines():
        import mlsql.spark as ms
        from tests.engines.spark_engine import frame

        df = frame(data)
        out = ms.bootstrap(df, *args, sample_weight=df["w"] * 2, **kw).collect()
        for a, b in zip(out, first, strict=True):  # the weight is hashed: estimates only
            assert tuple(a)[2:3] == pytest.approx(b[2:3], rel=1e-12)


@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ([1.0, -1.0, 1.0, 1.0, 1.0], P.sample_weight_message("bootstrap", "a negative number")),
        ([1.0, float("nan"), 1.0, 1.0, 1.0], P.sample_weight_message("bootstrap", "NaN")),
        (["x"] * 5, "bootstrap takes numbers for sample_weight"),
    ],
)
def test_bad_weights_have_the_weighted_measures_message(
    engine: str, weights: list, message: str
) -> None:
    import re

    data = table(*simulate(random.Random(28), 5), w=weights)
    pattern = message if weights[0] == "x" else re.escape(message)
    # bad values are found as the data is read: each engine's own error, mlsql's words
    with pytest.raises(Exception, match=pattern):
        run_engine(
            engine, "bootstrap", data, "actual", "predicted", ["micro_f1"], sample_weight="w"
        )
    with pytest.raises(MlsqlError, match="the sample_weight column 'nope' is not in the source"):
        run_engine(
            engine, "bootstrap", data, "actual", "predicted", ["micro_f1"], sample_weight="nope"
        )


@pytest.mark.parametrize("engine", _engines())
def test_weighted_compare_estimates_and_mcnemar(engine: str, con: Any) -> None:
    from scipy import stats

    y, p = single_label(random.Random(29), 60)
    q = [c if random.Random(i).random() < 0.5 else p[i] for i, c in enumerate(y)]
    whole = [random.Random(100 + i).choice([0, 1, 2, 3]) for i in range(60)]
    data = paired_table(y, p, q).append_column("w", pa.array([float(x) for x in whole * 2]))
    (row,) = run_engine(
        engine,
        "compare",
        data,
        "actual",
        "predicted",
        ["accuracy"],
        n_resamples=50,
        sample_weight="w",
    )
    w = np.array(whole, dtype=float)
    right_a = np.array([a == b for a, b in zip(y, p, strict=True)])
    right_b = np.array([a == b for a, b in zip(y, q, strict=True)])
    assert row[2] == pytest.approx((w * right_a).sum() / w.sum(), rel=1e-12)
    assert row[3] == pytest.approx((w * right_b).sum() / w.sum(), rel=1e-12)
    b, c = int(w[right_a & ~right_b].sum()), int(w[right_b & ~right_a].sum())
    assert row[8] == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-9)
    fractional = data.set_column(4, "w", pa.array([x + 0.5 for x in whole * 2]))
    (row,) = run_engine(
        engine,
        "compare",
        fractional,
        "actual",
        "predicted",
        ["accuracy"],
        n_resamples=50,
        sample_weight="w",
    )
    assert row[8] is None  # weights that are no counts of rows: no McNemar test


@pytest.mark.parametrize("engine", _engines())
def test_weighted_identical_models_differ_by_zero(engine: str) -> None:
    actual, predicted = simulate(random.Random(30), 40)
    data = paired_table(actual, predicted, predicted).append_column(
        "w", pa.array([float(x or 0.0) for x in weights_for(40, 31)] * 2)
    )
    rows = run_engine(
        engine,
        "compare",
        data,
        "actual",
        "predicted",
        ["micro_f1"],
        n_resamples=100,
        sample_weight="w",
    )
    assert rows[0][4] == rows[0][5] == rows[0][6] == 0.0 and rows[0][7] == 1.0


@pytest.mark.parametrize("engine", _engines())
def test_hostile_weight_name_is_only_a_name(engine: str) -> None:
    hostile = "w'); DROP TABLE t; --\""
    actual, predicted = simulate(random.Random(32), 30)
    w = [float(i % 3) for i in range(30)]
    rows = run_engine(
        engine,
        "bootstrap",
        table(actual, predicted, **{hostile: w}),
        "actual",
        "predicted",
        ["micro_f1"],
        sample_weight=hostile,
    )
    want = micro_f1(row_counts(actual, predicted), np.array([w]))[0]
    assert rows[0][1] == pytest.approx(want, rel=1e-12)


# ------------------------------------------------------------------ macro and weighted averages
LABEL_AVERAGES = [
    "macro_precision",
    "macro_recall",
    "macro_f1",
    ("macro_fbeta", {"beta": 2.0}),
    "macro_jaccard",
    "weighted_precision",
    "weighted_recall",
    "weighted_f1",
    ("weighted_fbeta", {"beta": 0.5}),
    "weighted_jaccard",
    ("macro_f1", {"zero_division": 1.0}),
    ("macro_recall", {"labels": ["a", "b", "z"]}),
    "micro_f1",  # a label-set measure in the same call: from the same tuples
]


def _table_call(entry: Any, weighted: bool) -> str:
    name, params = (entry, {}) if isinstance(entry, str) else entry
    if name.startswith("micro"):
        w = ", sample_weight := w" if weighted else ""
        return f"(SELECT {name}(actual, predicted{w}) FROM data)"
    args = "".join(f", {k} := {v!r}" for k, v in params.items())
    if weighted:
        args += ", sample_weight := 'w'"
    return f"(SELECT * FROM {name}('data', 'actual', 'predicted'{args}))"


@pytest.mark.long
@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize("weighted", [False, True])
def test_label_average_estimates_are_the_measures(engine: str, weighted: bool, con: Any) -> None:
    actual, predicted = simulate(random.Random(40), 60)
    actual[3], predicted[5] = None, None
    actual[7], predicted[7] = ["a", "a", None], ["a", None]
    actual[8], predicted[8] = [], []
    predicted[9] = ["e"]  # a label predicted only
    data = table(actual, predicted, w=[float(x or 0.0) + 0.5 for x in weights_for(60, 41)])
    kw = {"sample_weight": "w"} if weighted else {}
    got = run_engine(
        engine, "bootstrap", data, "actual", "predicted", LABEL_AVERAGES, n_resamples=20, **kw
    )
    con.register("data", data)
    calls = ", ".join(_table_call(e, weighted) for e in LABEL_AVERAGES)
    try:
        expected = con.sql(f"SELECT {calls}").fetchall()[0]
    finally:
        con.unregister("data")
    assert len(got) == len(LABEL_AVERAGES)
    for row, want in zip(got, expected, strict=True):
        assert row[1] == pytest.approx(want, rel=1e-12, abs=1e-15), row[0]
        assert row[2] <= row[3]


#: the other group values of the per-label counts: multilabel_report's columns
REPORTED = [
    "macro_f1_of_means",
    "label_accuracy_micro",
    "label_accuracy_macro",
    "clp",
    "mlp",
    "wlp",
]


@functools.cache
def reported(weighted: bool) -> tuple[pa.Table, dict[str, float]]:
    """A table with NULL lists, repeats and a label predicted only; its multilabel_report."""
    actual, predicted = simulate(random.Random(44), 60)
    actual[3], predicted[5] = None, None
    actual[7], predicted[7] = ["a", "a", None], ["a", None]
    actual[8], predicted[8] = [], []
    predicted[9] = ["e"]
    data = table(actual, predicted, w=[float(x or 0.0) + 0.5 for x in weights_for(60, 45)])
    con = mlsql.connect()
    con.register("data", data)
    w = ", sample_weight := 'w'" if weighted else ""
    report = con.sql(f"SELECT * FROM multilabel_report('data', 'actual', 'predicted'{w})")
    beta = con.sql(
        f"SELECT macro_fbeta_of_means FROM multilabel_report('data', 'actual', 'predicted'{w}, "
        "beta := 2.0)"
    ).fetchall()[0][0]
    return data, {**dict(zip(report.columns, report.fetchall()[0], strict=True)), "beta": beta}


@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize("weighted", [False, True])
def test_other_label_count_measures_are_the_reports(engine: str, weighted: bool) -> None:
    data, want = reported(weighted)
    kw = {"sample_weight": "w"} if weighted else {}
    chosen = [*REPORTED, ("macro_fbeta_of_means", {"beta": 2.0})]
    got = run_engine(engine, "bootstrap", data, "actual", "predicted", chosen, n_resamples=20, **kw)
    for row, name in zip(got, [*REPORTED, "beta"], strict=True):
        assert row[1] == pytest.approx(want[name], rel=1e-12, abs=1e-15), row[0]
        assert row[2] <= row[3]


def macro_f1_of_rows(actual: list, predicted: list, weights: np.ndarray) -> np.ndarray:
    """Macro F1 (labels seen in the resample, undefined F = 0) per row of ``weights``, from sets."""
    labels = sorted({x for r in actual + predicted for x in r})
    a = np.array([[x in set(r) for x in labels] for r in actual], dtype=float)
    p = np.array([[x in set(r) for x in labels] for r in predicted], dtype=float)
    tp, fp, fn = weights @ (a * p), weights @ ((1 - a) * p), weights @ (a * (1 - p))
    present = (tp + fp + fn) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.where(present, np.nan_to_num(2 * tp / (2 * tp + fp + fn)), 0.0)
    return f1.sum(axis=1) / present.sum(axis=1)


def test_label_average_intervals_agree_with_a_per_row_numpy_bootstrap() -> None:
    actual, predicted = simulate(random.Random(42), 300)
    predicted[0] = ["rare"]  # a label that some resamples lose
    reference = macro_f1_of_rows(
        actual, predicted, np.random.default_rng(13).poisson(1.0, (4000, 300)).astype(float)
    )
    (row,) = mlsql.bootstrap(
        table(actual, predicted), "actual", "predicted", ["macro_f1"], n_resamples=4000,
        confidence=0.9,
    ).fetchall()  # fmt: skip
    assert row[1] == pytest.approx(macro_f1_of_rows(actual, predicted, np.ones((1, 300)))[0])
    low, high = np.quantile(reference, [0.05, 0.95])
    se = reference.std(ddof=1)
    assert row[4] == pytest.approx(se, rel=0.06)
    assert row[2] == pytest.approx(low, abs=0.3 * se)
    assert row[3] == pytest.approx(high, abs=0.3 * se)


@pytest.mark.long
def test_label_averages_agree_across_engines_and_in_compare() -> None:
    actual, predicted = simulate(random.Random(43), 50)
    data = table(actual, predicted, g=[i % 2 for i in range(50)])
    args = ("actual", "predicted", ["macro_f1", "weighted_jaccard"])
    first = run_engine("duckdb", "bootstrap", data, *args, by="g", n_resamples=200)
    for engine in _engines():
        got = run_engine(engine, "bootstrap", data, *args, by="g", n_resamples=200)
        n = 3 if engine == "spark" else None  # Spark's own draws: estimates only
        for a, b in zip(got, first, strict=True):
            assert a[:2] == b[:2] and a[2:n] == pytest.approx(b[2:n], rel=1e-12), engine
    same = paired_table(actual, predicted, predicted)
    for engine in _engines():
        rows = run_engine(engine, "compare", same, *args, n_resamples=100)
        for row in rows:
            assert row[4] == row[5] == row[6] == 0.0 and row[7] == 1.0, engine


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)


@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (["a", 2], "must hold labels of one kind (all text or all integers). Got ['a', 2]"),
        ("a", "must be a list of labels. Got 'a' instead."),
    ],
)
def test_a_bad_universe_is_refused_as_evaluate_refuses_it(
    engine: str, labels: Any, message: str
) -> None:
    """bootstrap of a macro average checks its ``labels`` as evaluate does (it took a string
    as its characters and resampled a mixed list)."""
    import re

    data = table([["a", "b"], ["a"]], [["c"], ["a"]])
    words = re.escape("The 'labels' parameter of macro_f1 " + message)
    with pytest.raises(MlsqlError, match=words):
        run_engine(
            engine, "bootstrap", data, "actual", "predicted", [("macro_f1", {"labels": labels})]
        )


@pytest.mark.parametrize("engine", _engines())
def test_a_universe_of_the_other_kind_is_refused_as_evaluate_refuses_it(engine: str) -> None:
    """Integer labels given for text lists: evaluate's message (bootstrap gave 0 with narrow
    intervals, as no row holds such a label)."""
    data = table([["a", "b"], ["a"]], [["c"], ["a"]])
    with pytest.raises(
        MlsqlError,
        match=r"The 'labels' parameter of macro_f1 must hold labels of the columns' type "
        r"\(.+\): text\. Got \[1, 2\] instead\.",
    ):
        run_engine(
            engine, "bootstrap", data, "actual", "predicted", [("macro_f1", {"labels": [1, 2]})]
        )
