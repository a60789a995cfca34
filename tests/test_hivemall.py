"""Hivemall's fmeasure on binary input (int and boolean), on every engine."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests.conftest import conformance
from tests.engines import label_table

DATA = conformance("hivemall_binary.json")


def binary_table(kind: str) -> pa.Table:
    actual = [r["actual"] for r in DATA["rows"]]
    predicted = [r["predicted"] for r in DATA["rows"]]
    if kind == "bool":
        return pa.table(
            {
                "actual": pa.array([a == 1 for a in actual]),
                "predicted": pa.array([p == 1 for p in predicted]),
            }
        )
    if kind == "minus_one":  # Hivemall's -1 means the same as 0
        return pa.table(
            {
                "actual": pa.array([a or -1 for a in actual]),
                "predicted": pa.array([p or -1 for p in predicted]),
            }
        )
    return pa.table(
        {"actual": pa.array(actual, pa.int32()), "predicted": pa.array(predicted, pa.int32())}
    )


@pytest.mark.parametrize("kind", ["int", "bool", "minus_one"])
@pytest.mark.parametrize("expression", list(DATA["expected"]))
def test_binary_fmeasure_matches_hivemall(engine, kind, expression):
    options = expression.removeprefix("fmeasure(actual, predicted, '").removesuffix("')")
    got = engine.aggregate("fmeasure", binary_table(kind), options=options)
    assert got == pytest.approx(DATA["expected"][expression], rel=1e-12)


def test_default_options_are_micro_with_beta_one(engine):
    # under micro every row carries one label (1 or 0), so F equals accuracy: 3 of 6
    assert engine.aggregate("fmeasure", binary_table("int")) == pytest.approx(0.5, rel=1e-12)


def test_fmeasure_counts_duplicates_once(engine):
    # Hivemall counts the repeated 'a' twice and returns 2*2/(3+2) = 0.8; mlsql uses sets: 2*1/(2+1)
    table = label_table([(["a", "b"], ["a", "a"])])
    assert engine.aggregate("fmeasure", table) == pytest.approx(2 / 3, rel=1e-12)


def test_fmeasure_is_zero_when_nothing_is_true_or_predicted(engine):
    assert engine.aggregate("fmeasure", label_table([([], [])], pa.string())) == 0.0
