"""Single-label (multiclass) measures in Polars.

The class-wise aggregates (averaged precision, recall and F, balanced
accuracy, kappa, MCC) take their statistics from one expression per class
statistic, each as long as the number of classes: the sorted classes seen on
either side, and, by ``search_sorted`` on the sorted values, each class's row
total, column total and diagonal. The registry formulas then reduce over those
class-length expressions with the ordinary Polars ops; it works in ``select``
and ``group_by().agg``. The tables (``class_distribution``,
``confusion_matrix``, ``confusion_matrix_wide``, ``class_metrics``) take a
frame and return one.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"actual": ["a", "a", "b", "c"], "predicted": ["a", "b", "b", "c"]})
>>> df.select(mp.accuracy("actual", "predicted")).item()
0.75
>>> round(df.select(mp.f1_score("actual", "predicted", average="macro")).item(), 6)
0.777778
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._front.build import formula, function, hand_written, lookup, publish
from mlsql._front.docs import table_returns
from mlsql._front.inputs import finite_costs, mapping_costs
from mlsql._front.table_functions import TableCall, table_function
from mlsql._front.tables import check_columns, wide_columns
from mlsql._registry import Measure
from mlsql.measures import single_label as SL
from mlsql.measures.contingency import Table2x2
from mlsql.polars._build import evaluate
from mlsql.polars._dtypes import check_same_kind, common_type
from mlsql.polars._engine import POLARS
from mlsql.polars._weights import weight
from mlsql.polars.families import _classification as K
from mlsql.polars.families._classification import Frame, params  # noqa: F401  (plug-in hook)

FAMILIES = (SL.FAMILY,)
OPS = K.OPS
COSTS_MESSAGE = (
    "The 'costs' parameter of {func} must be a mapping actual -> {{predicted: cost}}, a mapping "
    "(actual, predicted) -> cost, or a DataFrame with columns actual, predicted, cost, the costs "
    "finite numbers. Got {got} instead."
)


# ------------------------------------------------------------------ statistics
def _counts_at(values: pl.Expr, classes: pl.Expr) -> pl.Expr:
    """How often each class occurs in ``values`` (classes sorted, unique)."""
    s = values.sort()
    right = s.search_sorted(classes, side="right").cast(pl.Int64)
    return right - s.search_sorted(classes, side="left").cast(pl.Int64)


def _unit(rows: pl.Expr) -> pl.Expr:
    """The exponent M of the largest weight's scale (:func:`_fixed`): ``rows`` whole
    numbers up to 2**M add up exactly in an Int128 (below 2**126)."""
    return 125 - (rows.cast(pl.Float64) + 1).log(2).ceil()


def _scale(largest: pl.Expr, unit: pl.Expr) -> pl.Expr:
    """The power of two that takes the one at or above ``largest`` to 2**``unit`` (within
    the doubles' range: a class of weights below 1e-275 is scaled less, and loses bits
    below 2**-1074 of a weight)."""
    exponent = unit - largest.clip(lower_bound=2.0**-1000).log(2).ceil()
    return pl.lit(2.0).pow(exponent.clip(-1022, 1023))


def _fixed(w: pl.Expr, scale: pl.Expr) -> pl.Expr:
    """Weights (>= 0) as whole numbers (Int128) up to 2**M, the largest's power of two
    scaled to 2**M (:func:`_scale`): the scaling is exact (no division, which Polars rounds
    one way by a column and another by a scalar, times its reciprocal), the bits below
    2**-M of it are dropped, and a sum of them is exact, whatever the order of the rows."""
    # truncated: floored, as w >= 0; not strict: a bad weight meets its check, not a cast error
    return (w * scale).cast(pl.Int128, strict=False)


def _weight_total(w: pl.Expr, unit: pl.Expr) -> pl.Expr:
    """The total of the weights ``w`` (>= 0) as :func:`_weights_at` gives a class's, 0 over
    no row: an exact sum rounded once, so a class that holds every row weighs exactly this."""
    w = w.cast(pl.Float64)
    scale = _scale(w.max(), unit)
    return (_fixed(w, scale).sum().cast(pl.Float64) / scale).fill_null(0.0)


def _weights_at(
    values: pl.Expr, weights: pl.Expr, classes: pl.Expr, unit: pl.Expr | None = None
) -> pl.Expr:
    """The total weight of each class in ``values`` (classes sorted, unique; no NULLs).

    A class's total is a difference of running sums over the rows sorted by (class,
    weight). Of doubles, one loses a class's small weights behind another class's large
    ones (1e15 + 1e-15 - 1e15 = 0) and rounds as the rows before the class make it round,
    so each weight is first made a whole number (:func:`_fixed`) on its class's scale (its
    largest weight near 2**M, M = :func:`_unit` of the group's rows, the default those of
    ``values``): the running sums are exact, and a class's total is its exact sum rounded
    once, the same whichever rows surround it (and :func:`_weight_total`'s over the same
    weights).

    Polars repeats a subexpression at each mention, and a sort is the cost here: the rows
    are sorted once, as (class position, weight) pairs, with one row of weight 0 per class
    (every class then has rows, and adding 0 changes no sum), and the rest reads that one
    sorted list inside ``list.eval``.
    """
    at = classes.search_sorted(values).cast(pl.Int64)
    size = classes.len().cast(pl.Int64)
    unit = _unit(values.len()) if unit is None else unit
    padded = pl.struct(
        c=at.append(pl.int_range(0, size, dtype=pl.Int64)),
        w=weights.cast(pl.Float64).append(pl.repeat(0.0, size, dtype=pl.Float64)),
        m=unit,
    ).sort()
    x = pl.element()
    c, w = x.struct.field("c"), x.struct.field("w")
    last = (c != c.shift(-1)).fill_null(True)  # a class's last row holds its largest weight
    ends = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).filter(last)  # a class's rows end
    largest = pl.lit(0.0).append(w).gather(ends)  # per class (c is a class's position)
    scale = _scale(largest, x.struct.field("m").first())
    at_ends = pl.lit(0, pl.Int128).append(_fixed(w, scale.gather(c)).cum_sum())
    sums = pl.lit(0, pl.Int128).append(at_ends.gather(ends)).diff().slice(1)
    totals = sums.cast(pl.Float64) / scale
    return padded.implode().list.eval(totals).explode(empty_as_null=False)


@dataclasses.dataclass(frozen=True)
class MatrixLookup:
    """``weight_at(i, j)`` of :class:`~mlsql.measures.single_label.ClassStats` over a weights
    matrix, ``i`` and ``j`` positions among its ``k`` labels; ``flat`` holds its k x k
    weights, row-major."""

    flat: list[float]
    k: int

    def __call__(self, i: pl.Expr, j: pl.Expr) -> pl.Expr:
        return pl.lit(pl.Series(self.flat, dtype=pl.Float64)).gather(i * self.k + j)


def class_stats(
    actual: pl.Expr,
    predicted: pl.Expr,
    weight: pl.Expr | None = None,
    pairs: dict[tuple[Any, Any], float] | None = None,
    over: Sequence[Any] | None = None,
) -> SL.ClassStats:
    """Per-class counts (or weights) as class-length expressions, the classes sorted.

    ``pairs``: the weight of each (actual, predicted) pair of labels
    (:func:`mlsql._params.kappa_matrix`); rows whose classes are not labels are left out
    and the stats read the weights (``weight_at``). ``over``: the classes are these labels
    (the averages' ``labels``), every known row kept: a label no row holds counts 0."""
    mask = K.known(actual, predicted) if weight is None else K.known(actual, predicted, weight)
    labels = list(dict.fromkeys(a for a, _ in pairs)) if pairs is not None else []
    if pairs is not None:
        mask = mask & actual.is_in(labels) & predicted.is_in(labels)
    a, p = actual.filter(mask), predicted.filter(mask)
    if over is None:
        classes = a.append(p).unique().sort()
    else:  # appended: the labels, the rows' classes of one (super)type, sorted alike
        given = pl.lit(pl.Series(sorted(over)))
        classes = a.head(0).append(given)
        a, p = a.append(given).head(a.len()), p.append(given).head(p.len())
    size = classes.len().cast(pl.Int64)
    index = pl.int_range(0, size, dtype=pl.Int64)
    lookup = None
    if pairs is not None:  # a class's index is its position among the labels
        index = classes.replace_strict(labels, list(range(len(labels))), return_dtype=pl.Int64)
        lookup = MatrixLookup([pairs[x, y] for x in labels for y in labels], len(labels))
    if weight is None:
        per_class = {
            "actual": _counts_at(a, classes),
            "predicted": _counts_at(p, classes),
            "correct": _counts_at(a.filter(a == p), classes),
        }
        n = mask.sum().cast(pl.Int64)
    else:
        w = weight.filter(mask)
        unit = _unit(mask.sum())  # one for every total: equal weights give equal totals

        def weights_of(values: pl.Expr, kept: pl.Expr) -> pl.Expr:
            """Per class: the weight of the rows ``kept`` whose ``values`` are classes (every
            row's class is one, unless the classes are given labels)."""
            if over is not None:
                kept = kept & values.is_in(list(over))
            return _weights_at(values.filter(kept), w.filter(kept), classes, unit)

        per_class = {
            "actual": weights_of(a, pl.lit(True)),
            "predicted": weights_of(p, pl.lit(True)),
            "correct": weights_of(a, a == p),
        }
        n = _weight_total(w, unit)

    def view(at: pl.Expr) -> SL.ClassView:
        """The class at sorted position ``at``; its index is its label's position when the
        weights are read over labels (``lookup``)."""
        place = at if lookup is None else index.gather(at)
        return SL.ClassView(
            place, per_class["actual"].gather(at), per_class["predicted"].gather(at)
        )

    def pair_sum(term: Any) -> pl.Expr:
        cells = pl.int_range(0, size * size, dtype=pl.Int64)
        i, j = cells // size, cells % size
        return OPS.sum(term(view(i), view(j)))

    def row_pair_sum(term: Any) -> pl.Expr:
        ia = classes.search_sorted(a).cast(pl.Int64)
        ip = classes.search_sorted(p).cast(pl.Int64)
        if lookup is not None:
            ia, ip = index.gather(ia), index.gather(ip)
        each = term(ia, ip)
        return OPS.sum(each if weight is None else each * weight.filter(mask))

    def cell_sum(term: Any) -> pl.Expr:
        ia = classes.search_sorted(a).cast(pl.Int64)
        ip = classes.search_sorted(p).cast(pl.Int64)
        each = term(view(ia), view(ip))
        return OPS.sum(each if weight is None else each * weight.filter(mask))

    def mirror_sum(term: Any) -> pl.Expr:
        # the k x k cells, actual-major: each row's cell position, counted (or its weights
        # summed) per position as a class's rows are; a cell's mirror is at (j, i)
        ia = classes.search_sorted(a).cast(pl.Int64)
        ip = classes.search_sorted(p).cast(pl.Int64)
        grid = pl.int_range(0, size * size, dtype=pl.Int64)
        code = ia * size + ip
        cells = _counts_at(code, grid) if weight is None else _weights_at(code, w, grid)

        def body(cell: pl.Expr) -> pl.Expr:  # the cells once, as a list: each read in place
            count = cell.len()
            side = count.cast(pl.Float64).sqrt().round().cast(pl.Int64)
            at = pl.int_range(0, count, dtype=pl.Int64)
            return OPS.sum(term(cell, cell.gather((at % side) * side + at // side)))

        return cells.implode().list.eval(body(pl.element())).list.first()

    def margin_cell_sum(term: Any, row: Any, col: Any) -> pl.Expr:
        cells = pl.int_range(0, size * size, dtype=pl.Int64)
        outer, inner = cells // size, cells % size
        starts = pl.int_range(0, size + 1, dtype=pl.Int64) * size

        def by_class(values: pl.Expr) -> pl.Expr:
            """Per class (the outer position): Σ of ``values`` over the inner positions."""
            ends = pl.lit(0.0).append(values.cast(pl.Float64).cum_sum()).gather(starts)
            return ends.diff().slice(1)

        r = by_class(row(view(outer), view(inner)))
        c = by_class(col(view(inner), view(outer)))
        ia = classes.search_sorted(a).cast(pl.Int64)
        ip = classes.search_sorted(p).cast(pl.Int64)
        each = term(view(ia), view(ip), r.gather(ia), c.gather(ip))
        return OPS.sum(each if weight is None else each * weight.filter(mask))

    return SL.ClassStats(
        n=n,
        index=index,
        axis=OPS,
        pair_sum=pair_sum,
        row_pair_sum=row_pair_sum,
        cell_sum=cell_sum,
        mirror_sum=mirror_sum,
        margin_cell_sum=margin_cell_sum,
        rows=None if weight is None else mask.sum().cast(pl.Int64),
        weight_at=lookup,
        **per_class,
    )


def label_stats(label: pl.Expr, weight: pl.Expr | None = None) -> SL.LabelStats:
    """Known rows (or their weight), the largest class count (weight), rows matching a value."""
    if weight is None:
        known = label.drop_nulls()
        classes = known.unique()
        return SL.LabelStats(
            n=label.count().cast(pl.Int64),
            largest=_counts_at(known, classes.sort()).max(),
            matching=lambda x: (label == x).sum().cast(pl.Int64),
        )
    mask = K.known(label, weight)
    known, w = label.filter(mask), weight.filter(mask)
    unit = _unit(mask.sum())
    return SL.LabelStats(
        n=_weight_total(w, unit),
        largest=_weights_at(known, w, known.unique().sort(), unit).max(),
        matching=lambda x: _weight_total(w.filter(known == x), unit),
    )


def _row_weights(
    actual: pl.Expr, predicted: pl.Expr, weight: pl.Expr | None
) -> tuple[pl.Expr, pl.Expr]:
    """(known mask, each row's weight: 1 without weights, NULL where the row is unknown)."""
    mask = K.known(actual, predicted)
    return mask, K.weights_of(mask, weight)


def agreement(actual: pl.Expr, predicted: pl.Expr, weight: pl.Expr | None = None) -> SL.Agreement:
    """Known rows (or their weight) and rows where actual = predicted."""
    mask = K.known(actual, predicted)
    if weight is None:
        return SL.Agreement(mask.sum().cast(pl.Int64), (actual == predicted).sum().cast(pl.Int64))
    _, w = _row_weights(actual, predicted, weight)
    right = pl.when(actual == predicted).then(w).otherwise(0.0)
    return SL.Agreement(w.sum(), right.sum())


def one_vs_rest(actual: pl.Expr, predicted: pl.Expr, weight: pl.Expr | None = None) -> SL.OneVsRest:
    """Known rows and the 2x2 table of one class against the rest (weights summed if given)."""
    mask, w = _row_weights(actual, predicted, weight)

    def table(label: Any) -> Table2x2:
        def cell(a: bool, p: bool) -> pl.Expr:
            hit = mask & ((actual == label) == a) & ((predicted == label) == p)
            if weight is None:
                return hit.sum().cast(pl.Int64)
            return pl.when(hit).then(w).otherwise(0.0).sum()

        return Table2x2(cell(True, True), cell(False, True), cell(True, False), cell(False, False))

    n = mask.sum().cast(pl.Int64) if weight is None else w.sum()
    return SL.OneVsRest(n, table, None if weight is None else mask.sum().cast(pl.Int64))


def cost_entries(costs: Any, func: str) -> list[tuple[Any, Any, float]]:
    """``costs`` (nested mapping, pair mapping or DataFrame) as (actual, predicted, cost) triples."""
    if isinstance(costs, pl.LazyFrame):
        costs = costs.collect()
    if isinstance(costs, pl.DataFrame) and {"actual", "predicted", "cost"} <= set(costs.columns):
        found = finite_costs(list(costs.select("actual", "predicted", "cost").iter_rows()))
    else:
        found = mapping_costs(costs)
    if found is None:
        raise MlsqlError(COSTS_MESSAGE.format(func=func, got=repr(costs)))
    return found


def cost_stats(actual: pl.Expr, predicted: pl.Expr, weight: pl.Expr | None = None) -> SL.CostStats:
    """Known rows and Σ cost(actual, predicted): 1 per error, corrected where costs are given
    (each row's cost times its weight, if given)."""
    mask, w = _row_weights(actual, predicted, weight)

    def rows(hit: pl.Expr) -> pl.Expr:
        return hit.sum() if weight is None else pl.when(hit).then(w).otherwise(0.0).sum()

    def total_cost(costs: Any) -> pl.Expr:
        out = rows(mask & (actual != predicted)).cast(pl.Float64)
        for a, p, c in cost_entries(costs, "cost_error"):
            default = 0.0 if a == p else 1.0
            if c != default:
                out = out + (c - default) * rows((actual == a) & (predicted == p))
        return OPS.when(mask.sum() == 0, None, out)

    n = mask.sum().cast(pl.Int64) if weight is None else w.sum()
    return SL.CostStats(n, total_cost)


STATS = SL.statistics_of(globals())


def _in_scope(m: Measure, scalars: bool = False) -> Any:
    """``m``'s formula over the per-class statistics, each computed once.

    The class-length statistics (and n) become the fields of one struct,
    imploded to a list per group; the formula runs inside ``list.eval`` on
    them, so the sorts behind them run once however often the formula names
    a statistic (Polars' streaming engine has no common-subexpression
    elimination). Row sums that weighted kappa needs (``row_pair_sum``) are
    computed outside and carried as fields.

    ``scalars``: the group's numbers (n, rows, the row sums) are read as one value each
    (``first``), not as the class-length columns the struct broadcasts them to. Polars
    divides a column by a scalar as the column times the scalar's reciprocal, so kappa's
    (chance - n dis) / chance, a column over a scalar, came out one unit in the last place
    off in Polars 2.1 (5/7 as ...142), where DuckDB, Spark, scikit-learn and Polars 2.2
    divide (...143); as scalars, Polars 2.1 divides too. Only ``cohen_kappa_score`` takes
    them: the kappa tests' and Bowker's ``let`` scopes over scalar fields panic in
    ``list.eval`` (``aggregated == self.is_scalar()``), and their digits agree already.
    """

    def formula(ops: Any, raw: SL.ClassStats, **checked: Any) -> pl.Expr:
        extras: dict[str, pl.Expr] = {}
        field = pl.element().struct.field

        def scalar(name: str) -> pl.Expr:
            """A number of the group, broadcast over the class-length struct."""
            return field(name).first() if scalars else field(name)

        def row_pair_sum(term: Any) -> pl.Expr:
            name = f"row_sum_{len(extras)}"
            extras[name] = raw.row_pair_sum(term)
            return scalar(name)

        def cell_sum(term: Any) -> pl.Expr:  # the term reads only the views: outside too
            assert raw.cell_sum is not None
            name = f"row_sum_{len(extras)}"
            extras[name] = raw.cell_sum(term)
            return scalar(name)

        def mirror_sum(term: Any) -> pl.Expr:  # the term reads only the cells: outside too
            assert raw.mirror_sum is not None
            name = f"row_sum_{len(extras)}"
            extras[name] = raw.mirror_sum(term)
            return scalar(name)

        def margin_cell_sum(term: Any, row: Any, col: Any) -> pl.Expr:  # outside too
            assert raw.margin_cell_sum is not None
            name = f"row_sum_{len(extras)}"
            extras[name] = raw.margin_cell_sum(term, row, col)
            return scalar(name)

        def pair_sum(term: Any) -> pl.Expr:
            size = pl.len().cast(pl.Int64)
            cells = pl.int_range(0, size * size, dtype=pl.Int64)

            def view(at: pl.Expr) -> SL.ClassView:
                place = at if lookup is None else field("index").gather(at)
                return SL.ClassView(
                    place, field("actual").gather(at), field("predicted").gather(at)
                )

            return ops.sum(term(view(cells // size), view(cells % size)))

        names = ("n", "index", "actual", "predicted", "correct")
        names += () if raw.rows is None else ("rows",)
        lookup = raw.weight_at
        scoped = SL.ClassStats(
            **{f: scalar(f) if f in ("n", "rows") else field(f) for f in names},
            weight_at=lookup,
            axis=ops,
            pair_sum=pair_sum,
            row_pair_sum=row_pair_sum,
            cell_sum=cell_sum,
            mirror_sum=mirror_sum,
            margin_cell_sum=margin_cell_sum,
        )
        out = m.build(ops, scoped, **checked)  # type: ignore[misc]
        out = out if isinstance(out, pl.Expr) else pl.lit(out)
        struct = pl.struct(**{f: getattr(raw, f) for f in names}, **extras)
        return struct.implode().list.eval(out).list.first()

    return formula


def _kappa(m: Measure, module: Any) -> Any:
    """``cohen_kappa_score``: over the labels when given (a weights matrix needs them)."""
    scalars = m.name == "cohen_kappa_score"  # its ratio of scalars: see _in_scope
    scoped = dataclasses.replace(lookup(m), build=_in_scope(m, scalars))

    def build(
        actual: pl.Expr,
        predicted: pl.Expr,
        sample_weight: pl.Expr | None = None,
        **checked: Any,
    ) -> pl.Expr:
        pairs = P.kappa_matrix(checked["weights"], checked["labels"], m.name)
        s = class_stats(actual, predicted, sample_weight, pairs)
        if pairs is not None:
            checked = {**checked, "weights": "matrix"}
        return evaluate(scoped.build, s, symbolic=False, **checked)  # type: ignore[arg-type]

    return K.documented(function(POLARS, m, build, K.labels, module), m)


def _averaged(m: Measure, module: Any) -> Any:
    """The class-wise averages: over their ``labels`` when given (bounded by them)."""
    scoped = dataclasses.replace(lookup(m), build=_in_scope(m))

    def build(
        actual: pl.Expr,
        predicted: pl.Expr,
        sample_weight: pl.Expr | None = None,
        **checked: Any,
    ) -> pl.Expr:
        s = class_stats(actual, predicted, sample_weight, over=checked["labels"])
        return evaluate(scoped.build, s, symbolic=False, **checked)  # type: ignore[arg-type]

    return K.documented(function(POLARS, m, build, K.labels, module), m)


def function_of(m: Measure) -> Any:
    """The Polars function of a single-label registry measure."""
    module = sys.modules[__name__]
    if m.name in STATS:
        return K.direct(m, STATS[m.name], K.labels, module)
    if any(p.check_key == P.KAPPA_LABELS.check_key for p in m.params):
        return _kappa(m, module)
    if any(p.check_key == P.CLASS_LABELS.check_key for p in m.params):
        return _averaged(m, module)
    scoped = dataclasses.replace(lookup(m), build=_in_scope(m))
    return K.direct(scoped, class_stats, K.labels, module)


# ------------------------------------------------------------------ hand-written aggregates
def _extreme(label: pl.Expr, most: bool, weight: pl.Expr | None = None) -> pl.Expr:
    """The class of the most (``most``) or fewest rows, or of the largest or smallest total
    ``weight`` (a class whose rows all weigh 0 does not occur); ties: the smallest class."""
    if weight is None:
        known = label.drop_nulls()
        classes = known.unique().sort()
        totals = _counts_at(known, classes)
    else:
        mask = K.known(label, weight)
        known = label.filter(mask)
        classes = known.unique().sort()
        totals = _weights_at(known, weight.filter(mask), classes)
        occurs = totals > 0
        classes, totals = classes.filter(occurs), totals.filter(occurs)
    # the first extreme total's class: the smallest of a tie, as the classes are sorted. Not
    # sort_by(totals).first(): Polars 2.1 plans that as a top-1 that, in a group_by, gave
    # another group's class or crashed; nor arg_max: of a tie, it may give a later index
    extreme = totals.max() if most else totals.min()
    return classes.gather((totals == extreme).arg_true().first()).first()


def _extreme_function(name: str, most: bool, example: Sequence[str]) -> Any:
    def build(label: pl.Expr, sample_weight: pl.Expr | None = None) -> pl.Expr:
        return _extreme(label, most, sample_weight)

    m = lookup(name)
    fn = K.documented(function(POLARS, m, build, K.labels, sys.modules[__name__], example), m)
    fn.__doc__ = (fn.__doc__ or "").replace("one number per", "one class per")
    return fn


majority_class = _extreme_function(
    "majority_class",
    True,
    (
        ">>> import polars as pl",
        ">>> import mlsql.polars as mp",
        '>>> pl.DataFrame({"y": ["b", "a", "b", None]}).select(mp.majority_class("y")).item()',
        "'b'",
    ),
)
minority_class = _extreme_function(
    "minority_class",
    False,
    (
        ">>> import polars as pl",
        ">>> import mlsql.polars as mp",
        '>>> pl.DataFrame({"y": ["b", "a", "b", "c"]}).select(mp.minority_class("y")).item()',
        "'a'",
    ),
)


# ------------------------------------------------------------------ tables
#: the weight column of a prepared source (1 per row without ``sample_weight``)
WEIGHT = "__mlsql_w"


def _prepared(source: Frame, call: TableCall) -> tuple[pl.LazyFrame, list[str]]:
    """The source with its groups and the call's columns (checked) renamed; known rows only.

    With a ``sample_weight`` (a column name) the weight is checked and kept as
    ``__mlsql_w``, and a row whose weight is NULL is unknown.
    """
    func, columns, by, sample_weight = call.func, call.columns, call.by, call.sample_weight
    groups = K.by_columns(by, func)
    lf = source.lazy()
    schema = lf.collect_schema()
    weights = [] if sample_weight is None else [("sample_weight", sample_weight)]
    named = [*columns.items(), *(("by", g) for g in groups), *weights]
    check_columns(func, schema.names(), named)
    names = list(columns)
    dtypes = [schema[c] for c in columns.values()]
    check_same_kind(func, names, dtypes, dtypes)
    common = common_type(dtypes)
    picked = [pl.col(c).cast(common).alias(f"__mlsql_{n}") for n, c in columns.items()]
    if sample_weight is not None:
        w = weight(func, pl.col(sample_weight), schema[sample_weight])
        picked.append(w.alias(WEIGHT))
        names.append("w")
    lf = lf.select(*(pl.col(g) for g in groups), *picked)
    lf = lf.filter(pl.all_horizontal(pl.col(f"__mlsql_{n}").is_not_null() for n in names))
    return lf, groups


def _tally(sample_weight: str | None) -> pl.Expr:
    """Rows counted (Int64), or their weights summed."""
    return pl.len().cast(pl.Int64) if sample_weight is None else pl.col(WEIGHT).sum()


def _class_distribution(source: Frame, call: TableCall) -> Frame:
    lf, groups = _prepared(source, call)
    n = pl.col("count").sum().over(groups) if groups else pl.col("count").sum()
    out = (
        lf.group_by(*groups, pl.col("__mlsql_label").alias("class"))
        .agg(_tally(call.sample_weight).alias("count"))
        .with_columns(**formula("class_distribution")(OPS, SL.ClassCount(pl.col("count"), n)))
        .sort(*groups, "class", nulls_last=True)
    )
    return K.finish(out, source)


class_distribution = table_function(POLARS, "class_distribution", _class_distribution)


def _classes(lf: pl.LazyFrame, groups: list[str]) -> pl.LazyFrame:
    both = pl.concat(
        [
            lf.select(*groups, pl.col("__mlsql_actual").alias("class")),
            lf.select(*groups, pl.col("__mlsql_predicted").alias("class")),
        ]
    )
    return both.unique()


def _confusion_matrix(source: Frame, call: TableCall) -> Frame:
    lf, groups = _prepared(source, call)
    sample_weight = call.sample_weight
    classes = _classes(lf, groups)
    grid = (
        classes.rename({"class": "actual"}).join(
            classes.rename({"class": "predicted"}), on=groups, how="inner", nulls_equal=True
        )
        if groups
        else classes.rename({"class": "actual"}).join(
            classes.rename({"class": "predicted"}), how="cross"
        )
    )
    cells = lf.group_by(
        *groups,
        pl.col("__mlsql_actual").alias("actual"),
        pl.col("__mlsql_predicted").alias("predicted"),
    ).agg(_tally(sample_weight).alias("count"))
    out = (
        grid.join(cells, on=[*groups, "actual", "predicted"], how="left", nulls_equal=True)
        .with_columns(pl.col("count").fill_null(0))
        .sort(*groups, "actual", "predicted", nulls_last=True)
    )
    return K.finish(out, source)


confusion_matrix = table_function(POLARS, "confusion_matrix", _confusion_matrix)


def _confusion_matrix_wide(source: Frame, call: TableCall) -> pl.DataFrame:
    long = confusion_matrix(source.lazy(), *call.columns.values(), **call.keywords).collect()  # type: ignore[union-attr]
    groups = K.by_columns(call.by, call.func)
    classes = long["predicted"].unique().sort().to_list()
    order = wide_columns(classes, [*groups, "actual"])
    named = pl.col("predicted").replace_strict(classes, order, return_dtype=pl.String)
    wide = long.with_columns(named).pivot("predicted", index=[*groups, "actual"], values="count")
    return wide.select(*groups, "actual", *order).sort(*groups, "actual", nulls_last=True)


confusion_matrix_wide = table_function(
    POLARS,
    "confusion_matrix_wide",
    _confusion_matrix_wide,
    returns=table_returns(
        POLARS,
        "confusion_matrix_wide",
        frame="polars.DataFrame",
        more="Always collected (the columns depend on the data).",
    ),
    result="pl.DataFrame",
)


def _class_metrics(source: Frame, call: TableCall) -> Frame:
    b, zd, sample_weight = call.params["beta"], call.params["zero_division"], call.sample_weight
    lf, groups = _prepared(source, call)
    a, p = pl.col("__mlsql_actual"), pl.col("__mlsql_predicted")
    totals = (
        lf.group_by(*groups).agg(_tally(sample_weight).alias("n"))
        if groups
        else (lf.select(_tally(sample_weight).alias("n")))
    )
    one = pl.lit(1, pl.Int64) if sample_weight is None else pl.col(WEIGHT)
    zero = pl.lit(0, pl.Int64) if sample_weight is None else pl.lit(0.0)
    spread = pl.concat(
        [
            lf.select(
                *groups,
                a.alias("class"),
                one.alias("r"),
                zero.alias("c"),
                (
                    (a == p).cast(pl.Int64)
                    if sample_weight is None
                    else pl.when(a == p).then(one).otherwise(zero)
                ).alias("d"),
            ),
            lf.select(
                *groups,
                p.alias("class"),
                zero.alias("r"),
                one.alias("c"),
                zero.alias("d"),
            ),
        ]
    )
    per_class = spread.group_by(*groups, "class").agg(pl.col("r", "c", "d").sum())
    joined = (
        per_class.join(totals, on=groups, how="left", nulls_equal=True)
        if groups
        else per_class.join(totals, how="cross")
    )
    row = SL.ClassRow(*(pl.col(k) for k in ("n", "r", "c", "d")))
    values = formula("class_metrics")(OPS, row, beta=b, zero_division=zd)
    out = joined.select(*groups, "class", **{name: e for name, e in values.items()}).sort(
        *groups, "class", nulls_last=True
    )
    return K.finish(out, source)


class_metrics = table_function(POLARS, "class_metrics", _class_metrics)


for _fn in (
    majority_class,
    minority_class,
    class_distribution,
    confusion_matrix,
    confusion_matrix_wide,
    class_metrics,
):
    _fn.__doc__ = inspect.cleandoc(_fn.__doc__ or "")  # its Examples found as written

__all__ = [
    *hand_written("polars", FAMILIES),
    *publish(globals(), "polars", SL.FAMILY, lambda m: function_of(lookup(m))),
]
