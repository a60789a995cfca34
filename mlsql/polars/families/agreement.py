"""Agreement among several raters in Polars: Fleiss' kappa.

The known rows' ratings (NULL elements left out) give per row its raters and
Σ_j n_ij² (``list.eval`` of its values' counts); the group's ratings, exploded beside
their rows' weights and sorted by category, give each category's total as the step of a
running sum at the end of its run. The formula is the registry's
(:mod:`mlsql.measures.agreement`); rows of different numbers of raters (or of fewer than
2) fail the query with :data:`~mlsql.measures.agreement.RATERS_MESSAGE`.

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
from typing import Any

import polars as pl

from mlsql._front.build import lookup
from mlsql._registry import Measure, measures
from mlsql.measures import agreement as AG
from mlsql.polars._checks import checked
from mlsql.polars._dtypes import label_lists
from mlsql.polars.families import _classification as K

FAMILIES = (AG.FAMILY,)
EXAMPLE: dict[str, list[Any]] = {"ratings": [["a", "a", "b"], ["b", "b", "b"], ["a", "b", "a"]]}


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
    # every rating beside its row's weight, sorted by category: a category's total is the
    # running sum's step at the end of its run
    category = rated.explode()
    each = (pl.lit(1.0) if weight is None else w).repeat_by(sizes).explode()
    kept = category.is_not_null()
    category, each = category.filter(kept), each.filter(kept)
    ordered = category.sort()
    running = each.sort_by(category).cum_sum()
    last = (ordered != ordered.shift(-1)).fill_null(True)
    ends = running.filter(last)
    totals = ends - ends.shift(1).fill_null(0.0)
    n = mask.sum().cast(pl.Float64) if weight is None else w.sum()
    return AG.RatingStats(
        n=n,
        raters=pl.when(fine).then(sizes.min()).cast(pl.Float64),
        squares=(row_squares.cast(pl.Float64) * w).sum(),
        total_squares=(totals * totals).sum(),
        rows=mask.sum(),
    )


def function_of(m: Measure) -> Any:
    """The Polars function of an agreement measure."""
    return K.direct(
        m,
        lambda *x, weight=None: stats(m, *x, weight=weight),
        label_lists,
        sys.modules[__name__],
    )


def example(measure: Measure) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Three subjects rated by three raters."""
    return dict(EXAMPLE), {}


__all__: list[str] = []
for _m in measures(family=AG.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m))
        __all__.append(_m.name)
