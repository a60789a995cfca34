"""compare(test='student' | 'fisher'): ranx's comparison tests, in every engine.

References written here, never the code under test: each id's value from Python
sets; scipy's ``ttest_rel`` (what ranx's paired Student's t test calls); a
plain-Python randomization test over the same documented draws; ranx itself
(long: numba compiles it on first use).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from mlsql._errors import MlsqlError
from tests.conftest import _engines
from tests.test_bootstrap import paired_table, run_engine, simulate, single_label

#: the Spark cases run with the long tests
LONG_ENGINES = ("spark",)

P_VALUE = 7


def f1_row(a: list, p: list) -> float:
    """A row's F1 from Python sets (0 where both are empty, zero_division=0)."""
    sa, sp = set(a), set(p)
    total = len(sa) + len(sp)
    return 0.0 if total == 0 else 2 * len(sa & sp) / total


def per_id(actual: list, pa_: list, pb: list) -> tuple[list[float], list[float]]:
    return [f1_row(a, p) for a, p in zip(actual, pa_, strict=True)], [
        f1_row(a, p) for a, p in zip(actual, pb, strict=True)
    ]


def two_models(seed: int, n: int) -> tuple[list, list, list]:
    """Label lists: the truth, model A (30% of labels wrong), model B (15%)."""
    actual, pa_ = simulate(random.Random(seed), n, flip=0.3)
    rng = random.Random(seed + 2)
    pb = [[x for x in "abcd" if (x in a) != (rng.random() < 0.15)] for a in actual]
    return actual, pa_, pb


@pytest.mark.parametrize("engine", _engines())
def test_student_equals_scipys_paired_t_test(engine: str) -> None:
    from scipy import stats

    actual, pa_, pb = two_models(1, 70)
    rows = run_engine(
        engine,
        "compare",
        paired_table(actual, pa_, pb),
        "actual",
        "predicted",
        ["samples_f1", "subset_accuracy"],
        n_resamples=20,
        test="student",
    )
    base, model = per_id(actual, pa_, pb)
    assert rows[0][P_VALUE] == pytest.approx(stats.ttest_rel(model, base).pvalue, rel=1e-12)
    exact_a = [float(set(a) == set(p)) for a, p in zip(actual, pa_, strict=True)]
    exact_b = [float(set(a) == set(p)) for a, p in zip(actual, pb, strict=True)]
    assert rows[1][P_VALUE] == pytest.approx(stats.ttest_rel(exact_b, exact_a).pvalue, rel=1e-12)


@pytest.mark.parametrize("engine", _engines())
def test_student_on_one_label_per_row(engine: str) -> None:
    from scipy import stats

    y, p = single_label(random.Random(5), 90)
    q = [c if random.Random(300 + i).random() < 0.8 else p[i] for i, c in enumerate(y)]
    (row,) = run_engine(
        engine,
        "compare",
        paired_table(y, p, q),
        "actual",
        "predicted",
        ["error_rate"],
        n_resamples=20,
        test="student",
    )
    err_a = [float(a != b) for a, b in zip(y, p, strict=True)]
    err_b = [float(a != b) for a, b in zip(y, q, strict=True)]
    assert row[P_VALUE] == pytest.approx(stats.ttest_rel(err_b, err_a).pvalue, rel=1e-12)


def test_students_tail_is_accurate_far_out() -> None:
    """Large t, many ids: the incomplete beta stays within 1e-10 of scipy's p-value."""
    from scipy import stats

    from mlsql._resample.paired import student_p_value

    rng = np.random.default_rng(3)
    for shift, n in ((0.05, 12), (0.5, 400), (2.0, 60), (0.01, 5000)):
        d = rng.normal(shift, 1.0, n)
        want = stats.ttest_1samp(d, 0.0).pvalue
        assert student_p_value(d, np.ones(n)) == pytest.approx(want, rel=1e-10, abs=1e-300)


def test_students_p_value_over_degrees_of_freedom_to_a_million() -> None:
    """Ids with repeated differences (m each) up to a million: scipy's ttest_1samp of the
    repeated values, within 5e-13 (lgamma differences, a rounded 1 - x and the continued
    fraction in x near 1 had given 3e-12 at df 100 and 9e-9 at df 1e6)."""
    from scipy import stats

    from mlsql._resample.paired import student_p_value

    for n in (2, 3, 6, 11, 31, 101, 1001, 3001, 30_001, 300_001, 1_000_001):
        for t in (0.05, 0.7, 1.5, 3.0, 8.0, 30.0):
            # three differences, m each: mean 1, sd chosen so that t = mean / (sd / sqrt(n))
            k = max(1, n // 3)
            m = np.array([k, n - 2 * k, k], dtype=float)
            spread = np.sqrt(n * (n - 1) / (2 * k)) / t
            d = np.array([1.0 - spread, 1.0, 1.0 + spread])
            want = stats.ttest_1samp(np.repeat(d, m.astype(int)), 0.0).pvalue
            got = student_p_value(d, m)
            # far out, p's relative change is about t² times t's (its rounding from the data)
            tolerance = 5e-13 * max(1.0, t * t / 8)
            assert got == pytest.approx(want, rel=tolerance, abs=1e-300), (n, t)


def stream(seed: int, key: list) -> np.random.Generator:
    """The documented stream: SeedSequence([seed, first four uint32 of sha256(json(key))])."""
    digest = hashlib.sha256(json.dumps(key).encode()).digest()[:16]
    words = [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, *words])))


def fisher_oracle(actual: list, pa_: list, pb: list, seed: int, n: int) -> float:
    """Plain Python: tuples of both rows' (tp, |A|, |P|, weight) sorted, m ids each, one
    Binomial(m, 1/2) draw per tuple and permutation; p = share of |Σ d*| >= |Σ d|."""

    def stats(a: list, p: list) -> tuple:
        sa, sp = set(a), set(p)
        return (float(len(sa & sp)), float(len(sa)), float(len(sp)), 1.0)

    tuples = Counter((*stats(a, p), *stats(a, q)) for a, p, q in zip(actual, pa_, pb, strict=True))
    keys = sorted(tuples)
    m = [tuples[k] for k in keys]

    def f1(tp: float, na: float, np_: float) -> float:
        return 0.0 if na + np_ == 0 else 2 * tp / (na + np_)

    d = [f1(*k[4:7]) - f1(*k[0:3]) for k in keys]
    observed = abs(sum(mi * di for mi, di in zip(m, d, strict=True)))
    draws = stream(seed, ["B", "fisher"]).binomial(m, 0.5, size=(n, len(m)))
    slack = 1e-12 * sum(mi * abs(di) for mi, di in zip(m, d, strict=True))
    hits = 0
    for k in draws.tolist():
        flipped = sum((2 * ki - mi) * di for ki, mi, di in zip(k, m, d, strict=True))
        hits += abs(flipped) >= observed - slack
    return hits / n


@pytest.mark.parametrize("engine", _engines())
def test_fisher_equals_a_plain_python_oracle_with_the_same_draws(engine: str) -> None:
    actual, pa_, pb = two_models(7, 60)
    rows = run_engine(
        engine,
        "compare",
        paired_table(actual, pa_, pb),
        "actual",
        "predicted",
        ["samples_f1"],
        n_resamples=400,
        seed=11,
        test="fisher",
    )
    assert rows[0][P_VALUE] == fisher_oracle(actual, pa_, pb, 11, 400)
    again = run_engine(
        engine,
        "compare",
        paired_table(actual, pa_, pb),
        "actual",
        "predicted",
        ["samples_f1"],
        n_resamples=400,
        seed=11,
        test="fisher",
    )
    assert again == rows


def regression_runs(seed: int, n: int) -> tuple[list, list, list]:
    """Numbers: the truth, model A and model B (B nearer), a few rows repeated whole (tuples of
    m > 1), a NULL prediction of each model and a 0 truth (mape's eps floor)."""
    rng = random.Random(seed)
    y = [round(rng.gauss(2, 1), 1) for _ in range(n)]
    a = [round(v + rng.gauss(0, 0.8), 1) for v in y]
    b = [round(v + rng.gauss(0.1, 0.5), 1) for v in y]
    y, a, b = y + y[:4], a + a[:4], b + b[:4]
    y[5], a[6], b[7] = 0.0, None, None
    return y, a, b


def row_error(name: str, y: float, p: float | None) -> float | None:
    """A row's squared, absolute or absolute percentage error (scikit-learn's eps floor)."""
    if p is None:
        return None
    e = abs(y - p)
    return {"mse": e * e, "mae": e, "mape": e / max(abs(y), float(np.finfo(float).eps))}[name]


def regression_fisher_oracle(name: str, y: list, a: list, b: list, seed: int, n: int) -> float:
    """Plain Python: the ids' (y, ŷ_A, 1, y, ŷ_B, 1) tuples sorted (NULL first), those with a
    NULL side left out, one Binomial(m, 1/2) draw per tuple and permutation."""
    tuples = Counter((u, p, 1.0, u, q, 1.0) for u, p, q in zip(y, a, b, strict=True))
    keys = sorted(tuples, key=lambda k: [(v is not None, v or 0.0) for v in k])
    keys = [k for k in keys if None not in k]
    m = [tuples[k] for k in keys]
    d = [row_error(name, k[3], k[4]) - row_error(name, k[0], k[1]) for k in keys]  # type: ignore[operator]
    observed = abs(sum(mi * di for mi, di in zip(m, d, strict=True)))
    slack = 1e-12 * sum(mi * abs(di) for mi, di in zip(m, d, strict=True))
    hits = 0
    for k in stream(seed, ["B", "fisher"]).binomial(m, 0.5, size=(n, len(m))).tolist():
        flipped = sum((2 * ki - mi) * di for ki, mi, di in zip(k, m, d, strict=True))
        hits += abs(flipped) >= observed - slack
    return hits / n


@pytest.mark.parametrize("engine", _engines())
def test_regression_means_per_id(engine: str) -> None:
    """mse, mae and mape (an alias too): scipy's ttest_rel of the rows' errors, and the
    randomization test of the oracle; ids with a NULL side are left out."""
    from scipy import stats

    y, a, b = regression_runs(31, 40)
    data = paired_table(y, a, b)
    names = ["mse", "mean_absolute_error", "mape"]
    rows = run_engine(
        engine, "compare", data, "actual", "predicted", names, n_resamples=20, test="student"
    )
    assert [r[1] for r in rows] == names
    both = [i for i in range(len(y)) if a[i] is not None and b[i] is not None]
    for row, name in zip(rows, ("mse", "mae", "mape"), strict=True):
        base = [row_error(name, y[i], a[i]) for i in both]
        model = [row_error(name, y[i], b[i]) for i in both]
        want = stats.ttest_rel(model, base).pvalue
        assert row[P_VALUE] == pytest.approx(want, rel=1e-12), name
    rows = run_engine(
        engine,
        "compare",
        data,
        "actual",
        "predicted",
        ["mae", "mse"],
        n_resamples=300,
        seed=4,
        test="fisher",
    )
    for row, name in zip(rows, ("mae", "mse"), strict=True):
        assert row[P_VALUE] == regression_fisher_oracle(name, y, a, b, 4, 300), name


def test_ratio_regression_measures_are_refused() -> None:
    y, a, b = regression_runs(33, 10)
    for name in ("rmse", "r2", "rse"):
        with pytest.raises(MlsqlError, match=rf"compare's test 'student' .* Got {name}\."):
            run_engine(
                "duckdb",
                "compare",
                paired_table(y, a, b),
                "actual",
                "predicted",
                [name],
                test="student",
            )


@pytest.mark.parametrize("engine", _engines())
def test_identical_models_and_too_few_ids(engine: str) -> None:
    actual, pa_, _ = two_models(9, 20)
    same = paired_table(actual, pa_, pa_)
    for test, want in (("student", None), ("fisher", 1.0)):
        (row,) = run_engine(
            engine,
            "compare",
            same,
            "actual",
            "predicted",
            ["samples_f1"],
            n_resamples=20,
            test=test,
        )
        assert row[P_VALUE] == want, test
    one = paired_table(actual[:1], pa_[:1], [["zz"]])
    (row,) = run_engine(
        engine,
        "compare",
        one,
        "actual",
        "predicted",
        ["samples_f1"],
        n_resamples=20,
        test="student",
    )
    assert row[P_VALUE] is None  # one id: no variance to test with


@pytest.mark.parametrize("engine", _engines())
def test_the_same_errors_everywhere(engine: str) -> None:
    actual, pa_, pb = two_models(13, 10)
    data = paired_table(actual, pa_, pb)
    with pytest.raises(MlsqlError, match=r"The 'test' parameter of compare must be one of"):
        run_engine(engine, "compare", data, "actual", "predicted", ["samples_f1"], test="wilcoxon")
    with pytest.raises(MlsqlError, match=r"compare's test 'student' compares the per-id values"):
        run_engine(engine, "compare", data, "actual", "predicted", ["micro_f1"], test="student")
    weighted = data.append_column("w", pa.array([2.0] * 20))
    with pytest.raises(MlsqlError, match=r"compare's test 'fisher' takes unweighted rows"):
        run_engine(
            engine,
            "compare",
            weighted,
            "actual",
            "predicted",
            ["samples_f1"],
            test="fisher",
            sample_weight="w",
        )


@pytest.mark.long
def test_fisher_within_monte_carlo_error_of_ranx() -> None:
    """ranx's own tests on the same per-query values (its randomization: other draws)."""
    engine = "duckdb"
    pytest.importorskip("ranx")
    from ranx.statistical_tests import fisher_randomization_test, paired_student_t_test

    actual, pa_, pb = two_models(17, 80)
    base, model = per_id(actual, pa_, pb)
    data = paired_table(actual, pa_, pb)
    n = 4000
    (row,) = run_engine(
        engine, "compare", data, "actual", "predicted", ["samples_f1"], n_resamples=n, test="fisher"
    )
    theirs, _ = fisher_randomization_test(np.array(base), np.array(model), n, 0.01, 42)
    # two independent estimates of one p: their difference has sd <= sqrt(2 p (1 - p) / n)
    sd = np.sqrt(2 * max(theirs * (1 - theirs), 1 / n) / n)
    assert abs(row[P_VALUE] - theirs) <= 5 * sd
    (row,) = run_engine(
        engine,
        "compare",
        data,
        "actual",
        "predicted",
        ["samples_f1"],
        n_resamples=20,
        test="student",
    )
    want, _ = paired_student_t_test(np.array(base), np.array(model))
    assert row[P_VALUE] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("engine", ["duckdb", "polars"])
def test_the_command_takes_test(engine: str, tmp_path: Any) -> None:
    import json

    import pyarrow.parquet as pq
    from scipy import stats

    from tests.test_cli import invoke

    actual, pa_, pb = two_models(19, 40)
    path = tmp_path / "runs.parquet"
    pq.write_table(paired_table(actual, pa_, pb), path)
    args = (
        "compare",
        path,
        "-a",
        "actual",
        "-p",
        "predicted",
        "--engine",
        engine,
        "-f",
        "json",
        "--baseline",
        "A",
    )
    result = invoke(*args, "--measures", "samples_f1", "--test", "student", "--resamples", 20)
    assert result.exit_code == 0, result.stderr
    (row,) = json.loads(result.stdout)
    base, model = per_id(actual, pa_, pb)
    assert row["p_value"] == pytest.approx(stats.ttest_rel(model, base).pvalue, rel=1e-12)
    result = invoke(*args, "--measures", "samples_f1", "--test", "exact")
    assert result.exit_code != 0 and "--test must be one of" in result.stderr


def test_the_sql_macro_checks_test_and_names_where_the_tests_are() -> None:
    import duckdb

    import mlsql

    con = mlsql.connect()
    con.register("runs", paired_table(*two_models(23, 8)))
    call = "FROM compare('runs', 'actual', 'predicted', measures := {}, test := {})"
    with pytest.raises(duckdb.Error, match=r"The 'test' parameter of compare must be one of"):
        con.sql(call.format("['samples_f1']", "'wilcoxon'")).fetchall()
    for test in ("student", "fisher"):
        with pytest.raises(duckdb.Error, match=rf"compare's test '{test}' compares the per-id"):
            con.sql(call.format("['samples_f1', 'micro_f1']", f"'{test}'")).fetchall()
    for test in ("bootstrap", "student", "fisher"):
        assert len(con.sql(call.format("['samples_f1']", f"'{test}'")).fetchall()) == 1


def test_the_sql_t_distribution_equals_scipys_over_a_grid() -> None:
    """The macro's two-sided p-value against scipy's t.sf: df 1 to 1e6 by 60 steps, t 1e-4 to
    1e4 by 90 (p down to 1e-300)."""
    from scipy import stats

    import mlsql

    dfs = np.unique(np.round(np.logspace(0, 6, 60)))
    t, df = (x.ravel() for x in np.meshgrid(np.logspace(-4, 4, 90), dfs))
    con = mlsql.connect()
    con.register("grid", pa.table({"t": t, "df": df}))
    got = np.array(con.sql("SELECT _mlsql_t_two_sided(t, df) FROM grid").fetchall(), dtype=float)
    want = 2 * stats.t.sf(t, df)
    kept = want > 1e-300
    assert kept.sum() > 4000
    np.testing.assert_allclose(got[:, 0][kept], want[kept], rtol=1e-12, atol=0)


@pytest.mark.long
def test_the_sql_macro_computes_student_as_scipy() -> None:
    """Label sets, one label per row and numbers (NULL predictions: ids left out): scipy's
    ttest_rel of the per-id values; a weight other than 1 is the Python call's error."""
    import duckdb
    from scipy import stats

    import mlsql

    con = mlsql.connect()
    call = "FROM compare('runs', 'actual', 'predicted', measures := {}, n_resamples := 20, {})"
    actual, pa_, pb = two_models(1, 70)
    con.register("runs", paired_table(actual, pa_, pb))
    (row,) = con.sql(call.format("['samples_f1']", "test := 'student'")).fetchall()
    base, model = per_id(actual, pa_, pb)
    assert row[P_VALUE] == pytest.approx(stats.ttest_rel(model, base).pvalue, rel=1e-12)
    y, p = single_label(random.Random(5), 90)
    q = [c if random.Random(300 + i).random() < 0.8 else p[i] for i, c in enumerate(y)]
    con.register("runs", paired_table(y, p, q))
    (row,) = con.sql(call.format("['error_rate']", "test := 'student'")).fetchall()
    err_a = [float(a != b) for a, b in zip(y, p, strict=True)]
    err_b = [float(a != b) for a, b in zip(y, q, strict=True)]
    assert row[P_VALUE] == pytest.approx(stats.ttest_rel(err_b, err_a).pvalue, rel=1e-12)
    y, a, b = regression_runs(31, 40)
    data = paired_table(y, a, b)
    con.register("runs", data)
    rows = con.sql(call.format("['mse', 'mae', 'mape']", "test := 'student'")).fetchall()
    both = [i for i in range(len(y)) if a[i] is not None and b[i] is not None]
    for row, name in zip(rows, ("mse", "mae", "mape"), strict=True):
        base = [row_error(name, y[i], a[i]) for i in both]
        model = [row_error(name, y[i], b[i]) for i in both]
        want = stats.ttest_rel(model, base).pvalue
        assert row[P_VALUE] == pytest.approx(want, rel=1e-12), name
    con.register("runs", data.append_column("w", pa.array([1.0] * 43 + [2.5] + [1.0] * 44)))
    with pytest.raises(duckdb.Error, match=r"compare's test 'student' takes unweighted rows.*2\.5"):
        con.sql(call.format("['mae']", "sample_weight := 'w', test := 'student'")).fetchall()


def exact_randomization_p(d: list[float]) -> float:
    """Plain Python: Fisher's randomization p-value over all 2^n sign flips of the ids'
    differences (ranx's share of |Σ d*| >= |Σ d|, 1e-12 of Σ|d| allowed for rounding)."""
    observed = abs(sum(d))
    slack = 1e-12 * sum(abs(x) for x in d)
    flips = list(itertools.product((1, -1), repeat=len(d)))
    hits = sum(
        abs(sum(s * x for s, x in zip(f, d, strict=True))) >= observed - slack for f in flips
    )
    return hits / len(flips)


def within_four_errors(got: float, want: float, n: int) -> None:
    assert abs(got - want) <= 4 * math.sqrt(want * (1 - want) / n), (got, want)


def test_the_sql_macro_computes_fisher_as_the_exact_randomization_test() -> None:
    """The macro's own draws, 4000 permutations, against every sign flip of the ids: numbers
    (mae, p small; repeated rows are pairs of m > 1, NULL predictions left out) and label
    sets (samples_f1, p large; two ids repeated); a fixed seed, so it cannot flake."""
    import mlsql

    con = mlsql.connect()
    call = (
        "FROM compare('runs', 'actual', 'predicted', measures := {}, n_resamples := 4000, "
        "test := 'fisher', seed := 7)"
    )
    y, a, b = regression_runs(33, 8)
    con.register("runs", paired_table(y, a, b))
    (row,) = con.sql(call.format("['mae']")).fetchall()
    d = [row_error("mae", u, q) - row_error("mae", u, p) for u, p, q in zip(y, a, b, strict=True)
         if p is not None and q is not None]  # fmt: skip
    want = exact_randomization_p(d)
    assert len(d) == 10 and len(set(zip(y, a, b, strict=True))) < len(y)
    assert want < 0.05
    within_four_errors(row[P_VALUE], want, 4000)
    actual, pa_, pb = two_models(1, 10)
    actual, pa_, pb = actual + actual[:2], pa_ + pa_[:2], pb + pb[:2]
    con.register("runs", paired_table(actual, pa_, pb))
    (row,) = con.sql(call.format("['samples_f1']")).fetchall()
    base, model = per_id(actual, pa_, pb)
    want = exact_randomization_p([x - y for x, y in zip(model, base, strict=True)])
    assert want > 0.5
    within_four_errors(row[P_VALUE], want, 4000)


def test_the_sql_fisher_is_one_on_identical_models_and_repeats_with_its_seed() -> None:
    """Identical models: p = 1 (label sets and one label per row); a seed gives the same p
    twice, another seed another p."""
    import mlsql

    con = mlsql.connect()
    call = (
        "FROM compare('runs', 'actual', 'predicted', measures := {}, n_resamples := 500, "
        "test := 'fisher', seed := {})"
    )
    actual, pa_, pb = two_models(1, 12)
    con.register("runs", paired_table(actual, pa_, pa_))
    assert [r[P_VALUE] for r in con.sql(call.format("['samples_f1']", 3)).fetchall()] == [1.0]
    con.register("runs", paired_table(actual, pa_, pb))
    first, again, other = (
        con.sql(call.format("['samples_f1']", s)).fetchall()[0][P_VALUE] for s in (3, 3, 4)
    )
    assert first == again != other
    y, p = single_label(random.Random(5), 60)
    con.register("runs", paired_table(y, p, p))
    assert [r[P_VALUE] for r in con.sql(call.format("['error_rate']", 3)).fetchall()] == [1.0]


@pytest.mark.long
def test_the_sql_fisher_refuses_what_the_python_compare_refuses() -> None:
    """A measure that is no mean over rows, and a weight other than 1: the Python call's
    messages, naming 'fisher'."""
    import duckdb

    import mlsql

    con = mlsql.connect()
    call = "FROM compare('runs', 'actual', 'predicted', measures := {}, test := 'fisher'{})"
    y, a, b = regression_runs(31, 8)
    data = paired_table(y, a, b)
    con.register("runs", data)
    with pytest.raises(duckdb.Error, match=r"compare's test 'fisher' compares .* Got rmse\."):
        con.sql(call.format("['mae', 'rmse']", "")).fetchall()
    weights = pa.array([1.0] * 13 + [2.5] + [1.0] * 10)
    con.register("runs", data.append_column("w", weights))
    with pytest.raises(duckdb.Error, match=r"compare's test 'fisher' takes unweighted rows.*2\.5"):
        con.sql(call.format("['mae']", ", sample_weight := 'w'")).fetchall()
    actual, pa_, pb = two_models(1, 6)
    con.register("runs", paired_table(actual, pa_, pb).append_column("w", pa.array([0.5] * 12)))
    with pytest.raises(duckdb.Error, match=r"compare's test 'fisher' takes unweighted rows.*0\.5"):
        con.sql(call.format("['samples_f1']", ", sample_weight := 'w'")).fetchall()
