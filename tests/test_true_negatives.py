"""true_negatives: a row's tn, and with a weight scikit-learn's weighted samplewise tn.

The reference is scikit-learn's ``multilabel_confusion_matrix(samplewise=True)``, whose
tn per row with ``sample_weight`` is weight x (labels - |A ∪ P|).
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

from tests.conftest import _engines

#: the Spark cases run with the long tests
LONG_ENGINES = ("spark",)

LABELS = ["a", "b", "c", "d", "e"]


def rows(seed: int, n: int) -> tuple[list, list, list]:
    rng = random.Random(seed)
    actual = [[x for x in LABELS if rng.random() < 0.4] for _ in range(n)]
    predicted = [[x for x in LABELS if rng.random() < 0.4] for _ in range(n)]
    weights = [rng.choice([0.0, 0.5, 1.0, 2.5, 3.0]) for _ in range(n)]
    return actual, predicted, weights


def weighted_tn(engine: str, data: pa.Table, n_labels: int) -> list[Any]:
    """w * true_negatives(actual, predicted, n_labels) per row, in ``engine``."""
    if engine == "duckdb":
        import mlsql

        con = mlsql.connect()
        con.register("t", data)
        sql = f"SELECT w * true_negatives(actual, predicted, {n_labels}) FROM t"
        return [r[0] for r in con.sql(sql).fetchall()]
    if engine == "polars":
        import polars as pl

        import mlsql.polars as mp

        df = pl.from_arrow(data)
        expr = pl.col("w") * mp.true_negatives("actual", "predicted", n_labels=n_labels)
        return df.select(expr).to_series().to_list()
    import pyspark.sql.functions as F

    import mlsql.spark as ms
    from tests.engines.spark_engine import frame

    df = frame(data)  # the session first: a Column needs it
    tn = ms.true_negatives("actual", "predicted", n_labels=n_labels)
    return [r[0] for r in df.select(F.col("w") * tn).collect()]


@pytest.mark.parametrize("engine", _engines())
def test_weighted_row_tn_equals_scikit_learns_samplewise_tn(engine: str) -> None:
    from sklearn.metrics import multilabel_confusion_matrix
    from sklearn.preprocessing import MultiLabelBinarizer

    actual, predicted, weights = rows(3, 40)
    binarize = MultiLabelBinarizer(classes=LABELS).fit([LABELS])
    mcm = multilabel_confusion_matrix(
        binarize.transform(actual),
        binarize.transform(predicted),
        sample_weight=weights,
        samplewise=True,
    )
    data = pa.table({"actual": actual, "predicted": predicted, "w": weights})
    got = weighted_tn(engine, data, len(LABELS))
    assert got == pytest.approx([float(m[0, 0]) for m in mcm], rel=1e-12, abs=0)


@pytest.mark.parametrize("engine", _engines())
def test_unknown_rows_and_a_too_small_universe(engine: str) -> None:
    data = pa.table(
        {"actual": [["a", "b"], None, []], "predicted": [["c"], ["a"], []], "w": [1.0, 1.0, 2.0]}
    )
    assert weighted_tn(engine, data, 4) == [1.0, None, 8.0]
    with pytest.raises(Exception, match="The 'n_labels' parameter of true_negatives must be at"):
        weighted_tn(engine, data, 2)
    with pytest.raises(Exception, match=r"must be a whole number > 0\. Got 0 instead"):
        weighted_tn(engine, data, 0)
