"""``sample_weight`` on precision_recall_curve and roc_curve, every engine.

scikit-learn's ``precision_recall_curve`` and ``roc_curve`` take ``sample_weight``
and drop the rows weighing 0 before anything is counted (``_binary_clf_curve``),
so a threshold whose rows all weigh 0 has no point; mlsql does the same. A NULL
weight makes a row unknown (scikit-learn never sees it). With integer weights a
curve equals the unweighted curve over each row repeated ``w`` times.
"""

from __future__ import annotations

import math
import random
import re
import warnings
from typing import Any

import pyarrow as pa
import pytest

from mlsql import _params as P
from tests import oracle_ranking as O
from tests.test_curves import CURVES, INF, NAN, random_scored, random_table, same
from tests.test_reliability_inputs import assert_mlsql_error
from tests.test_single_label_tables import run_table
from tests.weights import integer_weights, repeated, with_weights


def sklearn_weighted(name: str, y: list[int], s: list[float], w: list[float]) -> list[tuple]:
    """scikit-learn's weighted points of curve ``name`` as mlsql's rows (threshold first,
    from the highest; the precision-recall end point (1, 0) first, at +inf)."""
    from sklearn import metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # single-class data warns
        if name == "roc_curve":
            fpr, tpr, at = metrics.roc_curve(y, s, sample_weight=w, drop_intermediate=False)
            return list(zip(at.tolist(), fpr.tolist(), tpr.tolist(), strict=True))
        precision, recall, at = metrics.precision_recall_curve(y, s, sample_weight=w)
    thresholds = [INF, *at[::-1].tolist()]
    return list(zip(thresholds, precision[::-1].tolist(), recall[::-1].tolist(), strict=True))


def close(got: list[tuple], want: list[tuple]) -> bool:
    """:func:`tests.test_curves.same` to 1e-9 relative: weighted sums add in another order."""

    def eq(a: Any, b: Any) -> bool:
        if isinstance(b, float) and math.isnan(b):
            return isinstance(a, float) and math.isnan(a)
        if isinstance(b, float):
            return a is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        return a == b

    return len(got) == len(want) and all(
        len(g) == len(w) and all(eq(a, b) for a, b in zip(g, w, strict=True))
        for g, w in zip(got, want, strict=True)
    )


def float_weights(seed: int, n: int) -> list[Any]:
    """``n`` float weights, about one in seven 0 and one in sixteen NULL."""
    rng = random.Random(f"float-weights-{seed}")
    out: list[Any] = []
    for _ in range(n):
        r = rng.random()
        out.append(None if r < 0.06 else 0.0 if r < 0.2 else rng.uniform(0.01, 5.0))
    return out


def test_a_threshold_whose_rows_weigh_nothing_has_no_point(engine):
    """Weights 1, 0, 2, .5, 0: the rows at .8 and .3 weigh 0, as in scikit-learn."""
    table = pa.table({"y": [1, 0, 1, 0, 1], "s": [0.9, 0.8, 0.7, 0.7, 0.3]})
    table = table.append_column("w", pa.array([1.0, 0.0, 2.0, 0.5, 0.0]))
    roc = run_table(engine, "roc_curve", table, "y", "s", sample_weight="w")
    assert roc == [(INF, 0.0, 0.0), (0.9, 0.0, 1 / 3), (0.7, 1.0, 1.0)]
    pr = run_table(engine, "precision_recall_curve", table, "y", "s", sample_weight="w")
    assert pr == [(INF, 1.0, 0.0), (0.9, 1.0, 1 / 3), (0.7, 3 / 3.5, 1.0)]
    for name in CURVES:
        got = run_table(engine, name, table, "y", "s", sample_weight="w")
        assert close(got, sklearn_weighted(name, *known_weighted(table)))


def known_weighted(table: pa.Table, group: Any = ...) -> tuple[list, list, list]:
    """(labels, scores, weights) of the known rows (label, score and weight not NULL)."""
    rows = [
        r
        for r in table.to_pylist()
        if r["y"] is not None and r["s"] is not None and r["w"] is not None
        if group is ... or r["g"] == group
    ]
    return [r["y"] for r in rows], [r["s"] for r in rows], [r["w"] for r in rows]


@pytest.mark.parametrize("name", CURVES)
def test_float_weights_equal_scikit_learn(engine, name):
    for seed in range(1 if engine.name == "spark" else 4):
        table = random_table(seed)
        table = with_weights(table, float_weights(seed, len(table)))
        y, s, w = known_weighted(table)
        zd = NAN if name == "roc_curve" else 1
        got = run_table(engine, name, table, "y", "s", zero_division=zd, sample_weight="w")
        want = sklearn_weighted(name, y, s, w) if any(w) else []
        assert close(got, want), (seed, got, want)
        by_group = run_table(
            engine, name, table, "y", "s", by=["g"], zero_division=NAN, sample_weight="w"
        )
        for group in ("a", "b", None):
            gy, gs, gw = known_weighted(table, group)
            if not any(gw):
                assert all(r[0] != group for r in by_group)
                continue
            want = sklearn_weighted(name, gy, gs, gw)
            if name == "precision_recall_curve" and not any(
                wi for yi, wi in zip(gy, gw, strict=True) if yi
            ):
                want = [(t, p, 0.0 if t == INF else NAN) for t, p, _ in want]
            got = [r[1:] for r in by_group if r[0] == group]
            assert close(got, want), (seed, group, got, want)


def label_points_weighted(name: str, rows: list[tuple], zero_division: float) -> list[tuple]:
    """Per label, scikit-learn's weighted points on the label's column of the indicator matrix
    of the rows weighing more than 0 (``rows``: (scores, actual, weight)); an unscored cell is
    at -inf (a finite score below the others for scikit-learn, read back as -inf)."""
    kept = [(s, a, w) for s, a, w in rows if s is not None and a is not None and w]
    universe, cells = O.indicator_cells([(s, a) for s, a, _ in kept])
    ws = [w for _, _, w in kept]
    out = []
    for j, label in enumerate(universe):
        column = [row[j] for row in cells]
        low = min((v for _, v in column if v != -INF), default=0.0) - 1.0
        y = [int(t) for t, _ in column]
        points = sklearn_weighted(name, y, [low if v == -INF else v for _, v in column], ws)
        if name == "precision_recall_curve" and sum(y) == 0:  # recall undefined
            points = [(t, p, 0.0 if t == INF else zero_division) for t, p, _ in points]
        out += [(label, -INF if t == low else t, *v) for t, *v in points]
    return out


@pytest.mark.parametrize("form", O.FORMS)
@pytest.mark.parametrize("name", CURVES)
def test_float_weights_per_label_equal_scikit_learn(engine, name, form):
    zd = NAN if name == "roc_curve" else 1
    for seed in range(1 if engine.name == "spark" else 3):
        table, rows = random_scored(seed, form)
        w = float_weights(seed + 10, len(table))
        table = with_weights(table, w)
        got = run_table(
            engine, name, table, "actual", "scores", zero_division=zd, sample_weight="w"
        )
        weighted = [(s, a, wi) for (s, a, _), wi in zip(rows, w, strict=True)]
        assert close(got, label_points_weighted(name, weighted, float(zd))), seed


@pytest.mark.parametrize("form", ["binary", *O.FORMS])
@pytest.mark.parametrize("name", CURVES)
def test_integer_weights_equal_repeated_rows(engine, name, form):
    for seed in range(1 if engine.name == "spark" else 3):
        if form == "binary":
            table, columns = random_table(seed), ("y", "s")
        else:
            table, columns = random_scored(seed, form)[0], ("actual", "scores")
        w = integer_weights(len(table), seed)
        for by in (None, ["g"]):
            got = run_table(
                engine, name, with_weights(table, w), *columns, by=by, sample_weight="w"
            )
            want = run_table(engine, name, repeated(table, w), *columns, by=by)
            assert same(got, want), (seed, by, got, want)


@pytest.mark.parametrize(
    ("bad", "got"),
    [(-0.5, "a negative number"), (NAN, "NaN"), (INF, "inf"), (-INF, "-inf")],
)
@pytest.mark.parametrize("form", ["binary", "map"])
def test_bad_weight_is_an_error(engine, form, bad, got):
    if form == "binary":
        table, columns = random_table(1), ("y", "s")
    else:
        table, columns = random_scored(1, form)[0], ("actual", "scores")
    w = [1.0] * len(table)
    w[3] = bad
    table = table.append_column("w", pa.array(w))
    for name in CURVES:
        message = P.sample_weight_message(name, got)
        with pytest.raises(Exception, match=re.escape(message)) as info:
            run_table(engine, name, table, *columns, sample_weight="w")
        assert_mlsql_error(engine, info.value, when_read=True)


def test_a_weight_column_that_is_not_there_or_not_a_number_is_refused(engine):
    table = random_table(2).append_column("text", pa.array(["1"] * 60))
    with pytest.raises(Exception, match=r"roc_curve takes numbers for sample_weight\. Got "):
        run_table(engine, "roc_curve", table, "y", "s", sample_weight="text")
    with pytest.raises(Exception, match=r"the sample_weight column 'nope' is not in the source"):
        run_table(engine, "roc_curve", table, "y", "s", sample_weight="nope")


@pytest.mark.parametrize("name", CURVES)
def test_a_weight_named_a_dot_b_is_only_a_name(engine, name):
    """A weight column named ``a.b``: scikit-learn's weighted curve (Spark read the name as
    field ``b`` of a column ``a``: AnalysisException)."""
    table = pa.table({"y": [1, 0, 1, 0, 1], "s": [0.9, 0.8, 0.7, 0.7, 0.3]})
    table = table.append_column("a.b", pa.array([1.0, 0.0, 2.0, 0.5, 3.0]))
    got = run_table(engine, name, table, "y", "s", sample_weight="a.b")
    want = sklearn_weighted(name, [1, 0, 1, 0, 1], [0.9, 0.8, 0.7, 0.7, 0.3], [1, 0, 2, 0.5, 3])
    assert close(got, want)


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
