"""Which values are labels: one rule and its messages, read by every engine's guard.

A label is a name or an id: **text** or an **integer** of any width, signed
or unsigned. Floats and decimals are not labels (``0.1 + 0.2`` is not
``0.3``: equality of measured numbers is no way to name a class), nor are
booleans (a yes/no flag is one binary label, not a set of them), nor lists,
structs, maps or any other type. Both sides must hold the same kind (integer
widths may differ), and a ``labels=`` universe must be of the columns' kind.

Each engine maps its own types to a kind (:data:`TEXT`, :data:`INTEGER`,
:data:`NULL`, or anything else for a type that is no label) and raises with
the messages here: Polars in ``mlsql.polars._dtypes``, Spark in
``mlsql.spark._types``, DuckDB in the macros' ``error()`` calls
(``mlsql._duckdb``) and in ``mlsql._duckdb.label_tables``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlsql._errors import MlsqlError

TEXT, INTEGER, NULL = "text", "integer", "null"
#: the third kind of a single-label class (a list of labels holds text or integers only)
BOOLEAN = "boolean"
#: the kinds of label
LABEL_KINDS = (TEXT, INTEGER)
#: what every engine strips from both ends of each part of a label text split on ``sep``: ASCII
#: whitespace, Python's ``string.whitespace`` (DuckDB's and Spark's ``trim`` alone strip spaces
#: only, Polars' ``strip_chars`` all of Unicode's whitespace)
SPLIT_STRIPPED = " \t\n\r\x0b\x0c"

NOT_A_LABEL_MESSAGE = (
    "{func} takes labels that are text or integers (any width, signed or unsigned); "
    "floats, decimals, booleans, lists and structs are not labels. Got {name} {type}."
)
#: an input that is no list where a list of labels belongs (one label, a number, a struct, ...)
NOT_A_LIST_MESSAGE = "{func} takes a list of labels per row for {name}. Got {name} {type}."
MISMATCH_MESSAGE = (
    "{func} needs {left} and {right} of the same label type (both text, both integers, ...). "
    "Got {left} {left_type} and {right} {right_type}."
)
UNIVERSE_MESSAGE = (
    "The 'labels' parameter of {func} must hold labels of the columns' type ({type}): "
    "{kind}. Got {labels} instead."
)
UNIVERSE_RANGE_MESSAGE = (
    "The 'labels' parameter of {func} holds {value}, which the columns' label type ({type}) "
    "cannot hold: it holds integers from {low} to {high}."
)
#: parameters that hold one label of the measure's first input (class_error_rate's ``label``,
#: prevalence's ``positive``)
LABEL_VALUE_PARAMS = ("label", "positive", "costs")
LABEL_VALUE_MESSAGE = (
    "The '{param}' parameter of {func} must be a label of the column's type ({type}): "
    "{kind}. Got {value} instead."
)
COST_KEY_MESSAGE = (
    "The '{param}' parameter of {func} must map labels of the column's type ({type}): "
    "{kind} (actual -> {{predicted: cost}}). Got {value} instead."
)
LABEL_RANGE_MESSAGE = (
    "The '{param}' parameter of {func} is {value}, which the column's label type ({type}) "
    "cannot hold: it holds integers from {low} to {high}."
)
UNIVERSE_NOT_A_LIST_MESSAGE = (
    "The 'labels' parameter of {func} must be a list of labels. Got {labels!r} instead."
)
UNIVERSE_EMPTY_MESSAGE = "The 'labels' parameter of {func} must hold at least one label."
UNIVERSE_MIXED_MESSAGE = (
    "The 'labels' parameter of {func} must hold labels of one kind (all text or all "
    "integers). Got {labels!r} instead."
)


def python_kind(value: Any) -> str | None:
    """The label kind of a Python value (``str``: text, ``int``: integer), else None.

    Examples
    --------
    >>> python_kind("cat"), python_kind(7), python_kind(True), python_kind(1.0)
    ('text', 'integer', None, None)
    """
    if isinstance(value, str):
        return TEXT
    if isinstance(value, int) and not isinstance(value, bool):
        return INTEGER
    return None


def class_kind(value: Any) -> str | None:
    """The kind of a Python value as a class of one label column: :func:`python_kind`, and
    booleans (the single-label measures' classes may be).

    Examples
    --------
    >>> class_kind(True), class_kind("cat"), class_kind(1.0)
    ('boolean', 'text', None)
    """
    return BOOLEAN if isinstance(value, bool) else python_kind(value)


def check_label(func: str, name: str, kind: str, type_name: str) -> None:
    """Raise :class:`MlsqlError` unless ``kind`` is a label kind (or NULL, which fits any).

    Examples
    --------
    >>> check_label("micro_f1", "actual", "float", "List(Float64)")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: micro_f1 takes labels that are text or integers (any width, signed or unsigned); floats, decimals, booleans, lists and structs are not labels. Got actual List(Float64).
    """
    if kind not in (*LABEL_KINDS, NULL):
        raise MlsqlError(NOT_A_LABEL_MESSAGE.format(func=func, name=name, type=type_name))


def check_labels(
    func: str, names: Sequence[str], kinds: Sequence[str], type_names: Sequence[str]
) -> None:
    """Raise :class:`MlsqlError` unless every input holds labels, all of one kind.

    ``kinds`` are the inputs' element kinds, ``type_names`` their own types (shown).
    """
    for name, kind, type_name in zip(names, kinds, type_names, strict=True):
        check_label(func, name, kind, type_name)
    for i in range(len(kinds)):
        for j in range(i + 1, len(kinds)):
            if NULL not in (kinds[i], kinds[j]) and kinds[i] != kinds[j]:
                raise MlsqlError(
                    MISMATCH_MESSAGE.format(
                        func=func,
                        left=names[i],
                        right=names[j],
                        left_type=type_names[i],
                        right_type=type_names[j],
                    )
                )


def check_universe(labels: Any, func: str) -> list[Any] | None:
    """Validate a ``labels=`` universe: a list of labels of one kind; return it without
    NULLs and duplicates (None for None).

    Examples
    --------
    >>> check_universe(["a", "b", "a", None], "label_metrics")
    ['a', 'b']
    >>> check_universe([1, "b"], "label_metrics")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'labels' parameter of label_metrics must hold labels of one kind (all text or all integers). Got [1, 'b'] instead.
    """
    if labels is None:
        return None
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence):
        raise MlsqlError(UNIVERSE_NOT_A_LIST_MESSAGE.format(func=func, labels=labels))
    values = list(dict.fromkeys(x for x in labels if x is not None))
    if not values:
        raise MlsqlError(UNIVERSE_EMPTY_MESSAGE.format(func=func))
    kinds = {python_kind(x) for x in values}
    if len(kinds) > 1 or None in kinds:
        raise MlsqlError(UNIVERSE_MIXED_MESSAGE.format(func=func, labels=labels))
    return values


def check_universe_kind(universe: list[Any] | None, kind: str, type_name: str, func: str) -> None:
    """Raise :class:`MlsqlError` unless a checked universe holds labels of the columns' ``kind``.

    Examples
    --------
    >>> check_universe_kind([1, 2], "text", "List(String)", "label_metrics")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'labels' parameter of label_metrics must hold labels of the columns' type (List(String)): text. Got [1, 2] instead.
    """
    if universe is None or kind == NULL or python_kind(universe[0]) == kind:
        return
    raise MlsqlError(
        UNIVERSE_MESSAGE.format(func=func, type=type_name, kind=kind, labels=repr(universe))
    )


def label_values(param: str, value: Any) -> list[Any]:
    """The labels a :data:`LABEL_VALUE_PARAMS` parameter holds: ``costs``' actual and
    predicted labels (a mapping, or costs with ``entries`` (actual, predicted, cost); a table
    or a column of costs: none here), else ``[value]``.

    Examples
    --------
    >>> label_values("costs", {"a": {"b": 2.0}, ("c", "a"): 1.0}), label_values("label", 3)
    (['a', 'b', 'c'], [3])
    """
    if param != "costs":
        return [value]
    from mlsql._front.inputs import mapping_costs

    entries = getattr(value, "entries", None)  # costs an engine has validated already
    if entries is None:
        entries = mapping_costs(value) or []
    return list(dict.fromkeys(x for a, p, _ in entries for x in (a, p)))


def value_message(param: str) -> str:
    """The message of a label of the other kind in parameter ``param`` (:func:`label_values`)."""
    return COST_KEY_MESSAGE if param == "costs" else LABEL_VALUE_MESSAGE


def check_universe_labels(
    universe: Sequence[Any], kind: str, type_name: str, bounds: tuple[int, int] | None, func: str
) -> None:
    """Raise :class:`MlsqlError` unless every label of ``universe`` (a list as given, such as
    ``indicators_from_labels``' labels; NULLs fit) is of the column's ``kind`` and within
    its integer type's ``bounds`` (:func:`check_universe_kind`, :func:`check_universe_range`).

    Examples
    --------
    >>> check_universe_labels(["z"], "integer", "List(Int64)", None, "indicators_from_labels")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'labels' parameter of indicators_from_labels must hold labels of the columns' type (List(Int64)): integer. Got ['z'] instead.
    """
    values = list(universe)
    if kind != NULL and any(v is not None and class_kind(v) != kind for v in values):
        raise MlsqlError(
            UNIVERSE_MESSAGE.format(func=func, type=type_name, kind=kind, labels=repr(values))
        )
    check_universe_range(values, bounds, type_name, func)


def integer_bounds(bits: int, signed: bool) -> tuple[int, int]:
    """The smallest and largest value of an integer type of ``bits`` bits.

    Examples
    --------
    >>> integer_bounds(8, True), integer_bounds(16, False)
    ((-128, 127), (0, 65535))
    """
    if signed:
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return 0, 2**bits - 1


def check_universe_range(
    universe: list[Any] | None, bounds: tuple[int, int] | None, type_name: str, func: str
) -> None:
    """Raise :class:`MlsqlError` unless every integer of a checked universe fits ``bounds``
    (:func:`integer_bounds` of the label type both columns become; None: any value fits).

    Examples
    --------
    >>> check_universe_range([1, 1000], (-128, 127), "List(Int8)", "label_metrics")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'labels' parameter of label_metrics holds 1000, which the columns' label type (List(Int8)) cannot hold: it holds integers from -128 to 127.
    """
    if universe is None or bounds is None:
        return
    low, high = bounds
    for value in universe:
        if python_kind(value) == INTEGER and not low <= value <= high:
            raise MlsqlError(
                UNIVERSE_RANGE_MESSAGE.format(
                    func=func, value=value, type=type_name, low=low, high=high
                )
            )


def check_label_value(
    value: Any,
    kind: str,
    type_name: str,
    param: str,
    func: str,
    bounds: tuple[int, int] | None = None,
) -> None:
    """Raise :class:`MlsqlError` unless ``value`` (parameter ``param``, one label such as
    ``class_error_rate``'s ``label``) is a label of the column's ``kind`` (NULL fits any)
    and, for integers, within the column type's ``bounds`` (:func:`integer_bounds`; None:
    any value fits).

    Examples
    --------
    >>> check_label_value("z", "integer", "Int8", "label", "class_error_rate")
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'label' parameter of class_error_rate must be a label of the column's type (Int8): integer. Got 'z' instead.
    >>> check_label_value(1000, "integer", "Int8", "label", "class_error_rate", (-128, 127))
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'label' parameter of class_error_rate is 1000, which the column's label type (Int8) cannot hold: it holds integers from -128 to 127.
    """
    if kind == NULL or value is None:
        return
    if class_kind(value) != kind:
        raise MlsqlError(
            value_message(param).format(
                param=param, func=func, type=type_name, kind=kind, value=repr(value)
            )
        )
    if bounds is not None and kind == INTEGER and not bounds[0] <= value <= bounds[1]:
        raise MlsqlError(
            LABEL_RANGE_MESSAGE.format(
                param=param, func=func, value=value, type=type_name, low=bounds[0], high=bounds[1]
            )
        )
