"""Property tests: every engine against scikit-learn and the ranking oracle on random data.

Scores are drawn from a few values so that ties are common; label sets may be
empty or hold every label.
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


@pytest.fixture
def engine(engine):
    """Each engine, skipping (with the registry's reason) a measure it lacks."""
    return oracle.Available(engine)


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
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


@SETTINGS
@given(matrices())  # scikit-learn needs 2 labels or more
def test_label_ranking_measures_match_scikit_learn(engine, data):
    y_true, y_score = data
    table = as_table(y_true, y_score)
    for name in ("coverage_error", "label_ranking_loss", "label_ranking_average_precision"):
        got = engine.aggregate(name, table, columns=SCORED)
        want = SKLEARN[name](y_true, y_score)
        assert close(got, want), f"{engine.name} {name}: {got} != {want}\n{y_true}\n{y_score}"


@SETTINGS
@given(matrices(), st.one_of(st.none(), st.integers(1, 6)))
def test_ndcg_score_matches_scikit_learn(engine, data, k):
    y_true, y_score = data
    params = {} if k is None else {"k": k}
    got = engine.aggregate("ndcg_score", as_table(y_true, y_score), columns=SCORED, **params)
    want = metrics.ndcg_score(y_true, y_score, k=k)
    assert close(got, want), f"{engine.name} ndcg_score@{k}: {got} != {want}\n{y_true}\n{y_score}"


LABELS = st.sampled_from(["a", "b", "c", "d", "e"])
SCORE_MAPS = st.one_of(st.none(), st.dictionaries(LABELS, st.one_of(st.none(), SCORES), max_size=5))
LABEL_LISTS = st.one_of(st.none(), st.lists(st.one_of(LABELS, st.none()), max_size=5))


@SETTINGS
@given(st.lists(st.tuples(SCORE_MAPS, LABEL_LISTS), max_size=6), st.sampled_from(["map", "list"]))
def test_score_measures_match_the_oracle_with_unscored_labels_and_nulls(engine, rows, form):
    table = oracle.scored(rows, form)
    known = [(s, a) for s, a in rows if s is not None and a is not None]
    for name, fn in oracle.SCORED.items():
        got = engine.aggregate(name, table, columns=SCORED)
        want = sum(fn(s, a) for s, a in known) / len(known) if known else None
        assert close(got, want), f"{engine.name} {name}: {got} != {want}\n{rows}"


ITEMS = st.one_of(st.integers(1, 6), st.none())
ITEM_LISTS = st.one_of(st.none(), st.lists(ITEMS, max_size=7))


@SETTINGS
@given(
    st.lists(st.tuples(ITEM_LISTS, ITEM_LISTS), max_size=6), st.one_of(st.none(), st.integers(1, 8))
)
def test_at_k_measures_match_the_oracle(engine, rows, k):
    table = pa.table(
        {
            "rank_items": pa.array([r for r, _ in rows], pa.list_(pa.int64())),
            "correct_items": pa.array([c for _, c in rows], pa.list_(pa.int64())),
        }
    )
    params = {} if k is None else {"k": k}
    for name, fn in oracle.AT_K.items():
        got = engine.aggregate(name, table, columns=RANKED, **params)
        want = oracle.mean_over_rows(fn, rows, k)
        assert close(got, want), f"{engine.name} {name}@{k}: {got} != {want}\n{rows}"


GRADES = st.one_of(st.none(), st.integers(0, 3).map(float))


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.lists(GRADES, max_size=6)),
            st.one_of(st.none(), st.lists(GRADES, max_size=6)),
        ),
        max_size=5,
    ),
    st.one_of(st.none(), st.integers(1, 7)),
)
def test_graded_ndcg_matches_the_oracle(engine, rows, k):
    cols = ("ranked_relevance", "ideal_relevance")
    table = pa.table(
        {c: pa.array([r[i] for r in rows], pa.list_(pa.float64())) for i, c in enumerate(cols)}
    )
    params = {} if k is None else {"k": k}
    got = engine.aggregate("graded_ndcg", table, columns=cols, **params)
    want = oracle.mean_over_rows(oracle.graded_ndcg, rows, k)
    assert close(got, want), f"{engine.name} graded_ndcg@{k}: {got} != {want}\n{rows}"
