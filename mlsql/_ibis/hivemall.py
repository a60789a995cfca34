"""Hivemall's ``fmeasure`` lowered to ibis: micro F-beta over label lists or binary labels.

The option string (``-beta B -average micro|binary``) is parsed when the plan is built
(:func:`mlsql._params.parse_hivemall_options`, every engine's parser and messages). The
inputs are label lists (the multi-label family's row statistics, shared with it), or
Hivemall's binary labels: integers 1 (positive), 0 or -1 (negative), or booleans, both of
one kind. Under ``-average micro`` a binary row is one label decision (tp = 1 where the two
agree); under ``-average binary`` only the positive class counts. An undefined F is 0, as
in Hivemall; NULL over no known rows; a weight multiplies a row's counts.
"""

from __future__ import annotations

from typing import Any

import ibis
import ibis.expr.types as ir

from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._formulas import RowStats
from mlsql._front.build import checked_params
from mlsql._ibis import backend_name, stats
from mlsql._ibis.ops import FLOAT, Checks, IbisOps, null
from mlsql._weights import weighted
from mlsql.measures import multilabel as ML

#: the label-list statistics (the multi-label family's names: one computation for both)
TP, N_ACTUAL, N_PREDICTED = "__mlsql_tp", "__mlsql_na", "__mlsql_np"
#: Hivemall's undefined F


def _kind(dtype: Any) -> str:
    """``list``, ``int``, ``bool`` or the type's own name (no kind fmeasure takes)."""
    if dtype.is_array():
        return "list"
    if dtype.is_integer():
        return "int"
    if dtype.is_boolean():
        return "bool"
    return str(dtype)


def _binary_names(average: str) -> tuple[str, str, str]:
    """The columns of a binary row's statistics under ``average``."""
    return (f"__mlsql_h{average}_tp", f"__mlsql_h{average}_na", f"__mlsql_h{average}_np")


def _positive(column: ir.Column, checks: Checks) -> ir.FloatingValue:
    """1.0 for the positive class (1 or true), 0.0 for the negative one, NULL stays NULL; an
    integer other than 1, 0 and -1 fails the query with every engine's message."""
    if column.type().is_boolean():
        positive = column
    else:
        bad = column.notnull() & ~column.isin([1, 0, -1])
        checks.add_code(
            bad.ifelse(column, null(column.type())),
            lambda got: P.INT_LABEL_MESSAGE.format(got=int(got)),
        )
        positive = column == 1
    return ibis.cases((positive, 1.0), (~positive, 0.0), else_=null())


def rows(item: EV.Item, cols: dict[str, ir.Column], out: dict[str, Any], checks: Checks) -> None:
    """The row statistics of fmeasure's input kind, after its options and types are checked."""
    options = P.parse_hivemall_options(checked_params(item.measure, item.params)["options"])
    actual, predicted = cols["actual"], cols["predicted"]
    dtypes = [actual.type(), predicted.type()]
    kinds = [_kind(d) for d in dtypes]
    same = kinds[0] == kinds[1] and kinds[0] in ("list", "int", "bool")
    if same and kinds[0] == "list":
        same = stats.kind(dtypes[0].value_type) == stats.kind(dtypes[1].value_type)
    if not same:
        raise MlsqlError(P.HIVEMALL_TYPE_MESSAGE.format(actual=dtypes[0], predicted=dtypes[1]))
    if kinds[0] == "list":
        if options.average == "binary":
            raise MlsqlError(P.BINARY_ON_ARRAYS_MESSAGE)
        if TP not in out:
            s = stats.row_stats(actual, predicted, backend=backend_name(actual))
            out.update({TP: s.tp, N_ACTUAL: s.n_actual, N_PREDICTED: s.n_predicted})
        return
    names = _binary_names(options.average)
    if names[0] in out:
        return
    a, p = _positive(actual, checks), _positive(predicted, checks)
    if options.average == "binary":  # the positive class only
        tp, n_actual, n_predicted = a * p, a + 0 * p, p + 0 * a
    else:  # one label decision per known row
        one = a * 0 + p * 0 + 1.0
        tp, n_actual, n_predicted = (a == p).ifelse(1.0, 0.0) * one, one, one
    out.update(dict(zip(names, (x.cast(FLOAT) for x in (tp, n_actual, n_predicted)), strict=True)))


def value(item: EV.Item, rows: ir.Table, w: ir.FloatingColumn | None, ops: IbisOps) -> Any:
    """Micro F-beta of the pooled row statistics (0 where undefined), weighted by ``w``."""
    options = P.parse_hivemall_options(checked_params(item.measure, item.params)["options"])
    names = _binary_names(options.average)
    if names[0] not in rows.columns:  # label lists
        names = (TP, N_ACTUAL, N_PREDICTED)
    s = RowStats(*(rows[n] for n in names))

    def f_beta(o: Any, s: RowStats) -> Any:
        return ML.hivemall_f(o, s, options.beta, ML.HIVEMALL_ZERO)

    return f_beta(ops, s) if w is None else weighted(f_beta, w, ops, s)
