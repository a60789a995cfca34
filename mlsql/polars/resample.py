"""``bootstrap`` and ``compare`` for Polars: the statistics table in one ``group_by``.

Each row's statistics (tp, |A|, |P| of its label sets, native where built; or
its (actual, predicted) cell) are grouped and counted by Polars, lazily; the
few distinct tuples go to :mod:`mlsql._resample.run`, which resamples them
exactly as the DuckDB and Spark engines do (same seed, same result).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from mlsql._resample import front, function
from mlsql.measures import class_scores as CS
from mlsql.polars import stats as st
from mlsql.polars._dtypes import inner, kind, label_lists, same_kind
from mlsql.polars._engine import POLARS
from mlsql.polars._weights import weight
from mlsql.polars.ops import concat_lists

_NAMES = ["actual", "predicted"]
_MODEL, _ID = "__mlsql_model", "__mlsql_id"


def _column(schema: pl.Schema, name: str) -> pl.Expr:
    """The column ``name`` itself, by position: ``pl.col`` reads ``*`` as every column and
    ``^...$`` as a pattern."""
    return pl.nth(schema.names().index(name))


def _checked(req: front.Request, schema: pl.Schema, actual: str, predicted: str) -> list[pl.Expr]:
    """The statistic expressions of ``req``'s measures, named ``__mlsql_s0``, ``__mlsql_s1``..."""
    dtypes = [schema[actual], schema[predicted]]
    lists = [inner(d) is not None and d != pl.Null for d in dtypes]
    kinds = [
        kind(inner(d) or d) if is_list else kind(d)
        for d, is_list in zip(dtypes, lists, strict=True)
    ]
    pairs = [(_column(schema, actual), dtypes[0]), (_column(schema, predicted), dtypes[1])]
    if req.stats == "class_scores":
        row = _class_score_row(req, schema, pairs)
        return [e.alias(f"__mlsql_s{i}") for i, e in enumerate(row)]
    if front.is_numbers(req):
        front.check_numbers(req, _NAMES, lists, kinds, [str(d) for d in dtypes])
        known = _column(schema, actual).is_not_null() & _column(schema, predicted).is_not_null()
        # both sides NULL where one is; -0.0 as 0.0
        exprs: list[pl.Expr] = [pl.when(known).then(e.cast(pl.Float64) + 0.0) for e, _ in pairs]
        return [e.alias(f"__mlsql_s{i}") for i, e in enumerate(exprs)]
    front.check_labels(req, _NAMES, lists, kinds, [str(d) for d in dtypes])
    if req.stats == "label_sets":
        a, p = label_lists(req.func, _NAMES, pairs)
        s = st.row_stats(a, p)
        exprs = [s.tp, s.n_actual, s.n_predicted]
    elif req.stats == "label_lists":  # each row's label sets, as sorted lists
        lists_ = label_lists(req.func, _NAMES, pairs)
        exprs = [e.list.drop_nulls().list.unique().list.sort() for e in lists_]
    else:
        exprs = same_kind(req.func, _NAMES, pairs)
    return [e.alias(f"__mlsql_s{i}") for i, e in enumerate(exprs)]


def _class_score_row(
    req: front.Request, schema: pl.Schema, pairs: list[tuple[pl.Expr, Any]]
) -> list[pl.Expr]:
    """A row's numbers for the class-score measures
    (:data:`mlsql._resample.numbers.CLASS_SCORE_STATS`; NULL where either input is), from its
    scored classes as the measures read them (a label's first entry, NULLs dropped).

    Each class's term is the registry's ``class_squared_error``, read inside ``list.eval``
    with the true label put first in the row's list (``list.eval`` sees no other column);
    the top class is the measure's own (:func:`mlsql.polars.families.class_scores._top`)."""
    from mlsql.polars.families import _classification as K
    from mlsql.polars.families import class_scores as CSF

    actual, entries = CSF.check(req.func, _NAMES, pairs)
    dtype = pl.LazyFrame(schema=schema).select(entries).collect_schema().dtypes()[0]
    label_type = dtype.inner.fields[0].dtype  # type: ignore[attr-defined]
    known = actual.is_not_null() & entries.is_not_null()
    s = CSF._scored(pl.when(known).then(entries))
    t = actual.cast(label_type)
    probs = s.list.eval(CSF._SCORE)
    unscored = 1 - s.list.eval(CSF._LABEL).list.contains(t).cast(pl.Int64)
    first = concat_lists(pl.struct(label=t, score=pl.lit(None, dtype=pl.Float64)), s)
    label, score = CSF._LABEL, CSF._SCORE
    term = CS.class_squared_error(K.OPS, score, label == label.first())
    loss = first.list.eval(term.slice(1).sum()).list.first() + unscored
    confidence = probs.list.max().cast(pl.Float64).fill_null(0.0)
    correct = (CSF._top(s, probs, confidence) == t).fill_null(False).cast(pl.Float64)
    bad = probs.list.eval(pl.element().filter(~pl.element().is_finite())).list.first()
    low = pl.when(bad.is_not_null()).then(bad).otherwise(probs.list.min())
    values = [loss, s.list.len() + unscored, confidence, correct, low, probs.list.max()]
    return [pl.when(known).then(v.cast(pl.Float64)) for v in values]


def _rows(lazy: pl.LazyFrame, req: front.Request) -> Any:
    """The statistics table: an Arrow table of label lists (no Python object per label),
    else rows."""
    frame = lazy.collect()
    if req.stats != "label_lists":
        return frame.rows()
    return frame.to_arrow(compat_level=pl.CompatLevel.oldest())


def _name(sample_weight: str | pl.Expr | None) -> str | None:
    """The weight's column to find in the data (an expression is resolved by Polars)."""
    return None if isinstance(sample_weight, pl.Expr) else sample_weight


def _weight(
    req: front.Request, lazy: pl.LazyFrame, schema: pl.Schema, sample_weight: str | pl.Expr | None
) -> pl.Expr:
    """A row's weight, checked as the weighted measures check it (1 when unweighted)."""
    from mlsql._resample.measures import STATS  # numpy: imported when a call runs

    if sample_weight is None:
        w = pl.lit(1.0, dtype=pl.Float64)
    else:
        expr = _column(schema, sample_weight) if isinstance(sample_weight, str) else sample_weight
        dtype = lazy.select(expr).collect_schema().dtypes()[0]
        w = weight(req.func, expr, dtype)
    n = len(STATS[req.stats])
    return w.alias(f"__mlsql_s{n}")


def _bootstrap(
    frame: pl.DataFrame | pl.LazyFrame, req: front.Request, a: Mapping[str, Any]
) -> pl.DataFrame:
    """``mp.bootstrap`` of the checked call ``req`` (``a``: its arguments)."""
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    stats = [
        *_checked(req, schema, a["actual"], a["predicted"]),
        _weight(req, lazy, schema, a["sample_weight"]),
    ]
    keys = [*(_column(schema, b) for b in req.by), *stats]
    rows = _rows(lazy.group_by(keys).agg(pl.len()), req)
    from mlsql._resample import run  # numpy: imported when a call runs

    out = run.bootstrap(rows, len(req.by), req.chosen, req.n_resamples, req.confidence, req.seed)
    return _frame([*req.by, *front.BOOTSTRAP_COLUMNS], out, len(req.by), schema)


def _compare(
    frame: pl.DataFrame | pl.LazyFrame, req: front.Request, a: Mapping[str, Any]
) -> pl.DataFrame:
    """``mp.compare`` of the checked call ``req`` (``a``: its arguments)."""
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    model, id, baseline = a["model"], a["id"], a["baseline"]
    stats = [
        *_checked(req, schema, a["actual"], a["predicted"]),
        _weight(req, lazy, schema, a["sample_weight"]),
    ]
    from mlsql._resample.measures import STATS  # numpy: imported when a call runs

    names = [f"__mlsql_s{i}" for i in range(len(STATS[req.stats]) + 1)]
    by = [f"__mlsql_by{i}" for i in range(len(req.by))]  # the names Polars would read as patterns
    rows = lazy.select(
        *(_column(schema, b).alias(n) for b, n in zip(req.by, by, strict=True)),
        _column(schema, model).alias(_MODEL),
        _column(schema, id).alias(_ID),
        *stats,
    )
    keys = [*by, _MODEL, _ID]
    summary = rows.group_by(_MODEL).agg(pl.len()).collect().rows()
    totals = dict(summary)
    repeated = sum(totals.values()) - rows.select(pl.struct(keys).n_unique()).collect().item()
    paired_rows: list[tuple[Any, ...]] = []
    if baseline in totals:
        known = rows.filter(pl.col(_ID).is_not_null())
        base = known.filter(pl.col(_MODEL) == baseline).select(
            *by, _ID, *(pl.col(n).alias(f"{n}_b") for n in names)
        )
        others = known.filter(pl.col(_MODEL) != baseline)
        joined = others.join(base, on=[*by, _ID], how="inner", nulls_equal=True)
        group = [*by, _MODEL, *(f"{n}_b" for n in names), *names]
        paired_rows = _rows(joined.group_by(group).agg(pl.len()), req)
    out = front.compared(
        req, model, id, baseline, totals, paired_rows, repeated, a["drop_unpaired"]
    )
    return _frame([*req.by, *front.COMPARE_COLUMNS], out, len(req.by), schema, model)


_TYPES = ("pl.DataFrame | pl.LazyFrame", "str | pl.Expr", "pl.DataFrame")


def _names(frame: pl.DataFrame | pl.LazyFrame) -> list[str]:
    return frame.lazy().collect_schema().names()


BOOTSTRAP_EXAMPLE = """
    >>> import polars as pl
    >>> import mlsql.polars as mp
    >>> df = pl.DataFrame({"actual": [["a", "b"], ["b"], ["a"]] * 20,
    ...                    "predicted": [["a"], ["b"], ["b"]] * 20})
    >>> mp.bootstrap(df, "actual", "predicted", ["micro_f1"], n_resamples=200).row(0)[:2]
    ('micro_f1', 0.5714285714285714)
    """
bootstrap = function.resampling_function(
    "bootstrap", POLARS, _TYPES, _names, _name, _bootstrap, BOOTSTRAP_EXAMPLE
)
COMPARE_EXAMPLE = """
    >>> import polars as pl
    >>> import mlsql.polars as mp
    >>> df = pl.DataFrame({"id": [1, 2, 3, 1, 2, 3], "model": ["A"] * 3 + ["B"] * 3,
    ...                    "actual": ["x", "y", "x"] * 2, "predicted": ["x", "x", "x", "x", "y", "x"]})
    >>> mp.compare(df, "actual", "predicted", ["accuracy"], n_resamples=200).row(0)[:5]
    ('B', 'accuracy', 0.6666666666666666, 1.0, 0.33333333333333337)
    """
compare = function.resampling_function(
    "compare", POLARS, _TYPES, _names, _name, _compare, COMPARE_EXAMPLE
)


#: the public functions of this module (frame in, frame out)
FUNCTIONS = {"bootstrap": bootstrap, "compare": compare}


def _frame(
    names: list[str],
    rows: list[tuple[Any, ...]],
    n_by: int,
    schema: pl.Schema,
    model: str | None = None,
) -> pl.DataFrame:
    """The result rows as a DataFrame: group (and model) columns keep their types."""
    types: dict[str, Any] = {}
    for i, name in enumerate(names):
        if i < n_by:
            types[name] = schema[name]
        elif name == "model" and model is not None:
            types[name] = schema[model]
        else:
            types[name] = pl.String if name == "measure" else pl.Float64
    return pl.DataFrame(rows, schema=types, orient="row")
