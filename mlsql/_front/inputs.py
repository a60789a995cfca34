"""What the engines' single-label functions share in reading user input: labels and costs."""

from __future__ import annotations

import math
from typing import Any

from mlsql._errors import MlsqlError

#: the single-label parameters without a default, and what they are; the costs' forms are
#: each engine's (Polars a DataFrame too, Spark a map Column, DuckDB a MAP)
REQUIRED = {
    "positive": "the class whose share is wanted",
    "label": "the class whose error rate is wanted",
    "costs": "a mapping actual -> {predicted: cost}",
}


#: a parameter of :data:`REQUIRED` not given (or None, NULL)
REQUIRED_MESSAGE = "{func} needs the '{name}' parameter ({what})."


def check_required(func: str, given: dict[str, Any], costs: str = "") -> None:
    """Raise :class:`MlsqlError` if a parameter of :data:`REQUIRED` in ``given`` is None
    (``costs``: the engine's other forms of costs, after the mapping).

    Examples
    --------
    >>> check_required("prevalence", {"positive": None})
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: prevalence needs the 'positive' parameter (the class whose share is wanted).
    """
    for name, value in given.items():
        if name in REQUIRED and value is None:
            what = REQUIRED[name] + (costs if name == "costs" else "")
            raise MlsqlError(REQUIRED_MESSAGE.format(func=func, name=name, what=what))


#: a list (or array, map, struct) where one label per row belongs
LABEL_MESSAGE = "{func} takes one label per row for {name}. Got {name} {type}."
#: a cost that is no finite number where the costs are SQL values: a cost table's (DuckDB's and
#: Spark's cost_map) or a map of costs (cost_error's in DuckDB SQL, Spark's map Column); the
#: engines' ``costs`` parameter given in Python has its own message, which says so
COST_VALUE_MESSAGE = "{func} takes finite numbers as costs. Got a NULL, NaN or infinite cost."
#: costs that give one (actual, predicted) pair twice
TWICE_MESSAGE = (
    "The 'costs' of cost_error give one cost per (actual, predicted) pair. Got the pair"
    " {pair!r} twice."
)
#: the same, where a cost table becomes a map in the query (DuckDB's and Spark's cost_map)
TWICE_IN_TABLE_MESSAGE = TWICE_MESSAGE.split(" Got")[0] + " Got a pair twice."


def mapping_costs(costs: Any) -> list[tuple[Any, Any, float]] | None:
    """The (actual, predicted, cost) entries of ``costs``, a mapping actual ->
    {predicted: cost} or (actual, predicted) -> cost; None if it is neither.

    Examples
    --------
    >>> mapping_costs({"a": {"b": 5}, ("b", "a"): 2.5})
    [('a', 'b', 5.0), ('b', 'a', 2.5)]
    >>> mapping_costs({"a": 5}) is None
    True
    """
    if not isinstance(costs, dict):
        return None
    entries: list[tuple[Any, Any, Any]] = []
    for key, value in costs.items():
        if isinstance(value, dict):
            entries += [(key, p, c) for p, c in value.items()]
        elif isinstance(key, tuple) and len(key) == 2:
            entries.append((*key, value))
        else:
            return None
    return finite_costs(entries)


def finite_costs(entries: list[tuple[Any, Any, Any]]) -> list[tuple[Any, Any, float]] | None:
    """``entries`` with float costs; None if a cost is no finite number (booleans are not,
    nor NULL). A pair given twice is an error (the same in every engine: one of its costs
    would be lost, or both added).

    Examples
    --------
    >>> finite_costs([("a", "b", 5), ("b", "a", float("nan"))]) is None
    True
    >>> finite_costs([("a", "b", 5), ("a", "b", 7)])
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: The 'costs' of cost_error give one cost per (actual, predicted) pair. Got the pair ('a', 'b') twice.
    """
    for _, _, c in entries:
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c):
            return None
    seen: set[tuple[Any, Any]] = set()
    for a, p, _ in entries:
        if (a, p) in seen:
            raise MlsqlError(TWICE_MESSAGE.format(pair=(a, p)))
        seen.add((a, p))
    return [(a, p, float(c)) for a, p, c in entries]
