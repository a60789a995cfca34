"""Property tests: every engine against scikit-learn and the ranking oracle on random data.

Scores are drawn from a few values so that ties are common; label sets may be
empty or hold every label. Each example is a batch of cases checked in one query
(tests/batches.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn import metrics

from tests import oracle_ranking as oracle
from tests.batches import CASE, batches, stack, with_rows


@pytest.fixture
def engine(engine):
    """Each engine, skipping (with the registry's reason) a measure it lacks."""
    return oracle.Available(engine)


SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
SCORES = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])
SCORED = ("actual", "scores")  # the truth first, as scikit-learn's (y_true, y_score)
RANKED = ("rank_items", "correct_items")

SKLEARN = {
    "coverage_error": metrics.coverage_error,
    "label_ranking_loss": metrics.label_ranking_loss,
    "label_ranking_average_precision": metrics.label_ranking_average_precision_score,
    "ndcg_score": metrics.ndcg_score,
}


def close(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)


@st.composite
def matrices(draw: st.DrawFn, min_labels: int = 2) -> tuple[np.ndarray, np.ndarray]:
    n_labels = draw(st.integers(min_labels, 5))
    n_rows = draw(st.integers(1, 6))
    truth = draw(
        st.lists(
            st.lists(st.booleans(), min_size=n_labels, max_size=n_labels),
            min_size=n_rows,
            max_size=n_rows,
        )
    )
    scores = draw(
        st.lists(
            st.lists(SCORES, min_size=n_labels, max_size=n_labels), min_size=n_rows, max_size=n_rows
        )
    )
    return np.array(truth, dtype=int), np.array(scores, dtype=float)


def as_table(y_true: np.ndarray, y_score: np.ndarray) -> pa.Table:
    """Each row as a score map over every label and the list of its true labels."""
    labels = [f"l{j}" for j in range(y_true.shape[1])]
    return pa.table(
        {
            "scores": pa.array(
                [list(zip(labels, map(float, row), strict=True)) for row in y_score],
                pa.map_(pa.string(), pa.float64()),
            ),
            "actual": pa.array(
                [[lab for lab, t in zip(labels, row, strict=True) if t] for row in y_true],
                pa.list_(pa.string()),
            ),
        }
    )


@pytest.mark.long_cases("spark")
@SETTINGS
@given(batches(matrices()))  # scikit-learn needs 2 labels or more
def test_label_ranking_measures_match_scikit_learn(engine, cases):
    names = ("coverage_error", "label_ranking_loss", "label_ranking_average_precision")
    calls = [(name, SCORED, {}) for name in names]
    got = engine.many_by(stack([as_table(*case) for case in cases]), calls, CASE)
    assert set(got) == set(range(len(cases)))
    for i, values in got.items():
        y_true, y_score = cases[i]
        for name, value in zip(names, values, strict=True):
            want = SKLEARN[name](y_true, y_score)
            assert close(value, want), (
                f"{engine.name} {name}: {value} != {want}\n{y_true}\n{y_score}"
            )


@pytest.mark.long_cases("spark")
@SETTINGS
@given(batches(matrices()), st.one_of(st.none(), st.integers(1, 6)))
def test_ndcg_score_matches_scikit_learn(engine, cases, k):
    params = {} if k is None else {"k": k}
    calls = [("ndcg_score", SCORED, params)]
    got = engine.many_by(stack([as_table(*case) for case in cases]), calls, CASE)
    assert set(got) == set(range(len(cases)))
    for i, (value,) in got.items():
        y_true, y_score = cases[i]
        want = metrics.ndcg_score(y_true, y_score, k=k)
        assert close(value, want), (
            f"{engine.name} ndcg_score@{k}: {value} != {want}\n{y_true}\n{y_score}"
        )


LABELS = st.sampled_from(["a", "b", "c", "d", "e"])
SCORE_MAPS = st.one_of(st.none(), st.dictionaries(LABELS, st.one_of(st.none(), SCORES), max_size=5))
LABEL_LISTS = st.one_of(st.none(), st.lists(st.one_of(LABELS, st.none()), max_size=5))


@pytest.mark.long_cases("spark")
@SETTINGS
@given(
    batches(st.lists(st.tuples(SCORE_MAPS, LABEL_LISTS), max_size=6)),
    st.sampled_from(["map", "list"]),
)
def test_score_measures_match_the_oracle_with_unscored_labels_and_nulls(engine, cases, form):
    tables = [oracle.scored(rows, form) for rows in cases]
    calls = [(name, SCORED, {}) for name in oracle.SCORED]
    got = engine.many_by(stack(tables), calls, CASE)
    assert set(got) == with_rows(tables)
    for i, values in got.items():
        known = [(s, a) for s, a in cases[i] if s is not None and a is not None]
        for (name, fn), value in zip(oracle.SCORED.items(), values, strict=True):
            want = sum(fn(s, a) for s, a in known) / len(known) if known else None
            assert close(value, want), f"{engine.name} {name}: {value} != {want}\n{cases[i]}"


ITEMS = st.one_of(st.integers(1, 6), st.none())
ITEM_LISTS = st.one_of(st.none(), st.lists(ITEMS, max_size=7))


@pytest.mark.long_cases("spark")
@SETTINGS
@given(
    batches(st.lists(st.tuples(ITEM_LISTS, ITEM_LISTS), max_size=6)),
    st.one_of(st.none(), st.integers(1, 8)),
)
def test_at_k_measures_match_the_oracle(engine, cases, k):
    tables = [
        pa.table(
            {
                "rank_items": pa.array([r for r, _ in rows], pa.list_(pa.int64())),
                "correct_items": pa.array([c for _, c in rows], pa.list_(pa.int64())),
            }
        )
        for rows in cases
    ]
    params = {} if k is None else {"k": k}
    calls = [(name, RANKED, params) for name in oracle.AT_K]
    got = engine.many_by(stack(tables), calls, CASE)
    assert set(got) == with_rows(tables)
    for i, values in got.items():
        for (name, fn), value in zip(oracle.AT_K.items(), values, strict=True):
            want = oracle.mean_over_rows(fn, cases[i], k)
            assert close(value, want), f"{engine.name} {name}@{k}: {value} != {want}\n{cases[i]}"


GRADES = st.one_of(st.none(), st.integers(0, 3).map(float))


@SETTINGS
@given(
    batches(
        st.lists(
            st.tuples(
                st.one_of(st.none(), st.lists(GRADES, max_size=6)),
                st.one_of(st.none(), st.lists(GRADES, max_size=6)),
            ),
            max_size=5,
        )
    ),
    st.one_of(st.none(), st.integers(1, 7)),
)
@pytest.mark.long_cases("spark")
def test_graded_ndcg_matches_the_oracle(engine, cases, k):
    cols = ("ranked_relevance", "ideal_relevance")
    tables = [
        pa.table(
            {c: pa.array([r[i] for r in rows], pa.list_(pa.float64())) for i, c in enumerate(cols)}
        )
        for rows in cases
    ]
    params = {} if k is None else {"k": k}
    got = engine.many_by(stack(tables), [("graded_ndcg", cols, params)], CASE)
    assert set(got) == with_rows(tables)
    for i, (value,) in got.items():
        want = oracle.mean_over_rows(oracle.graded_ndcg, cases[i], k)
        assert close(value, want), f"{engine.name} graded_ndcg@{k}: {value} != {want}\n{cases[i]}"
