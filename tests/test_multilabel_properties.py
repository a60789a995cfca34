"""Property tests: grouped aggregates on every engine against the plain-Python oracle.

Random rows carry duplicates, NULL elements, empty lists and NULL lists; the
oracle (tests/oracle.py) computes each measure with exact fractions. Every
multi-label measure over whole tables, per row and from stored counts is
checked against the same oracle by tests/test_every_measure.py; ``same`` is
shared with the native tests.
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import oracle
from tests.engines import label_table

LABELS = st.sampled_from(["a", "b", "c", "d", None])
ML = ("actual", "predicted")
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


@pytest.mark.long_cases("spark")
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
