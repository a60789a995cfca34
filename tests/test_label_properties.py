"""Property tests: label_metrics and multilabel_report against the plain-Python oracle.

Random grouped rows carry duplicates, NULL elements, empty lists and NULL
lists (so some groups have no known row); the universe is either the labels
seen or a given list that may hold a label that never occurs. Every
zero_division convention runs, with and without beta. Each example is a batch
of cases, told apart by one more ``by`` column (tests/batches.py), so both
tables are one call each per example.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import oracle_labels as O
from tests.batches import CASE, batches, stack
from tests.test_label_conformance import needs

ZERO_DIVISIONS = [0, 1, float("nan"), "diagnose", "ignore"]
SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
REL = 1e-12


def same(got: Any, want: Any) -> bool:
    """Engine value equals the oracle's: None, NaN, exact ints, else 1e-12 relative."""
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(got, float) and math.isnan(got):
        return False
    if isinstance(want, (str, int)) and not isinstance(want, bool):
        return got == want
    return math.isclose(got, float(Fraction(want)), rel_tol=REL, abs_tol=REL)


def label_lists(labels: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.none(), st.lists(labels, max_size=4))


@st.composite
def grouped_rows(draw: Any, labels: list[Any]) -> tuple[list[tuple[Any, Any]], list[str]]:
    element = st.sampled_from([*labels, None])
    rows = draw(st.lists(st.tuples(label_lists(element), label_lists(element)), max_size=10))
    groups = draw(
        st.lists(st.sampled_from(["x", "y", "z"]), min_size=len(rows), max_size=len(rows))
    )
    return rows, groups


@st.composite
def universes(draw: Any, labels: list[Any], never: Any) -> list[Any] | None:
    if draw(st.booleans()):
        return None
    chosen = draw(st.lists(st.sampled_from([*labels, never]), min_size=1, max_size=5))
    return chosen


def by_group(rows: list[tuple[Any, Any]], groups: list[str]) -> dict[str, list[tuple[Any, Any]]]:
    out: dict[str, list[tuple[Any, Any]]] = {}
    for row, g in zip(rows, groups, strict=True):
        out.setdefault(g, []).append(row)
    return out


def check(engine: Any, cases: list, labels: Any, beta: Any, zd: Any, ltype: Any) -> None:
    needs(engine, "label_metrics", "multilabel_report")
    table = stack([grouped_table(rows, groups, ltype) for rows, groups in cases])
    params: dict[str, Any] = {"zero_division": zd, "by": [CASE, "g"]}
    if labels is not None:
        params["labels"] = labels
    if beta is not None:
        params["beta"] = beta
    parts = {
        (i, g): part
        for i, (rows, groups) in enumerate(cases)
        for g, part in by_group(rows, groups).items()
    }

    got_labels = engine.table_function("label_metrics", table, **params).to_pylist()
    want_labels = [
        {CASE: i, "g": g, **r}
        for i, g in sorted(parts)
        for r in O.label_metrics(parts[i, g], labels, beta, zd)
    ]
    keys = (CASE, "g", "label")
    assert [tuple(r[k] for k in keys) for r in got_labels] == [
        tuple(r[k] for k in keys) for r in want_labels
    ]
    for got, want in zip(got_labels, want_labels, strict=True):
        assert set(got) == set(want), (sorted(got), sorted(want))
        for key, value in want.items():
            assert same(got[key], value), (
                f"label_metrics {key} of {want['label']}: {got[key]} != {value}"
            )

    got_report = engine.table_function("multilabel_report", table, **params).to_pylist()
    assert [(r[CASE], r["g"]) for r in got_report] == sorted(parts)
    for got in got_report:
        want = O.report(parts[got[CASE], got["g"]], labels, beta, zd)
        assert set(got) - {CASE, "g"} == set(want), (sorted(got), sorted(want))
        for key, value in want.items():
            assert same(got[key], value), f"report {key} of group {got['g']}: {got[key]} != {value}"


def grouped_table(rows: list, groups: list, ltype: Any) -> pa.Table:
    return pa.table(
        {
            "actual": pa.array([a for a, _ in rows], pa.list_(ltype)),
            "predicted": pa.array([p for _, p in rows], pa.list_(ltype)),
            "g": pa.array(groups, pa.string()),
        }
    )


TEXT = ["a", "b", "c", "d"]


@pytest.mark.first(rank=15)
@pytest.mark.long_cases(
    "spark-0",
    "spark-1",
    "spark-nan",
    "spark-diagnose",
    "spark-ignore",
    "duckdb-1",
    "duckdb-nan",
    "duckdb-diagnose",
    "duckdb-ignore",
)
@pytest.mark.parametrize("zd", ZERO_DIVISIONS, ids=str)
@SETTINGS
@given(
    cases=batches(grouped_rows(TEXT)),
    labels=universes(TEXT, "never"),
    beta=st.sampled_from([None, 2.0]),
)
def test_text_labels_match_the_oracle(engine, zd, cases, labels, beta):
    check(engine, cases, labels, beta, zd, pa.string())


INTS = [1, 2, 3]


@pytest.mark.first(rank=16)
@pytest.mark.long_cases("duckdb-0", "duckdb-ignore", "polars-0", "spark-0", "spark-ignore")
@pytest.mark.parametrize("zd", [0, "ignore"], ids=str)
@SETTINGS
@given(
    cases=batches(grouped_rows(INTS)), labels=universes(INTS, 99), beta=st.sampled_from([None, 0.5])
)
def test_integer_labels_match_the_oracle(engine, zd, cases, labels, beta):
    check(engine, cases, labels, beta, zd, pa.int64())
