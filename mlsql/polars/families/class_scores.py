"""Class probabilities in Polars: the multiclass Brier score (a sum, a count and a maximum over
exploded cells) and the top-label calibration error.

The known rows' scored classes (a label's first entry, NULL labels and scores dropped) are
exploded into one cell per (row, class) beside the row's true label and weight; each cell
adds (p - [class is true])², each row whose true class is unscored adds 1. No Python runs
per row. The formula is the registry's (:mod:`mlsql.measures.class_scores`).

``multiclass_calibration_error`` takes each row's highest probability and the smallest label
scored it (``list.eval`` per row), then bins them as ``expected_calibration_error`` does
(:func:`mlsql.polars.families.scores.over_bins_of`); its probabilities are checked on the
exploded cells, once, in the row count.

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

import sys
from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql._errors import MlsqlError
from mlsql._front.build import lookup
from mlsql._label_types import NOT_A_LABEL_MESSAGE
from mlsql._registry import Measure, measures
from mlsql.measures import class_scores as CS
from mlsql.measures import scores as SC
from mlsql.polars._dtypes import Pairs, check_same_kind, inner, kind
from mlsql.polars.families import _classification as K
from mlsql.polars.families.ranking import _score_entries
from mlsql.polars.families.scores import over_bins_of, probability

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


def check(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """One label per row of the kind of the scores' labels; the scores as {label, score}."""
    (a_expr, a_dtype), (s_expr, s_dtype) = pairs
    entries, label_type = _score_entries(func, names[1], s_expr, s_dtype)
    if inner(a_dtype) is not None or kind(a_dtype) not in LABEL_KINDS:
        raise MlsqlError(NOT_A_LABEL_MESSAGE.format(func=func, name=names[0], type=a_dtype))
    check_same_kind(func, names, [a_dtype, s_dtype], [a_dtype, label_type])
    # the entries' labels are already String (text) or their integer type
    if kind(label_type) == "text":
        a_expr = a_expr.cast(pl.String())
    elif kind(a_dtype) == "null" and kind(label_type) != "null":
        a_expr = a_expr.cast(label_type)
    return [a_expr, entries]


def _scored(entries: pl.Expr) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Each row's scored classes (a label's first entry; NULL labels and scores dropped), and
    the per-element ``label`` and ``score`` fields to read them with ``list.eval``."""
    label, score = pl.element().struct.field("label"), pl.element().struct.field("score")
    first = label.is_not_null() & label.is_first_distinct() & score.is_not_null()
    return entries.list.eval(pl.element().filter(first)), label, score


def stats(m: Measure, *inputs: pl.Expr, weight: pl.Expr | None = None) -> CS.ClassBrierStats:
    """The group's known rows (their weight), Σ of their losses and their widest row.

    The known rows' scored classes are exploded into one cell per (row, class), each beside
    its row's true label (and weight): Σ over the cells of (p - [class is true])², plus 1
    per row whose true class is unscored. Columnar: no list evaluation per row beyond
    keeping each label's first entry.
    """
    actual, entries = inputs
    mask = K.known(actual, entries) if weight is None else K.known(actual, entries, weight)
    scored, label, score = _scored(entries.filter(mask))
    labels, probs = scored.list.eval(label), scored.list.eval(score)
    truth = actual.filter(mask)
    w = pl.lit(1.0) if weight is None else weight.filter(mask).cast(pl.Float64)
    size = labels.list.len()
    # an empty list explodes to one NULL cell, and so does its row repeated 0 times
    cell_p = probability(
        m.name, "scores", K.number(m.name, "scores", probs.explode(), pl.Float64(), finite=True)
    )
    is_true = labels.explode() == truth.repeat_by(size).explode()
    cell = CS.class_squared_error(K.OPS, cell_p, is_true)
    unscored = 1 - labels.list.contains(truth).cast(pl.Int64)
    if weight is not None:
        cell = cell * w.repeat_by(size).explode()
    return CS.ClassBrierStats(
        n=w.sum() if weight is not None else mask.sum().cast(pl.Int64),
        total_loss=cell.sum() + (unscored * w).sum(),
        n_classes=(size + unscored).max(),
    )


def calibration_stats(
    m: Measure, *inputs: pl.Expr, weight: pl.Expr | None = None
) -> SC.CalibrationStats:
    """The group's known rows (their weight) and the bins of their top labels: each row's
    confidence (its highest probability, 0 when it scores no class) against whether the
    smallest label scored it is the true one; rows left out are NULL in the bins."""
    actual, entries = inputs
    mask = K.known(actual, entries) if weight is None else K.known(actual, entries, weight)
    scored, label, score = _scored(entries)
    probs = scored.list.eval(score)
    cells = K.number(m.name, "scores", probs.filter(mask).explode(), pl.Float64(), finite=True)
    checked = probability(m.name, "scores", cells)
    confidence = pl.when(mask).then(probs.list.max().cast(pl.Float64).fill_null(0.0))
    top = scored.list.eval(label.filter(score == score.max()).min()).list.first()
    correct = pl.when(mask).then((top == actual).fill_null(False).cast(pl.Float64))
    w = pl.lit(1.0) if weight is None else weight.cast(pl.Float64)
    one = pl.when(mask).then(w)
    d = (confidence - correct) * w
    # the checks run once, here: the cells are in [0, 1] when they pass, so they add 0
    n = (one.sum() if weight is not None else mask.sum().cast(pl.Int64)) + (checked.sum() * 0).cast(
        pl.Int64 if weight is None else pl.Float64
    )
    return SC.CalibrationStats(n=n, over_bins=over_bins_of(confidence, d, one))


def function_of(m: Measure) -> Any:
    """The Polars function of a class-score measure."""
    of = calibration_stats if m.name == "multiclass_calibration_error" else stats
    return K.direct(
        m, lambda *x, weight=None: of(m, *x, weight=weight), check, sys.modules[__name__]
    )


def example(measure: Measure) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Two rows, the second missing its true class's score."""
    return dict(EXAMPLE), {}


__all__: list[str] = []
for _m in measures(family=CS.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m))
        __all__.append(_m.name)
