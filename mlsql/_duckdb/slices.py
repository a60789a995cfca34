"""``slices`` on DuckDB: every slice's statistics in one GROUPING SETS scan, the rest in Python.

Two small queries find the quantile edges of the numeric candidates
(:func:`mlsql._slices.front.bin_positions`); the main one groups each row's
statistics (those ``bootstrap`` groups by: tp, |A|, |P| from mlsql's macros,
the sorted label sets, the (actual, predicted) cell or numbers, and its
weight) by every grouping set of candidates at once, and by none (all the
data). Its few rows go to :mod:`mlsql._slices.front`, which names the
slices, and :mod:`mlsql._slices.stats`, which resamples them.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import duckdb

from mlsql import _label_types as LT
from mlsql._duckdb import resample as R
from mlsql._duckdb.threads import in_this_thread
from mlsql._slices import front
from mlsql._sqlexpr import lit, quote_ident


def _numeric(type_name: str) -> bool:
    """Whether a DuckDB column type is a number (binned into quantiles), not a category."""
    is_list, kind = R._kind(type_name)
    return not is_list and (kind == LT.INTEGER or R._number_kind(kind) in ("float", "decimal"))


def _edge(value: Any) -> str:
    """A bin edge as a SQL literal (a decimal as its digits, which DuckDB reads as a DECIMAL)."""
    return str(value) if isinstance(value, Decimal) else str(lit(value))


def _bin_sql(column: str, cuts: Sequence[Any]) -> str:
    """A row's bin among ``cuts`` (:func:`mlsql._slices.front.bin_of`), NULL for NULL."""
    if not cuts:
        return "CAST(NULL AS INTEGER)"
    c = quote_ident(column)
    steps = " ".join(f"WHEN {c} < {_edge(e)} THEN {i}" for i, e in enumerate(cuts[1:-1]))
    return f"CASE WHEN {c} IS NULL THEN NULL {steps} ELSE {len(cuts) - 2} END"


def _shares(n: int, n_bins: int) -> str:
    """The SQL list of shares whose ``quantile_disc`` over n values is the value at each of
    :func:`~mlsql._slices.front.bin_positions`: (position + 1/2) / n.

    Examples
    --------
    >>> _shares(10, 4)
    '[0.05, 0.25, 0.45, 0.75]'
    """
    return "[" + ", ".join(repr((p + 0.5) / n) for p in front.bin_positions(n, n_bins)) + "]"


def _cuts(
    con: duckdb.DuckDBPyConnection,
    clause: str,
    params: Any,
    req: front.Request,
    numeric: list[int],
) -> dict[int, list[Any]]:
    """The bin edges of each numeric candidate (by position): its count and largest value,
    then the values at :func:`~mlsql._slices.front.bin_positions` (``quantile_disc`` at
    (position + 1/2) / n, which no rounding moves off the position)."""
    if not numeric:
        return {}
    names = [quote_ident(req.candidates[i]) for i in numeric]
    [found] = con.sql(
        f"SELECT {', '.join(f'count({c}), max({c})' for c in names)} {clause}", params=params
    ).fetchall()
    counts, tops = found[0::2], found[1::2]
    known = [k for k, n in enumerate(counts) if n]  # a column of NULLs only has no bins
    lower: dict[int, list[Any]] = {}
    if known:
        select = ", ".join(
            f"quantile_disc({names[k]}, {_shares(counts[k], req.n_bins)})" for k in known
        )
        [values] = con.sql(f"SELECT {select} {clause}", params=params).fetchall()
        lower = dict(zip(known, values, strict=True))
    return {i: front.edges(lower.get(k, []), tops[k]) for k, i in enumerate(numeric)}


def slices(
    data: Any,
    actual: str,
    predicted: str,
    candidates: str | Sequence[str],
    measure: Any,
    *,
    depth: int = 1,
    n_bins: int = 4,
    min_rows: int = front.MIN_ROWS,
    min_weight: float | None = None,
    sample_weight: str | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    adjust: str = "bh",
    con: duckdb.DuckDBPyConnection | None = None,
) -> duckdb.DuckDBPyRelation:
    """Where is the model worst? A measure on every slice of the data, from the worst.

    Parameters
    ----------
    data : str, os.PathLike, DuckDBPyRelation or DataFrame
        As :func:`mlsql.bootstrap` takes it: a table or view name, a query, a
        Parquet, CSV or JSON path, a relation, or an Arrow table, Polars or
        pandas DataFrame.
    actual, predicted : str
        The columns of true and predicted label lists, or of one label per row.
    candidates : str or sequence of str
        The columns that define slices. Text, boolean and other columns slice
        by value; numeric columns by ``n_bins`` quantile bins.
    measure : str or (str, dict)
        One aggregate measure that :func:`mlsql.bootstrap` resamples, a name or
        a ``(name, {parameter: value})`` pair. Of label lists: the micro_*,
        samples_*, macro_* and weighted_* averages, macro_f1_of_means,
        label_accuracy_micro and _macro, clp, mlp, wlp, subset_accuracy,
        zero_one_loss, hamming_loss (with ``n_labels``) or fmeasure; of one
        label per row: accuracy, error_rate, precision_score, recall_score,
        fbeta_score, f1_score, balanced_accuracy_score, cohen_kappa_score or
        matthews_corrcoef; of numbers (``actual`` and ``predicted`` numeric):
        mse, rmse, mae, r2 and the other regression measures; of a 0/1 label
        (``actual``) and a score (``predicted``): auc, average_precision_score,
        logloss, brier_score_loss or expected_calibration_error.
    depth : {1, 2}, default 1
        1: a slice per value of each candidate; 2: also per pair of values
        of every two candidates.
    n_bins : int, default 4
        Quantile bins of a numeric candidate (fewer where values repeat).
    min_rows : int, default 30
        Slices with fewer rows are left out (and not counted in the adjustment).
    sample_weight : str, optional
        A column of row weights, as :func:`mlsql.bootstrap` takes it.
    min_weight : float, optional
        Slices whose summed ``sample_weight`` (a row's weight is 1 without
        one) is below it are left out too, as by ``min_rows``.
    n_resamples : int, default 1000
        Bootstrap resamples (at least 2).
    confidence : float, default 0.95
        Confidence of the intervals; a slice is significant where its adjusted
        p-value is at most 1 - confidence.
    seed : int, default 0
        Seed of the random streams (one per slice, the same in every engine).
    adjust : {'bh', 'holm'}, default 'bh'
        The p-values' adjustment for the number of slices: Benjamini-Hochberg
        (false discovery rate) or Holm (family-wise error rate).
    con : duckdb.DuckDBPyConnection, optional
        The connection that reads ``data`` (a fresh ``mlsql.connect()`` if None).

    Returns
    -------
    duckdb.DuckDBPyRelation
        One row per slice, from the worst estimate (the highest for a loss):
        slice (readable: ``country = 'de'``, ``length in [10, 40)``, pairs
        joined by ``and``), rows (rows with a NULL label list too),
        estimate, low and high (its percentile interval), difference
        (estimate minus the rest of the data's), diff_low and diff_high (its
        interval), p_value (two-sided bootstrap p-value of no difference),
        p_adjusted and significant.

    Notes
    -----
    The slices' statistic tuples come from one GROUPING SETS scan (numeric
    candidates need two more for their quantile edges: SQL's
    ``percentile_disc`` at 0, 1/n_bins, ...; a bin holds [edge, next edge),
    the last one its largest value too). A slice and the rest of the data are
    resampled independently with the exact grouped Poisson bootstrap of
    :func:`mlsql.bootstrap`: each grouping set is drawn once, its slices
    from their own streams, and a slice's rest is the set's draw minus the
    slice's (:func:`mlsql._slices.stats.resample`). The smallest bootstrap p-value is
    2 / (n_resamples + 1): over many slices (depth 2), raise ``n_resamples``
    or no adjusted p-value can get below 1 - confidence. "Significant" says
    the slice's measure differs from the rest's beyond what resampling noise
    explains, after the adjustment; it says nothing of why, and slices overlap.

    Memory and time: the scan gives the distinct statistic tuples of every
    grouping set and of all the data, held in Python. The label-set and
    class measures have a few per slice ((tp, |A|, |P|) or the (actual,
    predicted) cell, with the weight); the macro and weighted averages one
    per distinct pair of label sets; the regression and score measures
    about one per row, since their exact resamples need each row's numbers
    (a slice's Poisson-weighted sum of errors is no function of a few sums;
    a normal approximation of it would not be exact), so their tuples
    number about rows x (grouping sets + 1). A call holds at most a million
    tuples (about 500 MB; about 140,000 rows of numbers with three
    candidates at depth 2) and says so past that: slice a sample of the
    rows (``USING SAMPLE 100000 ROWS``; the intervals are then the
    sample's), fewer candidates or depth 1. Resampling costs each grouping
    set's tuples x its slices x ``n_resamples``, in batches of bounded
    memory: a few tuples for the label-set measures, but about rows x
    slices x n_resamples for numbers (mae on 5,000 rows, three candidates
    at depth 2, 1,000 resamples: about 25 CPU s), so fewer ``n_resamples``
    make those faster, though not smaller.

    On :func:`mlsql.connect` connections the same table is a SQL table
    function, with the same parameter names (``candidates`` and ``measure``
    by name): ``FROM slices('preds', 'actual', 'predicted', candidates :=
    ['lang', 'length'], measure := 'micro_f1', depth := 2)``
    (:mod:`mlsql._duckdb.slices_sql`).

    Examples
    --------
    >>> import mlsql, pyarrow as pa
    >>> preds = pa.table({"lang": ["de", "en"] * 40,
    ...                   "actual": [["a"], ["a"]] * 40,
    ...                   "predicted": [["b"], ["a"]] * 40})
    >>> out = mlsql.slices(preds, "actual", "predicted", "lang", "micro_f1", n_resamples=200)
    >>> [row[:3] for row in out.fetchall()]
    [("lang = 'de'", 40, 0.0), ("lang = 'en'", 40, 1.0)]
    >>> numbers = pa.table({"lang": ["de", "en"] * 40, "y": [1.0, 2.0, 3.0, 4.0] * 20,
    ...                     "yhat": [2.0, 2.0, 1.0, 4.0] * 20})
    >>> out = mlsql.slices(numbers, "y", "yhat", "lang", "mae", n_resamples=200)
    >>> [row[:3] for row in out.fetchall()]  # |1 - 2| and |3 - 1| for de; 0 for en
    [("lang = 'de'", 40, 1.5), ("lang = 'en'", 40, 0.0)]
    """
    given = con = in_this_thread(con)
    with R._source(data, con, "slices") as (con, clause, params, columns, types):
        req = front.request(
            columns,
            actual,
            predicted,
            candidates,
            measure,
            depth=depth,
            n_bins=n_bins,
            min_rows=min_rows,
            sample_weight=sample_weight,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            adjust=adjust,
            min_weight=min_weight,
        )
        checked = req.resampling
        R._check(checked, columns, types, actual, predicted)
        kinds = [types[columns.index(c)] for c in req.candidates]
        numeric = [i for i, t in enumerate(kinds) if _numeric(t)]
        cuts = _cuts(con, clause, params, req, numeric)
        keys = [
            _bin_sql(c, cuts[i]) if i in cuts else quote_ident(c)
            for i, c in enumerate(req.candidates)
        ]
        stats = [
            *R._stats_sql(checked.stats, actual, predicted),
            R._weight_sql(sample_weight, "slices"),
        ]
        k = [f"__mlsql_k{i}" for i in range(len(keys))]
        s = [f"__mlsql_s{j}" for j in range(len(stats))]
        inner = ", ".join(
            [
                *(f"{e} AS {n}" for e, n in zip(keys, k, strict=True)),
                *(f"{e} AS {n}" for e, n in zip(stats, s, strict=True)),
            ]
        )
        sets = [f"({', '.join([*(k[i] for i in positions), *s])})" for positions in req.sets]
        sets.append(f"({', '.join(s)})")
        # one scan groups the rows by every key and statistic at once; the grouping sets then
        # add up those groups' counts (a GROUPING SETS over the rows scans them once per set)
        every = ", ".join([*k, *s])
        sql = (
            f"WITH fine AS (SELECT {every}, count(*) AS __mlsql_m "
            f"FROM (SELECT {inner} {clause}) GROUP BY {every}) "
            f"SELECT GROUPING({', '.join(k)}), {', '.join(k)}, {', '.join(s)}, "
            f"sum(__mlsql_m)::BIGINT FROM fine GROUP BY GROUPING SETS ({', '.join(sets)}) "
            f"LIMIT {front.MAX_TUPLES + 1}"
        )
        fetched = con.sql(sql, params=params).fetchall()
    front.check_tuples(req, len(fetched))
    n = len(req.candidates)
    index = {_mask(n, positions): i for i, positions in enumerate(req.sets)}
    index[(1 << n) - 1] = -1
    rows = [(index[r[0]], *r[1:]) for r in fetched]
    return _relation(given, front.finish(req, rows, cuts))


def _mask(n: int, positions: Sequence[int]) -> int:
    """``GROUPING(k0, ..., kn-1)`` of a grouping set: bit n-1-i is 1 where k_i is not grouped."""
    return sum(1 << (n - 1 - i) for i in range(n) if i not in positions)


def _relation(con: duckdb.DuckDBPyConnection | None, rows: list[tuple[Any, ...]]) -> Any:
    """The result rows as a relation (on DuckDB's default connection where the call made its own)."""
    import pyarrow as pa

    columns: list[Any] = list(zip(*rows, strict=True)) if rows else [[] for _ in front.COLUMNS]
    table = pa.table(
        {
            name: pa.array(list(values), type=front.arrow_types()[name])
            for name, values in zip(front.COLUMNS, columns, strict=True)
        }
    )
    return duckdb.from_arrow(table) if con is None else con.from_arrow(table)
