"""Agreement among several raters in Polars: Fleiss' kappa and Cochran's Q.

A group's known rows are read once: imploded into one list (their ratings, NULL elements
left out, or 0/1 outcomes, beside their weight), over which one ``list.eval`` computes every
statistic once (:func:`over_rows`): per row its raters and Σ_j n_ij² (``list.eval`` of its
values' counts), or its successes; each category's total (each column's) from the ratings
exploded: their counts (``unique_counts``) without weights, else beside their rows' weights
sorted once by category (by column), the running sum's step at the end of its run
(:func:`squared_totals`). (``value_counts`` there gave wrong counts at 1M rows in Polars
2.1, different on each engine; ``unique_counts`` gives statsmodels' and DuckDB's.) The formula is the registry's
(:mod:`mlsql.measures.agreement`), run over those statistics in a second ``list.eval``
(:func:`over_group`, :class:`~mlsql.polars.ops.GroupOps`), so each is named there at no
cost: the formula names them dozens of times, Cochran's p-value hundreds (Polars merges no
common ``list.eval`` or sort, and its streaming engine no common subexpression). Rows of
different numbers of raters (or of fewer than 2) fail the query with
:data:`~mlsql.measures.agreement.RATERS_MESSAGE` (:data:`~mlsql.measures.agreement.MODELS_MESSAGE`),
a value other than 0/1 with the binary flags' message, one Python call on the statistics.

Cost: the group's rows are held in memory (as the sorts of its ratings held them before);
on the streaming engine the ``implode`` runs on the in-memory engine, in ``select`` too.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"ratings": [["a", "a", "b"], ["b", "b", "b"], ["a", "b", "a"]]})
>>> round(df.select(mp.fleiss_kappa("ratings")).item(), 12)
0.1
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._front.build import function, lookup
from mlsql._registry import Measure, measures
from mlsql.measures import agreement as AG
from mlsql.polars._dtypes import Pairs, inner, label_lists
from mlsql.polars._engine import POLARS
from mlsql.polars.families import _classification as K
from mlsql.polars.ops import GroupOps

FAMILIES = (AG.FAMILY,)
GROUP_OPS = GroupOps()


#: the statistics each group's rows give, in the order of their list (:func:`over_rows`)
#: and last 1 where rows hold different numbers of values (or fewer than 2), else NULL
RATING_FIELDS = ("rows", "n", "fewest", "squares", "total_squares", "uneven")
OUTCOME_FIELDS = ("rows", "n", "fewest", "total", "row_squares", "column_squares", "bad", "uneven")


def squared_totals(keys: pl.Expr, weights: pl.Expr | None = None) -> pl.Expr:
    """Σ over the distinct ``keys`` of (the sum of their ``weights``)², NULL keys left out.

    Without ``weights`` (each 1) a key's total is its count (``unique_counts``: whole numbers,
    exact in any order). With them, sorted by key (one sort of both), a key's total is the
    running sum at the end of its run less the running sum at the end of the run before;
    each step is a field of one struct, so the sort is named once."""
    kept = keys.is_not_null()
    if weights is None:
        counts = keys.filter(kept).unique_counts().cast(pl.Float64)
        return (counts * counts).sum()
    pairs = pl.struct(k=keys.filter(kept), w=weights.filter(kept)).sort()
    k, running, end = pl.field("k"), pl.field("running"), pl.field("end")
    steps = pairs.struct.with_fields(running=pl.field("w").cum_sum(), end=k != k.shift(-1))
    steps = steps.struct.with_fields(end=end.fill_null(True))
    steps = steps.struct.with_fields(before=pl.when(end).then(running).shift(1).forward_fill())
    total = running - pl.field("before").fill_null(0.0)
    return steps.struct.with_fields(t=pl.when(end).then(total * total)).struct.field("t").sum()


def over_rows(rows: pl.Expr, values: Sequence[pl.Expr]) -> pl.Expr:
    """``values`` (aggregates over ``pl.element()``, one of the group's ``rows``) as one list
    of Float64 per group: the rows are read once (imploded) and each value computed once,
    over them, in one ``list.eval`` (Polars merges no common ``list.eval`` or sort, and the
    streaming engine no common subexpression)."""
    listed = pl.concat_list([v.cast(pl.Float64) for v in values])
    return rows.implode().list.eval(listed).list.first()


def raising(values: pl.Expr, messages: Sequence[tuple[int, Any]]) -> pl.Expr:
    """``values`` (the lists of :func:`over_rows`), after one check of them: for each (index,
    message) in order, ``message(v)`` is raised for the first group whose value ``v`` at that
    index is not NULL."""

    def check(batch: pl.Series) -> pl.Series:
        for i, message in messages:
            found = batch.list.get(i, null_on_oob=True).drop_nulls()
            if len(found):
                raise MlsqlError(message(found[0]))
        return batch

    return values.map_batches(check, is_elementwise=True, return_dtype=pl.List(pl.Float64))


def _uneven(sizes: pl.Expr) -> pl.Expr:
    """1 where the rows hold different numbers of values or fewer than 2, else NULL."""
    fewest = sizes.min()
    return pl.when((fewest != sizes.max()) | (fewest < 2)).then(1)


def check_flags(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """A list of booleans or whole numbers (their values are checked as they are read)."""
    ((expr, dtype),) = pairs
    element = inner(dtype)
    if element is None or not (element == pl.Boolean or element.is_integer() or element == pl.Null):
        raise MlsqlError(AG.FLAGS_MESSAGE.format(func=func, name=names[0], type=dtype))
    return [expr]


def outcome_stats(
    m: Measure, *inputs: pl.Expr, weight: pl.Expr | None = None
) -> tuple[pl.Expr, tuple[str, ...]]:
    """The group's known rows (their weight), values per row, T, Σ_i R_i² and Σ_j C_j², and
    the first value other than 0/1 (:data:`OUTCOME_FIELDS`): the known rows read once as 0/1
    lists beside their weight (:func:`over_rows`), each column's sum the same way as the
    categories of :func:`stats`, the values exploded beside their column and weight."""
    (correct,) = inputs
    complete = correct.is_not_null() & (correct.list.count_matches(None) == 0)
    mask = complete if weight is None else complete & weight.is_not_null()
    w = pl.lit(1.0) if weight is None else weight.cast(pl.Float64)
    rows = pl.struct(r=correct.cast(pl.List(pl.Int64)), w=w).filter(mask)
    e = pl.element()
    r, w = e.struct.field("r"), e.struct.field("w")
    sizes = r.list.len()
    values = r.explode()
    successes = r.list.sum().cast(pl.Float64)
    columns = pl.int_ranges(0, sizes).explode()
    if weight is None:  # C_j: the 1s of column j
        column_squares = squared_totals(columns.filter(values == 1))
    else:
        column_squares = squared_totals(
            columns, values.cast(pl.Float64) * w.repeat_by(sizes).explode()
        )
    stats = over_rows(
        rows,
        [
            sizes.len(),
            w.sum(),
            sizes.min(),
            (successes * w).sum(),
            (successes * successes * w).sum(),
            column_squares,
            values.filter((values != 0) & (values != 1)).first(),
            _uneven(sizes),
        ],
    )
    message = AG.MODELS_MESSAGE.format(func=m.name)
    return raising(
        stats,
        [
            (7, lambda _: message),
            (6, lambda got: CP.binary_value_message(m.name, str(int(got)))),
        ],
    ), OUTCOME_FIELDS


def stats(
    m: Measure, *inputs: pl.Expr, weight: pl.Expr | None = None
) -> tuple[pl.Expr, tuple[str, ...]]:
    """The group's known rows (their weight), the fewest and most raters per row,
    Σ_i w_i Σ_j n_ij² and Σ_j T_j² (T_j: the weight of the ratings of category j), as
    :data:`RATING_FIELDS`: the known rows' ratings (NULL elements left out) read once beside
    their weight (:func:`over_rows`)."""
    (ratings,) = inputs
    mask = K.known(ratings) if weight is None else K.known(ratings, weight)
    w = pl.lit(1.0) if weight is None else weight.cast(pl.Float64)
    rows = pl.struct(r=ratings.list.drop_nulls(), w=w).filter(mask)
    e = pl.element()
    r, w = e.struct.field("r"), e.struct.field("w")
    sizes = r.list.len()
    row_squares = r.list.eval(pl.element().unique_counts().pow(2).sum()).list.first()
    stats = over_rows(
        rows,
        [
            sizes.len(),
            w.sum(),
            sizes.min(),
            (row_squares.cast(pl.Float64) * w).sum(),
            squared_totals(r.explode(), None if weight is None else w.repeat_by(sizes).explode()),
            _uneven(sizes),
        ],
    )
    message = AG.RATERS_MESSAGE.format(func=m.name)
    return raising(stats, [(5, lambda _: message)]), RATING_FIELDS


def over_group(m: Measure, values: pl.Expr, names: Sequence[str], **params: Any) -> pl.Expr:
    """The formula of ``m`` over one group's statistics ``values`` (a list named ``names``,
    :func:`stats` or :func:`outcome_stats`), each read from the list inside ``list.eval``
    (:class:`~mlsql.polars.ops.GroupOps`): a statistic is computed once however often the
    formula names it, also in the chi-square tail's series."""
    e = pl.element()
    get = {name: e.get(i) for i, name in enumerate(names)}
    if "total" in get:
        s: Any = AG.OutcomeStats(
            n=get["n"],
            k=get["fewest"],
            total=get["total"],
            row_squares=get["row_squares"],
            column_squares=get["column_squares"],
            rows=get["rows"],
        )
    else:
        s = AG.RatingStats(
            n=get["n"],
            raters=get["fewest"],
            squares=get["squares"],
            total_squares=get["total_squares"],
            rows=get["rows"],
        )
    out = m.build(GROUP_OPS, s, **params)  # type: ignore[misc]
    return values.list.eval(out if isinstance(out, pl.Expr) else pl.lit(out)).list.first()


def function_of(m: Measure) -> Any:
    """The Polars function of an agreement measure."""
    of: Any = stats if m.inputs == ("ratings",) else outcome_stats
    check = label_lists if m.inputs == ("ratings",) else check_flags

    def build(*inputs: pl.Expr, sample_weight: pl.Expr | None = None, **params: Any) -> pl.Expr:
        values, names = of(m, *inputs, weight=sample_weight)
        return over_group(m, values, names, **params)

    return K.documented(function(POLARS, m, build, check, sys.modules[__name__]), m)


__all__: list[str] = []
for _m in measures(family=AG.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m))
        __all__.append(_m.name)
