"""The docstring fragments of generated functions, the same in every engine.

Each is a template filled with the engine's words
(:attr:`mlsql._front.engine.Engine.words`), so the engines' docstrings differ
only where the engines do.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from mlsql import _params as P
from mlsql._front.engine import Engine
from mlsql._registry import Measure, Param

F = TypeVar("F", bound=Callable[..., Any])

INPUT_DOCS = {
    "actual": "The true labels of each row: {list_column} ({name_or}).",
    "predicted": "The predicted labels of each row: {list_column} ({name_or}).",
    "counts": "Stored ``multilabel_counts`` structs (or ``merge_counts`` of them).",
}
#: an input of a measure that takes one value per row, not label lists
VALUE_DOC = "The {side} value of each row: a column ({name_or})."
#: an input without a description of its own
OTHER_INPUT_DOC = "Column {name_or}."

#: a parameter without a description of its own
OTHER_PARAM_DOC = "{name} : default {default!r}\n    See the summary."

RETURNS = {
    "set": "{expr}\n    {a_list} per row (distinct, sorted, no NULLs); NULL where either list is NULL.",
    "row": "{expr}\n    A number per row; NULL where either list is NULL.",
    "aggregate": "{expr}\n    An aggregate: one number per {aggregate_scope}",
    "counts": "{expr}\n    An aggregate struct of counts that can be stored and merged.",
    "from_counts": "{expr}\n    A number per row of stored counts.",
    "table": "{table}\n    See the summary.",
}


def input_doc(engine: Engine, m: Measure, name: str) -> str:
    """What input ``name`` of ``m`` holds: label lists, or one value per row."""
    if name in ("actual", "predicted") and not m.takes_label_lists:
        side = "true" if name == "actual" else "predicted"
        return VALUE_DOC.format(side=side, **engine.words)
    return INPUT_DOCS.get(name, OTHER_INPUT_DOC).format(**engine.words)


def param_lines(p: Param) -> list[str]:
    """The ``Parameters`` entry of parameter ``p``: from its constraint when it has one."""
    if p.constraint is not None:
        return P.param_doc(p).splitlines()
    return OTHER_PARAM_DOC.format(name=p.name, default=p.default).splitlines()


#: the ``Parameters`` entry of ``sample_weight``, in an engine's words
SAMPLE_WEIGHT_DOC = """sample_weight : {input_type}, optional
    A weight per row (a finite number >= 0; a NULL weight makes the row
    unknown). None (the default): every row weighs 1."""


def sample_weight_lines(engine: Engine) -> list[str]:
    """The ``Parameters`` entry of ``sample_weight``."""
    return SAMPLE_WEIGHT_DOC.format(**engine.words).splitlines()


def returns(engine: Engine, kind: str) -> list[str]:
    """The ``Returns`` section's lines of a measure of ``kind``."""
    return RETURNS[kind].format(**engine.words).splitlines()


def docstring(
    engine: Engine, m: Measure, example: Sequence[str] = (), weighted: bool = False
) -> str:
    """A numpydoc docstring from the registry entry, in ``engine``'s words (``weighted``: with
    the ``sample_weight`` entry)."""
    lines = [m.summary, "", "Parameters", "----------"]
    for name in m.inputs:
        lines += [f"{name} : {engine.words['input_type']}", f"    {input_doc(engine, m, name)}"]
    for p in m.params:
        lines += param_lines(p)
    if weighted:
        lines += sample_weight_lines(engine)
    lines += ["", "Returns", "-------", *returns(engine, m.kind)]
    if engine.notes:
        lines += ["", "Notes", "-----", *engine.notes]
    if example:
        lines += ["", "Examples", "--------", *example]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- ranking
def ranking_docstring(
    engine: Engine,
    m: Measure,
    returns: str,
    notes: Sequence[str] = (),
    example: Sequence[str] = (),
) -> str:
    """The docstring of a ranking function: the registry's inputs and notes, ``returns``
    as the engine words it, the engine's own ``notes`` and ``example`` lines."""
    from mlsql.measures import ranking as R

    lines = [m.summary, "", "Parameters", "----------"]
    for name in m.inputs:
        lines += [f"{name} : {engine.words['input_type']}", f"    {R.INPUT_DOCS[name]}"]
    for p in m.params:
        lines += param_lines(p)
    if m.weighted:
        lines += sample_weight_lines(engine)
    lines += ["", "Returns", "-------", *returns.splitlines()]
    found = [R.NOTES.get(m.name, "")]
    if m.inputs == R.RANKED:
        found.append(R.AT_K_NOTE)
    elif m.inputs in (R.RETRIEVED, R.JUDGED):
        found.append(R.RETRIEVAL_NOTE)
    elif m.inputs == R.SCORED:
        found.append(R.SCORED_NOTE)
    found = [n for n in (*found, *notes) if n]
    if found:
        lines += ["", "Notes", "-----", *textwrap.wrap(" ".join(found), 88)]
    if example:
        lines += ["", "Examples", "--------", *example]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- classification
#: the classification families' parameters as docstrings describe them (type line, text)
CLASS_PARAM_DOCS = {
    "positive": ("positive : label", "The class whose share is wanted (required)."),
    "label": ("label : label", "The class whose error rate is wanted (required)."),
}


# ---------------------------------------------------------------- frame-level tables
#: the parameters of the table functions (``{frame}``, ``{label_list}``: the engine's words)
TABLE_PARAMS = {
    "source": "source : {frame}\n    The rows.",
    "source_lists": (
        "source : {frame}\n    The rows, with {label_list} columns ``actual`` and ``predicted``."
    ),
    "label": "label : str\n    The label column.",
    "columns": "actual, predicted : str\n    Column names.",
    "classes": "actual, predicted : str\n    Column names (labels of one kind).",
    "labels": (
        "labels : sequence, optional\n"
        "    The label universe: its labels that never occur get a row with\n"
        "    tp = fp = fn = 0; labels outside it are ignored. Default: the labels\n"
        "    seen in each group."
    ),
    "fbeta_column": "beta : float, optional\n    Adds an ``fbeta`` column.",
    "report_beta": (
        "beta : float, optional\n"
        "    Report F-beta: the ``*_fbeta*`` columns replace the ``*_f1*`` ones."
    ),
    "class_beta": "beta : float, default 1.0\n    The beta of the ``fbeta`` column.",
    "standalone_beta": "beta : float, default 1.0\n    The beta of the F-beta.",
    "zero_division": (
        "zero_division : {{0, 1, nan, 'diagnose', 'ignore'}}, default 0\n"
        "    Value of an undefined ratio."
    ),
    "by": "by : str or sequence of str, optional\n    Grouping columns.",
    "sample_weight": (
        "sample_weight : str, optional\n"
        "    A column of weights per row (finite numbers >= 0; a NULL weight makes\n"
        "    the row unknown): counts become sums of weights. Default: every row 1."
    ),
    "scored": (
        "actual, score : str\n"
        "    Column names: a binary label (boolean or 0/1) and its score (finite numbers),\n"
        "    or true label lists and score maps (a map label -> score or a list of\n"
        "    {{label, score}} structs): one curve per label, a label a row does not score\n"
        "    at -inf."
    ),
    "curve_zero_division": (
        "zero_division : {{0, 1, nan, 'diagnose', 'ignore'}}, default 0\n"
        "    Value of recall or tpr without positive rows, of fpr without negative rows\n"
        "    (scikit-learn: recall 1, fpr and tpr nan)."
    ),
    "drop_intermediate": (
        "drop_intermediate : bool, default False\n"
        "    True drops each threshold whose step in fp and tp from the previous one equals\n"
        "    its step to the next (scikit-learn's drop_intermediate=True, its default);\n"
        "    False keeps every distinct score."
    ),
    "tp_drop_intermediate": (
        "drop_intermediate : bool, default False\n"
        "    True keeps, of each run of thresholds with one tp, only the first and the\n"
        "    last (scikit-learn's drop_intermediate=True); False keeps every distinct score."
    ),
    "det_zero_division": (
        "zero_division : {{0, 1, nan, 'diagnose', 'ignore'}}, default 0\n"
        "    Value of fnr without positive rows, of fpr without negative rows (scikit-learn\n"
        "    refuses data of one class)."
    ),
    "calibration_columns": (
        "actual, prob : str\n    Column names: binary labels (boolean or 0/1) and probabilities."
    ),
    "n_bins": (
        "n_bins : int, default 10\n    The number of equal-width bins on [0, 1] (the last closed)."
    ),
    "strategy": (
        "strategy : {{'uniform', 'quantile'}}, default 'uniform'\n"
        "    How the bins are cut (scikit-learn's calibration_curve strategy): 'uniform',\n"
        "    n_bins equal-width bins; 'quantile', edges at the group's percentiles\n"
        "    k / n_bins (numpy's linear method), a probability on an inner edge in the\n"
        "    bin below; low and high are a bin's edges. With sample_weight the edges\n"
        "    are the unweighted percentiles of the rows weighing more than 0."
    ),
    "score_columns": (
        "actual, scores : str\n"
        "    Column names: the true label lists and the label scores (a map label ->\n"
        "    score, or a list of (label, score) structs)."
    ),
    "threshold_beta": "beta : float, default 1.0\n    The beta of the F-beta maximised.",
    "threshold_bins": (
        "n_bins : int, optional\n"
        "    Bin the scores (probabilities in [0, 1]) into this many equal-width bins\n"
        "    and take the bin edges as candidates. Default: every distinct score."
    ),
}
#: each table function's summary and parameters (keys of :data:`TABLE_PARAMS`)
TABLES = {
    "label_metrics": (
        "One row per (group, label): tp, fp, fn, tn, support, precision, recall, f1, "
        "jaccard, accuracy.",
        (
            "source_lists",
            "columns",
            "labels",
            "fbeta_column",
            "zero_division",
            "by",
            "sample_weight",
        ),
    ),
    "multilabel_report": (
        "One row per group: micro, macro, weighted and samples averages, losses and CLP, "
        "MLP, WLP (the columns of the DuckDB ``multilabel_report``).",
        (
            "source_lists",
            "columns",
            "labels",
            "report_beta",
            "zero_division",
            "by",
            "sample_weight",
        ),
    ),
    "class_distribution": (
        "One row per class (and group): class, count, share of the known rows.",
        ("source", "label", "by", "sample_weight"),
    ),
    "confusion_matrix": (
        "The confusion matrix, long: actual, predicted, count (every cell, zeros too).",
        ("source", "classes", "by", "sample_weight"),
    ),
    "confusion_matrix_wide": (
        "The confusion matrix, wide: one row per actual class, one column per predicted class.",
        ("source", "classes", "by", "sample_weight"),
    ),
    "class_metrics": (
        "One row per class (and group): tp, fp, fn, tn, support, precision, recall, fbeta, "
        "class_error_rate.",
        ("source", "classes", "class_beta", "zero_division", "by", "sample_weight"),
    ),
    "precision_recall_curve": (
        "One row per (group, label of a score map, distinct score), from the highest, after a "
        "first row of threshold +inf: threshold, precision, recall (scikit-learn's points, its (1, 0) end point at "
        "+inf).",
        ("source", "scored", "curve_zero_division", "tp_drop_intermediate", "by", "sample_weight"),
    ),
    "roc_curve": (
        "One row per (group, label of a score map, distinct score), from the highest, after a "
        "first row of threshold +inf: threshold, fpr, tpr (scikit-learn's points; all of them "
        "unless drop_intermediate).",
        ("source", "scored", "curve_zero_division", "drop_intermediate", "by", "sample_weight"),
    ),
    "det_curve": (
        "Detection error tradeoff: one row per (group, label of a score map, distinct score), "
        "from the highest, from the last with no false positive to the first with every "
        "positive found: threshold, fpr, fnr (scikit-learn's points, which it gives by "
        "increasing threshold).",
        ("source", "scored", "det_zero_division", "tp_drop_intermediate", "by", "sample_weight"),
    ),
    "confusion_matrix_at_thresholds": (
        "One row per (group, label of a score map, distinct score), from the highest: "
        "threshold, tn, fp, fn, tp predicting positive every row scored >= threshold "
        "(scikit-learn's counts, which it returns as five arrays; DOUBLE, sums of weights "
        "when weighted).",
        ("source", "scored", "by", "sample_weight"),
    ),
    "calibration_table": (
        "One row per non-empty calibration bin (and group): bin, low, high, count, "
        "mean_score, observed_rate; the bins of expected_calibration_error, or (strategy "
        "'quantile') bins cut at the group's percentiles.",
        ("source", "calibration_columns", "n_bins", "strategy", "by", "sample_weight"),
    ),
    "label_thresholds": (
        "One row per label (and group): the score threshold maximising the label's F-beta, "
        "with tp, fp, fn, support, precision, recall, fbeta at it, and micro_fbeta (every "
        "label at its own threshold).",
        (
            "source",
            "score_columns",
            "threshold_beta",
            "zero_division",
            "threshold_bins",
            "by",
            "sample_weight",
        ),
    ),
}


#: each table function's result, in every engine (``{double}``: the engine's name of
#: DOUBLE); :func:`table_returns` puts the engine's frame type before it and its laziness after
TABLE_RETURNS = {
    "precision_recall_curve": "The ``by`` columns, (``label`` over score maps,) then threshold, "
    "precision, recall; ordered by group, label and descending threshold.",
    "roc_curve": "The ``by`` columns, (``label`` over score maps,) then threshold, fpr, tpr; "
    "ordered by group, label and descending threshold.",
    "det_curve": "The ``by`` columns, (``label`` over score maps,) then threshold, fpr, fnr; "
    "ordered by group, label and descending threshold.",
    "confusion_matrix_at_thresholds": "The ``by`` columns, (``label`` over score maps,) then "
    "threshold, tn, fp, fn, tp ({double}); ordered by group, label and descending threshold.",
    "label_metrics": "The ``by`` columns, then label, tp, fp, fn, tn, support, precision, "
    "recall, f1, [fbeta,] jaccard, accuracy; ordered by group and label.",
    "multilabel_report": "The ``by`` columns, then the columns of the DuckDB "
    "``multilabel_report``; one row per group (one row over an empty frame), ordered by group.",
    "class_distribution": "The ``by`` columns, then class, count, share; ordered by group and "
    "class.",
    "confusion_matrix": "The ``by`` columns, then actual, predicted, count over the classes "
    "seen in the group on either side; ordered by group, actual, predicted.",
    "confusion_matrix_wide": "The ``by`` columns, ``actual``, then each class (named as text) in "
    "sorted order, NULL where a class does not occur in that group.",
    "class_metrics": "The ``by`` columns, then class and the per-class columns of the registry "
    "(:func:`mlsql.measures.single_label.class_values`); ordered by group and class.",
    "calibration_table": "The ``by`` columns, then bin, low, high, count, mean_score, "
    "observed_rate; ordered by group and bin.",
    "label_thresholds": "The ``by`` columns, then label, threshold (+inf where the label is best "
    "predicted nowhere), tp, fp, fn, support, precision, recall, fbeta, micro_fbeta; ordered by "
    "group and label.",
}


def table_returns(engine: Engine, name: str, frame: str | None = None, more: str = "") -> str:
    """The ``Returns`` section's text of table function ``name`` in ``engine``: ``frame`` (by
    default the engine's frame type, :attr:`Engine.words` ``frame``), then
    :data:`TABLE_RETURNS`, then ``more`` (default: the engine's ``lazy`` words).

    Examples
    --------
    >>> from mlsql.polars._engine import POLARS
    >>> print(table_returns(POLARS, "class_distribution"))
    <BLANKLINE>
    polars.DataFrame or polars.LazyFrame
        The ``by`` columns, then class, count, share; ordered by group and class. Lazy if
        ``source`` is.
    """
    words = engine.words
    text = TABLE_RETURNS[name].format(**words) + " " + (more or words["lazy"])
    body = textwrap.fill(text.strip(), 88, initial_indent="    ", subsequent_indent="    ")
    return f"\n{frame or words['frame']}\n{body}"  # a leading line: cleandoc keeps the indent


def table_docstring(engine: Engine, name: str, returns: str, example: str) -> str:
    """The docstring of table function ``name``: its summary and parameters from
    :data:`TABLES` in ``engine``'s words, then ``returns`` and ``example`` (doctest text)."""
    summary, params = TABLES[name]
    lines = [summary, "", "Parameters", "----------"]
    for key in params:
        lines += TABLE_PARAMS[key].format(**engine.words).splitlines()
    lines += ["", "Returns", "-------", *inspect.cleandoc(returns).splitlines()]
    lines += ["", "Examples", "--------", *inspect.cleandoc(example).splitlines()]
    return "\n".join(lines)


def standalone_docstring(
    engine: Engine, name: str, summary: str, with_beta: bool, example: Sequence[str]
) -> str:
    """The docstring of ``name``, a column of ``multilabel_report`` offered as a table function
    of its own (:func:`mlsql._front.tables.standalone`): ``summary``, its parameters in
    ``engine``'s words (``beta`` where ``with_beta``), what it returns and the ``example``
    lines (doctest text, with the output)."""
    keys = ["source_lists", "columns", "labels", *(["standalone_beta"] if with_beta else [])]
    lines = [summary, "", "Parameters", "----------"]
    for key in [*keys, "zero_division", "by", "sample_weight"]:
        lines += TABLE_PARAMS[key].format(**engine.words).splitlines()
    returns = (
        f"One row per group: the ``by`` columns, then ``{name}``, the column of "
        f":func:`multilabel_report`. {engine.words['lazy']}"
    )
    body = textwrap.fill(returns.strip(), 88, initial_indent="    ", subsequent_indent="    ")
    lines += ["", "Returns", "-------", engine.words["frame"], body]
    return "\n".join([*lines, "", "Examples", "--------", *example])


def shared_entries(marker: str, text: str) -> Callable[[F], F]:
    """Write ``text``, ``Parameters`` entries a function shares with another engine's, into
    the decorated function's docstring where its line ``<marker>`` stands (indented as
    that line).

    Examples
    --------
    >>> def f(seed):
    ...     "Parameters\\n    ----------\\n    <draws>\\n"
    >>> f = shared_entries("draws", "seed : int\\n    The seed.")(f)
    >>> f.__doc__.splitlines()[-2:]
    ['    seed : int', '        The seed.']
    """

    def write(fn: F) -> F:
        doc = fn.__doc__ or ""
        line = next(x for x in doc.splitlines() if x.strip() == f"<{marker}>")
        indent = line[: len(line) - len(line.lstrip())]
        entries = "\n".join(indent + x if x else x for x in text.splitlines())
        fn.__doc__ = doc.replace(line, entries, 1)
        return fn

    return write
