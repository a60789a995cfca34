"""The lecture's rule example on every engine: prel ... cov through the binary aliases, nov, sat."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests import oracle_single as O
from tests.conftest import conformance
from tests.test_single_label_tables import close, needs

RULE = conformance("slides_single_label.json")["rule_contingency"]
#: lecture name -> mlsql function taking (holds, fires)
NAMES = {
    "prel": "prel",
    "nrel": "nrel",
    "sup": "sup",
    "sens": "sens",
    "spec": "spec",
    "tacc": "tacc",
    "cov": "cov",
    "nov": "rule_novelty",
    "sat": "rule_satisfaction",
}
ROWS = pa.table({"holds": RULE["positive"], "fires": RULE["fires"]})


def counts() -> tuple[int, int, int, int]:
    """tp = |L R|, fp = |L not R|, fn = |not L R|, tn = |not L not R|."""
    return O.table(list(zip(RULE["positive"], RULE["fires"], strict=True)))


@pytest.mark.long_cases("spark-nov-0.04")
@pytest.mark.parametrize(("key", "want"), RULE["expected"].items())
def test_rule_measure(engine, key, want):
    name = NAMES[key]
    needs(engine, name)
    assert close(engine.aggregate(name, ROWS, columns=("holds", "fires")), want)


@pytest.mark.parametrize("key", ["nov", "sat"])
def test_rule_measures_by_lecture_alias_and_from_counts(engine, key):
    needs(engine, NAMES[key])
    want = RULE["expected"][key]
    assert close(engine.aggregate(key, ROWS, columns=("holds", "fires")), want)
    tp, fp, fn, tn = counts()
    stored = pa.table({"tp": [tp], "fp": [fp], "fn": [fn], "tn": [tn]})
    got = engine.aggregate(f"{NAMES[key]}_from_counts", stored, columns=("tp", "fp", "fn", "tn"))
    assert close(got, want)


@pytest.mark.parametrize(("key", "want"), RULE["expected"].items())
def test_the_oracle_reproduces_the_rule_example(key, want):
    assert close(O.two_by_two(*counts(), key), want)


@pytest.mark.long_cases("spark")
def test_novelty_is_symmetric_and_satisfaction_is_not(engine):
    needs(engine, "rule_novelty")
    swapped = pa.table({"holds": RULE["fires"], "fires": RULE["positive"]})
    a = engine.aggregate("nov", ROWS, columns=("holds", "fires"))
    b = engine.aggregate("nov", swapped, columns=("holds", "fires"))
    assert close(a, b)
    tp, fp, fn, tn = counts()
    got = engine.aggregate("sat", swapped, columns=("holds", "fires"))
    assert close(got, O.two_by_two(tp, fn, fp, tn, "sat"))


@pytest.mark.parametrize(
    ("zd", "want"), [(0, 0.0), (1, 1.0), ("ignore", None), (float("nan"), float("nan"))]
)
def test_satisfaction_of_a_rule_that_never_fires_follows_zero_division(engine, zd, want):
    needs(engine, "rule_satisfaction")
    never = pa.table({"holds": [True, False], "fires": [False, False]})
    got = engine.aggregate("sat", never, columns=("holds", "fires"), zero_division=zd)
    assert close(got, want)
