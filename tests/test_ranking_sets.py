"""From scores to label lists (top_k, above_threshold, top_k_above) on every engine.

The adapters' ``per_row`` takes (actual, predicted); these one-input functions
run through ``aggregate`` on one-row tables instead (its single value is that
row's list).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import oracle_ranking as oracle

#: Spark's cases are long as a whole (tests/conftest.py reads this): CI's long tests run
#: them; the README's suite, at 10 min 20 s with them, stays under ten minutes
LONG_ENGINES = ("spark",)


@pytest.fixture
def engine(engine):
    """Each engine, skipping (with the registry's reason) a measure it lacks."""
    return oracle.Available(engine)


MAPS = [
    {"a": 0.2, "b": 0.9, "c": 0.5},
    {"b": 0.5, "a": 0.5, "c": 0.5, "d": 0.1},  # ties: by label
    {"a": None, "b": 0.3},  # a NULL score is no score
    {},
    None,
]


def scores_table(scores: Any, key: pa.DataType | None = None, form: str = "map") -> pa.Table:
    """One row of scores: a map, or a list of {label, score} structs."""
    return pa.table({"scores": oracle.score_column([scores], form, key)})


def as_list(value: Any) -> Any:
    """A list value as a Python list (a DataFrame's ``item()`` gives a Series)."""
    return value.to_list() if hasattr(value, "to_list") else value


def run(engine: Any, name: str, scores: Any, form: str = "map", **params: Any) -> Any:
    table = scores_table(scores, form=form)
    return as_list(engine.aggregate(name, table, columns=("scores",), **params))


@pytest.mark.parametrize("form", oracle.FORMS)
@pytest.mark.parametrize("scores", MAPS, ids=str)
@pytest.mark.parametrize("k", [None, 0, 1, 2, 10])
def test_top_k(engine, scores, k, form):
    params = {} if k is None else {"k": k}
    assert run(engine, "top_k", scores, form, **params) == oracle.top_k(scores, k)


@pytest.mark.parametrize("name", ["top_k", "top_k_above"])
def test_a_k_beyond_32_bits_keeps_every_label(engine, name):
    """k = 10**12 keeps every label in every engine (Spark's INT slice length overflowed)."""
    scores = {"a": 0.2, "b": 0.9, "c": 0.5}
    if name == "top_k":
        assert run(engine, name, scores, k=10**12) == oracle.top_k(scores, 10**12)
    else:
        got = run(engine, name, scores, k=10**12, threshold=0.3)
        assert got == oracle.top_k_above(scores, 10**12, 0.3)


@pytest.mark.parametrize("form", oracle.FORMS)
@pytest.mark.parametrize("scores", MAPS, ids=str)
@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 1.0])
def test_above_threshold_keeps_scores_at_or_above(engine, scores, threshold, form):
    got = run(engine, "above_threshold", scores, form, threshold=threshold)
    assert got == oracle.above_threshold(scores, threshold)


@pytest.mark.parametrize("scores", MAPS, ids=str)
@pytest.mark.parametrize(("k", "threshold"), [(1, 0.5), (2, 0.1), (0, 0.0), (None, 0.5)])
def test_top_k_above(engine, scores, k, threshold):
    got = run(engine, "top_k_above", scores, k=k, threshold=threshold)
    assert got == oracle.top_k_above(scores, k, threshold)


def test_documented_examples(engine):
    scores = {"a": 0.5, "b": 0.9, "c": 0.5}
    assert run(engine, "top_k", scores, k=2) == ["b", "a"]
    assert run(engine, "above_threshold", scores, threshold=0.5) == ["b", "a", "c"]
    assert run(engine, "top_k_above", scores, k=1, threshold=0.95) == []


def test_in_a_struct_list_a_label_keeps_its_first_entry(engine):
    entries = [("a", 0.2), ("b", 0.5), ("a", 0.9), (None, 1.0), ("c", None), ("c", 0.7)]
    assert run(engine, "top_k", entries, "list") == ["b", "a"]
    assert run(engine, "above_threshold", entries, "list", threshold=0.3) == ["b"]


def test_integer_labels_stay_integers(engine):
    table = scores_table({3: 0.1, 1: 0.7, 2: 0.7}, key=pa.int64())
    assert as_list(engine.aggregate("top_k", table, columns=("scores",), k=2)) == [1, 2]


@pytest.mark.parametrize(
    ("name", "params", "message"),
    [
        ("top_k", {"k": -1}, "'k' parameter of top_k must be a whole number >= 0"),
        ("top_k", {"k": 1.5}, "'k' parameter of top_k must be a whole number >= 0"),
        ("top_k_above", {"k": -2, "threshold": 0.5}, "'k' parameter of top_k_above"),
        ("above_threshold", {"threshold": None}, "'threshold' parameter of above_threshold"),
        ("top_k_above", {"k": 1, "threshold": None}, "'threshold' parameter of top_k_above"),
    ],
)
def test_parameter_errors(engine, name, params, message):
    with pytest.raises(Exception, match=message):
        run(engine, name, {"a": 0.5}, **params)


SCORE_MAPS = st.one_of(
    st.none(),
    st.dictionaries(
        st.sampled_from("abcdef"),
        st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5, 1.0])),
        max_size=6,
    ),
)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(SCORE_MAPS, st.one_of(st.none(), st.integers(0, 7)), st.sampled_from([0.0, 0.25, 0.6]))
def test_sets_match_the_oracle(engine, scores, k, threshold):
    params = {} if k is None else {"k": k}
    assert run(engine, "top_k", scores, **params) == oracle.top_k(scores, k)
    got = run(engine, "top_k_above", scores, k=k, threshold=threshold)
    assert got == oracle.top_k_above(scores, k, threshold)


@pytest.mark.parametrize("form", oracle.FORMS)
def test_a_nan_score_ranks_first_in_every_engine(engine, form):
    """NaN is the largest score, as every engine sorts it and as coverage_error ranks it, and
    so NaN >= any threshold: DuckDB and Spark ranked it last while keeping it above the
    threshold, where Polars ranked it first."""
    nan = float("nan")
    entries = [("y", 0.2), ("x", nan), ("z", 0.9), ("w", nan)]
    scores = entries if form == "list" else dict(entries)
    assert run(engine, "top_k", scores, form) == ["w", "x", "z", "y"]
    assert run(engine, "top_k", scores, form, k=1) == ["w"]
    assert run(engine, "above_threshold", scores, form, threshold=0.5) == ["w", "x", "z"]
    assert run(engine, "top_k_above", scores, form, k=3, threshold=0.15) == ["w", "x", "z"]
