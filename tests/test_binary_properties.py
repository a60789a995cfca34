"""Binary measures on random 0/1 data, every engine, against scikit-learn.

Each example is a batch of cases checked in one query (tests/batches.py). Every
2x2 measure, from rows and from stored counts, is checked against the oracle by
tests/test_every_measure.py.
"""

from __future__ import annotations

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
from tests.test_single_label_tables import close, needs

SETTINGS = settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@st.composite
def binary_rows(draw: Any) -> tuple[list[list[tuple[Any, Any]]], pa.DataType]:
    """A batch of cases of (actual, predicted) 0/1 rows with NULLs, all booleans or all int8."""
    as_bool = draw(st.booleans())
    value = st.one_of(st.none(), st.booleans(), st.booleans(), st.booleans())
    cases = draw(batches(st.lists(st.tuples(value, value), max_size=25)))
    if as_bool:
        return cases, pa.bool_()
    as_int = [
        [(None if a is None else int(a), None if p is None else int(p)) for a, p in rows]
        for rows in cases
    ]
    return as_int, pa.int8()


def table_of(rows: list[tuple[Any, Any]], dtype: pa.DataType) -> pa.Table:
    """actual, predicted and the same values as a rule's holds, fires."""
    actual, predicted = pa.array([a for a, _ in rows], dtype), pa.array([p for _, p in rows], dtype)
    return pa.table({"actual": actual, "predicted": predicted, "holds": actual, "fires": predicted})


@pytest.mark.long_cases("spark")
@SETTINGS
@given(binary_rows(), st.sampled_from([0.5, 1.0, 2.0, 3.0]))
def test_f_measures_and_kappa_match_scikit_learn(engine, data, beta):
    needs(engine, "binary_fbeta")
    cases, dtype = data
    tables = [table_of(rows, dtype) for rows in cases]
    ml = ("actual", "predicted")
    calls = [
        ("binary_fbeta", ml, {"beta": beta}),
        ("binary_f_alpha", ml, {"alpha": beta * beta}),
        ("binary_f1", ml, {}),
        ("prel", ml, {}),
        ("sens", ml, {}),
        ("tacc", ml, {}),
        ("binary_kappa", ml, {}),
    ]
    got = engine.many_by(stack(tables), calls, CASE)
    assert set(got) == with_rows(tables)
    for i, (fbeta, f_alpha, f1, prel, sens, tacc, kappa) in got.items():
        ks = O.known(cases[i])
        if not ks:
            assert fbeta is None and f_alpha is None and f1 is None
            continue
        y, p = np.array([bool(a) for a, _ in ks]), np.array([bool(b) for _, b in ks])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert close(fbeta, M.fbeta_score(y, p, beta=beta, zero_division=0))
            assert close(f_alpha, fbeta)  # F_alpha is F-beta with alpha = beta²
            assert close(f1, M.f1_score(y, p, zero_division=0))
            assert close(prel, M.precision_score(y, p, zero_division=0))
            assert close(sens, M.recall_score(y, p, zero_division=0))
            assert close(tacc, M.accuracy_score(y, p))
            if len(set(y) | set(p)) > 1:
                assert close(kappa, M.cohen_kappa_score(y, p))
