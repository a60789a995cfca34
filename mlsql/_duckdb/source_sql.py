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


def read_source_sql(source: str = "source") -> str:
    """SQL (for a table macro) reading the text parameter ``source`` by rules 2-4."""
    return (
        f"query(CASE WHEN regexp_matches({source}, '{QUERY_PATTERN}', 'i') THEN {source}\n"
        f"                 WHEN contains({source}, '\"') AND regexp_full_match({source}, '{NAME_PATTERN}')"
        f" THEN 'FROM ' || {source}\n"
        f"                 WHEN contains({source}, '\"') "
        f"THEN 'FROM \"' || replace({source}, '\"', '\"\"') || '\"'\n"
        f"                 ELSE 'FROM query_table(''' || replace({source}, '''', '''''') || ''')' END)"
    )
