"""Spark's exact sums (:mod:`mlsql.spark.exact`) against exact fractions, in any partitioning.

The oracle is Python's :class:`fractions.Fraction` sum of the same DOUBLEs, each first
rounded to a multiple of 2**-63 (half to even: what the module keeps of a value). A total
below 1 in size must then be that sum rounded once to a DOUBLE; a larger one within an
ulp of it.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pytest

pytest.importorskip("pyspark")

from pyspark.sql import functions as F

from mlsql.spark.exact import BOUND, Terms, limb_sum, limb_sum_sql
from tests.engines.spark_engine import session

_rng = random.Random(20261204)
#: name: the values (each a DOUBLE below the bound, or None)
FINITE: dict[str, list[float | None]] = {
    "wide": [_rng.uniform(-BOUND + 1, BOUND - 1) for _ in range(300)]
    + [_rng.gauss(0, 1e-9) for _ in range(300)]
    + [-0.0, 5e-324, -1e-300, 0.1, 0.2, 0.3, None],
    # a negative total near zero: its whole part is -1 and its fraction near 1
    "small negative total": [_rng.uniform(-1e-3, 9e-4) for _ in range(2000)],
    "cancelling": [1e5 + 0.1, -1e5, -0.1, 2.0**-40],
    "thirds": [1 / 3] * 999 + [-(2**-60)],
    "near the bound": [BOUND - 2**-33, BOUND - 2**-33, -(BOUND - 1)],
}


def _sql_sum(values: list[float | None]) -> set[float | None]:
    """:func:`limb_sum_sql` as an aggregate over ``values``."""
    spark = session()
    df = spark.createDataFrame([(v,) for v in values], "x double")
    return {
        df.repartition(parts).agg(F.expr(limb_sum_sql("`x`"))).first()[0] for parts in (1, 4, 7)
    }


def _terms_sum(values: list[float | None]) -> set[float | None]:
    """:class:`Terms`' sum of the term ``x + 0`` (a column it projects) over ``values``."""
    df = session().createDataFrame([(v,) for v in values], "x double")
    out = set()
    for parts in (1, 4, 7):
        sums = Terms("__t")
        total = sums(F.col("x") + F.lit(0.0))
        again = sums(F.col("x") + F.lit(0.0))  # the same term: one column
        rows = sums.project(df.repartition(parts))
        assert len(sums.terms) == 1
        out |= set(rows.agg(total, again).first())
    return out


# 3-5 s each: "cancelling" stays in the README's run
@pytest.mark.long_cases("wide", "small negative total", "thirds", "near the bound")
@pytest.mark.parametrize("name", FINITE)
def test_the_sum_is_the_exact_one_in_any_partitioning(name):
    values = FINITE[name]
    kept = sum(
        (Fraction(round(Fraction(v) * 2**63), 2**63) for v in values if v is not None),
        Fraction(0),
    )
    column = {
        session()
        .createDataFrame([(v,) for v in values], "x double")
        .repartition(parts)
        .agg(limb_sum(F.col("x")))
        .first()[0]
        for parts in (1, 4, 7)
    }
    assert len(column) == 1  # the same DOUBLE however the rows are partitioned
    assert _sql_sum(values) == column  # the text form sums the same
    assert _terms_sum(values) == column  # and so do the projected terms
    (got,) = column
    if abs(kept) < 1:
        assert got == float(kept)
    else:
        assert abs(Fraction(got) - kept) <= Fraction(math.ulp(float(kept)))


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([float("nan"), 1.0], "nan"),
        ([float("inf"), 1.0], math.inf),
        ([BOUND, 0.5], BOUND + 0.5),  # summed as DOUBLE past the bound
        ([None, None], None),
    ],
)
def test_a_group_past_the_bound_is_summed_as_double(values, expected):
    df = session().createDataFrame([(v,) for v in values], "x double")
    column = df.agg(limb_sum(F.col("x"))).first()[0]
    for got in (column, *_sql_sum(values), *_terms_sum(values)):
        if expected == "nan":
            assert got is not None and math.isnan(got)
        else:
            assert got == expected
