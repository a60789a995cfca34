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
ROOT = Path(__file__).resolve().parents[1]

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
for m in ([1.0] * 3, [1.0, 4.0, 1.0, 0.5], [2.0, 3.0], []):
    for n in (1, 7, 33):
        native, portable = both(lambda: NUM.draw(np.random.default_rng(n), np.array(m), n))
        assert native.tolist() == portable.tolist(), (m, n)
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
