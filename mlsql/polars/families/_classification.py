"""What the single-label, binary, rule, regression and score families share in Polars.

Their statistics are aggregates (sums over rows, per-class counts, moments),
so their formulas run *directly* on ``pl.Expr`` with
:class:`~mlsql.polars.ops.PolarsOps` (:func:`direct`), not through the
symbolic row-statistics builder. Inputs are checked at plan time from their
dtypes (binary: boolean or numeric; numbers: numeric; labels: one kind), and
binary values (0/1 only) when the data is read, by a cheap elementwise check.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import polars as pl

from mlsql import _classification_params as CP
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._front.build import function
from mlsql._front.docs import CLASS_PARAM_DOCS
from mlsql._front.inputs import LABEL_MESSAGE, check_required
from mlsql._registry import Measure
from mlsql.polars._build import evaluate
from mlsql.polars._checks import checked
from mlsql.polars._dtypes import Check, Pairs, same_kind
from mlsql.polars._engine import POLARS
from mlsql.polars.ops import PolarsOps

OPS = PolarsOps()
Frame = pl.DataFrame | pl.LazyFrame


# ------------------------------------------------------------------ inputs
def binary_flag(func: str, name: str, expr: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """A boolean or 0/1 input as Boolean (NULL stays NULL); anything else is an error."""
    if dtype == pl.Boolean:
        return expr
    if dtype == pl.Null:
        return expr.cast(pl.Boolean)
    if dtype.is_numeric():
        flags = checked(
            expr,
            lambda v: v.is_not_null() & (v != 0) & (v != 1),
            lambda got: CP.binary_value_message(func, str(got)),
        )
        return flags == 1
    is_list = isinstance(dtype, (pl.List, pl.Array))
    raise MlsqlError(CP.binary_type_message(func, name, str(dtype), is_list=is_list))


def not_finite(func: str, name: str) -> Callable[[Any], str]:
    def message(x: Any) -> str:
        got = CP.NOT_FINITE[0 if x != x else 1 if x > 0 else 2]
        return CP.finite_value_message(func, name, got)

    return message


def number(
    func: str, name: str, expr: pl.Expr, dtype: pl.DataType, *, finite: bool = False
) -> pl.Expr:
    """A numeric input as Float64; other types are an error, and with ``finite`` NaN and
    infinite values too (checked as they are read, a cheap elementwise batch check)."""
    if finite and dtype.is_float():
        as_float = expr.cast(pl.Float64)
        return checked(as_float, lambda v: ~v.is_finite(), not_finite(func, name))
    if dtype.is_numeric() or dtype == pl.Null:
        return expr.cast(pl.Float64)
    raise MlsqlError(CP.number_type_message(func, name, str(dtype)))


def binary_inputs(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Every input boolean or 0/1."""
    return [binary_flag(func, n, e, d) for n, (e, d) in zip(names, pairs, strict=True)]


def numeric_inputs(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Every input a number (as Float64)."""
    return [number(func, n, e, d) for n, (e, d) in zip(names, pairs, strict=True)]


def finite_inputs(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Every input a finite number (as Float64), NULL where a row has a NULL (left unchecked)."""
    mask = known(*(e for e, _ in pairs))
    return [
        number(func, n, pl.when(mask).then(e), d, finite=True)
        for n, (e, d) in zip(names, pairs, strict=True)
    ]


def labels(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Scalar labels of one kind (lists are refused)."""
    for name, (_, dtype) in zip(names, pairs, strict=True):
        if isinstance(dtype, (pl.List, pl.Array)):
            raise MlsqlError(LABEL_MESSAGE.format(func=func, name=name, type=dtype))
    return same_kind(func, names, pairs)


def known(*inputs: pl.Expr) -> pl.Expr:
    """True where no input is NULL."""
    out = inputs[0].is_not_null()
    for x in inputs[1:]:
        out = out & x.is_not_null()
    return out


def total(x: pl.Expr) -> pl.Expr:
    """SQL ``sum`` (NULL over no non-NULL values)."""
    return OPS.sum(x)


# ------------------------------------------------------------------ parameters
def params(measure: Measure, given: dict[str, Any]) -> dict[str, Any]:
    """Require this family's parameters that have no default (positive, label, costs).

    The others are checked against their registry constraints (:mod:`mlsql._params`).
    """
    check_required(measure.name, given, ", or a DataFrame actual, predicted, cost")
    return given


# ------------------------------------------------------------------ functions
#: how this family's inputs are described in docstrings
INPUT_DOCS = {
    "actual": "The true values of each row (column name or expression).",
    "predicted": "The predicted values of each row (column name or expression).",
    "label": "A label column (name or expression).",
    "holds": "Whether the row is of the rule's class, R: boolean or 0/1.",
    "fires": "Whether the rule fires on the row, L: boolean or 0/1.",
    "score": "The score of each row (column name or expression).",
    "prob": "The probability of the positive class in each row, in [0, 1] (column name or expression).",
    "tp": "Stored true positives.",
    "fp": "Stored false positives.",
    "fn": "Stored false negatives.",
    "tn": "Stored true negatives.",
}


#: this family's parameters as docstrings describe them (type line, text)
PARAM_DOCS = {
    **CLASS_PARAM_DOCS,
    "costs": (
        "costs : dict or polars.DataFrame",
        "actual -> {predicted: cost}, (actual, predicted) -> cost, or a DataFrame with\n"
        "    columns actual, predicted, cost. Pairs not given cost 1 off the diagonal, 0 on it.",
    ),
}


def documented(fn: Callable[..., pl.Expr], m: Measure) -> Callable[..., pl.Expr]:
    lines = (fn.__doc__ or "").splitlines()
    for i, line in enumerate(lines[:-1]):
        name = line.split(" : ")[0]
        if name in m.inputs and " : str or polars.Expr" in line and name in INPUT_DOCS:
            lines[i + 1] = f"    {INPUT_DOCS[name]}"
        elif name in PARAM_DOCS and lines[i + 1].strip() == "See the summary.":
            lines[i], lines[i + 1] = PARAM_DOCS[name][0], f"    {PARAM_DOCS[name][1]}"
    fn.__doc__ = "\n".join(lines) + "\n"
    return fn


def direct(
    m: Measure, stats: Callable[..., Any], check: Check, family: ModuleType
) -> Callable[..., pl.Expr]:
    """The public function of ``m``: its formula run directly over ``stats(*inputs)``.

    With ``sample_weight`` the statistics are ``stats(*inputs, weight=w)``.
    """

    def build(*inputs: pl.Expr, sample_weight: pl.Expr | None = None, **checked: Any) -> pl.Expr:
        weighted = {} if sample_weight is None else {"weight": sample_weight}
        s = stats(*inputs, **weighted)
        return evaluate(m.build, s, symbolic=False, **checked)  # type: ignore[arg-type]

    return documented(function(POLARS, m, build, check, family), m)


def pooled(
    m: Measure,
    rows: Callable[..., Any],
    pool: Callable[[Any, Any], Any],
    check: Check,
    family: ModuleType,
) -> Callable[..., pl.Expr]:
    """The public function of ``m`` over per-row statistics ``rows(*inputs)``.

    ``pool(ops, row_stats)`` turns them into the aggregated statistics the
    formula takes (sums through ``ops``), so the symbolic builder computes each
    per-row statistic and each sum once, also on the streaming engine. Every
    per-row statistic must be NULL exactly where an input is NULL. With
    ``sample_weight`` each per-row statistic is multiplied by the row's weight.
    """

    def formula(ops: Any, s: Any, **checked: Any) -> Any:
        return m.build(ops, pool(ops, s), **checked)  # type: ignore[misc]

    def build(*inputs: pl.Expr, sample_weight: pl.Expr | None = None, **checked: Any) -> pl.Expr:
        per_row = rows(*inputs)
        if sample_weight is not None:
            per_row = scaled(per_row, sample_weight)
        return evaluate(formula, per_row, known=known(*inputs), **checked)

    return documented(function(POLARS, m, build, check, family), m)


def scaled(stats: Any, w: pl.Expr) -> Any:
    """Per-row statistics (a dataclass of ``pl.Expr``) each multiplied by the row's weight."""
    fields = {f.name: getattr(stats, f.name) * w for f in dataclasses.fields(stats)}
    return dataclasses.replace(stats, **fields)


def weights_of(mask: pl.Expr, weight: pl.Expr | None) -> pl.Expr:
    """Each known row's weight (1 without weights), as Float64, NULL where the row is unknown."""
    one = pl.lit(1.0) if weight is None else weight
    return pl.when(mask).then(one)


def by_columns(by: str | Sequence[str] | None, func: str) -> list[str]:
    """Grouping column names (``by``) as a list."""
    return P.check_by(by, func)


def finish(frame: pl.LazyFrame, source: Frame) -> Frame:
    """Lazy if the source was lazy, else collected."""
    return frame if isinstance(source, pl.LazyFrame) else frame.collect()
