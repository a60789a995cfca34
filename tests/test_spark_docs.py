"""The Spark documentation runs: every docstring example of mlsql.spark, and the Spark guide's SQL.

Generated functions carry their examples in ``__doc__`` (doctest does not find
functions built at import time), so they are collected here and run on the
test session; the Spark guide's SQL (docs/guides/spark.md) runs on small views with the numbers
checked against the oracle.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

from mlsql._registry import measures
from tests import oracle
from tests.engines.spark_engine import session

pytest.importorskip("pyspark")

import mlsql.spark as ms

#: every test here is long: Spark's own tests, where each Spark call plans for a second (with
#: the Spark engine's doctests, a tenth of the README's suite)
pytestmark = pytest.mark.long

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "spark.md"


def examples() -> list[str]:
    return sorted(name for name, fn in ms.FUNCTIONS.items() if ">>>" in (fn.__doc__ or ""))


def test_every_function_has_an_example():
    """Every public function of mlsql.spark (registry measures, their aliases, the frame
    functions) carries a runnable example."""
    missing = sorted(set(ms.FUNCTIONS) - set(examples()))
    assert not missing, missing


def _shown(doc: str) -> str:
    """The output an example shows: its docstring's last line."""
    return doc.rstrip().splitlines()[-1].strip()


def test_examples_show_what_polars_shows():
    """Every function whose measure has an engine-neutral example (mlsql._front.examples)
    shows, in Spark as in Polars, the output Polars' example prints: the same text, a struct
    as a Row of the same fields, or (where Spark's last digits may differ) its first 11
    decimals and an ellipsis. The doctests below check that Spark prints it."""
    import ast

    import mlsql.polars as mp
    from mlsql._front import examples as shared
    from mlsql._front.example_outputs import OUTPUTS

    found = {m.name: m for m in measures() if m.name in ms.FUNCTIONS and m.name in mp.FUNCTIONS}
    names = [n for n, m in found.items() if shared.example(m) and n in OUTPUTS]
    assert not set(names) - set(examples())
    assert len(names) > 150

    def same(spark: str, polars: str) -> bool:
        if spark.startswith("Row(") and polars.startswith("{"):
            fields = ast.literal_eval(polars)
            return spark == "Row(" + ", ".join(f"{k}={v!r}" for k, v in fields.items()) + ")"
        if spark.endswith("..."):
            return len(spark) == 16 and polars.startswith(spark[:-3])
        return spark == polars

    differ = {
        n: (_shown(ms.FUNCTIONS[n].__doc__), _shown(mp.FUNCTIONS[n].__doc__))
        for n in names
        if not same(_shown(ms.FUNCTIONS[n].__doc__), _shown(mp.FUNCTIONS[n].__doc__))
    }
    assert not differ, differ


@pytest.mark.parametrize("name", examples())
def test_docstring_example_runs(name):
    session()  # the examples' getOrCreate() finds the test session
    fn = ms.FUNCTIONS[name]
    parser = doctest.DocTestParser()
    test = parser.get_doctest(fn.__doc__, {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed"


ROWS = [
    (1, "m1", "2024-06-01", ["cat", "bird"], ["cat"]),
    (2, "m1", "2024-06-02", ["dog"], ["dog", "fish"]),
    (3, "m2", "2024-06-01", ["dog", None], ["cat", "cat"]),
    (4, "m2", "2024-06-02", [], []),
]


def sql_statements() -> list[str]:
    text = GUIDE.read_text()
    blocks = re.findall(r"```sql\n(.*?)```", text, re.S)
    out = []
    for block in blocks:
        out += [s.strip() for s in block.split(";") if s.strip()]
    return out


def test_guide_sql_runs_and_agrees():
    spark = session()
    ms.register(spark)
    df = spark.createDataFrame(
        ROWS, "id int, model string, day string, actual array<string>, predicted array<string>"
    )
    df.createOrReplaceTempView("preds")
    df.groupBy("model", "day").agg(
        ms.multilabel_counts("actual", "predicted").alias("counts")
    ).createOrReplaceTempView("daily_counts")
    statements = sql_statements()
    assert len(statements) == 3
    per_row, stored, plain = (spark.sql(s).collect() for s in statements)
    assert [r["missed"] for r in sorted(per_row)] == [["bird"], [], ["dog"], []]
    for model in ("m1", "m2"):
        rows = [(a, p) for _, m, _, a, p in ROWS if m == model]
        want = float(oracle.aggregate("micro_f1", rows))
        assert next(r["micro_f1"] for r in stored if r["model"] == model) == pytest.approx(want)
        assert next(r["micro_f1"] for r in plain if r["model"] == model) == pytest.approx(want)
