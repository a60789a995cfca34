"""calibration_table and label_thresholds on every engine, against brute force and scikit-learn.

The references: ``tests/oracle_thresholds.py`` (every candidate threshold tried,
exact fractions), scikit-learn's ``calibration_curve(strategy='uniform')`` and
``precision_recall_curve`` per label, and each engine's own
``expected_calibration_error`` (the table's bins must be that measure's).
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from mlsql._errors import MlsqlError
from tests import oracle_thresholds as O
from tests.references import close
from tests.test_single_label_tables import run_table

TEXT_MAP = pa.map_(pa.string(), pa.float64())
TEXT_ENTRIES = pa.list_(pa.struct([("label", pa.string()), ("score", pa.float64())]))
INT_ENTRIES = pa.list_(pa.struct([("label", pa.int64()), ("score", pa.float64())]))


def _rows(out: list[tuple], columns: tuple[str, ...]) -> list[dict[str, Any]]:
    return [dict(zip(columns, r, strict=True)) for r in out]


def _same(got: list[dict[str, Any]], want: list[dict[str, Any]]) -> None:
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want, strict=True):
        bad = {k: (g[k], w[k]) for k in w if not close(g[k], w[k])}
        assert not bad, f"{bad} in {g} (want {w})"


# ------------------------------------------------------------------ calibration
CAL_COLUMNS = ("bin", "low", "high", "count", "mean_score", "observed_rate")


def _probabilities(seed: int, n: int = 60) -> pa.Table:
    rng = random.Random(seed)
    ys = [rng.choice([0, 1, 1, None]) if rng.random() < 0.9 else None for _ in range(n)]
    # inner bin edges (0.1, 0.2, ...) avoided: scikit-learn puts an edge in the lower bin
    ps = [rng.choice([rng.random(), 0.0, 1.0, 0.55, 0.55]) for _ in range(n)]
    ps = [None if rng.random() < 0.05 else p for p in ps]
    return pa.table({"actual": pa.array(ys, pa.int64()), "prob": pa.array(ps, pa.float64())})


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_bins", [1, 7, 10])
def test_calibration_table_is_sklearns_curve_and_its_ece(engine, seed, n_bins):
    if engine.name == "spark" and (seed, n_bins) != (0, 10):
        pytest.skip("Spark: one case (the tables are the same engine-neutral formulas)")
    t = _probabilities(seed)
    got = _rows(
        run_table(engine, "calibration_table", t, "actual", "prob", n_bins=n_bins), CAL_COLUMNS
    )
    ece = engine.aggregate(
        "expected_calibration_error", t, columns=("actual", "prob"), n_bins=n_bins
    )
    check_uniform_bins(got, t, n_bins, ece)


def check_uniform_bins(got: list[dict[str, Any]], t: pa.Table, n_bins: int, ece: float) -> None:
    """The uniform calibration bins ``got`` of table ``t``: the oracle's, scikit-learn's
    calibration_curve, and ``ece`` (the engine's expected_calibration_error) their own ECE."""
    from sklearn.calibration import calibration_curve

    pairs = [
        (y, p)
        for y, p in zip(t["actual"].to_pylist(), t["prob"].to_pylist(), strict=True)
        if y is not None and p is not None
    ]
    _same(got, O.calibration_table(pairs, n_bins))
    prob_true, prob_pred = calibration_curve(
        np.array([y for y, _ in pairs]), np.array([p for _, p in pairs]), n_bins=n_bins
    )
    assert np.allclose([r["observed_rate"] for r in got], prob_true, rtol=1e-12, atol=0)
    assert np.allclose([r["mean_score"] for r in got], prob_pred, rtol=1e-12, atol=0)
    assert math.isclose(O.expected_calibration_error(got), ece, rel_tol=1e-12)


def test_calibration_table_bins_are_left_closed_the_last_closed(engine):
    t = pa.table({"actual": [1, 0, 1, 1], "prob": [0.3, 0.5, 1.0, 0.0]})
    got = run_table(engine, "calibration_table", t, "actual", "prob", n_bins=10)
    assert [r[0] for r in got] == [0, 3, 5, 9]


def test_calibration_table_groups_and_hostile_names(engine):
    hostile = 'x"; DROP TABLE t; --'
    t = pa.table(
        {
            hostile: [1, 0, 1, 0, 1],
            "P'": [0.9, 0.8, 0.2, 0.3, 0.95],
            "by g": ["a", "a", None, None, "a"],
        }
    )
    got = run_table(engine, "calibration_table", t, hostile, "P'", n_bins=2, by=["by g"])
    assert [r[:2] for r in got] == [("a", 1), (None, 0)]
    assert got[0][4] == 3 and got[1][4] == 2  # count


@pytest.mark.parametrize(
    ("prob", "message"),
    [
        (
            1.5,
            "calibration_table takes probabilities in [0, 1] for prob. Got a value above 1.",
        ),
        (float("nan"), "calibration_table takes finite numbers for prob"),
    ],
)
def test_calibration_table_refuses_what_ece_refuses(engine, prob, message):
    t = pa.table({"actual": [1, 0], "prob": [0.5, prob]})
    with pytest.raises(
        Exception,
        match=re.escape(message),
    ):
        run_table(engine, "calibration_table", t, "actual", "prob")


BOTH_SIDES = [(1.5, -0.5), (-0.5, 1.5)]


@pytest.mark.parametrize("order", BOTH_SIDES, ids=["above-first", "below-first"])
@pytest.mark.parametrize("by", [None, "g"], ids=["one-group", "two-groups"])
def test_calibration_table_names_below_0_whatever_the_order(engine, order, by):
    """One verdict for the table whichever bad row is read first: a value below 0 first, then
    one above 1, as expected_calibration_error (Spark and the streaming Polars engine checked
    row by row and named the first bad row they read)."""
    t = pa.table({"actual": [1, 0, 1], "prob": [order[0], 0.5, order[1]], "g": ["a", "a", "b"]})
    params = {} if by is None else {"by": by}
    message = "calibration_table takes probabilities in [0, 1] for prob. "
    with pytest.raises(Exception, match=re.escape(message + "Got a value below 0.")):
        run_table(engine, "calibration_table", t, "actual", "prob", **params)


def test_calibration_table_n_bins_message(engine):
    t = pa.table({"actual": [1], "prob": [0.5]})
    with pytest.raises(
        Exception,
        match=re.escape(
            "The 'n_bins' parameter of calibration_table must be a whole number from 1 to 100000. "
            "Got 0 instead."
        ),
    ):
        run_table(engine, "calibration_table", t, "actual", "prob", n_bins=0)


# ------------------------------------------------------------------ quantile bins
def _quantile_want(ys: list[int], ps: list[float], n_bins: int) -> list[dict[str, Any]]:
    """scikit-learn's quantile calibration bins of one group, with numpy's edges as low and high."""
    from sklearn.calibration import calibration_curve

    y, p = np.array(ys), np.array(ps)
    edges = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)  # calibration_curve's own
    ids = np.searchsorted(edges[1:-1], p)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy="quantile")
    kept = sorted(set(ids.tolist()))
    assert len(kept) == len(prob_true)
    return [
        {
            "bin": b,
            "low": float(edges[b]),
            "high": float(edges[b + 1]),
            "count": int((ids == b).sum()),
            "mean_score": float(prob_pred[i]),
            "observed_rate": float(prob_true[i]),
        }
        for i, b in enumerate(kept)
    ]


def _tied_probabilities(seed: int, n: int = 40) -> pa.Table:
    """Two groups (one NULL) of probabilities with one or two decimals: ties and equal edges."""
    rng = random.Random(seed)
    digits = 1 + seed % 2
    ps = [round(rng.random(), digits) for _ in range(n)]
    ys = [rng.choice([0, 1]) for _ in range(n)]
    gs = [rng.choice(["a", "a", None]) for _ in range(n)]
    ys[0] = None  # an unknown row: no edge
    return pa.table(
        {
            "actual": pa.array(ys, pa.int64()),
            "prob": pa.array(ps, pa.float64()),
            "g": pa.array(gs, pa.string()),
        }
    )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_bins", [1, 4, 6, 10])
def test_quantile_calibration_table_is_sklearns_curve_per_group(engine, seed, n_bins):
    """Bins, counts and means are calibration_curve(strategy='quantile')'s on each group, and low
    and high numpy's edges to the bit: one decimal gives ties and equal edges (bins that skip),
    6 bins levels that numpy rounds (1/6 · 100 / 100)."""
    if engine.name == "spark" and (seed, n_bins) != (1, 6):
        pytest.skip("Spark: one case (the tables are the same engine-neutral formulas)")
    t = _tied_probabilities(seed)
    got = _rows(
        run_table(
            engine,
            "calibration_table",
            t,
            "actual",
            "prob",
            n_bins=n_bins,
            strategy="quantile",
            by="g",
        ),
        ("g", *CAL_COLUMNS),
    )
    want: list[dict[str, Any]] = []
    for g in ("a", None):
        rows = [
            (y, p)
            for y, p, h in zip(*(t[c].to_pylist() for c in ("actual", "prob", "g")), strict=True)
            if y is not None and h == g
        ]
        want += [{"g": g, **r} for r in _quantile_want(*zip(*rows, strict=True), n_bins)]
    _same(got, want)
    for r, w in zip(got, want, strict=True):  # the edges exactly: a probability on one decides
        assert (r["bin"], r["low"], r["high"]) == (w["bin"], w["low"], w["high"])


def test_quantile_bins_put_an_edge_below_and_skip_equal_edges(engine):
    """Edges 0.1, 0.3, 0.3, 0.3, 0.9: the 0.3s are in bin 0 (an inner edge's probability is in
    the bin below), bins 1 and 2 lie between equal edges and have no row."""
    t = pa.table({"actual": [1, 0, 1, 1, 0], "prob": [0.1, 0.3, 0.3, 0.3, 0.9]})
    got = run_table(engine, "calibration_table", t, "actual", "prob", n_bins=4, strategy="quantile")
    assert [r[:4] for r in got] == [(0, 0.1, 0.3, 4), (3, 0.3, 0.9, 1)]
    _same(_rows(got, CAL_COLUMNS), _quantile_want([1, 0, 1, 1, 0], [0.1, 0.3, 0.3, 0.3, 0.9], 4))


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
def test_calibration_table_of_no_known_row_has_no_row(engine, strategy):
    """No row, no known row, or rows that all weigh 0: no bin, in every engine (Polars'
    quantile bins read the edges of no rows out of bounds)."""
    empty = pa.table({"actual": pa.array([], pa.int64()), "prob": pa.array([], pa.float64())})
    unknown = pa.table({"actual": [1, 0, None], "prob": [None, None, 0.4]})
    light = pa.table({"actual": [1, 0], "prob": [0.2, 0.7], "w": [0.0, 0.0]})
    given = {"n_bins": 3, "strategy": strategy}
    for t in (empty, unknown):
        assert run_table(engine, "calibration_table", t, "actual", "prob", **given) == []
    weighted = {**given, "sample_weight": "w"}
    assert run_table(engine, "calibration_table", light, "actual", "prob", **weighted) == []


def test_weighted_quantile_bins_cut_the_rows_that_count_each_once(engine):
    """With sample_weight the edges are the percentiles of the rows weighing more than 0, each
    row once; count, mean_score and observed_rate are weighted."""
    t = pa.table(
        {
            "actual": [1, 0, 1, 0, 1, 1],
            "prob": [0.1, 0.2, 0.4, 0.5, 0.8, 0.95],
            "w": [2.0, 1.0, 0.0, 3.0, 1.0, 0.5],
        }
    )
    got = run_table(
        engine,
        "calibration_table",
        t,
        "actual",
        "prob",
        n_bins=2,
        strategy="quantile",
        sample_weight="w",
    )
    # the counted probabilities 0.1, 0.2, 0.5, 0.8, 0.95: edges 0.1, 0.5, 0.95
    want = [
        {
            "bin": 0,
            "low": 0.1,
            "high": 0.5,
            "count": 6.0,
            "mean_score": (2 * 0.1 + 0.2 + 3 * 0.5) / 6,
            "observed_rate": 2 / 6,
        },
        {
            "bin": 1,
            "low": 0.5,
            "high": 0.95,
            "count": 1.5,
            "mean_score": (0.8 + 0.5 * 0.95) / 1.5,
            "observed_rate": 1.0,
        },
    ]
    _same(_rows(got, CAL_COLUMNS), want)


def test_quantile_bins_refuse_what_the_uniform_ones_refuse(engine):
    """The quantile edges are read from checked probabilities: below 0 named first, as ever."""
    t = pa.table({"actual": [1, 0, 1], "prob": [1.5, 0.5, -0.5]})
    message = "calibration_table takes probabilities in [0, 1] for prob. Got a value below 0."
    with pytest.raises(Exception, match=re.escape(message)):
        run_table(engine, "calibration_table", t, "actual", "prob", strategy="quantile")


# ------------------------------------------------------------------ thresholds
TH_COLUMNS = (
    "label",
    "threshold",
    "tp",
    "fp",
    "fn",
    "support",
    "precision",
    "recall",
    "fbeta",
    "micro_fbeta",
)


def _scores_table(
    seed: int, n: int = 40, *, form: str = "map", probabilities: bool = False
) -> pa.Table:
    """Random label lists and scores with ties, NULL rows, missing and NULL scores, labels
    never true (``e``) and true but never scored (``f``)."""
    rng = random.Random(seed)
    labels = ["a", "b", "c", "d", "e"]
    grid = [0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0]
    actual, scores = [], []
    for _ in range(n):
        a = [x for x in labels[:4] if rng.random() < 0.4]
        if rng.random() < 0.1:
            a.append("f")
        if rng.random() < 0.1:
            a += [a[0], None] if a else [None]
        s = {}
        for x in labels:
            if rng.random() < 0.8:
                base = (
                    rng.choice(grid) if probabilities else rng.choice([*grid, rng.uniform(-3, 3)])
                )
                if not probabilities and rng.random() < 0.3:
                    base = rng.random()
                s[x] = None if rng.random() < 0.05 else base
        actual.append(None if rng.random() < 0.05 else a)
        scores.append(None if rng.random() < 0.05 else s)
    if form == "map":
        col = pa.array([None if s is None else list(s.items()) for s in scores], TEXT_MAP)
    else:
        col = pa.array(
            [
                None if s is None else [{"label": k, "score": v} for k, v in s.items()]
                for s in scores
            ],
            TEXT_ENTRIES,
        )
    return pa.table({"actual": pa.array(actual, pa.list_(pa.string())), "scores": col})


def _oracle_rows(t: pa.Table) -> list[tuple[Any, Any]]:
    def plain(s: Any) -> Any:
        if s is None:
            return None
        return [(e["label"], e["score"]) if isinstance(e, dict) else e for e in s]

    return [
        (a, plain(s)) for a, s in zip(t["actual"].to_pylist(), t["scores"].to_pylist(), strict=True)
    ]


CASES = [
    (0, "map", {}),
    (1, "entries", {"beta": 2.0}),
    (2, "map", {"beta": 0.5, "zero_division": 1}),
    (3, "entries", {"zero_division": "diagnose"}),
    (4, "map", {"zero_division": "ignore"}),
    (5, "map", {"zero_division": float("nan")}),
]


@pytest.mark.parametrize(("seed", "form", "params"), CASES)
def test_label_thresholds_match_brute_force(engine, seed, form, params):
    if engine.name == "spark" and seed not in (0, 3):
        pytest.skip("Spark: two cases (the tables are the same engine-neutral formulas)")
    t = _scores_table(seed, form=form)
    got = _rows(run_table(engine, "label_thresholds", t, "actual", "scores", **params), TH_COLUMNS)
    _same(got, O.label_thresholds(_oracle_rows(t), **params))
    assert {"e", "f"} <= {r["label"] for r in got}  # never true, never scored: both present


def test_label_thresholds_keep_a_labels_first_entry(engine):
    """A label repeated in a row's entries counts once, at its first entry; a first entry
    without a score leaves the label unscored in that row (true there: in its support)."""
    rows = [
        (["a"], [("a", 0.2), ("a", 0.9), ("b", 0.8)]),
        ([], [("a", 0.7), ("b", None), ("b", 0.95), ("a", 0.1)]),
        (["b"], [("b", 0.6), ("b", 0.99), ("a", 0.3)]),
        (["a", "b"], [("a", 0.4), (None, 0.5), ("a", 0.8)]),
    ]
    t = pa.table(
        {
            "actual": pa.array([a for a, _ in rows], pa.list_(pa.string())),
            "scores": pa.array(
                [[{"label": k, "score": v} for k, v in s] for _, s in rows], TEXT_ENTRIES
            ),
        }
    )
    got = _rows(run_table(engine, "label_thresholds", t, "actual", "scores"), TH_COLUMNS)
    _same(got, O.label_thresholds(rows))
    # by hand: a at 0.2 (tp 2, fp 2: F 2/3), b at 0.6 (tp 1, fp 1, fn 1: its unscored
    # true row)
    picked = {r["label"]: (r["threshold"], r["tp"], r["fp"], r["fn"]) for r in got}
    assert picked == {"a": (0.2, 2, 2, 0), "b": (0.6, 1, 1, 1)}


def test_label_thresholds_integer_labels_and_groups(engine):
    rows = [
        (
            [1, 2],
            [{"label": 1, "score": 0.9}, {"label": 2, "score": 0.3}, {"label": 1, "score": 0.0}],
            "x",
        ),
        ([2], [{"label": 1, "score": 0.8}, {"label": 2, "score": 0.3}], "x"),
        ([1], [{"label": 1, "score": 0.7}, {"label": 3, "score": None}], None),
        ([], [{"label": 3, "score": 0.2}], None),
    ]
    t = pa.table(
        {
            "actual": pa.array([r[0] for r in rows], pa.list_(pa.int32())),
            "scores": pa.array([r[1] for r in rows], INT_ENTRIES),
            "model": [r[2] for r in rows],
        }
    )
    got = run_table(engine, "label_thresholds", t, "actual", "scores", by=["model"])
    want = []
    for model in ("x", None):
        part = [(a, [(e["label"], e["score"]) for e in s]) for a, s, m in rows if m == model]
        want += [{"model": model, **r} for r in O.label_thresholds(part)]
    _same(_rows(got, ("model", *TH_COLUMNS)), want)


def test_label_thresholds_are_sklearns_best_point_per_label(engine):
    """Per label with positives, the F1 maximum over scikit-learn's precision_recall_curve
    points, the highest threshold among equal F1 (ties compared as exact fractions)."""
    from fractions import Fraction

    from sklearn.metrics import precision_recall_curve

    t = _scores_table(7, n=80)
    got = {
        r["label"]: r
        for r in _rows(run_table(engine, "label_thresholds", t, "actual", "scores"), TH_COLUMNS)
    }
    rows = [(a, O.entries(dict(s))) for a, s in _oracle_rows(t) if a is not None and s is not None]
    checked = 0
    for label, r in got.items():
        y = np.array([label in a for a, _ in rows])
        scored = np.array([label in s for _, s in rows])
        if not (y & scored).any():
            continue
        # an unscored row scores below every threshold: below the lowest score given
        low = min(v for _, s in rows for v in s.values()) - 1
        score = np.array([s.get(label, low) for _, s in rows])
        precision, recall, thresholds = precision_recall_curve(y, score)
        support = int(y.sum())

        def f1(point: tuple[float, float, float], support: int = support) -> tuple[Fraction, float]:
            tp = round(point[1] * support)
            predicted = round(tp / point[0]) if tp else 0
            return Fraction(2 * tp, tp + predicted + support), point[2]

        points = zip(precision[:-1], recall[:-1], thresholds, strict=True)
        best = max((x for x in points if x[2] > low), key=f1)
        assert (
            r["threshold"] == best[2]
            and close(r["precision"], float(best[0]))
            and close(r["recall"], float(best[1]))
        )
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("n_bins", [4, 10])
def test_binned_thresholds_are_the_bin_edges_and_within_the_bound(engine, n_bins):
    if engine.name == "spark" and n_bins != 10:
        pytest.skip("Spark: one case")
    t = _scores_table(11, n=60, probabilities=True)
    binned = _rows(
        run_table(engine, "label_thresholds", t, "actual", "scores", n_bins=n_bins), TH_COLUMNS
    )
    _same(binned, O.label_thresholds(_oracle_rows(t), n_bins=n_bins))
    exact = {r["label"]: r for r in O.label_thresholds(_oracle_rows(t))}
    rows = [(a, O.entries(s)) for a, s in _oracle_rows(t) if a is not None and s is not None]
    for r in binned:
        e = exact[r["label"]]
        if e["support"] == 0 or e["tp"] == 0:
            continue
        t_star = e["threshold"]
        edge = O.calibration_bin(t_star, n_bins) / n_bins
        c = sum(edge <= s.get(r["label"], -1) < t_star for _, s in rows)
        assert e["fbeta"] - r["fbeta"] <= c / (e["support"] + c) + 1e-12
        assert r["fbeta"] <= e["fbeta"] + 1e-12


def test_binned_thresholds_refuse_scores_outside_0_1(engine):
    t = pa.table({"actual": pa.array([["a"]]), "scores": pa.array([[("a", 1.5)]], TEXT_MAP)})
    with pytest.raises(
        Exception, match=r"label_thresholds takes probabilities in \[0, 1\] for scores"
    ):
        run_table(engine, "label_thresholds", t, "actual", "scores", n_bins=5)


@pytest.mark.parametrize("order", BOTH_SIDES, ids=["above-first", "below-first"])
@pytest.mark.parametrize("cells", ["two-rows", "one-row"])
def test_binned_thresholds_name_below_0_whatever_the_order(engine, order, cells):
    """One verdict for the table whichever bad score is read first (a row's or a label's):
    below 0 first, then above 1 (Spark checked row by row and named the first it read)."""
    if cells == "two-rows":
        actual, scores = [["a"], ["b"]], [[("a", order[0])], [("a", order[1])]]
    else:
        actual, scores = [["a"]], [[("a", order[0]), ("b", order[1])]]
    t = pa.table({"actual": pa.array(actual), "scores": pa.array(scores, TEXT_MAP)})
    message = "label_thresholds takes probabilities in [0, 1] for scores. "
    with pytest.raises(Exception, match=re.escape(message + "Got a value below 0.")):
        run_table(engine, "label_thresholds", t, "actual", "scores", n_bins=5)


def test_label_thresholds_hostile_names_and_bad_parameters(engine):
    hostile = 'a"); DROP TABLE t; --'
    t = pa.table(
        {
            hostile: pa.array([["a"], ["b"]]),
            "sc'ores": pa.array([[("a", 0.4), ("b", 0.1)], [("a", 0.2), ("b", 0.6)]], TEXT_MAP),
            "select": ["g", "g"],
        }
    )
    got = run_table(engine, "label_thresholds", t, hostile, "sc'ores", by=["select"])
    assert [(r[0], r[1], r[2]) for r in got] == [("g", "a", 0.4), ("g", "b", 0.6)]
    with pytest.raises(
        Exception,
        match=re.escape(
            "The 'beta' parameter of label_thresholds must be a finite number > 0. Got -1 instead."
        ),
    ):
        run_table(engine, "label_thresholds", t, hostile, "sc'ores", beta=-1)
    with pytest.raises(
        Exception,
        match=r"The 'n_bins' parameter of label_thresholds must be a whole number from 1 to 100000 \(or NULL",
    ):
        run_table(engine, "label_thresholds", t, hostile, "sc'ores", n_bins=0)


def test_a_by_column_named_like_an_output_is_refused():
    import polars as pl

    import mlsql.polars as mp

    df = pl.DataFrame({"actual": [1], "prob": [0.5], "count": [1]})
    with pytest.raises(MlsqlError, match="the by column 'count' has the name of an output column"):
        mp.calibration_table(df, "actual", "prob", by="count")


def test_labels_of_two_kinds_and_non_binary_actual_are_refused_alike(engine):
    t = pa.table({"actual": pa.array([[1]]), "scores": pa.array([[("a", 0.5)]], TEXT_MAP)})
    same_kind = "label_thresholds needs actual and scores of the same label type"
    with pytest.raises(Exception, match=re.escape(same_kind)):
        run_table(engine, "label_thresholds", t, "actual", "scores")
    c = pa.table({"actual": [2], "prob": [0.5]})
    with pytest.raises(
        Exception, match=re.escape("calibration_table takes boolean or 0/1 values. Got 2")
    ):
        run_table(engine, "calibration_table", c, "actual", "prob")


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
