"""How a source string becomes SQL: a table or view name, a file path, or a query.

One rule for the Python functions (:mod:`mlsql._duckdb.label_tables`) and the SQL table
macros (``label_metrics('preds', ...)``, ``confusion_matrix(...)``):

1. A table or view of exactly that name wins (Python checks the catalog;
   a DuckDB table macro cannot, so in SQL rule 2 comes first).
2. Text that starts like a query, a keyword followed by a space or ``(``
   (``SELECT ...``, ``FROM t``, ``VALUES (1)``) or ``(``, is a query. A name
   that merely begins with a keyword (``table1``, ``selected``, ``values``,
   ``from_2024``, ``describe_runs``) is not.
3. Text holding ``"`` is a name as SQL writes it when it is one
   (``"my schema".t``, quotes inside doubled), else one name taken whole (``a"b``).
4. Anything else is read by ``query_table``: a name, a qualified name
   (``s.t``) or a file path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from mlsql._duckdb.library import Qualify, sql_message
from mlsql._front.tables import MISSING_COLUMN

#: text that starts like a query (also a RE2 pattern for the SQL macros, used case-insensitively)
QUERY_PATTERN = (
    r"^\s*(\(|(select|from|with|values|table|pivot|unpivot|summarize|describe|show)(\s|\())"
)
QUERY_START = re.compile(QUERY_PATTERN, re.I)
#: a (qualified) name as SQL writes it, quoted parts included (also RE2)
_PART = r'("([^"]|"")*"|[A-Za-z_][A-Za-z0-9_]*)'
NAME_PATTERN = rf"{_PART}(\.{_PART})*"


def looks_like_query(text: str) -> bool:
    """Whether ``text`` starts like a query (rule 2).

    Examples
    --------
    >>> [looks_like_query(t) for t in ("SELECT 1", "values (1)", "table1", "values", "from_2024")]
    [True, True, False, False, False]
    """
    return bool(QUERY_START.match(text))


def quoted_name_sql(text: str) -> str | None:
    """``FROM ...`` for a source holding ``"`` (rule 3); None for other text.

    Examples
    --------
    >>> quoted_name_sql('a"b'), quoted_name_sql('"my schema".t'), quoted_name_sql("t")
    ('FROM "a""b"', 'FROM "my schema".t', None)
    """
    if '"' not in text:
        return None
    if re.fullmatch(NAME_PATTERN, text):
        return f"FROM {text}"
    return 'FROM "' + text.replace('"', '""') + '"'


#: the scalar macro of a source's query text (:func:`source_text_sql`), which every table
#: macro's read calls: the rules written once in the library, not in each table macro
SOURCE_TEXT = "_mlsql_source_text"


def source_text_sql(source: str = "source") -> str:
    """SQL of the query text that reads the text parameter ``source`` by rules 2-4 (the body
    of :data:`SOURCE_TEXT`)."""
    return (
        f"CASE WHEN regexp_matches({source}, '{QUERY_PATTERN}', 'i') THEN {source}\n"
        f"                 WHEN contains({source}, '\"') AND regexp_full_match({source}, '{NAME_PATTERN}')"
        f" THEN 'FROM ' || {source}\n"
        f"                 WHEN contains({source}, '\"') "
        f"THEN 'FROM \"' || replace({source}, '\"', '\"\"') || '\"'\n"
        f"                 ELSE 'FROM query_table(''' || replace({source}, '''', '''''') || ''')' END"
    )


def read_source_sql(q: Qualify) -> str:
    """SQL (for a table macro) reading its text parameter ``source`` by rules 2-4."""
    return f"query({q(SOURCE_TEXT)}(source))"


#: the column a table macro adds to its source so that the group key is never empty
ALL = "__mlsql_all"
#: the column a table macro adds to its source: NULL, or the error of a named column the
#: source lacks (:func:`checked_source_sql`); :func:`pick_sql` falls back on it
ABSENT = "__mlsql_absent"


#: ``typed`` for :func:`checked_source_sql` and the stand-in for :func:`pick_sql` of a label-list
#: macro's ``actual``: with both label columns missing, two untyped NULLs bound no list macro
#: (cast_to_type to NULL, ambiguous overloads) before the check could name the missing column
LIST_STAND_IN = {"actual": "VARCHAR[]"}
LIST_ACTUAL = f"{ABSENT}_actual"


#: what a source column whose name starts with ``__mlsql_`` (any case: mlsql's own names) is
#: renamed to, this prefix before it, so that it never meets mlsql's columns; no name of
#: mlsql's starts so. :func:`pick_sql` finds it by the name the caller gives.
USER_PREFIX = "__mlsql_user_"


#: the table macro of the source with its columns named ``__mlsql_...`` renamed
#: (:func:`renamed_body_sql`), which every checked source reads
RENAMED = "_mlsql_renamed_source"


def renamed_body_sql(q: Qualify) -> str:
    """SQL (the body of the table macro :data:`RENAMED`, parameter ``source``) of the source
    with its columns named ``__mlsql_...`` renamed (:data:`USER_PREFIX`); a NULL column
    ``__mlsql_`` first, kept as it is and renamed too, so that each ``COLUMNS`` always
    matches one (a source of mlsql's names only, as the command line's score tables read,
    left the first one empty: a Binder Error)."""
    return (
        f"(SELECT COLUMNS(lambda c: c = '__mlsql_' OR NOT regexp_matches(c, '^__mlsql_', 'i')),\n"
        f"               COLUMNS('(?i)^(__mlsql_.*)$') AS '{USER_PREFIX}\\1'\n"
        f"        FROM (SELECT NULL AS __mlsql_, * FROM {read_source_sql(q)}))"
    )


def renamed_source_sql(q: Qualify) -> str:
    """SQL (FROM) of the source renamed (:data:`RENAMED`)."""
    return f"{q(RENAMED)}(source)"


def source_columns_sql(q: Qualify) -> str:
    """SQL of the column names (a VARCHAR list) of a macro's text parameter ``source``, read
    without reading a row."""
    return (
        "(SELECT list_value(*COLUMNS(lambda c: c <> '__mlsql_one')) FROM (\n"
        "            SELECT alias(COLUMNS(*)) FROM (SELECT 1 AS __mlsql_one)\n"
        f"            LEFT JOIN (SELECT * FROM {read_source_sql(q)} LIMIT 0) ON true))"
    )


#: the scalar macro (:func:`missing_column_sql`) of NULL, or of the error naming the first
#: named column a source lacks
MISSING = "_mlsql_missing_column"


def missing_column_sql(q: Qualify) -> str:
    """SQL (the body of :data:`MISSING`, parameters ``source``, ``wanted``, ``roles`` and
    ``func``) of NULL, or of the error naming the first of the ``wanted`` column names (of
    ``roles``) that is not among the columns of the text parameter ``source``
    (:func:`source_columns_sql`). Names compare as DuckDB compares identifiers,
    case-insensitively. The message is :data:`mlsql._front.tables.MISSING_COLUMN`, as Polars
    and Spark raise it; a NULL name names no column, shown as the Python functions show None.
    """
    message = sql_message(
        MISSING_COLUMN, "func", "r[i]", "coalesce(w[i], 'None')", "array_to_string(n, ', ')"
    )
    found = (
        "lambda x: x IS NOT NULL AND list_contains(list_transform(n, lambda y: lower(y)), lower(x))"
    )
    return f"""(SELECT CASE WHEN i IS NULL THEN NULL ELSE error({message}) END FROM (
            SELECT n, w, r, list_position(list_transform(w, {found}), false) AS i
            FROM (SELECT {source_columns_sql(q)} AS n, wanted AS w, roles AS r)))"""


#: the table macro of the source checked (:func:`checked_body_sql`), which every table macro
#: reads (:func:`checked_source_sql`)
CHECKED = "_mlsql_checked_source"


def checked_body_sql(q: Qualify) -> str:
    """SQL (the body of the table macro :data:`CHECKED`, parameters ``source``, ``wanted``,
    ``roles``, ``by_names``, ``func`` and ``by_ok``) of the source renamed (:data:`RENAMED`)
    with the columns :data:`ALL` and :data:`ABSENT`; it raises :data:`MISSING`'s error (once,
    even on an empty source) naming the first of the ``wanted`` columns (of ``roles``) or of
    the group columns ``by_names`` that the source lacks, when ``by_ok`` (the check of
    ``by``, run first) is true."""
    groups = "coalesce(by_names, [])"
    wanted = f"wanted || {groups}"
    roles = f"roles || list_transform({groups}, lambda b: 'by')"
    check = f"{q(MISSING)}(source, {wanted}, {roles}, func)"
    return (
        f"SELECT * FROM (SELECT *, 0 AS {ALL}, CASE WHEN by_ok THEN {check} END AS {ABSENT}\n"
        f"        FROM {renamed_source_sql(q)}) WHERE {ABSENT} IS NULL"
    )


def checked_source_sql(
    q: Qualify,
    named: Sequence[tuple[str, str]],
    func: str,
    by: str,
    typed: Mapping[str, str] | None = None,
    by_check: str | None = None,
) -> str:
    """SQL of a subquery reading the source checked (:data:`CHECKED`): the error of a named
    column (``named``: (role, SQL of the name given) pairs) or a ``by`` column (``by``: the SQL
    of a list of group column names) not in the source, after ``by_check`` (SQL of true, or
    of the error of a bad ``by``: ``mlsql._duckdb.classification_checks.check_by``), run once
    too; ``func`` the SQL of the function's name.

    ``typed`` maps a role to a SQL type: :data:`ABSENT` cast to it is the column
    ``__mlsql_absent_<role>``, the stand-in :func:`pick_sql` binds to where a macro's
    overloads need a type (never read: the check has raised first).
    """
    wanted = f"[{', '.join(f'CAST({name} AS VARCHAR)' for _, name in named)}]"
    roles = f"[{', '.join(repr(role) for role, _ in named)}]"
    by_ok = "true" if by_check is None else f"(SELECT {by_check})"
    casts = "".join(f", CAST({ABSENT} AS {t}) AS {ABSENT}_{r}" for r, t in (typed or {}).items())
    return f"(SELECT *{casts} FROM {q(CHECKED)}(source, {wanted}, {roles}, {by}, {func}, {by_ok}))"


def name_or(name: str, other: str) -> str:
    """SQL of the column name ``name``, else (NULL) ``other``, as text: names of other types
    (a number) are refused as columns the source lacks, not by DuckDB's binder."""
    return f"coalesce(CAST({name} AS VARCHAR), CAST({other} AS VARCHAR))"


#: the scalar macro (:func:`picks_sql`) telling whether a source column is the one a table
#: macro's name parameter names: in every ``COLUMNS`` lambda of :func:`pick_sql`
PICKS = "_mlsql_picks"


def picks_sql() -> str:
    """SQL (the body of :data:`PICKS`, parameters ``c``, ``name`` and ``stand_in``) of whether
    column ``c`` of :func:`checked_source_sql` is the one named ``name`` (case-insensitive, a
    name of :data:`USER_PREFIX` renamed as the source was) or the stand-in column."""
    # a name of another type (a number) is its text, as in the source's check, which says
    # it is not a column: not DuckDB's binder error on lower(INTEGER)
    text = "CAST(name AS VARCHAR)"
    user = f"CASE WHEN regexp_matches({text}, '^__mlsql_', 'i') THEN '{USER_PREFIX}' || {text} ELSE {text} END"
    return f"lower(c) = lower({user}) OR c = stand_in"


def pick_sql(q: Qualify, name: str, stand_in: str = ABSENT) -> str:
    """SQL of the source column named by the SQL text parameter ``name`` (case-insensitive),
    read from :func:`checked_source_sql`; a name it lacks binds to ``stand_in``
    (:data:`ABSENT`, or a typed one), so that the source's check, not DuckDB's binder,
    says what is wrong.

    :data:`ABSENT` is an untyped NULL, so ``coalesce`` keeps the column's own type (and
    costs little per row); a typed stand-in would make ``coalesce`` cast the column to a
    common type, so the first of the two is taken from a struct instead (dearer per row:
    a third more time for ``label_metrics`` on 2M rows).

    Examples
    --------
    >>> pick_sql(lambda n: n, "model")
    "coalesce(*COLUMNS(lambda c: _mlsql_picks(c, model, '__mlsql_absent')))"
    """
    columns = f"*COLUMNS(lambda c: {q(PICKS)}(c, {name}, '{stand_in}'))"
    if stand_in == ABSENT:
        return f"coalesce({columns})"
    return f"struct_extract_at(struct_pack({columns}), 1)"
