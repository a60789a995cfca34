"""Ranking in Polars: @k measures over ranked lists, label-ranking measures over scores.

The formulas are those of :mod:`mlsql.measures.ranking`; this module supplies
their per-row statistics as ``pl.Expr``, each list worked through with
``list.eval`` (no Python per row). Scores are a ``Map(label, score)`` (an Arrow
``map`` column, as DuckDB's ``MAP``) or a list of structs per row: its fields
named label and score, in any order (as DuckDB reads them), or, without those
names, its first field the label and its second the score; in a list, a label
given twice keeps its first score. A NULL score is no score.

``list.eval`` cannot read another column, so where a list is compared with
another row's list (hits of a ranked list, true labels among scored ones) both
are concatenated into one list of tagged structs and compared inside a single
``list.eval``.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"rank_items": [[1, 3, 2, 6]], "correct_items": [[1, 2, 4]]})
>>> df.select(mp.precision_at("rank_items", "correct_items", k=2)).item()
0.5
>>> round(df.select(pl.col("rank_items").mlsql.average_precision("correct_items")).item(), 6)
0.833333
>>> scores = pl.DataFrame(
...     {
...         "actual": [["dog"]],
...         "scores": [[{"label": "cat", "score": 0.9}, {"label": "dog", "score": 0.4}]],
...     }
... )
>>> scores.select(mp.coverage_error("actual", "scores")).item()
2.0
>>> scores.select(mp.top_k("scores", k=1)).item().to_list()
['cat']
>>> scores.select(mp.precision_at(mp.top_k("scores"), "actual", k=1)).item()
0.0
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from mlsql._errors import MlsqlError
from mlsql._formulas import FORMULAS
from mlsql._front.build import function
from mlsql._front.docs import ranking_docstring
from mlsql._registry import Measure, measures
from mlsql.measures import ranking as R
from mlsql.polars._dtypes import (
    NOT_A_LIST_MESSAGE,
    Pairs,
    check_same_kind,
    inner,
    kind,
    label_lists,
)
from mlsql.polars._engine import POLARS
from mlsql.polars.ops import PolarsOps, concat_lists

FAMILIES = ("ranking",)


def _field(name: str) -> pl.Expr:
    return pl.element().struct.field(name)


def _positions() -> pl.Expr:
    """1-based positions of the elements of the list being evaluated."""
    return pl.int_range(1, pl.len() + 1)


def _in_row(lists: pl.Expr, agg: pl.Expr) -> pl.Expr:
    """One value per row: the aggregation ``agg`` over each list."""
    return lists.list.eval(agg).list.first()


# ------------------------------------------------------------------ type checks
def _ranked_check(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Two lists of one label kind (integer widths may differ: both become Int64)."""
    out = label_lists(func, names, pairs)
    if all(kind(inner(d)) == "integer" for _, d in pairs):  # type: ignore[arg-type]
        out = [e.cast(pl.List(pl.Int64)) for e in out]
    return out


def _graded_check(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """Two lists of numbers (or NULL-only lists)."""
    out = []
    for (expr, dtype), name in zip(pairs, names, strict=True):
        element = inner(dtype)
        if element is None or not (element.is_numeric() or element == pl.Null):
            raise MlsqlError(R.GRADES_MESSAGE.format(func=func, name=name, type=dtype))
        if isinstance(dtype, pl.Array):
            expr = expr.arr.to_list()
        out.append(expr.cast(pl.List(pl.Float64)))
    return out


def _score_entries(func: str, name: str, expr: pl.Expr, dtype: pl.DataType) -> tuple[pl.Expr, Any]:
    """Scores as ``list[struct[label, score: f64]]``, and the label type."""
    if isinstance(dtype, pl.Map):
        expr = expr.map.entries()
        dtype = pl.List(pl.Struct({"key": dtype.key, "value": dtype.value}))
    entry = inner(dtype)
    fields = entry.fields if isinstance(entry, pl.Struct) else []
    at_label, at_score = R.score_fields([f.name for f in fields])
    score_type = fields[at_score].dtype if len(fields) >= 2 else None
    if score_type is None or not (score_type.is_numeric() or score_type == pl.Null):
        raise MlsqlError(R.SCORES_MESSAGE.format(func=func, name=name, type=dtype))
    label, score = fields[at_label], fields[at_score]
    label_type = pl.String() if kind(label.dtype) == "text" else label.dtype
    if isinstance(dtype, pl.Array):
        expr = expr.arr.to_list()
    entries = expr.list.eval(
        pl.struct(
            _field(label.name).cast(label_type).alias("label"),
            _field(score.name).cast(pl.Float64).alias("score"),
        )
    )
    return entries, label.dtype


def _scores_check(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """A list of true labels and scores (list of (label, score) structs) of the same kind."""
    (a_expr, a_dtype), (s_expr, s_dtype) = pairs
    entries, label_type = _score_entries(func, names[1], s_expr, s_dtype)
    actual_type = inner(a_dtype)
    if actual_type is None:
        raise MlsqlError(NOT_A_LIST_MESSAGE.format(func=func, name=names[0], dtype=a_dtype))
    check_same_kind(func, names, [a_dtype, s_dtype], [actual_type, label_type])
    if kind(label_type) == "text" or kind(actual_type) == "null":
        target = pl.String() if kind(label_type) == "text" else label_type
        a_expr = a_expr.cast(pl.List(target))
        entries = entries.list.eval(
            pl.struct(_field("label").cast(target).alias("label"), _field("score"))
        )
    elif isinstance(a_dtype, pl.Array):
        a_expr = a_expr.arr.to_list()
    return [a_expr, entries]


def _scores_only_check(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    (expr, dtype) = pairs[0]
    return [_score_entries(func, names[0], expr, dtype)[0]]


def input_check(measure: Measure) -> Callable[[str, Sequence[str], Pairs], list[pl.Expr]]:
    """The type check of each kind of ranking input."""
    if measure.inputs in (R.RANKED, R.RETRIEVED, R.JUDGED):
        return _ranked_check
    if measure.inputs == R.SCORED:
        return _scores_check
    if measure.inputs == ("scores",):
        return _scores_only_check
    return _graded_check


# ------------------------------------------------------------------ computing once
class RankingOps(PolarsOps):
    """PolarsOps whose formula calls compute list-heavy arguments once.

    A formula that names an argument twice would evaluate its ``list.eval``
    twice (the streaming engine has no common-subexpression elimination), so
    such arguments are bound first as fields of a struct (see :func:`let`).
    """

    def call_formula(self, name: str, args: tuple[Any, ...]) -> Any:
        fn = FORMULAS[name].raw
        exprs = {f"x{i}": a for i, a in enumerate(args) if isinstance(a, pl.Expr)}
        if not any("eval" in str(a) for a in exprs.values()):
            return fn(self, *args)
        return let(
            exprs,
            lambda f: fn(self, *(f.get(f"x{i}", a) for i, a in enumerate(args))),
        )

    def ranked_labels(self, entries: pl.Expr, threshold: float | None) -> pl.Expr:
        """The score lists' primitives (:class:`~mlsql.measures.ranking.ScoreListOps`)."""
        return ranked_labels(entries, threshold)

    def head(self, labels: pl.Expr, k: int | None) -> pl.Expr:
        return labels if k is None else labels.list.head(k)


ROPS = RankingOps()
_LETS = iter(range(1 << 62))


def let(fields: dict[str, pl.Expr], body: Callable[[dict[str, pl.Expr]], Any]) -> pl.Expr:
    """``body`` over ``fields``, each computed once per row (a struct scope)."""
    tag = f"__mlsql{next(_LETS)}"
    names = {name: f"{tag}_{name}" for name in fields}
    scope = pl.struct(**{names[n]: e for n, e in fields.items()})
    out = body({n: pl.field(names[n]) for n in fields})
    out = out if isinstance(out, pl.Expr) else pl.lit(out)
    return scope.struct.with_fields(out.alias(tag)).struct.field(tag)


def _distinct(items: pl.Expr) -> pl.Expr:
    """Items without NULLs and repeats, the first occurrence keeping its place."""
    return items.list.drop_nulls().list.unique(maintain_order=True)


# ------------------------------------------------------------------ ranked lists
def ranked_row(rank_items: pl.Expr, correct_items: pl.Expr, k: int | None, body: Callable) -> Any:
    """``body(stats)`` per row, Hivemall's @k statistics computed once each."""
    top = _distinct(rank_items)
    top = top if k is None else top.list.head(k)
    truth = _distinct(correct_items)
    # both lists are distinct: an item of the top that recurs in top ++ truth is a hit
    flags = concat_lists(top, truth).list.eval(pl.element().is_duplicated())
    fields = {
        "unknown": rank_items.is_null() | correct_items.is_null(),
        "n_ranked": top.list.len(),
        "n_true": truth.list.len(),
        "flags": flags.list.head(top.list.len()),
    }

    def stats(f: dict[str, pl.Expr]) -> R.RankedStats:
        hits = f["flags"].list.sum().cast(pl.Int64)
        nth = pl.element().cum_sum().cast(pl.Int64)
        return R.RankedStats(
            unknown=f["unknown"],
            n_ranked=f["n_ranked"],
            n_true=f["n_true"],
            hits=hits,
            first_hit=pl.when(hits > 0).then(f["flags"].list.arg_max() + 1).otherwise(0),
            over_hits=lambda term: (
                f["flags"].list.eval(term(_positions(), nth).filter(pl.element())).list.sum()
            ),
            over_positions=lambda count, term: (
                pl.int_ranges(1, count + 1).list.eval(term(pl.element())).list.sum()
            ),
            hits_within=lambda count: f["flags"].list.head(count).list.sum().cast(pl.Int64),
        )

    return let(fields, lambda f: body(stats(f)))


def judged_row(
    correct_items: pl.Expr, rank_items: pl.Expr, nonrelevant_items: pl.Expr, body: Callable
) -> Any:
    """``body(stats)`` per row for bpref: the judged non-relevant items that are not
    relevant, and the ranked list without its unjudged items."""
    truth = _distinct(correct_items)
    fields = {
        "unknown": correct_items.is_null() | rank_items.is_null() | nonrelevant_items.is_null(),
        "truth": truth,
        "nonrel": _distinct(nonrelevant_items).list.set_difference(truth),
    }

    def with_lists(f: dict[str, pl.Expr]) -> Any:
        # the items of the ranked list that recur in it ++ truth ++ nonrel are judged, and
        # (their first occurrence) in the ranked list's order
        element = pl.element()
        judged = concat_lists(_distinct(rank_items), f["truth"], f["nonrel"]).list.eval(
            element.filter(element.is_duplicated() & element.is_first_distinct())
        )
        flags = concat_lists(judged, f["truth"]).list.eval(element.is_duplicated())
        inner = {
            "unknown": f["unknown"],
            "n_true": f["truth"].list.len().cast(pl.Int64),
            "n_false": f["nonrel"].list.len().cast(pl.Int64),
            "flags": flags.list.head(judged.list.len()).cast(pl.List(pl.Int64)),
        }
        return let(inner, lambda g: body(stats(g)))

    def stats(g: dict[str, pl.Expr]) -> R.JudgedStats:
        def over_hits(term: Callable[..., Any]) -> pl.Expr:
            # list.eval reads no other column: the counts ride at the list's end
            packed = pl.concat_list(g["flags"], g["n_true"], g["n_false"])
            n = pl.len() - 2
            flag = pl.element().slice(0, n)
            value = term(
                pl.int_range(1, n + 1), flag.cum_sum(), pl.element().get(n), pl.element().get(n + 1)
            )
            return packed.list.eval(value.filter(flag == 1).sum()).list.first()

        return R.JudgedStats(
            unknown=g["unknown"], n_true=g["n_true"], n_false=g["n_false"], over_hits=over_hits
        )

    return let(fields, with_lists)


def graded_row(ranked: pl.Expr, ideal: pl.Expr, k: int | None, body: Callable) -> Any:
    """``body(stats)`` per row: grades cut at k (default: the ranked list's length)."""
    n = ranked.list.len() if k is None else k
    fields = {
        "unknown": ranked.is_null() | ideal.is_null(),
        "ranked": ranked.list.head(n),
        "ideal": ideal.list.drop_nulls().list.sort(descending=True).list.head(n),
    }

    def over(grades: pl.Expr) -> Callable[[Any], pl.Expr]:
        return lambda term: grades.list.eval(term(pl.element(), _positions())).list.sum()

    def stats(f: dict[str, pl.Expr]) -> R.GradedStats:
        return R.GradedStats(
            unknown=f["unknown"], over_ranked=over(f["ranked"]), over_ideal=over(f["ideal"])
        )

    return let(fields, lambda f: body(stats(f)))


# ------------------------------------------------------------------ label scores
RANK_FIELDS = ("at_or_above", "above", "true_at_or_above")


def label_scores(
    entries: pl.Expr, truth: pl.Expr, *, with_label: bool = False, with_start: bool = False
) -> pl.Expr:
    """Each row's labels as ``list[struct[score, is_true, scored]]`` (and ``label`` first, if asked;
    ``start`` last, true on a row's first label, if asked).

    ``truth`` holds the distinct true labels. The labels are the scored ones
    (a label's first entry; NULL scores dropped) and the true ones that are
    not scored (score -infinity).
    """
    label, score = _field("label"), _field("score")
    first = label.is_not_null() & label.is_first_distinct() & score.is_not_null()
    scored = entries.list.eval(pl.element().filter(first))
    unscored = truth.list.eval(
        pl.struct(pl.element().alias("label"), pl.lit(None, pl.Float64).alias("score"))
    )
    # a label in both lists is scored and true; the copy from the true list is dropped
    # a row's first label is always kept: the first of its kind
    start = [(pl.int_range(pl.len()) == 0).alias("start")] if with_start else []
    return concat_lists(scored, unscored).list.eval(
        pl.struct(
            *([label] if with_label else []),
            score.fill_null(float("-inf")).alias("score"),
            (label.is_duplicated() | score.is_null()).alias("is_true"),
            score.is_not_null().alias("scored"),  # an unscored label is no top label
            *start,
        ).filter(label.is_first_distinct())
    )


def score_row(actual: pl.Expr, entries: pl.Expr, k: int | None, body: Callable) -> Any:
    """``body(stats)`` per row, the label-ranking statistics computed once each."""
    truth = _distinct(actual)
    labels = label_scores(entries, truth)
    score, is_true = _field("score"), _field("is_true")
    scored = _field("scored")  # not score > -inf: a label may be scored -inf
    rank = R.LabelRank(
        at_or_above=score.rank("max", descending=True).cast(pl.Int64).filter(is_true),
        above=(score.rank("min", descending=True).cast(pl.Int64) - 1).filter(is_true),
        true_at_or_above=score.filter(is_true).rank("max", descending=True).cast(pl.Int64),
    )
    # nan_max: a NaN score is the top, as the ranks above order it (max would skip it)
    top = scored & (score == score.filter(scored).nan_max())

    def per_true_label(term: Callable[[R.LabelRank], Any]) -> pl.Expr:
        """``term`` for each true label; a rank it names twice is computed once."""
        names = {f: f"__mlsql_{f}" for f in RANK_FIELDS}
        probe = str(term(R.LabelRank(**{f: pl.field(n) for f, n in names.items()})))
        uses = {f: probe.count(f'"{n}"') for f, n in names.items()}
        if all(n <= 1 for n in uses.values()):
            return term(rank)
        used = [f for f in RANK_FIELDS if uses[f]]
        scope = pl.struct(**{names[f]: getattr(rank, f) for f in used})
        out = term(R.LabelRank(**{f: pl.field(names[f]) for f in RANK_FIELDS}))
        return scope.struct.with_fields(out.alias("__mlsql_term")).struct.field("__mlsql_term")

    def over_places(start: pl.Expr, stop: pl.Expr, term: Callable[[Any], Any]) -> pl.Expr:
        running = term(_positions()).cum_sum()  # over positions 1..len of the row's labels

        def up_to(n: pl.Expr) -> pl.Expr:
            return pl.when(n > 0).then(running.gather((n - 1).clip(0))).otherwise(0.0)

        return pl.when(stop > start).then(up_to(stop) - up_to(start)).otherwise(0.0)

    fields = {
        "unknown": entries.is_null() | actual.is_null(),
        "labels": labels,
        "n_true": truth.list.len().cast(pl.Int64),
    }

    def stats(f: dict[str, pl.Expr]) -> R.ScoreStats:
        u = f["labels"]
        return R.ScoreStats(
            unknown=f["unknown"],
            n_labels=u.list.len().cast(pl.Int64),
            n_true=f["n_true"],
            n_top=_in_row(u, top.sum()).cast(pl.Int64),
            n_top_true=_in_row(u, (top & is_true).sum()).cast(pl.Int64),
            over_true=lambda term: _in_row(u, per_true_label(term).sum()),
            max_over_true=lambda term: _in_row(u, per_true_label(term).max()),
            over_places=over_places,
            over_positions=lambda count, term: (
                pl.int_ranges(1, count + 1).list.eval(term(pl.element())).list.sum()
            ),
            # clip, not R.smaller: where n is NULL (a row not known) smaller's when/then
            # gave k, and the positions 1..k of a k of 2**31 took all memory
            cut=lambda n: n if k is None else n.clip(upper_bound=k),
        )

    return let(fields, lambda f: body(stats(f)))


# ------------------------------------------------------------------ scores to label lists
def ranked_labels(entries: pl.Expr, threshold: float | None = None) -> pl.Expr:
    """Labels best score first (ties by label), optionally only those scored >= threshold.

    A label's first entry counts; a NULL score is no score.
    """
    label, score = _field("label"), _field("score")
    keep = label.is_not_null() & label.is_first_distinct() & score.is_not_null()
    if threshold is not None:
        keep = keep & (score >= threshold)
    kept = entries.list.eval(pl.element().filter(keep))
    return kept.list.eval(label.sort_by([score, label], descending=[True, False]))


# ------------------------------------------------------------------ docstring examples
# ------------------------------------------------------------------ public functions
_THIS = sys.modules[__name__]
SET_RETURNS = (
    "polars.Expr\n    A list of labels per row, best score first (ties by label); NULL where the\n"
    "    scores are NULL."
)
AGGREGATE_RETURNS = (
    "polars.Expr\n    An aggregate: one number per ``select``, ``group_by().agg`` group or\n"
    "    ``over()`` window; NULL over no known rows."
)


def _doc(m: Measure) -> str:
    """The docstring of a ranking function (its example is added by :mod:`mlsql.polars`)."""
    return ranking_docstring(POLARS, m, SET_RETURNS if m.kind == "set" else AGGREGATE_RETURNS)


#: the per-row statistics of each input shape (:func:`mlsql.measures.ranking.row_of`)
ROWS = R.RowPlans(
    ranked=ranked_row,
    judged=judged_row,
    scored=lambda func, actual, entries, k, body: score_row(actual, entries, k, body),
    graded=graded_row,
)


def _aggregate(m: Measure) -> Callable[..., pl.Expr]:
    def build(*inputs: pl.Expr, sample_weight: pl.Expr | None = None, **params: Any) -> pl.Expr:
        value = R.row_of(m.name, m.inputs, ROWS, ROPS, *inputs, **params)
        weight = None if sample_weight is None else sample_weight.cast(pl.Float64)
        return R.mean_over_rows(ROPS, value, weight)

    public = function(POLARS, m, build, input_check(m), _THIS)
    public.__doc__ = _doc(m)
    return public


def _set(m: Measure) -> Callable[..., pl.Expr]:
    def build(entries: pl.Expr, **params: Any) -> pl.Expr:
        return m.build(ROPS, R.ScoredLabels(entries), **params)  # type: ignore[misc]

    public = function(POLARS, m, build, _scores_only_check, _THIS)
    public.__doc__ = _doc(m)
    return public


_public: dict[str, Callable[..., pl.Expr]] = {}
for _m in measures(family=R.FAMILY, kind="aggregate"):
    _public[_m.name] = _aggregate(_m)
    for _alias in _m.aliases:
        _public[_alias] = _public[_m.name]

for _m in measures(family=R.FAMILY, kind="set"):
    _public[_m.name] = _set(_m)

globals().update(_public)
__all__ = sorted(_public)  # built from the registry
