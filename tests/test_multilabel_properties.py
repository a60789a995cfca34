"""Property tests: every engine against the plain-Python oracle on random label lists.

Random rows carry duplicates, NULL elements, empty lists and NULL lists; the
oracle (tests/oracle.py) computes each measure with exact fractions.
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import oracle
from tests.engines import label_table

LABELS = st.sampled_from(["a", "b", "c", "d", None])
INT_LABELS = st.sampled_from([1, 2, 3, 4, None])
ZERO_DIVISIONS = [0, 1, float("nan"), "diagnose", "ignore"]
AGGREGATES = [
    f"{average}_{measure}"
    for average in ("micro", "samples")
    for measure in ("precision", "recall", "f1", "fbeta", "jaccard")
]
PER_ROW = [
    "set_intersection",
    "set_difference",
    "set_union",
    "set_symmetric_difference",
    "true_positives",
    "false_positives",
    "false_negatives",
    "set_jaccard",
    "row_precision",
    "row_recall",
    "row_fbeta",
]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def label_lists(labels: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(st.none(), st.lists(labels, max_size=5))


def rows(labels: st.SearchStrategy = LABELS) -> st.SearchStrategy:
    return st.lists(st.tuples(label_lists(labels), label_lists(labels)), max_size=12)


def same(got: Any, want: Any) -> bool:
    """Equal to 1e-12 relative, with None = NULL and NaN = NaN."""
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, list):
        return sorted(got) == want
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)


def params_for(name: str, zd: Any, beta: float) -> dict[str, Any]:
    params: dict[str, Any] = {"zero_division": zd}
    if name.endswith("fbeta"):
        params["beta"] = beta
    return params


@SETTINGS
@given(data=rows(), zd=st.sampled_from(ZERO_DIVISIONS), beta=st.sampled_from([0.5, 1.0, 2.0]))
def test_aggregates_match_oracle(engine, data, zd, beta):
    table = label_table(data, pa.string())
    for name in AGGREGATES:
        params = params_for(name, zd, beta)
        want = oracle.aggregate(name, data, **params)
        got = engine.aggregate(name, table, **params)
        assert same(got, want), f"{engine.name} {name}{params}: {got} != {want} on {data}"


@SETTINGS
@given(data=rows(INT_LABELS))
def test_exact_match_hamming_and_counts_match_oracle(engine, data):
    table = label_table(data, pa.int64())
    for name in ("subset_accuracy", "zero_one_loss"):
        assert same(engine.aggregate(name, table), oracle.aggregate(name, data)), name
    assert same(engine.aggregate("hamming_loss", table, n_labels=4), oracle.hamming_loss(data, 4))
    want_counts = oracle.multilabel_counts(data)
    got_counts = engine.counts(table)
    if want_counts["n_rows"] == 0:
        assert got_counts["n_rows"] == 0
    else:
        assert dict(got_counts) == want_counts


@SETTINGS
@given(data=rows(), zd=st.sampled_from(ZERO_DIVISIONS))
def test_per_row_functions_match_oracle(engine, data, zd):
    table = label_table(data, pa.string())
    for name in PER_ROW:
        params = (
            {}
            if name.startswith(("set_i", "set_d", "set_u", "set_s", "true", "false"))
            else {"zero_division": zd}
        )
        if name == "row_fbeta":
            params["beta"] = 2.0
        got = engine.per_row(name, table, **params)
        want = [oracle.per_row(name, a, p, **params) for a, p in data]
        assert len(got) == len(want)
        for g, w, row in zip(got, want, data, strict=True):
            assert same(g, w), f"{engine.name} {name}{params} on {row}: {g} != {w}"


@SETTINGS
@given(data=rows(), groups=st.lists(st.sampled_from(["x", "y", "z"]), min_size=12, max_size=12))
def test_grouped_aggregates_match_oracle(engine, data, groups):
    groups = groups[: len(data)]
    table = label_table(data, pa.string(), groups=groups)
    for name in ("micro_f1", "samples_jaccard", "subset_accuracy"):
        got = engine.grouped(name, table)
        want = {
            g: oracle.aggregate(name, [r for r, h in zip(data, groups, strict=True) if h == g])
            for g in set(groups)
        }
        assert set(got) == set(want)
        for g in want:
            assert same(got[g], want[g]), f"{engine.name} {name} group {g}: {got[g]} != {want[g]}"


@SETTINGS
@given(
    data=rows(),
    groups=st.lists(st.sampled_from(["d1", "d2", "d3"]), min_size=12, max_size=12),
    beta=st.sampled_from([0.5, 2.0]),
)
def test_stored_counts_merge_to_the_same_micro_measures(engine, data, groups, beta):
    """Daily partitions stored as multilabel_counts, merged later, give the micro measures."""
    groups = groups[: len(data)]
    table = label_table(data, pa.string(), groups=groups)
    pairs = [
        ("micro_precision_from_counts", "micro_precision", {}),
        ("micro_recall_from_counts", "micro_recall", {}),
        ("micro_fbeta_from_counts", "micro_fbeta", {"beta": beta}),
        ("micro_f1_from_counts", "micro_f1", {}),
        ("micro_jaccard_from_counts", "micro_jaccard", {}),
        ("subset_accuracy_from_counts", "subset_accuracy", {}),
        ("zero_one_loss_from_counts", "zero_one_loss", {}),
        ("hamming_loss_from_counts", "hamming_loss", {"n_labels": 5}),
    ]
    for stored, direct, params in pairs:
        got = engine.from_stored_counts(stored, table, **params)
        want = oracle.aggregate(direct, data, **params)
        assert same(got, want), f"{engine.name} {stored}{params}: {got} != {want}"
