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
