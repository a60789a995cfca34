"""multiclass_calibration_error on every engine: torchmetrics' top-label calibration error.

The expected numbers come from a plain-Python oracle written here from torchmetrics'
``multiclass_calibration_error`` (``_multiclass_calibration_error_update``: confidence =
the row's highest probability, accuracy = [argmax = target]; ``_binning_bucketize``:
``bucketize(p, linspace(0, 1, n_bins + 1), right=True) - 1``, clamped; ``_ce_compute``: the
l1, l2 and max norms), in exact fractions with the edges k / n_bins exact; from torchmetrics
itself where it is installed; and from a small table worked by hand. The random tables of
``tests/references.py`` (``top_labels``) run through the registry-driven tests.
"""

from __future__ import annotations

import bisect
import math
import random
import re
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest

from tests.test_reliability_inputs import assert_mlsql_error

MEASURE = "multiclass_calibration_error"
COLUMNS = ("actual", "scores")


def table(rows: list[tuple[Any, Any]], weights: list | None = None, kind=None) -> pa.Table:
    kind = pa.string() if kind is None else kind
    cols = {
        "actual": pa.array([a for a, _ in rows], kind),
        "scores": pa.array(
            [None if s is None else list(s.items()) for _, s in rows], pa.map_(kind, pa.float64())
        ),
    }
    if weights is not None:
        cols["w"] = pa.array(weights, pa.float64())
    return pa.table(cols)


def value(engine, t: pa.Table, **params):
    return engine.aggregate(MEASURE, t, columns=COLUMNS, **params)


def torchmetrics_oracle(
    rows: list[tuple[Any, Any]],
    n_bins: int = 15,
    norm: str = "l1",
    weights: list | None = None,
    classes: list | None = None,
) -> Any:
    """torchmetrics' MulticlassCalibrationError in exact fractions.

    The rows become torchmetrics' (N, C) matrix over ``classes`` (sorted: class index order),
    an unscored class 0; confidence = max over the row, prediction = its first index
    (``Tensor.max(dim=1)``), accuracy = [prediction = target]. Bins: ``bucketize(right=True)``
    on the exact edges k / n_bins, minus 1, clamped to [0, n_bins - 1]. Norms from
    ``_ce_compute``: l1 Σ_b prop_b |acc_b - conf_b|, l2 sqrt(Σ_b prop_b (acc_b - conf_b)²),
    max the largest |acc_b - conf_b| over the non-empty bins. Weights repeat rows (torchmetrics
    has none). Rows with a NULL side are left out (torchmetrics has no NULL); NULL over none.
    """
    known = [(i, a, s) for i, (a, s) in enumerate(rows) if a is not None and s is not None]
    if classes is None:
        classes = sorted({k for _, _, s in known for k in s if k is not None})
    edges = [Fraction(k, n_bins) for k in range(n_bins + 1)]
    count: dict[int, Fraction] = {}
    conf: dict[int, Fraction] = {}
    acc: dict[int, Fraction] = {}
    for i, actual, scores in known:
        w = Fraction(1) if weights is None else Fraction(weights[i])
        row = [Fraction(scores[c]) if scores.get(c) is not None else None for c in classes]
        probs = [p for p in row if p is not None]
        confidence = max(probs, default=Fraction(0))
        # torch takes the first index of the maximum; mlsql's prediction is a class the row
        # scores (an unscored class is never predicted; see the family's notes)
        first = next((j for j, p in enumerate(row) if p == confidence), None)
        accuracy = int(first is not None and classes[first] == actual)
        b = min(max(bisect.bisect_right(edges, confidence) - 1, 0), n_bins - 1)
        count[b] = count.get(b, Fraction(0)) + w
        conf[b] = conf.get(b, Fraction(0)) + w * confidence
        acc[b] = acc.get(b, Fraction(0)) + w * accuracy
    n = sum(count.values(), Fraction(0))
    if not known or n == 0:
        return None
    gaps = {b: abs(acc[b] - conf[b]) / count[b] for b in count if count[b] > 0}
    if norm == "max":
        return max(gaps.values())
    if norm == "l2":
        return math.sqrt(sum((count[b] / n * g * g for b, g in gaps.items()), Fraction(0)))
    return sum((count[b] / n * g for b, g in gaps.items()), Fraction(0))


def close(got: Any, want: Any) -> bool:
    if want is None:
        return got is None
    return got is not None and math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15)


#: a worked table: two classes tied, a true class never scored, a row scoring nothing, NULLs
WORKED = [
    ("cat", {"cat": 0.75, "dog": 0.25}),  # confidence 3/4, cat: correct, gap 3/4 - 1
    ("dog", {"cat": 0.5, "dog": 0.5}),  # tie: cat (the smallest label), wrong, gap 1/2
    ("dog", {"dog": 1.0}),  # 1, correct, gap 0
    ("cat", {"dog": 0.25}),  # cat never scored: dog at 1/4, wrong, gap 1/4
    (None, {"cat": 0.5}),  # unknown row
    ("cat", None),  # unknown row
    ("bird", {}),  # scores no class: confidence 0, wrong, gap 0
]


@pytest.mark.parametrize(
    ("params", "want"),
    [
        # 15 bins: every known row in its own bin, Σ |gap| / 5 = (1/4 + 1/2 + 0 + 1/4 + 0) / 5
        ({}, Fraction(1, 5)),
        # 2 bins: {1/4, 0} sum 1/4, {3/4, 1/2, 1} sum -1/4 + 1/2 + 0 = 1/4: (1/4 + 1/4) / 5
        ({"n_bins": 2}, Fraction(1, 10)),
        # the gaps per bin (1/4) / 2 and (1/4) / 3, weighted 2/5 and 3/5 (torchmetrics' max)
        ({"n_bins": 2, "norm": "max"}, Fraction(1, 8)),
        # 1 bin: |(3/4 + 1/2 + 1 + 1/4 + 0) - 2| / 5
        ({"n_bins": 1}, Fraction(1, 10)),
    ],
)
def test_worked_example_is_exact(engine, params, want):
    assert close(value(engine, table(WORKED), **params), want)
    assert close(torchmetrics_oracle(WORKED, **params), want)


def test_worked_example_l2(engine):
    """sqrt(2/5 (1/8)² + 3/5 (1/12)²) = sqrt(1/96)."""
    got = value(engine, table(WORKED), n_bins=2, norm="l2")
    assert math.isclose(got, math.sqrt(Fraction(1, 96)), rel_tol=1e-12)


def test_weights_repeat_rows(engine):
    """Weights 1, 2, 1/2, 1, -, -, 3: n = 15/2; bins Σ w gap = 1/4 and 3/4 under 2 bins."""
    weights = [1.0, 2.0, 0.5, 1.0, 7.0, 7.0, 3.0]
    got = value(engine, table(WORKED, weights), n_bins=2, sample_weight="w")
    assert close(got, Fraction(2, 15))
    assert close(torchmetrics_oracle(WORKED, 2, weights=weights), Fraction(2, 15))


def test_ties_take_the_smallest_label(engine):
    """torch's argmax takes the first index: the smallest label by value (integers) or by its
    bytes (text: 'B' < 'a')."""
    ints = [(1, {2: 0.4, 1: 0.4, 0: 0.2}), (2, {2: 0.4, 1: 0.4, 0: 0.2})]
    t = table(ints, kind=pa.int64())
    # row 1 correct (gap 0.4 - 1), row 2 wrong (0.4): one bin of 15, |0.8 - 1| / 2
    assert close(value(engine, t), Fraction(1, 2) - Fraction(0.4))
    assert close(value(engine, t), torchmetrics_oracle(ints))
    text = [("B", {"a": 0.5, "B": 0.5}), ("a", {"a": 0.5, "B": 0.5})]
    # 'B' predicted: row 1 correct (gap 1/2), row 2 wrong (1/2): |1 - 1| / 2 = 0
    assert close(value(engine, table(text)), Fraction(0))
    assert close(value(engine, table(text)), torchmetrics_oracle(text))


def test_a_label_and_score_list_is_read_as_the_map(engine):
    """{label, score} structs: a label's first entry counts, NULL labels and scores drop out."""
    entries = pa.list_(pa.struct([("label", pa.string()), ("score", pa.float64())]))
    rows = [
        [("cat", 0.75), ("dog", 0.25), ("cat", 0.0)],
        [(None, 0.9), ("cat", 0.5), ("dog", None)],
    ]
    t = pa.table(
        {
            "actual": pa.array(["cat", "dog"], pa.string()),
            "scores": pa.array([[{"label": k, "score": v} for k, v in r] for r in rows], entries),
        }
    )
    # the maps {cat: 3/4, dog: 1/4} (correct) and {cat: 1/2} (wrong): (1/4 + 1/2) / 2
    assert close(value(engine, t), Fraction(3, 8))


def test_no_known_rows_give_null(engine):
    assert value(engine, table([(None, {"a": 0.5}), ("a", None)])) is None


def _random_rows(rng: random.Random, n: int) -> list[tuple[Any, Any]]:
    """Probabilities j/64 (exact in binary: the double bin and the exact one agree), classes
    left out, NULL scores and rows, ties."""
    labels = ["a", "b", "c", "d"]
    rows: list[tuple[Any, Any]] = []
    for _ in range(n):
        actual = None if rng.random() < 0.1 else rng.choice(labels)
        if rng.random() < 0.1:
            rows.append((actual, None))
            continue
        scores = {
            k: (None if rng.random() < 0.1 else rng.choice(range(0, 65, 4)) / 64)
            for k in rng.sample(labels, rng.randint(0, 4))
        }
        rows.append((actual, scores))
    return rows


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "params", [{}, {"n_bins": 4}, {"n_bins": 7, "norm": "l2"}, {"n_bins": 10, "norm": "max"}]
)
def test_random_tables_equal_the_torchmetrics_oracle(engine, seed, params):
    rng = random.Random(seed)
    rows = _random_rows(rng, 40)
    weights = [rng.choice([0.0, 0.5, 1.0, 3.0]) for _ in rows]
    # the oracle's matrix holds only scored classes: the row's prediction is one it scores
    assert close(value(engine, table(rows), **params), torchmetrics_oracle(rows, **params))
    got = value(engine, table(rows, weights), sample_weight="w", **params)
    assert close(got, torchmetrics_oracle(rows, weights=weights, **params))


def test_torchmetrics_itself():
    """torchmetrics' own MulticlassCalibrationError on rows that score every class (its (N, C)
    matrix); skipped where torchmetrics (and torch) are not installed."""
    torch = pytest.importorskip("torch", reason="torch is not installed (torchmetrics needs it)")
    tm = pytest.importorskip("torchmetrics.classification", reason="torchmetrics not installed")
    rng = random.Random(3)
    classes = ["a", "b", "c"]
    rows = []
    for _ in range(50):
        raw = [rng.randint(0, 8) for _ in classes]
        total = sum(raw) or 1
        rows.append(
            (rng.choice(classes), {c: r / total for c, r in zip(classes, raw, strict=True)})
        )
    preds = torch.tensor([[s[c] for c in classes] for _, s in rows], dtype=torch.float64)
    target = torch.tensor([classes.index(a) for a, _ in rows])
    for norm in ("l1", "l2", "max"):
        metric = tm.MulticlassCalibrationError(num_classes=3, n_bins=15, norm=norm)
        want = float(metric(preds, target))
        # torchmetrics rounds the confidences to float32: agreement to float32's precision
        assert math.isclose(torchmetrics_oracle(rows, norm=norm), want, rel_tol=1e-6)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n_bins": 0}, "The 'n_bins' parameter of multiclass_calibration_error must be a whole "
         "number from 1 to 100000. Got 0 instead."),
        ({"n_bins": 2.5}, "The 'n_bins' parameter of multiclass_calibration_error must be a whole "
         "number from 1 to 100000. Got 2.5 instead."),
        ({"norm": "l3"}, "The 'norm' parameter of multiclass_calibration_error must be one of "
         "'l1', 'l2', 'max'. Got 'l3' instead."),
    ],
)  # fmt: skip
def test_bad_parameters_are_an_error(engine, params, message):
    with pytest.raises(Exception, match=re.escape(message)):
        value(engine, table(WORKED), **params)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (1.5, "multiclass_calibration_error takes probabilities in [0, 1] for scores. "
         "Got a value above 1."),
        (-0.25, "multiclass_calibration_error takes probabilities in [0, 1] for scores. "
         "Got a value below 0."),
        (float("nan"), "multiclass_calibration_error takes finite numbers for scores"),
    ],
)  # fmt: skip
def test_bad_probabilities_are_an_error(engine, bad, message):
    """Every scored probability is checked, not only the top one (as multiclass_brier_score)."""
    t = table([("a", {"a": 0.5, "b": 0.5}), ("b", {"b": 0.75, "a": bad})])
    with pytest.raises(Exception, match=re.escape(message)) as info:
        value(engine, t)
    assert_mlsql_error(engine, info.value, when_read=True)


def test_label_kinds_must_match(engine):
    t = pa.table(
        {
            "actual": pa.array([1, 2], pa.int64()),
            "scores": pa.array([[("1", 0.5)], [("2", 1.0)]], pa.map_(pa.string(), pa.float64())),
        }
    )
    message = "multiclass_calibration_error needs actual and scores of the same label type"
    with pytest.raises(Exception, match=re.escape(message)):
        value(engine, t)


#: the Spark runs of these cases are long tests (tests/conftest.py reads it)
LONG_ENGINES = ("spark",)


def test_lower_is_better():
    """A calibration error, as expected_calibration_error: compare and slices rank it down."""
    from mlsql._registry import REGISTRY, measures

    measures()
    assert REGISTRY[MEASURE].lower_is_better
