"""Regression, logloss and AUC on random data, every engine, against scikit-learn and the oracle.

Every regression measure is checked against the oracle by tests/test_every_measure.py. Each example is a batch of cases checked in one query (tests/batches.py).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn import metrics as M

from tests import oracle_single as O
from tests.batches import CASE, batches, stack, with_rows
from tests.test_single_label_tables import needs

SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
#: regression measures are float sums and moments: agreement to 1e-9
TOL = 1e-9


def near(got: Any, want: Any) -> bool:
    if want is None:
        return got is None
    if isinstance(want, float) and math.isnan(want):
        return got is not None and math.isnan(got)
    return got is not None and math.isclose(got, float(want), rel_tol=TOL, abs_tol=TOL)


NUMBER = st.integers(-1000, 1000).map(lambda x: x / 8)  # exact binary fractions


@st.composite
def pairs(draw: Any, value: Any = NUMBER, min_size: int = 0) -> list[tuple[Any, Any]]:
    maybe = st.one_of(st.none(), value, value, value, value, value)
    return draw(st.lists(st.tuples(maybe, maybe), min_size=min_size, max_size=30))


def table_of(rows: list[tuple[Any, Any]], atype: pa.DataType | None = None) -> pa.Table:
    return pa.table(
        {
            "actual": pa.array([a for a, _ in rows], atype or pa.float64()),
            "predicted": pa.array([p for _, p in rows], pa.float64()),
        }
    )


ML = ("actual", "predicted")


@pytest.mark.first(rank=18)
@pytest.mark.long_cases("spark")
@SETTINGS
@given(batches(pairs(min_size=1)))
def test_regression_measures_match_scikit_learn(engine, cases):
    needs(engine, "r2")
    calls = [
        ("mean_squared_error", ML, {}),
        ("mean_absolute_error", ML, {}),
        ("mean_absolute_percentage_error", ML, {}),
        ("r2_score", ML, {}),
        ("explained_variance_score", ML, {}),
        ("hivemall_r2", ("predicted", "actual"), {}),
        ("r2", ML, {"zero_division": "diagnose"}),
    ]
    got = engine.many_by(stack([table_of(rows) for rows in cases]), calls, CASE)
    assert set(got) == set(range(len(cases)))
    for i, (mse, mae, mape, r2, explained, hivemall_r2, r2_diagnose) in got.items():
        ks = O.known(cases[i])
        if not ks:
            continue
        y, p = np.array([a for a, _ in ks]), np.array([b for _, b in ks])
        assert near(mse, M.mean_squared_error(y, p))
        assert near(mae, M.mean_absolute_error(y, p))
        assert near(mape, M.mean_absolute_percentage_error(y, p))
        if np.ptp(y) > 0:  # scikit-learn's force_finite is mlsql's 'diagnose'
            assert near(r2, M.r2_score(y, p))
            assert near(explained, M.explained_variance_score(y, p))
            assert near(hivemall_r2, M.r2_score(y, p))
        elif len(y) > 1:  # constant y: scikit-learn's force_finite values are 'diagnose'
            assert near(r2_diagnose, M.r2_score(y, p))


PROBABILITY = st.integers(1, 999).map(lambda x: x / 1000)


@st.composite
def scored(draw: Any) -> list[tuple[Any, Any]]:
    label = st.one_of(st.none(), st.integers(0, 1), st.integers(0, 1), st.integers(0, 1))
    score = st.one_of(st.none(), PROBABILITY, PROBABILITY, PROBABILITY)
    return draw(st.lists(st.tuples(label, score), max_size=30))


@pytest.mark.long_cases("spark")
@SETTINGS
@given(batches(scored()), st.sampled_from([0, 1, "diagnose"]))
def test_auc_and_logloss(engine, cases, zd):
    needs(engine, "auc")
    tables = [
        table_of(rows, pa.int64()).append_column(
            "label", pa.array([None if a is None else bool(a) for a, _ in rows], pa.bool_())
        )
        for rows in cases
    ]
    calls = [
        ("auc", ML, {"zero_division": zd}),
        ("logloss", ML, {}),
        ("hivemall_auc", ("predicted", "label"), {}),
    ]
    got = engine.many_by(stack(tables), calls, CASE)
    assert set(got) == with_rows(tables)
    for i, (got_auc, got_loss, hivemall_auc) in got.items():
        rows = cases[i]
        assert near(got_auc, O.auc(rows, zd)) and near(got_loss, O.logloss(rows))
        ks = O.known(rows)
        if not ks:
            continue
        y, s = [a for a, _ in ks], [b for _, b in ks]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert near(got_loss, M.log_loss(y, s, labels=[0, 1]))
            if len(set(y)) == 2:
                assert near(got_auc, M.roc_auc_score(y, s))
                assert near(hivemall_auc, M.roc_auc_score(y, s))
