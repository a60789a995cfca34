"""``precision_recall_curve`` and ``det_curve`` with ``drop_intermediate`` on every engine,
against scikit-learn's points.

scikit-learn's two curves drop (when asked; both default to keeping every point) the
thresholds where tp does not change from the previous point nor to the next, keeping
the first and the last: of a run of points with one recall (one fnr) only its ends.
precision-recall compares the distinct scores alone and adds its (1, 0) point after;
DET compares them with the +inf point among them, then trims the curve. Weights are
whole numbers, so the cumulative sums are exact in every engine. The Spark cases are
long.
"""

from __future__ import annotations

import warnings
from typing import Any

import pyarrow as pa
import pytest

from tests import oracle_ranking as O
from tests.test_curves import INF, NAN, known, random_scored, same
from tests.test_curves_drop import per_label_points, weighted_table
from tests.test_single_label_tables import run_table

LONG_ENGINES = ("spark",)
CURVES = ("precision_recall_curve", "det_curve")


def sklearn_dropped(
    name: str, y: list[int], s: list[float], w: list[Any] | None = None
) -> list[tuple]:
    """scikit-learn's points of curve ``name`` with ``drop_intermediate=True``, as mlsql's
    rows from the highest threshold: precision-recall's (1, 0) end point at +inf."""
    from sklearn import metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # single-class data warns
        if name == "det_curve":
            fpr, fnr, at = metrics.det_curve(y, s, sample_weight=w, drop_intermediate=True)
            return list(zip(at.tolist(), fpr.tolist(), fnr.tolist(), strict=True))[::-1]
        p, r, at = metrics.precision_recall_curve(y, s, sample_weight=w, drop_intermediate=True)
    thresholds = [INF, *at[::-1].tolist()]
    return list(zip(thresholds, p[::-1].tolist(), r[::-1].tolist(), strict=True))


#: scikit-learn's test_precision_recall_curve_drop_intermediate: its thresholds kept
PR_CASES = [
    ([0, 0, 0, 0, 1, 1], [0.0, 0.2, 0.5, 0.6, 0.7, 1.0], [0.0, 0.7, 1.0]),
    (
        [0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1],
        [0.0, 0.1, 0.6, 0.6, 0.7, 0.8, 0.9, 0.6, 0.7, 0.8, 0.9, 0.9, 1.0],
        [0.0, 0.6, 0.7, 0.8, 0.9, 1.0],
    ),
    ([0, 0, 0, 0], [0.0, 0.1, 0.2, 0.3], [0.0, 0.3]),
    ([1, 1, 1, 1], [0.0, 0.1, 0.2, 0.3], [0.0, 0.1, 0.2, 0.3]),
]
#: scikit-learn's test_det_curve_drop_intermediate: fpr and fnr by increasing threshold
DET_CASES = [
    ([1, 0, 0], [0, 0.5, 1], [1, 1, 0.0], [0, 1, 1]),
    ([1, 0, 0], [0, 0.25, 0.5], [1, 1, 0.0], [0, 1, 1]),
    ([1, 0, 1], [0, 0.5, 1], [1, 1, 0], [0, 0.5, 0.5]),
    ([1, 0, 1], [0, 0.25, 0.5], [1, 1, 0], [0, 0.5, 0.5]),
]


@pytest.mark.parametrize(("y", "s", "thresholds"), PR_CASES)
def test_scikit_learns_own_precision_recall_cases(engine, y, s, thresholds):
    table = pa.table({"y": y, "s": [float(x) for x in s]})
    got = run_table(
        engine, "precision_recall_curve", table, "y", "s", drop_intermediate=True, zero_division=1
    )
    assert [r[0] for r in got] == [INF, *thresholds[::-1]]


@pytest.mark.parametrize(("y", "s", "fpr", "fnr"), DET_CASES)
def test_scikit_learns_own_det_cases(engine, y, s, fpr, fnr):
    table = pa.table({"y": y, "s": [float(x) for x in s]})
    got = run_table(engine, "det_curve", table, "y", "s", drop_intermediate=True)
    assert [tuple(r[1:]) for r in got] == list(zip(fpr, fnr, strict=True))[::-1]


def test_a_run_of_one_tp_keeps_its_ends_in_exact_fractions(engine):
    """Scores 0.9 .. 0.5 over y = 1, 0, 0, 0, 1: tp stays 1 from 0.9 to 0.6, so both curves
    keep that run's ends, 0.9 and 0.6, and drop 0.8 and 0.7."""
    table = pa.table({"y": [1, 0, 0, 0, 1], "s": [0.9, 0.8, 0.7, 0.6, 0.5]})
    pr = run_table(engine, "precision_recall_curve", table, "y", "s", drop_intermediate=True)
    assert pr == [(INF, 1.0, 0.0), (0.9, 1.0, 0.5), (0.6, 0.25, 0.5), (0.5, 0.4, 1.0)]
    det = run_table(engine, "det_curve", table, "y", "s", drop_intermediate=True)
    # tp by threshold: +inf 0, 0.9 1, 0.8 1, 0.7 1, 0.6 1, 0.5 2; kept: +inf, 0.9, 0.6, 0.5;
    # trimmed to the last without a false positive (0.9) and the first with every positive
    assert det == [(0.9, 0.0, 0.5), (0.6, 1.0, 0.5), (0.5, 1.0, 0.0)]


@pytest.mark.parametrize("name", CURVES)
def test_the_default_keeps_every_point(engine, name):
    table = pa.table({"y": [1, 0, 0, 0, 1], "s": [0.9, 0.8, 0.7, 0.6, 0.5]})
    every = run_table(engine, name, table, "y", "s")
    assert run_table(engine, name, table, "y", "s", drop_intermediate=False) == every
    assert len(run_table(engine, name, table, "y", "s", drop_intermediate=True)) < len(every)


@pytest.mark.parametrize("name", CURVES)
def test_equals_scikit_learn_on_random_data_with_ties_and_weights(engine, name):
    for seed in range(2 if engine.name == "spark" else 8):
        table = weighted_table(seed)
        y, s = known(table)
        got = run_table(engine, name, table, "y", "s", drop_intermediate=True, zero_division=NAN)
        defined = 0 < sum(y) < len(y) if name == "det_curve" else sum(y) > 0
        if defined:  # scikit-learn refuses DET of one class and divides recall by 0
            assert same(got, sklearn_dropped(name, y, s)), (seed, got)
        rows = [r for r in table.to_pylist() if None not in (r["y"], r["s"], r["w"])]
        got = run_table(
            engine, name, table, "y", "s", sample_weight="w", drop_intermediate=True,
            by=["g"], zero_division=NAN,
        )  # fmt: skip
        for group in ("a", "b", None):
            kept = [r for r in rows if r["g"] == group and r["w"] > 0]
            ys = [r["y"] for r in kept]
            if not (0 < sum(ys) < len(ys) if name == "det_curve" else sum(ys) > 0):
                continue
            want = sklearn_dropped(name, ys, [r["s"] for r in kept], [r["w"] for r in kept])
            assert same([r[1:] for r in got if r[0] == group], want), (seed, group)


@pytest.mark.parametrize("form", O.FORMS)
def test_per_label_precision_recall_equals_scikit_learn_on_the_indicator_matrix(engine, form):
    """Each label's curve of a score map, its unscored cells at -inf (a score below all)."""
    for seed in range(1 if engine.name == "spark" else 4):
        table, rows = random_scored(seed, form)
        got = run_table(
            engine,
            "precision_recall_curve",
            table,
            "actual",
            "scores",
            drop_intermediate=True,
            zero_division=NAN,
        )
        want = per_label_points([(sc, a) for sc, a, _ in rows], _precision_recall)
        assert same(got, want), (seed, got, want)


def _precision_recall(y: list[int], s: list[float]) -> list[tuple]:
    """scikit-learn's dropped precision-recall points; without positives recall is undefined:
    zero_division (NaN here), 0 at +inf."""
    points = sklearn_dropped("precision_recall_curve", y, s)
    if sum(y) == 0:
        return [(t, p, 0.0 if t == INF else NAN) for t, p, _ in points]
    return points


@pytest.mark.parametrize("name", CURVES)
def test_a_value_other_than_a_boolean_is_one_error(engine, name):
    table = pa.table({"y": [0, 1], "s": [0.1, 0.9]})
    want = (
        f"The 'drop_intermediate' parameter of {name} must be a boolean (True or False). "
        "Got 1 instead."
    )
    with pytest.raises(Exception) as err:
        run_table(engine, name, table, "y", "s", drop_intermediate=1)
    assert want in str(err.value)
