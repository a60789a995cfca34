"""Agreement among several raters: Fleiss' kappa against statsmodels' own test tables,
statsmodels itself and exact fractions, and its edge cases in every engine.

statsmodels' ``statsmodels/stats/tests/test_inter_rater.py`` checks ``fleiss_kappa`` on
``table1`` (Wikipedia's example: 0.210), on Fleiss' (1971) ``diagnoses`` of 30 subjects by
6 raters against R's irr ``kappam.fleiss`` (0.4302445, 7 decimals) and on small tables from
Randolph's online calculator (``test_fleis_randolph``). mlsql takes the ratings, one list
per row, as ``aggregate_raters`` takes them; the tables are turned back into ratings here.
Random tables run in tests/test_every_measure.py (reference: statsmodels,
tests/oracle_agreement.py).
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest

from mlsql.measures.agreement import RATERS_MESSAGE
from tests import oracle_agreement as A
from tests.test_single_label_tables import close, needs

#: the Spark cases run with the long tests (one Spark query per case)
LONG_ENGINES = ("spark",)
NAME = "fleiss_kappa"

#: statsmodels' table1: 10 subjects, 14 raters, 5 categories (Wikipedia's example)
TABLE1 = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]
#: statsmodels' diagnoses (Fleiss 1971): 30 subjects, 6 raters, categories 1 to 5
DIAGNOSES = [
    [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
    [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
    [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
    [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
    [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
    [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
    [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
    [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
]  # fmt: skip
#: R irr's kappam.fleiss(diagnoses), as statsmodels' test_fleiss_kappa_irr holds it
IRR_DIAGNOSES = 0.4302445
#: test_fleis_randolph's whole-count tables and their fixed-marginal kappa (6 decimals)
RANDOLPH = [
    ([[7, 1], [3, 5]], 0.161905),
    ([[7, 0], [0, 7]], 1.0),
    ([[6, 1, 0], [0, 7, 0]], 0.708333),
]


def ratings_of(table: list[list[int]], labels: list[Any] | None = None) -> list[list[Any]]:
    """The ratings a subjects x categories table counts: per row, category j n_ij times."""
    labels = labels or [chr(ord("a") + j) for j in range(len(table[0]))]
    return [[labels[j] for j, n in enumerate(row) for _ in range(n)] for row in table]


TEXT = pa.list_(pa.string())


def column(rows: list[Any], dtype: pa.DataType = TEXT) -> pa.Table:
    return pa.table({"ratings": pa.array(rows, dtype)})


def kappa(engine: Any, rows: list[Any], dtype: pa.DataType = TEXT) -> Any:
    return engine.aggregate(NAME, column(rows, dtype), columns=("ratings",))


def test_statsmodels_table1(engine):
    needs(engine, NAME)
    rows = ratings_of(TABLE1)
    got = kappa(engine, rows)
    assert abs(got - 0.210) < 5e-4  # statsmodels checks 3 decimals
    assert close(got, A.fleiss(rows))
    assert close(got, float(A.exact_fleiss(rows)))


def test_fleiss_1971_diagnoses_are_rs_irr(engine):
    needs(engine, NAME)
    got = kappa(engine, DIAGNOSES, pa.list_(pa.int64()))
    assert abs(got - IRR_DIAGNOSES) < 5e-8
    assert close(got, A.fleiss(DIAGNOSES))
    assert close(got, float(A.exact_fleiss(DIAGNOSES)))


@pytest.mark.parametrize(("table", "want"), RANDOLPH, ids=str)
def test_randolphs_calculator_tables(engine, table, want):
    needs(engine, NAME)
    rows = ratings_of(table)
    got = kappa(engine, rows)
    assert abs(got - want) < 6e-6  # statsmodels' tolerance
    assert close(got, A.fleiss(rows))


def test_random_ratings_are_statsmodels_and_exact_fractions(engine):
    """Fractions check the value to 1e-12 (statsmodels' shares are floats); the ratings are
    text or integers, 2 to 6 raters, 2 to 5 categories, in one query per table."""
    needs(engine, NAME)
    rng = random.Random(34)
    for trial in range(6):
        m, k = rng.randint(2, 6), rng.randint(2, 5)
        labels: list[Any] = [f"c{j}" for j in range(k)] if trial % 2 else [7 * j for j in range(k)]
        rows = [[rng.choice(labels) for _ in range(m)] for _ in range(rng.randint(1, 40))]
        if len({x for r in rows for x in r}) == 1:
            rows[0][0] = labels[1] if rows[0][0] == labels[0] else labels[0]
        dtype = pa.list_(pa.string() if trial % 2 else pa.int64())
        got = kappa(engine, rows, dtype)
        assert close(got, float(A.exact_fleiss(rows))), (rows, got)
        assert close(got, A.fleiss(rows))


def test_every_rating_of_one_category_is_nan(engine):
    """statsmodels divides 0 by 0 there (P_e = 1): Randolph's [[7, 0], [7, 0]]."""
    needs(engine, NAME)
    got = kappa(engine, ratings_of([[7, 0], [7, 0]]))
    assert got != got


def test_null_lists_and_null_elements(engine):
    """A NULL list is an unknown row; a NULL element is no rating (the row keeps the others)."""
    needs(engine, NAME)
    rows = [["a", "b", None, "b"], None, ["a", "a", "a"], [None, "b", "c", "b"]]
    got = kappa(engine, rows)
    known = [["a", "b", "b"], ["a", "a", "a"], ["b", "c", "b"]]
    assert close(got, float(A.exact_fleiss(known)))
    assert A.exact_fleiss(known) == Fraction(1, 4)


def test_over_no_known_rows_is_null(engine):
    needs(engine, NAME)
    assert kappa(engine, [None, None]) is None
    assert kappa(engine, []) is None


@pytest.mark.parametrize(
    "rows",
    [[["a", "b"], ["a", "b", "b"]], [["a"], ["b"]], [["a", "b"], ["a", None]]],
    ids=["two-and-three", "one-rater", "a-null-rating"],
)
def test_rows_of_different_raters_fail_with_one_message(engine, rows):
    needs(engine, NAME)
    with pytest.raises(Exception, match=re.escape(RATERS_MESSAGE.format(func=NAME))):
        kappa(engine, rows)


def test_integer_weights_repeat_rows(engine):
    needs(engine, NAME)
    rows = ratings_of(TABLE1)
    weights = [1, 3, 0, 2, 1, 1, 4, 2, 1, 2]
    table = column(rows).append_column("w", pa.array(weights, pa.int64()))
    got = engine.aggregate(NAME, table, columns=("ratings",), sample_weight="w")
    repeated = [r for r, w in zip(rows, weights, strict=True) for _ in range(w)]
    assert close(got, float(A.exact_fleiss(repeated)))


# ------------------------------------------------------------------ Cochran's Q
#: statsmodels' Cochran's Q tests: (rows, Q, p-value, tolerance of Q and p) from
#: test_nonparametric.py (Conover p. 253 / NIST dataplot; a web example) and
#: test_contingency_tables.py (R's CVST cochranq.test; Q only)
CONOVER = [[1, 1, 1], [1, 1, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0], [1, 1, 1], [1, 1, 1],
           [1, 1, 0], [0, 0, 1], [0, 1, 0], [1, 1, 1], [1, 1, 1]]  # fmt: skip
WEB = [[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 1], [1, 1, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1],
       [1, 0, 0, 1], [0, 0, 0, 1], [0, 1, 0, 0], [0, 0, 0, 0], [1, 0, 0, 1], [0, 0, 1, 1]]  # fmt: skip
CVST_1 = [[1, 0, 1, 1], [0, 1, 1, 1], [1, 1, 1, 0], [0, 1, 0, 0], [0, 1, 0, 0], [1, 0, 1, 0],
          [0, 1, 0, 0], [1, 1, 1, 1], [0, 1, 0, 0]]  # fmt: skip
CVST_2 = [[0, 0, 1, 1, 0], [0, 1, 0, 1, 0], [0, 1, 1, 0, 1], [1, 0, 0, 0, 1], [1, 1, 0, 0, 0],
          [1, 0, 1, 0, 0], [0, 1, 0, 0, 0], [0, 0, 1, 1, 0], [0, 0, 0, 0, 0]]  # fmt: skip
STATSMODELS_Q = [
    (CONOVER, 2.8, 0.246597, 5e-7),
    (WEB, 13.2857143, 0.00405776, 1e-6),
    (CVST_1, 4.2, None, 1e-7),
    (CVST_2, 1.2174, None, 1e-4),
]
#: test_cochransq3 (against SAS): 8 distinct rows in frequency-weight format
SAS_CASES = [[0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 1, 1], [1, 1, 1]]
SAS_COUNTS = [6, 2, 16, 4, 2, 6, 4, 6]
FLAGS = pa.list_(pa.int64())
Q, P = "cochrans_q_statistic", "cochrans_q_p_value"


def outcomes(engine: Any, name: str, rows: list[Any], dtype: pa.DataType = FLAGS, **kw: Any) -> Any:
    table = pa.table({"correct": pa.array(rows, dtype)})
    if "sample_weight" in kw:
        table = table.append_column("w", pa.array(kw.pop("sample_weight"), pa.int64()))
        kw["sample_weight"] = "w"
    return engine.aggregate(name, table, columns=("correct",), **kw)


@pytest.mark.parametrize(
    ("rows", "q", "p", "tol"), STATSMODELS_Q, ids=["conover", "web", "cvst1", "cvst2"]
)
def test_statsmodels_cochran_tables(engine, rows, q, p, tol):
    from statsmodels.stats.contingency_tables import cochrans_q

    needs(engine, Q)
    got_q, got_p = outcomes(engine, Q, rows), outcomes(engine, P, rows)
    assert abs(got_q - q) <= tol * max(1.0, q)
    assert got_q == pytest.approx(float(A.exact_cochran(rows)), rel=1e-12)
    want = cochrans_q(rows)
    assert close(got_q, float(want.statistic))
    assert close(got_p, float(want.pvalue))
    if p is not None:
        assert abs(got_p - p) <= tol


def test_sas_frequency_weights_are_sample_weights(engine):
    """test_cochransq3's rows given once each with their counts as sample_weight: SAS's Q
    8.4706 and p 0.0145, and statsmodels' values on the repeated rows."""
    import numpy as np
    from statsmodels.stats.contingency_tables import cochrans_q

    needs(engine, Q)
    want = cochrans_q(np.repeat(np.array(SAS_CASES), SAS_COUNTS, 0))
    got_q = outcomes(engine, Q, SAS_CASES, sample_weight=SAS_COUNTS)
    got_p = outcomes(engine, P, SAS_CASES, sample_weight=SAS_COUNTS)
    assert abs(got_q - 8.4706) < 5e-5 and abs(got_p - 0.0145) < 5e-5
    assert close(got_q, float(want.statistic))
    assert close(got_p, float(want.pvalue))


def test_two_models_are_mcnemar_uncorrected(engine):
    """Over two models Cochran's Q is McNemar's chi-square without correction (statsmodels'
    test_cochransq checks the same equivalence)."""
    needs(engine, Q)
    rows = [r[:2] for r in CONOVER]
    table = pa.table({"actual": [r[0] for r in rows], "predicted": [r[1] for r in rows]})
    mcnemar = engine.aggregate("binary_mcnemar_p_value", table, correction=0.0)
    assert close(outcomes(engine, P, rows), mcnemar)


def test_booleans_nulls_and_edges(engine):
    needs(engine, Q)
    booleans = [[bool(x) for x in r] for r in CONOVER]
    assert close(outcomes(engine, Q, booleans, pa.list_(pa.bool_())), 2.8)
    # a NULL list or a NULL value: the row is left out
    assert close(outcomes(engine, Q, [*CONOVER, None, [1, None, 0]]), 2.8)
    constant = outcomes(engine, P, [[1, 1], [0, 0], [1, 1]])
    assert constant != constant  # every row all right or all wrong: statsmodels' 0 / 0
    assert outcomes(engine, Q, [None, [None, 1]]) is None
    assert outcomes(engine, P, []) is None


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([[1, 0], [1, 0, 1]], "needs the same number of values on every row, at least 2"),
        ([[1], [0]], "needs the same number of values on every row, at least 2"),
        ([[1, 2], [0, 1]], "takes boolean or 0/1 values. Got 2 instead."),
    ],
    ids=["uneven", "one-model", "not-binary"],
)
def test_bad_outcomes_fail_with_one_message(engine, rows, message):
    needs(engine, Q)
    with pytest.raises(Exception, match=re.escape(f"{Q} {message}")):
        outcomes(engine, Q, rows)


@pytest.mark.parametrize(
    ("rows", "dtype"),
    [
        ([1, 0], pa.int64()),
        (["a", "b"], pa.string()),
        ([["a", "b"], ["b", "a"]], pa.list_(pa.string())),
        ([[0.5, 1.0], [1.0, 0.0]], pa.list_(pa.float64())),
    ],
    ids=["integer", "text", "text-lists", "fraction-lists"],
)
def test_outcomes_of_another_type_fail_with_one_message(engine, rows, dtype):
    """The type's verdict in every engine (DuckDB gave its binder's error for one value per
    row, and a value error for lists of text or fractions)."""
    needs(engine, Q)
    message = f"{Q} takes a list of boolean or 0/1 values per row for correct. Got correct "
    with pytest.raises(Exception, match=re.escape(message)):
        outcomes(engine, Q, rows, dtype)


# ------------------------------------------------------------------ the chi-square tail
#: (x, df) pairs: df whole from 1 to 2016 (Bowker's 64 classes), x from 0 to deep in the tail
CHI2_X = [0.0, 1e-9, 0.3, 1.0, 2.5, 7.0, 15.0, 40.0, 100.0, 300.0, 1500.0]
CHI2_DF = [1, 2, 3, 4, 5, 7, 10, 21, 45, 190, 1000, 2016]


def _chi2_tails(engine: Any, xs: list[float], dfs: list[float]) -> list[float]:
    """The formula's P(X > x) on ``engine``: DuckDB's macro, Polars' and Spark's ops."""
    from mlsql.measures.contingency import chi2_upper_tail

    if engine.name == "duckdb":
        sql = "SELECT _mlsql_chi2_upper_tail(x, d) FROM (SELECT unnest(?) AS x, unnest(?) AS d)"
        return [r[0] for r in engine.con.execute(sql, [xs, dfs]).fetchall()]
    if engine.name == "polars":
        import polars as pl

        from mlsql.polars.ops import PolarsOps

        frame = pl.DataFrame({"x": xs, "d": dfs})
        return (
            frame.select(chi2_upper_tail(PolarsOps(), pl.col("x"), pl.col("d")))
            .to_series()
            .to_list()
        )
    from pyspark.sql import functions as F

    from mlsql.spark.ops import SparkOps
    from tests.engines.spark_engine import frame as spark_frame

    df = spark_frame(pa.table({"x": xs, "d": dfs}))
    return [r[0] for r in df.select(chi2_upper_tail(SparkOps(), F.col("x"), F.col("d"))).collect()]


def test_chi2_upper_tail_is_scipys(engine):
    """scipy's chi2.sf to 1e-12 relative for df up to 190 and p above 1e-200; the running
    logarithms of Polars and Spark drift to 1.2e-11 by df 1000 and x 1500 (p 1e-22)."""
    from scipy.stats import chi2

    pairs = [(x, float(d)) for x in CHI2_X for d in CHI2_DF]
    got = _chi2_tails(engine, [x for x, _ in pairs], [d for _, d in pairs])
    wrong = []
    for (x, d), g in zip(pairs, got, strict=True):
        want = float(chi2.sf(x, d))
        if want < 1e-280:
            assert g < 1e-250, (x, d, g)
            continue
        tol = 1e-12 if d <= 190 and want > 1e-200 else 2e-11
        if abs(g - want) > tol * want:
            wrong.append((x, d, g, want))
    assert not wrong, wrong


#: x far below df, where P(X > x) rounds near 1 (the series summed to 1 + 5e-13 before its cap)
NEAR_ONE = [(x, float(d)) for d in (7, 45, 501, 2016) for x in (1e-6, 1e-3, 0.1, d / 10)]


def test_chi2_upper_tail_is_a_probability(engine):
    """P(X > x) is never above 1, and NaN stays NaN, however the engine rounds the series."""
    got = _chi2_tails(engine, [x for x, _ in NEAR_ONE] + [math.nan], [d for _, d in NEAR_ONE] + [3])
    assert all(0 <= g <= 1 for g in got[:-1]), [g for g in got if g > 1]
    # NaN is not capped to 1 (DuckDB orders NaN above 1); DuckDB 1.x reads a NaN parameter
    # as NULL, which stays NULL
    assert got[-1] is None or math.isnan(got[-1])


def test_polars_group_chi2_upper_tail_is_scipys():
    """The chi-square tail as Polars' agreement measures run it: over one group's statistics
    inside ``list.eval`` (:class:`~mlsql.polars.ops.GroupOps`, the series an ``int_range``),
    to scipy's chi2.sf as in :func:`test_chi2_upper_tail_is_scipys`."""
    pl = pytest.importorskip("polars")
    from scipy.stats import chi2

    from mlsql.measures.contingency import chi2_upper_tail
    from mlsql.polars.ops import GroupOps

    pairs = [(x, float(d)) for x in CHI2_X for d in CHI2_DF]
    frame = pl.DataFrame({"x": [x for x, _ in pairs], "d": [d for _, d in pairs]})
    e = pl.element()
    tail = chi2_upper_tail(GroupOps(), e.get(0), e.get(1))
    got = frame.select(pl.concat_list("x", "d").list.eval(tail).list.first()).to_series()
    near = pl.DataFrame({"x": [x for x, _ in NEAR_ONE], "d": [d for _, d in NEAR_ONE]})
    near_one = near.select(pl.concat_list("x", "d").list.eval(tail).list.first()).to_series()
    assert near_one.max() <= 1  # a probability, however the series rounds
    wrong = []
    for (x, d), g in zip(pairs, got.to_list(), strict=True):
        want = float(chi2.sf(x, d))
        if want < 1e-280:
            assert g < 1e-250, (x, d, g)
            continue
        tol = 1e-12 if d <= 190 and want > 1e-200 else 2e-11
        if abs(g - want) > tol * want:
            wrong.append((x, d, g, want))
    assert not wrong, wrong


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("name", [NAME, Q, P])
def test_polars_reads_and_sorts_a_groups_rows_once(name, weighted):
    """Polars merges no common sort or list.eval (and its streaming engine no common
    subexpression), so each mention of a statistic in the formula read and sorted the rows
    again: 12-36 sorts of the exploded ratings in fleiss_kappa's plan, 78-84 in Cochran's
    p-value's (the chi-square tail names Q dozens of times), 29 CPU s for 200k rows. The rows
    are now read once (at most one drop_nulls) and sorted at most once per group (only with
    weights; without, the totals are counts), whatever the formula."""
    pl = pytest.importorskip("polars")
    import mlsql.polars as mp

    column = "ratings" if name == NAME else "correct"
    lf = pl.LazyFrame({"ratings": [["a", "b", "a"]], "correct": [[1, 0, 1]], "w": [2.0], "g": [0]})
    expr = getattr(mp, name)(column, **({"sample_weight": "w"} if weighted else {}))
    for query in (lf.select(expr), lf.group_by("g").agg(expr)):
        plan = query.explain()
        assert plan.count(".sort(") <= 1
        assert plan.count("drop_nulls") <= 1
