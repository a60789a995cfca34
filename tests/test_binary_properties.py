"""Binary and rule measures on random 0/1 data, every engine: oracle, scikit-learn, stored counts."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn import metrics as M

from tests import oracle_single as O
from tests.test_single_label_tables import close, needs

SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
ZD = st.sampled_from([0, 1, float("nan"), "diagnose", "ignore"])
#: mlsql name -> oracle name
MEASURES = {
    "binary_precision": "prel",
    "binary_negative_predictive_value": "nrel",
    "binary_support": "sup",
    "binary_recall": "sens",
    "binary_specificity": "spec",
    "binary_accuracy": "tacc",
    "binary_coverage": "cov",
    "binary_error_rate": "error_rate",
    "binary_kappa": "kappa",
    "binary_false_negative_rate": "fnr",
    "binary_false_positive_rate": "fpr",
    "rule_novelty": "nov",
    "rule_satisfaction": "sat",
}
WITH_ZD = {"prel", "nrel", "sens", "spec", "kappa", "fnr", "fpr", "sat"}


@st.composite
def binary_rows(draw: Any) -> tuple[list[tuple[Any, Any]], pa.DataType]:
    as_bool = draw(st.booleans())
    value = st.one_of(st.none(), st.booleans(), st.booleans(), st.booleans())
    rows = draw(st.lists(st.tuples(value, value), max_size=25))
    if as_bool:
        return rows, pa.bool_()
    return [(None if a is None else int(a), None if p is None else int(p)) for a, p in rows], (
        pa.int8()
    )


def table_of(rows: list[tuple[Any, Any]], dtype: pa.DataType, names=("actual", "predicted")):
    return pa.table({n: pa.array([r[i] for r in rows], dtype) for i, n in enumerate(names)})


@SETTINGS
@given(binary_rows(), ZD)
def test_every_2x2_measure_matches_the_oracle_from_rows_and_from_counts(engine, data, zd):
    needs(engine, "binary_precision")
    rows, dtype = data
    tp, fp, fn, tn = O.table(rows)
    stored = pa.table({"tp": [tp], "fp": [fp], "fn": [fn], "tn": [tn]})
    for name, short in MEASURES.items():
        params = {"zero_division": zd} if short in WITH_ZD else {}
        columns = ("holds", "fires") if name.startswith("rule_") else ("actual", "predicted")
        got = engine.aggregate(name, table_of(rows, dtype, columns), columns=columns, **params)
        want = O.two_by_two(tp, fp, fn, tn, short, zd)
        assert close(got, want), (name, got, want)
        from_counts = engine.aggregate(
            f"{name}_from_counts", stored, columns=("tp", "fp", "fn", "tn"), **params
        )
        if tp + fp + fn + tn:
            assert close(from_counts, want), name
        else:  # stored zeros: shares have no rows (NULL); ratios are undefined
            assert from_counts is None or short in WITH_ZD


@SETTINGS
@given(binary_rows(), st.sampled_from([0.5, 1.0, 2.0, 3.0]))
def test_f_measures_and_kappa_match_scikit_learn(engine, data, beta):
    needs(engine, "binary_fbeta")
    rows, dtype = data
    ks = O.known(rows)
    table = table_of(rows, dtype)
    fbeta = engine.aggregate("binary_fbeta", table, beta=beta)
    f_alpha = engine.aggregate("binary_f_alpha", table, alpha=beta * beta)
    f1 = engine.aggregate("binary_f1", table)
    if not ks:
        assert fbeta is None and f_alpha is None and f1 is None
        return
    y, p = np.array([bool(a) for a, _ in ks]), np.array([bool(b) for _, b in ks])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert close(fbeta, M.fbeta_score(y, p, beta=beta, zero_division=0))
        assert close(f_alpha, fbeta)  # F_alpha is F-beta with alpha = beta²
        assert close(f1, M.f1_score(y, p, zero_division=0))
        assert close(engine.aggregate("prel", table), M.precision_score(y, p, zero_division=0))
        assert close(engine.aggregate("sens", table), M.recall_score(y, p, zero_division=0))
        assert close(engine.aggregate("tacc", table), M.accuracy_score(y, p))
        if len(set(y) | set(p)) > 1:
            assert close(engine.aggregate("binary_kappa", table), M.cohen_kappa_score(y, p))


@SETTINGS
@given(binary_rows(), st.integers(0, 9), st.integers(0, 9))
def test_cost_error_and_counts(engine, data, cost_fn, cost_fp):
    needs(engine, "binary_cost_error")
    rows, dtype = data
    tp, fp, fn, tn = O.table(rows)
    table = table_of(rows, dtype)
    got = engine.aggregate("binary_cost_error", table, cost_fn=cost_fn, cost_fp=cost_fp)
    want = O.two_by_two(tp, fp, fn, tn, "cost_error", cost_fn=cost_fn, cost_fp=cost_fp)
    assert close(got, want)
    counts = engine.aggregate("binary_counts", table)
    if tp + fp + fn + tn:
        assert counts == {"tp": tp, "fp": fp, "fn": fn, "tn": tn}
    else:
        assert counts is None or all(v is None for v in counts.values())
