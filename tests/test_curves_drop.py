"""``roc_curve(..., drop_intermediate)`` on every engine, against scikit-learn's points.

scikit-learn's ``roc_curve`` drops, by default (``drop_intermediate=True``), the
thresholds where the second differences of fp and tp are both 0, keeping the
first and the last, then adds the point of threshold +inf. mlsql keeps every
point by default (``drop_intermediate=False``, so that its earlier tables do
not change) and drops them as scikit-learn does when asked. Weights are whole
numbers here, so the cumulative sums are exact in every engine and the
differences scikit-learn takes are the same. The Spark cases are long.
"""

from __future__ import annotations

import random
import warnings
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from tests import oracle_ranking as O
from tests.test_curves import INF, NAN, known, random_scored, random_table, same
from tests.test_single_label_tables import run_table

LONG_ENGINES = ("spark",)


def sklearn_dropped(y: list[int], s: list[float], w: list[Any] | None = None) -> list[tuple]:
    """scikit-learn's ``roc_curve`` points with its default ``drop_intermediate=True``."""
    from sklearn import metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # single-class data warns
        fpr, tpr, at = metrics.roc_curve(y, s, sample_weight=w)
    return list(zip(at.tolist(), fpr.tolist(), tpr.tolist(), strict=True))


def test_scikit_learns_own_cases(engine):
    """scikit-learn's test_roc_curve_drop_intermediate: its thresholds, written out."""
    table = pa.table({"y": [0, 0, 0, 0, 1, 1], "s": [0.0, 0.2, 0.5, 0.6, 0.7, 1.0]})
    got = run_table(engine, "roc_curve", table, "y", "s", drop_intermediate=True)
    assert [r[0] for r in got] == [INF, 1.0, 0.7, 0.0]
    # the points as exact fractions: (fpr, tpr) at each threshold kept
    assert [r[1:] for r in got] == [(0.0, 0.0), (0.0, 0.5), (0.0, 1.0), (1.0, 1.0)]
    y = [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    s = [0.0, 0.1, 0.6, 0.6, 0.7, 0.8, 0.9, 0.6, 0.7, 0.8, 0.9, 0.9, 1.0]
    got = run_table(
        engine, "roc_curve", pa.table({"y": y, "s": s}), "y", "s", drop_intermediate=True
    )
    assert [r[0] for r in got] == [INF, 1.0, 0.9, 0.7, 0.6, 0.0]


def test_the_default_keeps_every_point(engine):
    """Not given, and given False: every distinct score has its point (the earlier tables)."""
    table = pa.table({"y": [0, 0, 0, 0, 1, 1], "s": [0.0, 0.2, 0.5, 0.6, 0.7, 1.0]})
    every = [INF, 1.0, 0.7, 0.6, 0.5, 0.2, 0.0]
    assert [r[0] for r in run_table(engine, "roc_curve", table, "y", "s")] == every
    got = run_table(engine, "roc_curve", table, "y", "s", drop_intermediate=False)
    assert [r[0] for r in got] == every


def weighted_table(seed: int, n: int = 60) -> pa.Table:
    """:func:`tests.test_curves.random_table` with whole weights 0 to 3, some NULL."""
    table = random_table(seed, n)
    rng = random.Random(f"drop-{seed}")
    w = [None if rng.random() < 0.05 else rng.choice([0, 1, 1, 2, 3]) for _ in range(n)]
    return table.append_column("w", pa.array(w, pa.int64()))


def test_equals_scikit_learn_on_random_data_with_ties_and_weights(engine):
    for seed in range(2 if engine.name == "spark" else 8):
        table = weighted_table(seed)
        y, s = known(table)
        got = run_table(
            engine, "roc_curve", table, "y", "s", drop_intermediate=True, zero_division=NAN
        )
        assert same(got, sklearn_dropped(y, s) if y else []), (seed, got)
        rows = [r for r in table.to_pylist() if None not in (r["y"], r["s"], r["w"])]
        got = run_table(
            engine, "roc_curve", table, "y", "s", sample_weight="w", drop_intermediate=True,
            by=["g"], zero_division=NAN,
        )  # fmt: skip
        for group in ("a", "b", None):
            kept = [r for r in rows if r["g"] == group and r["w"] > 0]
            want = (
                sklearn_dropped(
                    [r["y"] for r in kept], [r["s"] for r in kept], [r["w"] for r in kept]
                )
                if kept
                else []
            )
            assert same([r[1:] for r in got if r[0] == group], want), (seed, group)


def per_label_points(
    rows: list[tuple[Any, Any]], points_of: Callable[[list[int], list[float]], list[tuple]]
) -> list[tuple]:
    """Per label of the oracle's universe, ``points_of(y, s)`` on the label's column of the
    indicator matrix, an unscored cell given a finite score below every other and its
    threshold read back as -inf."""
    universe, cells = O.indicator_cells(rows)
    want = []
    for j, label in enumerate(universe):
        column = [row[j] for row in cells]
        low = min((v for _, v in column if v != -INF), default=0.0) - 1.0
        points = points_of(
            [int(t) for t, _ in column], [low if v == -INF else v for _, v in column]
        )
        want += [(label, -INF if t == low else t, *v) for t, *v in points]
    return want


@pytest.mark.parametrize("form", O.FORMS)
def test_per_label_equals_scikit_learn_on_the_indicator_matrix(engine, form):
    """Each label's curve of a score map, its unscored cells at -inf (a score below all)."""
    for seed in range(1 if engine.name == "spark" else 4):
        table, rows = random_scored(seed, form)
        got = run_table(
            engine,
            "roc_curve",
            table,
            "actual",
            "scores",
            drop_intermediate=True,
            zero_division=NAN,
        )
        want = per_label_points([(sc, a) for sc, a, _ in rows], sklearn_dropped)
        assert same(got, want), (seed, got, want)


@pytest.mark.parametrize(
    ("bad", "shown"), [(1, "1"), (0, "0"), ("true", "'true'"), (None, "None"), (0.5, "0.5")]
)
def test_a_value_other_than_a_boolean_is_one_error(engine, bad, shown):
    table = pa.table({"y": [0, 1], "s": [0.1, 0.9]})
    want = (
        "The 'drop_intermediate' parameter of roc_curve must be a boolean (True or False). "
        f"Got {shown} instead."
    )
    with pytest.raises(Exception) as err:
        run_table(engine, "roc_curve", table, "y", "s", drop_intermediate=bad)
    assert want in str(err.value)
