"""``confusion_matrix_at_thresholds`` on every engine, against scikit-learn 1.8's function.

scikit-learn returns five arrays (tns, fps, fns, tps, thresholds) by decreasing
threshold, one entry per distinct score; mlsql returns one row per threshold,
(threshold, tn, fp, fn, tp) as DOUBLE. Random tables have tied scores, NULLs,
``by`` groups and whole weights (exact sums in every engine). The Spark cases
are long.
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest

from tests import oracle_ranking as O
from tests.test_curves import INF, known, random_scored, random_table, same
from tests.test_single_label_tables import run_table

LONG_ENGINES = ("spark",)
NAME = "confusion_matrix_at_thresholds"


def sklearn_counts(y: list[int], s: list[float], w: list[Any] | None = None) -> list[tuple]:
    """scikit-learn's counts as mlsql's rows: (threshold, tn, fp, fn, tp)."""
    from sklearn import metrics

    tns, fps, fns, tps, at = metrics.confusion_matrix_at_thresholds(y, s, sample_weight=w)
    return [
        (float(t), float(a), float(b), float(c), float(d))
        for t, a, b, c, d in zip(at, tns, fps, fns, tps, strict=True)
    ]


def test_a_small_weighted_example(engine):
    """Exact sums: at 0.9 one negative is predicted positive, at 0.5 every positive."""
    table = pa.table({"y": [0, 1, 1, 0], "s": [0.1, 0.5, 0.5, 0.9], "w": [1, 2, 1, 1]})
    got = run_table(engine, NAME, table, "y", "s", sample_weight="w")
    assert got == [(0.9, 1.0, 1.0, 3.0, 0.0), (0.5, 1.0, 1.0, 0.0, 3.0), (0.1, 0.0, 2.0, 0.0, 3.0)]


def test_a_row_weighing_nothing_is_left_out(engine):
    """scikit-learn's test_confusion_matrix_at_thresholds_zero_sample_weight."""
    weighted = pa.table(
        {"y": [0, 0, 1, 1, 1], "s": [0.1, 0.2, 0.3, 0.4, 0.5], "w": [1, 1, 1, 0.5, 0]}
    )
    without = pa.table({"y": [0, 0, 1, 1], "s": [0.1, 0.2, 0.3, 0.4], "w": [1, 1, 1, 0.5]})
    got = run_table(engine, NAME, weighted, "y", "s", sample_weight="w")
    assert got == run_table(engine, NAME, without, "y", "s", sample_weight="w")
    assert got == [
        (0.4, 2.0, 0.0, 1.0, 0.5),
        (0.3, 2.0, 0.0, 0.0, 1.5),
        (0.2, 1.0, 1.0, 0.0, 1.5),
        (0.1, 0.0, 2.0, 0.0, 1.5),
    ]


def test_equals_scikit_learn_on_random_data_with_ties_and_weights(engine):
    for seed in range(2 if engine.name == "spark" else 8):
        table = random_table(seed)
        rng = random.Random(f"counts-{seed}")
        w = [None if rng.random() < 0.05 else rng.choice([0, 1, 1, 2, 3]) for _ in range(60)]
        table = table.append_column("w", pa.array(w, pa.int64()))
        y, s = known(table)
        got = run_table(engine, NAME, table, "y", "s")
        assert same(got, sklearn_counts(y, s) if y else []), (seed, got)
        rows = [r for r in table.to_pylist() if None not in (r["y"], r["s"], r["w"])]
        got = run_table(engine, NAME, table, "y", "s", sample_weight="w", by=["g"])
        for group in ("a", "b", None):
            kept = [r for r in rows if r["g"] == group and r["w"] > 0]
            want = (
                sklearn_counts(
                    [r["y"] for r in kept], [r["s"] for r in kept], [r["w"] for r in kept]
                )
                if kept
                else []
            )
            assert same([r[1:] for r in got if r[0] == group], want), (seed, group)


@pytest.mark.parametrize("form", O.FORMS)
def test_per_label_equals_scikit_learn_on_the_indicator_matrix(engine, form):
    """Each label's counts over a score map, its unscored cells at -inf (below all)."""
    for seed in range(1 if engine.name == "spark" else 4):
        table, rows = random_scored(seed, form)
        got = run_table(engine, NAME, table, "actual", "scores")
        universe, cells = O.indicator_cells([(sc, a) for sc, a, _ in rows])
        want = []
        for j, label in enumerate(universe):
            column = [row[j] for row in cells]
            low = min((v for _, v in column if v != -INF), default=0.0) - 1.0
            counts = sklearn_counts(
                [int(t) for t, _ in column], [low if v == -INF else v for _, v in column]
            )
            want += [(label, -INF if t == low else t, *v) for t, *v in counts]
        assert same(got, want), (seed, got, want)
