"""What a report asks of each engine, on a frame that engine holds.

A *frame* here has the group columns and two label columns. Each engine
class answers the same questions (the rows it reads and skips, the two label
tables, the single-label measures and the non-zero confusion cells) with its
own functions: DuckDB macros, ``mlsql.polars`` or ``mlsql.spark``. Polars and
Spark ask them in one class, :class:`DataFrames`, through their
:mod:`mlsql.report.frame_ops`. No
measure is computed here; the non-zero confusion cells are a plain count per
(actual, predicted) pair.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from mlsql import _label_types as LT
from mlsql._errors import MlsqlError
from mlsql._sqlexpr import lit, quote_ident
from mlsql.report.frame_ops import PolarsOps, SparkOps

#: the table functions a report is built from: one row per group, one row per (group, label)
TABLES = ("multilabel_report", "label_metrics")
#: the aggregates a single-label report adds to each group's summary row
SINGLE_MEASURES = ("accuracy", "balanced_accuracy_score", "cohen_kappa_score", "matthews_corrcoef")


def engine_of(data: Any) -> str:
    """``polars``, ``spark``, ``ibis`` (a table expression, computed in its own database) or
    ``duckdb`` (every other source DuckDB reads)."""
    from mlsql._ibis import is_table

    if is_table(data):
        return "ibis"
    module = type(data).__module__
    if module.startswith("polars"):
        return "polars"
    if module.startswith("pyspark"):
        return "spark"
    return "duckdb"


class DuckDBFrames:
    """DuckDB: a frame is a relation on ``con`` (mlsql's macros are registered on it)."""

    name = "duckdb"

    def __init__(self, con: Any) -> None:
        self.con = con

    def _view(self, frame: Any) -> str:
        name = f"__mlsql_report_{uuid.uuid4().hex}"
        frame.create_view(name, replace=True)
        return quote_ident(name)

    def _drop(self, view: str) -> None:
        self.con.execute(f"DROP VIEW IF EXISTS {view}")

    def from_source(
        self, data: Any, actual: str, predicted: str, by: Sequence[str], sep: str | None
    ) -> tuple[Any, bool]:
        """The user's source as a relation of lists, and whether labels are one per row."""
        from mlsql._duckdb.label_tables import ensure_macros, source_text

        ensure_macros(self.con, "multilabel_report")
        with source_text(self.con, data, "report") as src:
            clause, params = src.from_clause()
            probe = src.probe(self.con, "report")
            types = dict(zip(probe.columns, (str(t) for t in probe.types), strict=True))
            _need(list(types), [actual, predicted, *by])
            single = not types[actual].endswith("]") and not types[predicted].endswith("]")
            lists = [self._as_list(c, types[c], sep) for c in (actual, predicted)]
            groups = "".join(f"{quote_ident(c)}, " for c in by)
            query = (
                f"SELECT {groups}{lists[0]} AS {quote_ident(actual)}, "
                f"{lists[1]} AS {quote_ident(predicted)} {clause}"
            )
            rel = self.con.sql(query, params=params)
            # an in-memory source's view goes away after this block: keep the rows
            frame = self.con.from_arrow(rel.to_arrow_table()) if src.in_memory else rel
        return frame, single and sep is None

    @staticmethod
    def _as_list(column: str, type_: str, sep: str | None) -> str:
        q = quote_ident(column)
        if type_.endswith("]"):
            return q
        if sep is not None and type_ == "VARCHAR":
            trim = f"trim(x, {lit(LT.SPLIT_STRIPPED)})"
            parts = f"list_transform(string_split({q}, {lit(sep)}), lambda x: {trim})"
            return (
                f"CASE WHEN {q} IS NULL THEN NULL ELSE list_filter({parts}, lambda x: x <> '') END"
            )
        return f"CASE WHEN {q} IS NULL THEN NULL ELSE [{q}] END"

    def row_counts(self, frame: Any, actual: str, predicted: str) -> tuple[int, int]:
        """(rows with a NULL side, all rows)."""
        view = self._view(frame)
        try:
            [(skipped, total)] = self.con.execute(
                f"SELECT count(*) FILTER ({quote_ident(actual)} IS NULL "
                f"OR {quote_ident(predicted)} IS NULL), count(*) FROM {view}"
            ).fetchall()
        finally:
            self._drop(view)
        return int(skipped), int(total)

    def known_rows(
        self, frame: Any, known: Sequence[str], by: Sequence[str]
    ) -> list[dict[str, Any]]:
        """Per group (``by``), ``n``: the number of rows with no NULL among ``known``."""
        view = self._view(frame)
        groups = "".join(f"{quote_ident(c)}, " for c in by)
        where = " AND ".join(f"{quote_ident(c)} IS NOT NULL" for c in known)
        group_by = " GROUP BY ALL" if by else ""
        try:
            return _rows(
                self.con.sql(f"SELECT {groups}count(*) AS n FROM {view} WHERE {where}{group_by}")
            )
        finally:
            self._drop(view)

    def tables(
        self, frame: Any, actual: str, predicted: str, kwargs: dict[str, Any], wanted: Sequence[str]
    ) -> list[list[dict[str, Any]] | None]:
        import mlsql

        out: list[list[dict[str, Any]] | None] = []
        for name in TABLES:
            if name not in wanted:
                out.append(None)
                continue
            rel = getattr(mlsql, name)(self.con, frame, actual, predicted, **kwargs)
            out.append([dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()])
        return out

    def single(
        self,
        frame: Any,
        actual: str,
        predicted: str,
        by: Sequence[str],
        sample_weight: str | None = None,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Per group the single-label measures; the non-zero (actual, predicted) counts
        (with ``sample_weight``: the weighted measures, and the cells' total weights)."""
        view = self._view(frame)
        a, p = f"{quote_ident(actual)}[1]", f"{quote_ident(predicted)}[1]"
        groups = "".join(f"{quote_ident(c)}, " for c in by)
        group_by = " GROUP BY ALL" if by else ""
        w = None if sample_weight is None else quote_ident(sample_weight)
        weight = "" if w is None else f", sample_weight := {w}"
        calls = ", ".join(f"{m}({a}, {p}{weight}) AS {m}" for m in SINGLE_MEASURES)
        count, known = ("count(*)", "") if w is None else (f"sum({w})", f" AND {w} IS NOT NULL")
        try:
            measures = self.con.sql(f"SELECT {groups}{calls} FROM {view}{group_by}")
            cells = self.con.sql(
                f"SELECT {groups}{a} AS actual, {p} AS predicted, {count} AS count FROM {view} "
                f"WHERE {a} IS NOT NULL AND {p} IS NOT NULL{known} GROUP BY ALL"
            )
            return _rows(measures), _rows(cells)
        finally:
            self._drop(view)

    def resample(
        self,
        func: str,
        frame: Any,
        actual: str,
        predicted: str,
        *,
        single: bool,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """Rows of ``mlsql.bootstrap`` or ``mlsql.compare`` (``func``) on the frame.

        ``single``: the label lists hold one label each; the measures get the label itself.
        """
        import mlsql

        view = self._view(frame)
        try:
            source = f"SELECT * FROM {view}"
            if single:
                a, p = quote_ident(actual), quote_ident(predicted)
                source = f"SELECT * REPLACE ({a}[1] AS {a}, {p}[1] AS {p}) FROM {view}"
            rel = getattr(mlsql, func)(
                self.con.sql(source), actual, predicted, con=self.con, **kwargs
            )
            return _rows(rel)
        finally:
            self._drop(view)


def _rows(rel: Any) -> list[dict[str, Any]]:
    return [dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()]


def _need(columns: Sequence[str], wanted: Sequence[str]) -> None:
    for column in wanted:
        if column not in columns:
            raise MlsqlError(
                f"report: no column {column!r}; the source has {', '.join(map(repr, columns))}"
            )


class DataFrames:
    """A DataFrame engine (Polars or Spark): the questions asked once, in terms of ``ops``
    (:mod:`mlsql.report.frame_ops`); the measures are those of ``ops.functions()``."""

    name: str
    ops: PolarsOps | SparkOps

    def from_source(
        self, data: Any, actual: str, predicted: str, by: Sequence[str], sep: str | None
    ) -> tuple[Any, bool]:
        """The user's source as a frame of lists, and whether labels are one per row."""
        types = self.ops.types(data)
        _need(list(types), [actual, predicted, *by])
        is_list = {c: self.ops.is_list(types[c]) for c in (actual, predicted)}
        lists = {
            c: self.ops.as_list(c, types[c], sep) for c in (actual, predicted) if not is_list[c]
        }
        frame = self.ops.with_columns(data.select(*by, actual, predicted), lists)
        return frame, not any(is_list.values()) and sep is None

    def row_counts(self, frame: Any, actual: str, predicted: str) -> tuple[int, int]:
        """(rows with a NULL side, all rows)."""
        unknown = ~self.ops.known([actual, predicted])
        counted = [
            self.ops.count_where(unknown).alias("skipped"),
            self.ops.count().alias("total"),
        ]
        [row] = self.ops.rows(self.ops.aggregate(frame, [], counted))
        return int(row["skipped"] or 0), int(row["total"])

    def known_rows(
        self, frame: Any, known: Sequence[str], by: Sequence[str]
    ) -> list[dict[str, Any]]:
        """Per group (``by``), ``n``: the number of rows with no NULL among ``known``."""
        ops = self.ops
        counted = ops.aggregate(ops.drop_nulls(frame, known), by, [ops.count().alias("n")])
        return [{**row, "n": int(row["n"])} for row in ops.rows(counted)]

    def tables(
        self, frame: Any, actual: str, predicted: str, kwargs: dict[str, Any], wanted: Sequence[str]
    ) -> list[list[dict[str, Any]] | None]:
        fn = self.ops.functions()
        return [
            self.ops.rows(getattr(fn, name)(frame, actual, predicted, **kwargs))
            if name in wanted
            else None
            for name in TABLES
        ]

    def _first_labels(self, frame: Any, actual: str, predicted: str) -> Any:
        """``frame`` with each label list replaced by its label (single-label data)."""
        ops = self.ops
        return ops.with_columns(frame, {c: ops.first(ops.col(c)) for c in (actual, predicted)})

    def single(
        self,
        frame: Any,
        actual: str,
        predicted: str,
        by: Sequence[str],
        sample_weight: str | None = None,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Per group the single-label measures; the non-zero (actual, predicted) counts
        (with ``sample_weight``: the weighted measures, and the cells' total weights)."""
        ops = self.ops
        values = self._first_labels(frame, actual, predicted)
        known = [actual, predicted, *([sample_weight] if sample_weight else [])]
        count = ops.count() if sample_weight is None else ops.total(sample_weight)
        cells = ops.aggregate(
            ops.drop_nulls(values, known),
            [*by, ops.col(actual).alias("actual"), ops.col(predicted).alias("predicted")],
            [count.alias("count")],
        )
        return self._measures(values, actual, predicted, by, sample_weight), ops.rows(cells)

    def _measures(
        self,
        values: Any,
        actual: str,
        predicted: str,
        by: Sequence[str],
        sample_weight: str | None,
    ) -> list[dict[str, Any]]:
        """Per group the single-label measures, from the engine's ``evaluate``: counts per
        (group, actual, predicted) cell, then the formulas, so memory grows with the groups'
        cells, never their rows (Spark's class-wise Columns collect a group's rows).

        The group columns are renamed for the call, so a group column may be named as one of
        ``evaluate``'s own columns (``measure``, ``estimate``)."""
        ops = self.ops
        keys = {f"__mlsql_by{k}": b for k, b in enumerate(by)}
        kept = [actual, predicted, *([sample_weight] if sample_weight else [])]
        columns = [*(ops.col(b).alias(k) for k, b in keys.items()), *map(ops.col, kept)]
        renamed = ops.select(values, columns)
        long = ops.functions().evaluate(
            renamed,
            actual,
            predicted,
            list(SINGLE_MEASURES),
            by=list(keys) or None,
            sample_weight=sample_weight,
        )
        found: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in ops.rows(long):
            group = tuple(row[k] for k in keys)
            entry = found.setdefault(group, {b: row[k] for k, b in keys.items()})
            entry[row["measure"]] = row["estimate"]
        return list(found.values())

    def resample(
        self,
        func: str,
        frame: Any,
        actual: str,
        predicted: str,
        *,
        single: bool,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """Rows of the engine's ``bootstrap`` or ``compare`` (``func``) on the frame.

        ``single``: the label lists hold one label each; the measures get the label itself.
        """
        if single:
            frame = self._first_labels(frame, actual, predicted)
        fn = self.ops.functions()
        return self.ops.rows(getattr(fn, func)(frame, actual, predicted, **kwargs))


class PolarsFrames(DataFrames):
    """Polars: a frame is a DataFrame or LazyFrame; the functions are ``mlsql.polars``."""

    name = "polars"
    ops = PolarsOps()


class SparkFrames(DataFrames):
    """Spark: a frame is a DataFrame on its own session; the functions are ``mlsql.spark``."""

    name = "spark"
    ops = SparkOps()


ENGINES = {"duckdb": DuckDBFrames, "polars": PolarsFrames, "spark": SparkFrames}
