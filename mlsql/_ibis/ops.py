"""The formulas' primitives as ibis expressions, in the plan's three steps.

A formula mixes two levels: per-row expressions (what it sums) and the group's
values (what it computes from the sums). Written as one ibis expression, every
use of a sum repeats the sum's SQL and every ``let`` repeats its values, so a
kappa p-value's SQL runs to megabytes. :class:`IbisOps` splits the levels as the
plan does (DESIGN.md section 3: per-row statistics, group aggregate, formula):

1. ``sum``, ``mean`` and ``count`` of a per-row expression record the aggregate
   once (the same aggregate asked for twice is one column, :class:`Plan`) and
   return a deferred reference to its column, ``_["__mlsql_s3"]``;
2. everything computed from those references is deferred too (ibis' ``_``), and
   each ``let`` becomes one more projection layer over the aggregated table, so a
   value bound once is computed once;
3. the measures are selected from the last layer.

ibis has no expression that fails a query, so a formula's ``error_if`` (and an
input's check) becomes a :class:`Check`: a code that is NULL where all is well,
the smallest over the group's rows (or the group's own condition). After the
query, the first check with a code raises its message (:func:`raise_failed`):
the verdict and the words are every engine's, only the moment differs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.operations as ops
import ibis.expr.types as ir
from ibis import _
from ibis.common.deferred import Deferred, deferrable

from mlsql._errors import MlsqlError
from mlsql._params import ZeroDivision

FLOAT = "float64"


def null(dtype: Any = FLOAT) -> ir.Value:
    """A typed NULL (an untyped one has no type a backend can compute with)."""
    return ibis.null().cast(dtype)


def where(condition: ir.BooleanValue, x: ir.Value) -> ir.Value:
    """``x`` where ``condition`` holds, else NULL of ``x``'s type: a ``CASE`` with no cast, as
    a typed NULL is a cast that DataFusion 51 reads as a string view (``VARCHAR``), on lists of
    which its array functions ran about 50 times slower (benchmarks/README.md, "Ranked lists").

    Examples
    --------
    >>> import ibis
    >>> t = ibis.memtable({"a": [["x"], ["y"]], "k": [True, False]})
    >>> t.select(a=where(t.k, t.a)).to_pyarrow()["a"].to_pylist()
    [['x'], None]
    """
    return ibis.cases((condition, x))


def value(x: Any) -> Any:
    """``x`` as an ibis value: expressions as they are, None as a NULL double, else a literal."""
    if isinstance(x, (ir.Value, Deferred)):
        return x
    if x is None:
        return null()
    if isinstance(x, float):
        return ibis.literal(x, type=FLOAT)
    return ibis.literal(x)


def deferred(x: Any) -> bool:
    """Whether ``x`` is a group's value (computed from the aggregates), not a row's."""
    return isinstance(x, Deferred)


@dataclass
class Check:
    """A deferred check: ``code`` (NULL where all is well) per row of the projected rows
    (``column`` names it there) or per group (a deferred group value); ``message(code)``
    is the error of the smallest code found."""

    code: Any
    message: Callable[[Any], str]
    #: the projected column holding the code (a check of the input rows), else ""
    column: str = ""


@dataclass
class Checks:
    """The checks of one query, in the order the engines run them.

    A check of the input rows (:meth:`add_code`) is projected with the per-row
    statistics (:attr:`projected`); a formula's check (:meth:`add`) is over the
    projected rows or the group's values already.
    """

    items: list[Check] = field(default_factory=list)
    #: the checks of input rows: the projection's column name -> the code over the table
    projected: dict[str, ir.Value] = field(default_factory=dict)

    def add(self, condition: Any, message: str) -> None:
        """Fail with ``message`` where ``condition`` holds (a row's or a group's)."""
        self.items.append(Check(ibis.ifelse(condition, 0, null("int8")), lambda _: message))

    def add_code(self, code: ir.Value, message: Callable[[Any], str]) -> None:
        """Fail with ``message(smallest code)`` where the input rows' ``code`` is not NULL."""
        name = f"__mlsql_k{len(self.items)}"
        self.projected[name] = code
        self.items.append(Check(code, message, name))

    def aggregates(self, rows: ir.Table) -> dict[str, ir.Value]:
        """The smallest code of each check of rows, over the projected ``rows``."""
        return {
            f"__mlsql_c{i}": (rows[c.column] if c.column else c.code).min()
            for i, c in enumerate(self.items)
            if not deferred(c.code)
        }

    def finals(self) -> dict[str, Any]:
        """Every check's code in the last layer (a group's condition computed there)."""
        return {
            f"__mlsql_c{i}": c.code if deferred(c.code) else _[f"__mlsql_c{i}"]
            for i, c in enumerate(self.items)
        }


def raise_failed(checks: Checks, row: dict[str, Any]) -> None:
    """Raise the message of the first check that failed in a result ``row`` (a dict)."""
    for i, check in enumerate(checks.items):
        code = row.get(f"__mlsql_c{i}")
        if code is not None:
            raise MlsqlError(check.message(code))


def raise_failed_rows(checks: Checks, rows: ir.Table) -> None:
    """Run the checks of input rows (their codes projected in ``rows``) in a query of their
    own, before the query that reads the rows; raise the first that failed."""
    found = checks.aggregates(rows)
    if found:
        [row] = rows.aggregate(**found).to_pyarrow().to_pylist()
        raise_failed(checks, row)


@dataclass
class Plan:
    """The aggregates the formulas asked for (each once) and the layers of bound values.

    A bound value goes to the first layer after every bound value it reads, so the
    query nests as deep as the formulas' ``let`` do, not once per ``let`` (DataFusion's
    parser, for one, stops at 50 levels).
    """

    aggregates: dict[str, ir.Value] = field(default_factory=dict)
    layers: list[dict[str, Any]] = field(default_factory=list)
    #: the group columns' names (in the projected rows and in every side table)
    keys: list[str] = field(default_factory=list)
    #: tables beside the rows, each holding the group columns (the single-label family's
    #: classes, class pairs and cells per group): name -> table
    sides: dict[str, ir.Table] = field(default_factory=dict)
    #: per side table, its aggregates: column name -> (per-item value, reduction)
    side_aggregates: dict[str, dict[str, tuple[Any, str]]] = field(default_factory=dict)
    #: a side table's name by what it is made of (a lowering's key), so it is made once
    side_names: dict[Any, str] = field(default_factory=dict)
    _names: dict[Any, str] = field(default_factory=dict)
    #: every column's type (aggregates and bound values), and each bound value's layer
    _types: dict[str, Any] = field(default_factory=dict)
    _layer: dict[str, int] = field(default_factory=dict)
    #: the backend's name (:func:`integers` differs on DataFusion)
    backend: str = ""
    #: the series of :meth:`gamma_series`: its column, the layer after which it is summed
    #: (-1: over the aggregates), and its terms' count, a0 and y (bound values)
    series: list[tuple[str, int, tuple[Any, Any, Any]]] = field(default_factory=list)

    def aggregate(self, expr: ir.Value) -> Deferred:
        """A reference to ``expr``'s column in the aggregated table (one column per aggregate)."""
        key = expr.op()
        if key not in self._names:
            name = self._names[key] = f"__mlsql_s{len(self._names)}"
            self.aggregates[name] = expr
            self._types[name] = expr.type()
        return _[self._names[key]]

    def side(self, name: str, table: ir.Table) -> None:
        """Register the side table ``table`` under ``name`` (once; see :attr:`sides`)."""
        self.sides.setdefault(name, table)
        self.side_aggregates.setdefault(name, {})

    def aggregate_side(self, side: str, x: Any, how: str) -> Deferred:
        """A reference to the ``how`` (sum, mean, count, min, max, distinct) of ``x`` over each group's rows of
        the side table ``side``. ``x`` is a deferred value of the side table's columns and
        of the rows' aggregates (a group's n may be compared with a class's count): the side
        table is joined to the rows' aggregates by group before it is aggregated."""
        table = self.sides[side]
        rows = {n: self._types[n] for n in self.aggregates}
        probe = ibis.table({**table.schema(), **rows}, name="__mlsql_side")
        reduced = _reduce(_resolve(x, probe), how)
        key = (side, reduced.op())
        if key not in self._names:
            name = self._names[key] = f"__mlsql_x{len(self._names)}"
            self.side_aggregates[side][name] = (x, how)
            self._types[name] = reduced.type()
        return _[self._names[key]]

    def bind(self, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """References to ``values``, each computed once in a layer over the aggregates."""
        probe = ibis.table(self._types, name="__mlsql_probe")
        out = []
        for v in values:
            if not deferred(v):
                out.append(v)
                continue
            resolved = v.resolve(probe)
            layer = self._after(resolved) + 1
            name = f"__mlsql_l{len(self._layer)}"
            self._layer[name], self._types[name] = layer, resolved.type()
            while len(self.layers) <= layer:
                self.layers.append({})
            self.layers[layer][name] = v
            out.append(_[name])
        return tuple(out)

    def _after(self, resolved: ir.Value) -> int:
        """The last layer ``resolved`` reads a value of (-1: only aggregates)."""
        read = {f.name for f in resolved.op().find(ops.Field)}
        return max((self._layer[n] for n in read if n in self._layer), default=-1)

    def gamma_series(self, count: Any, a0: Any, y: Any) -> Deferred:
        """A reference to Σ_{i < count} y^(a0 + i) e^-y / Γ(a0 + i + 1) per group (``count``
        whole, ``y`` > 0; 0 where ``count`` is NULL or below 1).

        Where ibis maps arrays (DuckDB, PostgreSQL, BigQuery, ...) a value of the group's row:
        the terms of the integers below ``count``, summed (PostgreSQL raises on a division by
        0, so nothing may make it compute the layers' values the formulas guard: a join of
        the layers would, as it materializes them). DataFusion's ibis maps no array: there the
        terms are rows of their own (:meth:`_sum_series`), summed per group and joined back.
        """
        if self.backend != "datafusion":
            return self.bind((_series_sum(count, a0, y),))[0]
        values = self.bind((count, a0, y))
        probe = ibis.table(self._types, name="__mlsql_probe")
        layer = max((self._after(v.resolve(probe)) for v in values if deferred(v)), default=-1)
        name = f"__mlsql_q{len(self.series)}"  # not __mlsql_g: the groups
        self.series.append((name, layer, values))
        self._layer[name], self._types[name] = layer, dt.float64
        return _[name]

    def _sum_series(self, out: ir.Table, name: str, values: tuple[Any, Any, Any]) -> ir.Table:
        """``out`` with the series ``name`` beside each group's row: the terms one row each
        (the integers below ``count`` unnested), summed per group and joined back (0 where
        no term is)."""
        count, a0, y = (_resolve(v, out).cast(FLOAT) for v in values)
        keys = {f"__mlsql_j{k}": out[g] for k, g in enumerate(self.keys)}
        n, a_, y_, i_, t_ = (f"__mlsql_s{c}" for c in "nayit")
        terms = out.select(**keys, **{a_: a0, y_: y, n: count.fill_null(0).cast("int64")})
        terms = terms.filter(terms[n] > 0)
        terms = terms.select(*keys, a_, y_, **{i_: integers(terms[n], self.backend)})
        term = gamma_term(terms[i_], terms[a_], terms[y_])
        terms = terms.select(*keys, **{t_: term})
        summed = (
            terms.group_by(list(keys)).aggregate(**{name: terms[t_].sum()})
            if keys
            else terms.aggregate(**{name: terms[t_].sum()})
        )
        out = self._beside_groups(out, summed)
        return out.mutate(**{name: out[name].fill_null(0.0)})

    def _beside_groups(self, out: ir.Table, per_group: ir.Table) -> ir.Table:
        """``out`` (a row per group) with ``per_group``'s values beside each group's row:
        ``per_group`` holds the group columns renamed ``__mlsql_j0``, ... (NULL-safe join,
        NULL for a group it lacks; no groups: a cross join of its one row)."""
        if not self.keys:
            return out.cross_join(per_group)
        renamed = [f"__mlsql_j{k}" for k in range(len(self.keys))]
        on = [same(out[g], per_group[j]) for j, g in zip(renamed, self.keys, strict=True)]
        return out.left_join(per_group, on).drop(*renamed)

    def apply(self, aggregated: ir.Table) -> ir.Table:
        """The aggregated table, joined to the aggregates over each side table (each group's
        row, NULL-safe on the group keys; NULL for a group without side rows), with every layer
        of bound values added, in order, and each series summed after the layer of its
        values."""
        out = aggregated
        renamed = {f"__mlsql_j{k}": g for k, g in enumerate(self.keys)}
        for side, found in self.side_aggregates.items():
            if not found:
                continue
            frame = beside(self.sides[side], aggregated, self.keys)
            values = {n: _reduce(_resolve(x, frame), how) for n, (x, how) in found.items()}
            per_group = (
                frame.group_by(self.keys).aggregate(**values)
                if self.keys
                else frame.aggregate(**values)
            )
            out = self._beside_groups(out, per_group.rename(renamed) if self.keys else per_group)
        for index in range(-1, len(self.layers)):
            if index >= 0:
                out = out.mutate(**self.layers[index])
            for name, after, inputs in self.series:
                if after == index:
                    out = self._sum_series(out, name, inputs)
        return out


#: the shift of :func:`log_gamma`'s argument before Stirling's series: its truncation error is
#: then below 2e-14 (ln Γ is exact to a few units of 1e-14 for arguments up to 1,000)
STIRLING_SHIFT = 10
#: the coefficients of Stirling's series of ln Γ(w): Σ c_k / w^(2k + 1)
STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188)


def log_gamma(z: ir.FloatingValue) -> ir.FloatingValue:
    """ln Γ(z) for z >= 1 (no backend here has ``lgamma``): Stirling's series at
    z + :data:`STIRLING_SHIFT`, less the logarithms of the shift's factors.

    Examples
    --------
    >>> import math
    >>> t = ibis.memtable({"z": [1.0, 1.5, 7.0, 250.5]})
    >>> got = t.select(g=log_gamma(t.z)).to_pyarrow()["g"].to_pylist()
    >>> zs = [1.0, 1.5, 7.0, 250.5]
    >>> [math.isclose(g, math.lgamma(z), rel_tol=1e-14, abs_tol=1e-14) for g, z in zip(got, zs)]
    [True, True, True, True]
    """
    w = z + float(STIRLING_SHIFT)
    inverse = 1.0 / w
    series = sum((c * inverse ** (2 * k + 1) for k, c in enumerate(STIRLING)), ibis.literal(0.0))
    body = (w - 0.5) * w.ln() - w + 0.5 * math.log(2 * math.pi) + series
    return body - sum(((z + float(k)).ln() for k in range(STIRLING_SHIFT)), ibis.literal(0.0))


def gamma_term(i: ir.IntegerValue, a0: ir.FloatingValue, y: ir.FloatingValue) -> ir.FloatingValue:
    """y^(a0 + i) e^-y / Γ(a0 + i + 1), from its logarithm (no power that could overflow
    first); ``y`` <= 0 reads as 1 (the chi-square tail is 1 there before it asks)."""
    x = i.cast(FLOAT) + a0
    log_y = ibis.ifelse(y > 0, y, 1.0).ln()
    return (x * log_y - y - log_gamma(x + 1.0)).exp()


@deferrable
def _series_sum(count: Any, a0: Any, y: Any) -> ir.FloatingValue:
    """Σ_{i < count} :func:`gamma_term` as an array's sum (0 where ``count`` is NULL or < 1).

    Examples
    --------
    >>> import math
    >>> t = ibis.memtable({"n": [2, 0, None], "y": [1.5, 1.5, 1.5]})
    >>> got = t.select(s=_series_sum(t.n, 0.0, t.y)).to_pyarrow()["s"].to_pylist()
    >>> math.isclose(got[0], math.exp(-1.5) * (1 + 1.5), rel_tol=1e-14), got[1:]  # chi2.sf(3, 4)
    (True, [0.0, 0.0])
    """
    count, a0, y = value(count), value(a0).cast(FLOAT), value(y).cast(FLOAT)
    whole = count.cast(FLOAT).floor().cast("int64")
    terms = ibis.range(0, whole).map(lambda i: gamma_term(i, a0, y))
    return terms.sums().cast(FLOAT).fill_null(0.0)


@ibis.udf.scalar.builtin(name="range")
def _datafusion_range(start: int, stop: int) -> dt.Array(dt.int64):  # type: ignore[valid-type]
    """DataFusion's ``range(start, stop)`` (ibis compiles no ``ibis.range`` there)."""


def integers(stop: ir.IntegerValue, backend: str) -> ir.IntegerColumn:
    """0, 1, ..., ``stop`` - 1, one row each (an unnested range: call it in a ``select``)."""
    if backend == "datafusion":
        return _datafusion_range(0, stop).unnest()
    return ibis.range(0, stop).unnest()


def same(a: ir.Value, b: ir.Value) -> ir.BooleanValue:
    """``a IS NOT DISTINCT FROM b`` as two equalities a hash join takes: the values with NULL
    as a stand-in of their type, and whether each is NULL (``identical_to`` is no equality a
    database hashes, and ibis writes it unparenthesised, which DataFusion 51 reads as a
    comparison with ``y AND p`` when a label's equality follows). A type without a stand-in
    here is compared as ``a = b OR (a IS NULL AND b IS NULL)``."""
    dtype = a.type()
    stand_in: Any = None
    if dtype.is_string():
        stand_in = ""
    elif dtype.is_integer() or dtype.is_floating() or dtype.is_decimal():
        stand_in = 0
    elif dtype.is_boolean():
        stand_in = False
    if stand_in is None:
        return (a == b).fill_null(False) | (a.isnull() & b.isnull())
    return (a.fill_null(stand_in) == b.fill_null(stand_in)) & (a.isnull() == b.isnull())


def beside(
    left: ir.Table, right: ir.Table, keys: list[str], on: tuple[tuple[str, str], ...] = ()
) -> ir.Table:
    """``left`` joined to ``right`` on the group columns ``keys`` (NULL-safe) and on the
    (left column, right column) pairs ``on``; right's group columns dropped (no keys and no
    pairs: a cross join)."""
    renamed = {f"__mlsql_j{k}": g for k, g in enumerate(keys)}
    r = right.rename(renamed)
    preds = [same(left[g], r[j]) for j, g in renamed.items()]
    preds += [left[a] == r[b] for a, b in on]
    if not preds:
        return left.cross_join(r)
    return left.join(r, preds).drop(*renamed)


def _resolve(x: Any, table: ir.Table) -> ir.Value:
    """A per-item value over ``table``: a deferred one resolved, a constant one a column of
    that constant (so that it can be summed)."""
    if deferred(x):
        return x.resolve(table)
    c = value(x)
    first = table[table.columns[0]]
    return ibis.ifelse(first.isnull(), c, c)


def _reduce(x: ir.Value, how: str) -> ir.Value:
    """The SQL aggregate ``how`` of a per-item value: a sum, mean, min or max as a double, a
    count, or a count of distinct values."""
    if how == "sum":
        return x.sum().cast(FLOAT)
    if how == "mean":
        return x.cast(FLOAT).mean()
    if how == "max":
        return x.max().cast(FLOAT)
    if how == "min":
        return x.min().cast(FLOAT)
    if how == "distinct":
        return x.nunique()
    return x.count()


class IbisOps:
    """Formula primitives for ibis, with a static ``zero_division`` (as Polars').

    Examples
    --------
    >>> import ibis
    >>> from mlsql._params import ZeroDivision
    >>> t = ibis.memtable({"x": [1.0, None, 2.0]})
    >>> ops = IbisOps(Checks(), Plan())
    >>> total = ops.sum(t.x)
    >>> ratio = ops.when(ops.count(t.x) == 0, None, total / ops.count(t.x))
    >>> out = t.aggregate(**ops.plan.aggregates)
    >>> out.select(r=ratio).to_pyarrow().to_pylist()
    [{'r': 1.5}]
    >>> ops.undefined(ZeroDivision("value", 1.0), None)
    1.0
    """

    def __init__(self, checks: Checks, plan: Plan) -> None:
        self.checks = checks
        self.plan = plan

    def when(self, condition: Any, then: Any, otherwise: Any) -> Any:
        """``then`` where ``condition`` holds, else ``otherwise`` (also where it is NULL)."""
        return ibis.ifelse(value(condition), value(then), value(otherwise))

    def undefined(self, zero_division: ZeroDivision, nothing_to_score: Any) -> Any:
        """The value of an undefined ratio under ``zero_division``."""
        return zero_division.undefined(self.when, nothing_to_score, nan=self.nan, null=null())

    def skips_undefined(self, zero_division: ZeroDivision) -> bool:
        """Whether averages leave undefined values out (NaN and 'ignore')."""
        return zero_division.skips_undefined

    def sum(self, x: Any) -> Any:
        """SQL ``sum`` of a per-row expression, as a double: NULL over no non-NULL values.

        A double, as PostgreSQL's sum of integers is a NUMERIC that divides as one."""
        return self.plan.aggregate(value(x).sum().cast(FLOAT))

    def mean(self, x: Any) -> Any:
        """SQL ``avg`` of a per-row expression: NULL over no non-NULL values."""
        return self.plan.aggregate(value(x).cast(FLOAT).mean())

    def count(self, x: Any) -> Any:
        """Non-NULL values of a per-row expression."""
        return self.plan.aggregate(value(x).count())

    def not_null(self, x: Any) -> Any:
        """True where ``x`` is not NULL (NaN included)."""
        return value(x).notnull()

    def is_nan(self, x: Any) -> Any:
        """True where ``x`` is NaN (NULL stays NULL)."""
        return value(x).cast(FLOAT).isnan()

    def nan(self) -> Any:
        """NaN, as a double."""
        return ibis.literal(float("nan"), type=FLOAT)

    def error_if(self, condition: Any, x: Any, template: str, got: Any) -> Any:
        """``x``; the query's result raises ``template`` ({} = ``got``) where ``condition``."""
        self.checks.add(value(condition), template.format(got))
        return x

    # beyond the core protocol: formulas of other families use these ---------------
    def sqrt(self, x: Any) -> Any:
        """Square root."""
        return value(x).cast(FLOAT).sqrt()

    def exp(self, x: Any) -> Any:
        """e to the power ``x``."""
        return value(x).cast(FLOAT).exp()

    def log2(self, x: Any) -> Any:
        """Base-2 logarithm."""
        return value(x).cast(FLOAT).log2()

    def floor(self, x: Any) -> Any:
        """The largest whole number <= ``x`` (as a double)."""
        return value(x).cast(FLOAT).floor().cast(FLOAT)

    def pow(self, base: Any, exponent: Any) -> Any:
        """``base ** exponent``."""
        return value(base).cast(FLOAT) ** value(exponent)

    def let(self, values: tuple[Any, ...], body: Any, name: str = "") -> Any:
        """``body(*values)`` with each group value computed once (a layer over the
        aggregates); per-row values are written where ``body`` names them."""
        if any(deferred(v) for v in values):
            return body(*self.plan.bind(values))
        return body(*values)

    def let_series(self, values: tuple[Any, ...], body: Any, name: str = "") -> Any:
        """:meth:`let` for a body that sums a series (Polars' differs)."""
        return self.let(values, body, name)

    def gamma_series(self, count: Any, a0: Any, y: Any) -> Any:
        """Σ_{i < count} y^(a0 + i) e^-y / Γ(a0 + i + 1) of a group's values
        (:meth:`Plan.gamma_series`)."""
        return self.plan.gamma_series(count, a0, y)


class SideOps(IbisOps):
    """Formula primitives whose ``sum``, ``mean`` and ``count`` reduce over a side table's
    rows per group (:meth:`Plan.aggregate_side`): the class axis of
    :class:`~mlsql.measures.single_label.ClassStats`, whose per-class values are deferred
    columns of the table of (group, class) rows."""

    def __init__(self, checks: Checks, plan: Plan, side: str) -> None:
        super().__init__(checks, plan)
        self.side = side

    def sum(self, x: Any) -> Any:
        """Σ over the group's side rows, as a double (NULL over none)."""
        return self.plan.aggregate_side(self.side, x, "sum")

    def mean(self, x: Any) -> Any:
        """Mean over the group's side rows of the non-NULL values."""
        return self.plan.aggregate_side(self.side, x, "mean")

    def count(self, x: Any) -> Any:
        """The group's side rows where ``x`` is not NULL."""
        return self.plan.aggregate_side(self.side, x, "count")

    def let(self, values: tuple[Any, ...], body: Any, name: str = "") -> Any:
        """``body(*values)``, each value written where it is named (a side row's values are
        columns of the side table, which no layer over the aggregates holds)."""
        return body(*values)
