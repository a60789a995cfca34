"""Ranking in Spark: @k measures over ranked arrays, label-ranking measures over scores.

The formulas are those of :mod:`mlsql.measures.ranking`; this module supplies
their per-row statistics as Spark Columns built from Spark's own array
functions and higher-order functions (``transform``, ``filter``,
``aggregate``): no Python UDF. Each aggregate is the mean over rows of the
per-row value (``avg``), so it works in ``agg`` and ``groupBy().agg`` and
merges across partitions like any ``avg``; nothing is collected.

Scores are a ``map<label, score>`` or an ``array<struct<label, score>>`` per
row (the struct's fields named label and score, in any order, as DuckDB reads them; a
struct without those names: its first field the label, its second the score); in an
array a label given twice keeps its first entry. A NULL score is no score. Which of the two forms a column holds is read from its
type, so an array of structs must be passed as a Column of its DataFrame
(``df.scores``); a name (or ``F.col``) is read as a map.

Computing once: Spark evaluates a higher-order function's lambda once per
array element, and an expression from outside the lambda named inside it is
evaluated again each time (no common subexpression elimination reaches into
lambdas). So each row's lists are worked out once and bound to a lambda
variable with ``transform(array(value), v -> body)[0]`` (:func:`let`), and a
formula that names a list-heavy argument more than once gets it bound the
same way (:class:`RankingOps`).

Examples
--------
>>> from pyspark.sql import SparkSession
>>> import mlsql.spark as ms
>>> spark = SparkSession.builder.getOrCreate()
>>> df = spark.createDataFrame(
...     [([1, 3, 2, 6], [1, 2, 4])], "rank_items array<int>, correct_items array<int>"
... )
>>> df.agg(ms.precision_at("rank_items", "correct_items", k=2)).first()[0]
0.5
>>> round(df.agg(ms.average_precision(df.rank_items, df.correct_items)).first()[0], 6)
0.833333
>>> scores = spark.createDataFrame(
...     [(["dog"], {"cat": 0.9, "dog": 0.4})], "actual array<string>, scores map<string, double>"
... )
>>> scores.agg(ms.coverage_error("actual", "scores")).first()[0]
2.0
>>> scores.select(ms.top_k("scores", k=1)).first()[0]
['cat']
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mlsql._errors import MlsqlError
from mlsql._formulas import FORMULAS
from mlsql._front.build import function
from mlsql._front.docs import ranking_docstring
from mlsql._registry import Measure, measures
from mlsql.measures import ranking as R
from mlsql.spark._build import Example, shared_example
from mlsql.spark._build import example as example_lines
from mlsql.spark._engine import SPARK
from mlsql.spark._types import (
    MISMATCH_MESSAGE,
    NOT_A_LIST_MESSAGE,
    check_label_lists,
    compatible,
    data_type,
    element,
)
from mlsql.spark.ops import SparkOps, column

FAMILIES = (R.FAMILY,)
NEG_INF = float("-inf")


# ------------------------------------------------------------------ binding values once
def let(value: Column, body: Callable[[Column], Any]) -> Column:
    """``body(v)`` with ``v`` bound to ``value``, which Spark computes once per row."""
    return F.transform(F.array(value), lambda v: column(body(v))).getItem(0)


def let_fields(fields: dict[str, Column], body: Callable[[dict[str, Column]], Any]) -> Column:
    """``body`` over ``fields`` (name -> Column), each computed once per row."""
    scope = F.struct(*(value.alias(name) for name, value in fields.items()))
    return let(scope, lambda s: body({name: s[name] for name in fields}))


def total(values: Column) -> Column:
    """The sum of an array of numbers, NULL elements adding nothing (0.0 for an empty array)."""
    return F.aggregate(values, F.lit(0.0), lambda acc, x: acc + F.coalesce(x, F.lit(0.0)))


def positions(count: Any, term: Callable[[Column], Any]) -> Column:
    """The sum of ``term(p)`` over the positions p = 1..count (0 when count <= 0)."""
    slots = F.array_repeat(F.lit(0), F.greatest(column(count), F.lit(0)).cast("int"))
    return total(F.transform(slots, lambda _, i: column(term(i + 1))))


class RankingOps(SparkOps):
    """SparkOps whose formulas compute a list-heavy argument once.

    A formula naming an argument twice would evaluate it twice inside a lambda;
    an argument holding a higher-order function (its text holds
    ``lambdafunction``) that the formula names more than once is bound first.
    """

    _probes = itertools.count()

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Any:
        fn = FORMULAS[name].raw
        heavy = [
            i
            for i, a in enumerate(args)
            if isinstance(a, Column) and "lambdafunction" in str(a).lower()
        ]
        if heavy:
            tag = f"__mlsql_probe{next(self._probes)}_"
            probe = [F.col(f"{tag}{i}") if isinstance(a, Column) else a for i, a in enumerate(args)]
            text = str(column(fn(SparkOps(), *probe)))
            heavy = [i for i in heavy if text.count(f"{tag}{i}") > 1]
        if not heavy:
            return fn(self, *args)
        fields = {f"x{i}": args[i] for i in heavy}
        return let_fields(
            fields, lambda f: fn(self, *(f.get(f"x{i}", a) for i, a in enumerate(args)))
        )

    def ranked_labels(self, entries: Column, threshold: float | None) -> Column:
        """The score lists' primitives (:class:`~mlsql.measures.ranking.ScoreListOps`)."""
        return ranked_labels(entries, threshold)

    def head(self, labels: Column, k: int | None) -> Column:
        return labels if k is None else first(labels, k)


OPS = RankingOps()


def _distinct(items: Column) -> Column:
    """Items without NULLs and repeats, the first occurrence keeping its place."""
    return F.array_distinct(F.array_compact(items))


# ------------------------------------------------------------------ type checks
def _graded_check(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
    """Arrays of numbers (where the Column's type is known)."""
    for name, col in zip(names, cols, strict=True):
        dtype = data_type(col)
        if dtype is None or isinstance(dtype, T.NullType):
            continue
        inner = element(dtype)
        if inner is None or not isinstance(inner, (T.NumericType, T.NullType)):
            raise MlsqlError(
                R.GRADES_MESSAGE.format(func=func, name=name, type=dtype.simpleString())
            )


def score_fields(func: str, name: str, dtype: T.DataType) -> tuple[str, str, T.DataType] | None:
    """(label field, score field, label type) of an array of structs; None for a map.

    Raises :class:`MlsqlError` for any other type.
    """
    if isinstance(dtype, T.MapType) and isinstance(dtype.valueType, (T.NumericType, T.NullType)):
        return None
    inner = element(dtype)
    if isinstance(inner, T.StructType) and len(inner.fields) >= 2:
        at_label, at_score = R.score_fields(inner.fieldNames())
        label, score = inner.fields[at_label], inner.fields[at_score]
        if isinstance(score.dataType, (T.NumericType, T.NullType)):
            return label.name, score.name, label.dataType
    raise MlsqlError(R.SCORES_MESSAGE.format(func=func, name=name, type=dtype.simpleString()))


def _label_type(dtype: T.DataType) -> T.DataType:
    if isinstance(dtype, T.MapType):
        return dtype.keyType
    entry = element(dtype)
    return entry[R.score_fields(entry.fieldNames())[0]].dataType  # type: ignore[index, union-attr]


def _scores_check(func: str, names: Sequence[str], cols: Sequence[Column]) -> None:
    """Scores (a map or an array of (label, score) structs), after true labels of their kind.

    The inputs are ``(scores,)`` or ``(actual, scores)``.
    """
    s_name, s_col = names[-1], cols[-1]
    s_type = data_type(s_col)
    if s_type is not None and not isinstance(s_type, T.NullType):
        score_fields(func, s_name, s_type)
    if len(cols) == 1:
        return
    a_type = data_type(cols[0])
    if a_type is not None and not isinstance(a_type, (T.ArrayType, T.NullType)):
        raise MlsqlError(
            NOT_A_LIST_MESSAGE.format(func=func, name=names[0], type=a_type.simpleString())
        )
    if s_type is None or a_type is None or isinstance(s_type, T.NullType):
        return
    a_label = element(a_type) or a_type
    if not compatible(a_label, _label_type(s_type)):
        raise MlsqlError(
            MISMATCH_MESSAGE.format(
                func=func,
                left=names[0],
                right=s_name,
                left_type=a_type.simpleString(),
                right_type=s_type.simpleString(),
            )
        )


def scores_as_map(func: str, names: Sequence[str], cols: Sequence[Column]) -> list[Column] | None:
    """The scores' check, then scores given as a list of (label, score) structs as a map.

    The list's field names are read from its type, which Spark knows only on the column
    itself: ``sample_weight`` wraps each input (NULL where the weight is), and the wrapped
    column has no type to read. The map keeps each label's first entry and drops NULL labels
    and NULL scores, as the list form does.
    """
    _scores_check(func, names, cols)
    fields = _fields_of(func, cols[-1])
    if fields is None:
        return None
    return [*cols[:-1], F.map_from_entries(score_entries(cols[-1], fields))]


def input_check(
    measure: Measure,
) -> Callable[[str, Sequence[str], Sequence[Column]], list[Column] | None]:
    """The type check of each kind of ranking input (scores: then read as a map)."""
    if measure.inputs in (R.RANKED, R.RETRIEVED, R.JUDGED):
        return check_label_lists
    if measure.inputs in (R.SCORED, ("scores",)):
        return scores_as_map
    return _graded_check


#: the longest array Spark holds (its sizes and ``slice`` lengths are INT)
LONGEST_ARRAY = 2**31 - 1


def first(items: Column, k: int) -> Column:
    """The first ``k`` items of an array. A ``k`` beyond any array's length (as 10**12) keeps
    them all, as in DuckDB and Polars, where Spark's INT ``slice`` length would overflow."""
    return F.slice(items, 1, min(k, LONGEST_ARRAY))


# ------------------------------------------------------------------ ranked lists
def ranked_row(rank_items: Column, correct_items: Column, k: int | None, body: Callable) -> Column:
    """``body(stats)`` per row, Hivemall's @k statistics computed once each."""
    top = _distinct(rank_items)
    top = top if k is None else first(top, k)
    lists = {"top": top, "truth": _distinct(correct_items)}

    def with_hits(f: dict[str, Column]) -> Column:
        def hit_at(x: Column, i: Column) -> Column:
            return F.when(F.array_contains(f["truth"], x), i + 1)

        hits = F.filter(F.transform(f["top"], hit_at), lambda p: p.isNotNull())
        row = {"n_ranked": F.size(f["top"]), "n_true": F.size(f["truth"]), "hits": hits}
        return let_fields(row, lambda g: body(_ranked_stats(rank_items, correct_items, g)))

    return let_fields(lists, with_hits)


def _ranked_stats(rank_items: Column, correct_items: Column, g: dict[str, Column]) -> Any:
    hits = g["hits"]  # 1-based positions of the hits in the top n, ascending
    return R.RankedStats(
        unknown=rank_items.isNull() | correct_items.isNull(),
        n_ranked=g["n_ranked"],
        n_true=g["n_true"],
        hits=F.size(hits),
        first_hit=F.coalesce(F.array_min(hits), F.lit(0)),
        over_hits=lambda term: total(F.transform(hits, lambda pos, j: column(term(pos, j + 1)))),
        over_positions=positions,
        hits_within=lambda count: F.size(F.filter(hits, lambda p: p <= column(count))),
    )


def judged_row(
    correct_items: Column, rank_items: Column, nonrelevant_items: Column, body: Callable
) -> Column:
    """``body(stats)`` per row for bpref: the judged non-relevant items that are not
    relevant, and the ranked list without its unjudged items."""
    lists = {"truth": _distinct(correct_items), "nonrelevant": _distinct(nonrelevant_items)}

    def with_judged(f: dict[str, Column]) -> Column:
        truth = f["truth"]
        nonrel = F.filter(f["nonrelevant"], lambda x: ~F.array_contains(truth, x))
        return let_fields({"truth": truth, "nonrel": nonrel}, with_hits)

    def with_hits(f: dict[str, Column]) -> Column:
        truth, nonrel = f["truth"], f["nonrel"]
        judged = F.filter(
            _distinct(rank_items),
            lambda x: F.array_contains(truth, x) | F.array_contains(nonrel, x),
        )
        hits = F.filter(
            F.transform(judged, lambda x, i: F.when(F.array_contains(truth, x), i + 1)),
            lambda p: p.isNotNull(),
        )
        row = {"n_true": F.size(truth), "n_false": F.size(nonrel), "hits": hits}
        return let_fields(row, lambda g: body(stats(g)))

    def stats(g: dict[str, Column]) -> R.JudgedStats:
        n_true, n_false = g["n_true"], g["n_false"]
        return R.JudgedStats(
            unknown=correct_items.isNull() | rank_items.isNull() | nonrelevant_items.isNull(),
            n_true=n_true,
            n_false=n_false,
            over_hits=lambda term: total(
                F.transform(g["hits"], lambda pos, j: column(term(pos, j + 1, n_true, n_false)))
            ),
        )

    return let_fields(lists, with_judged)


def graded_row(ranked: Column, ideal: Column, k: int | None, body: Callable) -> Column:
    """``body(stats)`` per row: grades cut at k (default: the ranked list's length)."""
    grades = ranked.cast("array<double>")
    best = F.sort_array(F.array_compact(ideal.cast("array<double>")), asc=False)
    n = F.size(grades) if k is None else F.lit(min(k, LONGEST_ARRAY))
    lists = {
        "ranked": grades if k is None else first(grades, k),
        "ideal": F.slice(best, 1, n),
    }

    def over(grades: Column) -> Callable[[Any], Column]:
        return lambda term: total(F.transform(grades, lambda g, i: column(term(g, i + 1))))

    def stats(f: dict[str, Column]) -> R.GradedStats:
        return R.GradedStats(
            unknown=ranked.isNull() | ideal.isNull(),
            over_ranked=over(f["ranked"]),
            over_ideal=over(f["ideal"]),
        )

    return let_fields(lists, lambda f: body(stats(f)))


# ------------------------------------------------------------------ label scores
def score_entries(scores: Column, fields: tuple[str, str, T.DataType] | None) -> Column:
    """A row's scored labels as ``array<struct<label, score: double>>``.

    A map's entries, or an array's structs keeping each label's first entry (NULL
    labels dropped); then the entries whose score is NULL are dropped.
    """
    if fields is None:
        entries = F.transform(
            F.map_entries(scores),
            lambda e: F.struct(e["key"].alias("label"), e["value"].cast("double").alias("score")),
        )
    else:
        label, score = fields[0], fields[1]

        def first(labels: Column) -> Column:
            return F.filter(
                scores,
                lambda e, i: e[label].isNotNull() & (F.array_position(labels, e[label]) == i + 1),
            )

        kept = let(F.transform(scores, lambda e: e[label]), first)
        entries = F.transform(
            kept,
            lambda e: F.struct(e[label].alias("label"), e[score].cast("double").alias("score")),
        )
    return F.filter(entries, lambda e: e["score"].isNotNull())


def _fields_of(func: str, scores: Column) -> tuple[str, str, T.DataType] | None:
    dtype = data_type(scores)
    if dtype is None or isinstance(dtype, T.NullType):
        return None
    return score_fields(func, "scores", dtype)


RANK_FIELDS = ("at_or_above", "above", "true_at_or_above")


def score_row(func: str, actual: Column, scores: Column, k: int | None, body: Callable) -> Column:
    """``body(stats)`` per row, the label-ranking statistics computed once each.

    A row's labels are its scored labels and its true labels; a true label that
    is not scored has score -infinity. Bound per row: the scores of the scored
    labels, of the true labels and of all labels, and the highest score.
    """
    entries = score_entries(scores, _fields_of(func, scores))

    def split(entries: Column) -> Column:
        first = {
            "labels": F.transform(entries, lambda e: e["label"]),
            "scored": F.transform(entries, lambda e: e["score"]),
            "truth": _distinct(actual),
        }
        return let_fields(first, truth_scores)

    def truth_scores(f: dict[str, Column]) -> Column:
        def score_of(a: Column) -> Column:  # NULL where the true label is not scored
            return F.element_at(
                f["scored"], F.nullif(F.array_position(f["labels"], a).cast("int"), F.lit(0))
            )

        raw = F.transform(f["truth"], score_of)
        missing = F.transform(F.filter(raw, lambda v: v.isNull()), lambda v: F.lit(NEG_INF))
        row = {
            "scored": f["scored"],
            "truth": F.transform(raw, lambda v: F.coalesce(v, F.lit(NEG_INF))),
            "labels": F.concat(f["scored"], missing),
            "top": F.array_max(f["scored"]),
            # the true labels scored top, before an unscored one is -inf: a score of -inf ties
            # with it there, and an unscored label is no top label
            "top_true": F.size(F.filter(raw, lambda v: v == F.array_max(f["scored"]))),
        }
        return let_fields(row, lambda g: body(_score_stats(scores, actual, k, g)))

    return let(entries, split)


def _score_stats(scores: Column, actual: Column, k: int | None, g: dict[str, Column]) -> Any:
    labels, truth, top = g["labels"], g["truth"], g["top"]

    def rank_of(t: Column, used: Sequence[str]) -> Column:
        counts = {
            "at_or_above": lambda: F.size(F.filter(labels, lambda u: u >= t)),
            "above": lambda: F.size(F.filter(labels, lambda u: u > t)),
            "true_at_or_above": lambda: F.size(F.filter(truth, lambda u: u >= t)),
        }
        return F.struct(*(counts[f]().alias(f) for f in used))

    def per_true_label(term: Callable[[R.LabelRank], Any]) -> Column:
        """``term`` for each true label, the ranks it names counted once each."""
        probe = str(column(term(R.LabelRank(*(F.col(f"__mlsql_{f}") for f in RANK_FIELDS)))))
        # a Column's text that names none of them (another Spark client): compute all three
        used = [f for f in RANK_FIELDS if f"__mlsql_{f}" in probe] or list(RANK_FIELDS)
        ranks = F.transform(truth, lambda t: rank_of(t, used))

        def apply(r: Column) -> Column:
            given = {f: (r[f] if f in used else F.lit(None)) for f in RANK_FIELDS}
            return column(term(R.LabelRank(**given)))

        return F.transform(ranks, apply)

    def over_places(start: Any, stop: Any, term: Callable[[Column], Any]) -> Column:
        start = column(start)
        return positions(column(stop) - start, lambda i: term(start + i))

    return R.ScoreStats(
        unknown=scores.isNull() | actual.isNull(),
        n_labels=F.size(labels),
        n_true=F.size(truth),
        n_top=F.size(F.filter(g["scored"], lambda v: v == top)),
        n_top_true=g["top_true"],
        over_true=lambda term: total(per_true_label(term)),
        max_over_true=lambda term: F.array_max(per_true_label(term)),
        over_places=over_places,
        over_positions=positions,
        cut=lambda n: n if k is None else F.least(column(n), F.lit(k)),
    )


# ------------------------------------------------------------------ scores to label lists
def ranked_labels(entries: Column, threshold: float | None = None) -> Column:
    """Labels of a row's :func:`score_entries` best score first (NaN the best, as Spark sorts
    it; ties by label), optionally only those scored >= threshold."""
    if threshold is not None:
        entries = F.filter(entries, lambda e: e["score"] >= F.lit(threshold))

    def key(e: Column) -> Column:
        score = e["score"].cast("double")
        return F.struct(
            (~F.isnan(score)).alias("nan"), (-score).alias("neg_score"), e["label"].alias("label")
        )

    keyed = F.transform(entries, key)
    return F.transform(F.sort_array(keyed), lambda e: e["label"])


# ------------------------------------------------------------------ docstrings
#: the Spark types of the examples' columns (:mod:`mlsql._front.examples`)
EXAMPLE_TYPES = {
    **dict.fromkeys(("rank_items", "correct_items", "nonrelevant_items"), "array<int>"),
    **dict.fromkeys(("ranked_relevance", "ideal_relevance"), "array<int>"),
    "actual": "array<string>",
    "scores": "map<string, double>",
}
SET_RETURNS = (
    "pyspark.sql.Column\n    An array of labels per row, best score first (ties by label); NULL where\n"
    "    the scores are NULL."
)
AGGREGATE_RETURNS = (
    "pyspark.sql.Column\n    An aggregate: one number per ``agg`` or ``groupBy().agg`` group (the mean\n"
    "    over rows); NULL over no known rows."
)


def example(measure: Measure) -> Example:
    """A small DataFrame for ``measure``'s docstring example, its parameters and output (DCG
    to 11 decimals: Spark's sum may change its last digit)."""
    found = shared_example(measure, EXAMPLE_TYPES, approximate=("dcg",))
    assert found is not None, measure.name  # every ranking function has one
    return found


#: the note of a function taking scores
SCORES_NOTE = (
    "An array of (label, score) structs is recognised from its type: pass it as a "
    "Column of its DataFrame (df.scores); a name is read as a map."
)


def _doc(m: Measure) -> str:
    """The numpydoc docstring of a ranking function, with its runnable example."""
    rows, schema, params, output = example(m)
    return ranking_docstring(
        SPARK,
        m,
        SET_RETURNS if m.kind == "set" else AGGREGATE_RETURNS,
        [SCORES_NOTE] if "scores" in m.inputs else [],
        example_lines(m.name, m.kind, rows, schema, m.inputs, params, output),
    )


# ------------------------------------------------------------------ public functions
#: the per-row statistics of each input shape (:func:`mlsql.measures.ranking.row_of`)
ROWS = R.RowPlans(ranked=ranked_row, judged=judged_row, scored=score_row, graded=graded_row)


def _aggregate(m: Measure) -> Callable[..., Column]:
    def build(*inputs: Column, sample_weight: Column | None = None, **params: Any) -> Column:
        value = R.row_of(m.name, m.inputs, ROWS, OPS, *inputs, **params)
        weight = None if sample_weight is None else sample_weight.cast("double")
        return R.mean_over_rows(OPS, value, weight)

    public = function(SPARK, m, build, input_check(m), _THIS)
    public.__doc__ = _doc(m)
    return public


def _set(m: Measure) -> Callable[..., Column]:
    def build(scores: Column, **params: Any) -> Column:
        entries = score_entries(scores, _fields_of(m.name, scores))
        return m.build(OPS, R.ScoredLabels(entries), **params)  # type: ignore[misc]

    public = function(SPARK, m, build, _scores_check, _THIS)
    public.__doc__ = _doc(m)
    return public


_THIS = sys.modules[__name__]
_public: dict[str, Callable[..., Column]] = {}
for _m in measures(family=R.FAMILY, kind="aggregate"):
    if _m.available_in("spark"):
        _public[_m.name] = _aggregate(_m)

for _m in measures(family=R.FAMILY, kind="set"):
    _public[_m.name] = _set(_m)

globals().update(_public)
__all__ = sorted(_public)  # built from the registry
