"""Generate synthetic multi-label prediction data for the mlsql benchmarks.

Usage::

    python benchmarks/generate.py --rows 10000000 --out benchmarks/data/rows_10000000

Three Parquet files are written, row for row the same data:

``strings.parquet``
    ``model`` (string, ``m0``..``m3``), ``actual`` and ``predicted``
    (``list<string>``, labels ``tag0000``..``tag0999``), and ``c1``, ``c2``,
    ``c3``: text columns of 10 values each (``"0"``..``"9"``, uniform, from a
    generator of their own), the candidates of the ``slices`` cases.
``ints.parquet``
    The same rows with ``int64`` labels ``0``..``999``.
``dirty_strings.parquet``
    ``strings.parquet`` with the defects real data sometimes has: about 5 % of
    rows carry one duplicated label, about 1 % one NULL element and about
    0.5 % a NULL list (in ``actual`` or ``predicted``, chosen at random).

Labels are drawn from a Zipf-like distribution over a 1,000-label
vocabulary. Each row has 1-5 actual and 1-5 predicted labels, without
duplicates; about 60 % of the predicted labels are true (the precision
differs by model, from about 0.66 for ``m0`` to about 0.52 for ``m3``).

Everything is vectorized with numpy, batch by batch, and each batch is
written as one Parquet row group, so memory stays bounded whatever the
number of rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

VOCAB_SIZE = 1_000
MAX_LABELS = 5
MODELS = ("m0", "m1", "m2", "m3")
#: Probability that a predicted label is a true one, per model.
MODEL_PRECISION = np.array([0.86, 0.78, 0.70, 0.62])
#: Zipf exponent of the label distribution.
ZIPF_S = 1.05
#: Candidates drawn per row before removing duplicates.
CANDIDATES = 16
FILES = ("strings", "ints", "dirty_strings")

DUPLICATE_RATE = 0.05
NULL_ELEMENT_RATE = 0.01
NULL_LIST_RATE = 0.005


@dataclass(frozen=True)
class Batch:
    """One batch of generated rows, as padded label-id matrices.

    Attributes
    ----------
    model : numpy.ndarray
        Model index per row, shape ``(n,)``.
    actual, predicted : numpy.ndarray
        Label ids, shape ``(n, MAX_LABELS)``; only the first ``n_actual`` or
        ``n_predicted`` columns of a row are used.
    n_actual, n_predicted : numpy.ndarray
        Number of labels per row, 1..``MAX_LABELS``.
    """

    model: np.ndarray
    actual: np.ndarray
    predicted: np.ndarray
    n_actual: np.ndarray
    n_predicted: np.ndarray


def zipf_table(size: int = VOCAB_SIZE, s: float = ZIPF_S, bits: int = 20) -> np.ndarray:
    """Quantile table of a Zipf-like law over ``size`` labels.

    Indexing the table with uniform integers in ``[0, 2**bits)`` samples the
    law; that is much faster than ``searchsorted`` on random floats. With
    the defaults every label keeps a probability within 1e-6 of its own.

    Parameters
    ----------
    size : int
        Number of labels.
    s : float
        Exponent: the label of rank ``k`` has weight ``1 / (k + 1) ** s``.
    bits : int
        The table has ``2**bits`` entries.

    Returns
    -------
    numpy.ndarray
        ``int16`` label ids, non-decreasing.
    """
    weights = 1.0 / np.arange(1, size + 1, dtype=np.float64) ** s
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    quantiles = (np.arange(2**bits, dtype=np.float64) + 0.5) / 2**bits
    return np.searchsorted(cdf, quantiles).astype(np.int16)


def _draw(rng: np.random.Generator, table: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Draw label ids from a quantile table.

    Parameters
    ----------
    rng : numpy.random.Generator
        Random source.
    table : numpy.ndarray
        As returned by :func:`zipf_table`.
    shape : tuple of int
        Shape of the result.

    Returns
    -------
    numpy.ndarray
        ``int16`` label ids.
    """
    return table[rng.integers(0, len(table), shape, dtype=np.int32)]


def _distinct_first(cand: np.ndarray, excluded: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Keep each row's first ``MAX_LABELS`` distinct, allowed candidates.

    The candidates are independent draws, so their distinct values in order
    of first appearance are a weighted sample without replacement, already
    in random order.

    Parameters
    ----------
    cand : numpy.ndarray
        Candidate label ids, shape ``(c, n)`` (one row per draw, one column
        per data row: column-wise comparisons are much faster).
    excluded : numpy.ndarray or None
        Label ids, shape ``(k, n)``, that must not be chosen; ``-1`` marks an
        unused slot.

    Returns
    -------
    labels : numpy.ndarray
        Shape ``(n, MAX_LABELS)``: the first ``available`` columns of each
        row are distinct allowed labels; the rest is ``-1``.
    available : numpy.ndarray
        Number of labels found per row, at most ``MAX_LABELS``.
    """
    c, n = cand.shape
    bad = np.zeros(cand.shape, dtype=bool)
    for j in range(c):
        for i in range(j):
            bad[j] |= cand[i] == cand[j]
        if excluded is not None:
            for row in excluded:
                bad[j] |= cand[j] == row
    good = ~bad
    pos = np.cumsum(good, axis=0, dtype=np.int8) - 1
    keep = good & (pos < MAX_LABELS)
    out = np.full((n, MAX_LABELS), -1, dtype=cand.dtype)
    rows = np.broadcast_to(np.arange(n), cand.shape)
    out[rows[keep], pos[keep]] = cand[keep]
    return out, keep.sum(axis=0)


def generate_batch(rng: np.random.Generator, n: int, table: np.ndarray) -> Batch:
    """Generate ``n`` clean rows.

    Parameters
    ----------
    rng : numpy.random.Generator
        Random source.
    n : int
        Number of rows.
    table : numpy.ndarray
        Label distribution, as returned by :func:`zipf_table`.

    Returns
    -------
    Batch
        The generated rows.
    """
    model = rng.integers(0, len(MODELS), n, dtype=np.int8)

    # Actual labels: distinct Zipf draws, 1-5 per row.
    actual, avail = _distinct_first(_draw(rng, table, (CANDIDATES, n)), None)
    n_actual = np.minimum(rng.integers(1, MAX_LABELS + 1, n), avail)

    # Predicted: k_true labels taken from actual (its columns are already in
    # random order), the rest distinct Zipf draws that are not in actual.
    n_pred = rng.integers(1, MAX_LABELS + 1, n)
    k_true = np.minimum(rng.binomial(n_pred, MODEL_PRECISION[model]), n_actual)
    cols = np.arange(MAX_LABELS)
    actual_masked = np.where(cols < n_actual[:, None], actual, -1)
    false, avail = _distinct_first(
        _draw(rng, table, (CANDIDATES, n)), np.ascontiguousarray(actual_masked.T)
    )
    k_false = np.minimum(n_pred - k_true, avail)
    # Every row predicts something: fall back on one true label (all draws
    # hitting actual labels is rare, ~1e-7 per row, but happens at 100M rows).
    k_true = np.where(k_true + k_false == 0, 1, k_true)
    n_pred = k_true + k_false

    # Assemble predicted = actual[:k_true] ++ false[:k_false].
    shifted = np.clip(cols[None, :] - k_true[:, None], 0, MAX_LABELS - 1)
    false_part = np.take_along_axis(false, shifted, axis=1)
    predicted = np.where(cols < k_true[:, None], actual, false_part)
    predicted = _shuffle_prefix(rng, predicted, n_pred)
    return Batch(model, actual, predicted, n_actual, n_pred)


def _shuffle_prefix(rng: np.random.Generator, mat: np.ndarray, n_used: np.ndarray) -> np.ndarray:
    """Shuffle the first ``n_used`` columns of every row, in place of a loop.

    Parameters
    ----------
    rng : numpy.random.Generator
        Random source.
    mat : numpy.ndarray
        Matrix of shape ``(n, k)``.
    n_used : numpy.ndarray
        Number of used columns per row.

    Returns
    -------
    numpy.ndarray
        The matrix with each row's used prefix randomly permuted.
    """
    keys = rng.random(mat.shape, dtype=np.float32)
    keys[np.arange(mat.shape[1])[None, :] >= n_used[:, None]] = 2.0
    return np.take_along_axis(mat, np.argsort(keys, axis=1), axis=1)


def list_array(
    mat: np.ndarray,
    counts: np.ndarray,
    values: pa.Array | None = None,
    valid: np.ndarray | None = None,
    list_null: np.ndarray | None = None,
) -> pa.ListArray:
    """Build a list array from a padded matrix.

    Parameters
    ----------
    mat : numpy.ndarray
        Label ids, shape ``(n, k)``.
    counts : numpy.ndarray
        Number of used columns per row (ignored for NULL lists).
    values : pyarrow.Array, optional
        Vocabulary to map the ids through (string labels); int64 ids when
        omitted.
    valid : numpy.ndarray, optional
        Element validity, shape ``(n, k)``; False makes a NULL element.
    list_null : numpy.ndarray, optional
        True where the whole list is NULL.

    Returns
    -------
    pyarrow.ListArray
        ``list<string>`` or ``list<int64>``.
    """
    counts = counts.astype(np.int64)
    if list_null is not None:
        counts = np.where(list_null, 0, counts)
    used = np.arange(mat.shape[1])[None, :] < counts[:, None]
    ids = mat[used]
    flat: pa.Array
    if values is None:
        mask = None if valid is None else ~valid[used]
        flat = pa.array(ids.astype(np.int64), type=pa.int64(), mask=mask)
    else:
        indices = pa.array(ids.astype(np.int32), mask=None if valid is None else ~valid[used])
        flat = values.take(indices)
    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    mask = None if list_null is None else pa.array(list_null)
    return pa.ListArray.from_arrays(pa.array(offsets), flat, mask=mask)


def dirty(
    rng: np.random.Generator, batch: Batch
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], ...]:
    """Inject duplicates, NULL elements and NULL lists into a clean batch.

    Parameters
    ----------
    rng : numpy.random.Generator
        Random source.
    batch : Batch
        Clean rows.

    Returns
    -------
    tuple
        For ``actual`` then ``predicted``: ``(matrix, counts, valid,
        list_null)`` ready for :func:`list_array`.
    """
    n = len(batch.model)
    kind = rng.random(n)
    is_dup = kind < DUPLICATE_RATE
    is_null_el = (kind >= DUPLICATE_RATE) & (kind < DUPLICATE_RATE + NULL_ELEMENT_RATE)
    lo = DUPLICATE_RATE + NULL_ELEMENT_RATE
    is_null_list = (kind >= lo) & (kind < lo + NULL_LIST_RATE)
    in_actual = rng.random(n) < 0.5
    out = []
    for mat, counts, here in (
        (batch.actual, batch.n_actual, in_actual),
        (batch.predicted, batch.n_predicted, ~in_actual),
    ):
        grow = (is_dup | is_null_el) & here
        wide = np.concatenate([mat, mat[:, :1]], axis=1)  # extra slot duplicates column 0
        rows = np.arange(n)
        wide[rows, counts] = np.where(grow, mat[:, 0], wide[rows, counts])
        valid = np.ones(wide.shape, dtype=bool)
        valid[rows, counts] = ~(is_null_el & here)
        new_counts = counts + grow
        # Shuffle so the duplicate or NULL is not always last.
        keys = rng.random(wide.shape, dtype=np.float32)
        keys[np.arange(wide.shape[1])[None, :] >= new_counts[:, None]] = 2.0
        order = np.argsort(keys, axis=1)
        wide = np.take_along_axis(wide, order, axis=1)
        valid = np.take_along_axis(valid, order, axis=1)
        out.append((wide, new_counts, valid, is_null_list & here))
    return tuple(out)


SCHEMA_STR = pa.schema(
    [
        ("model", pa.string()),
        ("actual", pa.list_(pa.string())),
        ("predicted", pa.list_(pa.string())),
    ]
)
#: the strings file's slice candidates (stored columns, as a user's table has them)
SLICE_COLUMNS = ("c1", "c2", "c3")
SCHEMA_STRINGS = pa.schema([*SCHEMA_STR, *(pa.field(c, pa.string()) for c in SLICE_COLUMNS)])
SCHEMA_INT = pa.schema(
    [("model", pa.string()), ("actual", pa.list_(pa.int64())), ("predicted", pa.list_(pa.int64()))]
)


def generate(
    rows: int, out: Path, seed: int = 42, batch_rows: int = 262_144, progress: bool = True
) -> dict[str, Path]:
    """Write ``strings.parquet``, ``ints.parquet`` and ``dirty_strings.parquet``.

    Parameters
    ----------
    rows : int
        Number of rows in each file.
    out : pathlib.Path
        Output directory, created if needed.
    seed : int
        Random seed; the same seed gives the same files.
    batch_rows : int
        Rows generated and written at a time (one Parquet row group each).
    progress : bool
        Print progress to stderr.

    Returns
    -------
    dict of str to pathlib.Path
        The written files, keyed by ``strings``, ``ints``, ``dirty_strings``.
    """
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    slice_rng = np.random.default_rng([seed, 1])  # the labels' draws stay as they were
    digits = pa.array([str(i) for i in range(10)], type=pa.string())
    quantiles = zipf_table()
    vocab = pa.array([f"tag{i:04d}" for i in range(VOCAB_SIZE)], type=pa.string())
    models = pa.array(MODELS, type=pa.string())
    paths = {name: out / f"{name}.parquet" for name in FILES}
    tmp = {name: p.with_suffix(".parquet.tmp") for name, p in paths.items()}
    writers = {
        "strings": pq.ParquetWriter(tmp["strings"], SCHEMA_STRINGS),
        "ints": pq.ParquetWriter(tmp["ints"], SCHEMA_INT),
        "dirty_strings": pq.ParquetWriter(tmp["dirty_strings"], SCHEMA_STR),
    }
    start = time.perf_counter()
    done = 0
    pending: list[Future[None]] = []
    pool = ThreadPoolExecutor(max_workers=len(FILES))
    try:
        while done < rows:
            n = min(batch_rows, rows - done)
            b = generate_batch(rng, n, quantiles)
            model = models.take(pa.array(b.model.astype(np.int32)))
            tables = {
                "strings": pa.Table.from_arrays(
                    [
                        model,
                        list_array(b.actual, b.n_actual, vocab),
                        list_array(b.predicted, b.n_predicted, vocab),
                        *(
                            digits.take(pa.array(slice_rng.integers(0, 10, n)))
                            for _ in SLICE_COLUMNS
                        ),
                    ],
                    schema=SCHEMA_STRINGS,
                ),
                "ints": pa.Table.from_arrays(
                    [
                        model,
                        list_array(b.actual, b.n_actual),
                        list_array(b.predicted, b.n_predicted),
                    ],
                    schema=SCHEMA_INT,
                ),
            }
            (am, ac, av, an), (pm, pc, pv, pn) = dirty(rng, b)
            tables["dirty_strings"] = pa.Table.from_arrays(
                [model, list_array(am, ac, vocab, av, an), list_array(pm, pc, vocab, pv, pn)],
                schema=SCHEMA_STR,
            )
            # Parquet encoding releases the GIL: write this batch while the
            # next one is generated, keeping at most two batches in memory.
            for fut in pending:
                fut.result()
            pending = [
                pool.submit(writers[name].write_table, table, row_group_size=n)
                for name, table in tables.items()
            ]
            done += n
            if progress and (done == rows or done // batch_rows % 40 == 0):
                el = time.perf_counter() - start
                print(f"  {done:>13,} rows  {el:7.1f} s", file=sys.stderr)
        for fut in pending:
            fut.result()
    except BaseException:
        wait(pending)
        for w in writers.values():
            w.close()
        for p in tmp.values():
            p.unlink(missing_ok=True)
        raise
    finally:
        pool.shutdown()
    for w in writers.values():
        w.close()
    for name in FILES:
        os.replace(tmp[name], paths[name])
    return paths


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point.

    Parameters
    ----------
    argv : list of str, optional
        Arguments; ``sys.argv[1:]`` when omitted.

    Returns
    -------
    int
        Exit status.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, required=True, help="rows per file")
    parser.add_argument("--out", type=Path, required=True, help="output directory")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    parser.add_argument(
        "--batch-rows",
        type=int,
        default=262_144,
        help="rows per batch and per Parquet row group (default 262144)",
    )
    args = parser.parse_args(argv)
    if args.rows < 1:
        parser.error("--rows must be at least 1")
    start = time.perf_counter()
    paths = generate(args.rows, args.out, args.seed, args.batch_rows)
    elapsed = time.perf_counter() - start
    for p in paths.values():
        print(f"{p}  {p.stat().st_size / 1e6:,.1f} MB")
    print(f"generated {args.rows:,} rows in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
