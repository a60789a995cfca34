"""The SQL table macro ``bootstrap`` (DuckDB), on plain ``mlsql.sql`` (``mlsql sql-path``) and on ``mlsql.connect()``.

Expected values come from elsewhere: the estimate from the measure macros
themselves; the Poisson draws against the pmf computed here with
``math.lgamma``; the intervals against the Python call ``mlsql.bootstrap`` and
the plain per-row numpy bootstrap of ``tests/test_bootstrap.py``; coverage on
simulated data whose population value is known.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
import uuid
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from scipy import stats

import mlsql
from mlsql import _params as P
from mlsql._front.tables import missing_column_message
from mlsql._resample.measures import LABEL_SET_MEASURES
from mlsql._sqlexpr import quote_ident
from mlsql.cli.sqlpath import sql_dir
from tests.test_bootstrap import numpy_bootstrap, row_counts, simulate, table, weights_for

ENTRY = sql_dir() / "mlsql.sql"  # written from sql/ into the cache


def sql_connection(kind: str) -> Any:
    """A bare DuckDB connection with ``mlsql.sql`` (``mlsql sql-path``) loaded (``plain``), or
    ``mlsql.connect()`` (``native``): the SQL resample tests run on both."""
    if kind == "plain":
        c = duckdb.connect()
        c.execute(ENTRY.read_text(encoding="utf-8"))
        return c
    return mlsql.connect()


#: the plain library's cases are long (CI's long step runs them): mlsql.connect() loads the
#: same macros, the native kernels in place of a few; they cost a part of a minute of the
#: README's suite
@pytest.fixture(scope="module", params=[pytest.param("plain", marks=pytest.mark.long), "native"])
def con(request: Any) -> Any:
    return sql_connection(request.param)


def literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(map(literal, value)) + "]"
    return repr(value)


def named(params: dict[str, Any]) -> str:
    """Macro arguments ``, name := value`` (``by`` quoted: a keyword)."""
    return "".join(
        f", {quote_ident(k) if k == 'by' else k} := {literal(v)}" for k, v in params.items()
    )


def boot(con: Any, data: pa.Table, measures: list[str], **params: Any) -> list[tuple]:
    """``FROM bootstrap(...)`` over ``data``, registered under a fresh name for this call."""
    name = f"t_{uuid.uuid4().hex}"
    con.register(name, data)
    try:
        return con.sql(
            f"FROM bootstrap({literal(name)}, 'actual', 'predicted', "
            f"measures := {literal(measures)}{named(params)})"
        ).fetchall()
    finally:
        con.unregister(name)


def gappy(n: int, seed: int) -> pa.Table:
    """Simulated rows with unknown rows, repeats, NULL elements, empty sets, groups, weights."""
    actual, predicted = simulate(random.Random(seed), n)
    actual[3], predicted[5] = None, None
    actual[7], predicted[7] = ["a", "a", None], ["a", None]
    actual[8], predicted[8] = [], []
    return table(actual, predicted, g=[i % 3 for i in range(n)], w=weights_for(n, seed))


# ------------------------------------------------------------------ the estimate
#: measures whose estimate pools integer counts: the macro's value to the last bit
POOLED = ("micro", "subset_accuracy", "zero_one_loss", "hamming_loss", "fmeasure")


def _macro(name: str, zd: Any, weighted: bool) -> str:
    w = ", sample_weight := w" if weighted else ""
    if name == "fmeasure":
        return f"fmeasure(actual, predicted, '-beta 2'{w})"
    if name == "hamming_loss":
        return f"hamming_loss(actual, predicted{w}, n_labels := 4)"
    params = {"beta": 2.0} if "fbeta" in name else {}
    if name not in ("subset_accuracy", "zero_one_loss"):
        params["zero_division"] = zd
    return f"{name}(actual, predicted{w}{named(params)})"


# the weighted macros take DuckDB seconds to bind: one weighted case
@pytest.mark.long
@pytest.mark.parametrize(("weighted", "zd"), [(False, 0), (False, "ignore"), (True, "ignore")])
def test_estimate_is_the_measure_macro(con: Any, weighted: bool, zd: Any) -> None:
    data = gappy(90, 1)
    params: dict[str, Any] = dict(beta=2.0, n_labels=4, options="-beta 2", zero_division=zd)
    if weighted:
        params["sample_weight"] = "w"
    measures = list(LABEL_SET_MEASURES)
    got = boot(con, data, measures, by=["g"], n_resamples=20, **params)
    con.register("expected_rows", data)
    try:
        exprs = ", ".join(_macro(m, zd, weighted) for m in measures)
        expected = con.sql(f"SELECT g, {exprs} FROM expected_rows GROUP BY g ORDER BY g").fetchall()
    finally:
        con.unregister("expected_rows")
    assert [r[:2] for r in got] == [(g[0], m) for g in expected for m in measures]
    for i, row in enumerate(got):
        want = expected[i // len(measures)][1 + i % len(measures)]
        if want is None or row[2] is None:
            assert row[2] == want, row
        elif row[1].startswith(POOLED) and not weighted:
            assert row[2] == want, row  # integer sums: exactly the macro's value
        else:
            assert row[2] == pytest.approx(want, rel=1e-12, abs=1e-15), row


# ------------------------------------------------------------------ the Poisson draw
def poisson_pmf(k: int, m: float) -> float:
    return math.exp(k * math.log(m) - m - math.lgamma(k + 1))


@pytest.mark.parametrize("m", [1, 3, 50, 10**6])
def test_the_draws_have_the_poisson_pmf(con: Any, m: int) -> None:
    """20,000 inverse-CDF draws from the macro's table, binned: chi-square against the pmf."""
    n = 20_000
    draws = con.sql(
        f"SELECT c.k, count(*) FROM (SELECT {m}::DOUBLE AS m, "
        f"((hash(i, 'draws') >> 11)::DOUBLE + 0.5) / 9007199254740992 AS u FROM range({n}) t(i)) d "
        f"ASOF JOIN _mlsql_poisson_cdf([{m}]) c ON d.m = c.m AND d.u <= c.cdf GROUP BY c.k"
    ).fetchall()
    seen = dict(draws)
    sd = math.sqrt(m)
    ks = range(max(0, int(m - 8 * sd) - 8), int(m + 8 * sd) + 9)
    assert set(seen) <= set(ks)
    # bins of expected count >= 20, the tails pooled into the bins at each end
    bins: list[tuple[float, int]] = []
    pending_e, pending_o = 0.0, 0
    for k in ks:
        pending_e += n * poisson_pmf(k, m)
        pending_o += seen.get(k, 0)
        if pending_e >= 20:
            bins.append((pending_e, pending_o))
            pending_e, pending_o = 0.0, 0
    e_last, o_last = bins[-1]
    bins[-1] = (e_last + pending_e, o_last + pending_o)
    chi2 = sum((o - e) ** 2 / e for e, o in bins)
    assert stats.chi2.sf(chi2, len(bins) - 1) > 1e-3, (chi2, len(bins))
    mean = sum(k * c for k, c in seen.items()) / n
    assert mean == pytest.approx(m, abs=5 * sd / math.sqrt(n))


def test_the_cdf_table_is_the_exact_cdf(con: Any) -> None:
    for m in (1, 3, 50):
        rows = con.sql(f"SELECT k, cdf FROM _mlsql_poisson_cdf([{m}]) ORDER BY k").fetchall()
        total = 0.0
        for k, cdf in rows:
            total += poisson_pmf(k, m)
            assert cdf == pytest.approx(min(total, 1.0), abs=1e-12)
        assert rows[-1][1] == 1.0


# ------------------------------------------------------------------ same seed, same rows
def test_same_seed_same_rows_other_seed_other_rows(con: Any) -> None:
    data = gappy(60, 6)
    args = (["micro_f1", "samples_f1", "hamming_loss"],)
    kw = dict(by=["g"], n_resamples=50, n_labels=4, sample_weight="w")
    one = boot(con, data, *args, seed=3, **kw)
    assert one == boot(con, data, *args, seed=3, **kw)
    other = boot(con, data, *args, seed=4, **kw)
    assert [r[:3] for r in one] == [r[:3] for r in other]
    assert [r[3:] for r in one] != [r[3:] for r in other]


#: a query whose result must not depend on the process or the number of threads
STABLE = (
    "FROM bootstrap('SELECT *, i % 3 AS g, (i % 4) / 2 AS w FROM (SELECT i, "
    "[chr((97 + i % 3)::INT), chr((97 + i % 5)::INT)] AS actual, [chr((97 + i % 4)::INT)] AS predicted "
    "FROM range(300) t(i))', 'actual', 'predicted', measures := ['micro_f1', 'samples_f1', "
    "'samples_jaccard'], \"by\" := ['g'], n_resamples := 300, sample_weight := 'w')"
)


def same_rows_on_threads_and_in_another_process(query: str) -> list[Any]:
    """The rows of ``query`` on ``mlsql.connect()`` with 1 and 4 threads, and in another
    process on a bare DuckDB with ``mlsql.sql`` (``mlsql sql-path``) loaded: all three the same."""
    outs = []
    for threads in (1, 4):
        c = mlsql.connect()
        c.execute(f"SET threads = {threads}")
        outs.append(c.sql(query).fetchall())
    assert outs[0] == outs[1]
    script = (
        "import duckdb, sys; c = duckdb.connect(); "
        "c.execute(open(sys.argv[1], encoding='utf-8').read()); "
        "print(repr(c.sql(sys.argv[2]).fetchall()))"
    )
    run = subprocess.run(
        [sys.executable, "-c", script, str(ENTRY), query],
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.strip() == repr(outs[0])
    return outs[0]


@pytest.mark.long
def test_the_result_does_not_depend_on_threads_or_the_process() -> None:
    assert same_rows_on_threads_and_in_another_process(STABLE)


# ------------------------------------------------------------------ intervals
def test_intervals_agree_with_python_and_a_per_row_numpy_bootstrap(con: Any) -> None:
    actual, predicted = simulate(random.Random(4), 400)
    data = table(actual, predicted)
    measures = ["micro_f1", "samples_f1"]
    got = boot(con, data, measures, n_resamples=2000, confidence=0.9)
    python = mlsql.bootstrap(
        data, "actual", "predicted", measures, n_resamples=2000, confidence=0.9
    )
    reference = numpy_bootstrap(row_counts(actual, predicted), 4000, seed=11)
    se = reference.std(ddof=1)
    low, high = np.quantile(reference, [0.05, 0.95])
    micro = got[0]
    # Monte Carlo error of a standard deviation over 2000 draws is about 1.6%
    assert micro[4] == pytest.approx(se, rel=0.08)
    assert micro[2] == pytest.approx(low, abs=0.3 * se)
    assert micro[3] == pytest.approx(high, abs=0.3 * se)
    for mine, theirs in zip(got, python.fetchall(), strict=True):
        assert mine[0] == theirs[0] and mine[1] == pytest.approx(theirs[1], rel=1e-12)
        assert mine[4] == pytest.approx(theirs[4], rel=0.1)
        assert mine[2] == pytest.approx(theirs[2], abs=0.3 * theirs[4])
        assert mine[3] == pytest.approx(theirs[3], abs=0.3 * theirs[4])


@pytest.mark.long
def test_ninety_percent_intervals_cover_the_population_value() -> None:
    """200 samples of 150 rows, one group each; population micro F1 = 0.8."""
    rng = random.Random(5)
    truth, n_sets, rows, reference_hits = 0.8, 200, 150, 0
    actual, predicted, sample = [], [], []
    for i in range(n_sets):
        a, p = simulate(rng, rows)
        actual += a
        predicted += p
        sample += [i] * rows
        ref = numpy_bootstrap(row_counts(a, p), 400, seed=i)
        low, high = np.quantile(ref, [0.05, 0.95])
        reference_hits += low <= truth <= high
    data = table(actual, predicted, sample=sample)
    got = boot(mlsql.connect(), data, ["micro_f1"], by=["sample"], n_resamples=400, confidence=0.9)
    assert len(got) == n_sets
    coverage = sum(r[3] <= truth <= r[4] for r in got) / n_sets
    reference = reference_hits / n_sets
    # binomial sd of a coverage over 200 sets is about 0.021
    assert 0.83 <= coverage <= 0.96, coverage
    assert abs(coverage - reference) <= 0.06, (coverage, reference)


# ------------------------------------------------------------------ errors
def _python_message(**kwargs: Any) -> str:
    data = table(*simulate(random.Random(14), 5))
    with pytest.raises(mlsql.MlsqlError) as info:
        mlsql.bootstrap(data, "actual", "predicted", ["micro_f1"], **kwargs)
    return str(info.value)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_resamples": 1},
        {"n_resamples": 2.5},
        {"n_resamples": True},
        {"n_resamples": 1_000_000},
        {"confidence": 1.0},
        {"confidence": 0},
        {"confidence": "x"},
        {"seed": -1},
        {"seed": 1.5},
    ],
)
def test_settings_errors_are_the_python_calls_messages(con: Any, kwargs: dict) -> None:
    data = table(*simulate(random.Random(14), 5))
    with pytest.raises(duckdb.Error) as info:
        boot(con, data, ["micro_f1"], **kwargs)
    assert _python_message(**kwargs) in str(info.value)


@pytest.mark.parametrize("measure", ["nope", "label_metrics"])
def test_other_measures_are_the_python_calls_error(con: Any, measure: str) -> None:
    data = table(*simulate(random.Random(14), 5))
    with pytest.raises(mlsql.MlsqlError) as python:
        mlsql.bootstrap(data, "actual", "predicted", ["micro_f1", measure])
    with pytest.raises(duckdb.Error) as info:
        boot(con, data, ["micro_f1", measure])
    assert str(python.value) in str(info.value)


#: every label-list measure in one call: the macro and weighted averages and the label sets'
MIXED = ["macro_f1", *LABEL_SET_MEASURES, "weighted_jaccard", "clp"]


@pytest.mark.long
@pytest.mark.parametrize("weighted", [False, True])
def test_one_call_takes_any_mix_of_label_list_measures(con: Any, weighted: bool) -> None:
    data = gappy(60, 2)
    params: dict[str, Any] = dict(beta=2.0, n_labels=4, options="-beta 2", zero_division=0)
    if weighted:
        params["sample_weight"] = "w"
    got = boot(con, data, MIXED, by=["g"], n_resamples=30, **params)
    con.register("expected_rows", data)
    try:
        sets = ", ".join(_macro(m, 0, weighted) for m in LABEL_SET_MEASURES)
        expected = {
            g: values
            for g, *values in con.sql(f"SELECT g, {sets} FROM expected_rows GROUP BY g").fetchall()
        }
        w = ", sample_weight := 'w'" if weighted else ""
        per_label = {
            (g, name): con.sql(
                f"SELECT {name} FROM {name}('(FROM expected_rows WHERE g = {g})', 'actual', "
                f"'predicted'{w})"
            ).fetchall()[0][0]
            for g in expected
            for name in ("macro_f1", "weighted_jaccard")
        }
        clp = {
            g: con.sql(
                f"SELECT clp FROM multilabel_report('(FROM expected_rows WHERE g = {g})', "
                f"'actual', 'predicted'{w})"
            ).fetchall()[0][0]
            for g in expected
        }
    finally:
        con.unregister("expected_rows")
    assert [r[:2] for r in got] == [(g, m) for g in sorted(expected) for m in MIXED]
    for g, measure, estimate, low, high, _ in got:
        if measure in LABEL_SET_MEASURES:
            want = expected[g][LABEL_SET_MEASURES.index(measure)]
        else:
            want = clp[g] if measure == "clp" else per_label[g, measure]
        assert estimate == pytest.approx(want, rel=1e-12, abs=1e-15), (g, measure)
        assert low <= high, (g, measure)


def test_measure_parameters_are_checked_once(con: Any) -> None:
    data = table(*simulate(random.Random(14), 5))
    beta = P.param_message("beta", "bootstrap", P.PARAMS["beta"].constraint.rule(), "-1")
    with pytest.raises(duckdb.Error) as info:
        boot(con, data, ["micro_fbeta"], beta=-1)
    assert beta in str(info.value)
    # n_labels is required only where hamming_loss is asked for
    assert boot(con, data, ["micro_f1"], n_resamples=5)
    with pytest.raises(duckdb.Error, match="'n_labels' parameter of bootstrap"):
        boot(con, data, ["hamming_loss"])
    with pytest.raises(duckdb.Error, match="'n_labels' parameter of hamming_loss must be at least"):
        boot(con, data, ["hamming_loss"], n_labels=1)
    with pytest.raises(duckdb.Error, match="'zero_division' parameter of bootstrap"):
        boot(con, data, ["samples_f1"], zero_division="sometimes")


HOSTILE = "x'); DROP TABLE t; --\""


def test_a_missing_column_is_named(con: Any) -> None:
    data = table(*simulate(random.Random(15), 5), w=[1.0] * 5)
    columns = ["actual", "predicted", "w"]
    for role, params in [("by", {"by": ["nope"]}), ("sample_weight", {"sample_weight": "nope"})]:
        with pytest.raises(duckdb.Error) as info:
            boot(con, data, ["micro_f1"], **params)
        assert missing_column_message("bootstrap", role, "nope", columns) in str(info.value)


def test_hostile_table_column_and_by_names_are_only_names(con: Any) -> None:
    actual, predicted = simulate(random.Random(15), 30)
    data = pa.table({HOSTILE: actual, "p'q": predicted, 'g"': [i % 2 for i in range(30)]})
    con.register(HOSTILE, data)
    name = quote_ident(HOSTILE)
    try:
        call = f"FROM bootstrap({literal(HOSTILE)}, {literal(HOSTILE)}, 'p''q', measures := ['micro_f1']"
        rows = con.sql(f'{call}, "by" := [\'g"\'], n_resamples := 10)').fetchall()
        want = con.sql(
            f'SELECT "g""", micro_f1({name}, "p\'q") FROM {name} GROUP BY ALL ORDER BY 1'
        ).fetchall()
        assert [(r[0], r[2]) for r in rows] == want
        absent = "nope'); DROP TABLE t; --"
        with pytest.raises(duckdb.Error) as info:
            con.sql(f'{call}, "by" := [{literal(absent)}])').fetchall()
        assert f"the by column '{absent}' is not in the source" in str(info.value)
        assert con.sql(f"SELECT count(*) FROM {name}").fetchall() == [(30,)]
    finally:
        con.unregister(HOSTILE)


def test_groups_come_in_the_python_calls_order(con: Any) -> None:
    """By group, NULL first, then by measure as listed."""
    actual, predicted = simulate(random.Random(16), 40)
    data = table(actual, predicted, g=[[2, None, 1, 10][i % 4] for i in range(40)])
    measures = ["samples_f1", "micro_f1"]
    got = boot(con, data, measures, by=["g"], n_resamples=5)
    python = mlsql.bootstrap(data, "actual", "predicted", measures, by="g", n_resamples=5)
    assert [r[:2] for r in got] == [r[:2] for r in python.fetchall()]
    assert [r[0] for r in got[::2]] == [None, 1, 2, 10]
