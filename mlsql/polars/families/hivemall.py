"""Hivemall's ``fmeasure(actual, predicted [, options])`` for Polars.

The option string is Hivemall's (``-beta 2.``, ``-average micro|binary``) and
is parsed when the expression is built. Inputs are label lists (micro F-beta
over sets, as the other multi-label measures), or Hivemall's binary labels:
integers 1 (positive), 0 or -1 (negative), or booleans. With ``-average
micro`` a binary row counts as one label decision (tp = 1 where the labels
agree), with ``-average binary`` only the positive class counts. An undefined
F is 0, as in Hivemall. Which kind the inputs are is decided at plan time from
their types; integer labels other than 1, 0 and -1 are an error when the
batch holding them is read.
"""

from __future__ import annotations

import polars as pl

from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._formulas import RowStats
from mlsql._registry import REGISTRY
from mlsql.polars import stats as st
from mlsql.polars._build import evaluate
from mlsql.polars._dtypes import IntoExpr, Pairs, compatible, inner, label_lists, to_expr
from mlsql.polars._weights import weight as checked_weight

FAMILIES = ("hivemall",)
__all__ = ["fmeasure"]

NAMES = ("actual", "predicted")
FMEASURE = REGISTRY["fmeasure"]


def _input_kind(dtype: pl.DataType) -> str:
    if inner(dtype) is not None and dtype != pl.Null:
        return "list"
    if dtype.is_integer():
        return "int"
    if dtype == pl.Boolean:
        return "bool"
    return str(dtype)


def _check_kinds(pairs: Pairs) -> str:
    """The input kind (list, int or bool), the same on both sides."""
    dtypes = [d for _, d in pairs]
    kinds = [_input_kind(d) for d in dtypes]
    same = kinds[0] == kinds[1] and kinds[0] in ("list", "int", "bool")
    if same and kinds[0] == "list":
        same = compatible(inner(dtypes[0]), inner(dtypes[1]))  # type: ignore[arg-type]
    if not same:
        raise MlsqlError(P.HIVEMALL_TYPE_MESSAGE.format(actual=dtypes[0], predicted=dtypes[1]))
    return kinds[0]


def _check_int_labels(labels: pl.Series) -> pl.Series:
    bad = labels.filter(labels.is_not_null() & ~labels.is_in([1, 0, -1]))
    if len(bad):
        raise MlsqlError(P.INT_LABEL_MESSAGE.format(got=bad[0]))
    return labels


def _binary(labels: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """1 for the positive class, 0 for the negative one, NULL stays NULL."""
    if dtype == pl.Boolean:
        return labels.cast(pl.Int64)
    checked = labels.map_batches(_check_int_labels, return_dtype=dtype, is_elementwise=True)
    return (checked == 1).cast(pl.Int64)


def _binary_stats(a: pl.Expr, p: pl.Expr, average: str) -> RowStats:
    if average == "binary":  # the positive class only
        return RowStats(tp=a * p, n_actual=a + 0 * p, n_predicted=p + 0 * a)
    one = 0 * a + 0 * p + 1  # one label decision per known row
    return RowStats(tp=(a == p).cast(pl.Int64), n_actual=one, n_predicted=one)


def fmeasure(
    actual: IntoExpr,
    predicted: IntoExpr,
    options: str | None = "",
    *,
    sample_weight: IntoExpr | None = None,
) -> pl.Expr:
    """Hivemall's fmeasure: micro F-beta over label lists, or over binary labels.

    Parameters
    ----------
    actual, predicted : str or polars.Expr
        Label lists (both of one label type), or binary labels: integers 1, 0
        or -1 (Hivemall's negative), or booleans; both of the same kind.
    options : str, default ''
        Hivemall's option string: ``-beta B`` (default 1) and ``-average
        micro|binary`` (default micro; binary needs binary labels).
    sample_weight : str or polars.Expr, optional
        A weight per row (finite, >= 0; NULL skips the row): it multiplies the
        row's counts.

    Returns
    -------
    polars.Expr
        An aggregate (``select``, ``group_by().agg``, ``over()``); 0 where F is
        undefined, as Hivemall; NULL over no known rows.

    Notes
    -----
    Unlike Hivemall, labels are sets: a label repeated in a list counts once.

    Examples
    --------
    >>> import polars as pl
    >>> import mlsql.polars as mp
    >>> df = pl.DataFrame({"actual": [1, 0, -1, 1], "predicted": [1, 1, -1, 0]})
    >>> df.select(mp.fmeasure("actual", "predicted", "-average binary")).item()
    0.5
    >>> df.select(mp.fmeasure("actual", "predicted")).item()
    0.5
    """
    opts = P.parse_hivemall_options(options)
    exprs = [
        to_expr(x, "fmeasure", name) for x, name in zip((actual, predicted), NAMES, strict=True)
    ]
    if sample_weight is not None:
        exprs.append(to_expr(sample_weight, "fmeasure", "sample_weight"))

    def resolved(given: Pairs) -> pl.Expr:
        pairs = given[:2]
        weight = checked_weight("fmeasure", *given[2]) if len(given) > 2 else None
        if _check_kinds(pairs) == "list":
            if opts.average == "binary":
                raise MlsqlError(P.BINARY_ON_ARRAYS_MESSAGE)
            a, p = label_lists("fmeasure", NAMES, pairs)
            s = st.row_stats(a, p)
        else:
            (a, a_type), (p, p_type) = pairs
            s = _binary_stats(_binary(a, a_type), _binary(p, p_type), opts.average)
        mask = st.known(*(e for e, _ in pairs))
        f = evaluate(FMEASURE.build, s, known=mask, weight=weight, options=opts)  # type: ignore[arg-type]
        return f.alias("fmeasure")

    return pl.pipe_with_dtype(exprs, resolved)
