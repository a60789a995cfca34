"""Single-label (multiclass) measures in Spark: one label per row, actual against predicted.

Every measure has the name, parameters and numbers of the SQL library and of
Polars (:mod:`mlsql.measures.single_label`); the formulas are the registry's,
run on Columns. Labels are text, integers or booleans, one kind on both sides
(a Column of a DataFrame of another kind, or an array, is an
:class:`~mlsql.MlsqlError`; for names, Spark's analyzer rejects two kinds
with an ``AnalysisException`` naming both types, see :func:`both_known`); a row where either side is NULL is unknown and
skipped; over no known rows every aggregate is NULL.

How each aggregate runs, and what it holds per group:

- ``accuracy``, ``error_rate``, ``prevalence``, ``class_error_rate`` and
  ``cost_error`` are counts and sums over the rows: streaming and mergeable,
  a few numbers per group.
- ``majority_class`` is Spark's ``mode`` (lowest value on ties): a hash map of
  the classes per group, mergeable. With ``sample_weight``, and for
  ``minority_class``, see below.
- The class-wise measures (``precision_score``, ``recall_score``,
  ``fbeta_score``, ``f1_score``, ``balanced_accuracy_score``,
  ``cohen_kappa_score`` and its tests, Bowker's test, ``matthews_corrcoef``)
  need every class's counts, and Spark has no exact aggregate that counts per
  value (``histogram_numeric`` and the sketches are approximate). With mlsql's
  jar (:func:`mlsql.spark.jvm.class_cells`) a Java aggregate counts the group's
  confusion cells: memory grows with its distinct (actual, predicted) cells,
  never with its rows; with weights each total is the exact sum of its rows'
  weights, rounded once. It counts classes that are text without a collation,
  integers, booleans or floating-point numbers. A Column of a DataFrame (``df.actual``) has its type
  when the Column is built, so the one form that applies is planned; for a
  name, both forms are planned and Spark folds away the one that does not
  apply when it plans the query.
- ``majority_error`` reads its largest class from the same aggregate over
  (label, label); ``minority_class`` (and ``majority_class`` with
  ``sample_weight``) its smallest (largest) class, whose value it finds in the
  group's sorted ``collect_set`` (memory grows with the classes).
- Without the jar (Spark Connect, ``spark.mlsql.jvm=false``) and for classes of
  other types they
  **collect the group's known (actual, predicted) values** (``collect_list``,
  memory per group of the order of its rows, like ``rae``). The per-class
  counts then come from sorting: the sorted classes seen on either side,
  concatenated with one side's values and sorted again, fall into runs whose
  lengths minus one are that side's count of each class, aligned with the
  classes (``O(n log n)``, no per-class scan). Weighted kappa also counts the
  distinct (actual, predicted) cells of the sorted pairs. For very large
  groups, use ``ms.evaluate`` (a two-level ``groupBy``) or the tables
  (``class_metrics``, ``confusion_matrix``), which are plain ``groupBy`` jobs.
- Either way the statistics are computed once per group and bound to a lambda
  variable; the formula reads them and reduces over the class axis with
  Spark's higher-order functions (:class:`ClassAxisOps`).
- Over a known class universe, :func:`over_labels` computes the class-wise
  measures in bounded memory: a ``count`` (or ``sum`` of weights) per class
  and side, weighted kappa's disagreements a streaming ``sum`` over the rows'
  class positions; a row whose class is not a label fails the query.
- ``cost_map`` collects a cost table's rows (small) into the nested map that
  ``cost_error`` takes.

The tables (``class_distribution``, ``confusion_matrix``,
``confusion_matrix_wide``, ``class_metrics``) take a DataFrame and column
names and return a DataFrame (``groupBy`` and joins, no collecting), with
optional ``by`` grouping columns, ordered by group and class.

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame(
...     [("a", "a"), ("a", "b"), ("b", "b"), ("c", "c")], "actual string, predicted string"
... )
>>> df.agg(ms.accuracy("actual", "predicted")).first()[0]
0.75
>>> round(df.agg(ms.f1_score("actual", "predicted", average="macro")).first()[0], 6)
0.777778
>>> [tuple(r) for r in ms.confusion_matrix(df, "actual", "predicted").where("count > 0").collect()]
[('a', 'a', 1), ('a', 'b', 1), ('b', 'b', 1), ('c', 'c', 1)]
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql import _classification_params as CP
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._front import examples
from mlsql._front.build import checked_params, formula, function, hand_written, lookup, publish
from mlsql._front.docs import CLASS_PARAM_DOCS, table_returns
from mlsql._front.example_outputs import OUTPUTS
from mlsql._front.inputs import (
    COST_VALUE_MESSAGE,
    LABEL_MESSAGE,
    TWICE_IN_TABLE_MESSAGE,
    check_required,
    finite_costs,
    mapping_costs,
)
from mlsql._front.table_functions import TableCall, table_function
from mlsql._front.tables import check_columns, wide_columns
from mlsql._registry import Measure
from mlsql.measures import single_label as SL
from mlsql.measures.contingency import Table2x2
from mlsql.spark import jvm
from mlsql.spark._build import example as example_lines
from mlsql.spark._build import shared_example
from mlsql.spark._engine import SPARK
from mlsql.spark._types import (
    bound,
    check_same_kind,
    checked_universe,
    data_type,
    to_column,
)
from mlsql.spark._weights import weight
from mlsql.spark.ops import SparkOps, column

FAMILIES = (SL.FAMILY,)
OPS = SparkOps()
#: measures whose statistics are every class's counts
CLASS_MEASURES = SL.CLASS_MEASURES
ALL = "__mlsql_all"
COSTS_MESSAGE = (
    "The 'costs' parameter of {func} must be a mapping actual -> {{predicted: cost}}, a mapping "
    "(actual, predicted) -> cost, a DataFrame with columns actual, predicted, cost, or a map "
    "Column (cost_map), the costs finite numbers. Got {got} instead."
)


# ------------------------------------------------------------------ inputs
def labels(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
    """Scalar labels of one kind where the types are known (arrays, maps, structs refused)."""
    types = [data_type(c) for c in cols]
    for name, dtype in zip(names, types, strict=True):
        if isinstance(dtype, (T.ArrayType, T.MapType, T.StructType)):
            raise MlsqlError(LABEL_MESSAGE.format(func=func, name=name, type=dtype.simpleString()))
    check_same_kind(func, names, types)


def _cost_inputs(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
    """cost_map: labels of one kind, and a numeric cost."""
    labels(func, names[:2], cols[:2])
    dtype = data_type(cols[2])
    if dtype is not None and not isinstance(dtype, (T.NumericType, T.NullType)):
        raise MlsqlError(CP.number_type_message(func, names[2], dtype.simpleString()))


def input_check(measure: Measure) -> Any:
    """Every input a scalar label (cost_map: and a numeric cost)."""
    return _cost_inputs if measure.name == "cost_map" else labels


def known(*inputs: Column) -> Column:
    """True where no input is NULL."""
    out = inputs[0].isNotNull()
    for x in inputs[1:]:
        out = out & x.isNotNull()
    return out


def both_known(actual: Column, predicted: Column) -> Column:
    """True where neither side is NULL; Spark's analyzer also checks that both are one kind.

    Names and expressions have no type until Spark analyses the query, and a
    comparison would cast text to numbers silently under ANSI mode. A branch
    that is never taken, ``array_union(array(actual), array(predicted))``,
    makes the analyzer reject two label kinds (an ``AnalysisException`` naming
    both array types, integer widths may differ); the optimizer then folds it
    away, so no row pays for it.
    """
    guard = F.when(F.lit(False), F.array_union(F.array(actual), F.array(predicted)))
    return known(actual, predicted) & guard.isNull()


# ------------------------------------------------------------------ parameters
@dataclass(frozen=True)
class Costs:
    """Validated costs: (actual, predicted, cost) entries, or a map Column actual -> predicted -> cost."""

    entries: tuple[tuple[Any, Any, float], ...] = ()
    table: Column | None = None


def check_costs(costs: Any, func: str) -> Costs:
    """A nested mapping, a pair mapping, a DataFrame (actual, predicted, cost) or a map Column."""
    if isinstance(costs, Column):
        return Costs(table=costs)
    if isinstance(costs, DataFrame):
        fields = {f.name: f.dataType for f in costs.schema.fields}
        if {"actual", "predicted", "cost"} <= set(fields) and isinstance(
            fields["cost"], T.NumericType
        ):
            # collected (a small table), and read as the mappings are: their errors
            rows = [tuple(r) for r in costs.select("actual", "predicted", "cost").collect()]
            found = finite_costs(rows)
            if found is not None:
                return Costs(entries=tuple(found))
        raise MlsqlError(COSTS_MESSAGE.format(func=func, got=f"a DataFrame of {list(fields)}"))
    found = mapping_costs(costs)
    if found is None:
        raise MlsqlError(COSTS_MESSAGE.format(func=func, got=repr(costs)))
    return Costs(entries=tuple(found))


def params(measure: Measure, given: dict[str, Any]) -> dict[str, Any]:
    """Validate this family's parameters that have no registry constraint (positive, label, costs)."""
    check_required(
        measure.name, given, ", a DataFrame actual, predicted, cost, or a cost_map Column"
    )
    out = dict(given)
    for name, value in given.items():
        if name == "costs":
            out[name] = check_costs(value, measure.name)
    return out


# ------------------------------------------------------------------ the class axis
def let(value: Column, body: Callable[[Column], Column]) -> Column:
    """``body(x)`` with ``x`` bound to ``value``, computed once: ``transform(array(value), body)[0]``."""
    return F.transform(F.array(value), body)[0]


def at(x: Any, i: Column) -> Any:
    """``x`` at class position ``i`` (a per-class value), or ``x`` itself (one value for all)."""
    return x.at(i) if isinstance(x, PerClass) else x


class PerClass:
    """A value per class: ``at(i)`` is its Column at class position ``i`` (a lambda variable).

    Arithmetic, comparisons and boolean operators combine per class, as they
    do on Columns, so the registry formulas run on it unchanged;
    :class:`ClassAxisOps` reduces it over the classes. ``at(i)`` is built once per
    position variable ``i``: a formula reads a value many times (precision in F1, its
    weighted average...), and each Column operation is several calls to the JVM.
    """

    __hash__ = None  # type: ignore[assignment]  # == builds a PerClass

    def __init__(self, at: Callable[[Column], Any]) -> None:
        self._at = at
        #: id(i) -> (i, value at i); ``i`` kept so that its id is not reused
        self._built: dict[int, tuple[Column, Any]] = {}

    def at(self, i: Column) -> Any:
        """The value at class position ``i``."""
        found = self._built.get(id(i))
        if found is None or found[0] is not i:
            found = self._built[id(i)] = (i, self._at(i))
        return found[1]

    def _with(self, other: Any, op: Callable[[Any, Any], Any], swap: bool = False) -> PerClass:
        def value(i: Column) -> Any:
            a, b = column(self.at(i)), at(other, i)
            return op(b, a) if swap else op(a, b)

        return PerClass(value)

    def __add__(self, o: Any) -> PerClass:
        return self._with(o, operator.add)

    def __radd__(self, o: Any) -> PerClass:
        return self._with(o, operator.add, True)

    def __sub__(self, o: Any) -> PerClass:
        return self._with(o, operator.sub)

    def __rsub__(self, o: Any) -> PerClass:
        return self._with(o, operator.sub, True)

    def __mul__(self, o: Any) -> PerClass:
        return self._with(o, operator.mul)

    def __rmul__(self, o: Any) -> PerClass:
        return self._with(o, operator.mul, True)

    def __truediv__(self, o: Any) -> PerClass:
        return self._with(o, operator.truediv)

    def __rtruediv__(self, o: Any) -> PerClass:
        return self._with(o, operator.truediv, True)

    def __pow__(self, o: Any) -> PerClass:
        return self._with(o, operator.pow)

    def __eq__(self, o: Any) -> PerClass:  # type: ignore[override]
        return self._with(o, operator.eq)

    def __ne__(self, o: Any) -> PerClass:  # type: ignore[override]
        return self._with(o, operator.ne)

    def __lt__(self, o: Any) -> PerClass:
        return self._with(o, operator.lt)

    def __le__(self, o: Any) -> PerClass:
        return self._with(o, operator.le)

    def __gt__(self, o: Any) -> PerClass:
        return self._with(o, operator.gt)

    def __ge__(self, o: Any) -> PerClass:
        return self._with(o, operator.ge)

    def __and__(self, o: Any) -> PerClass:
        return self._with(o, operator.and_)

    def __rand__(self, o: Any) -> PerClass:
        return self._with(o, operator.and_, True)

    def __or__(self, o: Any) -> PerClass:
        return self._with(o, operator.or_)

    def __ror__(self, o: Any) -> PerClass:
        return self._with(o, operator.or_, True)

    def __neg__(self) -> PerClass:
        return PerClass(lambda i: -column(self.at(i)))

    def __invert__(self) -> PerClass:
        return PerClass(lambda i: ~column(self.at(i)))

    def __bool__(self) -> bool:
        raise TypeError("a PerClass value has no truth value; use ops.when")


class ClassAxisOps(SparkOps):
    """Formula primitives over the class axis of one group's statistics.

    ``sum``, ``mean`` and ``count`` reduce a :class:`PerClass` value over the
    classes (``positions``: any array as long as the classes) with
    ``transform`` and ``aggregate``, as SQL's aggregates do: NULLs left out,
    NULL over no values; ``when`` and ``is_nan`` stay per class. Values that
    are not per class are handled as :class:`~mlsql.spark.ops.SparkOps` does.
    Sums are DOUBLE (exact for counts below 2**53).
    """

    def __init__(self, positions: Column) -> None:
        self.positions = positions

    def when(self, condition: Any, then: Any, otherwise: Any) -> Any:
        if not any(isinstance(x, PerClass) for x in (condition, then, otherwise)):
            return super().when(condition, then, otherwise)
        return PerClass(
            lambda i: F.when(column(at(condition, i)), column(at(then, i))).otherwise(
                column(at(otherwise, i))
            )
        )

    def is_nan(self, x: Any) -> Any:
        if isinstance(x, PerClass):
            return PerClass(lambda i: F.isnan(column(x.at(i))))
        return super().is_nan(x)

    def _reduce(self, x: Any, reduce: Callable[[Column], Column]) -> Column:
        per_class = x if isinstance(x, PerClass) else PerClass(lambda i: x)
        values = F.transform(self.positions, lambda _, i: column(per_class.at(i)))
        return let(F.filter(values, lambda v: v.isNotNull()), reduce)

    def sum(self, x: Any) -> Column:
        return self._reduce(x, total)

    def mean(self, x: Any) -> Column:
        return self._reduce(x, lambda v: total(v) / F.size(v))

    def count(self, x: Any) -> Column:
        return self._reduce(x, lambda v: F.size(v).cast("long"))


def total(values: Column) -> Column:
    """Sum of an array without NULLs as DOUBLE; NULL when it is empty (SQL ``sum``)."""
    summed = F.aggregate(values, F.lit(0.0), lambda acc, v: acc + v.cast("double"))
    return F.when(F.size(values) > 0, summed)


def runs(values: Column) -> Column:
    """Struct (values, counts) of the runs of equal values of a sorted array.

    Each run ends where the next element differs (or the array ends); the
    run's length is the distance from the previous end.
    """

    def from_sorted(s: Column) -> Column:
        return let(
            run_ends(s),
            lambda e: F.struct(
                F.transform(e, lambda k: s[k - 1]).alias("values"),
                F.transform(
                    e, lambda k, j: (k - F.when(j == 0, 0).otherwise(e[j - 1])).cast("long")
                ).alias("counts"),
            ),
        )

    return let(values, from_sorted)


def run_ends(s: Column, key: Callable[[Column], Column] = lambda x: x) -> Column:
    """The 1-based end of each run of equal ``key`` in the sorted array ``s``: where the next
    element's key differs, or the array ends."""
    size = F.size(s)
    ends = F.transform(
        s, lambda x, i: F.when(i + 1 == size, i + 1).when(key(x) != key(s[i + 1]), i + 1)
    )
    return F.filter(ends, lambda e: e.isNotNull())


def counts_by_class(classes: Column, values: Column) -> Column:
    """How often each class (sorted, distinct) occurs in ``values`` (all of them classes).

    The classes sorted with the values fall into one run per class, one
    longer than the class's count.
    """
    grouped = runs(F.sort_array(F.concat(classes, values)))
    return F.transform(grouped["counts"], lambda c: c - 1)


def weights_by_class(classes: Column, rows: Column, value: Callable[[Column], Column]) -> Column:
    """The total weight ``w`` of the rows of each class (sorted, distinct), ``value(row)``
    naming a row's class (NULL: in none; every other class is one of ``classes``).

    The rows' (class, weight) are sorted with one (class, 0) per class, so each class is one
    run, and each run's weights are added in sorted order: one sort of the rows, not a pass
    over them per class (a thousand classes over half a million distinct cells took 54 s so),
    and the same sum whatever order the rows were collected in.
    """
    keyed = F.filter(
        F.transform(
            rows, lambda r: F.struct(value(r).alias("k"), r["w"].cast("double").alias("w"))
        ),
        lambda x: x["k"].isNotNull(),
    )
    marks = F.transform(classes, lambda c: F.struct(c.alias("k"), F.lit(0.0).alias("w")))

    def summed(s: Column) -> Column:
        def run_sums(e: Column) -> Column:
            def run(end: Column, j: Column) -> Column:
                start = F.when(j == 0, 0).otherwise(e[j - 1])
                part = F.slice(s, start + 1, end - start)
                return F.aggregate(part, F.lit(0.0), lambda acc, x: acc + x["w"])

            return F.transform(e, run)

        return let(run_ends(s, lambda x: x["k"]), run_sums)

    return let(F.sort_array(F.concat(marks, keyed)), summed)


def class_struct(
    actual: Column, predicted: Column, weight: Column | None = None, only: Column | None = None
) -> Column:
    """One group's statistics as a struct: n (rows), classes, per class actual, predicted,
    correct; pairs (of the rows where ``only`` holds, if given).

    ``pairs`` are the known rows' (a, p) as collected; ``classes`` the sorted
    classes seen on either side; ``actual``, ``predicted`` and ``correct``
    (BIGINT) are aligned with them. With a ``weight`` the pairs carry it (``w``),
    and n and the per-class totals are sums of weights (DOUBLE), one pass over
    the pairs per class; ``rows`` then counts the known rows.
    """
    known = both_known(actual, predicted)
    fields = [actual.alias("a"), predicted.alias("p")]
    if weight is not None:
        known = known & weight.isNotNull()
        fields.append(weight.alias("w"))
    if only is not None:
        known = known & only
    pairs = F.collect_list(F.when(known, F.struct(*fields)))

    def from_pairs(xs: Column) -> Column:
        a = F.transform(xs, lambda r: r["a"])
        p = F.transform(xs, lambda r: r["p"])
        right = F.transform(F.filter(xs, lambda r: r["a"] == r["p"]), lambda r: r["a"])

        def per_class(cs: Column) -> list[Column]:
            if weight is None:
                return [
                    F.size(xs).cast("long").alias("n"),
                    cs.alias("classes"),
                    counts_by_class(cs, a).alias("actual"),
                    counts_by_class(cs, p).alias("predicted"),
                    counts_by_class(cs, right).alias("correct"),
                ]
            return [
                F.aggregate(xs, F.lit(0.0), lambda acc, r: acc + r["w"]).alias("n"),
                F.size(xs).cast("long").alias("rows"),
                cs.alias("classes"),
                weights_by_class(cs, xs, lambda r: r["a"]).alias("actual"),
                weights_by_class(cs, xs, lambda r: r["p"]).alias("predicted"),
                weights_by_class(cs, xs, lambda r: F.when(r["a"] == r["p"], r["a"])).alias(
                    "correct"
                ),
            ]

        return let(
            F.sort_array(F.array_distinct(F.concat(a, p))),
            lambda cs: F.struct(*per_class(cs), xs.alias("pairs")),
        )

    return let(pairs, from_pairs)


LABELS_OUTSIDE = (
    "{func}: a known row's actual or predicted class is not among the given labels {labels}."
)


def check_labels(labels: Any, func: str) -> list[Any]:
    """The given class universe, sorted and distinct: text, integers or booleans, one kind."""
    values = [labels] if isinstance(labels, (str, bool, int)) else list(labels)
    kinds = {str if isinstance(v, str) else bool if isinstance(v, bool) else int for v in values}
    if not values or len(kinds) != 1 or not all(isinstance(v, (str, int)) for v in values):
        raise MlsqlError(
            f"The 'labels' parameter of {func} must be a non-empty list of class values of one "
            f"kind (text, integers or booleans). Got {labels!r} instead."
        )
    return sorted(set(values))


#: each label kind's Spark type and its kind in :data:`mlsql.spark.jvm.CLASS_KINDS`
_LABEL_KINDS = {bool: ("boolean", "boolean"), str: ("string", "text"), int: ("bigint", "integer")}


def _labels_kind(labels: Sequence[Any]) -> tuple[str, str]:
    """The Spark type and the class kind of ``labels`` (of one kind)."""
    return _LABEL_KINDS[bool if isinstance(labels[0], bool) else type(labels[0])]


def as_labels_kind(col: Column, labels: Sequence[Any]) -> Column:
    """``col`` read as the type of ``labels`` (of one kind; NULL where it does not read as
    one). Spark resolves a comparison of a Column with labels of another kind when it
    analyses the query, before any check runs (``array_position`` fails, ``=`` casts);
    read this way the query is analysed, and the labels= check of the first input
    (:func:`mlsql.spark._types.checked_universe`) says what is wrong. A Column of the
    labels' kind casts at most to a wider integer type."""
    return col.try_cast(_labels_kind(labels)[0])


def counted_classes(
    actual: Column,
    predicted: Column,
    labels: Sequence[Any],
    weight: Column | None = None,
    cells: bool = False,
    skip_outside: bool = False,
    only: Column | None = None,
) -> tuple[Column, Callable[[Callable[[Any, Any], Any]], Column]]:
    """The :func:`class_struct` of a group whose classes are ``labels`` (sorted, distinct):
    bounded, one count (or sum of weights) per class and side, no row collected.

    The struct also holds ``outside``, the known rows whose actual or predicted class
    is not a label. Returns the struct and ``row_pair_sum(term)``, Σ over known rows
    of ``term(index of actual, index of predicted)`` as a streaming sum (``skip_outside``:
    those rows are left out instead, ``outside`` 0). With ``cells``
    the struct holds the k x k confusion matrix too (``cells``, actual-major), which
    :func:`class_stats` sums terms of the class totals over (``cell_sum``). ``only``: the
    rows counted are those where it holds.
    """
    known = both_known(actual, predicted)
    if weight is not None:
        known = known & weight.isNotNull()
    if only is not None:
        known = known & only
    values = [F.lit(c) for c in labels]
    actual, predicted = as_labels_kind(actual, labels), as_labels_kind(predicted, labels)
    inside = F.coalesce(actual.isin(*values) & predicted.isin(*values), F.lit(False))
    if skip_outside:  # ``cohen_kappa_score``'s labels: such rows are left out, as unknown
        known = known & inside

    def tally(condition: Column) -> Column:
        if weight is None:
            return F.count(F.when(condition, 1))
        return F.coalesce(F.sum(F.when(condition, weight)), F.lit(0.0))

    # a known row outside the labels counts in no class: over_labels fails the query on it,
    # the averages' labels keep it in n (a false positive or negative of a label it meets)
    def per_class(hit: Callable[[Column], Column]) -> Column:
        return F.array(*(tally(known & hit(c)) for c in values))

    fields = [
        tally(known).alias("n"),
        *([] if weight is None else [F.count(F.when(known, 1)).alias("rows")]),
        F.array(*values).alias("classes"),
        per_class(lambda c: actual == c).alias("actual"),
        per_class(lambda c: predicted == c).alias("predicted"),
        per_class(lambda c: (actual == c) & (predicted == c)).alias("correct"),
        F.count(F.when(known & ~inside, 1)).alias("outside"),
    ]
    if cells:
        matrix = [tally(known & (actual == a) & (predicted == p)) for a in values for p in values]
        fields.append(F.array(*matrix).alias("cells"))

    def row_pair_sum(term: Callable[[Any, Any], Any]) -> Column:
        classes = F.array(*values)
        ia = F.array_position(classes, actual) - 1
        ip = F.array_position(classes, predicted) - 1
        each = column(term(ia, ip))
        return F.sum(F.when(known, each if weight is None else weight * each))

    return F.struct(*fields), row_pair_sum


def class_stats(
    s: Column,
    weighted: bool = False,
    row_pair_sum: Callable[[Callable[[Any, Any], Any]], Column] | None = None,
    weight_at: Callable[[Any, Any], Any] | None = None,
    sparse: bool = False,
) -> SL.ClassStats:
    """:class:`~mlsql.measures.single_label.ClassStats` over a :func:`class_struct` ``s``
    (``weighted``: of a weighted one; ``row_pair_sum``: the rows' sums when ``s`` holds no
    pairs, as :func:`counted_classes` gives; ``weight_at``: a weights matrix's lookup;
    ``sparse``: ``s`` is :func:`mlsql.spark.jvm.class_cells`' struct, whose cells that occur
    give the sums over rows and cells)."""
    classes = s["actual"] if sparse else s["classes"]
    axis = ClassAxisOps(classes)

    fields = {f: s[f] for f in ("actual", "predicted", "correct")}

    def per_class(field: str) -> PerClass:
        values = fields[field]
        return PerClass(lambda i: values[i])

    def view(i: Column) -> SL.ClassView:
        return SL.ClassView(i, fields["actual"][i], fields["predicted"][i])

    def pair_sum(term: Callable[[SL.ClassView, SL.ClassView], Any]) -> Column:
        def row(_: Column, i: Column) -> Column:
            cells = F.transform(classes, lambda _, j: column(term(view(i), view(j))))
            return total(cells)

        return total(F.transform(classes, row))

    def rows_pair_sum(term: Callable[[Any, Any], Any]) -> Column:
        if weighted:

            def each(r: Column) -> Column:
                ia = F.array_position(classes, r["a"]) - 1
                ip = F.array_position(classes, r["p"]) - 1
                return r["w"] * column(term(ia, ip))

            return total(F.transform(s["pairs"], each))

        def over(cells: Column) -> Column:
            def weighed(cell: Column, j: Column) -> Column:
                ia = F.array_position(classes, cell["a"]) - 1
                ip = F.array_position(classes, cell["p"]) - 1
                return cells["counts"][j] * column(term(ia, ip))

            return total(F.transform(cells["values"], weighed))

        return let(runs(F.sort_array(s["pairs"])), over)

    def cell_sum(term: Callable[[SL.ClassView, SL.ClassView], Any]) -> Column:
        if row_pair_sum is not None:  # counted: the k x k cells, actual-major
            size = F.size(classes)

            def cell(count: Column, c: Column) -> Column:
                i, j = (c / size).cast("int"), c % size
                return count * column(term(view(i), view(j)))

            return total(F.transform(s["cells"], cell))

        def each(r: Column) -> Column:
            ia = F.array_position(classes, r["a"]).cast("int") - 1
            ip = F.array_position(classes, r["p"]).cast("int") - 1
            value = column(term(view(ia), view(ip)))
            return r["w"] * value if weighted else value

        return total(F.transform(s["pairs"], each))

    def mirror_sum(term: Callable[[Any, Any], Any]) -> Column:
        if row_pair_sum is not None:  # counted: the k x k cells, actual-major
            size = F.size(classes)
            cells = s["cells"]

            def cell(count: Column, c: Column) -> Column:
                return column(term(count, cells[(c % size) * size + (c / size).cast("int")]))

            return total(F.transform(cells, cell))
        if weighted:  # one (a, p, w) per row: each cell's weights summed (a pass per cell)
            xs = s["pairs"]
            keys = F.array_distinct(F.transform(xs, lambda r: F.struct(r["a"], r["p"])))

            def summed(key: Column) -> Column:
                hits = F.filter(xs, lambda r: (r["a"] == key["a"]) & (r["p"] == key["p"]))
                return F.aggregate(hits, F.lit(0.0), lambda acc, r: acc + r["w"])

            found = let(
                keys,
                lambda ks: F.struct(ks.alias("keys"), F.transform(ks, summed).alias("amounts")),
            )
        else:  # the runs of the sorted pairs: each cell that occurs and its rows
            found = let(
                runs(F.sort_array(s["pairs"])),
                lambda r: F.struct(r["values"].alias("keys"), r["counts"].alias("amounts")),
            )

        def over(f: Column) -> Column:
            keys, amounts = f["keys"], f["amounts"]

            def found(key: Column, j: Column) -> Column:  # the cell and its mirror's amount
                at = F.array_position(keys, F.struct(key["p"].alias("a"), key["a"].alias("p")))
                mirror = F.when(at > 0, F.element_at(amounts, F.greatest(at, F.lit(1)).cast("int")))
                zero = F.lit(0.0 if weighted else 0).cast("double" if weighted else "long")
                return F.struct(amounts[j].alias("c"), F.coalesce(mirror, zero).alias("r"))

            each = F.transform(keys, found)
            return total(F.transform(each, lambda x: column(term(x["c"], x["r"]))))

        return let(found, over)

    def over(each: Callable[[SL.ClassView], Any]) -> Column:  # Σ over the classes l
        return total(F.transform(classes, lambda _, other: column(each(view(other)))))

    if sparse:  # the cells that occur, each with its total c and its mirror's m

        def over_cells(term: Callable[[Column], Any]) -> Column:
            return total(F.transform(s["cells"], lambda c: column(term(c))))

        def cells_rows_pair_sum(term: Callable[[Any, Any], Any]) -> Column:
            return over_cells(lambda c: c["c"] * column(term(c["i"], c["j"])))

        def cells_cell_sum(term: Callable[[SL.ClassView, SL.ClassView], Any]) -> Column:
            return over_cells(lambda c: c["c"] * column(term(view(c["i"]), view(c["j"]))))

        def cells_mirror_sum(term: Callable[[Any, Any], Any]) -> Column:
            return over_cells(lambda c: term(c["c"], c["m"]))

        rows_pair_sum, cell_sum, mirror_sum = cells_rows_pair_sum, cells_cell_sum, cells_mirror_sum

    return SL.ClassStats(
        n=s["n"],
        index=PerClass(lambda i: i),
        actual=per_class("actual"),
        predicted=per_class("predicted"),
        correct=per_class("correct"),
        axis=axis,
        pair_sum=pair_sum,
        row_pair_sum=rows_pair_sum if row_pair_sum is None else row_pair_sum,
        rows=s["rows"] if weighted else None,
        cell_sum=cell_sum,
        mirror_sum=mirror_sum,
        margin_cell_sum=SL.margins_of_cells(cell_sum, over),
        weight_at=weight_at,
    )


# ------------------------------------------------------------------ other statistics
def _count(condition: Column) -> Column:
    return F.count(F.when(condition, 1))


def _weighed(condition: Column, weight: Column | None, *, part: bool = False) -> Column:
    """Rows where ``condition`` holds: counted, or their weights summed (NULL over none).

    ``part``: a part of the known rows (the correct ones, a cell): 0 over none, as a count is,
    so that a share whose part holds no row is 0, not NULL (the known rows stay NULL over none).
    """
    if weight is None:
        return _count(condition)
    summed = F.sum(F.when(condition & weight.isNotNull(), weight))
    return F.coalesce(summed, F.lit(0.0)) if part else summed


def label_stats(label: Column, weight: Column | None = None) -> SL.LabelStats:
    """Known rows, the largest class count (from the (label, label) cells of
    :func:`counted_cells`, else the labels collected), rows matching a value (weights summed
    if given)."""

    def collected(only: Column | None) -> Column:
        kept = label.isNotNull() if only is None else label.isNotNull() & only
        if weight is None:
            return F.array_max(runs(F.sort_array(F.collect_list(F.when(kept, label))))["counts"])
        rows = F.collect_list(
            F.when(kept & weight.isNotNull(), F.struct(label.alias("a"), weight.alias("w")))
        )
        return let(
            rows,
            lambda xs: F.array_max(
                weights_by_class(
                    F.sort_array(F.array_distinct(F.transform(xs, lambda r: r["a"]))),
                    xs,
                    lambda r: r["a"],
                )
            ),
        )

    largest = counted_cells(label, label, weight, lambda s: F.array_max(s["actual"]), collected)
    return SL.LabelStats(
        n=_weighed(label.isNotNull(), weight),
        largest=largest,
        matching=lambda x: _weighed(label == F.lit(x), weight, part=True),
    )


def agreement(actual: Column, predicted: Column, weight: Column | None = None) -> SL.Agreement:
    """Known rows and rows where actual = predicted (weights summed if given)."""
    ok = both_known(actual, predicted)
    return SL.Agreement(
        _weighed(ok, weight), _weighed(ok & (actual == predicted), weight, part=True)
    )


def one_vs_rest(actual: Column, predicted: Column, weight: Column | None = None) -> SL.OneVsRest:
    """Known rows and the 2x2 table of one class against the rest (weights summed if given)."""
    ok = both_known(actual, predicted)

    def table(label: Any) -> Table2x2:
        def cell(a: bool, p: bool) -> Column:
            hit = ok & ((actual == F.lit(label)) == a) & ((predicted == F.lit(label)) == p)
            return _weighed(hit, weight, part=True)

        return Table2x2(cell(True, True), cell(False, True), cell(True, False), cell(False, False))

    rows = None if weight is None else _count(ok & weight.isNotNull())
    return SL.OneVsRest(_weighed(ok, weight), table, rows)


def _read_cost(table: Column, actual: Column, predicted: Column) -> Column:
    """The cost of (actual, predicted) in a map Column of costs (actual -> predicted -> cost):
    NULL where the map has no such pair (its default applies), the error where the cost read
    is NULL, NaN or infinite (as in DuckDB's SQL, a NULL cost is no cost). Checked on the pair
    each row reads, with no higher-order function: a scalar subquery, as
    ``cost_map(...).scalar()`` gives, may not sit in one."""
    inner = table[actual]
    given = inner[predicted].cast("double")
    bad = given.isNull() | F.isnan(given) | (F.abs(given) == float("inf"))
    invalid = (F.map_contains_key(table, actual) & inner.isNull()) | (
        F.map_contains_key(inner, predicted) & bad
    )
    message = F.lit(COST_VALUE_MESSAGE.format(func="cost_error"))
    return F.when(invalid, F.raise_error(message)).otherwise(given)


def cost_stats(actual: Column, predicted: Column, weight: Column | None = None) -> SL.CostStats:
    """Known rows and Σ cost(actual, predicted) (1 per error unless a cost is given), each
    row's cost times its weight if given."""
    ok = both_known(actual, predicted)
    if weight is not None:
        ok = ok & weight.isNotNull()
    w = F.lit(1.0) if weight is None else weight
    default = F.when(actual == predicted, 0.0).otherwise(1.0)

    def total_cost(costs: Costs) -> Column:
        if costs.table is not None:
            given = _read_cost(costs.table, actual, predicted)
            return F.sum(F.when(ok, F.coalesce(given, default) * w))
        out = F.sum(F.when(ok, default * w))
        # compared as text: costs of the other kind must reach the check's error when the
        # query runs (mlsql._label_types.COST_KEY_MESSAGE), not a cast of 'x' to a number
        a_text, p_text = actual.cast("string"), predicted.cast("string")
        for a, p, c in costs.entries:
            base = 0.0 if a == p else 1.0
            if c != base:
                hit = ok & (a_text == F.lit(str(a))) & (p_text == F.lit(str(p)))
                out = out + (c - base) * _weighed(hit, weight, part=True)
        return out

    return SL.CostStats(_weighed(ok, weight), total_cost)


STATS = SL.statistics_of(globals())


def stats(measure: Measure, *inputs: Column) -> Any:
    """The statistics of ``measure`` (class-wise ones: over a :func:`class_struct` Column)."""
    if measure.name in CLASS_MEASURES:
        return class_stats(*inputs)
    return STATS[measure.name](*inputs)


# ------------------------------------------------------------------ public aggregates
#: the outputs of the examples of the two hand-written aggregates, over the engine-neutral
#: table's actual classes (a, a, b, c); the others' are the registry's shared examples
HAND_WRITTEN_OUTPUTS = {"majority_class": "'a'", "minority_class": "'b'"}
#: the Spark types of the examples' columns
EXAMPLE_TYPES = dict.fromkeys(("actual", "predicted", "label"), "string")
#: the outputs shown to 11 decimals: none (the linear kappa's 5/7 is ...143 in Spark,
#: scikit-learn and Polars, which divides its scalars: mlsql.polars.families.single_label)
APPROXIMATE: tuple[str, ...] = ()
#: the family's inputs and parameters as docstrings describe them (type line, text)
DOCS = {
    "actual": ("actual : str or pyspark.sql.Column", "The true class of each row."),
    "predicted": ("predicted : str or pyspark.sql.Column", "The predicted class of each row."),
    "label": ("label : str or pyspark.sql.Column", "A label column."),
    "cost": ("cost : str or pyspark.sql.Column", "The cost of each (actual, predicted) pair."),
    "positive": CLASS_PARAM_DOCS["positive"],
    "class": CLASS_PARAM_DOCS["label"],
    "costs": (
        "costs : dict, pyspark.sql.DataFrame or pyspark.sql.Column",
        "actual -> {predicted: cost}, (actual, predicted) -> cost, a DataFrame with\n"
        "    columns actual, predicted, cost, or a map Column such as\n"
        "    ``costs_df.agg(ms.cost_map('actual', 'predicted', 'cost')).scalar()``.\n"
        "    Pairs not given cost 1 off the diagonal, 0 on it.",
    ),
}


def _documented(fn: Callable[..., Any], m: Measure) -> Callable[..., Any]:
    """Replace the generic input and parameter lines of a built docstring with this family's."""
    lines = (fn.__doc__ or "").splitlines()
    for i, line in enumerate(lines[:-1]):
        name = line.split(" : ")[0]
        if " : " not in line:
            continue
        key = "class" if name == "label" and "label" not in m.inputs else name
        if key in DOCS and (name in m.inputs or lines[i + 1].strip() == "See the summary."):
            lines[i], lines[i + 1] = DOCS[key][0], f"    {DOCS[key][1]}"
    fn.__doc__ = "\n".join(lines) + "\n"
    return fn


def _example(m: Measure) -> list[str]:
    found = shared_example(m, EXAMPLE_TYPES, APPROXIMATE)
    if found is None:
        rows = [(x,) for x in examples.SINGLE_LABEL["actual"]]
        found = rows, "label string", {}, HAND_WRITTEN_OUTPUTS[m.name]
    rows, schema, given, output = found
    return example_lines(m.name, "aggregate", rows, schema, m.inputs, given, output)


def _build(m: Measure) -> Callable[..., Column]:
    """``build(*inputs, **params)`` of a formula measure."""
    if m.name in CLASS_MEASURES:

        def class_wise(
            actual: Column,
            predicted: Column,
            sample_weight: Column | None = None,
            universe: Sequence[Any] | None = None,
            **checked: Any,
        ) -> Column:
            weighted = sample_weight is not None
            if "weights" in checked:  # cohen_kappa_score: its labels and weights matrix
                pairs = P.kappa_matrix(checked["weights"], checked["labels"], m.name)
                if pairs is not None:
                    return _kappa_over(m, actual, predicted, sample_weight, pairs, checked)
            elif checked.get("labels") is not None and universe is None:
                return _averaged_over(m, actual, predicted, sample_weight, checked)
            labels = universe
            if labels is None:  # the classes come from the rows
                return _from_rows(m, actual, predicted, sample_weight, checked)
            cells = m.name in (*SL.KAPPA_TESTS, *SL.BOWKER)
            counted, row_pair_sum = counted_classes(actual, predicted, labels, sample_weight, cells)
            message = LABELS_OUTSIDE.format(func=m.name, labels=list(labels))

            def bounded(s: Column) -> Column:
                value = column(m.build(OPS, class_stats(s, weighted, row_pair_sum), **checked))  # type: ignore[misc]
                return F.when(s["outside"] > 0, F.raise_error(F.lit(message))).otherwise(value)

            return let(counted, bounded)

        return class_wise

    def direct(*inputs: Column, sample_weight: Column | None = None, **checked: Any) -> Column:
        stats = STATS[m.name](*inputs, weight=sample_weight)
        return column(m.build(OPS, stats, **checked))  # type: ignore[misc]

    return direct


def counted_cells(
    actual: Column,
    predicted: Column,
    weight: Column | None,
    from_cells: Callable[[Column], Column],
    collected: Callable[[Column | None], Column],
    kinds: Sequence[str] = tuple(jvm.CLASS_KINDS),
) -> Column:
    """An aggregate of the group's confusion cells: ``from_cells(s)`` over mlsql's Java
    aggregate's struct (:func:`mlsql.spark.jvm.class_cells`: memory grows with the distinct
    cells, never with the rows) where it applies (classes of one of ``kinds`` on both sides),
    else ``collected(only)``, the other form (over the rows where ``only`` holds, if given).

    Where both types are known when the Column is built, only the form that applies is
    planned; else both are, and the one that does not apply reads no row (the collected
    rows' input is folded to NULL where the aggregate applies)."""
    weighted = weight is not None
    known = both_known(actual, predicted)
    if weight is not None:
        known = known & weight.isNotNull()
    applies = jvm.counts_classes([data_type(actual), data_type(predicted)], kinds)
    counted = (
        None
        if applies is False
        else jvm.class_cells(
            actual, predicted, F.when(known, weight if weighted else F.lit(1.0)), weighted, kinds
        )
    )
    if counted is None:
        return collected(None)
    cells = let(counted[0], from_cells)
    if applies:
        return cells
    return F.when(counted[0]["rows"] > 0, cells).otherwise(collected(~counted[1]))


def _from_rows(
    m: Measure, actual: Column, predicted: Column, weight: Column | None, checked: dict[str, Any]
) -> Column:
    """A class-wise measure over the classes its rows hold: their confusion cells
    (:func:`counted_cells`)."""
    weighted = weight is not None

    def formula(sparse: bool) -> Callable[[Column], Column]:
        def value(s: Column) -> Column:
            stats = class_stats(s, weighted, sparse=sparse)
            return column(m.build(OPS, stats, **checked))  # type: ignore[misc]

        return value

    return counted_cells(
        actual,
        predicted,
        weight,
        formula(True),
        lambda only: let(class_struct(actual, predicted, weight, only), formula(False)),
    )


def _averaged_over(
    m: Measure, actual: Column, predicted: Column, weight: Column | None, checked: dict[str, Any]
) -> Column:
    """An average over its ``labels`` (scikit-learn's), every known row kept, so a row of
    another class still counts against the labels it meets; a label no row holds counts 0.
    Bounded: each label's totals read from the confusion cells (:func:`counted_cells`, where
    the classes are of the labels' kind), else counted per label and side
    (:func:`counted_classes`)."""
    labels = sorted(checked["labels"])
    kind = _labels_kind(labels)[1]
    weighted = weight is not None

    def formula(s: Column) -> Column:
        return column(m.build(OPS, class_stats(s, weighted), **checked))  # type: ignore[misc]

    def from_cells(s: Column) -> Column:
        keys = s["text_keys" if kind == "text" else "integer_keys"]
        found = [
            F.array_position(
                keys, F.lit(c).cast("binary") if kind == "text" else F.lit(int(c)).cast("long")
            ).cast("int")
            for c in labels
        ]

        def per_label(field: str) -> Column:
            totals = s[field]
            return F.array(
                *(F.when(at > 0, F.element_at(totals, at)).otherwise(F.lit(0)) for at in found)
            )

        fields = [
            s["n"].alias("n"),
            *([s["rows"].alias("rows")] if weighted else []),
            F.array(*(F.lit(c) for c in labels)).alias("classes"),
            *(per_label(f).alias(f) for f in ("actual", "predicted", "correct")),
        ]
        return let(F.struct(*fields), formula)

    def collected(only: Column | None) -> Column:
        return let(counted_classes(actual, predicted, labels, weight, only=only)[0], formula)

    return counted_cells(actual, predicted, weight, from_cells, collected, (kind,))


def _kappa_over(
    m: Measure,
    actual: Column,
    predicted: Column,
    weight: Column | None,
    pairs: dict[tuple[Any, Any], float],
    checked: dict[str, Any],
) -> Column:
    """``cohen_kappa_score`` and the kappa tests over their labels (bounded,
    :func:`counted_classes`, with the cells the tests' variances sum over): the rows whose
    classes are not labels left out, the weights read from ``pairs``
    (:func:`mlsql._params.kappa_matrix`) at the sorted labels' positions."""
    classes = sorted(dict.fromkeys(a for a, _ in pairs))
    k = len(classes)
    flat = F.array(*(F.lit(pairs[a, p]) for a in classes for p in classes))

    def weight_at(i: Any, j: Any) -> Column:
        return F.element_at(flat, (column(i) * k + column(j) + 1).cast("int"))

    cells = m.name in SL.KAPPA_TESTS  # their variances sum over the cells
    counted, row_pair_sum = counted_classes(
        actual, predicted, classes, weight, cells, skip_outside=True
    )
    params = {**checked, "weights": "matrix"}

    def formula(s: Column) -> Column:
        stats = class_stats(s, weight is not None, row_pair_sum, weight_at)
        return column(m.build(OPS, stats, **params))  # type: ignore[misc]

    return let(counted, formula)


def over_labels(
    name: str,
    actual: str | Column,
    predicted: str | Column,
    labels: Sequence[Any],
    *,
    sample_weight: str | Column | None = None,
    **params: Any,
) -> Column:
    """The class-wise aggregate ``name`` over a known class universe ``labels``: bounded.

    The same value as ``ms.<name>(actual, predicted, **params)`` when every known
    row's classes are among ``labels`` (labels that never occur count as classes
    with no rows, as scikit-learn's ``labels`` does); a row outside them fails
    the query with an error naming the labels. Each class is counted by its own
    ``count``/``sum`` (one per class and side), so memory is a few numbers per
    class and group, never the group's rows.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> from mlsql.spark.families.single_label import over_labels
    >>> spark = SparkSession.builder.getOrCreate()
    >>> df = spark.createDataFrame(
    ...     [("a", "a"), ("a", "b"), ("b", "b"), ("c", "c")], "actual string, predicted string"
    ... )
    >>> round(df.agg(over_labels("f1_score", "actual", "predicted", ["a", "b", "c"])).first()[0], 6)
    0.777778
    >>> round(df.agg(over_labels("f1_score", "actual", "predicted", ["a", "b", "c", "d"])).first()[0], 6)
    0.583333
    """
    m = lookup(name)
    if m.name not in CLASS_MEASURES:
        raise MlsqlError(
            f"over_labels takes a class-wise measure {sorted(CLASS_MEASURES)}. Got {name!r}."
        )
    module = sys.modules[__name__]
    checked = checked_params(m, params, module)
    classes = check_labels(labels, m.name)
    names = ["actual", "predicted"]
    cols = [to_column(c, m.name, r) for r, c in zip(names, (actual, predicted), strict=True)]
    input_check(m)(m.name, names, cols)
    cols[0] = checked_universe(
        cols[0], classes, m.name, typed=F.array(*cols)
    )  # labels of their kind
    w = (
        None
        if sample_weight is None
        else weight(m.name, to_column(sample_weight, m.name, "sample_weight"))
    )
    return _build(m)(*cols, sample_weight=w, universe=classes, **checked)


def _public(m: Measure, build: Callable[..., Column]) -> Callable[..., Column]:
    module = sys.modules[__name__]
    fn = _documented(
        function(
            SPARK,
            m,
            build,
            input_check(m),
            module,
            _example(m) if m.name in (*HAND_WRITTEN_OUTPUTS, *OUTPUTS) else (),
        ),
        m,
    )
    doc = fn.__doc__ or ""
    if m.name in ("majority_class", "minority_class"):
        doc = doc.replace("one number per", "one class per")
    fn.__doc__ = doc
    return fn


def _extreme(label: Column, most: bool, sample_weight: Column | None = None) -> Column:
    """The class with the most (``most``) or the fewest rows, or the largest or smallest total
    weight (a class whose rows all weigh 0 does not occur); ties: the smallest class.

    Unweighted ``most`` is Spark's ``mode`` (a hash map of the classes, lowest value on ties).
    Otherwise each class's total comes from the (label, label) cells of :func:`counted_cells`,
    aligned with the group's classes sorted (``collect_set``: memory grows with the classes),
    else from the group's labels (and weights) collected."""
    if most and sample_weight is None:
        return F.mode(label, True)
    weight = sample_weight
    kept = label.isNotNull() if weight is None else label.isNotNull() & weight.isNotNull()
    classes = F.sort_array(F.collect_set(F.when(kept, label)))

    def pick(totals: Column, values: Column) -> Column:
        """The class of ``values`` whose total in ``totals`` (aligned) is the extreme one."""
        if weight is not None:
            totals = F.transform(totals, lambda t: F.when(t != 0, t))
        target = F.array_max(totals) if most else F.array_min(totals)
        at = F.array_position(totals, target).cast("int")
        return F.when(at > 0, F.element_at(values, F.greatest(at, F.lit(1))))

    def collected(only: Column | None) -> Column:
        rows = kept if only is None else kept & only
        if weight is None:
            grouped = runs(F.sort_array(F.collect_list(F.when(rows, label))))
            return let(grouped, lambda g: pick(g["counts"], g["values"]))
        pairs = F.collect_list(F.when(rows, F.struct(label.alias("a"), weight.alias("w"))))

        def ranked(xs: Column) -> Column:
            seen = F.sort_array(F.array_distinct(F.transform(xs, lambda r: r["a"])))
            return pick(weights_by_class(seen, xs, lambda r: r["a"]), seen)

        return let(pairs, ranked)

    return counted_cells(label, label, weight, lambda c: pick(c["actual"], classes), collected)


def _cost_map(actual: Column, predicted: Column, cost: Column) -> Column:
    entries = F.collect_list(
        F.when(
            both_known(actual, predicted),
            F.struct(actual.alias("a"), predicted.alias("p"), cost.cast("double").alias("cost")),
        )
    )

    def bad(e: Column) -> Column:
        c = e["cost"]
        return c.isNull() | F.isnan(c) | (F.abs(c) == float("inf"))

    def nested(es: Column) -> Column:
        # a pair twice, or a cost that is no finite number: the errors of every engine's costs
        pairs = F.transform(es, lambda e: F.struct(e["a"], e["p"]))
        twice = F.size(F.array_distinct(pairs)) < F.size(es)
        checked = (
            F.when(twice, F.raise_error(F.lit(TWICE_IN_TABLE_MESSAGE)))
            .when(
                F.exists(es, bad), F.raise_error(F.lit(COST_VALUE_MESSAGE.format(func="cost_map")))
            )
            .otherwise(es)
        )
        return let(checked, _nested)

    return let(entries, nested)


def _nested(es: Column) -> Column:
    """(a, p, cost) entries as the map a -> p -> cost."""
    keys = F.array_distinct(F.transform(es, lambda e: e["a"]))
    inner = F.transform(
        keys,
        lambda x: F.map_from_entries(
            F.transform(
                F.filter(es, lambda e: e["a"] == x),
                lambda e: F.struct(e["p"].alias("key"), e["cost"].alias("value")),
            )
        ),
    )
    return F.map_from_arrays(keys, inner)


def _majority_class(label: Column, sample_weight: Column | None = None) -> Column:
    return _extreme(label, True, sample_weight)


def _minority_class(label: Column, sample_weight: Column | None = None) -> Column:
    return _extreme(label, False, sample_weight)


majority_class = _public(lookup("majority_class"), _majority_class)
minority_class = _public(lookup("minority_class"), _minority_class)
cost_map = _public(lookup("cost_map"), _cost_map)
cost_map.__doc__ = (cost_map.__doc__ or "") + (
    "\nThe cost table's rows are collected (a small table); each (actual, predicted) once.\n"
    "\nExamples\n--------\n"
    ">>> from pyspark.sql import SparkSession\n"
    ">>> import mlsql.spark as ms\n"
    ">>> spark = SparkSession.builder.getOrCreate()\n"
    ">>> costs = spark.createDataFrame([('a', 'b', 5.0)], 'actual string, predicted string, cost double')\n"
    ">>> df = spark.createDataFrame([('a', 'a'), ('a', 'b'), ('b', 'a')], 'actual string, predicted string')\n"
    ">>> m = costs.agg(ms.cost_map('actual', 'predicted', 'cost')).scalar()\n"
    ">>> df.agg(ms.cost_error('actual', 'predicted', costs=m)).first()[0]\n"
    "2.0\n"
)


# ------------------------------------------------------------------ tables
def _prepared(source: DataFrame, call: TableCall) -> tuple[DataFrame, list[str]]:
    """Known rows: internal group columns ``__g<i>`` (or one constant group) and ``__<role>``,
    and with a ``sample_weight`` (a column name) the checked weight ``__w`` (NULL: unknown
    row)."""
    func, columns, by, sample_weight = call.func, call.columns, call.by, call.sample_weight
    if not isinstance(source, DataFrame):
        raise MlsqlError(
            f"mlsql.spark.{func} takes a Spark DataFrame. Got {type(source).__name__}."
        )
    schema = {f.name: f.dataType for f in source.schema.fields}
    groups = P.check_by(by, func)
    weights = [] if sample_weight is None else [("sample_weight", sample_weight)]
    check_columns(func, schema, [*columns.items(), *(("by", b) for b in groups), *weights])
    roles = list(columns)
    cols = [to_column(c, func, r) for r, c in columns.items()]
    for role, name in columns.items():
        dtype = schema[name]
        if isinstance(dtype, (T.ArrayType, T.MapType, T.StructType)):
            raise MlsqlError(LABEL_MESSAGE.format(func=func, name=role, type=dtype.simpleString()))
    check_same_kind(func, roles, [schema[c] for c in columns.values()])
    picked = [c.alias(f"__{r}") for r, c in zip(roles, cols, strict=True)]
    keys = [to_column(g, func, "by").alias(f"__g{i}") for i, g in enumerate(groups)] or [
        F.lit(0).alias(ALL)
    ]
    internal = [f"__g{i}" for i in range(len(groups))] or [ALL]
    if sample_weight is not None:
        picked.append(weight(func, bound(source, sample_weight)).alias("__w"))
        roles.append("w")
    rows = source.select(*keys, *picked).where(known(*(F.col(f"__{r}") for r in roles)))
    return rows, internal


def _tally(sample_weight: str | None) -> Column:
    """Rows counted, or their weights summed."""
    return F.count(F.lit(1)) if sample_weight is None else F.sum("__w")


def _shown(by: Any, func: str) -> list[Column]:
    return [F.col(f"__g{i}").alias(name) for i, name in enumerate(P.check_by(by, func))]


def _ordered(df: DataFrame, keys: Sequence[str]) -> DataFrame:
    return df.orderBy(*(F.col(k).asc_nulls_last() for k in keys))


def _class_distribution(source: DataFrame, call: TableCall) -> DataFrame:
    rows, groups = _prepared(source, call)
    counted = rows.groupBy(*groups, F.col("__label").alias("class")).agg(
        _tally(call.sample_weight).alias("count")
    )
    n = F.sum("count").over(Window.partitionBy(*groups))
    row = formula("class_distribution")(OPS, SL.ClassCount(F.col("count"), n))
    out = counted.withColumn("share", column(row["share"]))
    shown = _shown(call.by, call.func)
    return _ordered(out, [*groups, "class"]).select(*shown, "class", "count", "share")


class_distribution = table_function(SPARK, "class_distribution", _class_distribution)


def _long(rows: DataFrame, groups: list[str], sample_weight: str | None = None) -> DataFrame:
    """Every cell of each group's confusion matrix: groups, actual, predicted, count (zeros too;
    sums of weights with ``sample_weight``)."""
    cells = rows.groupBy(*groups, F.col("__actual").alias("a"), F.col("__predicted").alias("p"))
    cells = cells.agg(_tally(sample_weight).alias("n"))
    seen = F.array_distinct(F.concat(F.collect_set("a"), F.collect_set("p")))
    classes = cells.groupBy(*groups).agg(F.sort_array(seen).alias("classes"))
    grid = classes.select(*groups, F.explode("classes").alias("actual"), "classes").select(
        *groups, "actual", F.explode("classes").alias("predicted")
    )
    # the cells under names of their own: grid and cells come from one frame
    cells = cells.select(*(F.col(g).alias(f"__cells{g}") for g in groups), "a", "p", "n")
    on = (F.col("actual") == F.col("a")) & (F.col("predicted") == F.col("p"))
    for g in groups:
        on = on & F.col(g).eqNullSafe(F.col(f"__cells{g}"))
    return grid.join(cells, on, "left").select(
        *groups,
        "actual",
        "predicted",
        F.coalesce(F.col("n"), F.lit(0))
        .cast("long" if sample_weight is None else "double")
        .alias("count"),
    )


def _confusion_matrix(source: DataFrame, call: TableCall) -> DataFrame:
    rows, groups = _prepared(source, call)
    out = _long(rows, groups, call.sample_weight)
    return _ordered(out, [*groups, "actual", "predicted"]).select(
        *_shown(call.by, call.func), "actual", "predicted", "count"
    )


confusion_matrix = table_function(SPARK, "confusion_matrix", _confusion_matrix)


def _confusion_matrix_wide(source: DataFrame, call: TableCall) -> DataFrame:
    rows, groups = _prepared(source, call)
    long = _long(rows, groups, call.sample_weight)
    classes = [r[0] for r in long.select("predicted").distinct().orderBy("predicted").collect()]
    shown = _shown(call.by, call.func)
    names = wide_columns(classes, [*P.check_by(call.by, call.func), "actual"])
    wide = long.groupBy(*groups, "actual").pivot("predicted", classes).agg(F.first("count"))
    # pivot names a column by the class's text, a boolean's capitalised: the n-th class
    # column is the n-th after the keys
    keys = len(groups) + 1
    pivoted = [F.col("`" + c.replace("`", "``") + "`") for c in wide.columns[keys:]]
    renamed = [c.alias(n) for c, n in zip(pivoted, names, strict=True)]
    return _ordered(wide, [*groups, "actual"]).select(*shown, "actual", *renamed)


confusion_matrix_wide = table_function(
    SPARK,
    "confusion_matrix_wide",
    _confusion_matrix_wide,
    returns=table_returns(
        SPARK,
        "confusion_matrix_wide",
        more="The classes are read first (one Spark job), as ``pivot`` needs them.",
    ),
)


def _class_metrics(source: DataFrame, call: TableCall) -> DataFrame:
    b, zd, sample_weight = call.params["beta"], call.params["zero_division"], call.sample_weight
    rows, groups = _prepared(source, call)
    a, p = F.col("__actual"), F.col("__predicted")
    one, zero = (F.lit(1), F.lit(0)) if sample_weight is None else (F.col("__w"), F.lit(0.0))
    both = F.array(
        F.struct(
            a.alias("class"),
            one.alias("r"),
            zero.alias("c"),
            F.when(a == p, one).otherwise(zero).alias("d"),
        ),
        F.struct(p.alias("class"), zero.alias("r"), one.alias("c"), zero.alias("d")),
    )
    spread = rows.select(*groups, F.explode(both).alias("e")).select(*groups, "e.*")
    total = "long" if sample_weight is None else "double"
    per_class = spread.groupBy(*groups, "class").agg(
        *(F.sum(k).cast(total).alias(k) for k in ("r", "c", "d"))
    )
    with_n = per_class.withColumn("n", F.sum("r").over(Window.partitionBy(*groups)))
    row = SL.ClassRow(*(F.col(k) for k in ("n", "r", "c", "d")))
    values = formula("class_metrics")(OPS, row, beta=b, zero_division=zd)
    out = with_n.select(*groups, "class", *(column(e).alias(n) for n, e in values.items()))
    shown = _shown(call.by, call.func)
    return _ordered(out, [*groups, "class"]).select(*shown, "class", *values)


class_metrics = table_function(SPARK, "class_metrics", _class_metrics)


# ------------------------------------------------------------------ public functions
__all__ = [
    *hand_written("spark", FAMILIES),
    *publish(globals(), "spark", SL.FAMILY, lambda m: _public(m, _build(m))),
]
