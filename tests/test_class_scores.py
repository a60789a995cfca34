"""multiclass_brier_score on every engine: scikit-learn's multiclass ``brier_score_loss``.

By number against scikit-learn (weights, classes a row leaves out, every ``scale_by_half``),
a worked example in exact fractions, the {label, score} list form, NULL rows, and the same
verdict for bad probabilities and mismatched label types. The random cases against the
plain-Python oracle are in ``tests/references.py`` (``multiclass_brier``).
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction

import pyarrow as pa
import pytest

from tests.test_reliability_inputs import assert_mlsql_error

MEASURE = "multiclass_brier_score"
CLASSES = ["eggs", "ham", "spam"]
#: scikit-learn's docstring example, then a row that leaves a class out (its probability 0)
ACTUAL = ["eggs", "ham", "spam", "ham"]
SCORES = [
    {"eggs": 0.8, "ham": 0.1, "spam": 0.1},
    {"eggs": 0.2, "ham": 0.7, "spam": 0.1},
    {"eggs": 0.2, "ham": 0.2, "spam": 0.6},
    {"eggs": 0.75, "spam": 0.25},
]
WEIGHTS = [1.5, 0.25, 2.0, 1.0]


#: the {label, score} list form of the docstring example (two rows, the second scoring one class)
ENTRIES_EXAMPLE = {
    "actual": ["cat", "dog"],
    "scores": [
        [{"label": "cat", "score": 0.75}, {"label": "dog", "score": 0.25}],
        [{"label": "cat", "score": 0.5}],
    ],
}


def table(actual: list, scores: list, weights: list | None = None) -> pa.Table:
    cols = {
        "actual": pa.array(actual, pa.string()),
        "scores": pa.array(
            [None if s is None else list(s.items()) for s in scores],
            pa.map_(pa.string(), pa.float64()),
        ),
    }
    if weights is not None:
        cols["w"] = pa.array(weights, pa.float64())
    return pa.table(cols)


def value(engine, t: pa.Table, **params):
    return engine.aggregate(MEASURE, t, columns=("actual", "scores"), **params)


def sklearn_value(actual, scores, **params):
    metrics = pytest.importorskip("sklearn.metrics")
    matrix = [[s.get(c, 0.0) for c in CLASSES] for s in scores]
    return metrics.brier_score_loss(actual, matrix, labels=CLASSES, **params)


@pytest.mark.parametrize("scale_by_half", ["auto", True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_scikit_learn_with_left_out_classes(engine, scale_by_half, weighted):
    """A class a row does not score is scikit-learn's column holding 0 in that row."""
    params: dict = {"scale_by_half": scale_by_half}
    t = table(ACTUAL, SCORES, WEIGHTS if weighted else None)
    want = sklearn_value(
        ACTUAL, SCORES, scale_by_half=scale_by_half, sample_weight=WEIGHTS if weighted else None
    )
    if weighted:
        params["sample_weight"] = "w"
    assert math.isclose(value(engine, t, **params), want, rel_tol=1e-12)


def test_worked_example_is_exact(engine):
    """Row sums: (1/4)² + (1/4)² = 1/8; (1/2)² + 1 (its true class unscored) = 5/4; the mean
    11/16; the widest row has 2 classes, so 'auto' halves it (11/32), as True; False keeps it."""
    t = table(["cat", "dog", None, "cat"], [{"cat": 0.75, "dog": 0.25}, {"cat": 0.5}, {}, None])
    assert math.isclose(value(engine, t), Fraction(11, 32), rel_tol=1e-12)
    assert math.isclose(value(engine, t, scale_by_half=True), Fraction(11, 32), rel_tol=1e-12)
    assert math.isclose(value(engine, t, scale_by_half=False), Fraction(11, 16), rel_tol=1e-12)


def test_a_label_and_score_list_is_read_as_the_map(engine):
    """{label, score} structs: a label's first entry counts, NULL labels and scores drop out."""
    entries = pa.list_(pa.struct([("label", pa.string()), ("score", pa.float64())]))
    rows = [
        [("cat", 0.75), ("dog", 0.25), ("cat", 0.0)],
        [(None, 0.5), ("cat", 0.5), ("dog", None)],
    ]
    t = pa.table(
        {
            "actual": pa.array(["cat", "dog"], pa.string()),
            "scores": pa.array([[{"label": k, "score": v} for k, v in r] for r in rows], entries),
        }
    )
    assert math.isclose(value(engine, t), Fraction(11, 32), rel_tol=1e-12)


def test_no_known_rows_give_null(engine):
    assert value(engine, table([None, "a"], [{"a": 0.5}, None])) is None


def test_integer_classes(engine):
    metrics = pytest.importorskip("sklearn.metrics")
    t = pa.table(
        {
            "actual": pa.array([0, 2, 1], pa.int64()),
            "scores": pa.array(
                [[(0, 0.5), (1, 0.25), (2, 0.25)], [(2, 1.0)], [(0, 0.5), (1, 0.5)]],
                pa.map_(pa.int64(), pa.float64()),
            ),
        }
    )
    matrix = [[0.5, 0.25, 0.25], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]]
    want = metrics.brier_score_loss([0, 2, 1], matrix, labels=[0, 1, 2])
    assert math.isclose(value(engine, t), want, rel_tol=1e-12)


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (1.5, "multiclass_brier_score takes probabilities in [0, 1] for scores. "
         "Got a value above 1."),
        (-0.25, "multiclass_brier_score takes probabilities in [0, 1] for scores. "
         "Got a value below 0."),
        (float("nan"), "multiclass_brier_score takes finite numbers for scores"),
    ],
)  # fmt: skip
def test_bad_probabilities_are_an_error(engine, bad, message):
    t = table(["a", "b"], [{"a": 0.5, "b": 0.5}, {"a": bad}])
    with pytest.raises(Exception, match=re.escape(message)) as info:
        value(engine, t)
    assert_mlsql_error(engine, info.value, when_read=True)


@pytest.mark.parametrize("measure", [MEASURE, "multiclass_calibration_error"])
@pytest.mark.parametrize("order", [(1.5, -0.5), (-0.5, 1.5)], ids=["above-first", "below-first"])
@pytest.mark.parametrize("cells", ["two-rows", "one-row"])
def test_probabilities_on_both_sides_name_below_0_whatever_the_order(engine, measure, order, cells):
    """One verdict for the group whichever bad probability is read first (a row's or a class's):
    below 0 first, then above 1 (Spark checked row by row and named the first it read)."""
    if cells == "two-rows":
        t = table(["a", "b"], [{"a": order[0]}, {"a": order[1]}])
    else:
        t = table(["a"], [{"a": order[0], "b": order[1]}])
    message = f"{measure} takes probabilities in [0, 1] for scores. Got a value below 0."
    with pytest.raises(Exception, match=re.escape(message)) as info:
        engine.aggregate(measure, t, columns=("actual", "scores"))
    assert_mlsql_error(engine, info.value, when_read=True)


def test_label_kinds_must_match(engine):
    t = pa.table(
        {
            "actual": pa.array([1, 2], pa.int64()),
            "scores": pa.array([[("1", 0.5)], [("2", 1.0)]], pa.map_(pa.string(), pa.float64())),
        }
    )
    message = "multiclass_brier_score needs actual and scores of the same label type"
    with pytest.raises(Exception, match=re.escape(message)):
        value(engine, t)


def first_entries(entries: list | None) -> dict | None:
    """A {label, score} list as the map it stands for: a label's first entry counts (a NULL
    score there leaves the label unscored), NULL labels drop out."""
    if entries is None:
        return None
    seen: set = set()
    out = {}
    for label, score in entries:
        if label is None or label in seen:
            continue
        seen.add(label)
        if score is not None:
            out[label] = score
    return out


@pytest.mark.parametrize("seed", range(3))
def test_rows_that_repeat_a_label_among_rows_that_do_not(engine, seed):
    """Rows whose labels repeat (their first entries counted, a NULL score first included)
    beside rows that do not, and highest probabilities tied or not, in one group: both
    measures equal the plain-Python oracles over each row's first entries."""
    from tests.references import calibration_error, multiclass_brier, top_labels

    rng = random.Random(seed)
    labels, probabilities = ["a", "b", "c", "d"], [0.0, 0.25, 0.5, 0.75, 1.0, None]
    rows, actual = [], []
    for _ in range(200):
        n = rng.randint(0, 6)
        entries = [(rng.choice([*labels, None]), rng.choice(probabilities)) for _ in range(n)]
        rows.append(None if rng.random() < 0.05 else entries)
        actual.append(None if rng.random() < 0.05 else rng.choice(labels))
    assert any(r and len({k for k, _ in r}) < len(r) for r in rows)  # repeats are there
    assert any(r and len({k for k, _ in r}) == len(r) for r in rows)  # and rows without
    entry = pa.struct([("label", pa.string()), ("score", pa.float64())])
    t = pa.table(
        {
            "actual": pa.array(actual, pa.string()),
            "scores": pa.array(
                [None if r is None else [{"label": k, "score": v} for k, v in r] for r in rows],
                pa.list_(entry),
            ),
        }
    )
    maps = [(first_entries(r), a) for r, a in zip(rows, actual, strict=True)]
    assert math.isclose(value(engine, t), multiclass_brier(maps), rel_tol=1e-12)
    got = engine.aggregate("multiclass_calibration_error", t, columns=("actual", "scores"))
    assert math.isclose(got, calibration_error(*top_labels(maps), 15), rel_tol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(
    ("measure", "params", "most"),
    [
        (MEASURE, {}, 6),
        ("multiclass_calibration_error", {}, 7),
        ("multiclass_calibration_error", {"norm": "max"}, 9),
    ],
)
def test_polars_reads_the_scored_classes_once_per_aggregation(measure, params, most, weighted):
    """Polars merges no common list.eval, so each mention of a row's scored classes kept every
    label's first entry again (15 is_first_distinct in the Brier score's plan, 17 in the
    calibration error's, about 1 CPU s each per million rows of 4 classes): each row value
    (its cells, its unscored true class, its width, its bin, its checks) now reads them once."""
    pl = pytest.importorskip("polars")
    import mlsql.polars as mp

    lf = pl.LazyFrame({**ENTRIES_EXAMPLE, "w": [1.0, 2.0], "g": [0, 1]})
    if weighted:
        params = {**params, "sample_weight": "w"}
    expr = getattr(mp, measure)("actual", "scores", **params)
    for query in (lf.select(expr), lf.group_by("g").agg(expr)):
        assert query.explain().count("is_first_distinct") <= most


def test_every_class_score_measure_ranks_down():
    """The Brier score is a loss and the calibration error an error: compare's --fail-if-worse and
    slices take the lower one as the better."""
    from mlsql._registry import measures

    family = measures(family="class_scores")
    assert {m.name for m in family} >= {MEASURE, "multiclass_calibration_error"}
    assert [m.name for m in family if not m.lower_is_better] == []


#: the Spark runs of these cases are long tests (tests/conftest.py reads it)
LONG_ENGINES = ("spark",)
