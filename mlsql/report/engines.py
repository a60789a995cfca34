"""What a report asks of each engine, on a frame that engine holds.

A *frame* here has the group columns and two label columns. Each engine
class answers the same questions (the rows it reads and skips, the two label
tables, the single-label measures and the non-zero confusion cells) with its
own functions: DuckDB macros, ``mlsql.polars`` or ``mlsql.spark``. No
measure is computed here; the non-zero confusion cells are a plain count per
(actual, predicted) pair.
"""

from __future__ import annotations

import importlib
import uuid
from collections.abc import Sequence
from typing import Any

from mlsql._errors import MlsqlError
from mlsql._sqlexpr import lit, quote_ident

#: the table functions a report is built from: one row per group, one row per (group, label)
TABLES = ("multilabel_report", "label_metrics")
#: the aggregates a single-label report adds to each group's summary row
SINGLE_MEASURES = ("accuracy", "balanced_accuracy_score", "cohen_kappa_score", "matthews_corrcoef")


def engine_of(data: Any) -> str:
    """``polars``, ``spark`` or ``duckdb`` (every other source DuckDB reads)."""
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
            parts = f"list_transform(string_split({q}, {lit(sep)}), lambda x: trim(x))"
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


class PolarsFrames:
    """Polars: a frame is a DataFrame or LazyFrame; the functions are ``mlsql.polars``."""

    name = "polars"

    def from_source(
        self, data: Any, actual: str, predicted: str, by: Sequence[str], sep: str | None
    ) -> tuple[Any, bool]:
        import polars as pl

        schema = data.collect_schema() if hasattr(data, "collect_schema") else data.schema
        _need(list(schema), [actual, predicted, *by])
        is_list = {c: isinstance(schema[c], (pl.List, pl.Array)) for c in (actual, predicted)}
        exprs = []
        for c in (actual, predicted):
            col = pl.col(c)
            if is_list[c]:
                continue
            if sep is not None and schema[c] == pl.String:
                parts = col.str.split(sep).list.eval(pl.element().str.strip_chars())
                exprs.append(parts.list.filter(pl.element() != "").alias(c))
            else:
                exprs.append(
                    pl.when(col.is_null()).then(None).otherwise(pl.concat_list(col)).alias(c)
                )
        frame = data.select(*by, actual, predicted)
        if exprs:
            frame = frame.with_columns(exprs)
        return frame, not any(is_list.values()) and sep is None

    def row_counts(self, frame: Any, actual: str, predicted: str) -> tuple[int, int]:
        import polars as pl

        counted = frame.select(
            (pl.col(actual).is_null() | pl.col(predicted).is_null()).sum().alias("skipped"),
            pl.len().alias("total"),
        )
        row = _collect(counted).row(0)
        return int(row[0]), int(row[1])

    def known_rows(
        self, frame: Any, known: Sequence[str], by: Sequence[str]
    ) -> list[dict[str, Any]]:
        """Per group (``by``), ``n``: the number of rows with no NULL among ``known``."""
        import polars as pl

        rows = frame.drop_nulls(list(known))
        n = pl.len().cast(pl.Int64).alias("n")
        return _collect(rows.group_by(list(by)).agg(n) if by else rows.select(n)).to_dicts()

    def tables(
        self, frame: Any, actual: str, predicted: str, kwargs: dict[str, Any], wanted: Sequence[str]
    ) -> list[list[dict[str, Any]] | None]:
        mp = importlib.import_module("mlsql.polars")
        return [
            _collect(getattr(mp, name)(frame, actual, predicted, **kwargs)).to_dicts()
            if name in wanted
            else None
            for name in TABLES
        ]

    def single(
        self,
        frame: Any,
        actual: str,
        predicted: str,
        by: Sequence[str],
        sample_weight: str | None = None,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        import polars as pl

        mp = importlib.import_module("mlsql.polars")
        values = frame.with_columns(pl.col(actual).list.first(), pl.col(predicted).list.first())
        weight = {} if sample_weight is None else {"sample_weight": sample_weight}
        exprs = [getattr(mp, m)(actual, predicted, **weight).alias(m) for m in SINGLE_MEASURES]
        measures = values.group_by(list(by)).agg(exprs) if by else values.select(exprs)
        known = [actual, predicted, *([sample_weight] if sample_weight else [])]
        count = pl.len() if sample_weight is None else pl.col(sample_weight).sum()
        cells = (
            values.drop_nulls(known)
            .group_by(*by, pl.col(actual).alias("actual"), pl.col(predicted).alias("predicted"))
            .agg(count.alias("count"))
        )
        return _collect(measures).to_dicts(), _collect(cells).to_dicts()

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
        """Rows of ``mp.bootstrap`` or ``mp.compare`` (``func``) on the frame."""
        import polars as pl

        mp = importlib.import_module("mlsql.polars")
        if single:
            frame = frame.with_columns(pl.col(actual).list.first(), pl.col(predicted).list.first())
        return getattr(mp, func)(frame, actual, predicted, **kwargs).to_dicts()


def _collect(frame: Any) -> Any:
    """A DataFrame of ``frame``: a LazyFrame runs on the streaming engine."""
    if hasattr(frame, "collect") and not hasattr(frame, "to_dicts"):
        return frame.collect(engine="streaming")
    return frame


class SparkFrames:
    """Spark: a frame is a DataFrame on its own session; the functions are ``mlsql.spark``."""

    name = "spark"

    def from_source(
        self, data: Any, actual: str, predicted: str, by: Sequence[str], sep: str | None
    ) -> tuple[Any, bool]:
        from pyspark.sql import functions as F
        from pyspark.sql.types import ArrayType, StringType

        types = {f.name: f.dataType for f in data.schema.fields}
        _need(list(types), [actual, predicted, *by])
        is_list = {c: isinstance(types[c], ArrayType) for c in (actual, predicted)}
        frame = data.select(*by, actual, predicted)
        for c in (actual, predicted):
            if is_list[c]:
                continue
            col = _spark_col(c)
            if sep is not None and isinstance(types[c], StringType):
                parts = F.transform(F.split(col, _regex(sep)), F.trim)
                frame = frame.withColumn(c, F.filter(parts, lambda x: x != F.lit("")))
            else:
                frame = frame.withColumn(c, F.when(col.isNull(), None).otherwise(F.array(col)))
        return frame, not any(is_list.values()) and sep is None

    def row_counts(self, frame: Any, actual: str, predicted: str) -> tuple[int, int]:
        from pyspark.sql import functions as F

        a, p = _spark_col(actual), _spark_col(predicted)
        row = frame.agg(
            F.sum(F.when(a.isNull() | p.isNull(), 1).otherwise(0)).alias("skipped"),
            F.count(F.lit(1)).alias("total"),
        ).collect()[0]
        return int(row["skipped"] or 0), int(row["total"])

    def known_rows(
        self, frame: Any, known: Sequence[str], by: Sequence[str]
    ) -> list[dict[str, Any]]:
        """Per group (``by``), ``n``: the number of rows with no NULL among ``known``."""
        from pyspark.sql import functions as F

        rows = frame.dropna(subset=list(known))
        n = F.count(F.lit(1)).alias("n")
        out = rows.groupBy(*by).agg(n) if by else rows.agg(n)
        return [r.asDict() for r in out.collect()]

    def tables(
        self, frame: Any, actual: str, predicted: str, kwargs: dict[str, Any], wanted: Sequence[str]
    ) -> list[list[dict[str, Any]] | None]:
        ms = importlib.import_module("mlsql.spark")
        return [
            [r.asDict() for r in getattr(ms, name)(frame, actual, predicted, **kwargs).collect()]
            if name in wanted
            else None
            for name in TABLES
        ]

    def single(
        self,
        frame: Any,
        actual: str,
        predicted: str,
        by: Sequence[str],
        sample_weight: str | None = None,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        from pyspark.sql import functions as F

        ms = importlib.import_module("mlsql.spark")
        values = frame.withColumn(
            actual, F.try_element_at(_spark_col(actual), F.lit(1))
        ).withColumn(predicted, F.try_element_at(_spark_col(predicted), F.lit(1)))
        weight = {} if sample_weight is None else {"sample_weight": sample_weight}
        exprs = [getattr(ms, m)(actual, predicted, **weight).alias(m) for m in SINGLE_MEASURES]
        measures = values.groupBy(*by).agg(*exprs) if by else values.agg(*exprs)
        known = [actual, predicted, *([sample_weight] if sample_weight else [])]
        count = F.count(F.lit(1)) if sample_weight is None else F.sum(_spark_col(sample_weight))
        cells = (
            values.dropna(subset=known)
            .groupBy(
                *by, _spark_col(actual).alias("actual"), _spark_col(predicted).alias("predicted")
            )
            .agg(count.alias("count"))
        )
        return [r.asDict() for r in measures.collect()], [r.asDict() for r in cells.collect()]

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
        """Rows of ``ms.bootstrap`` or ``ms.compare`` (``func``) on the frame."""
        from pyspark.sql import functions as F

        ms = importlib.import_module("mlsql.spark")
        if single:
            frame = frame.withColumn(
                actual, F.try_element_at(_spark_col(actual), F.lit(1))
            ).withColumn(predicted, F.try_element_at(_spark_col(predicted), F.lit(1)))
        return [r.asDict() for r in getattr(ms, func)(frame, actual, predicted, **kwargs).collect()]


def _spark_col(name: str) -> Any:
    """A Spark column by name, quoted so dots and backticks are part of the name."""
    from pyspark.sql import functions as F

    return F.col("`" + name.replace("`", "``") + "`")


def _regex(sep: str) -> str:
    """``sep`` as a Java regular expression matching it literally."""
    return "\\Q" + sep.replace("\\E", "\\E\\\\E\\Q") + "\\E"


ENGINES = {"duckdb": DuckDBFrames, "polars": PolarsFrames, "spark": SparkFrames}
