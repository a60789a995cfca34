"""The resample kernels in C (native/resample.c) give exactly the portable numpy code's numbers.

Each check runs the same call with the kernels (when built) and with
``MLSQL_NATIVE=0``, and compares both with a plain-Python oracle: per-label
sums added one by one in ascending tuples (non-integer weights, so any other
order of the additions shows), and Poisson(1) as the inverse CDF of
``Generator.random``'s uniforms.
"""

from __future__ import annotations

import bisect
import importlib.util
import math
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlsql._resample import labels as LL
from mlsql._resample import native as NATIVE
from mlsql._resample import numbers as NUM

ROOT = Path(__file__).resolve().parents[1]

needs_native = pytest.mark.skipif(NATIVE.kernels() is None, reason="resample kernels not built")


def _both(monkeypatch: pytest.MonkeyPatch, call: Callable[[], Any]) -> tuple[Any, Any]:
    """(native, portable) results of ``call``."""
    native = call()
    with monkeypatch.context() as m:
        m.setenv("MLSQL_NATIVE", "0")
        assert NATIVE.kernels() is None
        portable = call()
    return native, portable


def _oracle_sums(w: np.ndarray, pairs: list[tuple[int, int]], n_labels: int) -> list[list[float]]:
    """Per resample and label: 0.0 plus the weights of the label's tuples, ascending."""
    out = []
    for row in w.tolist():
        sums = [0.0] * n_labels
        for t, label in sorted(pairs):
            sums[label] += row[t]
        out.append(sums)
    return out


@needs_native
@pytest.mark.parametrize("gather_cells", [1 << 20, 64, 5])
@pytest.mark.parametrize("n_resamples", [1, 2, 9])
def test_per_label_sums_native_equal_portable_and_oracle(
    monkeypatch: pytest.MonkeyPatch, gather_cells: int, n_resamples: int
) -> None:
    rng = np.random.default_rng(n_resamples)
    n_tuples, n_labels = 300, 17
    keys = np.unique(rng.integers(0, n_tuples, 2000) * n_labels + rng.integers(0, n_labels, 2000))
    cells = LL.Cells.of(keys // n_labels, keys % n_labels)
    w = rng.poisson(1.0, (n_resamples, n_tuples)) * rng.random(n_tuples) * 3.7
    monkeypatch.setattr(LL, "GATHER_CELLS", gather_cells)  # chunks of the portable sums
    native, portable = _both(monkeypatch, lambda: LL.per_label(w, cells, n_labels))
    pairs = [(int(k // n_labels), int(k % n_labels)) for k in keys]
    assert native.tolist() == _oracle_sums(w, pairs, n_labels)
    assert portable.tolist() == native.tolist()
    # a side's counts: tp, fp, fn and the known tuples summed side by side in one call
    actual, predicted = (
        LL.Lists(
            np.argsort(rng.random((n_tuples, n_labels)))[:, :3].ravel(), np.full(n_tuples, 3), valid
        )
        for valid in (rng.random(n_tuples) > 0.1, rng.random(n_tuples) > 0.1)
    )
    side = LL.side_cells(actual, predicted, list(range(n_labels)))
    native, portable = _both(monkeypatch, lambda: side.counts(w, None))
    assert native[0].tolist() == portable[0].tolist()
    assert [c.tolist() for c in native[1]] == [c.tolist() for c in portable[1]]
    known = np.flatnonzero(actual.valid & predicted.valid)
    oracle = _oracle_sums(w, [(int(t), 0) for t in known], 1)
    assert native[0].tolist() == [row[0] for row in oracle]
    a_sets = [set(actual.codes[3 * t : 3 * t + 3].tolist()) for t in range(n_tuples)]
    p_sets = [set(predicted.codes[3 * t : 3 * t + 3].tolist()) for t in range(n_tuples)]
    for counts, cell in zip(native[1], (set.__and__, set.__rsub__, set.__sub__), strict=True):
        pairs = [(int(t), label) for t in known for label in cell(a_sets[t], p_sets[t])]
        assert counts.tolist() == _oracle_sums(w, pairs, n_labels)


def _random_side(rng: np.random.Generator, n_tuples: int, n_labels: int) -> LL.Side:
    """A side of ``n_tuples`` tuples of 3 actual and 3 predicted labels, some lists NULL."""
    actual, predicted = (
        LL.Lists(
            np.argsort(rng.random((n_tuples, n_labels)))[:, :3].ravel(), np.full(n_tuples, 3), valid
        )
        for valid in (rng.random(n_tuples) > 0.1, rng.random(n_tuples) > 0.1)
    )
    return LL.side_cells(actual, predicted, list(range(n_labels)))


@needs_native
@pytest.mark.parametrize("n_resamples", [1, 7, 8, 9, 20])
@pytest.mark.parametrize("n_tuples", [1, 2048, 2049, 5000])
def test_whole_number_sums_are_the_double_sums_and_the_oracle(
    monkeypatch: pytest.MonkeyPatch, n_resamples: int, n_tuples: int
) -> None:
    """Distinct cells under whole-number weights (an unweighted call's draws) are summed as
    integers: the same numbers as the double sums, the portable path and the oracle."""
    rng = np.random.default_rng(n_tuples + n_resamples)
    n_labels = 13
    keys = np.unique(rng.integers(0, n_tuples, 3000) * n_labels + rng.integers(0, n_labels, 3000))
    t, c = keys // n_labels, keys % n_labels
    w = rng.poisson(1.5, (n_resamples, n_tuples)).astype(float)
    w[:, 0] = 40  # whole numbers above a Poisson(1)'s
    lib = NATIVE.kernels()
    out = np.full((n_resamples, n_labels), np.nan)
    tuples, labels = np.ascontiguousarray(t), np.ascontiguousarray(c)
    args = (w, n_resamples, n_tuples, tuples, labels, len(t), out, n_labels)
    assert lib.mlsql_label_sums_whole(*args) == 0  # the integer sums were taken
    pairs = [(int(a), int(b)) for a, b in zip(t, c, strict=True)]
    assert out.tolist() == _oracle_sums(w, pairs, n_labels)
    cells = LL.Cells.of(t, c, distinct=True)
    native, portable = _both(monkeypatch, lambda: LL.per_label(w, cells, n_labels))
    assert native.tolist() == portable.tolist() == out.tolist()


@needs_native
@pytest.mark.parametrize("bad", [0.5, -1.0, float("nan"), float("inf"), 2.0**31, 2.0**31 - 1])
def test_whole_number_sums_fall_back_to_doubles(
    monkeypatch: pytest.MonkeyPatch, bad: float
) -> None:
    """A weight that is not a whole number in [0, 2^31), or a resample's weights adding up to
    2^32 or more (a sum could wrap), are summed in doubles: the oracle's numbers."""
    n_tuples, n_labels = 3000, 4
    t = np.repeat(np.arange(n_tuples), 2)
    c = np.tile([0, 3], n_tuples)
    w = np.ones((9, n_tuples))
    w[4, 2500:] = bad  # in the second tile, after whole numbers
    lib = NATIVE.kernels()
    out = np.empty((9, n_labels))
    args = (w, 9, n_tuples, np.ascontiguousarray(t), np.ascontiguousarray(c), len(t), out, n_labels)
    assert lib.mlsql_label_sums_whole(*args) == -2
    cells = LL.Cells.of(t, c, distinct=True)
    native, portable = _both(monkeypatch, lambda: LL.per_label(w, cells, n_labels))
    expected = _oracle_sums(w, list(zip(t.tolist(), c.tolist(), strict=True)), n_labels)
    assert np.array_equal(native, np.array(expected), equal_nan=True)
    assert np.array_equal(portable, native, equal_nan=True)


def test_side_cells_come_in_tuple_order_and_are_the_sets_cells() -> None:
    """One sort gives a side's tp, fp, fn and known cells side by side, tuples ascending."""
    rng = np.random.default_rng(3)
    n_tuples, n_labels = 400, 9
    side = _random_side(rng, n_tuples, n_labels)
    tuples, labels = side.joined[None].by_tuple
    assert np.all(np.diff(tuples) >= 0)
    assert side.joined[None].distinct
    tp, fp, fn, n = side.cells(None)
    assert n == n_labels
    got = sorted(zip(tuples.tolist(), labels.tolist(), strict=True))
    expected = sorted(
        [(int(t), int(label)) for t, label in zip(tp.tuples, tp.label_of_cells(), strict=True)]
        + [
            (int(t), n + int(label))
            for t, label in zip(fp.tuples, fp.label_of_cells(), strict=True)
        ]
        + [
            (int(t), 2 * n + int(label))
            for t, label in zip(fn.tuples, fn.label_of_cells(), strict=True)
        ]
        + [(int(t), 3 * n) for t in np.flatnonzero(side.known)]
    )
    assert got == expected
    assert side.row_tp.tolist() == np.bincount(tp.tuples, minlength=n_tuples).tolist()


@pytest.mark.parametrize("native", [True, False])
def test_a_pair_of_unweighted_sides_is_summed_in_one_pass(
    monkeypatch: pytest.MonkeyPatch, native: bool
) -> None:
    """Both sides of a compare's group read the same draws: one per_label call per batch
    gives each side the numbers of its own call."""
    if native and NATIVE.kernels() is None:
        pytest.skip("resample kernels not built")
    if not native:
        monkeypatch.setenv("MLSQL_NATIVE", "0")
    rng = np.random.default_rng(8)
    sides = [_random_side(rng, 300, 11) for _ in range(2)]
    w = rng.poisson(1.0, (10, 300)).astype(float)
    alone = [s.counts(w, None) for s in sides] + [s.counts(w, ["x", 3, 0]) for s in sides]
    calls = []
    per_label = LL.per_label
    monkeypatch.setattr(LL, "per_label", lambda *a: calls.append(1) or per_label(*a))
    pair = LL.Pair(sides)
    together = [pair.counts(s, w, None) for s in sides] + [
        pair.counts(s, w, ["x", 3, 0]) for s in sides
    ]
    assert len(calls) == 2  # one per set of labels, not one per side
    for (known, counts), (known_, counts_) in zip(alone, together, strict=True):
        assert known.tolist() == known_.tolist()
        assert [c.tolist() for c in counts] == [c.tolist() for c in counts_]
    other = w * 2  # other weights: made again, for the side that asks
    assert (
        pair.counts(sides[1], other, None)[0].tolist() == sides[1].counts(other, None)[0].tolist()
    )


def _models_of_the_same_rows(
    rng: np.random.Generator, n_tuples: int, n_labels: int
) -> tuple[list[LL.Side], list[tuple[set[int], set[int], set[int], bool, bool]]]:
    """Two sides whose tuples hold the same actual lists (two models of the same rows), the
    second model's predictions mostly the first's, some lists NULL; and the tuples as sets."""
    draw = [
        sorted(rng.choice(n_labels, rng.integers(0, 4), replace=False)) for _ in range(n_tuples)
    ]
    actual = [draw[t] for t in range(n_tuples)]
    first = [
        sorted(rng.choice(n_labels, rng.integers(0, 4), replace=False)) for _ in range(n_tuples)
    ]
    second = [
        p if rng.random() < 0.7 else sorted({*p[1:], int(rng.integers(n_labels))}) for p in first
    ]
    valid = [rng.random(n_tuples) > 0.1 for _ in range(3)]

    def lists(codes: list[list[int]], ok: np.ndarray) -> LL.Lists:
        kept = [c if k else [] for c, k in zip(codes, ok, strict=True)]
        flat = np.array([x for c in kept for x in c], dtype=np.int64)
        return LL.Lists(flat, np.array([len(c) for c in kept], dtype=np.int64), ok)

    sides = [
        LL.side_cells(lists(actual, valid[0]), lists(p, ok), list(range(n_labels)))
        for p, ok in ((first, valid[1]), (second, valid[2]))
    ]
    sets = [
        (set(actual[t]), set(first[t]), set(second[t]), bool(valid[0][t] and valid[1][t]),
         bool(valid[0][t] and valid[2][t]))
        for t in range(n_tuples)
    ]  # fmt: skip
    return sides, sets


@pytest.mark.parametrize("native", [True, False])
def test_a_pair_of_models_of_the_same_rows_adds_each_label_once(
    monkeypatch: pytest.MonkeyPatch, native: bool
) -> None:
    """Two models of the same rows: the pair's cells are each tuple's labels of A ∪ P1 ∪ P2
    (and its known cell) once, fewer than the two sides' cells; each side's counts are those of
    its own call. Weights that are not whole numbers are summed side by side, the same too."""
    if native and NATIVE.kernels() is None:
        pytest.skip("resample kernels not built")
    if not native:
        monkeypatch.setenv("MLSQL_NATIVE", "0")
    rng = np.random.default_rng(21)
    n_tuples, n_labels = 500, 12
    sides, sets = _models_of_the_same_rows(rng, n_tuples, n_labels)
    union = 0  # the oracle: per tuple, the labels of the sides that know it, and a known cell
    for a, p1, p2, known1, known2 in sets:
        labels = (a | p1 if known1 else set()) | (a | p2 if known2 else set())
        union += len(labels) + (known1 or known2)
    own = sum(len(s.joined[None]) for s in sides)
    assert union < own
    widths = []
    per_label = LL.per_label
    monkeypatch.setattr(
        LL, "per_label", lambda w, c, n: widths.append(len(c)) or per_label(w, c, n)
    )
    for w in (
        rng.poisson(1.0, (9, n_tuples)).astype(float),
        rng.random((3, n_tuples)) * 3,  # not whole numbers
    ):
        pair = LL.Pair(sides)
        together = [pair.counts(s, w, None) for s in sides]
        alone = [s.counts(w, None) for s in sides]
        for (known, counts), (known_, counts_) in zip(alone, together, strict=True):
            assert known.tolist() == known_.tolist()
            assert [c.tolist() for c in counts] == [c.tolist() for c in counts_]
    # whole weights: the pattern cells, then each side alone; other weights: side by side
    first, second = (len(s.joined[None]) for s in sides)
    assert widths == [union, first, second, own, first, second]


def test_rows_spread_over_threads_are_cut_at_whole_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`NATIVE.spread`: parts of whole blocks (the last one short), at most THREADS,
    every row once, their results in row order."""
    monkeypatch.setattr(NATIVE, "THREADS", 3)
    for n_rows, block, expected in (
        (100, 16, [(0, 48), (48, 96), (96, 100)]),
        (37, 16, [(0, 16), (16, 32), (32, 37)]),
        (20, 16, [(0, 16), (16, 20)]),
        (16, 16, [(0, 16)]),
        (0, 16, [(0, 0)]),
    ):
        seen: list[tuple[int, int]] = []

        def run(lo: int, hi: int, seen: list[tuple[int, int]] = seen) -> int:
            seen.append((lo, hi))
            return lo

        assert NATIVE.spread(run, n_rows, block) == [lo for lo, _ in expected]
        assert sorted(seen) == expected


@needs_native
@pytest.mark.parametrize("threads", [2, 3])
def test_kernel_draws_summed_on_threads_are_one_threads(
    monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    """The drawn sums of a batch cut over threads (each its resamples' states and rows) are
    the sums of one call and the oracle's sums of the matrix."""
    m = np.array([1.0, 3.0, 1.0, 1.0, 2.0, 1.0] * 500)
    rng = np.random.default_rng(5)
    n_labels = 9
    codes = rng.integers(0, len(m) * n_labels, 4 * len(m))
    pairs = sorted({(int(c) // n_labels, int(c) % n_labels) for c in codes})
    tuples, labels = (np.array(x, dtype=np.int64) for x in zip(*pairs, strict=True))
    drawn = NUM.drawn(np.random.default_rng(7), m, 37)
    assert drawn is not None
    monkeypatch.setattr(NATIVE, "THREADS", 1)
    one = drawn.label_sums(tuples, labels, n_labels)
    monkeypatch.setattr(NATIVE, "THREADS", threads)
    spread = drawn.label_sums(tuples, labels, n_labels)
    assert one is not None and spread is not None
    assert spread.tolist() == one.tolist() == _oracle_sums(drawn.dense(), pairs, n_labels)


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("m", [[1.0] * 30, [1.0, 3.0, 1.0, 0.5, 1.0, 1.0, 2.0, 1.0]])
def test_draws_into_a_buffer_are_the_fresh_draws(
    monkeypatch: pytest.MonkeyPatch, native: bool, m: list[float]
) -> None:
    if native and NATIVE.kernels() is None:
        pytest.skip("resample kernels not built")
    if not native:
        monkeypatch.setenv("MLSQL_NATIVE", "0")
    m_ = np.array(m)
    fresh = NUM.draw(np.random.default_rng(4), m_, 50)
    buffer = np.full((60, len(m)), -1.0)
    into = NUM.draw(np.random.default_rng(4), m_, 50, buffer[:50])
    assert np.shares_memory(into, buffer) and into.tolist() == fresh.tolist()
    assert (buffer[50:] == -1).all()
    one = m_ == 1  # the m = 1 columns: the inverse CDF of the stream's first uniforms
    u = np.random.default_rng(4).random((50, int(one.sum())))
    assert into[:, one].tolist() == [[_oracle_poisson(x) for x in row] for row in u.tolist()]


@needs_native
@pytest.mark.parametrize("n_resamples", [1, 15, 16, 17, 37])
@pytest.mark.parametrize(
    "m",
    [
        [1.0] * 2100,  # a tile and more, every tuple drawn in the kernel
        [1.0, 3.0, 1.0, 0.5, 1.0, 1.0, 2.0, 1.0] * 300,  # other tuples' draws handed over
        [2.0, 5.0, 0.5],  # none of m = 1
        [1.0, 3e9, 1.0, 1.0],  # a draw of 2^31 or more: the sums of the matrix in doubles
    ],
)
def test_draws_made_in_the_kernel_are_the_matrix_and_its_sums(
    monkeypatch: pytest.MonkeyPatch, n_resamples: int, m: list[float]
) -> None:
    """A :class:`NUM.Drawn` batch: the same draws as the portable matrix (the m = 1 tuples the
    inverse CDF of the stream's uniforms, resample-major), the stream left where it leaves it,
    and per-label sums of the kernel's own draws equal the oracle's sums of the matrix."""
    m_ = np.array(m)
    drawn_rng = np.random.default_rng(12)
    drawn = NUM.drawn(drawn_rng, m_, n_resamples)
    assert drawn is not None and drawn.shape == (n_resamples, len(m))
    after = drawn_rng.random(3).tolist()
    with monkeypatch.context() as patch:
        patch.setenv("MLSQL_NATIVE", "0")
        rng = np.random.default_rng(12)
        matrix = NUM.draw(rng, m_, n_resamples)
        assert rng.random(3).tolist() == after
    one = m_ == 1
    u = np.random.default_rng(12).random((n_resamples, int(one.sum())))
    assert matrix[:, one].tolist() == [[_oracle_poisson(x) for x in row] for row in u.tolist()]
    rng = np.random.default_rng(3)
    n_labels = 7
    codes = rng.integers(0, len(m) * n_labels, 3 * len(m))
    pairs = sorted({(int(c) // n_labels, int(c) % n_labels) for c in codes})
    tuples, labels = (np.array(x, dtype=np.int64) for x in zip(*pairs, strict=True))
    cells = LL.Cells.in_tuple_order(tuples, labels, distinct=True)
    sums = LL.per_label(drawn, cells, n_labels)
    assert sums.tolist() == _oracle_sums(matrix, pairs, n_labels)
    assert drawn.dense().tolist() == matrix.tolist()


@needs_native
@pytest.mark.parametrize("lazy_resamples", [1, 16, 40, 128])
@pytest.mark.long_cases("1")
def test_compare_of_draws_made_in_the_kernel_is_the_portable_compare(
    monkeypatch: pytest.MonkeyPatch, lazy_resamples: int
) -> None:
    """A compare of macro averages over many batches of the stream (a few tuples of m > 1
    among them), their draws made in the kernel and joined a few batches at a time: the rows
    of the portable path (the matrices, ``numpy.add.at``) to the last digit."""
    import pyarrow as pa

    import mlsql
    from mlsql._resample import run

    rng = random.Random(4)
    labels = ["a", "b", "c", "d", "e"]
    rows: dict[str, list[Any]] = {"id": [], "model": [], "actual": [], "predicted": []}
    for i in range(100):  # small lists of 5 labels: many pairs of lists recur (m > 1)
        actual = rng.sample(labels, rng.randint(0, 2))
        for model in "ABC":
            rows["id"].append(i)
            rows["model"].append(model)
            rows["actual"].append(actual)
            rows["predicted"].append(rng.sample(labels, rng.randint(0, 2)))
    table = pa.table(rows)
    monkeypatch.setattr(run, "BATCH_CELLS", 7 * 100)  # batches of 7 resamples or more
    monkeypatch.setattr(run, "LAZY_RESAMPLES", lazy_resamples)

    def call() -> list[Any]:
        out = mlsql.compare(
            table, "actual", "predicted", ["macro_f1", "weighted_recall"], n_resamples=45
        )
        return out.fetchall()

    native, portable = _both(monkeypatch, call)
    assert native == portable


def test_compare_of_label_lists_leaves_arrows_query_engine_unimported() -> None:
    """The models' id counts need no Arrow group_by (it imports Arrow's query engine, acero)."""
    script = (
        "import sys, pyarrow as pa, mlsql\n"
        "rows = pa.table({'id': [1, 2, 1, 2], 'model': ['A', 'A', 'B', 'B'],\n"
        "    'actual': [['x'], ['y']] * 2, 'predicted': [['x'], ['x'], ['y'], ['y']]})\n"
        "out = mlsql.compare(rows, 'actual', 'predicted', ['macro_f1'], n_resamples=20)\n"
        "assert out.fetchall()[0][:2] == ('B', 'macro_f1')\n"
        "print(sorted(m for m in sys.modules if m.startswith('pyarrow.acero')))\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]"


def _oracle_poisson(u: float) -> int:
    cdf = list(np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(30)]))
    return bisect.bisect_right(cdf, u)


@needs_native
@pytest.mark.parametrize("m", [[1.0] * 40, [1.0, 3.0, 1.0, 0.5, 1.0, 1.0, 2.0, 1.0]])
def test_poisson_draws_native_equal_portable_and_oracle(
    monkeypatch: pytest.MonkeyPatch, m: list[float]
) -> None:
    m_ = np.array(m)
    native, portable = _both(monkeypatch, lambda: NUM.draw(np.random.default_rng(7), m_, 500))
    assert np.array_equal(native, portable)
    # the m = 1 columns are the inverse CDF of the stream's first uniforms, resample-major
    one = m_ == 1
    u = np.random.default_rng(7).random((500, int(one.sum())))
    expected = [[_oracle_poisson(x) for x in row] for row in u.tolist()]
    assert native[:, one].tolist() == expected


@needs_native
@pytest.mark.parametrize("bits", [np.random.PCG64, np.random.MT19937])
def test_native_draws_leave_the_stream_where_the_portable_ones_do(
    monkeypatch: pytest.MonkeyPatch, bits: Callable[[int], np.random.BitGenerator]
) -> None:
    """The kernel makes a PCG64's raw bits itself (other generators hand them over): the
    draws and every later number of the stream are the portable path's."""
    m = np.array([1.0, 2.0, 1.0, 1.0, 7.0, 1.0])

    def run() -> tuple[list[list[float]], list[list[float]], list[float]]:
        rng = np.random.Generator(bits(11))
        first = NUM.draw(rng, m, 37).tolist()
        second = NUM.poisson_one(rng, (3, 1001)).tolist()
        return first, second, rng.random(4).tolist()

    native, portable = _both(monkeypatch, run)
    assert native == portable
    if bits is np.random.PCG64:  # its uniforms are (raw >> 11) / 2^53 (not MT19937's)
        u = np.random.Generator(bits(11)).random((37, 4))
        assert [row[j] for row in native[0] for j in (0, 2, 3, 5)] == [
            _oracle_poisson(x) for x in u.ravel().tolist()
        ]


# ---------------------------------------------------------------- under AddressSanitizer

#: the kernels of a sanitized build (its folder: argv[1]) against the portable code, on shapes
#: at the edges of their blocks and tiles (one tuple, a tile and one, fewer resamples than a
#: block, labels without cells); any read or write outside a buffer stops AddressSanitizer
ASAN_SCRIPT = """
import os, sys
from pathlib import Path
import numpy as np
from mlsql._resample import labels as LL, native as N, numbers as NUM
N.FOLDER = Path(sys.argv[1])
N._load.cache_clear()
assert N.kernels() is not None

def both(call):
    native = call()
    os.environ["MLSQL_NATIVE"] = "0"
    try:
        return native, call()
    finally:
        del os.environ["MLSQL_NATIVE"]

rng = np.random.default_rng(5)
shapes = [(1, 1, 1, 1), (5000, 3, 9000, 17), (4097, 40, 20000, 8), (3, 500, 2, 9),
          (2049, 7, 1, 16), (2048, 1, 3000, 7), (10, 4, 0, 3)]
for n_tuples, n_labels, n_cells, n_resamples in shapes:
    t, l = rng.integers(0, n_tuples, n_cells), rng.integers(0, n_labels, n_cells)
    keys = np.unique(t * n_labels + l)
    cells = LL.Cells.of(keys // n_labels, keys % n_labels)
    w = rng.poisson(1.0, (n_resamples, n_tuples)) * rng.random(n_tuples)
    native, portable = both(lambda: LL.per_label(w, cells, n_labels))
    assert native.tolist() == portable.tolist(), (n_tuples, n_labels, n_cells, n_resamples)
    # the integer sums: whole-number weights over distinct cells
    whole = LL.Cells.of(keys // n_labels, keys % n_labels, distinct=True)
    draws = rng.poisson(1.0, (n_resamples, n_tuples)).astype(float)
    native, portable = both(lambda: LL.per_label(draws, whole, n_labels))
    assert native.tolist() == portable.tolist(), (n_tuples, n_labels, n_cells, n_resamples)
for m in ([1.0] * 3, [1.0, 4.0, 1.0, 0.5], [2.0, 3.0], []):
    for n in (1, 7, 33):
        native, portable = both(lambda: NUM.draw(np.random.default_rng(n), np.array(m), n))
        assert native.tolist() == portable.tolist(), (m, n)
# draws made in the kernel's tiles: the sums of the matrix they stand for
for n_tuples, n_labels, n_cells, n_resamples in shapes:
    t, l = rng.integers(0, n_tuples, n_cells), rng.integers(0, n_labels, n_cells)
    keys = np.unique(t * n_labels + l)
    whole = LL.Cells.in_tuple_order(keys // n_labels, keys % n_labels, distinct=True)
    m = np.where(rng.random(n_tuples) < 0.1, 3.0, 1.0)
    drawn = NUM.drawn(np.random.default_rng(n_tuples), m, n_resamples)
    matrix = drawn.dense()
    assert LL.per_label(drawn, whole, n_labels).tolist() == LL.per_label(matrix, whole, n_labels).tolist()
print("ok")
"""


def _libasan() -> str | None:
    gcc = shutil.which("gcc")
    if gcc is None or not sys.platform.startswith("linux"):
        return None
    path = subprocess.run(
        [gcc, "-print-file-name=libasan.so"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


@pytest.mark.long
@pytest.mark.skipif(_libasan() is None, reason="AddressSanitizer needs gcc's libasan on Linux")
def test_kernels_under_address_sanitizer(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "build_resample", ROOT / "native" / "build_resample.py"
    )
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    build.build(
        tmp_path,
        os.environ.get("CC") or "gcc",
        ["-fsanitize=address", "-fno-omit-frame-pointer", "-g", "-O1"],
    )
    env = dict(os.environ)
    env.update(
        {
            "LD_PRELOAD": _libasan() or "",
            "ASAN_OPTIONS": "detect_leaks=0",
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
        }
    )
    env.pop("MLSQL_NATIVE", None)
    result = subprocess.run(
        [sys.executable, "-c", ASAN_SCRIPT, str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert "AddressSanitizer" not in result.stderr, result.stderr[-4000:]
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-4000:]
