"""Open what the user points at (Parquet, CSV, NDJSON, a glob, a directory, a DuckDB table).

Everything is read through DuckDB into a temporary view, then the two label
columns are brought to one shape, a list of labels per row, in a second view
(:func:`prepare`), which every engine evaluates. Paths enter SQL only as
escaped string literals and names only through :func:`quote_ident`.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from mlsql._sqlexpr import lit, quote_ident
from mlsql.cli.errors import UserError, one_line, warn

RAW = "_mlsql_raw"
PREPARED = "_mlsql_eval"
ATTACHED = "_mlsql_source_db"
#: the names the label columns get in the prepared view
ACTUAL, PREDICTED = "actual", "predicted"

FORMATS = {
    ".parquet": "Parquet",
    ".pq": "Parquet",
    ".csv": "CSV",
    ".tsv": "TSV",
    ".txt": "CSV",
    ".json": "JSON",
    ".ndjson": "NDJSON",
    ".jsonl": "NDJSON",
}
DUCKDB_SUFFIXES = (".duckdb", ".ddb", ".db")
KNOWN = "Parquet (.parquet), CSV (.csv, .tsv), NDJSON (.ndjson, .jsonl, .json) or FILE.duckdb:TABLE"

INTEGER_TYPES = {
    "tinyint",
    "smallint",
    "integer",
    "bigint",
    "hugeint",
    "utinyint",
    "usmallint",
    "uinteger",
    "ubigint",
    "uhugeint",
}
TEXT_TYPES = {"varchar", "enum"}


@dataclass(frozen=True)
class Opened:
    """A source read into the view :data:`RAW`."""

    path: str
    format: str
    columns: tuple[str, ...]
    types: tuple[duckdb.DuckDBPyType, ...]

    def type_of(self, column: str) -> duckdb.DuckDBPyType:
        """The DuckDB type of ``column``."""
        return self.types[self.columns.index(column)]


@dataclass(frozen=True)
class Prepared:
    """The view :data:`PREPARED`: group columns, then ``actual`` and ``predicted`` lists."""

    opened: Opened
    actual: str
    predicted: str
    by: tuple[str, ...]
    label_kind: str  # "text" or "integer"
    single_label: bool


def _format_of(name: str) -> str | None:
    lower = name.lower()
    for suffix in (".gz", ".zst", ".zstd"):
        if lower.endswith(suffix):
            lower = lower[: -len(suffix)]
    return FORMATS.get(Path(lower).suffix)


def _sniff(path: Path) -> str | None:
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    if head == b"PAR1":
        return "Parquet"
    if head[:1] in (b"{", b"["):
        return "NDJSON"
    return None


def _files(path: str) -> tuple[list[str], str]:
    """The files ``path`` names, and their format."""
    if re.match(r"^[a-z][a-z0-9+.-]*://", path, flags=re.I):  # s3://, https://: DuckDB reads it
        kind = _format_of(path.split("?", 1)[0])
        if kind is None:
            raise UserError(f"cannot tell the format of {path} from its name; mlsql reads {KNOWN}")
        return [path], kind
    if any(ch in path for ch in "*?["):
        matches = sorted(m for m in glob.glob(path, recursive=True) if Path(m).is_file())
        if not matches:
            raise UserError(f"no files match {path}")
        kinds = {_format_of(m) for m in matches}
        if len(kinds) != 1 or None in kinds:
            raise UserError(
                f"{path} matches files of several or unknown formats; mlsql reads {KNOWN}"
            )
        return matches, kinds.pop()  # type: ignore[return-value]
    p = Path(path)
    if p.is_dir():
        for pattern, kind in (("*.parquet", "Parquet"), ("*.csv", "CSV"), ("*.ndjson", "NDJSON")):
            matches = sorted(str(m) for m in p.rglob(pattern) if m.is_file())
            if matches:
                return matches, kind
        raise UserError(f"no .parquet, .csv or .ndjson files in the directory {path}")
    if not p.exists():
        raise UserError(f"no such file: {path}")
    kind = _format_of(p.name) or _sniff(p)
    if kind is None:
        raise UserError(f"cannot tell the format of {path} from its name; mlsql reads {KNOWN}")
    return [path], kind


def _reader(files: list[str], kind: str) -> str:
    names = "[" + ", ".join(str(lit(f)) for f in files) + "]"
    if kind == "Parquet":
        return f"read_parquet({names}, union_by_name = true)"
    if kind == "CSV":
        return f"read_csv({names}, union_by_name = true)"
    if kind == "TSV":
        return f"read_csv({names}, delim = '\t', union_by_name = true)"
    if kind == "NDJSON":
        return f"read_json({names}, format = 'newline_delimited', union_by_name = true)"
    return f"read_json({names}, format = 'auto', union_by_name = true)"


def _split_duckdb(path: str) -> tuple[str, str | None] | None:
    """``file.duckdb:table`` -> (file, table); a bare ``file.duckdb`` -> (file, None)."""
    if path.lower().endswith(DUCKDB_SUFFIXES):
        return path, None
    match = re.fullmatch(r"(.+?\.(?:duckdb|ddb|db)):(.+)", path, flags=re.IGNORECASE)
    if match:
        return match.group(1), match.group(2)
    return None


def _duckdb_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    rows = con.execute(
        "SELECT CASE WHEN schema_name = 'main' THEN table_name "
        "ELSE schema_name || '.' || table_name END FROM ("
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? "
        "UNION ALL SELECT schema_name, view_name FROM duckdb_views() "
        "WHERE database_name = ? AND NOT internal) ORDER BY 1",
        [ATTACHED, ATTACHED],
    ).fetchall()
    return [r[0] for r in rows]


def _open_duckdb(con: duckdb.DuckDBPyConnection, file: str, table: str | None) -> str:
    if not Path(file).is_file():
        raise UserError(f"no such file: {file}")
    try:
        con.execute(f"ATTACH {lit(file)} AS {quote_ident(ATTACHED)} (READ_ONLY)")
    except duckdb.Error as exc:
        raise UserError(f"cannot open {file} as a DuckDB database: {one_line(str(exc))}") from None
    tables = _duckdb_tables(con)
    listing = ", ".join(tables) if tables else "(none)"
    if table is None:
        raise UserError(f"name a table: {file}:TABLE; tables in {file}: {listing}")
    if table not in tables:
        raise UserError(f"no table {table!r} in {file}; tables: {listing}")
    parts = table.split(".", 1) if "." in table and table not in _plain(con) else [table]
    return ".".join([quote_ident(ATTACHED), *(quote_ident(p) for p in parts)])


def _plain(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Names in the attached database's main schema (a dot inside one is part of the name)."""
    rows = con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'main' "
        "UNION ALL SELECT view_name FROM duckdb_views() WHERE database_name = ? "
        "AND schema_name = 'main'",
        [ATTACHED, ATTACHED],
    ).fetchall()
    return {r[0] for r in rows}


def open_source(con: duckdb.DuckDBPyConnection, path: str) -> Opened:
    """Read ``path`` into the temporary view :data:`RAW` on ``con``.

    Raises
    ------
    UserError
        The path does not exist, matches nothing, has an unknown format or
        cannot be read; the message says which and what mlsql reads.
    """
    db = _split_duckdb(path)
    if db is not None and (db[1] is not None or Path(db[0]).is_file()):
        relation = _open_duckdb(con, *db)
        kind = "DuckDB"
    else:
        files, kind = _files(path)
        relation = _reader(files, kind)
    try:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {RAW} AS SELECT * FROM {relation}")
        described = con.sql(f"SELECT * FROM {RAW} LIMIT 0")
        columns, types = tuple(described.columns), tuple(described.types)
    except duckdb.Error as exc:
        raise UserError(f"cannot read {path} as {kind}: {one_line(str(exc))}") from None
    return Opened(path, kind, columns, types)


# ---------------------------------------------------------------- label columns


def _describe(t: duckdb.DuckDBPyType) -> tuple[str, str | None]:
    """(shape, kind) of a column type: shape 'list' or 'value'; kind 'text', 'integer', 'boolean'."""
    if t.id in ("list", "array"):
        child = dict(t.children)["child"]
        return "list", _kind(child)
    return "value", _kind(t)


def _kind(t: duckdb.DuckDBPyType) -> str | None:
    if t.id in TEXT_TYPES:
        return "text"
    if t.id in INTEGER_TYPES:
        return "integer"
    if t.id == "boolean":
        return "boolean"
    return None


WRONG_TYPE = (
    "column {col!r} has type {type}; mlsql needs labels: a list of text or integers "
    "(e.g. VARCHAR[]), one text or integer label per row, or text split with --sep"
)


#: integer label types wider than BIGINT holds; labels of these are read as HUGEINT
WIDE_INTEGERS = {"ubigint", "hugeint", "uhugeint"}


def _element(t: duckdb.DuckDBPyType) -> duckdb.DuckDBPyType:
    return dict(t.children)["child"] if t.id in ("list", "array") else t


def _expression(
    column: str,
    t: duckdb.DuckDBPyType,
    sep: str | None,
    *,
    empty_cells: bool = False,
    integer: str = "BIGINT",
) -> tuple[str, str, str]:
    """SQL turning ``column`` into a list of labels, with its kind and shape.

    Integer labels become ``integer`` (both sides get one width, which every
    engine accepts); enums become text. With ``empty_cells`` (CSV, where an
    empty cell reads as NULL) a NULL delimited text is the empty list, not an
    unknown row.
    """
    shape, kind = _describe(t)
    q = quote_ident(column)
    if kind is None or (shape == "list" and kind == "boolean"):
        raise UserError(WRONG_TYPE.format(col=column, type=t))
    if shape == "list":
        return f"CAST({q} AS {'VARCHAR' if kind == 'text' else integer}[])", kind, "list"
    if sep is not None and kind == "text":
        text = f"coalesce({q}, '')" if empty_cells else q
        parts = f"list_transform(string_split({text}, {lit(sep)}), lambda x: trim(x))"
        cleaned = f"list_filter({parts}, lambda x: x <> '')"
        if empty_cells:
            return cleaned, "text", "split"
        return f"CASE WHEN {q} IS NULL THEN NULL ELSE {cleaned} END", "text", "split"
    value = f"CAST({q} AS {'VARCHAR' if kind in ('text', 'boolean') else integer})"
    kind = "text" if kind == "boolean" else kind
    return f"CASE WHEN {q} IS NULL THEN NULL ELSE [{value}] END", kind, "value"


def _need_column(opened: Opened, column: str, option: str) -> None:
    if column not in opened.columns:
        listing = ", ".join(opened.columns)
        close = [c for c in opened.columns if c.lower() == column.lower()]
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UserError(
            f"{option} {column!r}: no such column in {opened.path}{hint}; columns: {listing}"
        )


def prepare(
    con: duckdb.DuckDBPyConnection,
    opened: Opened,
    actual: str,
    predicted: str,
    *,
    by: tuple[str, ...] = (),
    sep: str | None = None,
) -> Prepared:
    """Create the view :data:`PREPARED`: ``by`` columns, then ``actual`` and ``predicted`` lists.

    Raises
    ------
    UserError
        A column is missing (the message lists those that exist), has a type
        that cannot hold labels, or the two sides hold different kinds of label.
    """
    _need_column(opened, actual, "--actual")
    _need_column(opened, predicted, "--predicted")
    for column in by:
        _need_column(opened, column, "--by")
        if column in (actual, predicted):
            raise UserError(f"--by {column!r} is a label column; group by another column")
    if sep == "":
        raise UserError("--sep must not be empty")
    csv = opened.format in ("CSV", "TSV")
    wide = {_element(opened.type_of(c)).id for c in (actual, predicted)} & WIDE_INTEGERS
    integer = "HUGEINT" if wide else "BIGINT"
    a_sql, a_kind, a_shape = _expression(
        actual, opened.type_of(actual), sep, empty_cells=csv, integer=integer
    )
    p_sql, p_kind, p_shape = _expression(
        predicted, opened.type_of(predicted), sep, empty_cells=csv, integer=integer
    )
    if (a_shape == "value") != (p_shape == "value"):
        which = actual if a_shape == "value" else predicted
        raise UserError(
            f"column {which!r} holds one label per row but the other side holds lists; "
            "pass --sep to split delimited text, or give two columns of the same shape"
        )
    if a_kind != p_kind:
        raise UserError(
            f"--actual {actual!r} holds {opened.type_of(actual)} labels but --predicted "
            f"{predicted!r} holds {opened.type_of(predicted)}; both sides must hold the same "
            "kind of label (both text or both integers)"
        )
    single = a_shape == "value"
    if single and a_kind == "text":
        _hint_delimited(con, opened, (actual, predicted))
    groups = "".join(f"{quote_ident(c)}, " for c in by)
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW {PREPARED} AS SELECT {groups}"
        f"{a_sql} AS {ACTUAL}, {p_sql} AS {PREDICTED} FROM {RAW}"
    )
    _warn_unknown_rows(con, actual, predicted)
    return Prepared(opened, actual, predicted, tuple(by), a_kind, single)


def _warn_unknown_rows(con: duckdb.DuckDBPyConnection, actual: str, predicted: str) -> None:
    """Say how many rows are left out because a side is NULL (DESIGN: an unknown row)."""
    [(unknown, total)] = con.execute(
        f"SELECT count(*) FILTER ({ACTUAL} IS NULL OR {PREDICTED} IS NULL), count(*) "
        f"FROM {PREPARED}"
    ).fetchall()
    if unknown:
        warn(
            f"{unknown} of {total} rows have a NULL {actual!r} or {predicted!r} and are left "
            "out as unknown (an empty list [] counts as predicting nothing)"
        )


def _hint_delimited(
    con: duckdb.DuckDBPyConnection, opened: Opened, columns: tuple[str, str]
) -> None:
    """Warn when one-label-per-row text looks like delimited lists (a forgotten --sep)."""
    for column in columns:
        q = quote_ident(column)
        rows = con.execute(
            f"SELECT {q} FROM (SELECT {q} FROM {RAW} LIMIT 1000) "
            f"WHERE regexp_matches({q}, '^\\[.*\\]$|[,;|]') LIMIT 1"
        ).fetchall()
        if rows:
            row = rows[0]
            warn(
                f"column {column!r} holds one label per row, but {row[0]!r} looks like a list; "
                "pass --sep to split it (e.g. --sep ',')"
            )
            return
