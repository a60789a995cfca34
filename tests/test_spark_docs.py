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


#: the kappa tests' and the label scores' measures whose Spark example is Polars' table with
#: Polars' parameters
SAME_AS_POLARS = (
    "bowker_p_value",
    "bowker_statistic",
    "cohen_kappa_high",
    "cohen_kappa_low",
    "cohen_kappa_p_value",
    "cohen_kappa_p_value_one_sided",
    "cohen_kappa_std_error",
    "cohen_kappa_z_value",
    "multilabel_average_precision",
    "multilabel_brier_score",
    "multilabel_roc_auc",
)


def test_examples_show_what_polars_shows():
    """The binary, rule and regression families' examples, the kappa tests' and the label
    scores', are the same tables in Polars and Spark: each shows the same number (Polars'
    outputs are computed when its stubs are written, Spark's are written in its family modules
    and checked by the doctests below)."""
    import mlsql.polars as mp

    families = ("binary", "rules", "regression")
    names = [m.name for f in families for m in measures(family=f) if m.kind != "counts"]
    names += SAME_AS_POLARS
    assert len(names) == 68
    missing = [n for n in names if n not in examples()]
    assert not missing, missing
    differ = {
        n: (_shown(ms.FUNCTIONS[n].__doc__), _shown(mp.FUNCTIONS[n].__doc__))
        for n in names
        if _shown(ms.FUNCTIONS[n].__doc__) != _shown(mp.FUNCTIONS[n].__doc__)
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
