"""What a score report asks of each engine: label lists against label scores.

A *frame* here has the group columns, a label-list column and a score column
(a map label -> score or a list of {label, score} structs). Each engine class
answers the same questions with its own functions (DuckDB macros,
``mlsql.polars``, ``mlsql.spark``; Polars and Spark share
:class:`DataFrameScores`, over their :mod:`mlsql.report.frame_ops`): the averaged ``multilabel_average_precision``
and ``multilabel_roc_auc`` per group, ``label_thresholds``, and, over the
*cells* (one row per scored (row, label): its group, whether the label is
true, its score), the score range, ``calibration_table`` and the micro
``precision_recall_curve``; per label, ``precision_recall_curve`` on the frame.
No measure is computed here: the cells are a reshaping (an unnest) of the rows.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from mlsql._sqlexpr import lit, quote_ident
from mlsql.report.frame_ops import PolarsOps, SparkOps, collect

#: the averages of the score report, in display order
SCORE_AVERAGES = ("micro", "macro", "weighted", "samples")
#: the aggregates, by the name of their summary columns (``{average}_{name}``)
SCORE_MEASURES = {
    "average_precision": "multilabel_average_precision",
    "roc_auc": "multilabel_roc_auc",
}
#: a micro curve keeps at most about this many points per group (the first and the last
#: always, every k-th between): millions of distinct scores would otherwise come back as
#: millions of Python rows, for a chart that draws a few hundred
CURVE_ROWS = 2000

#: the cells' columns: a scored (row, label), whether the label is true, its score, and
#: (weighted reports) its row's weight
LABEL, TRUE, SCORE, WEIGHT = "__mlsql_label", "__mlsql_true", "__mlsql_score", "__mlsql_weight"


def summary_columns() -> list[tuple[str, str, str]]:
    """(summary column, aggregate, average) of every averaged score measure."""
    return [
        (f"{average}_{name}", func, average)
        for name, func in SCORE_MEASURES.items()
        for average in SCORE_AVERAGES
    ]


class DuckDBScores:
    """DuckDB: a frame is a relation on ``con`` (mlsql's macros are registered on it)."""

    name = "duckdb"

    def __init__(self, con: Any) -> None:
        self.con = con
        self._views: list[str] = []

    def _view(self, relation: Any) -> str:
        name = f"__mlsql_scores_{uuid.uuid4().hex}"
        relation.create_view(name, replace=True)
        self._views.append(name)
        return name

    def close(self) -> None:
        """Drop the views this object made."""
        for name in self._views:
            self.con.execute(f"DROP VIEW IF EXISTS {quote_ident(name)}")
        self._views.clear()

    def _rows(self, query: str) -> list[dict[str, Any]]:
        rel = self.con.sql(query)
        return [dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()]

    @staticmethod
    def _by(by: Sequence[str]) -> str:
        return f', "by" := [{", ".join(str(lit(c)) for c in by)}]' if by else ""

    @staticmethod
    def _weight(weight: str | None) -> str:
        """The table functions' ``sample_weight`` argument (a column name), if weighted."""
        return "" if weight is None else f", sample_weight := {lit(weight)}"

    def summary(
        self,
        frame: Any,
        actual: str,
        scores: str,
        by: Sequence[str],
        zero_division: Any,
        weight: str | None = None,
    ) -> list[dict[str, Any]]:
        view = quote_ident(self._view(frame))
        a, s = quote_ident(actual), quote_ident(scores)
        w = None if weight is None else quote_ident(weight)
        groups = "".join(f"{quote_ident(c)}, " for c in by)
        zd = lit(zero_division)
        weighted = "" if w is None else f", sample_weight := {w}"
        calls = ", ".join(
            f"{func}({a}, {s}, average := {lit(avg)}, zero_division := {zd}{weighted}) "
            f"AS {quote_ident(col)}"
            for col, func, avg in summary_columns()
        )
        known = f"{a} IS NOT NULL AND {s} IS NOT NULL" + (
            "" if w is None else f" AND {w} IS NOT NULL"
        )
        counts = f"count(*) FILTER ({known}) AS n_rows"
        if w is not None:
            counts += f", sum({w}) FILTER ({known}) AS total_weight"
        group_by = " GROUP BY ALL" if by else ""
        return self._rows(f"SELECT {groups}{counts}, {calls} FROM {view}{group_by}")

    def thresholds(
        self,
        frame: Any,
        actual: str,
        scores: str,
        by: Sequence[str],
        beta: float,
        zero_division: Any,
        weight: str | None = None,
    ) -> list[dict[str, Any]]:
        view = self._view(frame)
        return self._rows(
            f"SELECT * FROM label_thresholds({lit(view)}, {lit(actual)}, {lit(scores)}, "
            f"beta := {lit(float(beta))}, zero_division := {lit(zero_division)}"
            f"{self._weight(weight)}{self._by(by)})"
        )

    def cells(
        self, frame: Any, actual: str, scores: str, by: Sequence[str], weight: str | None = None
    ) -> Any:
        view = quote_ident(self._view(frame))
        a, s = quote_ident(actual), quote_ident(scores)
        w = "" if weight is None else f"{quote_ident(weight)} AS {WEIGHT}, "
        known = "" if weight is None else f" AND {quote_ident(weight)} IS NOT NULL"
        kind = dict(zip(frame.columns, frame.types, strict=True))[scores]
        entries = (
            f"list_transform(map_entries({s}), lambda x: {{'label': x.key, 'score': x.value}})"
            if kind.id == "map"
            else s
        )
        groups = "".join(f"{quote_ident(c)}, " for c in by)
        e = "__mlsql_e"
        kept = f"{WEIGHT}, " if weight is not None else ""
        return self.con.sql(
            f"SELECT {groups}{kept}{e}.label AS {LABEL}, "
            f"list_contains(__mlsql_a, {e}.label) AS {TRUE}, "
            f"CAST({e}.score AS DOUBLE) AS {SCORE} FROM (SELECT {groups}{w}{a} AS __mlsql_a, "
            f"unnest({entries}) AS {e} FROM {view} WHERE {a} IS NOT NULL AND {s} IS NOT NULL"
            f"{known}) WHERE {e}.label IS NOT NULL AND {e}.score IS NOT NULL"
        )

    def score_range(self, cells: Any) -> tuple[Any, Any]:
        view = quote_ident(self._view(cells))
        [row] = self._rows(f"SELECT min({SCORE}) AS low, max({SCORE}) AS high FROM {view}")
        return row["low"], row["high"]

    def calibration(
        self, cells: Any, by: Sequence[str], n_bins: int, weighted: bool = False
    ) -> list[dict[str, Any]]:
        view = self._view(cells)
        return self._rows(
            f"SELECT * FROM calibration_table({lit(view)}, {lit(TRUE)}, {lit(SCORE)}, "
            f"n_bins := {lit(n_bins)}{self._weight(WEIGHT if weighted else None)}{self._by(by)})"
        )

    def label_curves(
        self, frame: Any, actual: str, scores: str, by: Sequence[str], weight: str | None = None
    ) -> list[dict[str, Any]]:
        view = self._view(frame)
        return self._rows(
            f"SELECT * FROM precision_recall_curve({lit(view)}, {lit(actual)}, {lit(scores)}"
            f"{self._weight(weight)}{self._by(by)})"
        )

    def scored_positives(
        self, cells: Any, by: Sequence[str], weighted: bool = False
    ) -> list[dict[str, Any]]:
        """Per group, the scored cells' positives (weighted): ``positives``."""
        view = quote_ident(self._view(cells))
        groups = ", ".join(quote_ident(c) for c in by)
        w = WEIGHT if weighted else "1"
        return self._rows(
            f"SELECT {groups}{', ' if by else ''}"
            f"sum(CASE WHEN {TRUE} THEN {w} ELSE 0 END) AS positives FROM {view}"
            + (f" GROUP BY {groups}" if by else "")
        )

    def micro_curve(
        self, cells: Any, by: Sequence[str], weighted: bool = False
    ) -> list[dict[str, Any]]:
        view = self._view(cells)
        groups = ", ".join(quote_ident(c) for c in by)
        part = f"PARTITION BY {groups} " if by else ""
        curve = (
            f"SELECT *, row_number() OVER ({part}ORDER BY threshold DESC) - 1 AS __mlsql_n, "
            f"count(*) OVER ({part.strip()}) AS __mlsql_m "
            f"FROM precision_recall_curve({lit(view)}, {lit(TRUE)}, {lit(SCORE)}"
            f"{self._weight(WEIGHT if weighted else None)}{self._by(by)})"
        )
        step = f"((__mlsql_m + {CURVE_ROWS - 1}) // {CURVE_ROWS})"
        return self._rows(
            f"SELECT * EXCLUDE (__mlsql_n, __mlsql_m) FROM ({curve}) "
            f"WHERE __mlsql_n % {step} = 0 OR __mlsql_n = __mlsql_m - 1 "
            f"ORDER BY {groups}{', ' if by else ''}threshold DESC"
        )


class DataFrameScores:
    """A DataFrame engine (Polars or Spark): the questions both ask alike, in terms of
    ``ops`` (:mod:`mlsql.report.frame_ops`); the measures are those of ``ops.functions()``."""

    name: str
    ops: PolarsOps | SparkOps

    def __init__(self) -> None:
        self.fn = self.ops.functions()

    def close(self) -> None:
        """Nothing to release."""

    def summary(
        self,
        frame: Any,
        actual: str,
        scores: str,
        by: Sequence[str],
        zero_division: Any,
        weight: str | None = None,
    ) -> list[dict[str, Any]]:
        known = self.ops.known([actual, scores, *([weight] if weight else [])])
        weighted = {} if weight is None else {"sample_weight": weight}
        counts = [self.ops.count_where(known).alias("n_rows")]
        if weight is not None:
            counts.append(self.ops.total_where(weight, known).alias("total_weight"))
        exprs = counts + [
            getattr(self.fn, func)(
                actual, scores, average=avg, zero_division=zero_division, **weighted
            ).alias(col)
            for col, func, avg in summary_columns()
        ]
        return self.ops.rows(self.ops.aggregate(frame, by, exprs))

    def thresholds(
        self,
        frame: Any,
        actual: str,
        scores: str,
        by: Sequence[str],
        beta: float,
        zero_division: Any,
        weight: str | None = None,
    ) -> list[dict[str, Any]]:
        out = self.fn.label_thresholds(
            frame,
            actual,
            scores,
            beta=beta,
            zero_division=zero_division,
            by=list(by) or None,
            sample_weight=weight,
        )
        return self.ops.rows(out)

    def calibration(
        self, cells: Any, by: Sequence[str], n_bins: int, weighted: bool = False
    ) -> list[dict[str, Any]]:
        out = self.fn.calibration_table(
            cells,
            TRUE,
            SCORE,
            n_bins=n_bins,
            by=list(by) or None,
            sample_weight=WEIGHT if weighted else None,
        )
        return self.ops.rows(out)

    def label_curves(
        self, frame: Any, actual: str, scores: str, by: Sequence[str], weight: str | None = None
    ) -> list[dict[str, Any]]:
        out = self.fn.precision_recall_curve(
            frame, actual, scores, by=list(by) or None, sample_weight=weight
        )
        return self.ops.rows(out)

    def micro_curve(
        self, cells: Any, by: Sequence[str], weighted: bool = False
    ) -> list[dict[str, Any]]:
        out = self.fn.precision_recall_curve(
            cells, TRUE, SCORE, by=list(by) or None, sample_weight=WEIGHT if weighted else None
        )
        return self.ops.rows(self._thinned(out, by))

    def _thinned(self, curve: Any, by: Sequence[str]) -> Any:
        """At most about :data:`CURVE_ROWS` points of each group's ``curve``, by threshold
        from the highest: the first, the last and every k-th (as DuckDB keeps them)."""
        raise NotImplementedError


class PolarsScores(DataFrameScores):
    """Polars: a frame is a DataFrame or LazyFrame; the functions are ``mlsql.polars``."""

    name = "polars"
    ops = PolarsOps()

    def cells(
        self, frame: Any, actual: str, scores: str, by: Sequence[str], weight: str | None = None
    ) -> Any:
        import polars as pl

        is_map = isinstance(self.ops.types(frame)[scores], pl.Map)
        entries = pl.col(scores).map.entries() if is_map else pl.col(scores)
        label, score = ("key", "value") if is_map else ("label", "score")
        entry = pl.col("__mlsql_e")
        kept = [] if weight is None else [pl.col(weight).alias(WEIGHT)]
        return (
            frame.filter(self.ops.known([actual, scores, *([weight] if weight else [])]))
            .select(*by, *kept, actual, entries.alias("__mlsql_e"))
            .explode("__mlsql_e")
            .select(
                *by,
                *([WEIGHT] if weight else []),
                entry.struct.field(label).alias(LABEL),
                pl.col(actual).list.contains(entry.struct.field(label)).alias(TRUE),
                entry.struct.field(score).cast(pl.Float64).alias(SCORE),
            )
            .filter(pl.col(LABEL).is_not_null() & pl.col(SCORE).is_not_null())
        )

    def score_range(self, cells: Any) -> tuple[Any, Any]:
        import polars as pl

        row = collect(cells.select(pl.col(SCORE).min(), pl.col(SCORE).max().alias("h")))
        return row.row(0)

    def _thinned(self, curve: Any, by: Sequence[str]) -> Any:
        import polars as pl

        frame = collect(curve).sort([*by, "threshold"], descending=[False] * len(by) + [True])
        n, m = pl.int_range(pl.len()), pl.len()
        if by:
            n, m = n.over(*by), m.over(*by)
        step = (m + CURVE_ROWS - 1) // CURVE_ROWS
        return frame.filter((n % step == 0) | (n == m - 1))

    def scored_positives(
        self, cells: Any, by: Sequence[str], weighted: bool = False
    ) -> list[dict[str, Any]]:
        """Per group, the scored cells' positives (weighted): ``positives``."""
        import polars as pl

        w = pl.col(WEIGHT).cast(pl.Float64) if weighted else pl.lit(1.0)
        value = pl.when(pl.col(TRUE)).then(w).otherwise(0.0).sum().alias("positives")
        out = cells.group_by(*by).agg(value) if by else cells.select(value)
        return list(collect(out).to_dicts())


class SparkScores(DataFrameScores):
    """Spark: a frame is a DataFrame on its own session; the functions are ``mlsql.spark``."""

    name = "spark"
    ops = SparkOps()

    def cells(
        self, frame: Any, actual: str, scores: str, by: Sequence[str], weight: str | None = None
    ) -> Any:
        from pyspark.sql import functions as F
        from pyspark.sql.types import MapType

        col = self.ops.col
        is_map = isinstance(frame.schema[scores].dataType, MapType)
        s = col(scores)
        entries = F.map_entries(s) if is_map else s
        label, score = ("key", "value") if is_map else ("label", "score")
        kept = [] if weight is None else [col(weight).alias(WEIGHT)]
        rows = frame.where(self.ops.known([actual, scores, *([weight] if weight else [])])).select(
            *(col(c).alias(c) for c in by),
            *kept,
            col(actual).alias("__mlsql_a"),
            F.explode(entries).alias("__mlsql_e"),
        )
        e = F.col("__mlsql_e")
        return rows.select(
            *(col(c).alias(c) for c in by),
            *(F.col(WEIGHT) for _ in kept),
            e[label].alias(LABEL),
            F.array_contains(F.col("__mlsql_a"), e[label]).alias(TRUE),
            e[score].cast("double").alias(SCORE),
        ).where(F.col(LABEL).isNotNull() & F.col(SCORE).isNotNull())

    def score_range(self, cells: Any) -> tuple[Any, Any]:
        from pyspark.sql import functions as F

        row = cells.agg(F.min(SCORE), F.max(SCORE)).collect()[0]
        return row[0], row[1]

    def _thinned(self, curve: Any, by: Sequence[str]) -> Any:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        groups = [self.ops.col(c) for c in by]
        order = Window.partitionBy(*groups).orderBy(F.col("threshold").desc())
        n = F.row_number().over(order) - 1
        m = F.count(F.lit(1)).over(Window.partitionBy(*groups))
        kept = curve.withColumn("__mlsql_n", n).withColumn("__mlsql_m", m)
        at, last = F.col("__mlsql_n"), F.col("__mlsql_m")
        step = F.floor((last + CURVE_ROWS - 1) / CURVE_ROWS).cast("long")
        kept = kept.where((at % step == 0) | (at == last - 1))
        return kept.drop("__mlsql_n", "__mlsql_m").orderBy(*groups, F.col("threshold").desc())

    def scored_positives(
        self, cells: Any, by: Sequence[str], weighted: bool = False
    ) -> list[dict[str, Any]]:
        """Per group, the scored cells' positives (weighted): ``positives``."""
        from pyspark.sql import functions as F

        w = F.col(WEIGHT).cast("double") if weighted else F.lit(1.0)
        value = F.sum(F.when(F.col(TRUE), w).otherwise(F.lit(0.0))).alias("positives")
        out = cells.groupBy(*(self.ops.col(c) for c in by)).agg(value) if by else cells.agg(value)
        return [row.asDict() for row in out.collect()]


SCORE_ENGINES = {"duckdb": DuckDBScores, "polars": PolarsScores, "spark": SparkScores}
