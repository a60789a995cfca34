"""The multiclass Brier score in Polars: per row a list evaluation, then a sum, a count and a
maximum.

A row's entries (its scored classes, a label's first entry, NULL labels and scores dropped)
get the row's true label appended; inside the list evaluation a class is true where its
label equals that last one, so no Python runs per row. The formula is the registry's
(:mod:`mlsql.measures.class_scores`).

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame(
...     {
...         "actual": ["cat", "dog"],
...         "scores": [
...             [{"label": "cat", "score": 0.75}, {"label": "dog", "score": 0.25}],
...             [{"label": "cat", "score": 0.5}],
...         ],
...     }
... )
>>> df.select(mp.multiclass_brier_score("actual", "scores")).item()
0.34375
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._front.build import lookup
from mlsql._label_types import NOT_A_LABEL_MESSAGE
from mlsql._registry import Measure, measures
from mlsql.measures import class_scores as CS
from mlsql.polars._checks import checked
from mlsql.polars._dtypes import Pairs, check_same_kind, inner, kind
from mlsql.polars.families import _classification as K
from mlsql.polars.families.ranking import _score_entries

FAMILIES = (CS.FAMILY,)
EXAMPLE: dict[str, list[Any]] = {
    "actual": ["cat", "dog"],
    "scores": [
        [{"label": "cat", "score": 0.75}, {"label": "dog", "score": 0.25}],
        [{"label": "cat", "score": 0.5}],
    ],
}
#: the label kinds a class can be
LABEL_KINDS = ("text", "integer", "null")


def _first_bad(values: Any, bad: Any) -> Any:
    items = [] if values is None else list(values)
    return next((v for v in items if v is not None and bad(v)), None)


def _probabilities(func: str, name: str, scores: pl.Expr) -> pl.Expr:
    """A row's scores (a list), refused when one is not finite, below 0 or above 1."""
    elem = pl.element()

    def not_finite(row: Any) -> str:
        x = _first_bad(row, lambda v: not math.isfinite(v))
        got = CP.NOT_FINITE[0 if x != x else 1 if x > 0 else 2]
        return CP.finite_value_message(func, name, got)

    out = checked(scores, lambda v: v.list.eval(~elem.is_finite()).list.any(), not_finite)
    below, above = (CP.probability_value_message(func, name, got) for got in CP.OUT_OF_RANGE)
    out = checked(out, lambda v: v.list.eval(elem < 0).list.any(), lambda _: below)
    return checked(out, lambda v: v.list.eval(elem > 1).list.any(), lambda _: above)


def check(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """One label per row of the kind of the scores' labels; the scores as {label, score}."""
    (a_expr, a_dtype), (s_expr, s_dtype) = pairs
    entries, label_type = _score_entries(func, names[1], s_expr, s_dtype)
    if inner(a_dtype) is not None or kind(a_dtype) not in LABEL_KINDS:
        raise MlsqlError(NOT_A_LABEL_MESSAGE.format(func=func, name=names[0], type=a_dtype))
    check_same_kind(func, names, [a_dtype, s_dtype], [a_dtype, label_type])
    target = pl.String() if kind(label_type) == "text" else None
    if kind(a_dtype) == "null" and kind(label_type) != "null":
        target = pl.String() if kind(label_type) == "text" else label_type
    if target is not None:
        a_expr = a_expr.cast(target)
        entries = entries.list.eval(
            pl.struct(
                pl.element().struct.field("label").cast(target), pl.element().struct.field("score")
            )
        )
    return [a_expr, entries]


def _row(func: str, actual: pl.Expr, entries: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """A row's Σ of squared errors over its classes and its number of classes."""
    label, score = pl.element().struct.field("label"), pl.element().struct.field("score")
    first = label.is_not_null() & label.is_first_distinct() & score.is_not_null()
    scored = entries.list.eval(pl.element().filter(first))
    scored = scored.list.eval(pl.struct(label.alias("label"), score.alias("score")))
    probs = _probabilities(func, "scores", scored.list.eval(score))
    cells = pl.concat_list(
        scored, pl.struct(actual.alias("label"), pl.lit(None, pl.Float64).alias("score"))
    )
    lab, sc = pl.element().struct.field("label"), pl.element().struct.field("score")
    is_true = (lab == lab.last()) & sc.is_not_null()
    unscored = pl.lit(1) - is_true.any().cast(pl.Int64)
    term = CS.class_squared_error(K.OPS, sc, is_true).filter(sc.is_not_null())
    loss = cells.list.eval(term.sum() + unscored).list.first()
    width = cells.list.eval(sc.is_not_null().sum() + unscored).list.first()
    # the probabilities' checks run where the loss is read
    loss = pl.when(probs.is_null()).then(None).otherwise(loss)
    return loss, width


def stats(m: Measure, *inputs: pl.Expr, weight: pl.Expr | None = None) -> CS.ClassBrierStats:
    """The group's known rows (their weight), Σ of their losses and their widest row."""
    actual, entries = inputs
    mask = K.known(actual, entries) if weight is None else K.known(actual, entries, weight)
    loss, width = _row(m.name, actual, entries)
    w = pl.lit(1.0) if weight is None else weight
    return CS.ClassBrierStats(
        n=w.filter(mask).sum() if weight is not None else mask.sum().cast(pl.Int64),
        total_loss=(loss * w).filter(mask).sum(),
        n_classes=width.filter(mask).max(),
    )


def function_of(m: Measure) -> Any:
    """The Polars function of a class-score measure."""
    return K.direct(
        m, lambda *x, weight=None: stats(m, *x, weight=weight), check, sys.modules[__name__]
    )


def example(measure: Measure) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Two rows, the second missing its true class's score."""
    return dict(EXAMPLE), {}


__all__: list[str] = []
for _m in measures(family=CS.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m))
        __all__.append(_m.name)
