"""Property tests: every engine against the plain-Python oracle on random label lists.

Random rows carry duplicates, NULL elements, empty lists and NULL lists; the
oracle (tests/oracle.py) computes each measure with exact fractions. Each
example is a batch of cases checked in one query (tests/batches.py).
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import oracle
from tests.batches import CASE, batches, stack, with_rows
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
ML = ("actual", "predicted")
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


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
@given(
    cases=batches(rows()),
    zd=st.sampled_from(ZERO_DIVISIONS),
    beta=st.sampled_from([0.5, 1.0, 2.0]),
)
def test_aggregates_match_oracle(engine, cases, zd, beta):
    tables = [label_table(data, pa.string()) for data in cases]
    calls = [(name, ML, params_for(name, zd, beta)) for name in AGGREGATES]
    got = engine.many_by(stack(tables), calls, CASE)
    assert set(got) == with_rows(tables)
    for i, values in got.items():
        for (name, _, params), value in zip(calls, values, strict=True):
            want = oracle.aggregate(name, cases[i], **params)
            assert same(value, want), (
                f"{engine.name} {name}{params}: {value} != {want} on {cases[i]}"
            )


@SETTINGS
@given(cases=batches(rows(INT_LABELS)))
def test_exact_match_hamming_and_counts_match_oracle(engine, cases):
    tables = [label_table(data, pa.int64()) for data in cases]
    calls = [
        ("subset_accuracy", ML, {}),
        ("zero_one_loss", ML, {}),
        ("hamming_loss", ML, {"n_labels": 4}),
        ("multilabel_counts", ML, {}),
    ]
    got = engine.many_by(stack(tables), calls, CASE)
    assert set(got) == with_rows(tables)
    for i, (exact, loss, hamming, counts) in got.items():
        data = cases[i]
        assert same(exact, oracle.aggregate("subset_accuracy", data)), data
        assert same(loss, oracle.aggregate("zero_one_loss", data)), data
        assert same(hamming, oracle.hamming_loss(data, 4)), data
        want_counts = oracle.multilabel_counts(data)
        if want_counts["n_rows"] == 0:
            assert counts["n_rows"] == 0
        else:
            assert dict(counts) == want_counts


@SETTINGS
@given(cases=batches(rows()), zd=st.sampled_from(ZERO_DIVISIONS))
def test_per_row_functions_match_oracle(engine, cases, zd):
    """Every per-row function over the rows of a batch of cases, in one query."""
    data = [row for case in cases for row in case]
    table = label_table(data, pa.string())
    calls = []
    for name in PER_ROW:
        params = (
            {}
            if name.startswith(("set_i", "set_d", "set_u", "set_s", "true", "false"))
            else {"zero_division": zd}
        )
        if name == "row_fbeta":
            params["beta"] = 2.0
        calls.append((name, ML, params))
    for (name, _, params), got in zip(calls, engine.many(table, calls, per_row=True), strict=True):
        want = [oracle.per_row(name, a, p, **params) for a, p in data]
        assert len(got) == len(want)
        for g, w, row in zip(got, want, data, strict=True):
            assert same(g, w), f"{engine.name} {name}{params} on {row}: {g} != {w}"


@SETTINGS
@given(data=rows(), groups=st.lists(st.sampled_from(["x", "y", "z"]), min_size=12, max_size=12))
def test_grouped_aggregates_match_oracle(engine, data, groups):
    groups = groups[: len(data)]
    table = label_table(data, pa.string(), groups=groups)
    names = ("micro_f1", "samples_jaccard", "subset_accuracy")
    got = engine.many_by(table, [(name, ML, {}) for name in names], "g")
    assert set(got) == set(groups)
    for g, values in got.items():
        part = [r for r, h in zip(data, groups, strict=True) if h == g]
        for name, value in zip(names, values, strict=True):
            want = oracle.aggregate(name, part)
            assert same(value, want), f"{engine.name} {name} group {g}: {value} != {want}"


@st.composite
def grouped(draw: st.DrawFn) -> list[tuple[tuple[Any, Any], str]]:
    """Rows with a partition name each."""
    data = draw(rows())
    days = st.sampled_from(["d1", "d2", "d3"])
    return [(row, draw(days)) for row in data]


@SETTINGS
@given(cases=batches(grouped()), beta=st.sampled_from([0.5, 2.0]))
def test_stored_counts_merge_to_the_same_micro_measures(engine, cases, beta):
    """Daily partitions stored as multilabel_counts, merged later, give the micro measures."""
    tables = [
        label_table([r for r, _ in case], pa.string()).append_column(
            "g", pa.array([g for _, g in case], pa.string())
        )
        for case in cases
    ]
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
    calls = [(stored, ("c",), params) for stored, _, params in pairs]
    got = engine.from_stored_counts_by(stack(tables), calls, CASE)
    assert set(got) == with_rows(tables)
    for i, values in got.items():
        data = [r for r, _ in cases[i]]
        for (stored, direct, params), value in zip(pairs, values, strict=True):
            want = oracle.aggregate(direct, data, **params)
            assert same(value, want), f"{engine.name} {stored}{params}: {value} != {want}"
