"""Spark's generated code: each ``ms.evaluate`` plan compiles, every measure of a kind of
data at once, grouped and weighted.

The test session interprets its plans (``tests/engines/spark_engine.py``: tiny queries gain
nothing from compiling them). A user's session compiles them to Java, and a method past the
JVM's 64 KB fails to compile: Spark then logs the error and runs the plan interpreted, much
slower (28 s for 50 rows, where the compiled plan took 1 s). Here a session of the test
run's JVM compiles every plan, whole-stage codegen on, with no interpreted fallback, so such
a plan fails; the estimates are checked against the references as in
``tests/test_evaluate.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from mlsql._registry import REGISTRY
from tests.engines import spark_engine
from tests.references import REFERENCES, close, tables
from tests.test_evaluate import _calls, _cases, _group, _repeated, _with_groups_and_weights

pytest.importorskip("pyspark")

#: what a user's session does (Spark's defaults), but a plan that fails to compile is an error
COMPILED = {
    "spark.sql.codegen.wholeStage": "true",
    "spark.sql.codegen.factoryMode": "CODEGEN_ONLY",
    "spark.sql.codegen.fallback": "false",
}


#: the plans whose generated code is known to pass the JVM's limit, and why (strict: such a
#: plan that compiles fails the test, so the entry goes)
TOO_LARGE: dict[tuple[str, str, str], str] = {}
CASES = [
    pytest.param(*case, marks=pytest.mark.xfail(strict=True, reason=TOO_LARGE[case]))
    if case in TOO_LARGE
    else case
    for case in _cases()
]


@pytest.fixture(scope="module")
def compiling() -> Any:
    """A session of the test run's JVM that compiles every plan and never falls back."""
    spark = spark_engine.session().newSession()
    for key, value in COMPILED.items():
        spark.conf.set(key, value)
    return spark


@pytest.mark.long
@pytest.mark.parametrize(("data", "actual", "predicted"), CASES)
def test_evaluate_plans_compile(compiling, data, actual, predicted):
    import mlsql.spark as ms

    table = _with_groups_and_weights(tables(data, range(1))[0], 0)  # one random table
    calls = _calls(None, data, actual, predicted, table, 0)
    weighted = [(n, p) for n, p in calls if REGISTRY[n].weighted]
    df = spark_engine.frame(table, compiling)
    got = ms.evaluate(df, actual, predicted, weighted, by="g", sample_weight="w").collect()
    keys = sorted(set(table.column("g").to_pylist()), key=lambda v: (v is not None, v))
    want = [
        (key, REFERENCES[n].expected(_repeated(_group(table, key)), p))
        for key in keys
        for n, p in weighted
    ]
    assert len(got) == len(want)
    wrong = [
        (g["g"], g["measure"], g["estimate"], w)
        for g, (key, w) in zip(got, want, strict=True)
        if g["g"] != key or not close(g["estimate"], w)
    ]
    assert not wrong
