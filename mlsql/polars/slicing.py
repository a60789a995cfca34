"""``slices`` for Polars: every slice's statistics from one ``group_by`` over the data.

One lazy ``group_by`` of each row's candidate values (numeric ones binned
into quantile bins) and statistics (tp, |A|, |P|, weight) gives the finest
table (small for the label-set and class measures, about one row per row
for numbers); each grouping set is a ``group_by`` of that table (the plan
GROUPING SETS runs in SQL). :mod:`mlsql._slices.front` names the slices and
:mod:`mlsql._slices.stats` resamples them, as for DuckDB (same seed, same table).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from mlsql._front.engine import frame_words
from mlsql._slices import front, function
from mlsql.polars import resample as R
from mlsql.polars._engine import POLARS

_LEN = "__mlsql_m"


def _bin(expr: pl.Expr, cuts: Sequence[Any]) -> pl.Expr:
    """A row's bin among ``cuts`` (:func:`mlsql._slices.front.bin_of`), NULL for NULL."""
    if not cuts:
        return pl.lit(None, dtype=pl.Int32)
    out: Any = pl.when(expr.is_null()).then(pl.lit(None, dtype=pl.Int32))
    for i, e in enumerate(cuts[1:-1]):
        out = out.when(expr < e).then(pl.lit(i, dtype=pl.Int32))
    return out.otherwise(pl.lit(len(cuts) - 2, dtype=pl.Int32))


def _cuts(
    lazy: pl.LazyFrame, schema: pl.Schema, req: front.Request, numeric: list[int]
) -> dict[int, list[Any]]:
    """The bin edges of each numeric candidate (by position), from one collect: the sorted
    values at :func:`~mlsql._slices.front.bin_positions`, in integer arithmetic."""
    if not numeric:
        return {}
    exprs = []
    for i in numeric:
        col = R._column(schema, req.candidates[i])
        n, nb = col.count().cast(pl.Int64), req.n_bins
        ordered = col.drop_nulls().sort()
        for k in range(nb):
            position = ((n * k + nb - 1) // nb - 1).clip(lower_bound=0)
            exprs.append(ordered.get(position, null_on_oob=True).alias(f"q{i}_{k}"))
        # NaN is the largest value, as DuckDB and Spark take it (Polars' max skips it)
        top = col.nan_max() if schema[req.candidates[i]].is_float() else col.max()
        exprs.append(top.alias(f"max{i}"))
    row = lazy.select(exprs).collect().row(0, named=True)
    return {
        i: front.edges([row[f"q{i}_{k}"] for k in range(req.n_bins)], row[f"max{i}"])
        for i in numeric
    }


_WORDS = function.Words(
    **frame_words(POLARS),
    prefix=POLARS.words["prefix"],
    how="",
    measure_note="",
    notes="""
    Memory and time: the statistic tuples of every grouping set and of all
    the data, as ``mlsql.slices`` says: a few per slice for the label-set and
    class measures, about one per row for the regression and score measures
    (their exact resamples need each row's numbers); a call holds at most a
    million and says so past that (slice a sample of the rows, fewer
    candidates or depth 1), and resampling numbers costs about rows x slices
    x ``n_resamples``.
    """,
    example="""
    >>> import polars as pl
    >>> import mlsql.polars as mp
    >>> df = pl.DataFrame({"lang": ["de", "en"] * 40, "actual": [["a"], ["a"]] * 40,
    ...                    "predicted": [["b"], ["a"]] * 40})
    >>> mp.slices(df, "actual", "predicted", "lang", "micro_f1", n_resamples=200).rows()[0][:3]
    ("lang = 'de'", 40, 0.0)
    >>> mp.slices(df, "actual", "predicted", "lang", "macro_f1", n_resamples=200).rows()[0][:3]
    ("lang = 'de'", 40, 0.0)
    """,
)


def _slices(frame: pl.DataFrame | pl.LazyFrame, req: front.Request, a: Mapping[str, Any]) -> Any:
    """``mp.slices`` of the checked call ``req`` (``a``: its arguments)."""
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    actual, predicted, sample_weight = a["actual"], a["predicted"], a["sample_weight"]
    checked = req.resampling
    stats = [
        *R._checked(checked, schema, actual, predicted),
        R._weight(checked, lazy, schema, sample_weight),
    ]
    dtypes = [schema[c] for c in req.candidates]
    numeric = [i for i, d in enumerate(dtypes) if d.is_numeric()]
    cuts = _cuts(lazy, schema, req, numeric)
    k = [f"__mlsql_k{i}" for i in range(len(req.candidates))]
    keys = [
        (_bin(R._column(schema, c), cuts[i]) if i in cuts else R._column(schema, c)).alias(k[i])
        for i, c in enumerate(req.candidates)
    ]
    s = [f"__mlsql_s{j}" for j in range(len(stats))]
    finest = lazy.group_by([*keys, *stats]).agg(pl.len().alias(_LEN)).collect()
    grouped = [
        (
            index,
            positions,
            finest.group_by([*(k[i] for i in positions), *s]).agg(pl.col(_LEN).sum()),
        )
        for index, positions in [*enumerate(req.sets), (-1, ())]
    ]
    front.check_tuples(req, sum(part.height for _, _, part in grouped))
    rows: list[tuple[Any, ...]] = []
    for index, positions, part in grouped:
        for row in part.iter_rows(named=True):
            values = [row[k[i]] if i in positions else None for i in range(len(k))]
            rows.append((index, *values, *(row[n] for n in s), row[_LEN]))
    out = front.finish(req, rows, cuts)
    return pl.from_arrow(_table(out, front.arrow_types()))  # type: ignore[return-value]


def _table(rows: list[tuple[Any, ...]], types: dict[str, Any]) -> Any:
    import pyarrow as pa

    columns: list[Any] = list(zip(*rows, strict=True)) if rows else [[] for _ in types]
    return pa.table(
        {n: pa.array(list(v), type=t) for (n, t), v in zip(types.items(), columns, strict=True)}
    )


slices = function.slices_function(
    "mlsql.polars",
    _WORDS,
    ("pl.DataFrame | pl.LazyFrame", "str | pl.Expr", "pl.DataFrame"),
    lambda frame: frame.lazy().collect_schema().names(),
    R._name,
    _slices,
)

#: the public functions of this module (frame in, frame out)
FUNCTIONS = {"slices": slices}
