"""The ranked-list family of the PostgreSQL library on a live server.

Hivemall's ranking conformance numbers (its @2 and @4 table, graded nDCG), every ranked-list
aggregate of the registry against the plain-Python oracle (tests/oracle_ranking.py, through
tests/references.py) on the random tables of item lists (NULL items, repeats, NULL lists,
all rows unknown, no rows) with integer and text items, weights as repeated rows, and the
errors as DuckDB words them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from mlsql._postgres import ranking
from mlsql._postgres.library import included, missing
from mlsql._registry import Measure, measures
from tests.conftest import conformance
from tests.references import REFERENCES, close, tables
from tests.test_postgres_library import (
    check_references,
    check_same_error,
    check_weights_repeat_rows,
    library_database,
)

psycopg = pytest.importorskip("psycopg")

#: the ranking aggregates the library holds, by the registry
MEASURES = [m for m in measures(family="ranking") if included(m)]
ITEMS = ("rank_items", "correct_items", "nonrelevant_items")
GRADES = ("ranked_relevance", "ideal_relevance")


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_ranking")


def loader(element: str) -> Any:
    """A loader of the ranked tables as the temporary table t, items as ``element``."""

    def load(con: Any, table: pa.Table, weights: list[Any] | None = None) -> None:
        con.execute("DROP TABLE IF EXISTS t")
        columns = [f"{c} {element}[]" for c in ITEMS] + [f"{c} float8[]" for c in GRADES]
        con.execute(f"CREATE TEMP TABLE t ({', '.join(columns)}, w float8)")
        weights = weights or [1.0] * table.num_rows
        values = [table[c].to_pylist() for c in (*ITEMS, *GRADES)]
        if element == "text":
            values[:3] = [[_texts(x) for x in column] for column in values[:3]]
        casts = [f"%s::{element}[]"] * 3 + ["%s::float8[]"] * 2 + ["%s"]
        with con.cursor() as cur:
            cur.executemany(
                f"INSERT INTO t VALUES ({', '.join(casts)})",
                list(zip(*values, weights, strict=True)),
            )

    return load


def _texts(items: list[Any] | None) -> list[Any] | None:
    return None if items is None else [None if x is None else f"item {x}" for x in items]


def call(m: Measure, params: dict[str, Any], table: Any = None, weight: str | None = None) -> Any:
    """``m`` called positionally, as Hivemall writes it: inputs, parameters, sample_weight."""
    args, values = list(m.inputs), []
    if params or weight:
        for p in m.params:
            args.append("%s::float8")
            values.append(params.get(p.name, p.default))
    if weight:
        args.append(weight)
    return f"{m.name}({', '.join(args)})", values


def test_the_library_holds_the_ranked_list_family() -> None:
    """Every ranking aggregate over lists and grades; the score-map ones say why not."""
    names = {m.name for m in MEASURES}
    family = {m.name for m in measures(family="ranking")}
    assert names == family - set(ranking.LEFT_OUT)
    assert {"precision_at", "ndcg", "graded_ndcg", "bpref", "rbp", "ranking_auc"} <= names
    gaps = missing()
    assert all("map" in gaps[name] for name in ranking.LEFT_OUT)
    assert all(m.name in REFERENCES for m in MEASURES)


def test_hivemall_s_ranking_numbers(pg: Any) -> None:
    """Hivemall's rank.md example at k = 4 and k = 2 (``auc`` over lists is its ranking
    AUC), and its graded nDCG test."""
    data = conformance("hivemall_ranking.json")
    pg.execute("DROP TABLE IF EXISTS h")
    pg.execute("CREATE TEMP TABLE h (rank_items bigint[], correct_items bigint[])")
    for row in data["rows"]:
        pg.execute("INSERT INTO h VALUES (%s, %s)", (row["rank_items"], row["correct_items"]))
    for k in (4, 2):
        expected = data[f"expected_at_{k}"]
        calls = [f"{name}(rank_items, correct_items, {k})" for name in expected]
        calls.append(f"ranking_auc(rank_items, correct_items, {k})")
        got = pg.execute(f"SELECT {', '.join(calls)} FROM h").fetchone()
        want = [*expected.values(), expected["auc"]]
        assert all(close(g, w) for g, w in zip(got, want, strict=True)), (k, got, want)
    graded = data["graded_ndcg"]
    for key, want in graded["expected"].items():
        got = pg.execute(
            "SELECT graded_ndcg(%s::float8[], %s::float8[], %s)",
            (graded["recommended_relevance"], graded["ideal_relevance"], int(key[2:])),
        ).fetchone()[0]
        assert close(got, want), (key, got, want)


@pytest.mark.parametrize("element", ["bigint", "text"])
def test_measures_match_their_reference(pg: Any, element: str) -> None:
    """Every aggregate with every parameter set of its reference on the random tables of
    item lists, all rows unknown, and no rows; items as integers and as text."""
    check_references(pg, MEASURES, "ranked", 8, loader(element), call)


def test_weights_count_as_repeated_rows(pg: Any) -> None:
    """A whole sample_weight (some 0, some NULL: the row left out) gives the reference's
    value over the rows repeated."""
    check_weights_repeat_rows(pg, MEASURES, "ranked", loader("bigint"), "pg-ranking", call)


def test_a_fractional_weight_is_a_weighted_mean(pg: Any) -> None:
    """Weights 0.25 and 0.75 on two rows of precision 1 and 0: the mean weighs them."""
    pg.execute("DROP TABLE IF EXISTS f")
    pg.execute("CREATE TEMP TABLE f (r bigint[], c bigint[], w float8)")
    pg.execute("INSERT INTO f VALUES ('{1}', '{1}', 0.25), ('{2}', '{1}', 0.75)")
    got = pg.execute("SELECT precision_at(r, c, NULL, w), precision_at(r, c) FROM f").fetchone()
    assert got == (0.25, 0.5)


def test_groups_are_independent(pg: Any) -> None:
    """GROUP BY gives each group the value of its rows alone."""
    rng = random.Random("pg-ranking-groups")
    table = tables("ranked", range(1))[0]
    load = loader("bigint")
    load(pg, table)
    groups = [rng.choice("ab") for _ in range(table.num_rows)]
    pg.execute("ALTER TABLE t ADD COLUMN g text, ADD COLUMN i serial")
    for i, g in enumerate(groups, start=1):
        pg.execute("UPDATE t SET g = %s WHERE i = %s", (g, i))
    got = dict(pg.execute("SELECT g, ndcg(rank_items, correct_items, 3) FROM t GROUP BY g"))
    for g in set(groups):
        part = table.filter(pa.array([x == g for x in groups]))
        assert close(got[g], REFERENCES["ndcg"].expected(part, {"k": 3})), g


BAD_CALLS = [
    ("precision_at(r, c, 0)", "precision_at(r, c, k := 0)"),
    ("recall_at(r, c, 1.5)", "recall_at(r, c, k := 1.5)"),
    ("ndcg(r, c, 'NaN'::float8)", "ndcg(r, c, k := 'NaN'::DOUBLE)"),
    ("rbp(c, r, 1)", "rbp(c, r, p := 1)"),
    ("rbp(c, r, 0)", "rbp(c, r, p := 0)"),
    ("hitrate(r, c, 2, -1)", "hitrate(r, c, k := 2, sample_weight := -1)"),
    ("graded_ndcg(g, g, 0)", "graded_ndcg(g, g, k := 0)"),
]


@pytest.fixture(scope="module")
def duck(duck: Any) -> Any:
    """conftest's DuckDB with mlsql, holding a table t of ranks."""
    duck.execute(
        "CREATE TABLE t AS SELECT [1, 2]::BIGINT[] AS r, [2]::BIGINT[] AS c, [1.0, 2.0] AS g"
    )
    return duck


@pytest.mark.parametrize(("pg_call", "duckdb_call"), BAD_CALLS)
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, pg_call: str, duckdb_call: str) -> None:
    pg.execute("DROP TABLE IF EXISTS e")
    pg.execute("CREATE TEMP TABLE e AS SELECT '{1,2}'::bigint[] AS r, '{2}'::bigint[] AS c")
    pg.execute("ALTER TABLE e ADD COLUMN g float8[] DEFAULT '{1,2}'")
    check_same_error(pg, f"SELECT {pg_call} FROM e", duck, f"SELECT {duckdb_call} FROM t")


@pytest.mark.parametrize(
    ("pg_call", "names"),
    [
        ("precision_at(ARRAY[1, 2], ARRAY['a'])", ("rank_items bigint[]", "correct_items text[]")),
        ("auc(ARRAY['a'], ARRAY[1])", ("rank_items text[]", "correct_items bigint[]")),
        ("bpref(ARRAY[1], ARRAY[1], ARRAY['x'])", ("correct_items", "nonrelevant_items text[]")),
        ("graded_ndcg(ARRAY['a'], ARRAY[1.0])", ("numeric relevance", "ranked_relevance text[]")),
    ],
)
def test_inputs_of_the_wrong_kind_are_an_error_naming_them(
    pg: Any, pg_call: str, names: tuple[str, ...]
) -> None:
    """Lists of two kinds, or grades that are not numbers: DuckDB's message, not
    PostgreSQL's "function does not exist" (also over no rows)."""
    with pytest.raises(psycopg.Error) as raised:
        pg.execute(f"SELECT {pg_call} WHERE false").fetchall()
    message = raised.value.diag.message_primary or ""
    assert all(n in message for n in names), message
