"""Hivemall's ``fmeasure(actual, predicted [, options])`` for Spark.

The option string is Hivemall's (``-beta 2.``, ``-average micro|binary``) and
is parsed when the Column is built. Inputs are label arrays (micro F-beta over
sets, as the other multi-label measures), or Hivemall's binary labels:
integers 1 (positive), 0 or -1 (negative), or booleans. With ``-average
micro`` a binary row counts as one label decision (tp = 1 where the labels
agree), with ``-average binary`` only the positive class counts. An undefined
F is 0, as in Hivemall.

Which kind the inputs are is read from their types, so binary labels need
Columns of the DataFrame (``df.actual``), which carry their type; names and
``F.col(...)`` are read as label arrays (Spark then rejects an int column with
an ``AnalysisException``). Integer labels other than 1, 0 and -1 raise when
the row holding them is read.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._formulas import RowStats
from mlsql.measures import multilabel as ML
from mlsql.spark import stats as st
from mlsql.spark._build import IntoColumn, run
from mlsql.spark._types import compatible, data_type, to_column
from mlsql.spark._weights import weight as checked_weight

FAMILIES = ("hivemall",)
__all__ = ["fmeasure"]

NAMES = ("actual", "predicted")


def _input_kind(dtype: T.DataType | None) -> str | None:
    if dtype is None:
        return None
    if isinstance(dtype, T.ArrayType):
        return "list"
    if isinstance(dtype, T.IntegralType):
        return "int"
    if isinstance(dtype, T.BooleanType):
        return "bool"
    return dtype.simpleString()


def _kind(types: list[T.DataType | None]) -> str:
    """The input kind (list, int or bool), the same on both sides where the types are known."""
    kinds = [_input_kind(t) for t in types]
    known = [k for k in kinds if k is not None]
    if not known:
        return "list"
    same = all(k == known[0] for k in known) and known[0] in ("list", "int", "bool")
    if same and known[0] == "list" and None not in types:
        same = compatible(types[0].elementType, types[1].elementType)  # type: ignore[union-attr]
    if not same:
        shown = [t.simpleString() if t is not None else "(unknown)" for t in types]
        raise MlsqlError(P.HIVEMALL_TYPE_MESSAGE.format(actual=shown[0], predicted=shown[1]))
    return known[0]


def _binary(labels: Column, kind: str) -> Column:
    """1 for the positive class, 0 for the negative one, NULL stays NULL."""
    if kind == "bool":
        return labels.cast("int")
    bad = F.raise_error(
        F.concat(
            F.lit(P.INT_LABEL_MESSAGE.split("{got}")[0]),
            labels.cast("string"),
            F.lit(P.INT_LABEL_MESSAGE.split("{got}")[1]),
        )
    )
    return (
        F.when(labels.isNull(), F.lit(None))
        .when(labels == 1, 1)
        .when(labels.isin(0, -1), 0)
        .otherwise(bad)
        .cast("int")
    )


def _binary_stats(a: Column, p: Column, average: str) -> RowStats:
    known = a.isNotNull() & p.isNotNull()
    if average == "binary":  # the positive class only
        return RowStats(
            tp=F.when(known, a * p), n_actual=F.when(known, a), n_predicted=F.when(known, p)
        )
    one = F.when(known, F.lit(1))  # one label decision per known row
    return RowStats(tp=F.when(known, (a == p).cast("int")), n_actual=one, n_predicted=one)


def fmeasure(
    actual: IntoColumn,
    predicted: IntoColumn,
    options: str | None = "",
    *,
    sample_weight: IntoColumn | None = None,
) -> Column:
    """Hivemall's fmeasure: micro F-beta over label arrays, or over binary labels.

    Parameters
    ----------
    actual, predicted : str or pyspark.sql.Column
        Label arrays (both of one label type), or binary labels: integers 1,
        0 or -1 (Hivemall's negative), or booleans; both of the same kind.
        Binary labels need Columns of the DataFrame (``df.actual``): their
        type tells mlsql which kind they are; names are read as label arrays.
    options : str, default ''
        Hivemall's option string: ``-beta B`` (default 1) and ``-average
        micro|binary`` (default micro; binary needs binary labels).
    sample_weight : str or pyspark.sql.Column, optional
        A weight per row (finite, >= 0; NULL skips the row): it multiplies the
        row's counts.

    Returns
    -------
    pyspark.sql.Column
        An aggregate (``agg``, ``groupBy().agg``); 0 where F is undefined, as
        Hivemall; NULL over no known rows.

    Notes
    -----
    Unlike Hivemall, labels are sets: a label repeated in an array counts once.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> import mlsql.spark as ms
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame([(1, 1), (0, 1), (-1, -1), (1, 0)], "actual int, predicted int")
    >>> df.agg(ms.fmeasure(df.actual, df.predicted, "-average binary")).first()[0]
    0.5
    >>> tags = spark.createDataFrame(
    ...     [(["cat", "bird"], ["cat"]), (["dog"], ["dog", "fish"])],
    ...     "actual array<string>, predicted array<string>",
    ... )
    >>> tags.agg(ms.fmeasure("actual", "predicted", "-beta 2.")).first()[0]
    0.6666666666666666
    """
    opts = P.parse_hivemall_options(options)
    a, p = (to_column(x, "fmeasure", n) for x, n in zip((actual, predicted), NAMES, strict=True))
    kind = _kind([data_type(a), data_type(p)])
    if kind == "list":
        if opts.average == "binary":
            raise MlsqlError(P.BINARY_ON_ARRAYS_MESSAGE)
        s = st.row_stats(a, p)
    else:
        s = _binary_stats(_binary(a, kind), _binary(p, kind), opts.average)
    weight = (
        None
        if sample_weight is None
        else checked_weight("fmeasure", to_column(sample_weight, "fmeasure", "sample_weight"))
    )

    def f_beta(ops: Any, s: Any) -> Any:  # the counts' sums as they were: fp, fn per row
        return ML.hivemall_f(ops, s.counts, opts.beta, ML.HIVEMALL_ZERO)

    f: Any = run(f_beta, weight, s)
    return f.alias("fmeasure")
