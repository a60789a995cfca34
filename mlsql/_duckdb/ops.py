"""The primitives the formulas need, written as DuckDB SQL."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from mlsql._formulas import FORMULAS, Counts, flatten, formula_params
from mlsql._sqlexpr import Sql, call, lit
from mlsql._sqlops import SqlPrimitives


def stored(x: Sql | str) -> Sql:
    """A stored count as DOUBLE, as Polars and Spark read it: the formulas' sums and products
    of BIGINT or INTEGER columns overflowed (2^62 + 2^62; kappa's (tp + fn)(fn + tn) past
    3e9), where the aggregates' own counts are HUGEINT sums. Text and booleans stay refused.

    Examples
    --------
    >>> str(stored(Sql("tp")))
    '(tp * 1e0)'
    """
    return (x if isinstance(x, Sql) else Sql(x)) * Sql("1e0")


class SqlOps(SqlPrimitives):
    """Formula primitives for DuckDB (:class:`~mlsql._sqlops.SqlPrimitives`, and DuckDB's
    own); ``qualify`` names mlsql's own macros.

    Examples
    --------
    >>> ops = SqlOps(lambda name: name)
    >>> str(ops.sum(Sql("x")))
    'sum(x)'
    """

    def __init__(self, qualify: Callable[[str], str]) -> None:
        self.qualify = qualify

    def aggregates(self, name: str) -> bool:
        """Whether formula ``name`` aggregates (:func:`aggregating`)."""
        return aggregating(name)

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Sql:
        """Name the formula's macro instead of inlining it."""
        return call(self.qualify(f"_mlsql_{name}"), *flatten(args))

    def undefined(self, zero_division: Any, nothing_to_score: Any) -> Sql:
        return call(self.qualify("_mlsql_undefined"), zero_division, nothing_to_score)

    def mean(self, x: Any) -> Sql:
        """``favg``: a compensated (Kahan-Babuska) mean, within a few units in the last place
        at any row count and thread count (``avg`` of DOUBLE drifted by 2e-11 relative at
        10M rows, with a different last digit from run to run)."""
        return call("favg", x)

    def skips_undefined(self, zero_division: Any) -> bool | None:
        return None  # a macro parameter: known only when the query runs

    # beyond the core protocol: formulas of other families use these ---------------
    def label_set(self, labels: Any) -> Sql:
        """The list primitives of the set helpers (:class:`~mlsql.measures.multilabel.ListOps`):
        ``list_distinct`` drops NULLs."""
        return call("list_sort", call("list_distinct", labels))

    def both(self, a: Any, b: Any) -> Sql:
        return Sql(f"list_filter({a}, lambda x: list_contains({b}, x))")

    def only(self, a: Any, b: Any) -> Sql:
        return Sql(f"list_filter({a}, lambda x: NOT coalesce(list_contains({b}, x), false))")

    def either(self, a: Any, b: Any) -> Sql:
        return call("list_concat", a, b)

    def let_series(self, values: tuple[Any, ...], body: Any, name: str) -> Any:
        """:meth:`let` for a body that sums a series (Polars' differs)."""
        return self.let(values, body, name)

    def gamma_series(self, count: Any, a0: Any, y: Any) -> Sql:
        """Σ_{i < count} y^(a0 + i) e^-y / Γ(a0 + i + 1) (``count`` whole, ``y`` > 0), each term
        from ``lgamma`` in one exponent (no product of terms that could underflow first)."""
        log_y = f"ln(CASE WHEN {lit(y)} > 0 THEN {lit(y)} ELSE 1 END)"
        term = f"exp((i + {lit(a0)}) * {log_y} - {lit(y)} - lgamma(i + {lit(a0)} + 1))"
        terms = f"list_transform(range(0, CAST({lit(count)} AS BIGINT)), lambda i: {term})"
        return Sql(f"coalesce(list_sum({terms}), 0.0)")


#: the suffix of an aggregating formula's macro that sums in a fixed order (:class:`FixedOrderOps`)
IN_ORDER = "_in_order"
#: the macros of a sum and a mean over their values in order: (name, aggregate)
ORDERED = {"sum": f"_mlsql_sum{IN_ORDER}", "avg": f"_mlsql_avg{IN_ORDER}"}


class FixedOrderOps(SqlOps):
    """Sums and means in a fixed order (by value), so a report is the same on every run.

    DuckDB sums floating-point values in parallel, in whatever order threads
    finish; the last digit of a mean over labels then changes between runs
    of the same query. Summing the values sorted makes the result a function
    of the values alone. The label and row tables summed here are small
    (one row per label, one per distinct row shape), so the sort is cheap.

    A sum is ``_mlsql_sum_in_order(x)``, ``sum(x ORDER BY x)`` (:data:`ORDERED`; the mean
    likewise), so a long ``x`` is written once. A formula that aggregates is named by its
    in-order macro, ``_mlsql_<name>_in_order`` (:data:`IN_ORDER`; its body is the formula
    under these ops), not by ``_mlsql_<name>``, whose sums run in any order.

    Examples
    --------
    >>> import mlsql.measures  # the measures' modules register their formulas
    >>> ops = FixedOrderOps(lambda name: name)
    >>> str(ops.mean(Sql("x"))), str(ops.call_formula("share_of_labels", (Sql("c"),)))
    ('_mlsql_avg_in_order(x)', '_mlsql_share_of_labels_in_order(c)')
    """

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Sql:
        if aggregating(name):
            return call(self.qualify(f"_mlsql_{name}{IN_ORDER}"), *flatten(args))
        return super().call_formula(name, args)

    def sum(self, x: Any) -> Sql:
        return call(self.qualify(ORDERED["sum"]), x)

    def mean(self, x: Any) -> Sql:
        return call(self.qualify(ORDERED["avg"]), x)


@cache
def aggregating(name: str) -> bool:
    """Whether formula ``name`` aggregates (calls ``sum``, ``mean`` or ``count``)."""

    class Probe(SqlOps):
        call_formula = None  # type: ignore[assignment]  # inline nested formulas too
        used = False

        def sum(self, x: Any) -> Sql:
            Probe.used = True
            return super().sum(x)

        def mean(self, x: Any) -> Sql:
            Probe.used = True
            return super().mean(x)

        def count(self, x: Any) -> Sql:
            Probe.used = True
            return super().count(x)

    params = formula_params(name)
    args: list[Any] = [Sql(p) for p in params]
    if "tp" in params:
        i = params.index("tp")
        args[i : i + 3] = [Counts(*args[i : i + 3])]
    FORMULAS[name].raw(Probe(lambda n: n), *args)
    return Probe.used
