"""The statistics of ``slices``, engine-neutral (numpy): from statistic tuples to the table.

Each slice comes as its distinct statistic tuples (the measure's statistics,
the tuple's ``sample_weight``) with their numbers of rows m, and so does all
the data; the rest of the data is all of it minus the slice, tuple by tuple.
The statistics are those :func:`mlsql.bootstrap` resamples, of every kind
(:data:`mlsql._resample.measures.STATS`): (tp, |A|, |P|) of label lists,
their sorted label sets for the macro and weighted averages, the (actual,
predicted) cell of one label per row, and the numbers of the regression and
score measures. A slice and its rest share no row, so the Poisson bootstrap
resamples them independently: :func:`resample` draws the slices of one
grouping set (which share no row) and what ``min_rows`` left out of them as
one partition of the data, each slice from its own stream, and a slice's rest
is the set's draws minus its own (exactly that distribution, as it explains);
it evaluates the measure on a set's slices and rests at once
(:func:`mlsql._resample.run.evaluate`). That gives the slice's interval, the
interval of the difference slice - rest, and its two-sided bootstrap p-value
(:func:`mlsql._resample.run.bootstrap_p_value`).

The p-values are then adjusted for the number of slices tested
(:func:`adjusted`: Benjamini-Hochberg or Holm), a slice is ``significant``
where its adjusted p-value is at most 1 - confidence, and the rows are
sorted from the worst estimate (the lowest, or the highest for a measure
that is better lower).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlsql._resample import native as NATIVE
from mlsql._resample import numbers as NUM
from mlsql._resample import run
from mlsql._resample.measures import Chosen, stats_kind

#: a statistic tuple: the measure's statistics, then the tuple's weight (None: unknown)
Tuple = tuple[Any, ...]


@dataclass(frozen=True)
class Slice:
    """One slice's statistics: its text, rows, statistic tuples (tuple -> rows m) and grouping
    set (slices of one set share no row)."""

    text: str
    rows: int
    tuples: Mapping[Tuple, int]
    group: int


#: threads resampling the grouping sets at once (the machine's cores, at most 8)
THREADS = NATIVE.THREADS


def _values(value: Any, kind: str) -> Any:
    """A statistic as the resample reads it: a label list (kept as a tuple, to be hashed) as a
    list."""
    return list(value) if kind == "label_lists" and isinstance(value, tuple) else value


@dataclass(frozen=True)
class Whole:
    """All the data's tuples as the resample reads them, in its canonical order."""

    #: the statistic columns (and ``weight_known``), one entry per tuple
    cols: dict[str, Any]
    #: each tuple's ``sample_weight`` (NULL weighs 0)
    w: np.ndarray
    #: each tuple's rows
    m: np.ndarray
    #: each tuple's position in that order
    index: dict[Tuple, int]


def read_whole(chosen: Chosen, whole: Mapping[Tuple, int]) -> Whole | None:
    """The tuples of all the data read by :mod:`mlsql._resample`'s own functions for their
    statistics kind (numbers as arrays, their values checked with the measures' messages);
    None for no tuple.

    Those functions put the tuples in their canonical order (sorted, NULL first): each
    tuple goes in with its position where they read the rows m, so what comes out in that
    place tells where each tuple went.

    Examples
    --------
    >>> from mlsql._resample.measures import resolve
    >>> [f1] = resolve(["micro_f1"], "slices")
    >>> w = read_whole(f1, {(1, 2, 2, 1.0): 5, (0, 1, 1, 1.0): 2})
    >>> w.m.tolist(), w.index
    ([2.0, 5.0], {(0, 1, 1, 1.0): 0, (1, 2, 2, 1.0): 1})
    """
    kind = stats_kind([chosen])
    keys = list(whole)
    rows = [(*(_values(v, kind) for v in t[:-1]), t[-1], i) for i, t in enumerate(keys)]
    read = list(run.groups(rows, 0, [chosen], 1, "slices"))
    if not read:
        return None
    [(_, [(cols, w)], position)] = read
    order = position.astype(np.int64)
    m = np.array([whole[keys[i]] for i in order], dtype=float)
    return Whole(cols, w, m, {keys[i]: j for j, i in enumerate(order)})


def _where(part: Slice, data: Whole) -> tuple[np.ndarray, np.ndarray]:
    """(positions among all the data's tuples, rows m) of a slice's tuples, in the data's
    order (not the engine's, so that every engine draws the same numbers)."""
    index = np.array([data.index[t] for t in part.tuples], dtype=np.int64)
    order = np.argsort(index)
    return index[order], np.array(list(part.tuples.values()), dtype=float)[order]


def _evaluated(chosen: Chosen, data: Whole, rows: np.ndarray, w_is_one: bool) -> np.ndarray:
    """The measure under each row of ``rows`` (rows x the data's tuples; leading axes kept),
    NaN where undefined."""
    flat = rows.reshape(-1, rows.shape[-1])
    values, nulls = run.evaluate(chosen, data.cols, flat if w_is_one else flat * data.w, flat)
    return np.where(nulls, np.nan, values).reshape(rows.shape[:-1])


def _draw(rng: np.random.Generator, m: np.ndarray, n: int, per_row: bool) -> np.ndarray:
    """Poisson(m) weights, n resamples x the tuples (as :func:`mlsql._resample.run.batches`)."""
    return NUM.draw(rng, m, n) if per_row else run.draw(rng, m, n)


def resample(
    chosen: Chosen, data: Whole, parts: Sequence[Slice], n_resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(estimates, rest estimates, resampled values, the rest's resampled values) of each slice
    (slices x resamples for the resampled values; NaN where undefined).

    The slices of one grouping set (:attr:`Slice.group`) share no row, and with what
    ``min_rows`` left out of them (the set's remainder) they are all the data. Each
    resample draws each slice's tuples Poisson(m) from the slice's own stream
    (:func:`mlsql._resample.run.stream` of its ``slice`` text) and the remainder's from the
    set's (of its position and ``"rest"``); a slice's rest is then the set's draws minus its
    own. That is the row-level Poisson bootstrap of the whole set at once (the rows'
    Poisson(1) weights summed over disjoint parts are independent Poisson(m)), so each
    slice and its rest are resampled exactly as by independent draws, and the rest costs a
    subtraction. A set's slices are evaluated together, in batches of about
    :data:`mlsql._resample.run.BATCH_CELLS` weights.

    Examples
    --------
    >>> from mlsql._resample.measures import resolve
    >>> [f1] = resolve(["micro_f1"], "slices")
    >>> data = read_whole(f1, {(1, 2, 1, 1.0): 4, (1, 1, 1, 1.0): 6})
    >>> part = Slice("x = 1", 4, {(1, 2, 1, 1.0): 4}, 0)
    >>> est, rest, v, v_rest = resample(f1, data, [part], 200, 0)
    >>> est.tolist(), rest.tolist(), v.shape  # 2 tp / (|A| + |P|) = 8 / 12 and 12 / 12
    ([0.6666666666666666], [1.0], (1, 200))
    """
    kind = stats_kind([chosen])
    per_row = kind in (*NUM.KINDS, "label_lists")  # about one tuple per row
    n_tuples, n_parts = len(data.m), len(parts)
    where = [_where(p, data) for p in parts]
    w_is_one = bool((data.w == 1).all())
    estimates, rests = np.empty(n_parts), np.empty(n_parts)
    values, rest_values = np.empty((n_parts, n_resamples)), np.empty((n_parts, n_resamples))
    by_set: dict[int, list[int]] = {}
    for k, part in enumerate(parts):
        by_set.setdefault(part.group, []).append(k)

    def one_set(group: int, members: list[int]) -> None:
        counts = np.zeros((len(members), n_tuples))
        for j, k in enumerate(members):
            counts[j, where[k][0]] = where[k][1]
        remainder = data.m - counts.sum(axis=0)
        if (remainder < 0).any():
            raise ValueError(f"the slices of grouping set {group} overlap")
        estimates[members] = _evaluated(chosen, data, counts, w_is_one)
        rests[members] = _evaluated(chosen, data, data.m - counts, w_is_one)
        rngs = [run.stream(seed, (parts[k].text,)) for k in members]
        left = np.flatnonzero(remainder)
        left_rng = run.stream(seed, (group, "rest"))
        size = max(1, min(n_resamples, run.BATCH_CELLS // (len(members) * max(1, n_tuples))))
        for first in range(0, n_resamples, size):
            n = min(size, n_resamples - first)
            draws = np.zeros((len(members), n, n_tuples))
            for j, k in enumerate(members):
                draws[j][:, where[k][0]] = _draw(rngs[j], where[k][1], n, per_row)
            drawn = draws.sum(axis=0)
            if len(left):
                drawn[:, left] += _draw(left_rng, remainder[left], n, per_row)
            done = slice(first, first + n)
            values[members, done] = _evaluated(chosen, data, draws, w_is_one)
            rest_values[members, done] = _evaluated(chosen, data, drawn - draws, w_is_one)

    # the sets share nothing (each slice and remainder has its own stream; each set writes
    # its own rows), so they run on threads: numpy and the C kernels release the GIL
    sets = sorted(by_set.items())
    workers = min(len(sets), THREADS)
    if workers <= 1:
        for group, members in sets:
            one_set(group, members)
    else:
        with ThreadPoolExecutor(workers) as pool:
            for _ in pool.map(lambda item: one_set(*item), sets):
                pass
    return estimates, rests, values, rest_values


def slice_row(
    part: Slice,
    estimate: float,
    rest_estimate: float,
    values: np.ndarray,
    rest_values: np.ndarray,
    confidence: float,
) -> tuple[Any, ...]:
    """(slice, rows, estimate, low, high, difference, diff_low, diff_high, p_value) of a slice
    from its and its rest's estimates and resampled values (:func:`resample`).

    Examples
    --------
    >>> row = slice_row(Slice("x = 1", 4, {}, 0), 0.5, 0.75, np.array([0.4, 0.5, 0.6]),
    ...                 np.array([0.7, 0.8, 0.75]), 0.9)
    >>> row[:3], row[5]
    (('x = 1', 4, 0.5), -0.25)
    """
    known = np.isfinite(estimate)
    low, high, _ = run.interval(values, confidence)
    diffs = values - rest_values  # NaN where either side is undefined
    d_low, d_high, _ = run.interval(diffs, confidence)
    defined = known and np.isfinite(rest_estimate)
    difference = float(estimate - rest_estimate) if defined else None
    p_value = run.bootstrap_p_value(diffs) if difference is not None else None
    shown = float(estimate) if known else None
    return (part.text, part.rows, shown, low, high, difference, d_low, d_high, p_value)


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
    >>> parts = [Slice("x = 'a'", 40, {(0, 1, 1, 1.0): 30, (1, 1, 1, 1.0): 10}, 0),
    ...          Slice("x = 'b'", 40, {(0, 1, 1, 1.0): 10, (1, 1, 1, 1.0): 30}, 0)]
    >>> rows = table(f1, parts, whole, n_resamples=500, confidence=0.95, seed=0,
    ...              adjust="bh", lower_is_better=False)
    >>> [(r[0], r[2], r[5], r[10]) for r in rows]
    [("x = 'a'", 0.25, -0.5, True), ("x = 'b'", 0.75, 0.5, True)]
    """
    data = read_whole(chosen, whole)  # the values are checked even where no slice is kept
    rows = []
    if data is not None and parts:
        estimates, rests, values, rest_values = resample(chosen, data, parts, n_resamples, seed)
        rows = [
            slice_row(part, estimates[k], rests[k], values[k], rest_values[k], confidence)
            for k, part in enumerate(parts)
        ]
    p_adjusted = adjusted([r[8] for r in rows], adjust)
    alpha = 1 - confidence
    out = [(*r, q, q is not None and q <= alpha) for r, q in zip(rows, p_adjusted, strict=True)]
    sign = -1.0 if lower_is_better else 1.0
    out.sort(key=lambda r: (r[2] is None, 0.0 if r[2] is None else sign * r[2], r[0]))
    return out
