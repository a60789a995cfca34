"""Regression, logloss and AUC on random data, every engine, against scikit-learn and the oracle."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn import metrics as M

from tests import oracle_single as O
from tests.test_single_label_tables import needs

SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
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


@SETTINGS
@given(pairs(), st.sampled_from([0, 1, float("nan"), "diagnose"]))
def test_regression_measures_match_the_oracle(engine, rows, zd):
    needs(engine, "r2")
    table = table_of(rows)
    for name in ("mse", "rmse", "mae", "mape"):
        assert near(engine.aggregate(name, table), O.regression(rows, name)), name
    for name in ("rse", "rrse", "rae", "r2", "explained_variance", "pearson_corr"):
        got = engine.aggregate(name, table, zero_division=zd)
        assert near(got, O.regression(rows, name, zd)), (name, got)


@SETTINGS
@given(pairs(min_size=1))
def test_regression_measures_match_scikit_learn(engine, rows):
    needs(engine, "r2")
    ks = O.known(rows)
    if not ks:
        return
    y, p = np.array([a for a, _ in ks]), np.array([b for _, b in ks])
    table = table_of(rows)
    assert near(engine.aggregate("mean_squared_error", table), M.mean_squared_error(y, p))
    assert near(engine.aggregate("mean_absolute_error", table), M.mean_absolute_error(y, p))
    assert near(
        engine.aggregate("mean_absolute_percentage_error", table),
        M.mean_absolute_percentage_error(y, p),
    )
    if np.ptp(y) > 0:  # scikit-learn's force_finite is mlsql's 'diagnose'
        assert near(engine.aggregate("r2_score", table), M.r2_score(y, p))
        assert near(
            engine.aggregate("explained_variance_score", table), M.explained_variance_score(y, p)
        )
        got = engine.aggregate("hivemall_r2", table, columns=("predicted", "actual"))
        assert near(got, M.r2_score(y, p))
    elif len(y) > 1:  # constant y: scikit-learn's force_finite values are 'diagnose'
        got = engine.aggregate("r2", table, zero_division="diagnose")
        assert near(got, M.r2_score(y, p))


PROBABILITY = st.integers(1, 999).map(lambda x: x / 1000)


@st.composite
def scored(draw: Any) -> list[tuple[Any, Any]]:
    label = st.one_of(st.none(), st.integers(0, 1), st.integers(0, 1), st.integers(0, 1))
    score = st.one_of(st.none(), PROBABILITY, PROBABILITY, PROBABILITY)
    return draw(st.lists(st.tuples(label, score), max_size=30))


@SETTINGS
@given(scored(), st.sampled_from([0, 1, "diagnose"]))
def test_auc_and_logloss(engine, rows, zd):
    needs(engine, "auc")
    table = table_of(rows, pa.int64())
    got_auc = engine.aggregate("auc", table, zero_division=zd)
    got_loss = engine.aggregate("logloss", table)
    assert near(got_auc, O.auc(rows, zd)) and near(got_loss, O.logloss(rows))
    ks = O.known(rows)
    if not ks:
        return
    y, s = [a for a, _ in ks], [b for _, b in ks]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert near(got_loss, M.log_loss(y, s, labels=[0, 1]))
        if len(set(y)) == 2:
            assert near(got_auc, M.roc_auc_score(y, s))
            booleans = pa.table({"label": [bool(a) for a in y], "score": s})
            got = engine.aggregate("hivemall_auc", booleans, columns=("score", "label"))
            assert near(got, M.roc_auc_score(y, s))
