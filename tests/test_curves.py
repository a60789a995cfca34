"""Precision-recall and ROC curves on every engine, against scikit-learn's points.

scikit-learn's ``precision_recall_curve`` returns its points by increasing
threshold and ends with (precision 1, recall 0), which has no threshold; mlsql
returns them by decreasing threshold with that point first, at threshold
+inf. ``roc_curve`` (``drop_intermediate=False``) starts at threshold inf, as
mlsql does. Random tables have tied scores, NULL labels and NULL scores (rows
scikit-learn never sees: they are skipped), and ``by`` groups.
"""

from __future__ import annotations

import math
import random
import warnings
from typing import Any

import pyarrow as pa
import pytest

from mlsql._registry import measures
from tests import oracle_ranking as O
from tests.test_single_label_tables import run_table

CURVES = ("precision_recall_curve", "roc_curve")
INF = float("inf")
NAN = float("nan")


def sklearn_points(name: str, y: list[int], s: list[float]) -> list[tuple[float, ...]]:
    """scikit-learn's points of curve ``name`` as mlsql's rows: (threshold, value, value)."""
    from sklearn import metrics

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # single-class data warns
        if name == "roc_curve":
            fpr, tpr, thresholds = metrics.roc_curve(y, s, drop_intermediate=False)
            return list(zip(thresholds.tolist(), fpr.tolist(), tpr.tolist(), strict=True))
        precision, recall, thresholds = metrics.precision_recall_curve(y, s)
    at = [INF, *thresholds[::-1].tolist()]
    return list(zip(at, precision[::-1].tolist(), recall[::-1].tolist(), strict=True))


def same(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> bool:
    """Row by row equal, floats to 1e-12 relative, NaN only to NaN."""

    def eq(a: Any, b: Any) -> bool:
        if isinstance(b, float) and math.isnan(b):
            return isinstance(a, float) and math.isnan(a)
        if isinstance(b, float):
            return a is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)
        return a == b

    return len(got) == len(want) and all(
        len(g) == len(w) and all(eq(a, b) for a, b in zip(g, w, strict=True))
        for g, w in zip(got, want, strict=True)
    )


def random_table(seed: int, n: int = 60) -> pa.Table:
    """0/1 labels and scores from a few values (many ties), some NULL on either side, groups."""
    rng = random.Random(seed)
    levels = [round(rng.uniform(-2, 2), 3) for _ in range(rng.choice([1, 3, 8]))] + [0.0, -0.0]
    y = [None if rng.random() < 0.08 else int(rng.random() < 0.4) for _ in range(n)]
    s = [None if rng.random() < 0.08 else rng.choice(levels) for _ in range(n)]
    g = [rng.choice(["a", "b", None]) for _ in range(n)]
    return pa.table({"y": pa.array(y, pa.int64()), "s": pa.array(s, pa.float64()), "g": g})


def known(table: pa.Table, group: Any = ...) -> tuple[list[int], list[float]]:
    rows = [
        r
        for r in table.to_pylist()
        if r["y"] is not None and r["s"] is not None and (group is ... or r["g"] == group)
    ]
    return [r["y"] for r in rows], [r["s"] for r in rows]


@pytest.mark.parametrize("name", CURVES)
def test_curves_equal_scikit_learn_on_random_data_with_ties(engine, name):
    seeds = range(2) if engine.name == "spark" else range(6)
    for seed in seeds:
        table = random_table(seed)
        y, s = known(table)
        want = sklearn_points(name, y, s) if y else []
        got = run_table(
            engine, name, table, "y", "s", zero_division=NAN if name == "roc_curve" else 1
        )
        assert same(got, want), (seed, got, want)
        by_group = run_table(engine, name, table, "y", "s", by=["g"], zero_division=NAN)
        for group in ("a", "b", None):
            gy, gs = known(table, group)
            if not gy:
                assert all(r[0] != group for r in by_group)
                continue
            want = sklearn_points(name, gy, gs)
            if name == "precision_recall_curve" and sum(gy) == 0:  # recall undefined: NaN here
                want = [(t, p, 0.0 if t == INF else NAN) for t, p, _ in want]
            got = [r[1:] for r in by_group if r[0] == group]
            assert same(got, want), (seed, group, got, want)
        # groups in order (NULL last), thresholds descending within each
        keys = [("~" if r[0] is None else r[0], -r[1]) for r in by_group]
        assert keys == sorted(keys)


def test_curves_of_a_small_example(engine):
    """Six rows, scores .8 .7 .5 .5 .3 .2 (Hivemall's AUC example): exact fractions."""
    table = pa.table(
        {
            "actual": [1, 1, 0, 1, 1, 0, None, 1],
            "score": [0.8, 0.7, 0.5, 0.5, 0.3, 0.2, 0.9, None],
        }
    )
    pr = run_table(engine, "precision_recall_curve", table, "actual", "score")
    assert pr == [
        (INF, 1.0, 0.0),
        (0.8, 1.0, 1 / 4),
        (0.7, 1.0, 2 / 4),
        (0.5, 3 / 4, 3 / 4),
        (0.3, 4 / 5, 1.0),
        (0.2, 4 / 6, 1.0),
    ]
    roc = run_table(engine, "roc_curve", table, "actual", "score")
    assert roc == [
        (INF, 0.0, 0.0),
        (0.8, 0.0, 1 / 4),
        (0.7, 0.0, 2 / 4),
        (0.5, 1 / 2, 3 / 4),
        (0.3, 1 / 2, 1.0),
        (0.2, 1.0, 1.0),
    ]


@pytest.mark.parametrize("label", [0, 1])
def test_single_class_data_follows_zero_division(engine, label):
    """One class: scikit-learn warns; recall 1 without positives, fpr or tpr NaN throughout.

    mlsql gives the ``zero_division`` value to the undefined ratio (default 0):
    1 gives scikit-learn's precision-recall points, NaN its ROC points.
    """
    table = pa.table({"y": [label, label, label], "s": [0.3, 0.1, 0.3]})
    y, s = [label] * 3, [0.3, 0.1, 0.3]
    roc = run_table(engine, "roc_curve", table, "y", "s", zero_division=NAN)
    assert same(roc, sklearn_points("roc_curve", y, s))
    undefined = 2 if label == 0 else 1  # the column of the undefined rate: tpr or fpr
    for zd, value in ((0, 0.0), (1, 1.0), ("diagnose", 1.0)):
        rows = run_table(engine, "roc_curve", table, "y", "s", zero_division=zd)
        assert [r[3 - undefined] for r in rows] == [r[3 - undefined] for r in roc]
        assert [r[undefined] for r in rows] == [value] * 3
    rows = run_table(engine, "roc_curve", table, "y", "s", zero_division="ignore")
    assert [r[undefined] for r in rows] == [None] * 3
    pr = run_table(engine, "precision_recall_curve", table, "y", "s", zero_division=1)
    assert same(pr, sklearn_points("precision_recall_curve", y, s))
    if label == 0:
        rows = run_table(engine, "precision_recall_curve", table, "y", "s")
        assert rows == [(INF, 1.0, 0.0), (0.3, 0.0, 0.0), (0.1, 0.0, 0.0)]


def test_unknown_rows_only_give_no_rows(engine):
    table = pa.table(
        {"y": pa.array([None, 1], pa.int64()), "s": pa.array([0.5, None], pa.float64())}
    )
    for name in CURVES:
        assert run_table(engine, name, table, "y", "s") == []


def test_curves_take_any_column_name(engine):
    label, score, group = 'y"; DROP TABLE t; --', "s'); SELECT 1; --", 'g "x"'
    table = pa.table({label: [1, 0, 1, 0], score: [0.9, 0.4, 0.4, 0.1], group: ["a"] * 4})
    plain = pa.table({"y": [1, 0, 1, 0], "s": [0.9, 0.4, 0.4, 0.1], "g": ["a"] * 4})
    for name in CURVES:
        got = run_table(engine, name, table, label, score, by=[group])
        assert got == run_table(engine, name, plain, "y", "s", by=["g"])
        assert len(got) == 4


def test_curves_check_their_inputs(engine):
    table = pa.table({"y": [1, 2], "s": [0.5, 0.1], "f": [NAN, 1.0], "threshold": ["a", "b"]})
    for name in CURVES:
        with pytest.raises(Exception, match=r"boolean or 0/1 values\. Got 2"):
            run_table(engine, name, table, "y", "s")
        with pytest.raises(Exception, match="NaN"):
            run_table(engine, name, table.slice(0, 1), "y", "f")
        with pytest.raises(Exception, match="'zero_division' parameter of " + name):
            run_table(engine, name, table.slice(0, 1), "y", "s", zero_division=2)
        with pytest.raises(Exception, match="has the name of an output column"):
            run_table(engine, name, table.slice(0, 1), "y", "s", by=["threshold"])


def test_curves_take_boolean_labels(engine):
    table = pa.table({"y": [True, False, True], "s": [2, 1, 1]})
    assert run_table(engine, "roc_curve", table, "y", "s") == [
        (INF, 0.0, 0.0),
        (2.0, 0.0, 0.5),
        (1.0, 1.0, 1.0),
    ]


def test_registry_declares_the_curves():
    assert {m.name for m in measures(family="curves")} == {
        *CURVES,
        "det_curve",
        "confusion_matrix_at_thresholds",
    }


# ------------------------------------------------------------------ per label, over score maps
def random_scored(seed: int, form: str, n: int = 40) -> tuple[pa.Table, list[tuple[Any, Any]]]:
    """Score maps (or lists of {label, score}, a label repeated: its first entry counts) with
    tied and NULL scores, true label lists with repeats and NULLs, NULL rows, groups; and the
    rows as the oracle reads them, (scores dict, actual list, group)."""
    rng = random.Random(seed)
    labels = ["a", "b", "c", "d"]
    levels = [0.1, 0.5, 0.5, 0.9, -0.0, 0.0, 2.0]
    scores, actual, groups, rows = [], [], [], []
    for _ in range(n):
        pairs = [
            (rng.choice(labels), None if rng.random() < 0.1 else rng.choice(levels))
            for _ in range(rng.choice([0, 1, 2, 3, 5]))
        ]
        if form == "map":
            pairs = list(dict(pairs).items())
        first: dict[Any, Any] = {}
        for label, value in pairs:
            first.setdefault(label, value)
        truth = [rng.choice([*labels, None]) for _ in range(rng.choice([0, 1, 2, 3]))]
        s = None if rng.random() < 0.07 else pairs
        a = None if rng.random() < 0.07 else truth
        g = rng.choice(["x", "y"])
        scores.append(s)
        actual.append(a)
        groups.append(g)
        rows.append((None if s is None else first, a, g))
    table = pa.table(
        {
            "scores": O.score_column(scores, form),
            "actual": pa.array(actual, pa.list_(pa.string())),
            "g": groups,
        }
    )
    return table, rows


def label_points(name: str, rows: list[tuple[Any, Any]], zero_division: Any) -> list[tuple]:
    """Per label of the oracle's universe, scikit-learn's points on the label's column of the
    indicator matrix (an unscored cell at -inf: given to scikit-learn as a finite score below
    every other, and its threshold read back as -inf)."""
    universe, cells = O.indicator_cells(rows)
    out = []
    for j, label in enumerate(universe):
        column = [row[j] for row in cells]
        finite = [s for _, s in column if s != -INF]
        low = min(finite, default=0.0) - 1.0
        y = [int(t) for t, _ in column]
        s = [low if v == -INF else v for _, v in column]
        points = sklearn_points(name, y, s)
        if name == "precision_recall_curve" and sum(y) == 0:  # recall undefined
            points = [(t, p, 0.0 if t == INF else zero_division) for t, p, _ in points]
        out += [(label, -INF if t == low else t, *v) for t, *v in points]
    return out


@pytest.mark.parametrize("form", O.FORMS)
@pytest.mark.parametrize("name", CURVES)
def test_curves_per_label_equal_scikit_learn_on_the_indicator_matrix(engine, name, form):
    """Labels as the label tables read them (true or scored in the group); a label a row does
    not score is at -inf there, so each label's curve ends at threshold -inf when some row
    leaves it unscored."""
    zd = NAN if name == "roc_curve" else 1
    for seed in range(1 if engine.name == "spark" else 4):
        table, rows = random_scored(seed, form)
        got = run_table(engine, name, table, "actual", "scores", zero_division=zd)
        want = label_points(name, [(s, a) for s, a, _ in rows], float(zd))
        assert same(got, want), (seed, got, want)
        by_group = run_table(engine, name, table, "actual", "scores", by=["g"], zero_division=zd)
        for group in ("x", "y"):
            want = label_points(name, [(s, a) for s, a, g in rows if g == group], float(zd))
            assert same([r[1:] for r in by_group if r[0] == group], want), (seed, group)


def test_curve_of_a_label_every_row_scores_has_no_minus_infinity(engine):
    table = pa.table(
        {
            "actual": pa.array([["a"], []], pa.list_(pa.string())),
            "scores": O.score_column([{"a": 0.5, "b": 0.5}, {"a": 0.2}]),
        }
    )
    assert run_table(engine, "roc_curve", table, "actual", "scores") == [
        ("a", INF, 0.0, 0.0),
        ("a", 0.5, 0.0, 1.0),
        ("a", 0.2, 1.0, 1.0),
        ("b", INF, 0.0, 0.0),
        ("b", 0.5, 0.5, 0.0),
        ("b", -INF, 1.0, 0.0),
    ]


def test_scores_in_a_map_must_be_finite(engine):
    for bad, word in ((NAN, "NaN"), (INF, "infinite")):
        table = pa.table(
            {
                "actual": pa.array([["a"]], pa.list_(pa.string())),
                "scores": O.score_column([{"a": 0.5, "b": bad}]),
            }
        )
        for name in CURVES:
            with pytest.raises(Exception, match=word):
                run_table(engine, name, table, "actual", "scores")


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
