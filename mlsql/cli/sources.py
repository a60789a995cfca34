"""Open what the user points at (Parquet, CSV, NDJSON, a glob, a directory, a DuckDB table).

:func:`resolve` turns a path into literal files (a pattern is expanded once,
here; every engine gets each name escaped, so nothing is expanded twice).
DuckDB describes them (names and types, no rows) through a temporary view,
and :func:`prepare` judges the label columns once, for every engine: how each
becomes a list of labels (:class:`Side`). The DuckDB engine reads the second
view; Polars and Spark read the files themselves (:mod:`mlsql.cli.polars_input`,
:mod:`mlsql.cli.spark_input`) and build the same columns. Paths enter SQL
only as escaped string literals and names only through :func:`quote_ident`.
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from mlsql import _label_types as LT
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
#: DuckDB types of a real number: a column of them makes the sides numbers
REAL_TYPES = {"float", "double", "decimal"}


@dataclass(frozen=True)
class Opened:
    """A source described through the view :data:`RAW`: its columns and their types."""

    source: Source
    columns: tuple[str, ...]
    types: tuple[duckdb.DuckDBPyType, ...]

    @property
    def path(self) -> str:
        """The path the user gave."""
        return self.source.path

    @property
    def format(self) -> str:
        """Parquet, CSV, TSV, NDJSON, JSON or DuckDB."""
        return self.source.format

    def type_of(self, column: str) -> duckdb.DuckDBPyType:
        """The DuckDB type of ``column``."""
        return self.types[self.columns.index(column)]


@dataclass(frozen=True)
class Side:
    """How one label column becomes a list of labels, the same in every engine.

    ``shape`` is 'list' (a list column), 'split' (text split on ``sep``),
    'value' (one label per row), 'number' (a number per row, read as DOUBLE:
    regression measures, or a 0/1 label and a score) or, for the predicted
    side only, 'scores' (a map label -> score or a list of {label, score}
    structs: a score report); ``kind`` the labels' kind, 'text', 'integer' or
    'number'; ``boolean`` a one-per-row boolean column read as text.
    """

    column: str
    shape: str
    kind: str
    boolean: bool = False


@dataclass(frozen=True)
class Prepared:
    """Group columns, then ``actual`` and ``predicted`` label lists, on the chosen engine.

    ``frame`` is what the engine evaluates: the DuckDB view :data:`PREPARED`
    (its name), a Polars LazyFrame or a Spark DataFrame.
    """

    opened: Opened
    actual: str
    predicted: str
    by: tuple[str, ...]
    label_kind: str  # "text" or "integer"
    single_label: bool
    sides: tuple[Side, Side]
    sep: str | None = None
    #: labels as 128-bit integers (a side holds UBIGINT, HUGEINT or UHUGEINT)
    wide: bool = False
    #: an empty delimited cell is the empty list (CSV), not an unknown row
    empty_cells: bool = False
    frame: Any = PREPARED
    #: the column of row weights (--sample-weight), carried beside the group columns
    weight: str | None = None
    #: the candidate columns of the weakest slices (--slices), carried beside them too
    slice_columns: tuple[str, ...] = ()

    @property
    def scores(self) -> bool:
        """Whether ``predicted`` holds label scores (a score report), not labels."""
        return self.sides[1].shape == "scores"

    @property
    def numbers(self) -> bool:
        """Whether both sides hold one number per row (regression, or a 0/1 label and a score)."""
        return self.sides[1].shape == "number"

    @property
    def kept(self) -> tuple[str, ...]:
        """The columns kept as they are: the group columns, the weight column, then the
        slices' columns that are not group columns."""
        weight = (self.weight,) if self.weight else ()
        return (*self.by, *weight, *(c for c in self.slice_columns if c not in self.by))


#: suffixes of compressed text files (read by every engine)
COMPRESSED = (".gz", ".zst", ".zstd")


def _format_of(name: str) -> str | None:
    lower = name.lower()
    for suffix in COMPRESSED:
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


#: characters DuckDB and Polars expand in a file name (``**`` is two ``*``)
GLOB_CHARS = "*?["


def escape_glob(name: str) -> str:
    """``name`` as a pattern that matches only itself, in DuckDB and Polars.

    Both engines expand every name they are given; a class of one character
    is the escape both understand.

    Examples
    --------
    >>> escape_glob("runs/a*[1]?.parquet")
    'runs/a[*][[]1][?].parquet'
    """
    return re.sub(r"([*?\[])", r"[\1]", name)


def is_url(path: str) -> bool:
    """``s3://...``, ``https://...``: read by the engine itself, patterns included."""
    return re.match(r"^[a-z][a-z0-9+.-]*://", path, flags=re.I) is not None


@dataclass(frozen=True)
class Source:
    """What a path names: literal files of one format, a URL, or a DuckDB table.

    ``files`` are literal names (escape them before an engine sees them)
    unless ``pattern`` is true (a URL, expanded by the engine itself).
    """

    path: str
    format: str
    files: tuple[str, ...] = ()
    pattern: bool = False
    database: tuple[str, str | None] | None = None


def resolve(path: str) -> Source:
    """The files (or DuckDB table) ``path`` names, and their format.

    A name that exists as a file is that file, even if it holds ``*``, ``?``
    or ``[``; otherwise such characters make a pattern, expanded here once.

    Raises
    ------
    UserError
        Nothing matches, or the format cannot be told.
    """
    db = _split_duckdb(path)
    if db is not None and (db[1] is not None or Path(db[0]).is_file()):
        return Source(path, "DuckDB", database=db)
    if is_url(path):  # s3://, https://: the engine reads it
        kind = _format_of(path.split("?", 1)[0])
        if kind is None:
            raise UserError(f"cannot tell the format of {path} from its name; mlsql reads {KNOWN}")
        return Source(path, kind, (path,), pattern=True)
    p = Path(path)
    if any(ch in path for ch in GLOB_CHARS) and not p.exists():
        matches = sorted(m for m in glob.glob(path, recursive=True) if Path(m).is_file())
        if not matches:
            raise UserError(f"no files match {path}")
        kinds = {_format_of(m) for m in matches}
        if len(kinds) != 1 or None in kinds:
            raise UserError(
                f"{path} matches files of several or unknown formats; mlsql reads {KNOWN}"
            )
        return Source(path, kinds.pop(), tuple(matches))  # type: ignore[arg-type]
    if p.is_dir():
        for pattern, kind in (("*.parquet", "Parquet"), ("*.csv", "CSV"), ("*.ndjson", "NDJSON")):
            matches = sorted(str(m) for m in p.rglob(pattern) if m.is_file())
            if matches:
                return Source(path, kind, tuple(matches))
        raise UserError(f"no .parquet, .csv or .ndjson files in the directory {path}")
    if not p.exists():
        raise UserError(f"no such file: {path}")
    kind = _format_of(p.name) or _sniff(p)
    if kind is None:
        raise UserError(f"cannot tell the format of {path} from its name; mlsql reads {KNOWN}")
    return Source(path, kind, (path,))


def escape_hadoop_glob(name: str) -> str:
    r"""``name`` as a pattern that matches only itself in Spark (Hadoop's glob escapes with \).

    Examples
    --------
    >>> escape_hadoop_glob("runs/a*{b}[1]?.parquet")
    'runs/a\\*\\{b\\}\\[1\\]\\?.parquet'
    """
    return re.sub(r"([\\*?\[\]{}])", r"\\\1", name)


def engine_names(source: Source, *, hadoop: bool = False) -> list[str]:
    r"""The names to hand an engine: each matches its file and nothing else.

    DuckDB and Polars take ``[*]``-style escapes, Spark (``hadoop``) ``\*``.
    """
    if source.pattern:
        return list(source.files)
    escape = escape_hadoop_glob if hadoop else escape_glob
    return [escape(f) for f in source.files]


def _reader(source: Source) -> str:
    names = "[" + ", ".join(str(lit(f)) for f in engine_names(source)) + "]"
    kind = source.format
    if kind == "Parquet":
        return f"read_parquet({names}, union_by_name = true)"
    if kind == "CSV":
        return f"read_csv({names}, union_by_name = true)"
    if kind == "TSV":
        return f"read_csv({names}, delim = '\t', union_by_name = true)"
    if kind == "NDJSON":
        return f"read_json({names}, format = 'newline_delimited', union_by_name = true)"
    return f"read_json({names}, format = 'auto', union_by_name = true)"


@dataclass(frozen=True)
class Dialect:
    """How a CSV file is written, as DuckDB's sniffer found it (every engine reads it so)."""

    delimiter: str
    quote: str | None
    header: bool


def csv_dialect(con: duckdb.DuckDBPyConnection, source: Source) -> Dialect:
    """The dialect of the first file of ``source`` (DuckDB reads each file so too)."""
    result = con.execute("SELECT * FROM sniff_csv(?)", [engine_names(source)[0]])
    found = dict(zip([d[0] for d in result.description], result.fetchone() or (), strict=True))
    delimiter = "\t" if source.format == "TSV" else found["Delimiter"]
    quote = found["Quote"] if found["Quote"] not in ("", "(empty)") else None
    return Dialect(delimiter, quote, bool(found["HasHeader"]))


def json_array(source: Source) -> bool:
    """Whether the (first) file holds one JSON array rather than one object per line."""
    try:
        with open(source.files[0], "rb") as handle:
            head = handle.read(4096).lstrip()
    except OSError:
        return False
    return head[:1] == b"["


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


def _refuse_empty(source: Source) -> None:
    """An empty text file has no columns (DuckDB would invent 'column0' or 'json')."""
    if source.pattern or source.format not in ("CSV", "TSV", "NDJSON", "JSON"):
        return
    empty = [f for f in source.files if not _has_text(Path(f))]
    if len(empty) == len(source.files):
        which = source.path if len(empty) == 1 else f"every file of {source.path}"
        raise UserError(
            f"{which} is empty: it has no columns and no rows; mlsql needs the columns "
            "named by --actual and --predicted"
        )


def _has_text(path: Path) -> bool:
    """Whether a text file holds anything but whitespace (compressed files count as text)."""
    if path.name.lower().endswith(COMPRESSED):
        return True
    try:
        with path.open("rb") as handle:
            return bool(handle.read(65536).strip()) or handle.read(1) != b""
    except OSError:
        return True  # let the reader say what is wrong


def open_source(con: duckdb.DuckDBPyConnection, source: Source) -> Opened:
    """Describe ``source`` through the temporary view :data:`RAW` on ``con``.

    The view is what the DuckDB engine reads; for every engine it gives the
    column names and types the label rules judge (reading no data rows).

    Raises
    ------
    UserError
        The source cannot be read; the message says which and what mlsql reads.
    """
    if source.database is not None:
        relation = _open_duckdb(con, *source.database)
    else:
        _refuse_empty(source)
        relation = _reader(source)
    try:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {RAW} AS SELECT * FROM {relation}")
        described = con.sql(f"SELECT * FROM {RAW} LIMIT 0")
        columns, types = tuple(described.columns), tuple(described.types)
    except duckdb.Error as exc:
        raise UserError(
            f"cannot read {source.path} as {source.format}: {one_line(str(exc))}"
        ) from None
    return Opened(source, columns, types)


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
    "(e.g. VARCHAR[]), one text or integer label per row, or text split with --sep "
    "(--predicted may also hold label scores: a MAP label -> number, or a list of "
    "{{label, score}} structs; mlsql compare also takes two columns of numbers)"
)


#: DuckDB types of a score (any real number)
SCORE_TYPES = {*INTEGER_TYPES, "float", "double", "decimal"}


def score_kind(t: duckdb.DuckDBPyType) -> str | None:
    """The label kind of a score column (a map label -> number, or a list of {label, score}).

    ``None`` when ``t`` holds no label scores.
    """
    if t.id == "map":
        key, value = (dict(t.children)[k] for k in ("key", "value"))
    elif t.id == "list" and dict(t.children)["child"].id == "struct":
        fields = dict(dict(t.children)["child"].children)
        if set(fields) != {"label", "score"}:
            return None
        key, value = fields["label"], fields["score"]
    else:
        return None
    kind = _kind(key)
    return kind if kind in ("text", "integer") and value.id in SCORE_TYPES else None


#: integer label types wider than BIGINT holds; labels of these are read as HUGEINT
WIDE_INTEGERS = {"ubigint", "hugeint", "uhugeint"}


def _element(t: duckdb.DuckDBPyType) -> duckdb.DuckDBPyType:
    return dict(t.children)["child"] if t.id in ("list", "array") else t


def _side(column: str, t: duckdb.DuckDBPyType, sep: str | None) -> Side:
    """How ``column`` of type ``t`` becomes a list of labels."""
    shape, kind = _describe(t)
    if kind is None or (shape == "list" and kind == "boolean"):
        raise UserError(WRONG_TYPE.format(col=column, type=t))
    if shape == "list":
        return Side(column, "list", kind)
    if sep is not None and kind == "text":
        return Side(column, "split", "text")
    if kind == "boolean":
        return Side(column, "value", "text", boolean=True)
    return Side(column, "value", kind)


def _sql(side: Side, prepared: Prepared) -> str:
    """DuckDB SQL turning ``side`` into a list of labels."""
    q = quote_ident(side.column)
    integer = "HUGEINT" if prepared.wide else "BIGINT"
    of = "VARCHAR" if side.kind == "text" else integer
    if side.shape == "list":
        return f"CAST({q} AS {of}[])"
    if side.shape == "number":
        return f"CAST({q} AS DOUBLE)"
    if side.shape == "scores":
        if prepared.opened.type_of(side.column).id == "map":
            return f"CAST({q} AS MAP({of}, DOUBLE))"
        entry = f"{{'label': CAST(e.label AS {of}), 'score': CAST(e.score AS DOUBLE)}}"
        return f"list_transform({q}, lambda e: {entry})"
    if side.shape == "split":
        text = f"coalesce({q}, '')" if prepared.empty_cells else q
        trim = f"trim(x, {lit(LT.SPLIT_STRIPPED)})"
        parts = f"list_transform(string_split({text}, {lit(prepared.sep)}), lambda x: {trim})"
        cleaned = f"list_filter({parts}, lambda x: x <> '')"
        if prepared.empty_cells:
            return cleaned
        return f"CASE WHEN {q} IS NULL THEN NULL ELSE {cleaned} END"
    return f"CASE WHEN {q} IS NULL THEN NULL ELSE [CAST({q} AS {of})] END"


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
    sample_weight: str | None = None,
    single_label: bool = False,
    slices: tuple[str, ...] = (),
) -> Prepared:
    """Judge the label columns and create the DuckDB view :data:`PREPARED` over :data:`RAW`.

    The rules (which columns, which types, which shapes) are judged once,
    here, for every engine; the view costs nothing until the DuckDB engine
    reads it. Other engines build the same columns from ``Prepared.sides``.

    ``single_label`` (``--single-label``) says one text label per row is
    meant even where a value looks like a delimited list.

    Raises
    ------
    UserError
        A column is missing (the message lists those that exist), has a type
        that cannot hold labels, the two sides hold different kinds of label,
        or one-label-per-row text looks like lists (a forgotten ``--sep``)
        and ``single_label`` is not given.
    """
    _need_column(opened, actual, "--actual")
    _need_column(opened, predicted, "--predicted")
    for column in by:
        _need_column(opened, column, "--by")
        if column in (actual, predicted):
            raise UserError(f"--by {column!r} is a label column; group by another column")
    if sample_weight is not None:
        _need_column(opened, sample_weight, "--sample-weight")
        if sample_weight in (actual, predicted, *by):
            raise UserError(
                f"--sample-weight {sample_weight!r} is a label or --by column; "
                "give a numeric column of row weights"
            )
    for column in slices:
        _need_column(opened, column, "--slices")
        if column in (actual, predicted, sample_weight):
            raise UserError(
                f"--slices {column!r} is a label or --sample-weight column; slice by other columns"
            )
    if sep == "":
        raise UserError("--sep must not be empty")
    numbers = _number_sides(opened, actual, predicted)
    if numbers is not None:
        return _prepare_numbers(con, opened, numbers, by, sample_weight)
    a = _side(actual, opened.type_of(actual), sep)
    scored = score_kind(opened.type_of(predicted))
    p = (
        Side(predicted, "scores", scored)
        if scored
        else _side(predicted, opened.type_of(predicted), sep)
    )
    if scored and a.shape == "value":
        raise UserError(
            f"--predicted {predicted!r} holds label scores, so --actual {actual!r} must hold "
            "label lists (e.g. VARCHAR[]) or text split with --sep"
        )
    if (a.shape == "value") != (p.shape == "value"):
        which = actual if a.shape == "value" else predicted
        raise UserError(
            f"column {which!r} holds one label per row but the other side holds lists; "
            "pass --sep to split delimited text, or give two columns of the same shape"
        )
    if a.kind != p.kind:
        raise UserError(
            f"--actual {actual!r} holds {opened.type_of(actual)} labels but --predicted "
            f"{predicted!r} holds {opened.type_of(predicted)}; both sides must hold the same "
            "kind of label (both text or both integers)"
        )
    single = a.shape == "value"
    if single_label and not single:
        raise UserError(
            "--single-label: the label columns hold lists"
            + (" (split with --sep)" if sep is not None else "")
            + "; drop --single-label, or give columns of one label per row"
        )
    if single and a.kind == "text" and not single_label:
        _refuse_delimited(con, opened, (actual, predicted))
    prepared = Prepared(
        opened,
        actual,
        predicted,
        tuple(by),
        a.kind,
        single,
        (a, p),
        sep=sep,
        wide=bool({_element(opened.type_of(c)).id for c in (actual, predicted)} & WIDE_INTEGERS),
        empty_cells=opened.format in ("CSV", "TSV"),
        weight=sample_weight,
        slice_columns=tuple(slices),
    )
    groups = "".join(f"{quote_ident(c)}, " for c in prepared.kept)
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW {PREPARED} AS SELECT {groups}"
        f"{_sql(a, prepared)} AS {ACTUAL}, {_sql(p, prepared)} AS {PREDICTED} FROM {RAW}"
    )
    return prepared


def _number_sides(opened: Opened, actual: str, predicted: str) -> tuple[Side, Side] | None:
    """Both sides as numbers when one holds real numbers (FLOAT, DOUBLE, DECIMAL) and the
    other numbers or, as --actual, booleans (a 0/1 label); None otherwise (the label rules
    then say what a column of labels may hold)."""
    a, p = opened.type_of(actual).id, opened.type_of(predicted).id
    if a not in REAL_TYPES and p not in REAL_TYPES:
        return None
    if a not in (*REAL_TYPES, *INTEGER_TYPES, "boolean") or p not in (*REAL_TYPES, *INTEGER_TYPES):
        return None
    return Side(actual, "number", "number"), Side(predicted, "number", "number")


def _prepare_numbers(
    con: duckdb.DuckDBPyConnection,
    opened: Opened,
    sides: tuple[Side, Side],
    by: tuple[str, ...],
    sample_weight: str | None,
) -> Prepared:
    """The view :data:`PREPARED` of two number columns (read as DOUBLE)."""
    a, p = sides
    prepared = Prepared(
        opened, a.column, p.column, tuple(by), "number", False, sides, weight=sample_weight
    )
    groups = "".join(f"{quote_ident(c)}, " for c in prepared.kept)
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW {PREPARED} AS SELECT {groups}"
        f"{_sql(a, prepared)} AS {ACTUAL}, {_sql(p, prepared)} AS {PREDICTED} FROM {RAW}"
    )
    return prepared


def count_unknown(con: duckdb.DuckDBPyConnection) -> tuple[int, int]:
    """(rows with a NULL side, all rows) of the DuckDB view :data:`PREPARED`."""
    [(unknown, total)] = con.execute(
        f"SELECT count(*) FILTER ({ACTUAL} IS NULL OR {PREDICTED} IS NULL), count(*) "
        f"FROM {PREPARED}"
    ).fetchall()
    return int(unknown), int(total)


def refuse_no_rows(prepared: Prepared, total: int) -> None:
    """Stop on a source of columns but no rows (as on an empty text file): nothing to evaluate.

    Raises
    ------
    UserError
        ``total`` is 0.
    """
    if total == 0:
        raise UserError(
            f"{prepared.opened.path} is empty: it has columns but no rows; mlsql needs rows "
            f"of {prepared.actual!r} and {prepared.predicted!r} to evaluate"
        )


def warn_unknown_rows(prepared: Prepared, unknown: int, total: int) -> None:
    """Say how many rows are left out because a side is NULL (DESIGN: an unknown row)."""
    if unknown:
        warn(
            f"{unknown} of {total} rows have a NULL {prepared.actual!r} or "
            f"{prepared.predicted!r} and are left out as unknown ("
            + (
                "an empty score map or list scores nothing)"
                if prepared.scores
                else "a NULL number is not known)"
                if prepared.numbers
                else "an empty list [] counts as predicting nothing)"
            )
        )


def _refuse_delimited(
    con: duckdb.DuckDBPyConnection, opened: Opened, columns: tuple[str, str]
) -> None:
    """Stop when one-label-per-row text looks like delimited lists (a forgotten --sep).

    Read as one label per row, such a column makes every combination a class
    of its own (tens of thousands of them, and minutes of work for a report
    nobody wanted); ``--single-label`` says that is meant. Reads at most
    1,000 rows through DuckDB, whichever engine evaluates.

    Raises
    ------
    UserError
        A value of the first 1,000 rows looks like a list.
    """
    for column in columns:
        q = quote_ident(column)
        rows = con.execute(
            f"SELECT {q} FROM (SELECT {q} FROM {RAW} LIMIT 1000) "
            f"WHERE regexp_matches(CAST({q} AS VARCHAR), '^\\[.*\\]$|[,;|]') LIMIT 1"
        ).fetchall()
        if rows:
            raise UserError(
                f"column {column!r} holds one label per row, but {rows[0][0]!r} looks like a "
                "list; pass --sep to split it (e.g. --sep ','), or --single-label if each "
                "value is one label"
            )
