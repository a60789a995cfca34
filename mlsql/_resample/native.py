"""The resample kernels in C (``native/resample.c``), loaded with ctypes, or None.

:func:`kernels` gives the loaded library when it is built and ``MLSQL_NATIVE``
does not switch native code off (read at each call); the callers
(:func:`mlsql._resample.labels.per_label`, :func:`mlsql._resample.numbers.draw`,
:func:`mlsql._resample.numbers.drawn`)
then give exactly the numbers of their portable numpy code, faster.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any

import numpy as np

from mlsql._native_switch import FOLDER, switched_off

_DOUBLES = np.ctypeslib.ndpointer(np.float64, flags="C_CONTIGUOUS")
_INTS = np.ctypeslib.ndpointer(np.int64, flags="C_CONTIGUOUS")
_BITS = np.ctypeslib.ndpointer(np.uint64, flags="C_CONTIGUOUS")
_N = ctypes.c_int64

#: resamples ``mlsql_label_sums_drawn`` sums in one pass (``MLSQL_DRAWN_BLOCK`` in
#: native/resample.c): parts of a batch cut at its multiples keep its blocks whole
DRAWN_BLOCK = 16
#: threads a kernel's rows are spread over (the machine's cores, at most 8): ctypes releases
#: the GIL while a kernel runs
THREADS = min(8, os.cpu_count() or 1)


def spread(run: Callable[[int, int], int], n_rows: int, block: int) -> list[int]:
    """``run(lo, hi)`` over rows ``lo:hi`` of ``n_rows``, cut at multiples of ``block`` into
    at most :data:`THREADS` parts run at once; their return values, in row order. Each part
    must read and write only its own rows, so the result is that of one call."""
    parts = min(THREADS, -(-n_rows // block)) if n_rows else 1
    if parts <= 1:
        return [run(0, n_rows)]
    step = -(-n_rows // (parts * block)) * block
    bounds = [(lo, min(lo + step, n_rows)) for lo in range(0, n_rows, step)]
    with ThreadPoolExecutor(len(bounds)) as pool:
        return list(pool.map(lambda b: run(*b), bounds))


@cache
def _load() -> Any:
    """The library, its functions typed; None where it is not built or does not load."""
    found = sorted(FOLDER.glob("mlsql_resample.*")) if FOLDER.is_dir() else []
    if not found:
        return None
    try:
        lib = ctypes.CDLL(str(found[0]))
        if lib.mlsql_resample_version() != 6:
            return None
    except (OSError, AttributeError):
        return None
    lib.mlsql_label_sums.restype = ctypes.c_int64
    lib.mlsql_label_sums.argtypes = [
        *(_DOUBLES, _N, _N),
        *(_INTS, _INTS, _N),
        *(_DOUBLES, _N),
    ]
    lib.mlsql_label_sums_whole.restype = ctypes.c_int64
    lib.mlsql_label_sums_whole.argtypes = lib.mlsql_label_sums.argtypes
    lib.mlsql_poisson_one.restype = None
    lib.mlsql_poisson_one.argtypes = [
        *(_BITS, _N, _N),
        *(_DOUBLES, _DOUBLES, _N),
        *(_DOUBLES, _N, ctypes.c_void_p),
    ]
    lib.mlsql_poisson_one_pcg64.restype = ctypes.c_int64
    lib.mlsql_poisson_one_pcg64.argtypes = [
        *(_BITS, _BITS, _N, _N),
        *(_DOUBLES, _DOUBLES, _N),
        *(_DOUBLES, _N, ctypes.c_void_p),
    ]
    lib.mlsql_resample_has_pcg64.restype = ctypes.c_int64
    lib.mlsql_resample_has_pcg64.argtypes = []
    lib.mlsql_label_sums_drawn.restype = ctypes.c_int64
    lib.mlsql_label_sums_drawn.argtypes = [
        *(_BITS, _BITS, _N, _N),
        *(_INTS, _DOUBLES, _N),
        *(_DOUBLES, _DOUBLES, _N),
        *(_INTS, _INTS, _N),
        *(_DOUBLES, _N),
    ]
    return lib


def kernels() -> Any:
    """The loaded kernels, or None (not built, not loadable, or ``MLSQL_NATIVE=0``).

    Examples
    --------
    >>> import os
    >>> os.environ["MLSQL_NATIVE"] = "0"
    >>> kernels() is None
    True
    >>> del os.environ["MLSQL_NATIVE"]
    """
    return None if switched_off() else _load()
