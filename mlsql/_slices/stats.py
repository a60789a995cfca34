"""The statistics of ``slices``, engine-neutral (numpy): from statistic tuples to the table.

Each slice comes as its distinct statistic tuples (the measure's statistics,
the tuple's ``sample_weight``) with their numbers of rows m, and so does all
the data; the rest of the data is all of it minus the slice, tuple by tuple.
The statistics are those :func:`mlsql.bootstrap` resamples, of every kind
(:data:`mlsql._resample.measures.STATS`): (tp, |A|, |P|) of label lists,
their sorted label sets for the macro and weighted averages, the (actual,
predicted) cell of one label per row, and the numbers of the regression and
score measures. A slice and its rest share no row, so the Poisson bootstrap
draws them independently: one Poisson(m) weight per tuple of each (exact, as
:mod:`mlsql._resample.run` explains), from the slice's own stream
(:func:`mlsql._resample.run.stream` of its ``slice`` text), in one matrix
over both sides' tuples (:func:`two_sides`: a paired table, as ``compare``
reads it, where each side's tuples are no rows of the other). The
measure is evaluated on both sides by :func:`mlsql._resample.run.resampled`,
which gives the slice's interval,
the interval of the difference slice - rest, and its two-sided bootstrap
p-value (:func:`mlsql._resample.run.bootstrap_p_value`).

The p-values are then adjusted for the number of slices tested
(:func:`adjusted`: Benjamini-Hochberg or Holm), a slice is ``significant``
where its adjusted p-value is at most 1 - confidence, and the rows are
sorted from the worst estimate (the lowest, or the highest for a measure
that is better lower).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlsql._resample import run
from mlsql._resample.measures import Chosen, stats_kind

#: the statistics kinds of numbers, whose values are checked (finite, 0/1 labels, probabilities)
NUMBER_KINDS = ("regression", "scores")
#: a statistic tuple: the measure's statistics, then the tuple's weight (None: unknown)
Tuple = tuple[Any, ...]


@dataclass(frozen=True)
class Slice:
    """One slice's statistics: its text, rows and statistic tuples (tuple -> rows m)."""

    text: str
    rows: int
    tuples: Mapping[Tuple, int]


def rest_of(whole: Mapping[Tuple, int], part: Mapping[Tuple, int]) -> dict[Tuple, int]:
    """The tuples of ``whole`` minus those of ``part`` (the rest of the data), m > 0 only.

    Examples
    --------
    >>> rest_of({(1, 2, 2, 1.0): 5, (0, 1, 1, 1.0): 2}, {(1, 2, 2, 1.0): 3})
    {(1, 2, 2, 1.0): 2, (0, 1, 1, 1.0): 2}
    """
    out = {t: m - part.get(t, 0) for t, m in whole.items()}
    return {t: m for t, m in out.items() if m > 0}


def _values(value: Any, kind: str) -> Any:
    """A statistic as the resample reads it: a label list (kept as a tuple, to be hashed) as a
    list."""
    return list(value) if kind == "label_lists" and isinstance(value, tuple) else value


def two_sides(
    kind: str, part: Mapping[Tuple, int], rest: Mapping[Tuple, int]
) -> list[tuple[Any, ...]]:
    """The tuples of a slice and of its rest as one paired statistics table (as ``compare``
    reads it): (statistics, weight, statistics, weight, m), the slice's side first.

    A tuple of one side has a NULL weight on the other side, where it is then no row at
    all: both sides share one set of tuples, so one matrix of Poisson draws serves both,
    and they share no row, so their draws are independent.

    Examples
    --------
    >>> two_sides("label_sets", {(1, 2, 2, 1.0): 3}, {(1, 2, 2, 1.0): 2})
    [(1, 2, 2, 1.0, 1, 2, 2, None, 3), (1, 2, 2, None, 1, 2, 2, 1.0, 2)]
    """
    out = []
    for tuples, inside in ((part, True), (rest, False)):
        for t, m in tuples.items():
            stats = tuple(_values(v, kind) for v in t[:-1])
            mine, other = (t[-1], None) if inside else (None, t[-1])
            out.append((*stats, mine, *stats, other, m))
    return out


def sides(
    chosen: Chosen, part: Mapping[Tuple, int], rest: Mapping[Tuple, int]
) -> tuple[list[tuple[dict[str, Any], np.ndarray]], np.ndarray]:
    """(per side (statistic columns, tuple weights), rows m per tuple): the slice's side, then
    the rest's, read by :mod:`mlsql._resample`'s own functions for each statistics kind.

    The label lists of the macro and weighted averages go through
    :func:`mlsql._resample.labels.tuples`, the other kinds through
    :func:`mlsql._resample.run.grouped` and :func:`~mlsql._resample.run.prepared`
    (numbers as arrays, their values checked with the measures' messages).
    """
    from mlsql._resample import labels as LL
    from mlsql._resample import numbers as NUM
    from mlsql._resample.measures import STATS

    kind = stats_kind([chosen])
    rows = two_sides(kind, part, rest)
    if kind == "label_lists":
        [(_, both, m)] = LL.tuples(rows, 0, 2, run._order)
        return both, m
    width = len(STATS[kind]) + 1  # one side's statistics and weight
    [members] = run.grouped(rows, 0, kind in NUM.KINDS).values()
    both = [run.prepared([chosen], members, s * width, "slices") for s in (0, 1)]
    return both, run.counts(members)


def _estimate(chosen: Chosen, cols: dict[str, Any], w: np.ndarray, m: np.ndarray) -> float | None:
    (value,), (null,) = run.evaluate(chosen, cols, (m * w)[None, :], m[None, :])
    return None if null or not np.isfinite(value) else float(value)


def slice_row(
    chosen: Chosen,
    part: Slice,
    rest: Mapping[Tuple, int],
    n_resamples: int,
    confidence: float,
    seed: int,
) -> tuple[Any, ...]:
    """(slice, rows, estimate, low, high, difference, diff_low, diff_high, p_value).

    ``rest``: the tuples of the rest of the data (:func:`rest_of`).

    Examples
    --------
    >>> from mlsql._resample.measures import resolve
    >>> [f1] = resolve(["micro_f1"], "slices")
    >>> row = slice_row(f1, Slice("x = 1", 4, {(1, 2, 1, 1.0): 4}), {(1, 1, 1, 1.0): 6},
    ...                 200, 0.9, 0)
    >>> row[:3], row[5]  # 2 tp / (|A| + |P|) = 8 / 12, and 8 / 12 - 12 / 12
    (('x = 1', 4, 0.6666666666666666), -0.33333333333333337)
    """
    [(c_part, w_part), (c_rest, w_rest)], m = sides(chosen, part.tuples, rest)
    rng = run.stream(seed, (part.text,))
    [(v_part, v_rest)] = run.resampled(
        [chosen], [c_part, c_rest], [w_part, w_rest], rng, m, n_resamples
    )
    estimate = _estimate(chosen, c_part, w_part, m)
    rest_estimate = _estimate(chosen, c_rest, w_rest, m)
    low, high, _ = run.interval(v_part, confidence)
    diffs = v_part - v_rest  # NaN where either side is undefined
    d_low, d_high, _ = run.interval(diffs, confidence)
    difference = None if estimate is None or rest_estimate is None else estimate - rest_estimate
    p_value = run.bootstrap_p_value(diffs) if difference is not None else None
    return (part.text, part.rows, estimate, low, high, difference, d_low, d_high, p_value)


#: the multiple-testing adjustments ``adjust`` takes
ADJUSTMENTS = ("bh", "holm")


def adjusted(p_values: Sequence[float | None], method: str) -> list[float | None]:
    """The p-values adjusted for their number (None, an untested slice, is not counted).

    ``bh`` (Benjamini-Hochberg, controls the false discovery rate): with the n
    p-values sorted p(1) <= ... <= p(n), p~(i) = min over j >= i of n p(j) / j.
    ``holm`` (Holm's step-down, controls the family-wise error rate):
    p~(i) = max over j <= i of (n - j + 1) p(j). Both are capped at 1.

    Examples
    --------
    >>> adjusted([0.01, 0.04, 0.03, None], "bh")
    [0.03, 0.04, 0.04, None]
    >>> adjusted([0.01, 0.04, 0.03], "holm")
    [0.03, 0.06, 0.06]
    """
    known = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    n = len(known)
    if n == 0:
        return out
    p = np.array([p_values[i] for i in known], dtype=float)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    rank = np.arange(1, n + 1, dtype=float)
    if method == "bh":
        steps = np.minimum.accumulate((ranked * n / rank)[::-1])[::-1]
    else:
        steps = np.maximum.accumulate(ranked * (n - rank + 1))
    steps = np.minimum(steps, 1.0)
    for position, value in zip(order, steps, strict=True):
        out[known[position]] = float(value)
    return out


def table(
    chosen: Chosen,
    parts: Sequence[Slice],
    whole: Mapping[Tuple, int],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
    adjust: str,
    lower_is_better: bool,
) -> list[tuple[Any, ...]]:
    """The rows of ``slices``, from the worst: (slice, rows, estimate, low, high, difference,
    diff_low, diff_high, p_value, p_adjusted, significant).

    ``whole``: the tuples of all the data. Slices whose estimate is undefined
    come last; ties keep the order of their text.

    Examples
    --------
    >>> from mlsql._resample.measures import resolve
    >>> [f1] = resolve(["micro_f1"], "slices")
    >>> whole = {(1, 1, 1, 1.0): 40, (0, 1, 1, 1.0): 40}
    >>> parts = [Slice("x = 'a'", 40, {(0, 1, 1, 1.0): 30, (1, 1, 1, 1.0): 10}),
    ...          Slice("x = 'b'", 40, {(0, 1, 1, 1.0): 10, (1, 1, 1, 1.0): 30})]
    >>> rows = table(f1, parts, whole, n_resamples=500, confidence=0.95, seed=0,
    ...              adjust="bh", lower_is_better=False)
    >>> [(r[0], r[2], r[5], r[10]) for r in rows]
    [("x = 'a'", 0.25, -0.5, True), ("x = 'b'", 0.75, 0.5, True)]
    """
    if whole and stats_kind([chosen]) in NUMBER_KINDS:
        sides(chosen, whole, {})  # the values are checked even where no slice is kept
    rows = [
        slice_row(chosen, part, rest_of(whole, part.tuples), n_resamples, confidence, seed)
        for part in parts
    ]
    p_adjusted = adjusted([r[8] for r in rows], adjust)
    alpha = 1 - confidence
    out = [(*r, q, q is not None and q <= alpha) for r, q in zip(rows, p_adjusted, strict=True)]
    sign = -1.0 if lower_is_better else 1.0
    out.sort(key=lambda r: (r[2] is None, 0.0 if r[2] is None else sign * r[2], r[0]))
    return out
