"""Hivemall's ranking example (@k, both k, graded nDCG) on every engine."""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pytest

from tests import oracle_ranking as oracle
from tests.conftest import conformance


@pytest.fixture
def engine(engine):
    """Each engine, skipping (with the registry's reason) a measure it lacks."""
    return oracle.Available(engine)


DATA = conformance("hivemall_ranking.json")
REL = 1e-12
#: Hivemall's name in the conformance file -> mlsql's (its ranking auc is ranking_auc)
NAMES = {"auc": "ranking_auc"}


def close(got: Any, want: float) -> bool:
    return got is not None and math.isclose(got, want, rel_tol=REL, abs_tol=REL)


def ranked_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.table(
        {
            "rank_items": pa.array([r["rank_items"] for r in rows], pa.list_(pa.int64())),
            "correct_items": pa.array([r["correct_items"] for r in rows], pa.list_(pa.int64())),
        }
    )


CASES = [
    (k, NAMES.get(name, name), want)
    for k in (4, 2)
    for name, want in DATA[f"expected_at_{k}"].items()
]


@pytest.mark.parametrize(("k", "name", "want"), CASES, ids=lambda v: str(v))
def test_hivemall_at_k(engine, k, name, want):
    got = engine.aggregate(
        name, ranked_table(DATA["rows"]), columns=("rank_items", "correct_items"), k=k
    )
    assert close(got, want), f"{engine.name} {name}@{k}: {got} != {want}"


@pytest.mark.parametrize("name", sorted({name for _, name, _ in CASES}))
def test_without_k_the_whole_list_is_ranked(engine, name):
    hivemall = {m: h for h, m in NAMES.items()}.get(name, name)
    want = DATA["expected_at_4"][hivemall]  # the lists have 4 items
    got = engine.aggregate(
        name, ranked_table(DATA["rows"]), columns=("rank_items", "correct_items")
    )
    assert close(got, want)


def test_the_conformance_numbers_agree_with_the_oracle():
    rows = [(r["rank_items"], r["correct_items"]) for r in DATA["rows"]]
    for k, name, want in CASES:
        assert math.isclose(float(oracle.mean_over_rows(oracle.AT_K[name], rows, k)), want)


@pytest.mark.parametrize("key", sorted(DATA["graded_ndcg"]["expected"]))
def test_hivemall_graded_ndcg(engine, key):
    g = DATA["graded_ndcg"]
    table = pa.table(
        {
            "ranked_relevance": pa.array([g["recommended_relevance"]], pa.list_(pa.float64())),
            "ideal_relevance": pa.array([g["ideal_relevance"]], pa.list_(pa.float64())),
        }
    )
    k = int(key.removeprefix("k="))
    got = engine.aggregate(
        "graded_ndcg", table, columns=("ranked_relevance", "ideal_relevance"), k=k
    )
    want = g["expected"][key]
    assert close(got, want), f"{engine.name} graded_ndcg@{k}: {got} != {want}"
    assert math.isclose(
        oracle.graded_ndcg(g["recommended_relevance"], g["ideal_relevance"], k), want
    )


def test_map_is_not_the_pre_2017_value(engine):
    """rank.md prints MAP 0.5556 / 0.3333 (the pre-2017 definition): a test reproducing those is wrong."""
    table = ranked_table(DATA["rows"])
    got = engine.aggregate("average_precision", table, columns=("rank_items", "correct_items"), k=4)
    assert not math.isclose(got, 0.5556, abs_tol=1e-3)


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
