"""Per-label tables from Python: ``label_metrics`` and ``multilabel_report`` over any source.

Both run the SQL table macros of the same names on a DuckDB connection and
return a :class:`duckdb.DuckDBPyRelation` (``.arrow()``, ``.pl()``, ``.df()``).
The source may be a table or view name, a query, a Parquet (or CSV, JSON)
path, a DuckDB relation, or a DataFrame (Arrow, Polars or pandas).

Every name the caller gives (source, columns, ``by``) reaches SQL as a
parameter value, never spliced into the text; the schema is checked here
first, so a missing column or a type mismatch is an :class:`~mlsql.MlsqlError`
that names what was wrong.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import duckdb

from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._duckdb.library import INTEGER_TYPES, integer_bounds
from mlsql._duckdb.source_sql import looks_like_query, quoted_name_sql
from mlsql._duckdb.threads import in_this_thread
from mlsql._errors import MlsqlError
from mlsql._front.tables import missing_column_message
from mlsql._sqlexpr import quote_ident
from mlsql.measures import label_based as LB

_INTEGER_TYPES = set(INTEGER_TYPES)
_TEXT_TYPES = {"VARCHAR"}


def label_metrics(
    con: duckdb.DuckDBPyConnection,
    source: Any,
    actual: str,
    predicted: str,
    *,
    labels: Sequence[Any] | None = None,
    beta: float | None = None,
    zero_division: Any = 0,
    by: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> duckdb.DuckDBPyRelation:
    """One row per (group, label): counts and ratios of each label.

    Parameters
    ----------
    con : duckdb.DuckDBPyConnection
        A connection; mlsql's macros are registered on it (as temporary
        macros) if they are missing.
    source : str, os.PathLike, DuckDBPyRelation or DataFrame
        A table or view name, a query (``"SELECT ..."``), a Parquet, CSV or
        JSON path, a relation, or an Arrow table, Polars or pandas DataFrame.
    actual, predicted : str
        The columns holding the true and the predicted label lists.
    labels : sequence, optional
        The label universe. Labels in it that never occur get a row with
        tp = fp = fn = 0; labels outside it are ignored (as scikit-learn's
        ``labels=``). Default: every label seen in the group.
    beta : float, optional
        Adds an ``fbeta`` column with F-beta for this beta.
    zero_division : {0, 1, nan, 'diagnose', 'ignore'}, default 0
        Value of an undefined ratio (DESIGN.md section 1.8).
    by : str or sequence of str, optional
        Grouping columns; each group gets its own rows (and universe).
    sample_weight : str, optional
        A column of row weights (finite, >= 0; NULL: the row is unknown): every
        count is a sum of the rows' weights.

    Returns
    -------
    duckdb.DuckDBPyRelation
        Columns: the ``by`` columns, label, tp, fp, fn, tn, support,
        precision, recall, f1, [fbeta,] jaccard, accuracy ((tp + tn) / rows),
        ordered by group and label.

    Raises
    ------
    MlsqlError
        On a missing column, columns of different label types, or an invalid
        parameter.

    Examples
    --------
    >>> import mlsql, pyarrow as pa
    >>> con = mlsql.connect()
    >>> preds = pa.table({"actual": [["cat", "bird"], ["dog"]], "predicted": [["cat"], ["dog", "cat"]]})
    >>> mlsql.label_metrics(con, preds, "actual", "predicted").select("label, tp, fp, fn, tn").fetchall()
    [('bird', 0, 0, 1, 1), ('cat', 1, 1, 0, 0), ('dog', 1, 0, 0, 1)]
    """
    return _run(
        con,
        "label_metrics",
        source,
        actual,
        predicted,
        labels,
        beta,
        zero_division,
        by,
        sample_weight,
    )


def multilabel_report(
    con: duckdb.DuckDBPyConnection,
    source: Any,
    actual: str,
    predicted: str,
    *,
    labels: Sequence[Any] | None = None,
    beta: float | None = None,
    zero_division: Any = 0,
    by: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> duckdb.DuckDBPyRelation:
    """One row per group with every multi-label average, loss and label-problem rate.

    Parameters are those of :func:`label_metrics`.

    Returns
    -------
    duckdb.DuckDBPyRelation
        Columns: the ``by`` columns, n_rows, n_labels, micro_precision,
        micro_recall, micro_f1, micro_jaccard, macro_precision, macro_recall,
        macro_f1, macro_f1_of_means, macro_jaccard, weighted_precision,
        weighted_recall, weighted_f1, weighted_jaccard, samples_precision,
        samples_recall, samples_f1, samples_jaccard, hamming_loss,
        subset_accuracy, zero_one_loss, label_accuracy_micro,
        label_accuracy_macro, clp, mlp, wlp. With ``beta`` the F columns are
        F-beta and named ``*_fbeta`` (``macro_fbeta_of_means`` ...).

    Notes
    -----
    macro = unweighted mean over the label universe; weighted = mean weighted
    by support (tp + fn); macro_f1_of_means = F1 of macro precision and macro
    recall; samples = mean over rows; micro = pooled counts.
    label_accuracy_micro = 1 - hamming_loss; label_accuracy_macro = mean over
    labels of (tp + tn) / rows; clp, mlp, wlp = share of labels never
    predicted negative (tn + fn = 0), never predicted (tp + fp = 0), never
    predicted right (tp = 0). Given ``labels``, each row's sets are first
    intersected with it, so every column sees only those labels. A group
    whose rows are all unknown (NULL lists) has n_rows = 0 and NULL measures.

    Examples
    --------
    >>> import mlsql, pyarrow as pa
    >>> con = mlsql.connect()
    >>> preds = pa.table({"actual": [["cat", "bird"], ["dog"]], "predicted": [["cat"], ["dog", "cat"]]})
    >>> report = mlsql.multilabel_report(con, preds, "actual", "predicted")
    >>> report.select("n_rows, n_labels, macro_recall, wlp").fetchall()
    [(2, 3, 0.6666666666666666, 0.3333333333333333)]
    """
    return _run(
        con,
        "multilabel_report",
        source,
        actual,
        predicted,
        labels,
        beta,
        zero_division,
        by,
        sample_weight,
    )


# ------------------------------------------------------------------ helpers
def _zero_division(value: Any, func: str) -> Any:
    zd = P.check_zero_division(value, func)
    if zd.kind == "value":
        return int(zd.value)
    return zd.kind  # 'nan', 'diagnose', 'ignore'


def _by_list(by: str | Sequence[str] | None, func: str) -> list[str] | None:
    return P.check_by(by, func) or None


def _labels_list(labels: Sequence[Any] | None, func: str) -> list[Any] | None:
    return LT.check_universe(labels, func)


def _kind(duck_type: Any) -> tuple[str, str] | None:
    """(element kind, element type) of a list column type; None if not a list."""
    text = str(duck_type)
    match = re.fullmatch(r"(.*)\[\d*\]", text)
    if not match:
        return None
    element = match.group(1)
    if element in _INTEGER_TYPES:
        return "integer", element
    if element in _TEXT_TYPES or element.startswith("ENUM("):
        return "text", element
    return element, element


def _common_element(con: duckdb.DuckDBPyConnection, elements: list[str]) -> str:
    """The type DuckDB gives both label lists' elements (as the macros' ``CASE`` does)."""
    known = [e for e in elements if e in INTEGER_TYPES]
    if len(known) < 2:
        return known[0]
    sql = f"SELECT typeof(CASE WHEN false THEN NULL::{known[1]} ELSE NULL::{known[0]} END)"
    return str(con.execute(sql).fetchall()[0][0])


def _is_path(source: str) -> bool:
    return os.path.exists(source) or bool(
        re.search(r"\.(parquet|csv|tsv|json|ndjson|jsonl)(\.gz|\.zst)?$", source, re.I)
    )


def _is_relation_name(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether ``name``, taken whole as one identifier, is a table or view ``con`` can read."""
    try:
        con.execute(f"SELECT * FROM {quote_ident(name)} LIMIT 0")
    except duckdb.Error:
        return False
    return True


def ensure_macros(con: duckdb.DuckDBPyConnection, func: str) -> None:
    """Register mlsql's macros on ``con`` (temporary) unless ``func`` is already there."""
    found = con.execute(
        "SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", [func]
    ).fetchall()[0][0]
    if not found:
        from mlsql._duckdb.register import register

        register(con)


@contextmanager
def source_text(con: duckdb.DuckDBPyConnection, source: Any, func: str) -> Iterator[Source]:
    """``source`` as SQL text the table macros read (a name, path or query).

    In-memory sources (relations, DataFrames) become a temporary view for the
    duration of the block; ``Source.in_memory`` says so (run the query inside).
    """
    view = None
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if not isinstance(source, str):
        view = f"__mlsql_source_{uuid.uuid4().hex}"
        if isinstance(source, duckdb.DuckDBPyRelation):
            source.create_view(view, replace=True)
        else:
            try:
                con.register(view, source)
            except Exception as exc:
                raise MlsqlError(
                    f"{func} reads a table name, a query, a file path, a DuckDB relation or a "
                    f"DataFrame (Arrow, Polars, pandas). Got {type(source).__name__}."
                ) from exc
        text = view
    elif source and _is_relation_name(con, source):
        text = f"FROM {quote_ident(source)}"  # a table or view named exactly so wins
    else:
        text = source  # a query, a path, or a qualified name (mlsql._duckdb.source_sql's rules)
    try:
        yield Source(text, view is not None)
    finally:
        if view is not None:
            con.execute(f"DROP VIEW IF EXISTS {quote_ident(view)}")


@dataclass(frozen=True)
class Source:
    """A source as SQL text: ``text`` is a query, or a name or path for ``query_table``."""

    text: str
    in_memory: bool

    @property
    def is_query(self) -> bool:
        return looks_like_query(self.text)

    def from_clause(self) -> tuple[str, list[Any]]:
        """``FROM ...`` SQL reading the source, and its parameters."""
        if self.is_query:
            return f"FROM ({self.text})", []
        quoted = quoted_name_sql(self.text)
        if quoted is not None:
            return quoted, []
        return "FROM query_table(?)", [self.text]

    def probe(self, con: duckdb.DuckDBPyConnection, func: str) -> duckdb.DuckDBPyRelation:
        """The source's columns and types (no rows read)."""
        clause, params = self.from_clause()
        try:
            return con.sql(f"SELECT * {clause} LIMIT 0", params=params)
        except duckdb.Error as exc:
            what = "query" if self.is_query else "file" if _is_path(self.text) else "table or view"
            raise MlsqlError(f"{func} cannot read the {what} {self.text!r}: {exc}") from exc


def finish(
    con: duckdb.DuckDBPyConnection, relation: duckdb.DuckDBPyRelation, source: Source
) -> duckdb.DuckDBPyRelation:
    """``relation`` as is, or run now for an in-memory source (its view goes away after)."""
    return con.from_arrow(relation.to_arrow_table()) if source.in_memory else relation


def _run(
    con: duckdb.DuckDBPyConnection,
    func: str,
    source: Any,
    actual: str,
    predicted: str,
    labels: Sequence[Any] | None,
    beta: float | None,
    zero_division: Any,
    by: str | Sequence[str] | None,
    sample_weight: str | None = None,
) -> duckdb.DuckDBPyRelation:
    zd = _zero_division(zero_division, func)
    beta_value = P.check(P.TABLE_BETA, beta, func)
    by_names = _by_list(by, func)
    universe = _labels_list(labels, func)
    named = [("actual", actual), ("predicted", predicted)]
    if sample_weight is not None:
        named.append(("sample_weight", sample_weight))
    for role, name in named:
        if not isinstance(name, str) or not name:
            raise MlsqlError(
                f"The '{role}' parameter of {func} must be a column name. Got {name!r}."
            )
    con = in_this_thread(con)
    ensure_macros(con, func)
    with source_text(con, source, func) as src:
        _check_schema(con, func, src, actual, predicted, by_names, universe, sample_weight)
        weight = "" if sample_weight is None else ", sample_weight := ?"
        call = (
            f"SELECT * FROM {func}(?, ?, ?, labels := ?, beta := ?, zero_division := ?, "
            f"by := ?{weight})"
        )
        params = [src.text, actual, predicted, universe, beta_value, zd, by_names]
        params += [] if sample_weight is None else [sample_weight]
        return finish(con, con.sql(call, params=params), src)


def _check_schema(
    con: duckdb.DuckDBPyConnection,
    func: str,
    source: Source,
    actual: str,
    predicted: str,
    by: list[str] | None,
    universe: list[Any] | None,
    sample_weight: str | None = None,
) -> None:
    probe = source.probe(con, func)
    types = {name.lower(): t for name, t in zip(probe.columns, probe.types, strict=True)}
    for role, name in (
        ("actual", actual),
        ("predicted", predicted),
        *(("by", b) for b in by or []),
        *((("sample_weight", sample_weight),) if sample_weight is not None else ()),
    ):
        if name.lower() not in types:
            raise MlsqlError(missing_column_message(func, role, name, probe.columns))
    for role, name in (("actual", actual), ("predicted", predicted)):
        if _kind(types[name.lower()]) is None:
            raise MlsqlError(
                LT.NOT_A_LIST_MESSAGE.format(func=func, name=role, type=types[name.lower()])
            )
    kinds = [_kind(types[name.lower()])[0] for name in (actual, predicted)]  # type: ignore[index]
    shown = [str(types[name.lower()]) for name in (actual, predicted)]
    LT.check_labels(func, ("actual", "predicted"), kinds, shown)
    side = 0 if kinds[0] != LT.NULL else 1
    LT.check_universe_kind(universe, kinds[side], shown[side], func)
    if universe is not None and kinds[side] == LT.INTEGER:
        common = _common_element(con, [_kind(types[n.lower()])[1] for n in (actual, predicted)])  # type: ignore[index]
        LT.check_universe_range(universe, integer_bounds(common), f"{common}[]", func)
    outputs = LB.LABEL_COLUMNS if func == "label_metrics" else LB.REPORT_COLUMNS
    for name in by or []:
        if name.lower() in outputs:
            raise MlsqlError(P.BY_OUTPUT_MESSAGE.format(func=func, name=name))
