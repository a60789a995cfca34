"""Hivemall's ``fmeasure`` in the PostgreSQL library on a live server.

Hivemall's binary example (int, boolean and -1 labels) and blog-tag example (micro F1, F2
and F0.5 through '-beta'), sets counted once, weights as repeated rows, and the option
errors as DuckDB words them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import conformance
from tests.test_multilabel_conformance import rows_of
from tests.test_postgres_library import check_same_error, library_database

psycopg = pytest.importorskip("psycopg")

BINARY = conformance("hivemall_binary.json")
TAGS = conformance("hivemall_blog_tags.json")


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_hivemall")


def _binary_rows(kind: str) -> str:
    """The binary example as a VALUES list: int 0/1, boolean, or -1 for 0."""
    out = []
    for r in BINARY["rows"]:
        a, p = r["actual"], r["predicted"]
        if kind == "bool":
            out.append(f"({str(a == 1).lower()}, {str(p == 1).lower()})")
        else:
            out.append(
                f"({a or -1 if kind == 'minus_one' else a}, {p or -1 if kind == 'minus_one' else p})"
            )
    return f"(VALUES {', '.join(out)}) v(actual, predicted)"


@pytest.mark.parametrize("kind", ["int", "bool", "minus_one"])
def test_the_binary_example(pg: Any, kind: str) -> None:
    """Every expression of Hivemall's binary example, and the default (micro, beta 1)."""
    table = _binary_rows(kind)
    for expression, want in BINARY["expected"].items():
        got = pg.execute(f"SELECT {expression} FROM {table}").fetchone()[0]
        assert got == pytest.approx(want, rel=1e-12), (kind, expression)
    # under micro every row carries one label (1 or 0), so F equals accuracy: 3 of 6
    assert pg.execute(f"SELECT fmeasure(actual, predicted) FROM {table}").fetchone()[0] == 0.5


def test_the_blog_tags(pg: Any) -> None:
    """Hivemall's blog tags: micro F1, F2 and F0.5 as fmeasure with its -beta option."""
    rows = rows_of("hivemall_blog_tags.json")
    values = ", ".join("(%s::text[], %s::text[])" for _ in rows)
    flat = [x for r in rows for x in r]
    table = f"(VALUES {values}) v(actual, predicted)"
    for options, key in (("", "micro.f1"), ("-beta 2", "micro.f2"), ("--beta 0.5", "micro.f0.5")):
        got = pg.execute(f"SELECT fmeasure(actual, predicted, '{options}') FROM {table}", flat)
        assert got.fetchone()[0] == pytest.approx(TAGS["expected"][key], rel=1e-12), key


def test_sets_weights_and_nothing_to_score(pg: Any) -> None:
    """A repeated label counts once (2·1/(2+1), where Hivemall's counts it twice); weights
    count as repeated rows; nothing true or predicted is 0."""
    one = "(VALUES (ARRAY['a', 'b'], ARRAY['a', 'a'])) v(actual, predicted)"
    assert pg.execute(f"SELECT fmeasure(actual, predicted) FROM {one}").fetchone()[
        0
    ] == pytest.approx(2 / 3)
    weighted = "(VALUES (1, 1, 2.0), (0, 1, 1.0), (1, 0, 0.0)) v(a, p, w)"
    repeated = "(VALUES (1, 1), (1, 1), (0, 1)) v(a, p)"
    got = pg.execute(f"SELECT fmeasure(a, p, '-average binary', w) FROM {weighted}").fetchone()[0]
    want = pg.execute(f"SELECT fmeasure(a, p, '-average binary') FROM {repeated}").fetchone()[0]
    assert got == want == pytest.approx(2 * 2 / (2 * 2 + 1))
    empty = "(VALUES (ARRAY[]::text[], ARRAY[]::text[])) v(actual, predicted)"
    assert pg.execute(f"SELECT fmeasure(actual, predicted) FROM {empty}").fetchone()[0] == 0.0


BAD_OPTIONS = ["junk", "-beta x", "-beta -1.5", "-average macro", "-average weighted"]
#: ASCII's blanks and decimals only, as in every engine (PostgreSQL took a vertical tab and
#: refused 1_0 where DuckDB read 10)
BAD_OPTIONS += ["-beta\v2", "-beta 1_0", "-beta\u00a02"]


@pytest.mark.parametrize("options", [*BAD_OPTIONS, "binary on arrays", "label 2"])
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, options: str) -> None:
    if options == "binary on arrays":
        call, table = "fmeasure(actual, predicted, '-average binary')", "(VALUES (['a'], ['a']))"
    elif options == "label 2":
        call, table = "fmeasure(actual, predicted)", "(VALUES (2, 1))"
    else:
        call, table = f"fmeasure(actual, predicted, '{options}')", "(VALUES (1, 1))"
    pg_table = table.replace("['a']", "ARRAY['a']")
    check_same_error(
        pg,
        f"SELECT {call} FROM {pg_table} v(actual, predicted)",
        duck,
        f"SELECT {call} FROM {table} v(actual, predicted)",
    )
