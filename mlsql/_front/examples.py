"""The docstring examples of the registry's functions, the same in every engine: each
family's small table and the parameters a measure's example passes.

:func:`example` gives a measure's table (its columns, named as the measure's inputs) and
parameters; an engine writes them as its own statements (``pl.DataFrame(...)``,
``spark.createDataFrame(...)``). What each example prints is computed once, by Polars,
when the stubs are written (``python -m mlsql._stubs``), into
:mod:`mlsql._front.example_outputs`; the other engines' doctests check that they print it
too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mlsql._registry import Measure
from mlsql.measures import label_based as LB
from mlsql.measures import ranking as R
from mlsql.measures.scores import ROLES

#: a measure's example: its table's columns (name -> values) and its parameters
Example = tuple[dict[str, list[Any]], dict[str, Any]]

#: five rows of 0/1 labels (one per cell, two true positives), and the slides' stored counts
BINARY: dict[str, list[Any]] = {"actual": [1, 1, 1, 0, 0], "predicted": [1, 1, 0, 1, 0]}
BINARY_COUNTS: dict[str, list[Any]] = {"tp": [4], "fp": [2], "fn": [1], "tn": [3]}
#: the lecture's five-row rule example
RULES: dict[str, list[Any]] = {
    "holds": [True, False, True, False, False],
    "fires": [True, True, False, False, False],
}
#: scikit-learn's four-row regression example
REGRESSION: dict[str, list[Any]] = {
    "actual": [3.0, -0.5, 2.0, 7.0],
    "predicted": [2.5, 0.0, 2.0, 8.0],
}
#: Hivemall's AUC example: six rows, scores .8 .7 .5 .5 .3 .2 (one tie)
SCORES: dict[str, list[Any]] = {
    "actual": [1, 1, 0, 1, 1, 0],
    "predicted": [0.8, 0.7, 0.5, 0.5, 0.3, 0.2],
}
#: four rows of three classes
SINGLE_LABEL: dict[str, list[Any]] = {
    "actual": ["a", "a", "b", "c"],
    "predicted": ["a", "b", "b", "c"],
}
#: two rows of Hivemall-style tags
MULTILABEL: dict[str, list[Any]] = {
    "actual": [["cat", "bird"], ["dog"]],
    "predicted": [["cat"], ["dog", "fish"]],
}
#: three subjects rated by three raters
RATINGS: dict[str, list[Any]] = {"ratings": [["a", "a", "b"], ["b", "b", "b"], ["a", "b", "a"]]}
#: three models right (1) or wrong (0) on five rows
OUTCOMES: dict[str, list[Any]] = {
    "correct": [[1, 1, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 1, 1]]
}
#: two rows of class probabilities, the second missing its true class's score
CLASS_SCORES: dict[str, list[Any]] = {
    "actual": ["cat", "dog"],
    "scores": [
        [{"label": "cat", "score": 0.75}, {"label": "dog", "score": 0.25}],
        [{"label": "cat", "score": 0.5}],
    ],
}
#: the ranking measures' tables, one per input shape
RANKED: dict[str, list[Any]] = {
    "rank_items": [[1, 3, 2, 6], [4, 5]],
    "correct_items": [[1, 2, 4], [5]],
}
RETRIEVED: dict[str, list[Any]] = {
    "correct_items": [[1, 2, 4], [5]],
    "rank_items": [[1, 3, 2, 6], [4, 5]],
}
JUDGED: dict[str, list[Any]] = {
    "correct_items": [[1, 2, 4], [5]],
    "rank_items": [[1, 3, 2, 6, 5], [4, 5]],
    "nonrelevant_items": [[3, 5, 6], [4]],
}
#: two documents' true labels and label scores (the label-ranking measures' table too)
SCORED: dict[str, list[Any]] = {
    "actual": [["cat"], ["owl", "cat"]],
    "scores": [
        [{"label": "cat", "score": 0.9}, {"label": "dog", "score": 0.4}],
        [
            {"label": "cat", "score": 0.2},
            {"label": "dog", "score": 0.7},
            {"label": "owl", "score": 0.7},
        ],
    ],
}
GRADED: dict[str, list[Any]] = {
    "ranked_relevance": [[5, 2, 4, 1, 3]],
    "ideal_relevance": [[5, 4, 3]],
}
#: five probabilities of the positive class (calibration), and three documents' label
#: scores (the per-label thresholds)
PROBABILITIES: dict[str, list[Any]] = {"actual": [1, 0, 1, 1, 0], "prob": [0.9, 0.8, 0.7, 0.3, 0.1]}
LABEL_SCORES: dict[str, list[Any]] = {
    "actual": [["cat"], ["cat", "dog"], ["dog"]],
    "scores": [
        [{"label": "cat", "score": 0.9}, {"label": "dog", "score": 0.3}],
        [{"label": "cat", "score": 0.6}, {"label": "dog", "score": 0.4}],
        [{"label": "cat", "score": 0.7}, {"label": "dog", "score": 0.8}],
    ],
}


def _has(measure: Measure, param: str) -> bool:
    return any(p.name == param for p in measure.params)


def _binary(measure: Measure) -> Example:
    given = {"alpha": 2.0} if measure.name.startswith("binary_f_alpha") else {}
    if measure.kind == "from_counts":
        return BINARY_COUNTS, given
    return dict(zip(measure.inputs, BINARY.values(), strict=True)), given


def _rules(measure: Measure) -> Example:
    return (BINARY_COUNTS if measure.kind == "from_counts" else RULES), {}


def _regression(measure: Measure) -> Example:
    return {name: REGRESSION[name] for name in measure.inputs}, {}


def _scores(measure: Measure) -> Example:
    roles: dict[str, list[Any]] = {"label": SCORES["actual"], "score": SCORES["predicted"]}
    given = {"n_bins": 5} if _has(measure, "n_bins") else {}
    return {name: roles[ROLES[name]] for name in measure.inputs}, given


#: the parameters the single-label examples show
SINGLE_LABEL_PARAMS: dict[str, dict[str, Any]] = {
    "precision_score": {"average": "macro"},
    "recall_score": {"average": "macro"},
    "fbeta_score": {"beta": 2.0},
    "f1_score": {"average": "weighted"},
    "cohen_kappa_score": {"weights": "linear"},
    "class_error_rate": {"label": "a"},
    "cost_error": {"costs": {"a": {"b": 5.0}}},
}


def _single_label(measure: Measure) -> Example:
    if measure.inputs == ("label",):
        return {"label": SINGLE_LABEL["actual"]}, ({"positive": "a"} if measure.params else {})
    return SINGLE_LABEL, SINGLE_LABEL_PARAMS.get(measure.name, {})


def _multilabel(measure: Measure) -> Example:
    return MULTILABEL, ({"n_labels": 4} if _has(measure, "n_labels") else {})


def _agreement(measure: Measure) -> Example:
    return dict(RATINGS if measure.inputs == ("ratings",) else OUTCOMES), {}


def _ranking(measure: Measure) -> Example:
    if measure.inputs == R.RANKED:
        return RANKED, {"k": 2}
    if measure.inputs == R.RETRIEVED:
        return RETRIEVED, {"k": 2} if _has(measure, "k") else {}
    if measure.inputs == R.JUDGED:
        return JUDGED, {}
    if measure.inputs == R.SCORED:
        return SCORED, {}
    if measure.inputs == ("scores",):
        given: dict[str, dict[str, Any]] = {
            "top_k": {"k": 1},
            "above_threshold": {"threshold": 0.5},
        }
        return {"scores": SCORED["scores"]}, given.get(measure.name, {"k": 1, "threshold": 0.5})
    return GRADED, {"k": 3}


#: each family's examples (the label tables' are the site's own, :mod:`mlsql._docs.examples`)
FAMILIES: dict[str, Callable[[Measure], Example]] = {
    "binary": _binary,
    "rules": _rules,
    "regression": _regression,
    "scores": _scores,
    "single_label": _single_label,
    "multilabel": _multilabel,
    "agreement": _agreement,
    "class_scores": lambda m: (dict(CLASS_SCORES), {}),
    "ranking": _ranking,
    "label_scores": lambda m: (SCORED, {}),
    "curves": lambda m: ({"actual": SCORES["actual"], "score": SCORES["predicted"]}, {}),
    "thresholds": lambda m: (
        (PROBABILITIES, {"n_bins": 2}) if m.name == "calibration_table" else (LABEL_SCORES, {})
    ),
}


def example(measure: Measure) -> Example | None:
    """The table and parameters of ``measure``'s docstring example (None: its family has
    none here). The site's reference shows it too (:mod:`mlsql._docs.examples`), for the
    tables and the hand-written functions as well.

    Examples
    --------
    >>> from mlsql._front.build import lookup
    >>> example(lookup("binary_f_alpha_from_counts"))
    ({'tp': [4], 'fp': [2], 'fn': [1], 'tn': [3]}, {'alpha': 2.0})
    >>> example(lookup("mse"))
    ({'actual': [3.0, -0.5, 2.0, 7.0], 'predicted': [2.5, 0.0, 2.0, 8.0]}, {})
    """
    family = FAMILIES.get(measure.family)
    return None if family is None else family(measure)


@dataclass(frozen=True)
class FrameExample:
    """The example of a function over a frame: the frame's ``columns``, the call's column
    arguments ``args`` and keyword ``params``, the columns it shows (``select``; all where
    empty) and how: every row (``"rows"``), the first row (``"first"``) or its one value
    (``"item"``). An engine writes it as its own statements (the ``frame_example`` of
    :class:`mlsql._front.engine.Engine`)."""

    columns: dict[str, list[Any]]
    args: tuple[str, ...]
    params: dict[str, Any] = field(default_factory=dict)
    select: tuple[str, ...] = ()
    show: Literal["rows", "first", "item"] = "rows"


#: three rows of two classes, and two documents' tags
_CLASSES: dict[str, list[Any]] = {"a": ["x", "x", "y"], "p": ["x", "y", "y"]}
_TAGS: dict[str, list[Any]] = {
    "actual": [["cat", "bird"], ["dog"]],
    "predicted": [["cat"], ["dog", "cat"]],
}
_TIED: dict[str, list[Any]] = {"y": [1, 0, 1], "s": [0.9, 0.4, 0.4]}

#: the examples of the functions over a frame (the table functions, ``evaluate``); what each
#: prints is computed by Polars with the measures' (:mod:`mlsql._front.example_outputs`)
FRAMES: dict[str, FrameExample] = {
    "class_distribution": FrameExample({"y": ["a", "b", "a", None]}, ("y",)),
    "confusion_matrix": FrameExample(_CLASSES, ("a", "p")),
    "confusion_matrix_wide": FrameExample(_CLASSES, ("a", "p")),
    "class_metrics": FrameExample(_CLASSES, ("a", "p"), select=("class", "precision", "recall")),
    "label_metrics": FrameExample(
        _TAGS, ("actual", "predicted"), select=("label", "tp", "fp", "fn", "tn")
    ),
    "multilabel_report": FrameExample(
        _TAGS, ("actual", "predicted"), select=("n_rows", "macro_recall", "wlp"), show="first"
    ),
    "calibration_table": FrameExample(
        {"actual": [1, 0, 1], "prob": [0.9, 0.8, 0.2]}, ("actual", "prob"), {"n_bins": 2}
    ),
    "label_thresholds": FrameExample(
        LABEL_SCORES, ("actual", "scores"), select=("label", "threshold", "fbeta")
    ),
    "precision_recall_curve": FrameExample(_TIED, ("y", "s")),
    "roc_curve": FrameExample(_TIED, ("y", "s")),
    "det_curve": FrameExample({"y": [0, 0, 1, 1], "s": [0.1, 0.4, 0.35, 0.8]}, ("y", "s")),
    "confusion_matrix_at_thresholds": FrameExample(
        {"y": [0, 1, 1, 0], "s": [0.1, 0.5, 0.5, 0.9], "w": [1, 2, 1, 1]},
        ("y", "s"),
        {"sample_weight": "w"},
    ),
    "evaluate": FrameExample(
        {
            "model": ["A", "A", "B", "B"],
            "actual": ["x", "y", "x", "y"],
            "predicted": ["x", "y", "y", "y"],
        },
        ("actual", "predicted"),
        {"measures": ["accuracy", ("fbeta_score", {"beta": 2})], "by": "model"},
    ),
}


def standalone(with_beta: bool) -> FrameExample:
    """The example of a ``multilabel_report`` column offered as a table function of its own
    (:func:`mlsql._front.tables.standalone`): the report's tags, beta 2 where it takes one
    (``with_beta``), its one value shown (written exactly in
    :data:`~mlsql.measures.label_based.STANDALONE_OUTPUTS`).

    Examples
    --------
    >>> standalone(True).params
    {'beta': 2.0}
    """
    given = {"beta": LB.STANDALONE_EXAMPLE_BETA} if with_beta else {}
    return FrameExample(LB.STANDALONE_EXAMPLE, ("actual", "predicted"), given, show="item")
