"""Sample weights on the averaged multi-label AP and ROC AUC, every engine.

1. integer weights (0, NULL among them) per group: the oracle over each row repeated
   ``w`` times, for every average and zero_division, with ties, unscored true labels,
   a label never true (no positives), empty rows, and a group whose weights are all 0
   (the ``zero_division`` value);
2. float weights (0 among them): scikit-learn's ``sample_weight`` on the indicator
   matrix, ties and a label with no positives included;
3. a bad weight: the one message naming ``sample_weight``; a hostile weight column
   name is only a name.

On Polars each runs on the native plugin and on the portable expressions
(:func:`tests.test_multilabel_score_oracle.on_every_path`).
"""

from __future__ import annotations

import math
import random
import warnings
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from mlsql import _params as P
from tests import oracle_ranking as O
from tests.test_multilabel_score_oracle import LABELS, MEASURES, on_every_path, random_rows
from tests.weights import WEIGHT, weight_arg

ZERO_DIVISIONS = (0, 1, math.nan, "diagnose", "ignore")


def _close(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, float) and math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, float(want), rel_tol=1e-9, abs_tol=1e-12)


def _table(flat: list[tuple[int, Any, Any, Any]], form: str = "map") -> pa.Table:
    """(group, scores, actual, weight) rows as a table."""
    weights = [w for *_, w in flat]
    ints = all(w is None or isinstance(w, int) for w in weights)
    return pa.table(
        {
            "g": pa.array([g for g, *_ in flat], pa.int64()),
            "scores": O.score_column([s for _, s, _, _ in flat], form),
            "actual": pa.array([a for _, _, a, _ in flat], pa.list_(pa.string())),
            WEIGHT: pa.array(weights, pa.int64() if ints else pa.float64()),
        }
    )


def _all_zero(zero_division: Any) -> Any:
    """What known rows that all weigh 0 give: the zero_division value (NULL under 'ignore')."""
    if zero_division == "ignore":
        return None
    if zero_division == "diagnose":
        return 1.0
    return float(zero_division)


@pytest.mark.long_cases("duckdb-0-map", "duckdb-0-list", "duckdb-1-map", "duckdb-1-list")
@pytest.mark.parametrize("form", O.FORMS)
@pytest.mark.parametrize("seed", range(2))
def test_integer_weights_are_the_oracle_over_repeated_rows(
    engine: Any, seed: int, form: str, monkeypatch: pytest.MonkeyPatch
):
    rng = random.Random(f"weights-{seed}")
    groups = {g: random_rows(rng, rng.randint(3, 10)) for g in range(2)}
    groups[2] = [({"a": 0.5, "b": 0.5}, ["a"]), ({"b": 0.2}, ["b"])]  # all weigh 0
    groups[3] = [({}, []), ({}, ["b"]), ({"c": 0.2}, []), ({"c": 0.2, "a": 0.2}, ["c"])]
    weights = {g: [rng.choice([0, 1, 2, 3, None]) for _ in rows] for g, rows in groups.items()}
    weights[0][0] = weights[1][0] = weights[3][0] = 2  # a row weighs in each group
    weights[2] = [0, 0]
    flat = [
        (g, s, a, w)
        for g, rows in groups.items()
        for (s, a), w in zip(rows, weights[g], strict=True)
    ]
    table = _table(flat, form)
    calls = [
        (name, ("actual", "scores"), {"average": average, "zero_division": zd})
        for name in MEASURES
        for average in O.SCORE_AVERAGES
        for zd in (ZERO_DIVISIONS if engine.name != "spark" else ZERO_DIVISIONS[seed::2])
    ]
    weighted = [(n, c, {**p, "sample_weight": weight_arg(engine)}) for n, c, p in calls]
    paths = on_every_path(
        engine, monkeypatch, lambda: O.Available(engine).many_by(table, weighted, "g")
    )
    wrong = []
    for path, got in paths.items():
        for g, rows in groups.items():
            repeated = [r for r, w in zip(rows, weights[g], strict=True) if w for _ in range(w)]
            for (name, _, params), value in zip(calls, got[g], strict=True):
                if g == 2:
                    want = _all_zero(params["zero_division"])
                else:
                    want = getattr(O, name)(repeated, params["average"], params["zero_division"])
                if not _close(value, want):
                    wrong.append(
                        f"{path} group {g} {name}({params}): got {value!r}, expected {want!r}"
                    )
    assert not wrong, "\n".join(wrong)


def _float_rows(seed: int, full: bool) -> tuple[list[tuple[Any, Any]], list[float]]:
    """Random rows with ties and float weights, 0 among them. ``full``: every label scored
    in every row, each label and row with both classes among the rows of positive weight
    (ROC AUC defined everywhere); else labels unscored here and there and "e" never true."""
    rng = random.Random(f"float-{seed}-{full}")
    while True:
        rows = []
        for i in range(14):
            scores = {x: rng.choice([0.1, 0.4, 0.4, 0.7, 0.9]) for x in LABELS}
            if not full:
                scores = {x: v for x, v in scores.items() if rng.random() < 0.7}
            truth = [x for j, x in enumerate(LABELS[:-1]) if j == i % 4 or rng.random() < 0.4]
            if full and rng.random() < 0.5:
                truth.append("e")
            rows.append((scores, truth))
        weights = [rng.choice([0.0, 0.25, 1.5, rng.random() * 3]) for _ in rows]
        if not full:
            return rows, weights
        y, _ = _matrices(rows, weights)
        kept = y[np.array(weights) > 0]
        columns, lines = kept.sum(axis=0), kept.sum(axis=1)
        both_classes = (columns > 0).all() and (columns < len(kept)).all()
        if both_classes and (lines > 0).all() and (lines < len(LABELS)).all():
            return rows, weights


def _matrices(rows: list[tuple[Any, Any]], weights: list[float]) -> tuple[Any, Any]:
    """The indicator and score matrices of every row over the labels of the rows of positive
    weight (a row weighing 0 drops out, its labels too); an unscored cell scores lowest."""
    universe, _ = O.indicator_cells([r for r, w in zip(rows, weights, strict=True) if w > 0])
    y = np.array([[int(x in a) for x in universe] for _, a in rows])
    s = np.array([[s.get(x, -1.0) for x in universe] for s, _ in rows])
    return y, s


@pytest.mark.parametrize("seed", range(3))
def test_float_weights_are_scikit_learns(engine: Any, seed: int, monkeypatch: pytest.MonkeyPatch):
    """AP with a label never true (scikit-learn gives it 0, zero_division's default) and
    unscored labels; AP and ROC AUC on full matrices; ties in both, weights of 0 in both."""
    cases = []  # (table, calls, expected)
    for full in (False, True):
        rows, weights = _float_rows(seed, full)
        y, s = _matrices(rows, weights)
        table = _table([(0, sc, a, w) for (sc, a), w in zip(rows, weights, strict=True)])
        functions = {"multilabel_average_precision": average_precision_score}
        if full:
            functions["multilabel_roc_auc"] = roc_auc_score
        calls, expected = [], []
        for name, fn in functions.items():
            for average in O.SCORE_AVERAGES:
                calls.append(
                    (name, ("actual", "scores"), {"average": average, "sample_weight": None})
                )
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # the label without positives
                    expected.append(float(fn(y, s, average=average, sample_weight=weights)))
        cases.append((table, calls, expected))
    for table, calls, expected in cases:
        calls = [(n, c, {**p, "sample_weight": weight_arg(engine)}) for n, c, p in calls]
        paths = on_every_path(
            engine, monkeypatch, lambda t=table, c=calls: O.Available(engine).many(t, c)
        )
        wrong = [
            f"{path} {n}({p['average']}): got {g!r}, scikit-learn {w!r}"
            for path, got in paths.items()
            for (n, _, p), g, w in zip(calls, got, expected, strict=True)
            if not math.isclose(g, w, rel_tol=1e-9, abs_tol=1e-12)
        ]
        assert not wrong, "\n".join(wrong)


BAD_WEIGHTS = [(-1.0, "a negative number"), (float("nan"), "NaN"), (float("inf"), "inf")]


@pytest.mark.parametrize("name", MEASURES)
@pytest.mark.parametrize(("bad", "got"), BAD_WEIGHTS, ids=["negative", "nan", "inf"])
def test_a_bad_weight_fails_with_one_message(
    engine: Any, name: str, bad: float, got: str, monkeypatch: pytest.MonkeyPatch
):
    table = _table([(0, {"a": 0.5}, ["a"], 1.0), (0, {"b": 0.2}, ["a"], bad)])
    params = {"average": "macro", "sample_weight": weight_arg(engine)}

    def message() -> str:
        with pytest.raises(Exception) as caught:
            O.Available(engine).many(table, [(name, ("actual", "scores"), params)])
        return str(caught.value)

    for path, text in on_every_path(engine, monkeypatch, message).items():
        assert P.sample_weight_message(name, got) in text, path


HOSTILE = "w'); DROP TABLE t; --\""


def test_a_hostile_weight_column_name_is_only_a_name(engine: Any, monkeypatch: pytest.MonkeyPatch):
    rows = [({"a": 0.9, "b": 0.4}, ["a"]), ({"a": 0.2, "b": 0.4}, ["b"]), ({"a": 0.7}, ["b"])]
    table = _table([(0, s, a, w) for (s, a), w in zip(rows, [2, 1, 3], strict=True)])
    hostile = table.rename_columns(["g", "scores", "actual", HOSTILE])
    params = {"average": "micro", "sample_weight": weight_arg(engine, HOSTILE)}
    calls = [(name, ("actual", "scores"), params) for name in MEASURES]
    paths = on_every_path(engine, monkeypatch, lambda: O.Available(engine).many(hostile, calls))
    repeated = [r for r, w in zip(rows, [2, 1, 3], strict=True) for _ in range(w)]
    want = [getattr(O, name)(repeated, "micro") for name in MEASURES]
    for path, got in paths.items():
        assert all(_close(g, w) for g, w in zip(got, want, strict=True)), (path, got, want)


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
