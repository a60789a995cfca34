"""Hivemall's documented logloss and AUC, scikit-learn's regression examples, on every engine."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests import oracle_single as O
from tests.test_single_label_tables import close, needs

#: Hivemall's logloss example: rows (actual 0, p .01) and (1, .02)
LOGLOSS = pa.table({"actual": [0, 1], "predicted": [0.01, 0.02]})
LOGLOSS_WANT = 1.9610366706408238
#: Hivemall's AUC example: scores .8 .7 .5 .5 .3 .2, labels 1 1 0 1 1 0
AUC = pa.table({"actual": [1, 1, 0, 1, 1, 0], "predicted": [0.8, 0.7, 0.5, 0.5, 0.3, 0.2]})
AUC_WANT = 0.8125
#: scikit-learn's documented regression example
SK = pa.table({"actual": [3.0, -0.5, 2.0, 7.0], "predicted": [2.5, 0.0, 2.0, 8.0]})
SK_WANT = {
    "mse": 0.375,
    "mae": 0.5,
    "r2": 0.9486081370449679,
    "explained_variance": 0.9571734475374732,
    "mape": 0.3273809523809524,
}


@pytest.mark.parametrize("name", ["logloss", "log_loss"])
def test_hivemall_logloss(engine, name):
    needs(engine, name)
    assert close(engine.aggregate(name, LOGLOSS), LOGLOSS_WANT)
    assert close(O.logloss([(0, 0.01), (1, 0.02)]), LOGLOSS_WANT)


def test_hivemall_logloss_takes_predicted_first(engine):
    needs(engine, "hivemall_logloss")
    got = engine.aggregate("hivemall_logloss", LOGLOSS, columns=("predicted", "actual"))
    assert close(got, LOGLOSS_WANT)


@pytest.mark.parametrize("name", ["auc", "roc_auc_score"])
def test_hivemall_auc_without_sorted_input(engine, name):
    needs(engine, name)
    assert close(engine.aggregate(name, AUC), AUC_WANT)
    shuffled = AUC.take([3, 0, 5, 2, 4, 1])
    assert close(engine.aggregate(name, shuffled), AUC_WANT)


def test_hivemall_auc_takes_score_first(engine):
    needs(engine, "hivemall_auc")
    table = pa.table({"score": AUC["predicted"], "label": AUC["actual"]})
    assert close(engine.aggregate("hivemall_auc", table, columns=("score", "label")), AUC_WANT)
    rows = list(zip(AUC["actual"].to_pylist(), AUC["predicted"].to_pylist(), strict=True))
    assert close(O.auc(rows), AUC_WANT)


@pytest.mark.parametrize(("name", "want"), SK_WANT.items())
def test_scikit_learn_regression_example(engine, name, want):
    needs(engine, name)
    assert close(engine.aggregate(name, SK), want)


def test_hivemall_r2_takes_predicted_first(engine):
    needs(engine, "hivemall_r2")
    got = engine.aggregate("hivemall_r2", SK, columns=("predicted", "actual"))
    assert close(got, SK_WANT["r2"])
    swapped = engine.aggregate("r2", SK, columns=("predicted", "actual"))
    assert not close(swapped, SK_WANT["r2"])  # the order matters, so the names say it


@pytest.mark.parametrize(
    "name", ["rmse", "rse", "rrse", "rae", "pearson_corr", "mean_squared_error", "r2_score"]
)
def test_other_regression_measures_match_the_oracle(engine, name):
    needs(engine, name)
    rows = list(zip(SK["actual"].to_pylist(), SK["predicted"].to_pylist(), strict=True))
    base = {"mean_squared_error": "mse", "r2_score": "r2"}.get(name, name)
    assert close(engine.aggregate(name, SK), O.regression(rows, base))


#: errors of ±2e200: their variance (4e400) overflows a double, as does y's (1e400)
OVERFLOW = pa.table({"actual": [1e200, -1e200], "predicted": [-1e200, 1e200]})


def test_explained_variance_of_an_overflowing_variance_is_nan_everywhere(engine):
    """inf / inf, as scikit-learn (numpy) computes it: NaN, not an error. DuckDB 1.x's
    ``var_pop`` raised "VARPOP is out of range!" here where 2.x, Polars and Spark gave NaN."""
    import math
    import warnings

    from sklearn.metrics import explained_variance_score

    needs(engine, "explained_variance")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = explained_variance_score(
            OVERFLOW["actual"].to_pylist(), OVERFLOW["predicted"].to_pylist()
        )
    assert math.isnan(want)
    assert math.isnan(engine.aggregate("explained_variance", OVERFLOW))


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
