"""Per-row statistics from ibis columns, and the type checks of their inputs.

The label-set statistics (|A ∩ P|, |A|, |P| of distinct, non-NULL labels) are
ibis array operations, which ibis writes in each backend's own words
(DuckDB's ``list_intersect``, PostgreSQL's ``ARRAY(SELECT ... INTERSECT ...)``,
BigQuery's ``UNNEST``, ...). A row whose list is NULL has NULL statistics, so
aggregates leave it out as every engine does.
"""

from __future__ import annotations

from collections.abc import Sequence

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir

from mlsql import _label_types as LT
from mlsql._errors import MlsqlError
from mlsql._formulas import RowStats
from mlsql._front.inputs import LABEL_MESSAGE
from mlsql._ibis.ops import FLOAT, null


def kind(dtype: dt.DataType) -> str:
    """The label kind of an ibis type (text, integer, null, or the type's name).

    Examples
    --------
    >>> import ibis.expr.datatypes as dt
    >>> kind(dt.string), kind(dt.int16), kind(dt.float64)
    ('text', 'integer', 'float64')
    """
    if dtype.is_string():
        return LT.TEXT
    if dtype.is_integer():
        return LT.INTEGER
    if dtype.is_null():
        return LT.NULL
    return str(dtype)


def check_label_lists(func: str, names: Sequence[str], dtypes: Sequence[dt.DataType]) -> None:
    """Raise the shared message unless every input is a list of labels, all of one kind.

    Examples
    --------
    >>> import ibis.expr.datatypes as dt
    >>> check_label_lists("micro_f1", ["actual", "predicted"],
    ...                   [dt.Array(dt.string), dt.Array(dt.int64)])
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: micro_f1 needs actual and predicted of the same label type (both text, both integers, ...). Got actual array<string> and predicted array<int64>.
    """
    for name, dtype in zip(names, dtypes, strict=True):
        if not (dtype.is_array() or dtype.is_null()):
            raise MlsqlError(LT.NOT_A_LIST_MESSAGE.format(func=func, name=name, type=dtype))
    kinds = [kind(d.value_type) if d.is_array() else LT.NULL for d in dtypes]
    LT.check_labels(func, names, kinds, [str(d) for d in dtypes])


#: label kinds whose types mix freely (integer widths may differ), as in Polars' guard
MIXING = (LT.TEXT, LT.INTEGER, "float", "decimal")


def scalar_kind(dtype: dt.DataType) -> str:
    """The kind of a single-label input's type: :func:`kind`, with floats and decimals
    (which single labels take, as every engine's) as kinds of their own."""
    if dtype.is_floating():
        return "float"
    if dtype.is_decimal():
        return "decimal"
    return kind(dtype)


def check_single_labels(
    func: str, names: Sequence[str], dtypes: Sequence[dt.DataType]
) -> dt.DataType:
    """Raise the engines' message unless every input holds one label per row, all of one
    kind (a NULL column fits any); return the type both sides are read as.

    Examples
    --------
    >>> import ibis.expr.datatypes as dt
    >>> check_single_labels("accuracy", ["actual", "predicted"], [dt.int8, dt.int64])
    Int64(nullable=True)
    >>> check_single_labels("accuracy", ["actual", "predicted"], [dt.string, dt.int64])
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: accuracy needs actual and predicted of the same label type (both text, both integers, ...). Got actual string and predicted int64.
    """
    for name, dtype in zip(names, dtypes, strict=True):
        if dtype.is_nested():
            raise MlsqlError(LABEL_MESSAGE.format(func=func, name=name, type=dtype))
    kinds = [scalar_kind(d) for d in dtypes]
    plain = [d.copy(nullable=True) for d in dtypes]
    for i in range(len(dtypes)):
        for j in range(i + 1, len(dtypes)):
            a, b = kinds[i], kinds[j]
            if not (LT.NULL in (a, b) or (a == b and a in MIXING) or plain[i] == plain[j]):
                raise MlsqlError(
                    LT.MISMATCH_MESSAGE.format(
                        func=func,
                        left=names[i],
                        right=names[j],
                        left_type=dtypes[i],
                        right_type=dtypes[j],
                    )
                )
    known = [d for d, k in zip(plain, kinds, strict=True) if k != LT.NULL]
    if not known:
        return dt.string
    if any(d.is_signed_integer() for d in known):  # never a signed value as unsigned
        return dt.int64
    return dt.highest_precedence(known)


@ibis.udf.scalar.builtin(name="convert_to")
def _utf8_bytes(text: str, encoding: str) -> dt.binary:  # type: ignore[empty-body]
    """PostgreSQL's ``convert_to(text, encoding)``: the text's bytes, as ``bytea``."""


#: backends that order text by the database's collation, where every engine orders it by its
#: bytes (UTF-8's byte order is the code points' order, the ``C`` collation): a PostgreSQL
#: database is often made with a language's collation (``en_US``: 'apple' < 'Cat' < 'dog';
#: by bytes 'Cat' < 'apple' < 'dog'), which would move the classes of the single-label
#: measures (weighted kappa reads their positions) and pick another top label of a tie
COLLATED = frozenset({"postgres"})


def byte_order(text: ir.Value, backend: str) -> ir.Value:
    """A key that orders ``text`` as every engine does, by its bytes (other types as they
    are): PostgreSQL's UTF-8 bytes (``bytea`` compares byte by byte), elsewhere the text.

    Examples
    --------
    >>> import ibis
    >>> t = ibis.table({"label": "string"}, name="t")
    >>> print(ibis.to_sql(t.order_by(byte_order(t.label, "postgres")), dialect="postgres"))
    SELECT
      *
    FROM "t" AS "t0"
    ORDER BY
      CONVERT_TO("t0"."label", 'UTF8') ASC
    """
    if backend in COLLATED and text.type().is_string():
        return _utf8_bytes(text, "UTF8")
    return text


#: backends for which ibis compiles no array filter: a list's NULLs are removed with
#: ``remove(None)`` (DataFusion's ``array_remove_all(a, NULL)`` removes them; DuckDB's and
#: Snowflake's forms of it do not), and a NULL list is made an empty one first (DataFusion 51's
#: ``array_intersect`` fails on a NULL list: "Incorrect number of arrays provided to
#: RowConverter"; the row is unknown either way). A union by ``concat`` was 40x slower: ibis
#: casts its operands, and DataFusion's ``array_cat`` of casts took 19 CPU s a 100k rows.
WITHOUT_ARRAY_FILTER = frozenset({"datafusion"})


def as_set(labels: ir.ArrayValue, backend: str) -> ir.ArrayValue:
    """The distinct, non-NULL labels of a list."""
    if backend in WITHOUT_ARRAY_FILTER:
        empty = ibis.literal([], type=labels.type())
        return labels.isnull().ifelse(empty, labels).remove(None).unique()
    return labels.filter(lambda x: x.notnull()).unique()


def row_stats(actual: ir.ArrayValue, predicted: ir.ArrayValue, backend: str = "duckdb") -> RowStats:
    """tp = |A ∩ P|, n_actual = |A|, n_predicted = |P| of each row (doubles); NULL where a list
    is. ``backend`` is the name of the backend that runs them (:data:`WITHOUT_ARRAY_FILTER`).

    Examples
    --------
    >>> import ibis
    >>> t = ibis.memtable({"a": [["x", "x", None, "y"], None], "p": [["x", None, "z"], ["y"]]})
    >>> s = row_stats(t.a, t.p)
    >>> t.select(tp=s.tp, n_a=s.n_actual, n_p=s.n_predicted).to_pyarrow().to_pylist()
    [{'tp': 1.0, 'n_a': 2.0, 'n_p': 2.0}, {'tp': None, 'n_a': None, 'n_p': None}]
    """
    a, p = as_set(actual, backend), as_set(predicted, backend)
    unknown = actual.isnull() | predicted.isnull()

    # as doubles (exact below 2**53): a quotient of two is then never an integer division,
    # which ibis' PostgreSQL compiler was seen to write for a bigint over a bigint
    def known(x: ir.IntegerValue) -> ir.FloatingValue:
        return unknown.ifelse(null(), x.cast(FLOAT))

    return RowStats(
        tp=known(a.intersect(p).length()), n_actual=known(a.length()), n_predicted=known(p.length())
    )
