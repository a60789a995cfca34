"""The few DataFrame operations a report needs, in Polars and in Spark.

The report's questions (:mod:`mlsql.report.engines`,
:mod:`mlsql.report.score_engines`) are asked once for both DataFrame engines,
in terms of these operations; each class here says how its engine does them.
Polars and PySpark are imported when an operation runs, never at import.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from functools import reduce
from types import ModuleType
from typing import Any

from mlsql import _label_types as LT


class PolarsOps:
    """Polars: frames are DataFrames or LazyFrames, expressions ``polars.Expr``."""

    name = "polars"

    def functions(self) -> ModuleType:
        """``mlsql.polars``."""
        return importlib.import_module("mlsql.polars")

    def col(self, name: str) -> Any:
        """The column ``name``."""
        import polars as pl

        return pl.col(name)

    def types(self, frame: Any) -> dict[str, Any]:
        """Each column's type, by name."""
        schema = frame.collect_schema() if hasattr(frame, "collect_schema") else frame.schema
        return dict(schema)

    def is_list(self, dtype: Any) -> bool:
        """Whether a column of ``dtype`` holds lists."""
        import polars as pl

        return isinstance(dtype, (pl.List, pl.Array))

    def as_list(self, name: str, dtype: Any, sep: str | None) -> Any:
        """Column ``name`` (of one label per row) as label lists: split on ``sep`` if it is
        text and ``sep`` is given, else a one-label list (NULL stays NULL)."""
        import polars as pl

        col = pl.col(name)
        if sep is not None and dtype == pl.String:
            parts = col.str.split(sep).list.eval(pl.element().str.strip_chars(LT.SPLIT_STRIPPED))
            return parts.list.filter(pl.element() != "")
        return pl.when(col.is_null()).then(None).otherwise(pl.concat_list(col))

    def first(self, column: Any) -> Any:
        """The first element of each list of ``column`` (NULL for a NULL or empty list)."""
        return column.list.first()

    def with_columns(self, frame: Any, columns: Mapping[str, Any]) -> Any:
        """``frame`` with the named columns added or replaced."""
        return frame.with_columns(e.alias(n) for n, e in columns.items()) if columns else frame

    def select(self, frame: Any, exprs: Sequence[Any]) -> Any:
        """A frame of ``exprs`` (expressions of ``frame``'s columns), one row per row."""
        return frame.select(*exprs)

    def aggregate(self, frame: Any, keys: Sequence[Any], exprs: Sequence[Any]) -> Any:
        """``exprs`` per group of ``keys`` (over the whole frame without keys)."""
        return frame.group_by(*keys).agg(exprs) if keys else frame.select(exprs)

    def drop_nulls(self, frame: Any, names: Sequence[str]) -> Any:
        """``frame`` without the rows where one of the columns ``names`` is NULL."""
        return frame.drop_nulls(list(names))

    def known(self, names: Sequence[str]) -> Any:
        """True where none of the columns ``names`` is NULL."""
        return reduce(lambda x, y: x & y, (self.col(n).is_not_null() for n in names))

    def count_where(self, condition: Any) -> Any:
        """The aggregate number of rows where ``condition`` holds (a 64-bit integer)."""
        import polars as pl

        return condition.sum().cast(pl.Int64)

    def count(self) -> Any:
        """The aggregate number of rows."""
        import polars as pl

        return pl.len()

    def total(self, name: str) -> Any:
        """The aggregate sum of column ``name``."""
        return self.col(name).sum()

    def total_where(self, name: str, condition: Any) -> Any:
        """The aggregate sum of column ``name`` over the rows where ``condition`` holds."""
        return self.col(name).filter(condition).sum()

    def rows(self, frame: Any) -> list[dict[str, Any]]:
        """The rows of ``frame`` as dicts (a LazyFrame runs on the streaming engine)."""
        return collect(frame).to_dicts()


def collect(frame: Any) -> Any:
    """A Polars DataFrame of ``frame``: a LazyFrame runs on the streaming engine."""
    if hasattr(frame, "collect") and not hasattr(frame, "to_dicts"):
        return frame.collect(engine="streaming")
    return frame


class SparkOps:
    """Spark: frames are DataFrames, expressions Columns; names are quoted as names."""

    name = "spark"

    def functions(self) -> ModuleType:
        """``mlsql.spark``."""
        return importlib.import_module("mlsql.spark")

    def col(self, name: str) -> Any:
        """The column ``name``, quoted so dots and backticks are part of the name."""
        from pyspark.sql import functions as F

        return F.col("`" + name.replace("`", "``") + "`")

    def types(self, frame: Any) -> dict[str, Any]:
        """Each column's type, by name."""
        return {f.name: f.dataType for f in frame.schema.fields}

    def is_list(self, dtype: Any) -> bool:
        """Whether a column of ``dtype`` holds arrays."""
        from pyspark.sql.types import ArrayType

        return isinstance(dtype, ArrayType)

    def as_list(self, name: str, dtype: Any, sep: str | None) -> Any:
        """Column ``name`` (of one label per row) as label arrays: split on ``sep`` if it is
        text and ``sep`` is given, else a one-label array (NULL stays NULL)."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType

        col = self.col(name)
        if sep is not None and isinstance(dtype, StringType):
            stripped = F.lit(LT.SPLIT_STRIPPED)
            parts = F.transform(F.split(col, _regex(sep)), lambda x: F.trim(x, stripped))
            return F.filter(parts, lambda x: x != F.lit(""))
        return F.when(col.isNull(), None).otherwise(F.array(col))

    def first(self, column: Any) -> Any:
        """The first element of each array of ``column`` (NULL for a NULL or empty array)."""
        from pyspark.sql import functions as F

        return F.try_element_at(column, F.lit(1))

    def with_columns(self, frame: Any, columns: Mapping[str, Any]) -> Any:
        """``frame`` with the named columns added or replaced."""
        for name, column in columns.items():
            frame = frame.withColumn(name, column)
        return frame

    def select(self, frame: Any, exprs: Sequence[Any]) -> Any:
        """A frame of ``exprs`` (expressions of ``frame``'s columns), one row per row."""
        return frame.select(*exprs)

    def aggregate(self, frame: Any, keys: Sequence[Any], exprs: Sequence[Any]) -> Any:
        """``exprs`` per group of ``keys`` (over the whole frame without keys)."""
        return frame.groupBy(*keys).agg(*exprs) if keys else frame.agg(*exprs)

    def drop_nulls(self, frame: Any, names: Sequence[str]) -> Any:
        """``frame`` without the rows where one of the columns ``names`` is NULL."""
        return frame.dropna(subset=list(names))

    def known(self, names: Sequence[str]) -> Any:
        """True where none of the columns ``names`` is NULL."""
        return reduce(lambda x, y: x & y, (self.col(n).isNotNull() for n in names))

    def count_where(self, condition: Any) -> Any:
        """The aggregate number of rows where ``condition`` holds (NULL over no rows)."""
        from pyspark.sql import functions as F

        return F.sum(condition.cast("bigint"))

    def count(self) -> Any:
        """The aggregate number of rows."""
        from pyspark.sql import functions as F

        return F.count(F.lit(1))

    def total(self, name: str) -> Any:
        """The aggregate sum of column ``name``."""
        from pyspark.sql import functions as F

        return F.sum(self.col(name))

    def total_where(self, name: str, condition: Any) -> Any:
        """The aggregate sum of column ``name`` over the rows where ``condition`` holds."""
        from pyspark.sql import functions as F

        return F.sum(F.when(condition, self.col(name)))

    def rows(self, frame: Any) -> list[dict[str, Any]]:
        """The rows of ``frame`` as dicts."""
        return [r.asDict() for r in frame.collect()]


def _regex(sep: str) -> str:
    """``sep`` as a Java regular expression matching it literally."""
    return "\\Q" + sep.replace("\\E", "\\E\\\\E\\Q") + "\\E"
