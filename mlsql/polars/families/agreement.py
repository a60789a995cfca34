"""Agreement among several raters in Polars: Fleiss' kappa and Cochran's Q.

The known rows' ratings (NULL elements left out) give per row its raters and
Σ_j n_ij² (``list.eval`` of its values' counts); the group's ratings, exploded beside
their rows' weights and sorted by category, give each category's total as the step of a
running sum at the end of its run. The formula is the registry's
(:mod:`mlsql.measures.agreement`); rows of different numbers of raters (or of fewer than
2) fail the query with :data:`~mlsql.measures.agreement.RATERS_MESSAGE`. Cochran's Q sums
each known row's outcomes, and each column's the same way as the categories: the outcomes
exploded beside their column and weight, sorted by column.

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

from mlsql._errors import MlsqlError
from mlsql._front.build import lookup
from mlsql._registry import Measure, measures
from mlsql.measures import agreement as AG
from mlsql.polars._checks import checked
from mlsql.polars._dtypes import Pairs, inner, label_lists
from mlsql.polars.families import _classification as K

FAMILIES = (AG.FAMILY,)
EXAMPLE: dict[str, list[Any]] = {"ratings": [["a", "a", "b"], ["b", "b", "b"], ["a", "b", "a"]]}
OUTCOMES: dict[str, list[Any]] = {
    "correct": [[1, 1, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 1, 1]]
}


def squared_totals(keys: pl.Expr, weights: pl.Expr) -> pl.Expr:
    """Σ over the distinct ``keys`` of (the sum of their ``weights``)², NULL keys left out:
    sorted by key, a key's total is the running sum's step at the end of its run."""
    kept = keys.is_not_null()
    pairs = pl.struct(k=keys.filter(kept), w=weights.filter(kept)).sort()  # one sort of both
    ordered, running = pairs.struct.field("k"), pairs.struct.field("w").cum_sum()
    ends = running.filter((ordered != ordered.shift(-1)).fill_null(True))
    totals = ends - ends.shift(1).fill_null(0.0)
    return (totals * totals).sum()


def check_flags(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """A list of booleans or whole numbers (their values are checked as they are read)."""
    ((expr, dtype),) = pairs
    element = inner(dtype)
    if element is None or not (element == pl.Boolean or element.is_integer() or element == pl.Null):
        raise MlsqlError(AG.FLAGS_MESSAGE.format(func=func, name=names[0], type=dtype))
    return [expr]


def outcome_stats(m: Measure, *inputs: pl.Expr, weight: pl.Expr | None = None) -> AG.OutcomeStats:
    """The group's known rows (their weight), values per row, T, Σ_i R_i² and Σ_j C_j²: each
    known row's values checked (booleans or 0/1), exploded beside their column and weight."""
    (correct,) = inputs
    complete = correct.is_not_null() & (correct.list.drop_nulls().list.len() == correct.list.len())
    mask = complete if weight is None else complete & weight.is_not_null()
    rows = correct.filter(mask).cast(pl.List(pl.Int64))
    w = pl.lit(1.0) if weight is None else weight.filter(mask).cast(pl.Float64)
    sizes = rows.list.len()
    uneven = (sizes.max() != sizes.min()) | (sizes.min() < 2)
    fine = ~checked(uneven, lambda v: v, lambda _: AG.MODELS_MESSAGE.format(func=m.name))
    cells = K.binary_flag(m.name, "correct", rows.explode(), pl.Int64()).cast(pl.Float64)
    successes = rows.list.sum().cast(pl.Float64)
    each = (pl.lit(1.0) if weight is None else w).repeat_by(sizes).explode()
    columns = pl.int_ranges(0, sizes).explode()
    n = mask.sum().cast(pl.Float64) if weight is None else w.sum()
    return AG.OutcomeStats(
        n=n,
        k=pl.when(fine).then(sizes.min()).cast(pl.Float64),
        total=(successes * w).sum(),
        row_squares=(successes * successes * w).sum(),
        column_squares=squared_totals(columns, cells * each),
        rows=mask.sum(),
    )


def stats(m: Measure, *inputs: pl.Expr, weight: pl.Expr | None = None) -> AG.RatingStats:
    """The group's known rows (their weight), raters per row, Σ_i w_i Σ_j n_ij² and
    Σ_j T_j² (T_j: the weight of the ratings of category j)."""
    (ratings,) = inputs
    mask = K.known(ratings) if weight is None else K.known(ratings, weight)
    rated = ratings.filter(mask).list.drop_nulls()
    w = pl.lit(1.0) if weight is None else weight.filter(mask).cast(pl.Float64)
    sizes = rated.list.len()
    uneven = (sizes.max() != sizes.min()) | (sizes.min() < 2)
    fine = ~checked(uneven, lambda v: v, lambda _: AG.RATERS_MESSAGE.format(func=m.name))
    row_squares = rated.list.eval(pl.element().unique_counts().pow(2).sum()).list.first()
    each = (pl.lit(1.0) if weight is None else w).repeat_by(sizes).explode()
    totals = squared_totals(rated.explode(), each)
    n = mask.sum().cast(pl.Float64) if weight is None else w.sum()
    return AG.RatingStats(
        n=n,
        raters=pl.when(fine).then(sizes.min()).cast(pl.Float64),
        squares=(row_squares.cast(pl.Float64) * w).sum(),
        total_squares=totals,
        rows=mask.sum(),
    )


def function_of(m: Measure) -> Any:
    """The Polars function of an agreement measure."""
    of: Any = stats if m.inputs == ("ratings",) else outcome_stats
    check = label_lists if m.inputs == ("ratings",) else check_flags
    return K.direct(
        m, lambda *x, weight=None: of(m, *x, weight=weight), check, sys.modules[__name__]
    )


def example(measure: Measure) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Three subjects rated by three raters, or three models right or wrong on five rows."""
    return dict(EXAMPLE if measure.inputs == ("ratings",) else OUTCOMES), {}


__all__: list[str] = []
for _m in measures(family=AG.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m))
        __all__.append(_m.name)
