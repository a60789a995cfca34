"""The indicator helpers of the PostgreSQL library on a live server: labels_from_indicators
and indicators_from_labels against a plain-Python oracle on random rows (NULL indicators
and lists, repeats, universes with repeats and NULL), the round trip, and DuckDB's texts
for bad input."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from tests.test_postgres_library import check_same_error, library_database

psycopg = pytest.importorskip("psycopg")


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_indicators")


def from_indicators(indicators: list[Any] | None, labels: list[Any]) -> list[Any] | None:
    """The oracle: NULL where any indicator is; else the labels whose indicator is 1."""
    if indicators is None or None in indicators:
        return None
    return [x for x, i in zip(labels, indicators, strict=True) if i]


def to_indicators(actual: list[Any] | None, labels: list[Any]) -> list[Any] | None:
    """The oracle: per label of the universe as given, 1 where the list holds it (NULL for a
    NULL label)."""
    if actual is None:
        return None
    return [None if x is None else int(x in actual) for x in labels]


@pytest.mark.parametrize("kind", ["text", "bigint"])
def test_both_equal_the_oracle_on_random_rows(pg: Any, kind: str) -> None:
    rng = random.Random(f"pg-indicators-{kind}")
    names: list[Any] = ["a", "b", "c 'd'"] if kind == "text" else [1, 2, 2**40]
    for _ in range(40):
        n = rng.randint(0, 3)
        labels = rng.sample(names, n)
        indicators: Any = [rng.choice([0, 1, 1, None if rng.random() < 0.1 else 0]) for _ in labels]
        if rng.random() < 0.1:
            indicators = None
        got = pg.execute(
            f"SELECT labels_from_indicators(%s::int[], %s::{kind}[])", [indicators, labels]
        ).fetchone()[0]
        assert got == from_indicators(indicators, labels), (indicators, labels)
        booleans = (
            None if indicators is None else [None if i is None else bool(i) for i in indicators]
        )
        got = pg.execute(
            f"SELECT labels_from_indicators(%s::boolean[], %s::{kind}[])", [booleans, labels]
        ).fetchone()[0]
        assert got == from_indicators(indicators, labels)
        actual: Any = [rng.choice([*names, None]) for _ in range(rng.randint(0, 4))]
        if rng.random() < 0.1:
            actual = None
        universe = [rng.choice([*names, None]) for _ in range(rng.randint(0, 4))]
        got = pg.execute(
            f"SELECT indicators_from_labels(%s::{kind}[], %s::{kind}[])", [actual, universe]
        ).fetchone()[0]
        assert got == to_indicators(actual, universe), (actual, universe)


def test_the_round_trip(pg: Any) -> None:
    """A list's indicators over a universe holding its labels give the list back, in the
    universe's order."""
    got = pg.execute(
        "SELECT labels_from_indicators(indicators_from_labels(ARRAY['c', 'a', 'a'],"
        " ARRAY['a', 'b', 'c']), ARRAY['a', 'b', 'c'])"
    ).fetchone()[0]
    assert got == ["a", "c"]


BAD_CALLS = [
    "labels_from_indicators([1, 2, 1], ['a', 'b', 'c'])",
    "labels_from_indicators([0.5, 1], [1, 2])",
    "labels_from_indicators([1, 0], ['a', 'b', 'c'])",
    "indicators_from_labels(['a', 'c'], [1, 2])",
    "indicators_from_labels([1, 3], ['a'])",
]


@pytest.mark.parametrize("call", BAD_CALLS)
def test_errors_say_what_duckdb_says(pg: Any, duck: Any, call: str) -> None:
    pg_call = call.replace("[", "ARRAY[")
    names = {"(VARCHAR[]):": "(text[]):", "(INTEGER[]):": "(bigint[]):"}
    check_same_error(pg, f"SELECT {pg_call}", duck, f"SELECT {call}", names)


def test_every_indicator_is_checked_and_a_null_name_is_no_label(pg: Any) -> None:
    """As in every engine: a NULL name is no label, a repeated one stays, and an indicator
    other than 0 or 1 is an error in a row that a NULL indicator makes NULL too."""
    call = "SELECT labels_from_indicators(%s::int[], ARRAY['c', NULL, 'c'])"
    assert pg.execute(call, [[1, 1, 1]]).fetchone()[0] == ["c", "c"]
    assert pg.execute(call, [[1, None, 1]]).fetchone()[0] is None
    with pytest.raises(Exception, match="Got 2 instead"):
        pg.execute(call, [[2, None, 1]]).fetchone()
