"""Class probabilities in Polars: the multiclass Brier score (a sum, a count and a maximum over
exploded cells) and the top-label calibration error.

The known rows' scored classes (a label's first entry, NULL labels and scores dropped) are
exploded into one cell per (row, class) beside the row's true label and weight; each cell
adds (p - [class is true])², each row whose true class is unscored adds 1. No Python runs
per row. The formula is the registry's (:mod:`mlsql.measures.class_scores`).

``multiclass_calibration_error`` takes each row's highest probability and the smallest label
scored it, then bins them as ``expected_calibration_error`` does (a window sum per bin, as
:func:`mlsql.polars.families.scores.over_bins_of`).

Cost: Polars merges no common ``list.eval``, so every mention of the scored classes would
read them again. Each row value (the cells, the unscored true class, the widest row, the
bin, the term, the checks of the probabilities) is one expression over one read of the row
(:class:`_Rows`), named once per aggregation: 6 reads for the Brier score, 7 for the
calibration error (15 and 17 when each mention read them). A read keeps each label's first
entry with a per-row ``list.eval`` only on rows whose labels repeat, and takes the top label
with one only on rows whose highest probability repeats; the other rows use native list
functions.

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

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._front.build import lookup
from mlsql._label_types import NOT_A_LABEL_MESSAGE
from mlsql._registry import Measure, measures
from mlsql.measures import class_scores as CS
from mlsql.measures import scores as SC
from mlsql.polars._checks import refused_first
from mlsql.polars._dtypes import Pairs, check_same_kind, inner, kind
from mlsql.polars.families import _classification as K
from mlsql.polars.families.ranking import _score_entries

FAMILIES = (CS.FAMILY,)
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


#: an entry's label and score, inside ``list.eval``
_LABEL, _SCORE = pl.element().struct.field("label"), pl.element().struct.field("score")


def _scored(entries: pl.Expr) -> pl.Expr:
    """Each row's scored classes: a label's first entry, NULL labels and scores dropped.

    Keeping first entries takes a ``list.eval`` that Polars runs row by row
    (``is_first_distinct``: about 1 CPU s per million rows of 4 classes). It runs on the rows
    whose labels repeat only, found by a native count of distinct labels; the other rows drop
    their NULLs with an elementwise filter.
    """
    known = _LABEL.is_not_null() & _SCORE.is_not_null()
    labels = entries.list.eval(_LABEL)
    scope = pl.struct(e=entries, r=labels.list.n_unique() < labels.list.len())
    e, repeats = pl.field("e"), pl.field("r")
    firsts = (
        pl.when(repeats).then(e).list.eval(pl.element().filter(known & _LABEL.is_first_distinct()))
    )
    out = pl.when(repeats).then(firsts).otherwise(e.list.eval(pl.element().filter(known)))
    return scope.struct.with_fields(__mlsql_scored=out).struct.field("__mlsql_scored")


class _Rows:
    """Values of each known row computed from its scored classes ``s``, true label ``t`` and
    weight ``w`` (``pl.field``), each in a struct that evaluates those inputs once.

    Polars merges no common ``list.eval``, so an expression naming the scored classes twice
    reads them twice. Here each value is one expression over one evaluation of the row's
    inputs, and the measure names each value once per aggregation of it: the scored classes
    are read once per aggregation, not once per mention.
    """

    s, t, w = pl.field("s"), pl.field("t"), pl.field("w")

    def __init__(self, actual: pl.Expr, entries: pl.Expr, mask: pl.Expr, w: pl.Expr) -> None:
        self.inputs = [
            _scored(pl.when(mask).then(entries)).alias("s"),
            actual.alias("t"),
            w.alias("w"),
        ]

    def __call__(self, value: pl.Expr) -> pl.Expr:
        """``value`` (over ``s``, ``t``, ``w``) per row; NULL on the rows left out."""
        scope = pl.struct(self.inputs).struct.with_fields(__mlsql=value)
        return scope.struct.field("__mlsql")

    def probs(self) -> pl.Expr:
        return self.s.list.eval(_SCORE)

    def checked(self, m: Measure, result: pl.Expr) -> pl.Expr:
        """``result``, after the checks of the scored probabilities: finite first (the first
        non-finite one read names its kind), then below 0 anywhere, then above 1."""
        probs = self.probs()
        not_finite = probs.list.eval(pl.element().filter(~pl.element().is_finite())).list.first()
        out = pl.when(probs.list.min() < 0).then(0).when(probs.list.max() > 1).then(1)
        result = refused_first(
            result, self(not_finite).drop_nulls().first(), K.not_finite(m.name, "scores")
        )

        def out_of_range(side: int) -> str:
            return CP.probability_value_message(m.name, "scores", CP.OUT_OF_RANGE[side])

        return refused_first(result, self(out).min(), out_of_range)


def stats(m: Measure, *inputs: pl.Expr, weight: pl.Expr | None = None) -> CS.ClassBrierStats:
    """The group's known rows (their weight), Σ of their losses and their widest row.

    The known rows' scored classes are exploded into one cell per (row, class), each beside
    its row's true label and weight: Σ over the cells of (p - [class is true])², plus 1 per
    row whose true class is unscored. The row values (the cells, the unscored true class,
    the width, the checks) each read the scored classes once (:class:`_Rows`).
    """
    actual, entries = inputs
    mask = K.known(actual, entries) if weight is None else K.known(actual, entries, weight)
    w = pl.lit(1.0) if weight is None else weight.cast(pl.Float64)
    rows = _Rows(actual, entries, mask, w)
    s, t = rows.s, rows.t
    size = s.list.len()
    unscored = 1 - s.list.eval(_LABEL).list.contains(t).cast(pl.Int64)
    # an empty list explodes to one NULL cell, and so does its row repeated 0 times
    cells = pl.struct(
        c=rows(s).explode(), tw=rows(pl.struct(t=t, w=rows.w).repeat_by(size)).explode()
    )
    # each cell's term reads the cell once: a one-element list evaluated with list.eval (a
    # struct.with_fields scope is refused over exploded cells in group_by)
    c, tw = pl.element().struct.field("c"), pl.element().struct.field("tw")
    cell = CS.class_squared_error(
        K.OPS, c.struct.field("score"), c.struct.field("label") == tw.struct.field("t")
    )
    if weight is not None:
        cell = cell * tw.struct.field("w")
    cell_sum = pl.concat_list(cells).list.eval(cell).list.first().sum()
    total_loss = rows.checked(m, cell_sum + rows(unscored * rows.w).sum())
    return CS.ClassBrierStats(
        n=pl.when(mask).then(w).sum() if weight is not None else mask.sum().cast(pl.Int64),
        total_loss=total_loss,
        n_classes=rows(size + unscored).max(),
    )


def _top(s: pl.Expr, probs: pl.Expr, confidence: pl.Expr) -> pl.Expr:
    """The smallest label scored a row's highest probability: the label at its first
    maximum, or where the maximum repeats the smallest of its labels (a ``list.eval`` that
    Polars runs row by row, on those rows only)."""
    ties = (probs - confidence).list.eval(pl.element() == 0).list.sum()
    score = _SCORE
    tied = pl.when(ties > 1).then(s).list.eval(_LABEL.filter(score == score.max()).min())
    first = s.list.eval(_LABEL).list.get(probs.list.arg_max(), null_on_oob=True)
    return pl.when(ties > 1).then(tied.list.first()).otherwise(first)


def calibration_stats(
    m: Measure, *inputs: pl.Expr, weight: pl.Expr | None = None
) -> SC.CalibrationStats:
    """The group's known rows (their weight) and the bins of their top labels: each row's
    confidence (its highest probability, 0 when it scores no class) against whether the
    smallest label scored it is the true one; rows left out are NULL in the bins. Each
    row's bin and term read its scored classes once (:class:`_Rows`)."""
    actual, entries = inputs
    mask = K.known(actual, entries) if weight is None else K.known(actual, entries, weight)
    w = pl.lit(1.0) if weight is None else weight.cast(pl.Float64)
    rows = _Rows(actual, entries, mask, w)
    s, probs = rows.s, rows.probs()
    known = s.is_not_null()
    confidence = pl.when(known).then(probs.list.max().cast(pl.Float64).fill_null(0.0))
    correct = pl.when(known).then((_top(s, probs, confidence) == rows.t).fill_null(False))
    d = rows((confidence - correct.cast(pl.Float64)) * rows.w)
    one = pl.when(mask).then(w)
    n = rows.checked(m, one.sum() if weight is not None else mask.sum().cast(pl.Int64))

    def over_bins(n_bins: Any, term: SC.BinTerm, largest: bool) -> pl.Expr:
        b = rows(SC.calibration_bin(K.OPS, confidence, n_bins))
        first_of_bin = b.is_not_null() & b.is_first_distinct()
        per_bin = term(d.sum().over(b).abs(), one.sum().over(b)).filter(first_of_bin)
        return per_bin.max() if largest else per_bin.sum()

    return SC.CalibrationStats(n=n, over_bins=over_bins)


def function_of(m: Measure) -> Any:
    """The Polars function of a class-score measure."""
    of = calibration_stats if m.name == "multiclass_calibration_error" else stats
    return K.direct(
        m, lambda *x, weight=None: of(m, *x, weight=weight), check, sys.modules[__name__]
    )


__all__: list[str] = []
for _m in measures(family=CS.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m))
        __all__.append(_m.name)
