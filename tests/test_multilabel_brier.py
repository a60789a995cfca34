"""multilabel_brier_score on every engine: scikit-learn's binary ``brier_score_loss`` of each
label's column of the indicator matrix, averaged over the labels.

scikit-learn documents no multi-label Brier score and torchmetrics has none: the reference is
``brier_score_loss`` per label column (``pos_label=1``, the unscored cells 0), averaged
(macro), and over the flattened matrix (micro, the rows' weights repeated per label), on
random label lists with and without weights. ``brier_score_loss`` given the indicator matrix
itself runs its multiclass form (undocumented: per row the sum over the labels), which is
checked to be L times this measure. Then exact fractions: unscored true labels, labels no row is true for, the
{label, score} list form, NULL rows, rows of weight 0, the label universe of one group, and
the same verdicts as the family for bad averages, bad probabilities and mismatched labels.
The random cases against the plain-Python oracle are in ``tests/references.py``
(``multilabel_brier``).
"""

from __future__ import annotations

import math
import random
import re
import warnings
from fractions import Fraction

import pyarrow as pa
import pytest

from tests.test_reliability_inputs import assert_mlsql_error

#: the Spark cases run with the long tests (6-9 s each on two cores)
LONG_ENGINES = ("spark",)

MEASURE = "multilabel_brier_score"
TEXT = pa.string()
AVERAGES = ("micro", "macro", "samples")


def table(actual: list, scores: list, weights: list | None = None, kind=TEXT) -> pa.Table:
    cols = {
        "actual": pa.array(actual, pa.list_(kind)),
        "scores": pa.array(
            [None if s is None else list(s.items()) for s in scores],
            pa.map_(kind, pa.float64()),
        ),
    }
    if weights is not None:
        cols["w"] = pa.array(weights, pa.float64())
    return pa.table(cols)


def value(engine, t: pa.Table, **params):
    return engine.aggregate(MEASURE, t, columns=("actual", "scores"), **params)


def close(got, want) -> bool:
    return got is not None and math.isclose(got, want, rel_tol=1e-12)


def sklearn_values(actual, scores, weights=None) -> dict[str, float]:
    """scikit-learn's Brier score of each label column (known rows, labels true or scored in
    one of them, unscored cells 0), its mean over the labels (macro), and the Brier score of
    the flattened matrix with each row's weight repeated per label (micro)."""
    np = pytest.importorskip("numpy")
    metrics = pytest.importorskip("sklearn.metrics")
    rows = [
        (set(a) - {None}, {k: v for k, v in s.items() if v is not None}, 1.0 if w is None else w)
        for a, s, w in zip(actual, scores, weights or [None] * len(actual), strict=True)
        if a is not None and s is not None
    ]
    labels = sorted({x for truth, scored, _ in rows for x in (*truth, *scored)})
    y = np.array([[int(x in truth) for x in labels] for truth, _, _ in rows])
    p = np.array([[scored.get(x, 0.0) for x in labels] for _, scored, _ in rows])
    w = np.array([weight for _, _, weight in rows]) if weights is not None else None
    per_label = [
        metrics.brier_score_loss(y[:, j], p[:, j], sample_weight=w, pos_label=1)
        for j in range(len(labels))
    ]
    flat_w = None if w is None else np.repeat(w, len(labels))
    micro = metrics.brier_score_loss(y.ravel(), p.ravel(), sample_weight=flat_w, pos_label=1)
    out = {"macro": float(np.mean(per_label)), "micro": float(micro)}
    try:  # the indicator matrix itself: the multiclass form, unhalved from 3 labels on
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the rows' probabilities do not sum to 1
            whole = metrics.brier_score_loss(y, p, sample_weight=w, scale_by_half=False)
        out["matrix_per_label"] = float(whole) / len(labels)
    except (TypeError, ValueError):  # a version that refuses the matrix
        pass
    return out


def random_rows(seed: int, n: int = 60):
    rng = random.Random(seed)
    labels, probabilities = ["a", "b", "c", "d", "e"], [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]
    actual, scores, weights = [], [], []
    for _ in range(n):
        actual.append(None if rng.random() < 0.05 else rng.sample(labels, rng.randint(0, 3)))
        chosen = rng.sample(labels, rng.randint(0, 5))
        scores.append(
            None if rng.random() < 0.05 else {x: rng.choice(probabilities) for x in chosen}
        )
        weights.append(rng.choice([0.5, 1.0, 2.0, 3.25]))
    # both columns carry every label somewhere, so scikit-learn's columns are never constant
    actual[0], scores[0] = ["a", "b", "c", "d", "e"], {"a": 0.5}
    return actual, scores, weights


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_scikit_learn_per_label_column(engine, seed, weighted):
    actual, scores, weights = random_rows(seed)
    want = sklearn_values(actual, scores, weights if weighted else None)
    assert math.isclose(want["micro"], want["macro"], rel_tol=1e-12)  # one number
    if "matrix_per_label" in want:
        assert math.isclose(want["matrix_per_label"], want["macro"], rel_tol=1e-12)
    t = table(actual, scores, weights if weighted else None)
    extra = {"sample_weight": "w"} if weighted else {}
    for average in AVERAGES:
        got = value(engine, t, average=average, **extra)
        assert close(got, want["macro"]), (average, got, want)
    assert close(value(engine, t, **extra), want["macro"])  # macro, the default


def test_worked_example_is_exact(engine):
    """Labels x, y, z (z only true). Row 1, true {x}: (3/4 - 1)² + (1/2)² + 0 = 5/16.
    Row 2, true {y, z}: (1/4)² + 1 + 1 (its true labels unscored) = 33/16. Mean over the
    6 cells: 38/96 = 19/48. The NULL rows are skipped."""
    t = table(
        [["x"], ["y", "z"], None, ["x"]],
        [{"x": 0.75, "y": 0.5}, {"x": 0.25}, {"x": 0.5}, None],
    )
    for average in AVERAGES:
        assert close(value(engine, t, average=average), Fraction(19, 48))
    # weights 2 and 1: (2 x 5/16 + 33/16) / 3 / 3 = 43/144
    w = table(
        [["x"], ["y", "z"]],
        [{"x": 0.75, "y": 0.5}, {"x": 0.25}],
        [2.0, 1.0],
    )
    assert close(value(engine, w, sample_weight="w"), Fraction(43, 144))


def test_a_row_of_weight_0_brings_no_label(engine):
    """The second row weighs 0: label z (only in it) is not in the universe, as from the rows
    repeated 0 times. Row 1 over {x, y}: 5/16 / 2 = 5/32."""
    t = table([["x"], ["z"]], [{"x": 0.75, "y": 0.5}, {"z": 0.5}], [1.0, 0.0])
    assert close(value(engine, t, sample_weight="w"), Fraction(5, 32))


def test_a_label_and_score_list_is_read_as_the_map(engine):
    """{label, score} structs: a label's first entry counts, NULL labels and scores drop out;
    a repeated or NULL true label counts once or not at all."""
    entries = pa.list_(pa.struct([("label", pa.string()), ("score", pa.float64())]))
    rows = [
        [("x", 0.75), ("y", 0.5), ("x", 0.0)],
        [(None, 0.5), ("x", 0.25), ("y", None)],
    ]
    t = pa.table(
        {
            "actual": pa.array([["x", "x", None], ["y", "z"]], pa.list_(pa.string())),
            "scores": pa.array([[{"label": k, "score": v} for k, v in r] for r in rows], entries),
        }
    )
    assert close(value(engine, t), Fraction(19, 48))


def test_integer_labels(engine):
    """Labels 1, 2, 3. Row 1, true {1}: (1/2 - 1)² + (1/2)² = 1/2. Row 2, true {2, 3}: (1/4)²
    + (1 - 1)² + 1 (3 unscored) = 17/16. The mean over 6 cells: (8/16 + 17/16) / 6 = 25/96."""
    t = table([[1], [2, 3]], [{1: 0.5, 2: 0.5}, {1: 0.25, 2: 1.0}], kind=pa.int64())
    assert close(value(engine, t), Fraction(25, 96))


def test_no_known_row_or_no_label_gives_null(engine):
    assert value(engine, table([None, ["a"]], [{"a": 0.5}, None])) is None
    # known rows, but none true or scored: no cell
    assert value(engine, table([[], [None]], [{}, {"a": None}])) is None


def test_a_bad_average_is_refused_as_the_family_refuses_it(engine):
    t = table([["a"]], [{"a": 0.5}])
    message = (
        "The 'average' parameter of multilabel_brier_score must be one of 'micro', 'macro', "
        "'samples'. Got 'weighted' instead."
    )
    with pytest.raises(Exception, match=re.escape(message)):
        value(engine, t, average="weighted")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (1.5, "multilabel_brier_score takes probabilities in [0, 1] for scores. "
         "Got a value above 1."),
        (-0.25, "multilabel_brier_score takes probabilities in [0, 1] for scores. "
         "Got a value below 0."),
        (float("nan"), "multilabel_brier_score takes finite numbers for scores"),
    ],
)  # fmt: skip
def test_bad_probabilities_are_an_error(engine, bad, message):
    t = table([["a"], ["b"]], [{"a": 0.5, "b": 0.5}, {"a": bad}])
    with pytest.raises(Exception, match=re.escape(message)) as info:
        value(engine, t)
    assert_mlsql_error(engine, info.value, when_read=True)


def test_label_kinds_must_match(engine):
    t = pa.table(
        {
            "actual": pa.array([[1], [2]], pa.list_(pa.int64())),
            "scores": pa.array([[("1", 0.5)], [("2", 1.0)]], pa.map_(pa.string(), pa.float64())),
        }
    )
    message = "multilabel_brier_score needs actual and scores of the same label type"
    with pytest.raises(Exception, match=re.escape(message)):
        value(engine, t)
