"""The plain-Python oracle of the averaged multi-label AP and ROC AUC against scikit-learn.

It pins down the semantics every engine must share (issue 15): the label
universe of a group, an unscored label scoring lowest, ties as scikit-learn,
and undefined labels (no positives; one class for AUC) under ``zero_division``.
On Polars every engine test runs twice (:func:`on_every_path`): through the
native plugin's aggregate and on the portable expressions (``MLSQL_NATIVE=0``).
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Callable
from fractions import Fraction
from types import SimpleNamespace
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

from mlsql._native_switch import switched_off
from mlsql.polars import _native
from tests import oracle_ranking as O

LABELS = ["a", "b", "c", "d", "e"]


def on_every_path(
    engine: Any, monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any]
) -> dict[str, Any]:
    """``run()`` on each path of the engine: Polars' native plugin (``native``; the plugin
    must be in use unless ``MLSQL_NATIVE=0`` says otherwise) and its portable expressions
    (``portable``); other engines once (``""``)."""
    if engine.name != "polars":
        return {"": run()}
    with monkeypatch.context() as m:
        m.setenv(_native.ENV, "0")
        portable = run()
    if not switched_off():
        status = _native.polars_native_status()
        assert status["enabled"], status
    return {"native": run(), "portable": portable}


def random_rows(rng: random.Random, n: int) -> list[tuple[Any, Any]]:
    """(scores, actual) rows: few distinct scores (ties), unscored labels, a label never true."""
    rows: list[tuple[Any, Any]] = []
    for _ in range(n):
        scores = {x: rng.choice([0.1, 0.2, 0.5, 0.9]) for x in LABELS if rng.random() < 0.8}
        if scores and rng.random() < 0.2:
            scores[rng.choice(sorted(scores))] = None  # a NULL score: not scored
        actual = [x for x in LABELS[:-1] if rng.random() < 0.4]  # "e" is never true
        rows.append((scores, actual))
    rows.append((None, ["a"]))  # skipped
    rows.append(({"a": 0.3}, None))  # skipped
    return rows


def matrices(rows: list[tuple[Any, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """The indicator matrix and the score matrix, an unscored cell below every score."""
    _, cells = O.indicator_cells(rows)
    y = np.array([[int(t) for t, _ in row] for row in cells])
    s = np.array([[v for _, v in row] for row in cells])
    finite = s[np.isfinite(s)]
    s[~np.isfinite(s)] = (finite.min() if finite.size else 0.0) - 1.0
    return y, s


def sklearn(fn: Any, rows: list[tuple[Any, Any]], average: str) -> float:
    y, s = matrices(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(fn(y, s, average=average))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("average", O.SCORE_AVERAGES)
def test_average_precision_is_scikit_learns(seed: int, average: str) -> None:
    """With labels never true, AP's undefined labels count 0 (zero_division's default) as in scikit-learn."""
    rows = random_rows(random.Random(seed), 12)
    got = O.multilabel_average_precision(rows, average)
    assert float(got) == pytest.approx(sklearn(average_precision_score, rows, average))


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("average", O.SCORE_AVERAGES)
def test_roc_auc_is_scikit_learns_where_defined(seed: int, average: str) -> None:
    """scikit-learn gives NaN for a one-class label (macro: NaN); mlsql's NaN leaves it out."""
    rows = random_rows(random.Random(seed), 12)
    expected = sklearn(roc_auc_score, rows, average)
    got = O.multilabel_roc_auc(rows, average, zero_division=math.nan)
    if math.isnan(expected):
        assert average in ("macro", "samples")  # undefined label/row: scikit-learn propagates NaN
        _, cells = O.indicator_cells(rows)
        defined = [row for row in cells if O.binary_roc_auc(row) is not None]
        if average == "samples" and defined:
            assert got == sum(O.binary_roc_auc(r) for r in defined) / len(defined)
        return
    assert float(got) == pytest.approx(expected)


def test_roc_auc_macro_leaves_out_one_class_labels_under_ignore() -> None:
    """Label e is never true: 'ignore' leaves it out; 0 counts it as 0 (scikit-learn: NaN)."""
    rows = [
        ({"a": 0.9, "b": 0.1, "e": 0.5}, ["a"]),
        ({"a": 0.2, "b": 0.8}, ["b"]),
        ({"a": 0.2, "b": 0.2}, ["a", "b"]),
    ]
    # a: positives 0.9, 0.2 vs negative 0.2 -> (1 + 1/2) / 2; b: 0.8, 0.2 vs 0.1 -> 1
    assert O.multilabel_roc_auc(rows, "macro", "ignore") == (Fraction(3, 4) + 1) / 2
    assert O.multilabel_roc_auc(rows, "macro", 0) == (Fraction(3, 4) + 1 + 0) / 3
    y, s = matrices(rows)
    assert roc_auc_score(y[:, :2], s[:, :2], average="macro") == pytest.approx(7 / 8)


def test_unscored_label_scores_lowest() -> None:
    """A true label a row does not score ranks below every score, tied with other unscored cells."""
    rows = [({"a": 0.5}, ["a"]), ({"b": 0.5}, ["a"]), ({"a": 0.1}, [])]
    # label a: scores 0.5 (true), -inf (true), 0.1 (false): AP = (1/1 + 2/3) / 2
    assert O.binary_average_precision([(True, 0.5), (True, -math.inf), (False, 0.1)]) == Fraction(
        5, 6
    )
    universe, cells = O.indicator_cells(rows)
    assert universe == ["a", "b"]
    assert cells[1] == [(True, -math.inf), (False, 0.5)]


def test_no_rows_and_all_left_out_are_null() -> None:
    assert O.multilabel_average_precision([(None, ["a"])], "macro") is None
    assert O.multilabel_roc_auc([({"a": 0.5}, ["a"])], "macro", "ignore") is None
    assert O.multilabel_roc_auc([({"a": 0.5}, ["a"])], "micro", 1) == 1


def test_roc_auc_weighted_counts_an_all_positive_label_as_zero_division() -> None:
    """Label a is true in every row: its AUC is undefined but it has weight 3 (scikit-learn: NaN)."""
    rows = [
        ({"a": 0.5, "b": 0.2, "c": 0.1}, ["a", "b"]),
        ({"a": 0.5, "b": 0.5, "c": 0.3}, ["a", "c"]),
        ({"a": 0.1, "b": 0.9, "c": 0.2}, ["a", "b"]),
    ]
    # b: positives 0.2, 0.9 vs 0.5 -> 1/2 (weight 2); c: 0.3 vs 0.1, 0.2 -> 1 (weight 1)
    assert O.multilabel_roc_auc(rows, "weighted", 0) == (0 * 3 + Fraction(1, 2) * 2 + 1) / 6
    assert O.multilabel_roc_auc(rows, "weighted", "ignore") == (Fraction(1, 2) * 2 + 1) / 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn warns of the undefined label
        assert math.isnan(roc_auc_score(*matrices(rows), average="weighted"))


# ------------------------------------------------------------------ every engine
MEASURES = ("multilabel_average_precision", "multilabel_roc_auc")
ZERO_DIVISIONS = (0, 1, math.nan, "diagnose", "ignore")


def grouped_table(seed: int, form: str) -> tuple[pa.Table, dict[int, list[tuple[Any, Any]]]]:
    """Three groups of random rows (ties, NULL rows, NULL scores, unscored true labels, a
    label never true, an empty group of unknown rows) and each group's rows."""
    rng = random.Random(f"engines-{seed}")
    groups = {g: random_rows(rng, rng.randint(1, 9)) for g in range(2)}
    groups[2] = [(None, ["a"]), ({"a": 0.5}, None)]  # every row unknown
    groups[3] = [({}, []), ({}, ["b"]), ({"c": 0.2}, [])]  # an empty map, a row with nothing
    flat = [(g, s, a) for g, rows in groups.items() for s, a in rows]
    table = pa.table(
        {
            "g": pa.array([g for g, _, _ in flat], pa.int64()),
            "scores": O.score_column([s for _, s, _ in flat], form),
            "actual": pa.array([a for _, _, a in flat], pa.list_(pa.string())),
        }
    )
    return table, groups


def _close(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, float) and math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, float(want), rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.long_cases(
    "duckdb-0-map",
    "duckdb-0-list",
    "duckdb-1-map",
    "duckdb-1-list",
    "spark-0-map",
    "spark-0-list",
    "spark-1-map",
    "spark-1-list",
)
@pytest.mark.parametrize("form", O.FORMS)
@pytest.mark.parametrize("seed", range(2))
def test_every_engine_is_the_oracle_per_group(
    engine: Any, seed: int, form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GROUP BY / group_by().agg / groupBy().agg: every average and zero_division convention."""
    table, groups = grouped_table(seed, form)
    calls = [
        (name, ("actual", "scores"), {"average": average, "zero_division": zd})
        for name in MEASURES
        for average in O.SCORE_AVERAGES
        for zd in (ZERO_DIVISIONS if engine.name != "spark" else ZERO_DIVISIONS[seed::2])
    ]
    paths = on_every_path(
        engine, monkeypatch, lambda: O.Available(engine).many_by(table, calls, "g")
    )
    wrong = []
    for path, got in paths.items():
        for g, rows in groups.items():
            for (name, _, params), value in zip(calls, got[g], strict=True):
                want = getattr(O, name)(rows, params["average"], params["zero_division"])
                if not _close(value, want):
                    wrong.append(
                        f"{path} group {g} {name}({params}): got {value!r}, expected {want!r}"
                    )
    assert not wrong, "\n".join(wrong)


@pytest.mark.long_cases("spark")
def test_every_engine_is_scikit_learn_on_a_full_score_matrix(
    engine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every label scored in every row, each label and row with both classes, ties:
    scikit-learn's own numbers for every average."""
    rng = random.Random("full")
    rows = []
    for i in range(15):
        scores = {x: rng.choice([0.1, 0.4, 0.4, 0.7, 0.9]) for x in LABELS}
        truth = [x for j, x in enumerate(LABELS) if j == i % 5 or rng.random() < 0.4]
        rows.append((scores, truth if len(truth) < len(LABELS) else truth[1:]))
    y, s = matrices(rows)
    assert (y.sum(axis=0) > 0).all() and (y.sum(axis=0) < len(rows)).all()
    assert (y.sum(axis=1) > 0).all() and (y.sum(axis=1) < len(LABELS)).all()
    table = pa.table(
        {
            "scores": O.score_column([sc for sc, _ in rows]),
            "actual": pa.array([a for _, a in rows], pa.list_(pa.string())),
        }
    )
    calls, expected = [], []
    for name, fn in zip(MEASURES, (average_precision_score, roc_auc_score), strict=True):
        for average in O.SCORE_AVERAGES:
            calls.append((name, ("actual", "scores"), {"average": average}))
            expected.append(float(fn(y, s, average=average)))
    for path, got in on_every_path(
        engine, monkeypatch, lambda: O.Available(engine).many(table, calls)
    ).items():
        for (name, _, params), value, want in zip(calls, got, expected, strict=True):
            assert value == pytest.approx(want, rel=1e-12), (path, name, params)


@pytest.mark.parametrize("average", O.SCORE_AVERAGES)
@pytest.mark.parametrize("label_type", ["string", "float"])
def test_polars_empty_frame_gives_no_groups_and_null(
    monkeypatch: pytest.MonkeyPatch, average: str, label_type: str
) -> None:
    """A frame without rows: ``group_by().agg`` gives no groups and ``select`` NULL, on the
    native and the portable path (float labels: portable on both). The portable path failed
    with a SchemaError here (a sum inside ``struct.with_fields`` over no groups is
    Null-typed in Polars 2.1)."""
    import polars as pl

    import mlsql.polars as mp

    dtype = pl.String() if label_type == "string" else pl.Float64()
    frame = pl.DataFrame(
        {"g": [], "actual": [], "scores": []},
        schema={
            "g": pl.Int64(),
            "actual": pl.List(dtype),
            "scores": pl.List(pl.Struct({"label": dtype, "score": pl.Float64()})),
        },
    )

    def run() -> list[Any]:
        out = []
        for fn in (mp.multilabel_average_precision, mp.multilabel_roc_auc):
            call = fn("actual", "scores", average=average)
            grouped = frame.group_by("g").agg(call.alias("v"))
            out.append((grouped.height, grouped.schema["v"], frame.select(call).item()))
        return out

    for path, got in on_every_path(SimpleNamespace(name="polars"), monkeypatch, run).items():
        assert got == [(0, pl.Float64(), None)] * 2, path
