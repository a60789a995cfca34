"""``--engine polars`` reads the input itself: lazy scans, evaluated on the streaming engine.

The files are those :func:`mlsql.cli.sources.resolve` found (each name
escaped, so Polars expands nothing); the label columns are built from the
:class:`~mlsql.cli.sources.Side` rules judged once for every engine.
"""

from __future__ import annotations

from typing import Any

import duckdb
import polars as pl

from mlsql import _label_types as LT
from mlsql.cli import interrupt
from mlsql.cli.sources import (
    ACTUAL,
    PREDICTED,
    RAW,
    Prepared,
    Side,
    Source,
    csv_dialect,
    engine_names,
    json_array,
)

#: the DuckDB types a CSV column is read as (everything else stays text)
CSV_TYPES: dict[str, pl.DataType] = {
    "tinyint": pl.Int8(),
    "smallint": pl.Int16(),
    "integer": pl.Int32(),
    "bigint": pl.Int64(),
    "hugeint": pl.Int128(),
    "utinyint": pl.UInt8(),
    "usmallint": pl.UInt16(),
    "uinteger": pl.UInt32(),
    "ubigint": pl.UInt64(),
    "float": pl.Float32(),
    "double": pl.Float64(),
}


def read(con: duckdb.DuckDBPyConnection, prepared: Prepared) -> pl.LazyFrame:
    """A LazyFrame of the source's rows (a DuckDB table comes through DuckDB, lazily)."""
    opened = prepared.opened
    source = opened.source
    if source.database is not None:
        return con.sql(f"SELECT * FROM {RAW}").pl(lazy=True)
    names = engine_names(source)
    if source.format == "Parquet":
        return pl.scan_parquet(names, missing_columns="insert")
    if source.format in ("CSV", "TSV"):
        dialect = csv_dialect(con, source)
        frame = pl.scan_csv(
            names,
            separator=dialect.delimiter,
            quote_char=dialect.quote,
            has_header=dialect.header,
            infer_schema=False,
            missing_columns="insert",
            # one file: DuckDB's names (column0.. without a header, deduplicated ones)
            new_columns=list(opened.columns) if len(names) == 1 else None,
        )
        types = {c: t.id for c, t in zip(opened.columns, opened.types, strict=True)}
        return frame.with_columns(
            pl.col(c).cast(CSV_TYPES[t]) for c, t in types.items() if t in CSV_TYPES
        )
    if source.format == "NDJSON" or source.pattern or not json_array(source):
        return pl.scan_ndjson(names)
    return _json_arrays(source)


def _json_arrays(source: Source) -> pl.LazyFrame:
    """Files holding one JSON array each (Polars reads these only eagerly)."""
    frames = [pl.read_json(f).lazy() for f in source.files]
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")


def _labels(side: Side, prepared: Prepared) -> pl.Expr:
    """``side`` as a list of labels, as DuckDB's :func:`mlsql.cli.sources._sql` builds it."""
    c = pl.col(side.column)
    of: pl.DataType = pl.String() if side.kind == "text" else _integer(prepared)
    if side.shape == "list":
        return c.cast(pl.List(of))
    if side.shape == "scores":  # read as they are by the score measures
        return c
    if side.shape == "number":
        return c.cast(pl.Float64())
    if side.shape == "split":
        text = c.fill_null("") if prepared.empty_cells else c
        assert prepared.sep is not None
        parts = text.cast(pl.String).str.split(prepared.sep)
        return parts.list.eval(pl.element().str.strip_chars(LT.SPLIT_STRIPPED)).list.eval(
            pl.element().filter(pl.element() != "")
        )
    value = c.cast(pl.String).str.to_lowercase() if side.boolean else c.cast(of)
    return pl.when(c.is_not_null()).then(pl.concat_list(value))


def _integer(prepared: Prepared) -> pl.DataType:
    return pl.Int128() if prepared.wide else pl.Int64()


def prepare(con: duckdb.DuckDBPyConnection, prepared: Prepared) -> pl.LazyFrame:
    """Group columns, then ``actual`` and ``predicted`` label lists, lazily."""
    a, p = prepared.sides
    return read(con, prepared).select(
        *prepared.kept,
        _labels(a, prepared).alias(ACTUAL),
        _labels(p, prepared).alias(PREDICTED),
    )


def count_unknown(frame: pl.LazyFrame) -> tuple[int, int]:
    """(rows with a NULL side, all rows), on the streaming engine."""
    unknown = pl.col(ACTUAL).is_null() | pl.col(PREDICTED).is_null()
    row = collect(frame.select(unknown.sum(), pl.len())).row(0)
    return int(row[0] or 0), int(row[1])


def collect(frame: Any) -> pl.DataFrame:
    """A result, computed on the streaming engine; Ctrl-C stops waiting for it at once.

    The query runs in a daemon thread (Polars releases the GIL; its
    ``background=True`` mode would leave the streaming engine), so the
    process can exit without waiting for the query to finish.
    """
    if not isinstance(frame, pl.LazyFrame):
        return frame
    return interrupt.wait_for(lambda: frame.collect(engine="streaming"))
