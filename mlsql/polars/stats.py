"""Per-row statistics of two label lists, as Polars expressions.

Labels are sets (DESIGN.md section 1): a label repeated in one list counts
once, NULL elements are not labels, and a NULL list makes the row unknown
(every statistic NULL). Polars' own set operations keep NULL as an element,
so the statistics subtract it where it occurs.

Where mlsql's native plugin is enabled (:mod:`mlsql.polars._native`), the
three come from it, in one pass over both lists. Otherwise (``MLSQL_NATIVE=0``,
no compiled plugin, labels neither text nor integers) they are portable
expressions costing, per row, one ``list.set_intersection`` for ``tp`` and one
``list.n_unique`` per side; NULL handling reads only validity and a cheap
``count_matches``. Both give the same numbers.
"""

from __future__ import annotations

import polars as pl

from mlsql._formulas import RowStats
from mlsql.polars import _native


def known(actual: pl.Expr, predicted: pl.Expr) -> pl.Expr:
    """True where neither list is NULL: the rows aggregates count.

    Examples
    --------
    >>> df = pl.DataFrame({"a": [["x"], None], "p": [[], ["y"]]})
    >>> df.select(known(pl.col("a"), pl.col("p"))).to_series().to_list()
    [True, False]
    """
    return actual.is_not_null() & predicted.is_not_null()


def non_null_count(labels: pl.Expr) -> pl.Expr:
    """Elements of each list that are not NULL (``count`` skips NULLs)."""
    return labels.list.eval(pl.element().count()).list.first().cast(pl.Int64)


def distinct_labels(labels: pl.Expr, other: pl.Expr) -> pl.Expr:
    """|labels| as a set: distinct, without NULL; NULL where either list is NULL."""
    has_null = (labels.list.count_matches(None) > 0).cast(pl.Int64)
    n = labels.list.n_unique().cast(pl.Int64) - has_null
    return pl.when(other.is_not_null()).then(n)


def true_positives(actual: pl.Expr, predicted: pl.Expr) -> pl.Expr:
    """|A ∩ P| without NULL (Polars' intersection keeps one NULL if both lists have one)."""
    return non_null_count(actual.list.set_intersection(predicted))


def row_stats(actual: pl.Expr, predicted: pl.Expr) -> RowStats:
    """tp = |A ∩ P|, n_actual = |A|, n_predicted = |P| of each row (distinct, no NULLs).

    All three are NULL where either list is NULL, and ``Int64``. They come from
    the native plugin where it is enabled (:mod:`mlsql.polars._native`), else
    from :func:`portable_row_stats`; both give the same numbers.

    Examples
    --------
    >>> df = pl.DataFrame({"a": [["x", "x", None, "y"]], "p": [["x", None, "z"]]})
    >>> s = row_stats(pl.col("a"), pl.col("p"))
    >>> df.select(s.tp.alias("tp"), s.n_actual.alias("n_a"), s.n_predicted.alias("n_p")).row(0)
    (1, 2, 2)
    """
    if _native.enabled():
        return _native.row_stats(actual, predicted, portable_row_stats)
    return portable_row_stats(actual, predicted)


def portable_row_stats(actual: pl.Expr, predicted: pl.Expr) -> RowStats:
    """:func:`row_stats` as plain Polars expressions (no native code)."""
    return RowStats(
        tp=true_positives(actual, predicted),
        n_actual=distinct_labels(actual, predicted),
        n_predicted=distinct_labels(predicted, actual),
    )
