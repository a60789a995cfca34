"""What the engines' single-label functions share in reading user input: labels and costs."""

from __future__ import annotations

import math
from typing import Any

#: a list (or array, map, struct) where one label per row belongs
LABEL_MESSAGE = "{func} takes one label per row for {name}. Got {name} {type}."


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
    """``entries`` with float costs; None if a cost is no finite number (booleans are not)."""
    for _, _, c in entries:
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c):
            return None
    return [(a, p, float(c)) for a, p, c in entries]
