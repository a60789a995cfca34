"""Regression and score aggregates, resampled row by row.

Their statistics are functions of numbers (y and ŷ, or a 0/1 label and a
score) that rarely repeat, so the statistics table holds about one tuple per
row and each row draws its own Poisson(1) weight: the cost grows as rows x
resamples (the tuples that do repeat still draw one Poisson(m) weight). A
resample's statistics are then:

- pooled sums (mse, rmse, mae, mape, the variances and covariance of r2,
  explained variance, rse, rrse and pearson_corr, logloss, brier_score_loss):
  one matrix product of the weights (resamples x tuples) with the tuples'
  per-row terms (tuples x terms); variances and the covariance by the
  corrected two-pass formula (:func:`mlsql.measures.regression.centred_comoment`)
  about the data's weighted means;
- rae's Σw|y - ȳ*| about each resample's own mean ȳ*: running sums of the
  weights and weighted values in y order, read at the position of ȳ*;
- AUC, average precision and Spark's area under the PR curve: the tuples
  sorted by score once, the weights of positives and negatives summed per
  distinct score (tied scores are one step), and the weighted Mann-Whitney U,
  the step-wise precision sum or the runs' trapezoids from their running sums;
- expected calibration error: Σ w (prob - actual) per bin;
- the class-score measures: each row's numbers as the engine computed them from its class
  probabilities (:data:`CLASS_SCORE_STATS`): the multiclass Brier score's pooled sums and its
  widest row among the rows drawn, and the top labels' calibration bins as above.

Each is evaluated by its registry formula (:mod:`mlsql.measures.regression`,
:mod:`mlsql.measures.scores`, :mod:`mlsql.measures.class_scores`) with
:class:`~mlsql._resample.ops.WeightedOps`, whose ``rows`` are the resample's row
counts (Poisson draws, or m for the estimate) and ``weights`` those times each
tuple's ``sample_weight``.

Values are checked here, the same way for every engine, with the measures'
own messages: numbers must be finite, labels 0 or 1, and the probabilities of
brier_score_loss and expected_calibration_error within [0, 1] (of the class
scores, each row's lowest and highest). Rows with a NULL side are skipped (the
engines give both sides NULL for them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlsql import _classification_params as CP
from mlsql._errors import MlsqlError
from mlsql._resample import native as NATIVE
from mlsql._resample.ops import Lazy, WeightedOps
from mlsql.measures import class_scores as CS
from mlsql.measures import regression as RG
from mlsql.measures import scores as SC

#: regression measures resampled (Hivemall's argument order is left out: bootstrap takes
#: actual, predicted)
REGRESSION_MEASURES = tuple(name for name in RG.MEASURES if not name.startswith("hivemall_"))
#: score measures resampled (label 0/1 or boolean as actual, the score as predicted)
SCORE_MEASURES = (
    "logloss",
    "auc",
    "average_precision_score",
    "area_under_pr",
    "brier_score_loss",
    "expected_calibration_error",
)
#: class-score measures resampled (one label per row as actual, the row's class
#: probabilities as predicted): their statistics are numbers of each row, which the engines
#: compute (:data:`CLASS_SCORE_STATS`)
CLASS_SCORE_MEASURES = ("multiclass_brier_score", "multiclass_calibration_error")
#: measures whose score must be a probability in [0, 1]
PROBABILITY_MEASURES = tuple(sorted(SC.PROBABILITIES))
#: which statistics kind each family needs
KINDS = {
    "regression": REGRESSION_MEASURES,
    "scores": SCORE_MEASURES,
    "class_scores": CLASS_SCORE_MEASURES,
}
#: a row's numbers for the class-score measures, as each engine computes them from its label
#: and class probabilities (NULL where either is): Σ over its classes of
#: :func:`mlsql.measures.class_scores.class_squared_error` (its true class, if unscored, adding
#: 1), its number of classes (scored, and the true one), its top probability (0 when it scores
#: none), whether its top class (ties: the smallest label) is the true one (1.0 or 0.0), and
#: its lowest and highest probability (checked here)
CLASS_SCORE_STATS = ("loss", "width", "confidence", "correct", "low", "high")
#: regression measures that are the mean of a value per row (compare's per-id tests take them)
ROW_MEANS = ("mse", "mae", "mape")

Columns = dict[str, Any]

#: Poisson(1) by inverse CDF: P(X <= k) for k = 0..29 (1 - P(X <= 29) is below 1e-32)
_CDF = np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(30)])
_CELL_BITS = 12
_CELLS = 1 << _CELL_BITS
_TWO_53 = float(1 << 53)


def _cell_table() -> np.ndarray:
    """For each cell [i/N, (i+1)/N) of a uniform: the Poisson(1) value if the whole cell has one
    (else -1: the cell straddles a step of the CDF and the value is searched)."""
    lo = np.arange(_CELLS) / _CELLS
    hi = np.nextafter(np.arange(1, _CELLS + 1) / _CELLS, 0.0)
    k_lo = np.searchsorted(_CDF, lo, side="right")
    k_hi = np.searchsorted(_CDF, hi, side="right")
    return np.where(k_lo == k_hi, k_lo, -1).astype(float)


_TABLE = _cell_table()


def poisson_one(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Poisson(1) draws of ``shape``: the inverse CDF of ``rng.random``'s uniforms, read from a table.

    The same numbers as ``searchsorted(CDF, u, 'right')`` of the uniforms (a
    cell of the table whose uniforms could give two values is searched), about
    ten times faster than ``rng.poisson`` here.

    Examples
    --------
    >>> x = poisson_one(np.random.default_rng(0), (4, 50_000))
    >>> round(float(x.mean()), 2), round(float(x.var()), 2)
    (1.0, 1.0)
    """
    # rng.random's uniform is (raw >> 11) / 2^53 of the generator's next 64 raw bits, so its
    # cell (u x 4096) is raw >> 52: the same numbers, from the raw bits (no float pass)
    lib = NATIVE.kernels()
    if lib is not None:  # the same table and search in one pass
        out = np.empty(shape)
        _native_poisson_one(lib, rng, shape[0], shape[1], out, shape[1], None)
        return out
    return _from_bits(rng.bit_generator.random_raw(shape))


_WORD = (1 << 64) - 1


def _native_poisson_one(
    lib: Any, rng: np.random.Generator, n_rows: int, n_cols: int, out: Any, stride: int, cols: Any
) -> None:
    """The native :func:`poisson_one` of ``n_rows x n_cols`` draws into ``out`` (row stride
    ``stride``, the columns ``cols`` or all): a PCG64's raw bits made and its state advanced in
    C (no buffer of raw bits), another generator's read by ``random_raw``."""
    if not n_rows * n_cols:
        return
    generator = rng.bit_generator
    if isinstance(generator, np.random.PCG64):
        state = generator.state
        s, inc = state["state"]["state"], state["state"]["inc"]
        words = np.array([s >> 64, s & _WORD], dtype=np.uint64)
        steps = np.array([inc >> 64, inc & _WORD], dtype=np.uint64)
        if not lib.mlsql_poisson_one_pcg64(
            words, steps, n_rows, n_cols, _TABLE, _CDF, len(_CDF), out, stride, cols
        ):
            state["state"]["state"] = (int(words[0]) << 64) | int(words[1])
            generator.state = state
            return
    raw = generator.random_raw((n_rows, n_cols))
    lib.mlsql_poisson_one(raw, n_rows, n_cols, _TABLE, _CDF, len(_CDF), out, stride, cols)


def _from_bits(raw: np.ndarray) -> np.ndarray:
    """Poisson(1) of the raw bits, by the table (the portable :func:`poisson_one`)."""
    k = _TABLE[(raw >> np.uint64(64 - _CELL_BITS)).astype(np.intp)]
    unsure = k < 0
    if unsure.any():
        u = (raw[unsure] >> np.uint64(11)).astype(float) / _TWO_53
        k[unsure] = np.searchsorted(_CDF, u, side="right")
    return k


def draw(
    rng: np.random.Generator, m: np.ndarray, n_resamples: int, out: np.ndarray | None = None
) -> np.ndarray:
    """Poisson(m) weights (resamples x tuples): Poisson(1) by :func:`poisson_one` where m = 1
    (first, for every such tuple), then ``rng.poisson`` for the other tuples.

    ``out``: a (resamples x tuples) float array to write them to (a batch's buffer, reused:
    no fresh pages per batch), else a new one.
    """
    one = m == 1
    others = np.flatnonzero(~one)
    if out is None:
        out = np.empty((n_resamples, len(m)))
    lib = NATIVE.kernels()
    if not len(others):
        if lib is not None:
            _native_poisson_one(lib, rng, n_resamples, len(m), out, len(m), None)
        else:
            out[...] = poisson_one(rng, (n_resamples, len(m)))
        return out
    if lib is not None:  # the draws go straight to their columns
        cols = np.flatnonzero(one).astype(np.int64)
        _native_poisson_one(lib, rng, n_resamples, len(cols), out, len(m), cols.ctypes.data)
    else:
        out[:, one] = poisson_one(rng, (n_resamples, len(m) - len(others)))
    out[:, others] = rng.poisson(m[others], size=(n_resamples, len(others)))
    return out


_STATE = (1 << 128) - 1
#: numpy's PCG64 multiplier: each raw draw is state = state * _PCG_MULT + inc (mod 2^128)
_PCG_MULT = (2549297995355413924 << 64) | 4865540595714422341


def _pcg_jump(steps: int, inc: int) -> tuple[int, int]:
    """(a, c) with state * a + c (mod 2^128) the PCG64 state ``steps`` draws on.

    Examples
    --------
    >>> g = np.random.PCG64(1)
    >>> a, c = _pcg_jump(5, g.state["state"]["inc"])
    >>> s = g.state["state"]["state"]
    >>> _ = g.random_raw(5)
    >>> (s * a + c) & _STATE == g.state["state"]["state"]
    True
    """
    a, c, mult, add = 1, 0, _PCG_MULT, inc
    while steps:
        if steps & 1:
            a, c = (a * mult) & _STATE, (c * mult + add) & _STATE
        add, mult = ((mult + 1) * add) & _STATE, (mult * mult) & _STATE
        steps >>= 1
    return a, c


def _words(value: int) -> list[int]:
    return [value >> 64, value & _WORD]


class Drawn(Lazy):
    """A batch of :func:`draw`'s weights (resamples x tuples), not made: each resample's
    generator state at its first Poisson(1) draw and the other tuples' draws, for the native
    kernel that draws inside its tiles (:func:`mlsql._resample.labels.per_label`);
    :meth:`dense` makes the same matrix."""

    def __init__(
        self, lib: Any, states: np.ndarray, inc: np.ndarray, m: np.ndarray, others: np.ndarray
    ) -> None:
        self.lib, self.states, self.inc = lib, states, inc
        self.shape = (len(states), len(m))
        one = m == 1
        #: per tuple: -1 where drawn from the stream (m = 1), else its column of ``others``
        self.other_col = np.full(len(m), -1, np.int64)
        self.other_col[~one] = np.arange(int((~one).sum()))
        self.others = np.ascontiguousarray(others, dtype=float)
        self.one = np.flatnonzero(one).astype(np.int64)
        self._dense: np.ndarray | None = None

    @classmethod
    def stacked(cls, parts: Sequence[Drawn]) -> Drawn:
        """The batches ``parts`` (of one stream, in order) as one: their resamples one after
        another (each keeps its state and its other tuples' draws)."""
        if len(parts) == 1:
            return parts[0]
        first = parts[0]
        out = cls.__new__(cls)
        out.lib, out.inc, out.other_col, out.one = first.lib, first.inc, first.other_col, first.one
        out.states = np.concatenate([p.states for p in parts])
        out.others = np.concatenate([p.others for p in parts])
        out.shape = (len(out.states), first.shape[1])
        out._dense = None
        return out

    def label_sums(
        self, tuples: np.ndarray, labels: np.ndarray, n_labels: int
    ) -> np.ndarray | None:
        """Per resample, each label's sum of the weights of its cells (``tuples``, ``labels``,
        tuples ascending, none twice), drawn and summed by the kernel as whole numbers; None
        where a sum could pass 2^32."""
        out = np.empty((self.shape[0], n_labels))

        def run(lo: int, hi: int) -> int:  # resamples lo:hi (their own states and out rows)
            return int(
                self.lib.mlsql_label_sums_drawn(
                    *(self.states[lo:hi], self.inc, hi - lo, self.shape[1]),
                    *(self.other_col, self.others[lo:hi], self.others.shape[1]),
                    *(_TABLE, _CDF, len(_CDF)),
                    *(tuples, labels, len(tuples), out[lo:hi], n_labels),
                )
            )

        # the resamples' sums are independent: blocks of them run on the machine's cores
        statuses = NATIVE.spread(run, self.shape[0], NATIVE.DRAWN_BLOCK)
        if -1 in statuses:
            raise MemoryError("per-label sums: no memory for a block of sums")
        return out if all(s == 0 for s in statuses) else None

    def dense(self) -> np.ndarray:
        """The weights as :func:`draw` makes them (each resample's row from its state)."""
        if self._dense is None:
            n, width = self.shape
            out = np.empty(self.shape)
            cols = None if len(self.one) == width else self.one.ctypes.data
            for r in range(n):
                state = self.states[r].copy()
                self.lib.mlsql_poisson_one_pcg64(
                    state, self.inc, 1, len(self.one), _TABLE, _CDF, len(_CDF), out[r:], width, cols
                )
            out[:, self.other_col >= 0] = self.others
            self._dense = out
        return self._dense


def drawn(rng: np.random.Generator, m: np.ndarray, n_resamples: int) -> Drawn | None:
    """:func:`draw`'s weights as a :class:`Drawn` (the stream left where :func:`draw` leaves
    it), or None where they cannot be drawn natively (no kernels, a generator other than
    PCG64, a compiler without 128-bit integers).

    Resample r's Poisson(1) draws start r x (the tuples of m = 1) raw draws into the batch
    (:func:`draw` makes them row by row): its state is the batch's jumped so far.
    """
    lib = NATIVE.kernels()
    generator = rng.bit_generator
    if lib is None or not isinstance(generator, np.random.PCG64):
        return None
    if not lib.mlsql_resample_has_pcg64():
        return None
    n_one = int((m == 1).sum())
    state = generator.state
    s, inc = state["state"]["state"], state["state"]["inc"]
    a, c = _pcg_jump(n_one, inc)
    states = np.empty((n_resamples, 2), np.uint64)
    for r in range(n_resamples):
        states[r] = _words(s)
        s = (s * a + c) & _STATE
    if n_one and n_resamples:
        state["state"]["state"] = s
        generator.state = state
    others = np.flatnonzero(m != 1)
    if len(others):
        draws = rng.poisson(m[others], size=(n_resamples, len(others))).astype(float)
    else:
        draws = np.zeros((n_resamples, 0))
    return Drawn(lib, states, np.array(_words(inc), np.uint64), m, draws)


# ------------------------------------------------------------------ checks
def _first_bad(values: np.ndarray, bad: np.ndarray) -> float | None:
    return float(values[bad][0]) if bad.any() else None


def check(kind: str, columns: Columns, names: Sequence[str], func: str, probability: bool) -> None:
    """The known rows' values are what the measures take (their own messages).

    ``names`` are the inputs' names for the messages (actual, predicted);
    ``probability``: a measure of the call takes probabilities (checked within [0, 1]).
    """
    if kind == "class_scores":
        _check_class_scores(columns, names[1], func)
        return
    y, p, known = _known_values(columns)
    if kind == "scores":
        label = _first_bad(y[known], ~np.isin(y[known], (0.0, 1.0)))
        if label is not None:
            got = "NaN" if label != label else repr(int(label) if label.is_integer() else label)
            raise MlsqlError(CP.binary_value_message(func, got))
        sides = [(names[1], p)]
    else:
        sides = [(names[0], y), (names[1], p)]
    for name, values in sides:
        bad = _first_bad(values[known], ~np.isfinite(values[known]))
        if bad is not None:
            got = CP.NOT_FINITE[0 if bad != bad else 1 if bad > 0 else 2]
            raise MlsqlError(CP.finite_value_message(func, name, got))
    if probability:
        score = p[known]
        for bad, got in ((score < 0, CP.OUT_OF_RANGE[0]), (score > 1, CP.OUT_OF_RANGE[1])):
            if bad.any():
                raise MlsqlError(CP.probability_value_message(func, names[1], got))


def _check_class_scores(columns: Columns, name: str, func: str) -> None:
    """The rows' probabilities are finite and within [0, 1] (their lowest and highest)."""
    low, high = columns["low"], columns["high"]
    known = ~np.ma.getmaskarray(low)
    lo, hi = (np.asarray(np.ma.getdata(x), dtype=float)[known] for x in (low, high))
    for values in (lo, hi):
        value = _first_bad(values, ~np.isfinite(values))
        if value is not None:
            got = CP.NOT_FINITE[0 if value != value else 1 if value > 0 else 2]
            raise MlsqlError(CP.finite_value_message(func, name, got))
    for outside, got in ((lo < 0, CP.OUT_OF_RANGE[0]), (hi > 1, CP.OUT_OF_RANGE[1])):
        if outside.any():
            raise MlsqlError(CP.probability_value_message(func, name, got))


# ------------------------------------------------------------------ per-tuple data
def _known_values(columns: Columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(actual, predicted as floats, known): known where neither side is NULL."""
    a, p = columns["actual"], columns["predicted"]
    known = ~(np.ma.getmaskarray(a) | np.ma.getmaskarray(p))
    y = np.asarray(np.ma.getdata(a), dtype=float)
    s = np.asarray(np.ma.getdata(p), dtype=float)
    return np.where(known, y, 0.0), np.where(known, s, 0.0), known


def _prepared(columns: Columns, key: str, make: Callable[..., Any]) -> Any:
    """``make(y, p, known)``, kept beside the tuples: every batch of resamples reads it."""
    cache = columns.setdefault("number_data", {})
    if key not in cache:
        cache[key] = make(*_known_values(columns))
    return cache[key]


def _of_batch(data: dict[str, Any], name: str, w: np.ndarray, make: Callable[[], Any]) -> Any:
    """``make()``, kept for the batch of weights ``w``: the measures of a call share it."""
    kept = data.get(name)
    if kept is None or kept[0] is not w:
        kept = data[name] = (w, make())
    return kept[1]


def _rows(ops: WeightedOps, columns: Columns, known: np.ndarray) -> np.ndarray:
    """Each resample's known rows (its Poisson draws over them; NULL weights skip a row)."""
    counts = ops.weights if ops.rows is None else ops.rows
    return counts @ (known & columns.get("weight_known", True)).astype(float)


# ------------------------------------------------------------------ regression
_REGRESSION_TERMS = ("one", "sse", "sae", "sape", "dy", "dp", "de", "dyy", "dpp", "dyp", "dee")


def _regression_terms(y: np.ndarray, p: np.ndarray, known: np.ndarray) -> dict[str, Any]:
    """Per-tuple terms: errors and values centred on the data's (unweighted) means."""
    k = known.astype(float)
    err = y - p
    centre = [float(np.mean(x[known])) if known.any() else 0.0 for x in (y, p, err)]
    dy, dp, de = ((x - c) * k for x, c in zip((y, p, err), centre, strict=True))
    terms = {
        "one": k,
        "sse": err * err * k,
        "sae": np.abs(err) * k,
        "sape": np.abs(err) / np.maximum(np.abs(y), RG.EPSILON) * k,
        "dy": dy,
        "dp": dp,
        "de": de,
        "dyy": dy * dy,
        "dpp": dp * dp,
        "dyp": dy * dp,
        "dee": de * de,
    }
    order = np.argsort(np.where(known, dy, np.inf), kind="stable")[: int(known.sum())]
    return {
        "matrix": np.column_stack([terms[t] for t in _REGRESSION_TERMS]),
        "known": known,
        "order": order,
        "dy_sorted": dy[order],
    }


def _sad(w: np.ndarray, data: dict[str, Any], total_w: Any, total_dy: Any) -> np.ndarray:
    """Σ w |dy - mean*| per resample: running sums in dy order read at each resample's mean."""
    ws = w[:, data["order"]]
    d = data["dy_sorted"]
    below_w = np.cumsum(ws, axis=1)
    below_s = np.cumsum(ws * d, axis=1)
    with np.errstate(all="ignore"):
        mean = np.where(total_w > 0, total_dy / np.where(total_w > 0, total_w, 1.0), 0.0)
    k = np.searchsorted(d, mean, side="right") if len(d) else np.zeros(len(w), np.intp)
    pick = np.maximum(k - 1, 0)[:, None]
    taken = k > 0
    bw = np.where(taken, np.take_along_axis(below_w, pick, 1)[:, 0] if len(d) else 0.0, 0.0)
    bs = np.where(taken, np.take_along_axis(below_s, pick, 1)[:, 0] if len(d) else 0.0, 0.0)
    return mean * bw - bs + (total_dy - bs) - mean * (total_w - bw)


def regression_stats(ops: WeightedOps, columns: Columns, with_sad: bool) -> RG.RegressionStats:
    """The resamples' :class:`~mlsql.measures.regression.RegressionStats` (weighted form)."""
    data = _prepared(columns, "regression", _regression_terms)
    w = ops.weights  # the terms are 0 on unknown tuples, which the sorted order leaves out
    product = _of_batch(data, "sums", w, lambda: w @ data["matrix"])
    sums = dict(zip(_REGRESSION_TERMS, product.T, strict=True))
    n = sums["one"]

    def comoment(ab: str, a: str, b: str) -> Any:
        return RG.centred_comoment(ops, sums[ab], sums[a], sums[b], n)

    sad = _sad(w, data, n, sums["dy"]) if with_sad else np.zeros_like(n)
    return RG.RegressionStats(
        n=n,
        sse=sums["sse"],
        sae=sums["sae"],
        sape=sums["sape"],
        var_actual=comoment("dyy", "dy", "dy"),
        var_predicted=comoment("dpp", "dp", "dp"),
        covariance=comoment("dyp", "dy", "dp"),
        var_error=comoment("dee", "de", "de"),
        sad_actual=sad,
        rows=_rows(ops, columns, data["known"]),
    )


def row_stats(columns: Columns) -> RG.RegressionStats:
    """Each tuple's :class:`~mlsql.measures.regression.RegressionStats` as one row alone.

    n is 1 where both sides are known (else 0, and the sums 0); a row alone has
    no spread, so its variances, covariance and Σ|y - ȳ| are 0. The measures'
    own formulas read them element-wise: mse, mae and mape give the row's
    (y - ŷ)², |y - ŷ| and |y - ŷ| / max(|y|, eps), NULL where a side is NULL.

    Examples
    --------
    >>> cols = {"actual": np.ma.array([3.0, 1.0], mask=[False, True]), "predicted": np.ma.array([1.0, 2.0])}
    >>> s = row_stats(cols)
    >>> s.n.tolist(), s.sse.tolist(), s.sae.tolist()
    ([1.0, 0.0], [4.0, 0.0], [2.0, 0.0])
    """
    y, p, known = _known_values(columns)
    k = known.astype(float)
    err = np.abs(y - p) * k
    zero = np.zeros_like(k)
    return RG.RegressionStats(
        n=k,
        sse=err * err,
        sae=err,
        sape=err / np.maximum(np.abs(y), RG.EPSILON),
        var_actual=zero,
        var_predicted=zero,
        covariance=zero,
        var_error=zero,
        sad_actual=zero,
    )


def row_values(name: str, columns: Columns) -> np.ndarray:
    """Each tuple's value of the per-row mean ``name`` (:data:`ROW_MEANS`) as one row alone,
    NaN where NULL: its registry formula over :func:`row_stats`."""
    from mlsql._registry import REGISTRY

    build = REGISTRY[name].build
    assert build is not None
    with np.errstate(all="ignore"):
        value = np.ma.asarray(build(WeightedOps(1.0), row_stats(columns)))
    return np.asarray(np.ma.filled(value.astype(float), np.nan), dtype=float)


# ------------------------------------------------------------------ scores
def _score_data(y: np.ndarray, s: np.ndarray, known: np.ndarray) -> dict[str, Any]:
    """The known tuples in ascending score order, the starts of their distinct scores."""
    order = np.flatnonzero(known)
    order = order[np.argsort(s[order], kind="stable")]
    ordered = s[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else order
    group = np.cumsum(np.r_[False, ordered[1:] != ordered[:-1]]) if len(order) else order
    sides = []  # positives, then negatives: their tuples by score, each score's index
    for label in (1.0, 0.0):
        mine = y[order] == label
        tuples, index = order[mine], group[mine]
        starts_ = np.flatnonzero(np.r_[True, index[1:] != index[:-1]]) if len(index) else index
        sides.append((tuples, index[starts_], starts_))
    p = np.clip(s, SC.CLIP, 1 - SC.CLIP)
    with np.errstate(all="ignore"):
        loss = SC.log_loss_term(WeightedOps(1.0), y, np.log(p), np.log(1 - p))
    return {
        "known": known,
        "order": order,
        "starts": starts,
        "sides": sides,
        "loss": np.column_stack([known * 1.0, np.where(known, loss, 0.0)]),
        "brier": np.column_stack(
            [known * 1.0, np.where(known, SC.squared_error_term(WeightedOps(1.0), y, s), 0.0)]
        ),
        "gap": np.where(known, s - y, 0.0),
        "score": s,
    }


def _per_score(w: np.ndarray, data: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """Weights of the positives and of the negatives at each distinct score (ascending)."""
    out = []
    for tuples, score_index, starts in data["sides"]:
        sums = np.zeros((len(w), len(data["starts"])))
        if len(tuples):
            sums[:, score_index] = np.add.reduceat(w[:, tuples], starts, axis=1)
        out.append(sums)
    return out[0], out[1]


def score_stats(ops: WeightedOps, columns: Columns, name: str) -> Any:
    """The resamples' statistics of score measure ``name`` (weighted form)."""
    data = _prepared(columns, "scores", _score_data)
    w = ops.weights  # the terms are 0 on unknown tuples, which the sorted orders leave out
    if name in ("logloss", "brier_score_loss"):
        n, total = (w @ data["loss" if name == "logloss" else "brier"]).T
        return SC.LossStats(n=n, total_loss=total)
    if name == "expected_calibration_error":
        n = w @ data["known"].astype(float)
        return SC.CalibrationStats(
            n=n, over_bins=lambda n_bins, term, largest: _over_bins(w, data, n_bins, term, largest)
        )
    pos, neg = _of_batch(data, "per_score", w, lambda: _per_score(w, data))
    rows = _rows(ops, columns, data["known"])
    n_pos, n_neg = pos.sum(axis=-1), neg.sum(axis=-1)
    if name == "auc":  # U = Σ pos (negatives below + ties / 2) = Σ pos (cumsum(neg) - neg / 2)
        u = (
            np.einsum("ij,ij->i", pos, np.cumsum(neg, axis=-1))
            - np.einsum("ij,ij->i", pos, neg) / 2
        )
        return SC.RankStats(n_positive=n_pos, n_negative=n_neg, u=u, rows=rows)
    # average precision: positives and all rows scored at least each distinct score
    at_least_pos = np.cumsum(pos[:, ::-1], axis=-1)[:, ::-1]
    at_least_all = at_least_pos + np.cumsum(neg[:, ::-1], axis=-1)[:, ::-1]
    ratio = np.divide(
        at_least_pos, at_least_all, out=np.zeros_like(at_least_pos), where=at_least_all > 0
    )
    if name == "area_under_pr":  # each run's trapezoid: its precision and the run's above
        return SC.PrecisionStats(
            n=rows, n_positive=n_pos, precision_sum=_trapezoid_sum(pos, ratio, at_least_all)
        )
    precision_sum = np.einsum("ij,ij->i", pos, ratio)
    return SC.PrecisionStats(n=rows, n_positive=n_pos, precision_sum=precision_sum)


def _trapezoid_sum(pos: np.ndarray, ratio: np.ndarray, at_least_all: np.ndarray) -> np.ndarray:
    """Σ over the distinct scores (ascending columns) of :func:`mlsql.measures.scores.pr_trapezoid`:
    each score's positive weight times the mean of its precision and the precision at the next
    higher score, its own where no weight is scored higher (Spark's first point (0, P(t₁)); a
    score no row of the resample weighs adds 0)."""
    above = np.zeros_like(at_least_all)
    above[:, :-1] = at_least_all[:, 1:]
    before = np.zeros_like(ratio)
    before[:, :-1] = ratio[:, 1:]
    previous = np.where(above > 0, before, ratio)
    return SC.pr_trapezoid(WeightedOps(1.0), pos, ratio, previous).sum(axis=-1)


def _over_bins(
    w: np.ndarray, data: dict[Any, Any], n_bins: int, term: SC.BinTerm, largest: bool
) -> Any:
    """Per resample, the sum (``largest``: maximum) over the non-empty bins of ``term(|Σ w (prob
    - actual)|, Σ w)``; NULL (masked) without a non-empty bin."""
    key = ("bins", n_bins)
    if key not in data:
        bins = SC.calibration_bin(WeightedOps(1.0), data["score"], n_bins)
        bins = np.where(data["known"], np.ma.filled(bins, 0), n_bins).astype(np.intp)
        order = np.argsort(bins, kind="stable")[: int(data["known"].sum())]
        ordered = bins[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else order
        data[key] = (order, starts, data["gap"][order])
    order, starts, gap = data[key]
    if not len(order):
        return np.ma.masked_all(len(w))
    gaps = np.add.reduceat(w[:, order] * gap, starts, axis=1)
    sizes = np.add.reduceat(w[:, order], starts, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.ma.masked_invalid(np.ma.filled(term(np.abs(gaps), sizes), np.nan))
    return terms.max(axis=-1) if largest else terms.sum(axis=-1)


# ------------------------------------------------------------------ class scores
def _class_score_data(columns: Columns) -> dict[str, Any]:
    """The rows' numbers, 0 where the row is unknown (its statistics NULL)."""
    known = ~np.ma.getmaskarray(columns["loss"])

    def filled(name: str) -> np.ndarray:
        return np.where(known, np.ma.getdata(columns[name]).astype(float), 0.0)

    confidence, correct = filled("confidence"), filled("correct")
    return {
        "known": known,
        "loss": filled("loss"),
        "width": filled("width"),
        "score": confidence,
        "gap": np.where(known, confidence - correct, 0.0),
    }


def class_score_stats(ops: WeightedOps, columns: Columns, name: str) -> Any:
    """The resamples' statistics of class-score measure ``name`` (weighted form): the Brier
    score's weighted sums and its widest row among the rows drawn (a row that weighs 0 still
    counts, as in the measure), or the top labels' calibration bins."""
    cache = columns.setdefault("number_data", {})
    if "class_scores" not in cache:
        cache["class_scores"] = _class_score_data(columns)
    data = cache["class_scores"]
    w = ops.weights
    n = w @ data["known"].astype(float)
    if name == "multiclass_calibration_error":
        return SC.CalibrationStats(
            n=n, over_bins=lambda n_bins, term, largest: _over_bins(w, data, n_bins, term, largest)
        )
    counts = w if ops.rows is None else ops.rows
    drawn = (counts > 0) & data["known"] & columns.get("weight_known", True)
    width = np.where(drawn, data["width"], 0.0).max(axis=-1, initial=0.0)
    return CS.ClassBrierStats(n=n, total_loss=w @ data["loss"], n_classes=width)


# ------------------------------------------------------------------ measures
def evaluator(name: str, params: dict[str, Any]) -> Callable[[WeightedOps, Columns], Any]:
    """The evaluation of regression or score measure ``name`` with checked ``params``."""
    from mlsql._registry import REGISTRY

    build = REGISTRY[name].build
    assert build is not None

    def evaluate(ops: WeightedOps, columns: Columns) -> Any:
        if name in REGRESSION_MEASURES:
            stats: Any = regression_stats(ops, columns, with_sad=name == "rae")
        elif name in CLASS_SCORE_MEASURES:
            stats = class_score_stats(ops, columns, name)
        else:
            stats = score_stats(ops, columns, name)
        return build(ops, stats, **params)

    return evaluate
