"""The lecture's 2x2 tables on every engine: from stored counts and from rows, every measure."""

from __future__ import annotations

from fractions import Fraction

import pyarrow as pa
import pytest

from tests import oracle_single as O
from tests.conftest import conformance
from tests.test_single_label_tables import close, needs, run_cost_error

#: Spark's cases are long as a whole (tests/conftest.py reads this): CI's long tests run
#: them; the README's suite, at 10 min 20 s with them, stays under ten minutes
LONG_ENGINES = ("spark",)

TABLES = conformance("slides_single_label.json")["two_by_two"]

#: conformance key -> (mlsql name, parameters)
KEYS = {
    "prel": ("binary_precision", {}),
    "nrel": ("binary_negative_predictive_value", {}),
    "sup": ("binary_support", {}),
    "sens": ("binary_recall", {}),
    "spec": ("binary_specificity", {}),
    "tacc": ("binary_accuracy", {}),
    "cov": ("binary_coverage", {}),
    "f1": ("binary_f1", {}),
    "f_alpha(alpha=2)": ("binary_f_alpha", {"alpha": 2.0}),
    "kappa": ("binary_kappa", {}),
    "error_rate": ("binary_error_rate", {}),
    "err_cost(cost_fn=5, cost_fp=1)": ("binary_cost_error", {"cost_fn": 5.0, "cost_fp": 1.0}),
    "class_error_rate(+)": ("binary_false_negative_rate", {}),
    "class_error_rate(-)": ("binary_false_positive_rate", {}),
}
ALIASES = {"prel", "nrel", "sup", "sens", "spec", "tacc", "cov"}


def rows_of(t: dict) -> pa.Table:
    """Rows with the table's counts: (1, 1) tp times, (0, 1) fp, (1, 0) fn, (0, 0) tn."""
    cells = [(1, 1)] * t["tp"] + [(0, 1)] * t["fp"] + [(1, 0)] * t["fn"] + [(0, 0)] * t["tn"]
    return pa.table({"actual": [a for a, _ in cells], "predicted": [p for _, p in cells]})


def counts_of(t: dict) -> pa.Table:
    return pa.table({k: [t[k]] for k in ("tp", "fp", "fn", "tn")})


def cases() -> list[tuple[int, str, str, dict, float]]:
    return [
        (i, key, *KEYS[key], want)
        for i, t in enumerate(TABLES)
        for key, want in t["expected"].items()
    ]


@pytest.mark.parametrize(("i", "key", "name", "params", "want"), cases(), ids=str)
def test_two_by_two_from_rows(engine, i, key, name, params, want):
    needs(engine, name)
    assert close(engine.aggregate(name, rows_of(TABLES[i]), **params), want)
    if key in ALIASES:
        assert close(engine.aggregate(key, rows_of(TABLES[i]), **params), want)


@pytest.mark.parametrize(("i", "key", "name", "params", "want"), cases(), ids=str)
def test_two_by_two_from_stored_counts(engine, i, key, name, params, want):
    needs(engine, f"{name}_from_counts")
    got = engine.aggregate(
        f"{name}_from_counts", counts_of(TABLES[i]), columns=("tp", "fp", "fn", "tn"), **params
    )
    assert close(got, want)


#: weighted counts, as binary_counts gives them with sample_weight: fractions
WEIGHTED = {"tp": Fraction(5, 2), "fp": Fraction(7, 4), "fn": Fraction(1, 2), "tn": Fraction(13, 4)}


#: each key's name in the oracle (:func:`tests.oracle_single.two_by_two`)
ORACLE = {
    **{k: k for k in ("prel", "nrel", "sup", "sens", "spec", "tacc", "cov", "kappa")},
    "error_rate": "error_rate",
    "f1": "fbeta",
    "f_alpha(alpha=2)": "f_alpha",
    "err_cost(cost_fn=5, cost_fp=1)": "cost_error",
    "class_error_rate(+)": "fnr",
    "class_error_rate(-)": "fpr",
}


@pytest.mark.parametrize("key", list(KEYS))
def test_stored_counts_may_be_fractions(engine, key):
    """Spark truncated stored counts to whole numbers (precision 2/3 for 2.5 / 4.25)."""
    name, params = KEYS[key]
    needs(engine, f"{name}_from_counts")
    table = pa.table({k: [float(v)] for k, v in WEIGHTED.items()})
    got = engine.aggregate(f"{name}_from_counts", table, columns=("tp", "fp", "fn", "tn"), **params)
    want = O.two_by_two(*WEIGHTED.values(), ORACLE[key], **params)
    assert close(got, want), (got, float(want))


@pytest.mark.parametrize(("i", "key", "name", "params", "want"), cases(), ids=str)
def test_the_oracle_reproduces_the_slides(i, key, name, params, want):
    t = TABLES[i]
    short = {
        "f1": "fbeta",
        "f_alpha(alpha=2)": "f_alpha",
        "err_cost(cost_fn=5, cost_fp=1)": "cost_error",
        "class_error_rate(+)": "fnr",
        "class_error_rate(-)": "fpr",
    }.get(key, key)
    assert close(O.two_by_two(t["tp"], t["fp"], t["fn"], t["tn"], short, **params), want)


@pytest.mark.parametrize("i", range(len(TABLES)))
def test_binary_counts_and_boolean_inputs(engine, i):
    needs(engine, "binary_counts")
    t = TABLES[i]
    rows = rows_of(t)
    assert engine.aggregate("binary_counts", rows) == {k: t[k] for k in ("tp", "fp", "fn", "tn")}
    booleans = pa.table({c: rows[c].cast(pa.bool_()) for c in ("actual", "predicted")})
    want = O.two_by_two(t["tp"], t["fp"], t["fn"], t["tn"], "prel")
    assert close(engine.aggregate("binary_precision", booleans), want)


@pytest.mark.parametrize("i", range(len(TABLES)))
def test_multiclass_measures_agree_on_binary_rows(engine, i):
    """kappa, accuracy, class error rates and cost error of the multiclass family, on 0/1 rows."""
    needs(engine, "cohen_kappa_score")
    t = TABLES[i]
    tp, fp, fn, tn = (t[k] for k in ("tp", "fp", "fn", "tn"))
    rows = rows_of(t)
    assert close(engine.aggregate("kappa", rows), O.two_by_two(tp, fp, fn, tn, "kappa"))
    assert close(engine.aggregate("accuracy", rows), O.two_by_two(tp, fp, fn, tn, "tacc"))
    assert close(
        engine.aggregate("class_error_rate", rows, label=1), O.two_by_two(tp, fp, fn, tn, "fnr")
    )
    assert close(
        engine.aggregate("class_error_rate", rows, label=0), O.two_by_two(tp, fp, fn, tn, "fpr")
    )
    if "err_cost(cost_fn=5, cost_fp=1)" in t["expected"]:
        costs = [(1, 0, 5.0), (0, 1, 1.0)]  # actual 1 predicted 0 is a false negative
        got = run_cost_error(engine, rows, costs)
        assert close(got, t["expected"]["err_cost(cost_fn=5, cost_fp=1)"])


#: stored counts near the top of their column's integer type: sums and products of them
#: leave the type (2^62 + 2^62; kappa's (tp + fn)(fn + tn) past 3e9; INTEGER counts
#: past 2^30), where DuckDB's integer arithmetic raised an overflow and the others gave
#: the numbers. (type, tp, fp, fn, tn)
HUGE = [
    (pa.int64(), 2**62, 2**62, 2**62, 1),
    (pa.int64(), 5_000_000_000, 1_666_666_666, 1_000_000_000, 5_000_000_000),
    (pa.int32(), 2**31 - 1, 2**30, 2**30 + 7, 5),
]


def mcnemar(fp: int, fn: int) -> Fraction:
    """McNemar's statistic with the continuity correction (statsmodels' exact=False)."""
    return Fraction((abs(fp - fn) - 1) ** 2, fp + fn)


@pytest.mark.parametrize("key", [*KEYS, "mcnemar"])
@pytest.mark.parametrize("case", range(len(HUGE)))
def test_stored_counts_near_their_type_s_limit_give_the_number(engine, case, key):
    dtype, *cells = HUGE[case]
    name, params = KEYS.get(key, ("binary_mcnemar_statistic", {}))
    needs(engine, f"{name}_from_counts")
    table = pa.table(
        {k: pa.array([v], dtype) for k, v in zip(("tp", "fp", "fn", "tn"), cells, strict=True)}
    )
    got = engine.aggregate(f"{name}_from_counts", table, columns=("tp", "fp", "fn", "tn"), **params)
    want = mcnemar(*cells[1:3]) if key == "mcnemar" else O.two_by_two(*cells, ORACLE[key], **params)
    assert close(got, want), (got, float(want))
