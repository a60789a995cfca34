"""Where ``slices`` spends its time in DuckDB, and what a shared draw would save.

Prints CPU seconds (this process, DuckDB's threads included) of, on the benchmark's
strings file with its three stored candidates (``cases.SLICED``):

- the statistics query as ``mlsql.slices`` runs it (7 GROUPING SETS), and one
  GROUP BY of all the candidates and statistics (the sets could be rolled up
  from its few rows);
- a numpy prototype of the resampling on the slices' statistic tuples: each
  slice and its rest drawn anew (as ``mlsql._slices.stats`` does, without its
  masked arrays), and the whole data drawn once with each slice a binomial
  thinning of it (Poisson splitting: the same distribution, other numbers).

Run from the repository root after ``benchmarks/run.py`` generated the data::

    python benchmarks/slices_draws.py --rows 10000000
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))

from cases import SLICED

N_RESAMPLES = 1000
KEYS = "c1 k0, c2 k1, c3 k2"
STATS = (
    "_mlsql_tp(actual, predicted) s0, _mlsql_n_actual(actual, predicted) s1, "
    "_mlsql_n_predicted(actual, predicted) s2"
)
SETS = (
    "(k0, s0, s1, s2), (k1, s0, s1, s2), (k2, s0, s1, s2), (k0, k1, s0, s1, s2), "
    "(k0, k2, s0, s1, s2), (k1, k2, s0, s1, s2), (s0, s1, s2)"
)


def cpu() -> float:
    """CPU seconds of this process so far, every thread's."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def best(fn: Callable[[], Any], repeat: int = 2) -> tuple[float, Any]:
    """The least CPU seconds of ``repeat`` runs of ``fn``, and its last result."""
    times, out = [], None
    for _ in range(repeat):
        start = cpu()
        out = fn()
        times.append(cpu() - start)
    return min(times), out


def micro_f1(sums: np.ndarray) -> np.ndarray:
    """2 tp / (|A| + |P|) of each row of sums (tp, |A|, |P|)."""
    return 2 * sums[..., 0] / (sums[..., 1] + sums[..., 2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, required=True)
    args = parser.parse_args()
    import mlsql

    path = f"benchmarks/data/rows_{args.rows}/strings.parquet"
    con = mlsql.connect()
    inner = f"SELECT {KEYS}, {STATS} FROM ({SLICED.format(f=path)})"
    sets_sql = (
        "SELECT GROUPING(k0, k1, k2) g, k0, k1, k2, s0, s1, s2, count(*) m "
        f"FROM ({inner}) GROUP BY GROUPING SETS ({SETS})"
    )
    one_sql = f"SELECT k0, k1, k2, s0, s1, s2, count(*) FROM ({inner}) GROUP BY ALL"
    took, rows = best(lambda: con.sql(sets_sql).fetchall())
    print(f"7 grouping sets: {took:.2f} CPU s, {len(rows)} rows")
    took, found = best(lambda: con.sql(one_sql).fetchall())
    print(f"one GROUP BY: {took:.2f} CPU s, {len(found)} rows")

    whole: dict[tuple[int, ...], int] = {}
    parts: dict[tuple[Any, ...], dict[tuple[int, ...], int]] = {}
    for g, k0, k1, k2, s0, s1, s2, m in rows:
        key = (int(s0), int(s1), int(s2))
        if g == 7:
            whole[key] = whole.get(key, 0) + m
        else:
            parts.setdefault((g, k0, k1, k2), {})[key] = m
    tuples = sorted(whole)
    index = {t: i for i, t in enumerate(tuples)}
    stats = np.array(tuples, dtype=float)
    counts = np.array([whole[t] for t in tuples], dtype=float)
    slices = [
        (np.array([index[t] for t in part]), np.array(list(part.values()), dtype=float))
        for part in parts.values()
    ]
    print(f"{len(tuples)} distinct statistic tuples, {len(slices)} slices")
    rng = np.random.default_rng(0)

    def anew() -> None:
        for idx, m in slices:
            rest = counts.copy()
            rest[idx] -= m
            part = rng.poisson(m, (N_RESAMPLES, len(m))) @ stats[idx]
            other = rng.poisson(rest, (N_RESAMPLES, len(rest))) @ stats
            _ = micro_f1(part) - micro_f1(other)

    def shared() -> None:
        drawn = rng.poisson(counts, (N_RESAMPLES, len(counts)))
        total = drawn @ stats
        for idx, m in slices:
            part = rng.binomial(drawn[:, idx], m / counts[idx]) @ stats[idx]
            _ = micro_f1(part) - micro_f1(total - part)

    print(f"draws and sums, each slice and its rest anew: {best(anew)[0]:.2f} CPU s")
    print(f"draws and sums, the whole drawn once, slices thinned: {best(shared)[0]:.2f} CPU s")


if __name__ == "__main__":
    main()
