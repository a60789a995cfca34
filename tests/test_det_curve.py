"""``det_curve`` on every engine, against scikit-learn's points and its own test values.

scikit-learn's ``det_curve`` returns (fpr, fnr, thresholds) by increasing
threshold, from the first point where every positive is found to the last
where no negative is predicted positive (+inf among its thresholds); mlsql
returns the same points by decreasing threshold. Random tables have tied
scores, NULLs, ``by`` groups and whole weights (exact sums in every engine).
The Spark cases are long.
"""

from __future__ import annotations

import random
import warnings
from typing import Any

import pyarrow as pa
import pytest

from mlsql._registry import REGISTRY
from tests import oracle_ranking as O
from tests.test_curves import INF, NAN, known, random_scored, random_table, same
from tests.test_single_label_tables import run_table

LONG_ENGINES = ("spark",)


def sklearn_det(y: list[int], s: list[float], w: list[Any] | None = None) -> list[tuple]:
    """scikit-learn's DET points as mlsql's rows: (threshold, fpr, fnr), from the highest."""
    from sklearn import metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpr, fnr, at = metrics.det_curve(y, s, sample_weight=w)
    return list(zip(at.tolist(), fpr.tolist(), fnr.tolist(), strict=True))[::-1]


#: scikit-learn's test_det_curve_toydata and test_det_curve_tie_handling: (y, scores,
#: fpr, fnr) by increasing threshold, as its tests write them
TOY = [
    ([0, 0, 1], [0, 0.5, 1], [0], [0]),
    ([0, 0, 1], [0.25, 0.5, 0.75], [0], [0]),
    ([0, 1, 0], [0, 0.5, 1], [0.5, 0.5, 0], [0, 1, 1]),
    ([0, 1, 0], [0.5, 0.75, 1], [0.5, 0.5, 0], [0, 1, 1]),
    ([0, 1, 1], [0, 0.5, 1], [0.0], [0]),
    ([1, 0, 0], [0, 0.5, 1], [1, 1, 0.5, 0], [0, 1, 1, 1]),
    ([1, 0, 0], [0.25, 0.5, 0.75], [1, 1, 0.5, 0], [0, 1, 1, 1]),
    ([1, 0, 1], [0, 0.5, 1], [1, 1, 0], [0, 0.5, 0.5]),
    ([1, 0], [0.5, 0.5], [1, 0], [0, 1]),
    ([0, 0, 1], [0.25, 0.5, 0.5], [0.5, 0], [0, 1]),
    ([0, 1, 1], [0.25, 0.5, 0.5], [0], [0]),
    ([1, 0, 0], [0.25, 0.5, 0.5], [1, 1, 0], [0, 1, 1]),
    ([1, 0, 1], [0.25, 0.5, 0.5], [1, 1, 0], [0, 0.5, 1]),
    ([0, 1, 0, 1, 0, 1], [0.5] * 6, [1, 0], [0, 1]),
]


def test_scikit_learns_own_values(engine):
    for y, s, fpr, fnr in TOY:
        table = pa.table({"y": y, "s": [float(x) for x in s]})
        got = run_table(engine, "det_curve", table, "y", "s")
        assert [r[1:] for r in got] == list(zip(fpr, fnr, strict=True))[::-1], (y, s, got)


def test_a_small_example_in_exact_fractions(engine):
    """Scores .9 .8 .7 .6 .5 .4 with labels 1 0 1 1 0 0: the curve starts at .9, the last
    point with no false positive, and stops at .6, where the third positive is found."""
    table = pa.table({"y": [1, 0, 1, 1, 0, 0], "s": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]})
    got = run_table(engine, "det_curve", table, "y", "s")
    assert got == [(0.9, 0.0, 2 / 3), (0.8, 1 / 3, 2 / 3), (0.7, 1 / 3, 1 / 3), (0.6, 1 / 3, 0.0)]


def test_equals_scikit_learn_on_random_data_with_ties_and_weights(engine):
    for seed in range(2 if engine.name == "spark" else 8):
        table = random_table(seed)
        rng = random.Random(f"det-{seed}")
        w = [None if rng.random() < 0.05 else rng.choice([0, 1, 1, 2, 3]) for _ in range(60)]
        table = table.append_column("w", pa.array(w, pa.int64()))
        y, s = known(table)
        got = run_table(engine, "det_curve", table, "y", "s", zero_division=NAN)
        if y and 0 < sum(y) < len(y):  # scikit-learn refuses a single class
            assert same(got, sklearn_det(y, s)), (seed, got)
        rows = [r for r in table.to_pylist() if None not in (r["y"], r["s"], r["w"])]
        got = run_table(
            engine, "det_curve", table, "y", "s", sample_weight="w", by=["g"], zero_division=NAN
        )
        for group in ("a", "b", None):
            kept = [r for r in rows if r["g"] == group and r["w"] > 0]
            gy = [r["y"] for r in kept]
            if not gy or not 0 < sum(gy) < len(gy):
                continue
            want = sklearn_det(gy, [r["s"] for r in kept], [r["w"] for r in kept])
            assert same([r[1:] for r in got if r[0] == group], want), (seed, group)


@pytest.mark.parametrize("form", O.FORMS)
def test_per_label_equals_scikit_learn_on_the_indicator_matrix(engine, form):
    """Each label's curve of a score map, its unscored cells at -inf (a score below all)."""
    for seed in range(1 if engine.name == "spark" else 4):
        table, rows = random_scored(seed, form)
        got = run_table(engine, "det_curve", table, "actual", "scores", zero_division=NAN)
        universe, cells = O.indicator_cells([(sc, a) for sc, a, _ in rows])
        for j, label in enumerate(universe):
            column = [row[j] for row in cells]
            y = [int(t) for t, _ in column]
            if not 0 < sum(y) < len(y):
                continue
            low = min((v for _, v in column if v != -INF), default=0.0) - 1.0
            points = sklearn_det(y, [low if v == -INF else v for _, v in column])
            want = [(-INF if t == low else t, *v) for t, *v in points]
            assert same([r[1:] for r in got if r[0] == label], want), (seed, label)


def test_single_class_data_follows_zero_division(engine):
    """scikit-learn refuses one class; mlsql trims as it would and the undefined rate is
    zero_division: all positive, fpr undefined; all negative, fnr undefined."""
    positives = pa.table({"y": [1, 1], "s": [0.2, 0.6]})
    assert run_table(engine, "det_curve", positives, "y", "s", zero_division=1) == [(0.2, 1.0, 0.0)]
    negatives = pa.table({"y": [0, 0], "s": [0.2, 0.6]})
    assert run_table(engine, "det_curve", negatives, "y", "s", zero_division=1) == [(INF, 0.0, 1.0)]


def test_registry_declares_it():
    assert REGISTRY["det_curve"].kind == "table"
    assert [p.name for p in REGISTRY["det_curve"].params] == [
        "zero_division",
        "drop_intermediate",
        "by",
    ]
