"""One label per row: accuracy, balanced accuracy, Cohen's kappa, MCC and the confusion matrix.

These come from the engine's single-label functions (DuckDB macros,
``mlsql.polars``, ``mlsql.spark``), run on the view :data:`SINGLE`, which
holds the group columns and the two labels as plain values.
"""

from __future__ import annotations

import importlib
from typing import Any

import duckdb

from mlsql._sqlexpr import quote_ident
from mlsql.cli.sources import ACTUAL, PREDICTED, PREPARED, Prepared
from mlsql.report.model import Confusion

SINGLE = "_mlsql_single"
#: the aggregates a single-label report adds to each group's summary row
MEASURES = ("accuracy", "balanced_accuracy_score", "cohen_kappa_score", "matthews_corrcoef")
CONFUSION = "confusion_matrix"


def create_view(con: duckdb.DuckDBPyConnection, prepared: Prepared) -> None:
    """The view :data:`SINGLE`: group columns, then ``actual`` and ``predicted`` values."""
    groups = "".join(f"{quote_ident(c)}, " for c in prepared.by)
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW {SINGLE} AS SELECT {groups}{ACTUAL}[1] AS {ACTUAL}, "
        f"{PREDICTED}[1] AS {PREDICTED} FROM {PREPARED}"
    )


def _duckdb(
    con: duckdb.DuckDBPyConnection, by: list[str], frame: Any
) -> tuple[list[dict], list[dict]]:
    groups = "".join(f"{quote_ident(c)}, " for c in by)
    calls = ", ".join(f"{m}({ACTUAL}, {PREDICTED}) AS {m}" for m in MEASURES)
    query = f"SELECT {groups}{calls} FROM {SINGLE}"
    if by:
        query += " GROUP BY ALL"
    measures = con.sql(query)
    cells = con.sql(
        f"SELECT * FROM {CONFUSION}(?, ?, ?, by := ?)",
        params=[SINGLE, ACTUAL, PREDICTED, by or None],
    )
    return _rows(measures), _rows(cells)


def _rows(rel: duckdb.DuckDBPyRelation) -> list[dict[str, Any]]:
    return [dict(zip(rel.columns, row, strict=True)) for row in rel.fetchall()]


def _polars(
    con: duckdb.DuckDBPyConnection, by: list[str], frame: Any
) -> tuple[list[dict], list[dict]] | None:
    from mlsql.cli.polars_input import collect, single_values

    mp = importlib.import_module("mlsql.polars")
    if not all(hasattr(mp, name) for name in (*MEASURES, CONFUSION)):
        return None
    frame = single_values(frame)
    exprs = [getattr(mp, m)(ACTUAL, PREDICTED).alias(m) for m in MEASURES]
    measures = frame.group_by(by).agg(exprs) if by else frame.select(exprs)
    cells = getattr(mp, CONFUSION)(frame, ACTUAL, PREDICTED, by=by or None)
    return collect(measures).to_dicts(), collect(cells).to_dicts()


def _spark(
    con: duckdb.DuckDBPyConnection, by: list[str], frame: Any
) -> tuple[list[dict], list[dict]] | None:
    from mlsql.cli.spark_input import single_values

    ms = importlib.import_module("mlsql.spark")
    if not all(hasattr(ms, name) for name in (*MEASURES, CONFUSION)):
        return None
    frame = single_values(frame)
    exprs = [getattr(ms, m)(ACTUAL, PREDICTED).alias(m) for m in MEASURES]
    measures = frame.groupBy(*by).agg(*exprs) if by else frame.agg(*exprs)
    cells = getattr(ms, CONFUSION)(frame, ACTUAL, PREDICTED, by=by or None)
    return [r.asDict() for r in measures.collect()], [r.asDict() for r in cells.collect()]


ENGINES = {"duckdb": _duckdb, "polars": _polars, "spark": _spark}


def evaluate(
    con: duckdb.DuckDBPyConnection,
    prepared: Prepared,
    engine: str,
    labels: tuple[Any, ...] | None,
) -> tuple[dict[tuple, dict[str, Any]], dict[tuple, Confusion]] | None:
    """Per group key: the single-label measures and the confusion matrix.

    ``None`` when the engine lacks its single-label functions.
    """
    create_view(con, prepared)
    by = list(prepared.by)
    found = ENGINES[engine](con, by, prepared.frame)
    if found is None:
        return None
    measure_rows, cells = found
    measures = {tuple(r[c] for c in by): {m: r[m] for m in MEASURES} for r in measure_rows}
    return measures, confusions(cells, by, labels)


def confusions(
    cells: list[dict[str, Any]], by: list[str], labels: tuple[Any, ...] | None
) -> dict[tuple, Confusion]:
    """Long confusion cells (group, actual, predicted, count) as one matrix per group.

    Classes are those the engine lists, sorted, after the ``labels`` given
    (which come first, in their order, and get rows of zeros if never seen).
    """
    grouped: dict[tuple, dict[tuple[Any, Any], int]] = {}
    for r in cells:
        grouped.setdefault(tuple(r[c] for c in by), {})[(r[ACTUAL], r[PREDICTED])] = r["count"]
    out = {}
    for key, counts in grouped.items():
        seen = sorted({c for pair in counts for c in pair}, key=lambda c: (str(type(c)), c))
        classes = list(labels or ()) + [c for c in seen if c not in (labels or ())]
        matrix = tuple(tuple(counts.get((a, p), 0) for p in classes) for a in classes)
        out[key] = Confusion(tuple(classes), matrix)
    return out
