"""The ``slices`` function of a DataFrame engine: one signature, one docstring, one check.

Polars' ``mp.slices`` and Spark's ``ms.slices`` take the same arguments, with the
same defaults, as DuckDB's ``mlsql.slices`` (less its ``con``). :func:`slices_function`
writes that signature once, checks the call with :func:`mlsql._slices.front.request`
and hands the engine the frame, the checked :class:`~mlsql._slices.front.Request` and
the arguments; the engine supplies only how it reads a frame's column names and
computes the table, and its docstring's words (:class:`Words`).
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mlsql._slices import front


@dataclass(frozen=True)
class Words:
    """What one engine's ``slices`` docstring says of it.

    ``frame`` names the first parameter, of type ``frame_type``; ``weight_type`` is
    the type of ``sample_weight``, ``result_type`` that of the result; ``prefix`` the
    engine's module as its examples import it (``mp``); ``how`` ends the summary's
    second sentence, ``measure_note`` follows the measures, ``notes`` are the Notes
    section and ``example`` the doctest.
    """

    frame: str
    frame_type: str
    weight_type: str
    result_type: str
    prefix: str
    how: str
    measure_note: str
    notes: str
    example: str


_DOC = """\
Where is the model worst? A measure on every slice of the data, from the worst.

{summary}

Parameters
----------
{frame} : {frame_type}
    The predictions.
actual, predicted : str
    The columns of true and predicted label lists, or of one label per row.
candidates : str or sequence of str
    The columns that define slices (numeric ones binned into quantiles).
measure : str or (str, dict)
{measure}
depth, n_bins, min_rows, min_weight, n_resamples, confidence, seed, adjust
    As ``mlsql.slices`` takes them.
sample_weight : {weight_type}, optional
    Row weights, as the weighted measures take them.

Returns
-------
{result_type}
    slice, rows, estimate, low, high, difference, diff_low, diff_high,
    p_value, p_adjusted, significant; from the worst slice.

Notes
-----
{notes}

Examples
--------
{example}
"""

_MEASURE = (
    "One aggregate measure that ``{prefix}.bootstrap`` resamples: of label lists "
    "(micro_*, samples_*, macro_* and weighted_* averages, label accuracies, clp, mlp, "
    "wlp, subset_accuracy, zero_one_loss, hamming_loss, fmeasure), of one label per row "
    "(accuracy, error_rate, the class-wise precision, recall and F scores, balanced "
    "accuracy, Cohen's kappa, MCC), of numbers (mse, mae, r2 and the other regression "
    "measures) or of a 0/1 label and a score (auc, average_precision_score, logloss, "
    "brier_score_loss, expected_calibration_error)."
)


def docstring(words: Words) -> str:
    """The numpydoc docstring of an engine's ``slices``.

    Examples
    --------
    >>> w = Words("df", "DataFrame", "str", "DataFrame", "ms", "", "", "None.", ">>> 1\\n1")
    >>> docstring(w).splitlines()[2]
    "The result and the method are those of DuckDB's ``mlsql.slices``; the"
    """
    summary = (
        "The result and the method are those of DuckDB's ``mlsql.slices``; the same seed "
        f"gives the same table{words.how}."
    )
    measure = " ".join(filter(None, [_MEASURE.format(prefix=words.prefix), words.measure_note]))
    return _DOC.format(
        summary="\n".join(textwrap.wrap(summary, 72)),
        frame=words.frame,
        frame_type=words.frame_type,
        measure=textwrap.indent("\n".join(textwrap.wrap(measure, 69)), "    "),
        weight_type=words.weight_type,
        result_type=words.result_type,
        notes=inspect.cleandoc(words.notes),
        example=inspect.cleandoc(words.example),
    )


def signature(frame: str, types: tuple[str, str, str]) -> inspect.Signature:
    """``slices``' signature: its first parameter ``frame``, ``types`` the annotations of
    the frame, of ``sample_weight`` (but None) and of the result; the same parameters and
    defaults as DuckDB's ``mlsql.slices``, less ``con``.

    Examples
    --------
    >>> signature("df", ("DataFrame", "str", "DataFrame")).parameters["min_rows"]
    <Parameter "min_rows: 'int' = 30">
    """
    frame_type, weight_type, result_type = types
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    keyword = inspect.Parameter.KEYWORD_ONLY
    first = [
        (frame, frame_type),
        ("actual", "str"),
        ("predicted", "str"),
        ("candidates", "str | Sequence[str]"),
        ("measure", "Any"),
    ]
    rest = [
        ("depth", "int", 1),
        ("n_bins", "int", 4),
        ("min_rows", "int", front.MIN_ROWS),
        ("min_weight", "float | None", None),
        ("sample_weight", f"{weight_type} | None", None),
        ("n_resamples", "int", 1000),
        ("confidence", "float", 0.95),
        ("seed", "int", 0),
        ("adjust", "str", "bh"),
    ]
    params = [inspect.Parameter(n, positional, annotation=a) for n, a in first]
    params += [inspect.Parameter(n, keyword, default=d, annotation=a) for n, a, d in rest]
    return inspect.Signature(params, return_annotation=result_type)


def slices_function(
    module: str,
    words: Words,
    types: tuple[str, str, str],
    names: Callable[[Any], list[str]],
    weight_name: Callable[[Any], str | None],
    compute: Callable[[Any, front.Request, Mapping[str, Any]], Any],
) -> Callable[..., Any]:
    """The engine's ``slices``: :func:`signature` of ``types``, :func:`docstring` of
    ``words``, the call checked by
    :func:`mlsql._slices.front.request` over the frame's column ``names`` (``weight_name``:
    the weight's column, None for an expression the engine resolves), then
    ``compute(frame, request, arguments)``."""
    sig = signature(words.frame, types)

    def slices(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        a = bound.arguments
        frame = a[words.frame]
        req = front.request(
            names(frame),
            a["actual"],
            a["predicted"],
            a["candidates"],
            a["measure"],
            depth=a["depth"],
            n_bins=a["n_bins"],
            min_rows=a["min_rows"],
            sample_weight=weight_name(a["sample_weight"]),
            n_resamples=a["n_resamples"],
            confidence=a["confidence"],
            seed=a["seed"],
            adjust=a["adjust"],
            min_weight=a["min_weight"],
        )
        return compute(frame, req, a)

    slices.__qualname__ = "slices"
    slices.__module__ = module
    slices.__doc__ = docstring(words)
    slices.__signature__ = sig  # type: ignore[attr-defined]
    return slices
