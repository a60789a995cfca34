"""The SQL table macros ``bootstrap`` and ``compare`` on one label per row, numbers and scores.

Expected values come from elsewhere: estimates from scikit-learn (with its
``sample_weight``); the Poisson(1) draw against ``scipy.stats.poisson``; intervals
against a plain per-row numpy Poisson bootstrap written here and the Python call
``mlsql.bootstrap``; McNemar's p-value against ``scipy.stats.binomtest``; errors
against the Python call's messages.
"""

from __future__ import annotations

import uuid
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pytest
from scipy import stats
from sklearn import metrics as skm

import mlsql
import mlsql.polars as mp
from mlsql._duckdb.resample_values import KINDS, poisson_one
from mlsql._sqlexpr import quote_ident
from tests.conftest import _engines
from tests.test_bootstrap_numbers import spark_area_under_pr
from tests.test_sql_bootstrap import (
    literal,
    named,
    same_rows_on_threads_and_in_another_process,
    sql_connection,
)

#: every case is long: each binds DuckDB's resampling macros for a third of a second or more
#: (with test_kappa_tests, 11% of the README's suite, which took 593 s of its 600 on two quiet
#: cores with them, 2026-12-01)
pytestmark = pytest.mark.long


@pytest.fixture(scope="module", params=["plain", "native"])
def con(request: Any) -> Any:
    return sql_connection(request.param)


def run(con: Any, func: str, data: pa.Table, measures: list[str], **params: Any) -> list[tuple]:
    """``FROM func(<fresh name>, 'actual', 'predicted', measures := ..., params)``."""
    name = f"t_{uuid.uuid4().hex}"
    con.register(name, data)
    try:
        return con.sql(
            f"FROM {func}({literal(name)}, 'actual', 'predicted', "
            f"measures := {literal(measures)}{named(params)})"
        ).fetchall()
    finally:
        con.unregister(name)


def numbers(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    return pa.table(
        {
            "actual": y,
            "predicted": y + rng.normal(scale=0.8, size=n),
            "g": np.arange(n) % 2,
            "w": rng.integers(1, 4, n).astype(float),
        }
    )


def classes(n: int, seed: int, right: float = 0.7) -> pa.Table:
    rng = np.random.default_rng(seed)
    a = rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2])
    p = np.where(rng.random(n) < right, a, rng.choice(["x", "y", "z"], n))
    return pa.table({"actual": a, "predicted": p, "g": np.arange(n) % 2, "w": rng.random(n) + 0.5})


def scores(n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(np.int64)
    s = np.clip(0.3 * y + rng.random(n) * 0.7, 0, 1).round(2)  # ties
    return pa.table({"actual": y, "predicted": s, "g": np.arange(n) % 2, "w": rng.random(n) + 0.5})


# ------------------------------------------------------------------ the estimate
SKLEARN = {
    "accuracy": skm.accuracy_score,
    "f1_score": lambda a, p, sample_weight: skm.f1_score(
        a, p, average="macro", sample_weight=sample_weight
    ),
    "precision_score": lambda a, p, sample_weight: skm.precision_score(
        a, p, average="macro", sample_weight=sample_weight
    ),
    "balanced_accuracy_score": skm.balanced_accuracy_score,
    "cohen_kappa_score": skm.cohen_kappa_score,
    "matthews_corrcoef": skm.matthews_corrcoef,
    "mse": skm.mean_squared_error,
    "mae": skm.mean_absolute_error,
    "r2": skm.r2_score,
    "explained_variance": skm.explained_variance_score,
    "logloss": skm.log_loss,
    "auc": skm.roc_auc_score,
    "average_precision_score": skm.average_precision_score,
    "area_under_pr": lambda a, p, sample_weight: spark_area_under_pr(
        a, p, np.ones(len(a)) if sample_weight is None else sample_weight
    ),
    "brier_score_loss": skm.brier_score_loss,
}
DATA = {"classes": classes, "regression": numbers, "scores": scores}


@pytest.mark.parametrize("kind", list(DATA))
@pytest.mark.parametrize("weighted", [False, True])
def test_estimates_equal_scikit_learn_per_group(con: Any, kind: str, weighted: bool) -> None:
    data = DATA[kind](300, 1)
    assert set(SKLEARN) <= {m for ms in KINDS.values() for m in ms}  # each is resampled here
    measures = [m for m in KINDS[kind] if m in SKLEARN]
    params: dict[str, Any] = {"by": ["g"], "n_resamples": 20}
    if weighted:
        params["sample_weight"] = "w"
    got = run(con, "bootstrap", data, measures, **params)
    assert [(r[0], r[1]) for r in got] == [(g, m) for g in (0, 1) for m in measures]
    cols = {c: np.asarray(data[c]) for c in ("actual", "predicted", "g", "w")}
    for g, measure, estimate, low, high, se in got:
        part = cols["g"] == g
        w = cols["w"][part] if weighted else None
        expected = SKLEARN[measure](cols["actual"][part], cols["predicted"][part], sample_weight=w)
        assert estimate == pytest.approx(expected, rel=1e-9, abs=1e-12), measure
        assert low <= high and se > 0


def test_the_other_measures_are_the_measure_macros(con: Any) -> None:
    """Measures scikit-learn lacks: the library's own macros on the same rows."""
    cases = {
        "regression": ["rmse", "mape", "rse", "rrse", "rae", "pearson_corr"],
        "classes": ["error_rate", "recall_score", "fbeta_score"],
        "scores": ["expected_calibration_error"],
    }
    for kind, measures in cases.items():
        data = DATA[kind](120, 2)
        got = run(con, "bootstrap", data, measures, n_resamples=5, sample_weight="w", beta=2.0)
        con.register("d", data)
        for measure, row in zip(measures, got, strict=True):
            extra = ", beta := 2.0" if measure == "fbeta_score" else ""
            (want,) = con.sql(
                f"SELECT {measure}(actual := actual, "
                f"{'prob' if kind == 'scores' else 'predicted'} := predicted, "
                f"sample_weight := w{extra}) FROM d"
            ).fetchall()[0]
            assert row[0] == measure and row[1] == pytest.approx(want, rel=1e-12)
        con.unregister("d")


# ------------------------------------------------------------------ the draws
def test_poisson_one_is_the_poisson_inverse_cdf(con: Any) -> None:
    n = 1_000_000
    (counts,) = con.sql(
        f"SELECT histogram({poisson_one('u')}) FROM "
        f"(SELECT (i + 0.5) / {n} AS u FROM range({n}) t(i))"
    ).fetchall()[0]
    for k in range(12):
        assert counts.get(k, 0) / n == pytest.approx(stats.poisson.pmf(k, 1), abs=2 / n)


# ------------------------------------------------------------------ intervals
def per_row_bootstrap(values: np.ndarray, measure: Any, n_resamples: int, seed: int) -> np.ndarray:
    """The plain per-row Poisson bootstrap: every row its own Poisson(1) weight."""
    weights = np.random.default_rng(seed).poisson(1.0, (n_resamples, len(values[0])))
    return np.array([measure(*values, w) for w in weights])


@pytest.mark.parametrize(
    ("kind", "measure", "reference"),
    [
        ("regression", "mse", lambda a, p, w: np.average((a - p) ** 2, weights=w)),
        ("classes", "accuracy", lambda a, p, w: np.average(a == p, weights=w)),
        ("scores", "auc", lambda a, p, w: skm.roc_auc_score(a, p, sample_weight=w)),
    ],
)
def test_intervals_agree_with_python_and_a_per_row_numpy_bootstrap(
    con: Any, kind: str, measure: str, reference: Any
) -> None:
    data = DATA[kind](300, 3)
    ((_, estimate, low, high, se),) = run(
        con, "bootstrap", data, [measure], n_resamples=2000, confidence=0.9
    )
    values = (data["actual"].to_numpy(), data["predicted"].to_numpy())
    ref = per_row_bootstrap(values, reference, 2000, seed=5)
    # Monte Carlo error of a standard deviation over 2000 draws is about 1.6%
    assert se == pytest.approx(ref.std(ddof=1), rel=0.1)
    want_low, want_high = np.quantile(ref, [0.05, 0.95])
    assert low == pytest.approx(want_low, abs=0.3 * se)
    assert high == pytest.approx(want_high, abs=0.3 * se)
    result = mlsql.bootstrap(
        data, "actual", "predicted", [measure], n_resamples=2000, confidence=0.9
    )
    python = result.fetchall()[0]
    assert estimate == pytest.approx(python[1], rel=1e-12)
    assert se == pytest.approx(python[4], rel=0.1)


def test_same_seed_same_rows_other_seed_other_rows(con: Any) -> None:
    data = numbers(80, 4)
    kw = dict(by=["g"], n_resamples=40, sample_weight="w")
    one = run(con, "bootstrap", data, ["mse", "r2"], seed=3, **kw)
    again = run(con, "bootstrap", data, ["mse", "r2"], seed=3, **kw)
    # the same draws; DuckDB's parallel sums of doubles may round the last bit otherwise,
    # as the measure macros themselves do
    for mine, theirs in zip(one, again, strict=True):
        assert mine[:2] == theirs[:2] and mine[2:] == pytest.approx(theirs[2:], rel=1e-12)
    other = run(con, "bootstrap", data, ["mse", "r2"], seed=4, **kw)
    for mine, theirs in zip(one, other, strict=True):
        assert mine[2] == pytest.approx(theirs[2], rel=1e-12)
        assert mine[3:] != pytest.approx(theirs[3:], rel=1e-6)


STABLE = (
    "FROM bootstrap('SELECT i % 3 AS g, (i % 4) / 2 AS w, chr((97 + i % 3)::INT) AS actual, "
    "chr((97 + i % 5 % 3)::INT) AS predicted FROM range(300) t(i)', 'actual', 'predicted', "
    "measures := ['accuracy', 'f1_score', 'matthews_corrcoef'], \"by\" := ['g'], "
    "n_resamples := 300, sample_weight := 'w')"
)


def test_the_result_does_not_depend_on_threads_or_the_process() -> None:
    assert same_rows_on_threads_and_in_another_process(STABLE)


# ------------------------------------------------------------------ compare
def paired(data: pa.Table, other: pa.Table) -> pa.Table:
    n = data.num_rows
    ids = pa.array(list(range(n)) * 2)
    models = pa.array(["A"] * n + ["B"] * n)
    both = pa.concat_tables([data, other])
    return both.append_column("id", ids).append_column("model", models)


def test_identical_models_differ_by_zero_with_p_one(con: Any) -> None:
    data = classes(200, 6)
    got = run(con, "compare", paired(data, data), ["accuracy", "f1_score"], n_resamples=200)
    for row in got:
        assert row[0] == "B" and row[4] == 0 and row[5] == 0 and row[6] == 0
        assert row[7] == 1.0
    assert got[0][8] == 1.0 and got[1][8] is None  # McNemar on accuracy only


def test_a_real_difference_and_mcnemar_on_the_discordant_ids(con: Any) -> None:
    a = classes(400, 7, right=0.6)
    b = a.set_column(1, "predicted", a["actual"])  # always right
    got = run(con, "compare", paired(a, b), ["accuracy", "error_rate"], n_resamples=500)
    right_a = np.asarray(a["actual"]) == np.asarray(a["predicted"])
    only_b = int((~right_a).sum())
    mcnemar = stats.binomtest(0, only_b, 0.5).pvalue
    (acc, err) = got
    assert acc[4] == pytest.approx(only_b / 400) and acc[5] > 0 and acc[7] < 0.01
    assert err[4] == pytest.approx(-only_b / 400) and err[6] < 0
    assert acc[8] == pytest.approx(mcnemar, rel=1e-9) and err[8] == acc[8]


def test_compare_on_numbers_agrees_with_a_per_row_paired_bootstrap(con: Any) -> None:
    a = numbers(300, 8)
    b = a.set_column(
        1, "predicted", pa.array(np.asarray(a["actual"]) * 0.5 + np.asarray(a["predicted"]) * 0.5)
    )
    ((model, measure, base, est, diff, low, high, p, mc),) = run(
        con, "compare", paired(a, b), ["mse"], n_resamples=2000, confidence=0.9
    )
    y, pa_, pb = (np.asarray(x) for x in (a["actual"], a["predicted"], b["predicted"]))
    assert (model, measure, mc) == ("B", "mse", None)
    assert base == pytest.approx(np.mean((y - pa_) ** 2)) and est == pytest.approx(
        np.mean((y - pb) ** 2)
    )
    weights = np.random.default_rng(9).poisson(1.0, (4000, len(y)))
    ref = np.array(
        [
            np.average((y - pb) ** 2, weights=w) - np.average((y - pa_) ** 2, weights=w)
            for w in weights
        ]
    )
    se = ref.std(ddof=1)
    assert diff == pytest.approx(est - base)
    assert low == pytest.approx(np.quantile(ref, 0.05), abs=0.3 * se)
    assert high == pytest.approx(np.quantile(ref, 0.95), abs=0.3 * se)
    assert p < 0.01


# ------------------------------------------------------------------ errors and names
def _python_error(func: str, data: pa.Table, measures: list[str]) -> str:
    with pytest.raises(mlsql.MlsqlError) as info:
        getattr(mlsql, func)(data, "actual", "predicted", measures)
    return str(info.value)


@pytest.mark.parametrize(
    "measures", [["accuracy", "mse"], ["mse", "micro_f1"], ["auc", "accuracy"]]
)
def test_mixed_kinds_are_the_python_calls_error(con: Any, measures: list[str]) -> None:
    data = numbers(10, 10)
    with pytest.raises(duckdb.Error) as info:
        run(con, "bootstrap", data, measures)
    assert _python_error("bootstrap", data, measures) in str(info.value)


@pytest.mark.parametrize("measures", ["mse", [], [1, 2], None])
def test_measures_that_are_no_list_of_names_are_the_python_calls_error(
    con: Any, measures: Any
) -> None:
    data = numbers(10, 10)
    with pytest.raises(
        duckdb.Error, match="The 'measures' parameter of bootstrap must be a non-empty list"
    ):
        run(con, "bootstrap", data, measures)


HOSTILE = "x'); DROP TABLE t; --\""


def test_hostile_table_column_and_by_names_are_only_names(con: Any) -> None:
    data = numbers(40, 11)
    data = data.rename_columns([HOSTILE + "a", HOSTILE + "p", HOSTILE + "g", "w"])
    con.execute(f"CREATE TABLE {quote_ident(HOSTILE)} AS SELECT 1 AS one")
    con.register(HOSTILE + "t", data)
    try:
        got = con.sql(
            f"FROM bootstrap({literal(HOSTILE + 't')}, {literal(HOSTILE + 'a')}, "
            f"{literal(HOSTILE + 'p')}, measures := ['mse'], \"by\" := [{literal(HOSTILE + 'g')}], "
            "n_resamples := 10)"
        ).fetchall()
        assert [r[0] for r in got] == [0, 1]
        assert con.sql(f"FROM {quote_ident(HOSTILE)}").fetchall() == [(1,)]
    finally:
        con.unregister(HOSTILE + "t")
        con.execute(f"DROP TABLE {quote_ident(HOSTILE)}")


@pytest.mark.parametrize(
    "value",
    ["it's", 'say "x"', "a, b", "[x]", 0.95, 2.5, 1000, -1, True, None, ["a", "it's", None]],
)
def test_the_literal_text_reads_back_as_the_value_and_its_type(con: Any, value: Any) -> None:
    text = literal(value)
    (shown,) = con.sql(f"SELECT _mlsql_literal({text})").fetchall()[0]
    assert (
        con.sql(f"SELECT {shown}, typeof({shown})").fetchall()
        == con.sql(f"SELECT {text}, typeof({text})").fetchall()
    )


def _bucket_draws(con: Any, buckets: str, m: int, n: int) -> dict[int, int]:
    """How many of a grid of n uniforms the bucket table macro ``buckets`` of mean m draws as
    each k (the equi-join on buckets the SQL resampling runs)."""
    (counts,) = con.sql(
        f"SELECT histogram(c.k) FROM (SELECT (i + 0.5) / {n} AS u FROM range({n}) t(i)) d "
        f"JOIN {buckets}([{m}]) c ON floor(d.u * 4096)::BIGINT = c.b "
        "AND d.u > c.lo AND d.u <= c.hi"
    ).fetchall()[0]
    return counts


@pytest.mark.parametrize("m", [2, 3, 37, 14_000])
def test_the_bucketed_inverse_cdf_is_the_poisson_distribution(con: Any, m: int) -> None:
    """The equi-join on buckets draws k from Poisson(m): the share of a fine grid of
    uniforms drawn as each k is scipy's pmf."""
    n = 200_000
    counts = _bucket_draws(con, "_mlsql_poisson_buckets", m, n)
    assert sum(counts.values()) == n  # one k per uniform
    for k, seen in counts.items():
        assert seen / n == pytest.approx(stats.poisson.pmf(k, m), abs=2 / n)


@pytest.mark.parametrize("m", [2, 5, 192, 193, 14_000])
def test_the_bucketed_inverse_cdf_is_the_half_binomial_distribution(con: Any, m: int) -> None:
    """Fisher's draws in the SQL compare: the share of a fine grid of uniforms drawn as each
    k is scipy's Binomial(m, 1/2) pmf (the whole support up to m = 192, tails cut beyond)."""
    n = 200_000
    counts = _bucket_draws(con, "_mlsql_half_binomial_buckets", m, n)
    assert sum(counts.values()) == n  # one k per uniform
    for k, seen in counts.items():
        assert seen / n == pytest.approx(stats.binom.pmf(k, m, 0.5), abs=2 / n)
    (support,) = con.sql(f"SELECT list(k) FROM _mlsql_half_binomial_cdf([{m}])").fetchall()[0]
    assert (sorted(support) == list(range(m + 1))) == (m <= 192)


# ------------------------------------------------------------------ macro and weighted averages
def label_lists(n: int, seed: int) -> pa.Table:
    """Label lists with repeats, a NULL element, an empty row, an unknown row and weights."""
    rng = np.random.default_rng(seed)
    labels = ["a", "b", "c", "d", "e"]
    actual = [[x for x in labels if rng.random() < 0.4] for _ in range(n)]
    predicted = [
        [x for x in a if rng.random() < 0.8] + [x for x in labels if rng.random() < 0.1]
        for a in actual
    ]
    actual[0], predicted[0] = ["a", "a", None], ["a"]
    actual[1], predicted[1] = [], []
    actual[2] = None
    return pa.table(
        {"actual": actual, "predicted": predicted, "g": np.arange(n) % 2, "w": rng.random(n) + 0.5}
    )


def _indicators(data: pa.Table, part: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's indicator matrices of the known rows of ``part`` (NULL elements dropped)."""
    from sklearn.preprocessing import MultiLabelBinarizer

    rows = [
        (set(a) - {None}, set(p) - {None}, w)
        for a, p, w, keep in zip(
            data["actual"].to_pylist(),
            data["predicted"].to_pylist(),
            data["w"].to_pylist(),
            part,
            strict=True,
        )
        if keep and a is not None and p is not None
    ]
    binarizer = MultiLabelBinarizer().fit([a | p for a, p, _ in rows])
    return (
        binarizer.transform([a for a, _, _ in rows]),
        binarizer.transform([p for _, p, _ in rows]),
        np.array([w for _, _, w in rows]),
    )


LABEL_AVERAGES = {
    "macro_f1": lambda y, p, w: skm.f1_score(
        y, p, average="macro", sample_weight=w, zero_division=0
    ),
    "macro_precision": lambda y, p, w: skm.precision_score(
        y, p, average="macro", sample_weight=w, zero_division=0
    ),
    "weighted_recall": lambda y, p, w: skm.recall_score(
        y, p, average="weighted", sample_weight=w, zero_division=0
    ),
    "weighted_jaccard": lambda y, p, w: skm.jaccard_score(
        y, p, average="weighted", sample_weight=w, zero_division=0
    ),
    "macro_fbeta": lambda y, p, w: skm.fbeta_score(
        y, p, beta=2.0, average="macro", sample_weight=w, zero_division=0
    ),
}


@pytest.mark.parametrize("weighted", [False, True])
def test_label_averages_equal_scikit_learn_per_group(con: Any, weighted: bool) -> None:
    data = label_lists(200, 12)
    params: dict[str, Any] = {"by": ["g"], "n_resamples": 20, "beta": 2.0}
    if weighted:
        params["sample_weight"] = "w"
    got = run(con, "bootstrap", data, list(LABEL_AVERAGES), **params)
    assert [(r[0], r[1]) for r in got] == [(g, m) for g in (0, 1) for m in LABEL_AVERAGES]
    groups = np.asarray(data["g"])
    for g, measure, estimate, low, high, se in got:
        y, p, w = _indicators(data, groups == g)
        expected = LABEL_AVERAGES[measure](y, p, w if weighted else None)
        assert estimate == pytest.approx(expected, rel=1e-9), measure
        assert low <= high and se > 0


def test_label_averages_agree_with_the_python_call(con: Any) -> None:
    data = label_lists(300, 13)
    measures = ["macro_f1", "weighted_precision", "label_accuracy_macro", "macro_f1_of_means"]
    got = run(con, "bootstrap", data, measures, n_resamples=2000, confidence=0.9)
    result = mlsql.bootstrap(
        data, "actual", "predicted", measures, n_resamples=2000, confidence=0.9
    )
    for mine, theirs in zip(got, result.fetchall(), strict=True):
        assert mine[0] == theirs[0] and mine[1] == pytest.approx(theirs[1], rel=1e-12)
        assert mine[4] == pytest.approx(theirs[4], rel=0.12)
        assert mine[2] == pytest.approx(theirs[2], abs=0.3 * theirs[4])
        assert mine[3] == pytest.approx(theirs[3], abs=0.3 * theirs[4])


def test_label_averages_of_identical_models_differ_by_zero(con: Any) -> None:
    data = label_lists(100, 14)
    got = run(con, "compare", paired(data, data), ["macro_f1", "wlp"], n_resamples=100)
    assert [(r[0], r[1], r[4], r[7], r[8]) for r in got] == [
        ("B", "macro_f1", 0, 1.0, None),
        ("B", "wlp", 0, 1.0, None),
    ]


# ------------------------------------------------------------------ the parameters of these kinds
def test_average_weights_and_n_bins_reach_their_measures(con: Any) -> None:
    """Estimates under the SQL parameters equal scikit-learn under the same settings."""
    data = classes(200, 15)
    a, p = np.asarray(data["actual"]), np.asarray(data["predicted"])
    got = run(
        con,
        "bootstrap",
        data,
        ["f1_score", "cohen_kappa_score"],
        average="micro",
        weights="quadratic",
        n_resamples=5,
    )
    assert got[0][1] == pytest.approx(skm.f1_score(a, p, average="micro"), rel=1e-12)
    assert got[1][1] == pytest.approx(skm.cohen_kappa_score(a, p, weights="quadratic"), rel=1e-12)
    s = scores(200, 16)
    y, prob = np.asarray(s["actual"]), np.asarray(s["predicted"])
    ((_, ece, *_),) = run(
        con, "bootstrap", s, ["expected_calibration_error"], n_bins=4, n_resamples=5
    )
    edges = np.minimum((prob * 4).astype(int), 3)  # equal-width bins, the last closed
    want = sum(
        abs(prob[edges == b].mean() - y[edges == b].mean()) * (edges == b).mean()
        for b in range(4)
        if (edges == b).any()
    )
    assert ece == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize(
    ("sql", "measure", "params", "kind"),
    [
        ("average := 'bogus'", "f1_score", {"average": "bogus"}, "classes"),
        ("weights := 'cubic'", "cohen_kappa_score", {"weights": "cubic"}, "classes"),
        ("zero_division := 'x'", "f1_score", {"zero_division": "x"}, "classes"),
        ("n_bins := 0", "expected_calibration_error", {"n_bins": 0}, "scores"),
    ],
)
def test_bad_parameters_are_the_same_verdict_in_every_engine(
    con: Any, sql: str, measure: str, params: dict, kind: str
) -> None:
    """The SQL macro's error is the Python call's on the same entry in DuckDB, Polars, Spark."""
    data = DATA[kind](20, 17)
    with pytest.raises(mlsql.MlsqlError) as python:
        mlsql.bootstrap(data, "actual", "predicted", [(measure, params)], n_resamples=3)
    with pytest.raises(mlsql.MlsqlError) as polars:
        mp.bootstrap(pl.from_arrow(data), "actual", "predicted", [(measure, params)], n_resamples=3)
    verdicts = [str(python.value), str(polars.value)]
    if "spark" in _engines():  # MLSQL_TEST_ENGINES may narrow a run (the oldest DuckDB's)
        import mlsql.spark as ms
        from tests.engines.spark_engine import session

        frame = session().createDataFrame(data.to_pylist())
        with pytest.raises(mlsql.MlsqlError) as spark:
            ms.bootstrap(frame, "actual", "predicted", [(measure, params)], n_resamples=3)
        verdicts.append(str(spark.value))
    name = f"t_{uuid.uuid4().hex}"
    con.register(name, data)
    try:
        with pytest.raises(duckdb.Error) as sql_error:
            con.sql(
                f"FROM bootstrap({literal(name)}, 'actual', 'predicted', "
                f"measures := [{literal(measure)}], {sql}, n_resamples := 3)"
            ).fetchall()
    finally:
        con.unregister(name)
    assert len(set(verdicts)) == 1
    assert str(python.value) in str(sql_error.value)
