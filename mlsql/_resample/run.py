"""The resample itself, engine-neutral: from a statistics table to intervals and p-values.

Each engine computes, in one GROUP BY, the distinct statistic tuples of every
group with their row counts m (see :mod:`mlsql._resample.measures`); what
follows happens here, the same for every engine.

The Poisson bootstrap gives each row an independent Poisson(1) weight; the
rows of one tuple are exchangeable, and the sum of m independent Poisson(1)
weights is Poisson(m), so drawing one Poisson(m) weight per tuple and
resample is exactly the row-level Poisson bootstrap, at a cost independent of
the number of rows. Tuples are taken in sorted order (NULL first), so one seed
gives one result in every engine.

Random streams: each group draws from ``numpy.random.Generator(PCG64(
SeedSequence([seed, k0, k1, k2, k3])))`` where k0..k3 are the first 16 bytes
(four little-endian uint32) of the SHA-256 of the group's values as JSON text
(``json.dumps`` of the values, text for those JSON has no type for). Groups
are thus resampled independently, and a group's result does not depend on the
other groups. In ``compare`` the group is the by values and the model. The
regression and score measures and the label lists of the macro and weighted
averages (about one tuple per row) draw from the same stream by
:func:`mlsql._resample.numbers.draw`: Poisson(1) as the inverse CDF of
uniforms where m = 1, ``Generator.poisson`` for the other tuples.

:func:`reporting` tells a callback how many resamples are done (the CLI's
progress bar).
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import numpy as np

from mlsql._errors import MlsqlError
from mlsql._resample import labels as LL
from mlsql._resample import numbers as NUM
from mlsql._resample.measures import STATS, Chosen, row_stats, stats_kind
from mlsql._resample.ops import Lazy, WeightedOps

Key = tuple[Any, ...]


# ------------------------------------------------------------------ parameters
#: the messages of the resampling parameters ({func}; {got}: the value as Python shows it);
#: the SQL table macro ``bootstrap`` raises the same text (:mod:`mlsql._duckdb.families.resample`)
#: the most resamples bootstrap and compare draw: SQL holds every resample's statistics at
#: once (a million ran out of 4 GB), and intervals are stable long before
MAX_RESAMPLES = 100_000
N_RESAMPLES_MESSAGE = (
    "The 'n_resamples' parameter of {func} must be an integer from 2 to "
    f"{MAX_RESAMPLES}. Got {{got}} instead."
)
CONFIDENCE_MESSAGE = (
    "The 'confidence' parameter of {func} must be a number strictly between 0 and 1. "
    "Got {got} instead."
)
SEED_MESSAGE = "The 'seed' parameter of {func} must be an integer >= 0. Got {got} instead."


def check_settings(n_resamples: Any, confidence: Any, seed: Any, func: str) -> None:
    """Validate the resampling parameters (scikit-learn's message shape)."""
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, numbers.Integral)
        or not 2 <= int(n_resamples) <= MAX_RESAMPLES
    ):
        raise MlsqlError(N_RESAMPLES_MESSAGE.format(func=func, got=repr(n_resamples)))
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, numbers.Real)
        or not 0 < float(confidence) < 1
    ):
        raise MlsqlError(CONFIDENCE_MESSAGE.format(func=func, got=repr(confidence)))
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise MlsqlError(SEED_MESSAGE.format(func=func, got=repr(seed)))


# ------------------------------------------------------------------ progress
#: told after each batch of resamples: (resamples drawn, resamples in all) over every group
#: of the call (a resample of g groups counts g times)
Progress = Callable[[int, int], None]
_PROGRESS: ContextVar[Progress | None] = ContextVar("mlsql_resample_progress", default=None)


@contextmanager
def reporting(callback: Progress) -> Iterator[None]:
    """Tell ``callback`` how far the resamples of the calls inside the block are.

    Examples
    --------
    >>> seen = []
    >>> with reporting(lambda done, total: seen.append((done, total))):
    ...     _ = bootstrap([(1.0, 2.0, 2.0, 1.0, 5)], 0, _chosen(["micro_f1"]), 3, 0.9, 0)
    >>> seen[-1]
    (3, 3)
    """
    token = _PROGRESS.set(callback)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def _chosen(names: Sequence[str]) -> list[Chosen]:
    from mlsql._resample.measures import resolve

    return resolve(list(names), "bootstrap")


class _Ticks:
    """Counts the resamples drawn over a call's groups and tells the progress callback."""

    def __init__(self, n_groups: int, n_resamples: int) -> None:
        self.done, self.total = 0, n_groups * n_resamples
        self.callback = _PROGRESS.get()

    def __call__(self, n: int) -> None:
        self.done += n
        if self.callback is not None:
            self.callback(self.done, self.total)


# ------------------------------------------------------------------ tuples and streams
def _canonical(value: Any) -> Any:
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(float(value)):
        return float(value)
    return str(value)


def stream(seed: int, key: Key) -> np.random.Generator:
    """The random stream of the group ``key`` (its values) under ``seed``.

    Examples
    --------
    >>> a = stream(0, ("x",)).poisson(1.0, 5)
    >>> bool((a == stream(0, ("x",)).poisson(1.0, 5)).all())
    True
    """
    text = json.dumps([_canonical(v) for v in key], ensure_ascii=True)
    words = np.frombuffer(hashlib.sha256(text.encode()).digest()[:16], dtype="<u4")
    sequence = np.random.SeedSequence([int(seed), *(int(w) for w in words)])
    return np.random.Generator(np.random.PCG64(sequence))


def _order(value: Any) -> tuple[bool, Any]:
    return (value is not None, value)  # NULL first


class NumberTuples:
    """A group's tuples of numbers as arrays, sorted (NULL first, then by value, column by column).

    ``values`` and ``nulls`` (tuples x columns) hold the row positions from
    ``offset`` on (statistics..., weight(s)..., m), NULL as 0 in ``values``.
    The regression and score measures have about one tuple per row: arrays
    spare a Python object per value.
    """

    def __init__(self, members: Sequence[Sequence[Any]], offset: int) -> None:
        self.offset = offset
        data = np.array([r[offset:] for r in members], dtype=object).reshape(len(members), -1)
        nulls = np.equal(data, np.array(None, dtype=object))
        values = np.where(nulls, 0.0, data).astype(float)
        keys = [k for j in range(values.shape[1] - 1) for k in (~nulls[:, j], values[:, j])]
        order = np.lexsort(keys[::-1])
        self.values, self.nulls = values[order], nulls[order]

    def __len__(self) -> int:
        return len(self.values)

    def column(self, position: int) -> np.ma.MaskedArray:
        """The values at row ``position`` (NULL masked)."""
        j = position - self.offset if position >= 0 else position
        return np.ma.array(self.values[:, j], mask=self.nulls[:, j])


def grouped(rows: Iterable[Sequence[Any]], n_key: int, numbers: bool = False) -> dict[Key, Any]:
    """Statistics rows (key values, statistics..., m) by key, each group's tuples sorted.

    ``numbers``: the statistics are numbers or NULL; each group is then
    :class:`NumberTuples`, in the same order.
    """
    groups: dict[Key, Any] = {}
    if n_key == 0:
        groups[()] = list(rows)
    else:
        for row in rows:
            groups.setdefault(tuple(row[:n_key]), []).append(row)
    groups = {k: v for k, v in groups.items() if len(v)}
    for key, members in groups.items():
        if numbers:
            groups[key] = NumberTuples(members, n_key)
        else:
            members.sort(key=lambda r: tuple(_order(v) for v in r[n_key:-1]))
    return dict(sorted(groups.items(), key=lambda kv: tuple(_order(v) for v in kv[0])))


def counts(members: Any) -> np.ndarray:
    """Each tuple's number of rows m (the last position)."""
    if isinstance(members, NumberTuples):
        return np.ma.getdata(members.column(-1)).copy()
    return np.array([r[-1] for r in members], dtype=float)


def columns(rows: Sequence[Sequence[Any]], names: Sequence[str], start: int) -> dict[str, Any]:
    """The statistic columns ``names`` (from position ``start``) as masked arrays."""
    out: dict[str, Any] = {}
    for i, name in enumerate(names):
        values = [r[start + i] for r in rows]
        if any(isinstance(v, (list, tuple)) for v in values):  # label lists: kept as they are
            out[name] = [None if v is None else list(v) for v in values]
            continue
        mask = np.array([v is None for v in values], dtype=bool)
        filled = [0 if v is None else v for v in values]
        data = np.array(filled) if not any(isinstance(v, str) for v in filled) else None
        if data is None:  # text labels: a common text array ('' stands in for NULL)
            data = np.array(["" if v is None else v for v in values], dtype=object)
        elif data.dtype.kind in "iub":
            data = data.astype(float) if name in STATS["label_sets"] else data
        out[name] = np.ma.array(data, mask=mask)
    return out


def tuple_weights(rows: Sequence[Sequence[Any]], position: int) -> np.ndarray:
    """Each tuple's ``sample_weight`` (the column at ``position``; NULL weighs 0)."""
    return np.array([0.0 if r[position] is None else float(r[position]) for r in rows])


def prepared(
    chosen: Sequence[Chosen], rows: Any, start: int, func: str
) -> tuple[dict[str, Any], np.ndarray]:
    """(statistic columns, tuple weights) of one side of the tuples, values checked.

    The columns also say which tuples have a weight (``weight_known``: a NULL
    weight skips the row, which then counts as no row at all).
    """
    kind = stats_kind(chosen)
    names = STATS[kind]
    position = start + len(names)
    if isinstance(rows, NumberTuples):
        cols: dict[str, Any] = {n: rows.column(start + i) for i, n in enumerate(names)}
        weight = rows.column(position)
        cols["weight_known"] = ~np.ma.getmaskarray(weight)
        w = np.ma.filled(weight, 0.0).astype(float)
    else:
        cols = columns(rows, names, start)
        cols["weight_known"] = np.array([r[position] is not None for r in rows], dtype=bool)
        w = tuple_weights(rows, position)
    if kind in NUM.KINDS:
        probability = any(c.name in NUM.PROBABILITY_MEASURES for c in chosen)
        NUM.check(kind, cols, ("actual", "predicted"), func, probability)
    return cols, w


def draw(rng: np.random.Generator, m: np.ndarray, n_resamples: int) -> np.ndarray:
    """Poisson(m) weights, one row per resample and one column per tuple."""
    return rng.poisson(m, size=(n_resamples, len(m))).astype(float)


#: weights (resamples x tuples) drawn and evaluated at once: memory stays bounded
BATCH_CELLS = 1 << 23
#: resamples summed at once from draws made in the kernels (batches of BATCH_CELLS joined)
LAZY_RESAMPLES = 128
LAZY_BATCHES = 4


def batches(
    rng: np.random.Generator,
    m: np.ndarray,
    n_resamples: int,
    per_row: bool = False,
    lazy: bool = False,
) -> Iterator[np.ndarray | NUM.Drawn]:
    """:func:`draw`'s weights, a batch of resamples at a time (the same numbers, in order).

    ``per_row``: tuples are about one per row (:mod:`mlsql._resample.numbers`),
    drawn by its faster :func:`~mlsql._resample.numbers.draw`. ``lazy`` (with
    ``per_row``): only per-label sums read them, so each batch is a
    :class:`~mlsql._resample.numbers.Drawn` where the kernels can draw them in their tiles
    (a few batches of the stream joined: up to :data:`LAZY_RESAMPLES` resamples and
    :data:`LAZY_BATCHES` batches).
    """
    size = max(1, min(n_resamples, BATCH_CELLS // max(1, len(m))))
    buffer = None
    # lazy: the stream's batches a few at a time as one (up to LAZY_RESAMPLES resamples, at most
    # LAZY_BATCHES batches: the sums' memory stays within a few batches' and no draws matrix is
    # made): the kernel sums a block of resamples per pass over the cells, so fewer short
    # blocks are passed
    group = max(1, min(LAZY_BATCHES, LAZY_RESAMPLES // size))
    pending: list[NUM.Drawn] = []
    for start in range(0, n_resamples, size):
        n = min(size, n_resamples - start)
        found = NUM.drawn(rng, m, n) if per_row and lazy else None
        if found is not None:
            pending.append(found)
            if len(pending) == group:
                yield NUM.Drawn.stacked(pending)
                pending = []
            continue
        if pending:
            yield NUM.Drawn.stacked(pending)
            pending = []
        if per_row and buffer is None:
            buffer = np.empty((size, len(m)))
        # per_row: one buffer for every batch (a fresh view of it each: no batch's weights
        # are read once the next is drawn)
        yield NUM.draw(rng, m, n, buffer[:n]) if buffer is not None else draw(rng, m, n)
    if pending:
        yield NUM.Drawn.stacked(pending)


def resampled(
    chosen: Sequence[Chosen],
    sides: Sequence[dict[str, Any]],
    tuple_weights: Sequence[np.ndarray],
    rng: np.random.Generator,
    m: np.ndarray,
    n_resamples: int,
    tick: Callable[[int], None] | None = None,
) -> list[list[np.ndarray]]:
    """Per measure and side: its resampled values (NaN where undefined), batch by batch.

    Every side gets the same Poisson draws, times its own tuple weights; ``tick`` is told
    the resamples of each batch once done.
    """
    out: list[list[list[np.ndarray]]] = [[[] for _ in sides] for _ in chosen]
    per_row = stats_kind(chosen) in (*NUM.KINDS, "label_lists")  # about one tuple per row
    w_is_one = [bool((w == 1).all()) for w in tuple_weights]
    # the per-label averages of unweighted tuples read the draws only through their sums
    lazy = all(w_is_one) and all(c.stats == "label_lists" for c in chosen)
    for draws in batches(rng, m, n_resamples, per_row, lazy):
        for j, (cols, w) in enumerate(zip(sides, tuple_weights, strict=True)):
            weights = draws if w_is_one[j] else draws * w
            for i, measure in enumerate(chosen):
                values, nulls = evaluate(measure, cols, weights, draws)
                out[i][j].append(np.where(nulls, np.nan, values))
        if tick is not None:
            tick(len(draws))
    return [[np.concatenate(parts) for parts in per_side] for per_side in out]


def evaluate(
    measure: Chosen,
    cols: dict[str, Any],
    weights: np.ndarray | Lazy,
    rows: np.ndarray | Lazy | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(values, nulls): the measure under each row of ``weights`` as floats, and where it is NULL.

    ``rows``: the row counts behind the weights (draws, or m), before ``sample_weight``;
    :class:`~mlsql._resample.ops.Lazy` draws only for the per-label averages.
    """
    with np.errstate(all="ignore"):
        value = measure.evaluate(WeightedOps(weights, rows), cols)
    value = np.ma.asarray(value)
    return np.broadcast_to(np.ma.filled(value.astype(float), np.nan), weights.shape[:-1]), (
        np.broadcast_to(np.ma.getmaskarray(value), weights.shape[:-1])
    )


def _number(value: float, null: bool) -> float | None:
    return None if null else float(value)


def interval(values: np.ndarray, confidence: float) -> tuple[Any, Any, Any]:
    """(low, high, std error) of the defined resampled values (percentile interval)."""
    kept = values[np.isfinite(values)]
    if len(kept) < 2:
        return None, None, None
    tail = (1 - confidence) / 2
    low, high = np.quantile(kept, [tail, 1 - tail])
    return float(low), float(high), float(np.std(kept, ddof=1))


def groups(
    rows: Any, n_key: int, chosen: Sequence[Chosen], n_sides: int, func: str
) -> Iterator[tuple[Key, list[tuple[dict[str, Any], np.ndarray]], np.ndarray]]:
    """Per group of the statistics table: (its values, per side (columns, tuple weights),
    rows m per tuple); ``n_sides`` sides of statistics and weight per tuple (2 in compare).

    Label lists come as arrays (:func:`mlsql._resample.labels.tuples`; ``rows`` may be an
    Arrow table); the other kinds as rows.
    """
    kind = stats_kind(chosen)
    if kind == "label_lists":
        yield from LL.tuples(rows, n_key, n_sides, _order)
        return
    width = len(STATS[kind]) + 1  # the statistics and the weight of one side
    for key, members in grouped(rows, n_key, kind in NUM.KINDS).items():
        sides = [prepared(chosen, members, n_key + s * width, func) for s in range(n_sides)]
        yield key, sides, counts(members)


# ------------------------------------------------------------------ bootstrap
def bootstrap(
    rows: Iterable[Sequence[Any]],
    n_by: int,
    chosen: Sequence[Chosen],
    n_resamples: int,
    confidence: float,
    seed: int,
) -> list[tuple[Any, ...]]:
    """Rows (by values..., measure, estimate, low, high, std_error) from a statistics table.

    ``rows`` are (by values..., statistics..., weight, m): the statistics as
    :data:`STATS` names them, the tuple's ``sample_weight`` (1 for an unweighted
    call; NULL weighs 0) and its number of rows m. A tuple's estimate weight is
    weight * m, its resampled weight weight * Poisson(m): each of its m rows
    weighs weight * Poisson(1), and those sum to weight * Poisson(m).
    """
    out = []
    found = list(groups(rows, n_by, chosen, 1, "bootstrap"))
    tick = _Ticks(len(found), n_resamples)
    for key, ((cols, w),), m in found:
        values = resampled(chosen, [cols], [w], stream(seed, key), m, n_resamples, tick)
        for measure, (resamples,) in zip(chosen, values, strict=True):
            (est,), (est_null,) = evaluate(measure, cols, (m * w)[None, :], m[None, :])
            low, high, se = interval(resamples, confidence)
            out.append((*key, measure.label, _number(est, est_null), low, high, se))
    return out


# ------------------------------------------------------------------ compare
def bootstrap_p_value(differences: np.ndarray) -> float | None:
    """Two-sided paired bootstrap p-value of a zero difference.

    p = min(1, 2 min((1 + #{d* <= 0}) / (B + 1), (1 + #{d* >= 0}) / (B + 1))) over
    the B defined resampled differences d*: the smallest 1 - confidence whose
    percentile interval leaves 0 out. Identical models (every d* = 0) give 1.
    """
    kept = differences[np.isfinite(differences)]
    if len(kept) == 0:
        return None
    b = len(kept)
    below = (1 + np.count_nonzero(kept <= 0)) / (b + 1)
    above = (1 + np.count_nonzero(kept >= 0)) / (b + 1)
    return float(min(1.0, 2 * min(below, above)))


def mcnemar_p_value(only_baseline: int, only_model: int) -> float:
    """McNemar's exact test: two-sided binomial(n, 1/2) p-value of the discordant pairs.

    ``only_baseline`` rows are right for the baseline only, ``only_model`` for
    the model only; p = min(1, 2 P(X <= min(b, c))), X ~ Binomial(b + c, 1/2);
    1 with no discordant pair.

    Examples
    --------
    >>> mcnemar_p_value(0, 5)  # 2 / 32
    0.0625
    """
    n, k = only_baseline + only_model, min(only_baseline, only_model)
    if n == 0:
        return 1.0
    if n <= 5000:
        tail = sum(math.comb(n, i) for i in range(k + 1))
        return float(min(1.0, 2 * tail / 2**n))
    i = np.arange(1, k + 1, dtype=float)
    log_terms = np.concatenate([[0.0], np.cumsum(np.log(n - i + 1) - np.log(i))])
    top = log_terms.max()
    log_tail = top + math.log(np.exp(log_terms - top).sum()) - n * math.log(2)
    return float(min(1.0, 2 * math.exp(log_tail)))


def _outcomes(measure: Chosen, cols: dict[str, Any]) -> np.ndarray:
    """Per tuple: 1 where the row is right (exact match, correct label), masked where unknown."""
    if measure.stats == "label_sets":
        s = row_stats(cols)
        return (s.tp == s.n_actual) & (s.tp == s.n_predicted)
    return cols["actual"] == cols["predicted"]


def _mcnemar(
    base: np.ndarray, model: np.ndarray, only_base: np.ndarray, only_model: np.ndarray
) -> float | None:
    """McNemar's p-value of the weighted discordant rows; weights count as frequencies.

    NULL where a discordant row's weight is not a whole number or the two models
    of an id weigh differently (no count of pairs to test).
    """
    discordant = only_base | only_model
    b, c = base[only_base].sum(), base[only_model].sum()
    whole = np.all(base[discordant] == np.round(base[discordant]))
    if not whole or np.any(base[discordant] != model[discordant]):
        return None
    return mcnemar_p_value(int(b), int(c))


def compare(
    rows: Iterable[Sequence[Any]],
    n_by: int,
    chosen: Sequence[Chosen],
    n_resamples: int,
    confidence: float,
    seed: int,
) -> list[tuple[Any, ...]]:
    """Rows (by values..., model, measure, baseline_estimate, estimate, difference, low, high,
    p_value, mcnemar_p_value) from a paired statistics table.

    ``rows`` are (by values..., model, baseline statistics..., baseline weight, model
    statistics..., model weight, m): one tuple per distinct pair, m the number of ids
    with it. Both rows of an id get the same Poisson(1) draw, each times its own weight.
    """
    out = []
    found = list(groups(rows, n_by + 1, chosen, 2, "compare"))
    tick = _Ticks(len(found), n_resamples)
    for key, ((base, w_base), (model, w_model)), m in found:
        values = resampled(
            chosen, [base, model], [w_base, w_model], stream(seed, key), m, n_resamples, tick
        )
        for measure, (b_values, m_values) in zip(chosen, values, strict=True):
            (b_est,), (b_null,) = evaluate(measure, base, (m * w_base)[None, :], m[None, :])
            (m_est,), (m_null,) = evaluate(measure, model, (m * w_model)[None, :], m[None, :])
            diffs = m_values - b_values  # NaN where either is undefined
            low, high, _ = interval(diffs, confidence)
            mcnemar = None
            if measure.zero_one:
                right_b, right_m = _outcomes(measure, base), _outcomes(measure, model)
                both = ~(np.ma.getmaskarray(right_b) | np.ma.getmaskarray(right_m))
                rb, rm = np.ma.getdata(right_b) & both, np.ma.getdata(right_m) & both
                mcnemar = _mcnemar(m * w_base, m * w_model, rb & ~rm, rm & ~rb)
            difference = None if (b_null or m_null) else float(m_est - b_est)
            out.append(
                (
                    *key,
                    measure.label,
                    _number(b_est, b_null),
                    _number(m_est, m_null),
                    difference,
                    low,
                    high,
                    bootstrap_p_value(diffs),
                    mcnemar,
                )
            )
    return out
