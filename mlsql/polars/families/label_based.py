"""Per-label tables for Polars: ``label_metrics``, ``multilabel_report``, macro and weighted measures.

These take a frame, not columns: ``label_metrics(frame, "actual", "predicted")``
returns a frame (lazy if the input is lazy) with one row per (group, label),
as the DuckDB table macros of the same names do. Each row's sets are spread
over their labels with ``explode`` and counted with ``group_by``; every column
then comes from the builders of :mod:`mlsql.measures.label_based`, the same
ones the SQL library renders.

``labels_from_indicators`` and ``indicators_from_labels`` are expressions:
0/1 indicator columns to a label list and back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._formulas import RowStats
from mlsql._front import tables as T
from mlsql._front.build import formula
from mlsql._front.table_functions import TableCall, table_function
from mlsql.measures import label_based as LB
from mlsql.polars import _native
from mlsql.polars._checks import checked
from mlsql.polars._dtypes import bounds, guarded, inner, kind, label_lists
from mlsql.polars._engine import POLARS
from mlsql.polars._weights import weight as checked_weight
from mlsql.polars.ops import FixedOrderPolarsOps, PolarsOps

FAMILIES = (LB.FAMILY,)
OPS = PolarsOps()
#: the report's sums over labels and rows: in a fixed order, so a report is the same on every run
SUMS = FixedOrderPolarsOps()
ALL = "__mlsql_all"
Frame = pl.DataFrame | pl.LazyFrame


# ------------------------------------------------------------------ inputs
def _prepared(
    func: str,
    source: Frame,
    actual: str,
    predicted: str,
    labels: Sequence[Any] | None,
    by: str | Sequence[str] | None,
    sample_weight: str | None = None,
) -> tuple[pl.LazyFrame, list[str], list[Any] | None]:
    """(rows with group columns, ``__a`` and ``__p`` as clean sets, group names, universe);
    with ``sample_weight`` (a column name) a column ``__w`` of checked weights, and a row
    whose weight is NULL is unknown."""
    if not isinstance(source, (pl.DataFrame, pl.LazyFrame)):
        raise MlsqlError(
            f"mlsql.polars.{func} takes a Polars DataFrame or LazyFrame. "
            f"Got {type(source).__name__}."
        )
    lf = source.lazy()
    schema = lf.collect_schema()
    groups, universe = T.checked_arguments(func, schema.names(), actual, predicted, by, labels)
    a, p = label_lists(
        func,
        ["actual", "predicted"],
        [(pl.col(actual), schema[actual]), (pl.col(predicted), schema[predicted])],
    )
    side = actual if kind(inner(schema[actual])) != LT.NULL else predicted  # type: ignore[arg-type]
    LT.check_universe_kind(universe, kind(inner(schema[side])), str(schema[side]), func)  # type: ignore[arg-type]
    a, p, label_type = _as_label_column(lf, a, p)
    LT.check_universe_range(universe, bounds(label_type), str(pl.List(label_type)), func)
    typed = None if universe is None else pl.Series(universe, dtype=label_type).implode()
    if not groups:
        groups = [ALL]
        lf = lf.with_columns(pl.lit(0).alias(ALL))
    known = a.is_not_null() & p.is_not_null()
    weight: list[pl.Expr] = []
    if sample_weight is not None:
        T.check_columns(func, schema.names(), [("sample_weight", sample_weight)])
        w = checked_weight(func, pl.col(sample_weight), schema[sample_weight])
        weight = [w.alias("__w")]
        known = known & w.is_not_null()

    def clean(side: pl.Expr) -> pl.Expr:
        out = side.list.unique().list.drop_nulls()
        if universe is not None:
            out = out.list.eval(pl.element().filter(pl.element().is_in(typed)))
        return out

    rows = lf.select(
        *[pl.col(g) for g in groups],
        clean(a).alias("__a"),
        clean(p).alias("__p"),
        known.alias("__known"),
        *weight,
        # the sets as given, for the native plugin (which cleans them itself); unused
        # columns are pruned from the plan
        a.alias("__raw_a"),
        p.alias("__raw_p"),
    )
    return rows, groups, universe


def _as_label_column(
    lf: pl.LazyFrame, a: pl.Expr, p: pl.Expr
) -> tuple[pl.Expr, pl.Expr, pl.DataType]:
    """Both label lists as lists of the label column's type, and that type: the type of
    the spread's ``concat_list`` of both sides (their supertype: Int8 and Int16 lists
    give Int16, UInt64 and Int8 lists Int128).

    The universe is then matched and typed once, as the label column: matched
    against each list's own type, a universe label of the wider list (-32768 for
    Int8 actual and Int16 predicted lists) could not be built as the narrower
    type, and the universe's rows took the actual list's type.
    """
    both = lf.select(a.alias("a"), p.alias("p")).select(pl.concat_list("a", "p").alias("l"))
    target = pl.List(both.collect_schema()["l"].inner)  # type: ignore[union-attr]
    types = lf.select(a.alias("a"), p.alias("p")).collect_schema()
    return (
        a if types["a"] == target else a.cast(target),
        p if types["p"] == target else p.cast(target),
        target.inner,
    )


#: the flags of a row's actual-only, true-positive and predicted labels, in that order
LB_FLAGS = (LB.FLAG_ACTUAL, LB.FLAG_BOTH, LB.FLAG_PREDICTED)


def _native_sides(
    rows: pl.LazyFrame, groups: list[str], universe: list[Any] | None, in_memory: bool
) -> tuple[str, str] | None:
    """The columns the native plugin counts, or None when it does not run.

    It does not run when switched off, on label types it does not read, or
    with groups on a LazyFrame (its per-group aggregation would hold every
    row, where the portable plan streams).
    """
    if not _native.enabled() or (groups != [ALL] and not in_memory):
        return None
    schema = rows.collect_schema()
    if not _native.supports_label_table(schema["__raw_a"], schema["__raw_p"]):
        return None
    # with a universe, the plugin counts the filtered sets (cleaning them again changes nothing)
    return ("__raw_a", "__raw_p") if universe is None else ("__a", "__p")


def _spread_native(
    rows: pl.LazyFrame, groups: list[str], sides: tuple[str, str]
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """(groups with n_rows, seen labels' counts, row histogram) through the native plugin.

    Without groups the plugin runs elementwise, one table per batch of rows,
    and the streaming engine keeps its memory bounded; with groups, one
    plugin call per group (Polars gathers each group's rows first, so only
    for frames already in memory: see :func:`_native_sides`). The tables are
    hash tables of labels built in C; their entries, added up, are what
    :func:`_spread_portable` gives.
    """
    label_type = rows.collect_schema()["__a"].inner  # type: ignore[union-attr]
    if groups == [ALL]:
        # elementwise, one table per batch of rows (bounded memory on the streaming engine),
        # then the batches' tables added up; empty lists explode to a NULL entry (n NULL)
        table = _native.label_table(pl.col(sides[0]), pl.col(sides[1]), per_batch=True)
        tabled = rows.select(pl.lit(0).alias(ALL), table.alias("__table"))
    else:
        tabled = rows.group_by(groups).agg(
            _native.label_table(pl.col(sides[0]), pl.col(sides[1])).alias("__table")
        )
    # The batches' tables added up in one aggregation, keyed by label for the labels' entries
    # and by the row's statistics for the markers (label NULL), and cached: the three frames
    # below read that one small frame, so the plugin runs once over the rows. Before, each
    # frame's own filters and columns were pushed down into its own copy of the plan, and
    # every frame ran the plugin over all the rows again (label_metrics read them twice).
    stats = ("tp", "n_actual", "n_predicted")
    marker = pl.col("label").is_null()
    entries = (
        tabled.explode("__table")
        .unnest("__table")
        .filter(pl.col("n").is_not_null())
        .with_columns(pl.col("label").cast(label_type))
        .with_columns(pl.when(marker).then(pl.col(c)).alias(f"__row_{c}") for c in stats)
    )
    table = (
        entries.group_by([*groups, "label", *(f"__row_{c}" for c in stats)])
        .agg(
            *(pl.col(c).sum().cast(pl.Int64) for c in (*stats, "n")),
            marker.all().alias("__marker"),
        )
        .cache()
    )
    markers = table.filter(pl.col("__marker"))
    n_rows = pl.col("n").filter(pl.col("__row_tp").is_not_null()).sum().cast(pl.Int64)
    group_rows = markers.group_by(groups).agg(n_rows.alias("n_rows"))
    seen = table.filter(~pl.col("__marker")).select(*groups, "label", *stats)
    histogram = (
        markers.filter(pl.col("__row_tp").is_not_null())
        .group_by([*groups, *(f"__row_{c}" for c in stats)])
        .agg(pl.col("n").sum().cast(pl.Int64))
        .rename({f"__row_{c}": c for c in stats})
    )
    return group_rows, seen, histogram


def _counts(
    rows: pl.LazyFrame, groups: list[str], universe: list[Any] | None, in_memory: bool
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """(groups with n_rows, one row per (group, label) with tp, fp, fn, n_rows, row histogram).

    The counts come from the native plugin when it runs, else from
    :func:`_spread_portable`; the same numbers either way. ``in_memory``:
    the source is a DataFrame.
    """
    label_type = rows.collect_schema()["__a"].inner  # type: ignore[union-attr]
    weighted = "__w" in rows.collect_schema()
    # the native plugin counts rows: weighted counts are summed here
    sides = None if weighted else _native_sides(rows, groups, universe, in_memory)
    if sides is not None:
        group_rows, seen, histogram = _spread_native(rows, groups, sides)
    else:
        group_rows, seen, histogram = _spread_portable(rows, groups)
    if groups == [ALL]:  # one report row, even over no rows at all
        group_rows = (
            pl.LazyFrame({ALL: [0]}, schema={ALL: pl.Int32})
            .join(group_rows, on=ALL, how="left", coalesce=True)
            .with_columns(pl.col("n_rows").fill_null(0))
        )
    if universe is None:
        labels = seen.select(*groups, "label")
    else:
        labels = group_rows.select(groups).join(
            pl.LazyFrame({"label": pl.Series(universe, dtype=label_type)}), how="cross"
        )
    keys = [*groups, "label"]
    k = (
        labels.join(group_rows, on=groups, how="left", nulls_equal=True, coalesce=True)
        .join(seen, on=keys, how="left", nulls_equal=True, coalesce=True)
        .with_columns(pl.col("n_actual", "n_predicted", "tp").fill_null(0))
        .select(
            *keys,
            "tp",
            (pl.col("n_predicted") - pl.col("tp")).alias("fp"),
            (pl.col("n_actual") - pl.col("tp")).alias("fn"),
            "n_rows",
        )
    )
    return group_rows, k, histogram


def _spread_portable(
    rows: pl.LazyFrame, groups: list[str]
) -> tuple[pl.LazyFrame, pl.LazyFrame, pl.LazyFrame]:
    """(groups with n_rows, seen labels' counts, row histogram) in plain Polars.

    One pass over the rows, as the DuckDB and Spark engines do: each row
    becomes two parallel lists, its labels and their flags (actual labels
    :data:`~mlsql.measures.label_based.FLAG_ACTUAL` or ``FLAG_BOTH``,
    predicted ones ``FLAG_PREDICTED``), plus one marker (label NULL) whose flag
    is ``-1 - code`` of the row's statistics (0 for an unknown row, so its
    group still shows). One ``explode`` and one ``group_by(group, label,
    flag)`` then give every count on a small frame: the streaming engine never
    holds the rows (several scans of them made Polars cache the rows they
    share: 11 GB at 100M rows).
    """
    a, p = pl.col("__a"), pl.col("__p")
    known = pl.col("__known")
    label_type = rows.collect_schema()["__a"].inner  # type: ignore[union-attr]
    # with weights (a column ``__w``) every count is a sum of the rows' weights
    weighted = "__w" in rows.collect_schema()
    count = pl.Float64 if weighted else pl.Int64
    weights = [pl.col("__w")] if weighted else []
    size = pl.col("__w").sum() if weighted else pl.len()
    both, a_only = a.list.set_intersection(p), a.list.set_difference(p)
    code = (
        a_only.list.len().cast(pl.Int64) * LB.FLAG_ACTUAL
        + both.list.len().cast(pl.Int64) * LB.FLAG_BOTH
        + p.list.len().cast(pl.Int64) * LB.FLAG_PREDICTED
    )

    def flags(side: pl.Expr, flag: int) -> pl.Expr:
        return pl.lit(flag, pl.Int64).repeat_by(side.list.len())

    marker_flag = pl.when(known).then(-1 - code).otherwise(0)
    # a row weighing 0 drops out, its labels too (as the row repeated 0 times): no label
    # of it is seen, where an entry of weight 0 listed its labels with counts 0
    counted = known & (pl.col("__w") > 0) if weighted else known
    sides = [pl.when(counted).then(x).fill_null([]) for x in (a_only, both, p)]
    labels_of_row = pl.concat_list(*sides, pl.lit(None, label_type))
    flags_of_row = pl.concat_list(
        *(flags(x, f) for x, f in zip(sides, LB_FLAGS, strict=True)), marker_flag
    )
    spread = (
        rows.select(*groups, labels_of_row.alias("label"), flags_of_row.alias("flag"), *weights)
        .explode("label", "flag")
        .group_by([*groups, "label", "flag"])
        .agg(size.cast(count).alias("n"))
    )
    markers = spread.filter(pl.col("label").is_null())
    n_rows = pl.col("n").filter(pl.col("flag") < 0).sum().cast(count)
    group_rows = markers.group_by(groups).agg(n_rows.alias("n_rows"))
    flag, n = pl.col("flag"), pl.col("n")
    seen = (
        spread.filter(pl.col("label").is_not_null())
        .group_by([*groups, "label"])
        .agg(
            n.filter(flag == LB.FLAG_BOTH).sum().cast(count).alias("tp"),
            n.filter(flag != LB.FLAG_PREDICTED).sum().cast(count).alias("n_actual"),
            n.filter(flag == LB.FLAG_PREDICTED).sum().cast(count).alias("n_predicted"),
        )
    )
    stats = LB.decode_row(-1 - pl.col("flag"))
    histogram = markers.filter(pl.col("flag") < 0).select(
        *groups,
        stats.tp.alias("tp"),
        stats.n_actual.alias("n_actual"),
        stats.n_predicted.alias("n_predicted"),
        "n",
    )
    return group_rows, seen, histogram


def _label_values(k: pl.LazyFrame, beta: float, zd: P.ZeroDivision) -> pl.LazyFrame:
    counts = LB.LabelCounts(pl.col("tp"), pl.col("fp"), pl.col("fn"), pl.col("n_rows"))
    values = formula("label_metrics")(OPS, counts, beta=beta, zero_division=zd)
    return k.with_columns(**{name: e for name, e in values.items()})


def _finish(frame: pl.LazyFrame, source: Frame) -> Frame:
    return frame if isinstance(source, pl.LazyFrame) else frame.collect()


# ------------------------------------------------------------------ public functions
def _label_metrics(source: Frame, call: TableCall) -> Frame:
    func, (actual, predicted), params = call.func, call.columns.values(), call.params
    b, zd = T.beta_and_zero_division(func, params["beta"], params["zero_division"])
    rows, groups, universe = _prepared(
        func, source, actual, predicted, params["labels"], call.by, call.sample_weight
    )
    _, k, _ = _counts(rows, groups, universe, isinstance(source, pl.DataFrame))
    columns = [c for c in LB.label_metrics_columns(params["beta"] is not None)]
    out = _label_values(k, b, zd).sort([*groups, "label"], nulls_last=True)
    shown = [g for g in groups if g != ALL]
    return _finish(out.select(*shown, *columns), source)


label_metrics = table_function(POLARS, "label_metrics", _label_metrics)


def report(source: Frame, call: TableCall, in_memory: bool | None = None) -> Frame:
    """:func:`multilabel_report` of ``call``, its messages those of ``call.func``
    (``evaluate`` reads it; its ``beta`` and ``zero_division`` are checked here);
    ``in_memory``: the rows come from a DataFrame (the native plugin may group them), by
    default whether ``source`` is one."""
    held = isinstance(source, pl.DataFrame) if in_memory is None else in_memory
    func, (actual, predicted), params = call.func, call.columns.values(), call.params
    beta = params["beta"]
    b, zd = T.beta_and_zero_division(func, beta, params["zero_division"])
    rows, groups, universe = _prepared(
        func, source, actual, predicted, params["labels"], call.by, call.sample_weight
    )
    group_rows, k, histogram = _counts(rows, groups, universe, held)
    by_label = (
        _label_values(k, b, zd)
        .group_by(groups)
        .agg(**{n: e for n, e in LB.label_aggregates(SUMS, pl.col, zd).items()})
    )
    stats = RowStats(pl.col("tp"), pl.col("n_actual"), pl.col("n_predicted"))
    by_row = (
        histogram.with_columns(**LB.row_values(OPS, stats, b, zd))
        .group_by(groups)
        .agg(**LB.row_aggregates(SUMS, pl.col, pl.col("n"), zd))
        .drop("n_rows")
    )
    out = (
        group_rows.join(by_row, on=groups, how="left", nulls_equal=True, coalesce=True)
        .join(by_label, on=groups, how="left", nulls_equal=True, coalesce=True)
        .with_columns(pl.col("n_labels").fill_null(0))
        .with_columns(**LB.group_columns(OPS, pl.col, b, zd))
        .sort(groups, nulls_last=True)
    )
    shown = [g for g in groups if g != ALL]
    return _finish(out.select(*shown, *LB.report_columns(beta is not None)), source)


multilabel_report = table_function(POLARS, "multilabel_report", report)


def _pick(report: Frame, groups: list[str], name: str) -> Frame:
    return report.select(*groups, name)


_STANDALONE = T.standalones(
    report,
    _pick,
    engine=POLARS,
    module=__name__,
    annotation="Frame",
)
globals().update(_STANDALONE)


# ------------------------------------------------------------------ indicator columns
def labels_from_indicators(indicators: Sequence[str | pl.Expr], labels: Sequence[Any]) -> pl.Expr:
    """The labels whose indicator is 1, as a list; NULL if any indicator of the row is NULL.

    Parameters
    ----------
    indicators : sequence of str or polars.Expr
        0/1 (or boolean) columns, one per label, in the order of ``labels``.
    labels : sequence
        The label of each indicator column.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"L1": [1, 0], "L2": [1, None], "L3": [0, 1]})
    >>> df.select(labels_from_indicators(["L1", "L2", "L3"], ["L1", "L2", "L3"])).to_series().to_list()
    [['L1', 'L2'], None]
    """
    cols = [pl.col(c) if isinstance(c, str) else c for c in indicators]
    names = list(labels)
    if len(cols) != len(names):
        raise MlsqlError(LB.INDICATOR_COUNT_MESSAGE.format(len(cols), len(names)))
    cols = [
        checked(
            c,
            lambda v: ~v.cast(pl.Float64).is_in([0.0, 1.0]),
            lambda v: LB.INDICATOR_VALUE_MESSAGE.format(v),
        )
        for c in cols
    ]
    picked = [
        pl.when(c.cast(pl.Float64) == 1).then(pl.lit(name)).otherwise(None)
        for c, name in zip(cols, names, strict=True)
    ]
    listed = pl.concat_list(picked).list.drop_nulls()
    return pl.when(pl.any_horizontal([c.is_null() for c in cols])).then(None).otherwise(listed)


def indicators_from_labels(actual: str | pl.Expr, labels: Sequence[Any]) -> pl.Expr:
    """0/1 (Int32) per label of ``labels``: 1 where the row's list holds it; NULL for a NULL list.

    Examples
    --------
    >>> import polars as pl
    >>> df = pl.DataFrame({"actual": [["L3", "L1"], None]})
    >>> df.select(indicators_from_labels("actual", ["L1", "L2", "L3"])).to_series().to_list()
    [[1, 0, 1], None]
    """
    func = "indicators_from_labels"
    universe = list(labels)

    def check(func: str, names: Sequence[str], pairs: Any) -> list[pl.Expr]:
        out = label_lists(func, names, pairs)
        dtype = pairs[0][1]
        element = inner(dtype)
        LT.check_universe_labels(universe, kind(element), str(dtype), bounds(element), func)  # type: ignore[arg-type]
        return out

    def build(col: pl.Expr) -> pl.Expr:
        # a NULL label's indicator is NULL (the list may hold NULL: it is no label)
        flags = [
            pl.lit(None, pl.Int32)
            if label is None
            else col.list.contains(pl.lit(label)).cast(pl.Int32)
            for label in universe
        ]
        listed = pl.concat_list(flags) if flags else pl.lit([], pl.List(pl.Int32))
        return pl.when(col.is_null()).then(None).otherwise(listed)

    return guarded(func, ("actual",), [actual], build, check)


__all__ = [
    "indicators_from_labels",
    "label_metrics",
    "labels_from_indicators",
    "multilabel_report",
    *_STANDALONE,
]
