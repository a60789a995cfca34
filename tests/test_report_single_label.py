"""The single-label summary of a report (accuracy, balanced accuracy, kappa, MCC) on the
DataFrame engines: the numbers are scikit-learn's per group, weighted; on Spark the values
come from ``ms.evaluate``'s counts per cell, so no plan the report runs collects a group's
rows for them (the class-wise Columns do)."""

from __future__ import annotations

import math
import random
import re
from typing import Any

import pytest
from sklearn import metrics

import mlsql
from mlsql.report.engines import SINGLE_MEASURES
from mlsql.report.frame_ops import SparkOps
from tests.conftest import _engines

SKLEARN = {
    "accuracy": metrics.accuracy_score,
    "balanced_accuracy_score": metrics.balanced_accuracy_score,
    "cohen_kappa_score": metrics.cohen_kappa_score,
    "matthews_corrcoef": metrics.matthews_corrcoef,
}
#: a group column named as one of evaluate's own output columns
GROUP = "measure"


def _collects_cells_only(plan: str) -> bool:
    """Whether every aggregate of Spark's optimised ``plan`` that collects values into an
    array reads the counts per (group, actual, predicted) cell (an aggregate keyed by both
    label columns right below it), never the rows."""
    lines = [line.lstrip(" :+-|") for line in plan.splitlines()]
    for line, child in zip(lines, [*lines[1:], ""], strict=True):
        if re.search(r"\b(collect_list|collect_set|array_agg)\(", line):
            keys = re.match(r"Aggregate \[([^\]]*)\]", child)
            if keys is None or "__mlsql_a" not in keys[1] or "__mlsql_p" not in keys[1]:
                return False
    return True


def _rows(seed: int = 5, n: int = 120) -> list[tuple[Any, ...]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        actual = rng.choice("abcd")
        predicted = actual if rng.random() < 0.6 else rng.choice("abcd")
        rows.append((rng.choice(("m1", "m2")), actual, predicted, rng.choice((0.5, 1.0, 2.0, 3.0))))
    return rows


def _frame(engine: str, rows: list[tuple[Any, ...]]) -> Any:
    columns = (GROUP, "actual", "predicted", "w")
    if engine == "duckdb":
        import pyarrow as pa

        return pa.Table.from_pylist([dict(zip(columns, r, strict=True)) for r in rows])
    if engine == "polars":
        import polars as pl

        return pl.DataFrame(rows, schema=list(columns), orient="row")
    from tests.engines.spark_engine import session

    schema = f"`{GROUP}` string, actual string, predicted string, w double"
    return session().createDataFrame(rows, schema)


@pytest.mark.long_cases("spark")  # 16 s on two cores
@pytest.mark.parametrize("engine", _engines())
def test_single_label_summary_is_scikit_learns_per_group_weighted(engine, monkeypatch) -> None:
    rows = _rows()
    collected: list[tuple[list[str], str]] = []
    if engine == "spark":
        rows_of = SparkOps.rows

        def recorded(self: SparkOps, frame: Any) -> list[dict[str, Any]]:
            plan = frame._jdf.queryExecution().optimizedPlan().toString()
            collected.append((frame.columns, plan))
            return rows_of(self, frame)

        monkeypatch.setattr(SparkOps, "rows", recorded)
    report = mlsql.report(_frame(engine, rows), "actual", "predicted", by=GROUP, sample_weight="w")
    assert report.single_label
    assert [row[GROUP] for row in report.summary] == ["m1", "m2"]
    for row in report.summary:
        kept = [r for r in rows if r[0] == row[GROUP]]
        actual, predicted, weight = ([r[k] for r in kept] for k in (1, 2, 3))
        for name in SINGLE_MEASURES:
            want = SKLEARN[name](actual, predicted, sample_weight=weight)
            assert math.isclose(row[name], want, rel_tol=1e-12), (name, row[name], want)
    if engine == "spark":
        measured = [plan for columns, plan in collected if "estimate" in columns]
        assert measured, "the single-label measures did not come from evaluate"
        for plan in measured:
            assert _collects_cells_only(plan), plan
        # no frame the report collected holds the class-wise Columns' values
        class_wise = set(SINGLE_MEASURES) - {"accuracy"}
        assert not any(class_wise & set(columns) for columns, _ in collected), collected


@pytest.mark.parametrize(
    ("weight", "message"),
    [
        (3, "The 'sample_weight' parameter of report must be a column name or None. Got 3."),
        ("", "The 'sample_weight' parameter of report must be a column name or None. Got ''."),
        ("actual", "The 'sample_weight' column 'actual' of report is a label or 'by' column"),
        (GROUP, f"The 'sample_weight' column {GROUP!r} of report is a label or 'by' column"),
        ("nowhere", "report: no column 'nowhere'"),
    ],
)
def test_a_bad_sample_weight_column_is_refused(weight, message) -> None:
    with pytest.raises(mlsql.MlsqlError, match=re.escape(message)):
        mlsql.report(
            _frame("duckdb", _rows()), "actual", "predicted", by=GROUP, sample_weight=weight
        )
