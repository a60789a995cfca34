"""Ranking measures: ranked lists, label scores, and from scores to label sets.

Three groups, each a formula over per-row statistics that the engines supply:

- Hivemall's @k family over ``(rank_items, correct_items [, k])``:
  ``precision_at``, ``recall_at``, ``average_precision`` (MAP), ``hitrate``,
  ``mrr``, ``ndcg``, ``ranking_auc`` (Hivemall's ranking ``auc``: the binary
  ``auc(actual, predicted)`` keeps that name) and ``graded_ndcg`` (Hivemall's
  ``ndcg`` over relevance grades). Statistics: :class:`RankedStats`,
  :class:`GradedStats`.
- ranx's and trec_eval's retrieval measures over ``(correct_items, rank_items
  [, k])``, the truth first as ranx's ``(qrels, run)``: ``hits``, ``map_score``
  (MAP divided by all true items), ``r_precision``, ``f1_at``, ``dcg`` (raw,
  binary relevance) and ``rbp`` (rank-biased precision, persistence ``p``).
  Statistics: :class:`RankedStats`. ``bpref`` (binary preference) takes a third
  list, the judged non-relevant items: ``(correct_items, rank_items,
  nonrelevant_items)``. Statistics: :class:`JudgedStats`.
- scikit-learn's label-ranking measures over the true label set and per-row
  label scores, ``(actual, scores)`` as scikit-learn's ``(y_true, y_score)``:
  ``coverage_error``, ``label_ranking_loss``,
  ``label_ranking_average_precision``, ``one_error``, ``ndcg_score``.
  Statistics: :class:`ScoreStats`.
- From scores to label lists: ``top_k``, ``above_threshold``, ``top_k_above``.

Notes
-----
Ranked lists (Hivemall's measures, as in its ``BinaryResponsesMeasures``):

- NULL items and repeats are dropped first (the first occurrence keeps its
  place), so ``R`` below is a list of distinct items; ``T`` is the true set.
- ``k`` (NULL or left out: the whole list) must be a whole number > 0; a ``k``
  larger than the list looks at the whole list (``n = min(|R|, k)``).
- A row whose ``correct_items`` or ``rank_items`` is NULL is skipped (Hivemall
  reads a NULL ``rank_items`` as empty: write ``coalesce(rank_items, [])``).
- Empty lists: precision is 1 when both lists are empty, else 0 for an empty
  ``R``; recall and average precision are 1 when both are empty, else 0 for
  an empty ``T``; nDCG is 0 when nothing is true; AUC is 0.5 when the top
  ``n`` holds no hit or no miss.
- Average precision divides by the hits in the top ``n`` (Hivemall's code
  since 2017; its ``rank.md`` still prints the older values).
- ``ranking_auc`` counts pairs within the top ``n``; Hivemall counts ``k``
  slots even where the list is shorter (it rejects such ``k`` in its UDAF).
- Hivemall's UDAFs return 0 over zero rows; mlsql returns NULL.

ranx's retrieval measures (the same cleaned lists; where ranx differs):

- a row without true items scores 0 in each (ranx's ``clean_qrels`` check;
  trec_eval leaves such a query out);
- ``map_score`` divides by ``|T|`` (``average_precision`` by the hits, as
  Hivemall); ``r_precision`` divides by ``|T|`` even where the list is shorter;
- ``f1_at`` is ``2 hits / (n + |T|)`` with ``n = min(k, |R|)``, 0 without a
  hit; ranx divides precision by ``k`` even beyond the list (a lower value);
- ``rbp`` looks at the whole list (ranx's takes no ``k``) and weighs each hit
  1 (ranx weighs it by its relevance grade);
- ties: the list's order is the ranking (ranx sorts a run by score, unstably).

bpref (ranx's formula; trec_eval's ``m_bpref.c`` gives the same numbers but where
ranx divides 0 by 0):

- ``bpref = 1/R · Σ over the relevant items ranked (1 - min(n, R) / min(R, N))``,
  ``n`` the judged non-relevant items ranked above it, ``R`` the relevant items,
  ``N`` the judged non-relevant ones; unjudged items are left out of the ranking;
- an item in both ``correct_items`` and ``nonrelevant_items`` is relevant (a
  qrels file judges a document once), so ``N`` counts the others;
- no judged non-relevant item (``N = 0``): each relevant item ranked scores 1
  (trec_eval: ``n = 0`` adds 1; ranx divides 0 by ``min(R, 0) = 0`` and gives
  NaN), so bpref is then the recall of the whole list;
- no relevant item: 0 (ranx; trec_eval leaves such a query out); no ``k`` (ranx's
  bpref ignores its ``k``).

Label scores (scikit-learn's definitions; a row's labels are its scored labels
and its true labels, so scores for every label give scikit-learn's numbers):

- a label whose score is NULL is not scored; a true label that is not scored
  ranks below every scored label (score -infinity);
- ties: ``coverage_error`` counts every label scored at least as high as the
  lowest true label; ``label_ranking_loss`` counts a false label tied with a
  true one as a wrong pair; ``label_ranking_average_precision`` ranks tied
  labels at the lowest of their places (``rankdata(..., 'max')``);
  ``ndcg_score`` averages the gain over tied labels (``ignore_ties=False``);
  ``one_error`` counts the share of top-scored labels that are not true (the
  expected error when ties are broken at random);
- a row without true labels contributes 0 to ``coverage_error``,
  ``label_ranking_loss`` and ``ndcg_score``, 1 to
  ``label_ranking_average_precision`` and 1 to ``one_error``; a row whose
  labels are all true contributes 0 to ``label_ranking_loss`` and 1 to
  ``label_ranking_average_precision``; a row with no scored label contributes
  1 to ``one_error``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from mlsql import _params as P
from mlsql._formulas import formula
from mlsql._registry import measure
from mlsql._weights import weighted

E = Any  # an engine expression
Term = Callable[..., E]

FAMILY = "ranking"
K = P.K


# ------------------------------------------------------------------ statistics
@dataclass(frozen=True)
class RankedStats:
    """One row of a ranked list ``R`` (no NULLs, no repeats) against its true set ``T``.

    ``over_hits(term)`` is the sum over the hits in the top ``n_ranked`` of
    ``term(position, nth)``: the hit's 1-based position and its 1-based number
    among the hits. ``over_positions(count, term)`` is the sum of
    ``term(position)`` over positions 1..count. ``hits_within(count)`` counts the
    hits among the first ``count`` positions of the top ``n_ranked`` (R-precision's
    cut at ``|T|``, which a term of ``over_hits`` cannot read in every engine).
    """

    unknown: E
    n_ranked: E
    n_true: E
    hits: E
    first_hit: E
    over_hits: Callable[[Term], E]
    over_positions: Callable[[E, Term], E]
    hits_within: Callable[[E], E]


@dataclass(frozen=True)
class JudgedStats:
    """One row of a ranked list reduced to its judged items, against its judged sets.

    ``n_true`` counts the relevant items, ``n_false`` the judged non-relevant ones
    (not relevant too). ``over_hits(term)`` sums ``term(position, nth, n_true,
    n_false)`` over the relevant items of the judged list (unjudged items left
    out): the hit's 1-based position in that list, its 1-based number among the
    hits, and the row's two counts, handed in because a term is computed where an
    engine may not read the row's other values (a Polars ``list.eval``).
    """

    unknown: E
    n_true: E
    n_false: E
    over_hits: Callable[[Callable[[E, E, E, E], E]], E]


@dataclass(frozen=True)
class GradedStats:
    """One row of relevance grades in ranked order and the grades of an ideal ranking.

    ``over_ranked(term)`` and ``over_ideal(term)`` sum ``term(relevance, position)``
    over the first ``k`` grades of the ranked list and of the ideal list (sorted
    descending); a NULL grade contributes nothing.
    """

    unknown: E
    over_ranked: Callable[[Term], E]
    over_ideal: Callable[[Term], E]


@dataclass(frozen=True)
class LabelRank:
    """Where one true label stands among its row's labels (by score, descending)."""

    at_or_above: E  # labels scored >= it, itself included
    above: E  # labels scored > it
    true_at_or_above: E  # true labels scored >= it, itself included


@dataclass(frozen=True)
class ScoreStats:
    """One row of label scores against its true label set.

    ``n_labels`` counts the scored labels and the true labels; ``n_top`` the
    scored labels sharing the highest score, ``n_top_true`` the true ones among
    them. ``over_true(term)`` sums ``term(LabelRank)`` over the true labels and
    ``max_over_true(term)`` takes its maximum. ``over_places(start, stop,
    term)``, for use inside those terms, sums ``term(position)`` over the
    positions start+1..stop (the places of a group of tied labels);
    ``over_positions(count, term)`` sums it over positions 1..count.
    ``cut(n)`` is ``min(n, k)`` (``n`` when no ``k`` is given).
    """

    unknown: E
    n_labels: E
    n_true: E
    n_top: E
    n_top_true: E
    over_true: Callable[[Callable[[LabelRank], E]], E]
    max_over_true: Callable[[Callable[[LabelRank], E]], E]
    over_places: Callable[[E, E, Term], E]
    over_positions: Callable[[E, Term], E]
    cut: Callable[[E], E]


# ------------------------------------------------------------------ formulas
# Formulas needing a logarithm or a power are plain functions: the engines that
# render them hand in ops with ``log2`` and ``pow`` (the core Ops have neither).


def discount(ops: Any, pos: E) -> E:
    """1 / log2(pos + 1): the DCG weight of a 1-based position."""
    return 1 / ops.log2(pos + 1)


def graded_gain(ops: Any, relevance: E) -> E:
    """2^relevance - 1: the DCG gain of a relevance grade (Hivemall, Järvelin-Kekäläinen)."""
    return ops.pow(2.0, relevance) - 1


@formula
def precision_at_k(ops: Any, hits: E, n_ranked: E, n_true: E) -> E:
    """hits / n; an empty ranked list scores 1 when nothing is true, else 0 (Hivemall)."""
    return ops.when(n_ranked == 0, ops.when(n_true == 0, 1.0, 0.0), hits / n_ranked)


@formula
def recall_at_k(ops: Any, hits: E, n_ranked: E, n_true: E) -> E:
    """hits / |T|; an empty true set scores 1 when nothing is ranked, else 0 (Hivemall)."""
    return ops.when(n_true == 0, ops.when(n_ranked == 0, 1.0, 0.0), hits / n_true)


@formula
def hit(ops: Any, hits: E) -> E:
    """1 when a true item is in the top n, else 0."""
    return ops.when(hits > 0, 1.0, 0.0)


@formula
def reciprocal_rank(ops: Any, first_hit: E) -> E:
    """1 / position of the first hit in the top n; 0 without one."""
    return ops.when(first_hit > 0, 1.0 / first_hit, 0.0)


@formula
def precision_at_hit(ops: Any, pos: E, nth: E) -> E:
    """Precision of the top ``pos`` items when the item at ``pos`` is the ``nth`` hit."""
    return nth / pos


@formula
def average_precision_at_k(ops: Any, precision_sum: E, hits: E, n_ranked: E, n_true: E) -> E:
    """Mean precision at the hits of the top n (Hivemall since 2017); 0 without hits.

    An empty true set scores 1 when nothing is ranked, else 0.
    """
    return ops.when(
        n_true == 0,
        ops.when(n_ranked == 0, 1.0, 0.0),
        ops.when(hits == 0, 0.0, precision_sum / hits),
    )


@formula
def precision_over_all_true(ops: Any, precision_sum: E, n_true: E) -> E:
    """Sum of the precisions at the hits / |T| (ranx, trec_eval); 0 when nothing is true."""
    return ops.when(n_true == 0, 0.0, precision_sum / n_true)


@formula
def r_precision_of_row(ops: Any, hits_in_first_true: E, n_true: E) -> E:
    """Hits among the first |T| items / |T|; 0 when nothing is true (ranx)."""
    return ops.when(n_true == 0, 0.0, hits_in_first_true / n_true)


@formula
def f1_at_k(ops: Any, hits: E, n_ranked: E, n_true: E) -> E:
    """2 hits / (n + |T|), the harmonic mean of hits / n and hits / |T|; 0 without a hit."""
    return ops.when(hits == 0, 0.0, 2.0 * hits / (n_ranked + n_true))


@formula
def hit_count(ops: Any, hits: E) -> E:
    """The number of true items in the top n."""
    return hits * 1.0


def persistence_weight(ops: Any, pos: E, p: E) -> E:
    """p^(pos - 1): the chance that a user with persistence p reaches position ``pos``."""
    return ops.pow(p, pos - 1)


@formula
def rank_biased(ops: Any, weight_sum: E, p: E) -> E:
    """(1 - p) · the sum of p^(pos - 1) over the hits (Moffat and Zobel's RBP)."""
    return (1 - p) * weight_sum


@formula
def preference_of_hit(ops: Any, pos: E, nth: E, n_true: E, n_false: E) -> E:
    """bpref's term of a hit with n = pos - nth judged misses above: 1 - min(n, R) / min(R, N).

    1 where ``n`` is 0 (trec_eval's rule, which also holds where ``N`` is 0, where ranx
    divides 0 by 0).
    """
    above = pos - nth
    return ops.when(
        above == 0, 1.0, 1.0 - smaller(ops, above, n_true) / smaller(ops, n_true, n_false)
    )


@formula
def bpref_of_row(ops: Any, preference_sum: E, n_true: E) -> E:
    """The preferences of the relevant items ranked, summed, / R; 0 when nothing is relevant."""
    return ops.when(n_true == 0, 0.0, preference_sum / n_true)


@formula
def misses_above_hit(ops: Any, pos: E, nth: E) -> E:
    """Misses ranked above the ``nth`` hit at ``pos``: its wrongly ordered (hit, miss) pairs."""
    return pos - nth


@formula
def ranking_auc_at_k(ops: Any, wrong_pairs: E, hits: E, n_ranked: E) -> E:
    """Share of (hit, miss) pairs of the top n in the right order; 0.5 without such pairs."""
    pairs = hits * (n_ranked - hits)
    return ops.when(pairs == 0, 0.5, (pairs - wrong_pairs) / pairs)


@formula
def normalized_dcg(ops: Any, dcg: E, ideal_dcg: E) -> E:
    """DCG / ideal DCG; 0 where the ideal DCG is 0 (nothing relevant)."""
    return ops.when(ideal_dcg == 0, 0.0, dcg / ideal_dcg)


@formula
def coverage(ops: Any, n_true: E, worst_rank: E) -> E:
    """How far down the ranking to go to cover every true label; 0 without true labels."""
    return ops.when(n_true == 0, 0, worst_rank)


@formula
def false_at_or_above(ops: Any, at_or_above: E, true_at_or_above: E) -> E:
    """False labels scored at least as high as a true label: its wrongly ordered pairs."""
    return at_or_above - true_at_or_above


@formula
def ranking_loss_of_row(ops: Any, wrong_pairs: E, n_true: E, n_labels: E) -> E:
    """Wrongly ordered (true, false) pairs / all such pairs; 0 where there are none."""
    pairs = n_true * (n_labels - n_true)
    return ops.when(pairs == 0, 0.0, wrong_pairs / pairs)


@formula
def precision_at_label(ops: Any, true_at_or_above: E, at_or_above: E) -> E:
    """Share of true labels among the labels scored at least as high as a true label."""
    return true_at_or_above / at_or_above


@formula
def label_ranking_precision_of_row(ops: Any, precision_sum: E, n_true: E, n_labels: E) -> E:
    """Mean precision at the true labels; 1 where none or all labels are true."""
    return ops.when((n_true == 0) | (n_true == n_labels), 1.0, precision_sum / n_true)


@formula
def one_error_of_row(ops: Any, n_top: E, n_top_true: E) -> E:
    """Share of top-scored labels that are not true; 1 when no label is scored."""
    return ops.when(n_top == 0, 1.0, (n_top - n_top_true) / n_top)


@formula
def tie_averaged_gain(ops: Any, discount_sum: E, at_or_above: E, above: E) -> E:
    """A relevant label's DCG share: the discounts of its tie group's places / the group size."""
    return discount_sum / (at_or_above - above)


def smaller(ops: Any, a: E, b: E) -> E:
    """The smaller of two numbers."""
    return ops.when(a < b, a, b)


# ------------------------------------------------------------------ per-row values
def _precision_at(ops: Any, s: RankedStats) -> E:
    return precision_at_k(ops, s.hits, s.n_ranked, s.n_true)


def _recall_at(ops: Any, s: RankedStats) -> E:
    return recall_at_k(ops, s.hits, s.n_ranked, s.n_true)


def _hitrate(ops: Any, s: RankedStats) -> E:
    return hit(ops, s.hits)


def _mrr(ops: Any, s: RankedStats) -> E:
    return reciprocal_rank(ops, s.first_hit)


def _average_precision(ops: Any, s: RankedStats) -> E:
    precision_sum = s.over_hits(lambda position, nth: precision_at_hit(ops, position, nth))
    return average_precision_at_k(ops, precision_sum, s.hits, s.n_ranked, s.n_true)


def _ndcg(ops: Any, s: RankedStats) -> E:
    dcg = s.over_hits(lambda position, nth: discount(ops, position))
    ideal = s.over_positions(smaller(ops, s.n_true, s.n_ranked), lambda p: discount(ops, p))
    return normalized_dcg(ops, dcg, ideal)


def _hits(ops: Any, s: RankedStats) -> E:
    return hit_count(ops, s.hits)


def _map_score(ops: Any, s: RankedStats) -> E:
    precision_sum = s.over_hits(lambda position, nth: precision_at_hit(ops, position, nth))
    return precision_over_all_true(ops, precision_sum, s.n_true)


def _r_precision(ops: Any, s: RankedStats) -> E:
    return r_precision_of_row(ops, s.hits_within(s.n_true), s.n_true)


def _f1_at(ops: Any, s: RankedStats) -> E:
    return f1_at_k(ops, s.hits, s.n_ranked, s.n_true)


def _dcg(ops: Any, s: RankedStats) -> E:
    return s.over_hits(lambda position, nth: discount(ops, position))


def _rbp(ops: Any, s: RankedStats, p: E) -> E:
    weights = s.over_hits(lambda position, nth: persistence_weight(ops, position, p))
    return rank_biased(ops, weights, p)


def _bpref(ops: Any, s: JudgedStats) -> E:
    total = s.over_hits(
        lambda pos, nth, n_true, n_false: preference_of_hit(ops, pos, nth, n_true, n_false)
    )
    return bpref_of_row(ops, total, s.n_true)


def _ranking_auc(ops: Any, s: RankedStats) -> E:
    wrong = s.over_hits(lambda position, nth: misses_above_hit(ops, position, nth))
    return ranking_auc_at_k(ops, wrong, s.hits, s.n_ranked)


def _graded_ndcg(ops: Any, s: GradedStats) -> E:
    def term(relevance: E, position: E) -> E:
        return graded_gain(ops, relevance) * discount(ops, position)

    return normalized_dcg(ops, s.over_ranked(term), s.over_ideal(term))


def _coverage_error(ops: Any, s: ScoreStats) -> E:
    return coverage(ops, s.n_true, s.max_over_true(lambda r: r.at_or_above))


def _label_ranking_loss(ops: Any, s: ScoreStats) -> E:
    wrong = s.over_true(lambda r: false_at_or_above(ops, r.at_or_above, r.true_at_or_above))
    return ranking_loss_of_row(ops, wrong, s.n_true, s.n_labels)


def _label_ranking_average_precision(ops: Any, s: ScoreStats) -> E:
    total = s.over_true(lambda r: precision_at_label(ops, r.true_at_or_above, r.at_or_above))
    return label_ranking_precision_of_row(ops, total, s.n_true, s.n_labels)


def _one_error(ops: Any, s: ScoreStats) -> E:
    return one_error_of_row(ops, s.n_top, s.n_top_true)


def _ndcg_score(ops: Any, s: ScoreStats) -> E:
    def gain(r: LabelRank) -> E:
        places = s.over_places(r.above, s.cut(r.at_or_above), lambda p: discount(ops, p))
        return tie_averaged_gain(ops, places, r.at_or_above, r.above)

    ideal = s.over_positions(s.cut(s.n_true), lambda p: discount(ops, p))
    return normalized_dcg(ops, s.over_true(gain), ideal)


#: every ranking aggregate's per-row value, by public name (the aggregate is its mean)
PER_ROW: dict[str, Callable[..., E]] = {}


def row_value(ops: Any, name: str, s: Any, **params: Any) -> E:
    """The per-row value of measure ``name``: NULL where the row is unknown.

    ``params`` are the measure's parameters other than ``k`` (which is part of the
    statistics), each an engine value (a SQL parameter, a literal).
    """
    return ops.when(s.unknown, None, PER_ROW[name](ops, s, **params))


@dataclass(frozen=True)
class RowPlans:
    """An engine's per-row statistics of each input shape. Each plan computes a row's
    statistics once and returns ``body(stats)`` per row.

    ``ranked(rank_items, correct_items, k, body)`` (:class:`RankedStats`),
    ``judged(correct_items, rank_items, nonrelevant_items, body)`` (:class:`JudgedStats`),
    ``scored(func, actual, scores, k, body)`` (:class:`ScoreStats`; ``func`` names the
    measure in messages) and ``graded(ranked_relevance, ideal_relevance, k, body)``
    (:class:`GradedStats`); ``k`` is None where the measure takes none.
    """

    ranked: Callable[..., E]
    judged: Callable[..., E]
    scored: Callable[..., E]
    graded: Callable[..., E]


def row_of(
    name: str, inputs: tuple[str, ...], rows: RowPlans, ops: Any, *args: E, **params: E
) -> E:
    """The per-row value of ranking aggregate ``name``, whose inputs are named ``inputs``,
    over ``args`` (one engine expression per input) with ``rows``' statistics.

    ``params`` are the measure's parameters as the engine holds them (``k`` goes to the
    statistics, the others to the formula). The measures that take the truth first
    (:data:`RETRIEVED`, :data:`JUDGED`, :data:`SCORED`) are handed to their plan as it
    takes them.
    """
    k = params.get("k")
    given = {n: v for n, v in params.items() if n != "k"}

    def body(s: Any) -> E:
        return row_value(ops, name, s, **given)

    if inputs == RETRIEVED:
        correct_items, rank_items = args
        return rows.ranked(rank_items, correct_items, k, body)
    if inputs == RANKED:
        return rows.ranked(*args, k, body)
    if inputs == JUDGED:
        return rows.judged(*args, body)
    if inputs == SCORED:
        return rows.scored(name, *args, k, body)
    return rows.graded(*args, k, body)


def mean_over_rows(ops: Any, value: E, weight: E | None = None) -> E:
    """A ranking aggregate from its per-row ``value``: the mean over the known rows, each
    weighted by ``weight`` where one is given (:func:`mlsql._weights.weighted`)."""
    if weight is None:
        return ops.mean(value)
    return weighted(lambda o, v: o.mean(v), weight, ops, value)


def _aggregate(name: str, row: Callable[..., E]) -> Callable[..., E]:
    PER_ROW[name] = row

    def build(ops: Any, s: Any, **params: Any) -> E:
        """Mean over rows of the per-row value (``k`` is part of the statistics)."""
        given = {n: v for n, v in params.items() if n != "k"}
        return ops.mean(row_value(ops, name, s, **given))

    return build


# ------------------------------------------------------------------ documentation
#: what each input holds, for the engines' docstrings
INPUT_DOCS = {
    "rank_items": "The recommended items of each row, best first (NULL items and repeats dropped).",
    "correct_items": "The true items of each row (a set; a NULL list skips the row).",
    "ranked_relevance": "The relevance grade of each recommended item, in ranked order.",
    "ideal_relevance": "The relevance grades of the ideal ranking (sorted descending first).",
    "scores": (
        "Each row's label scores: a map label -> score, or a list of {label, score} "
        "structs (a label's first entry counts); a NULL score is no score."
    ),
    "actual": "The true labels of each row (a set; a NULL list skips the row).",
    "nonrelevant_items": (
        "The items of each row judged not relevant (a set; a NULL list skips the row)."
    ),
}
AT_K_NOTE = (
    "k: look at the first k items, a whole number > 0 (default: the whole list; a k "
    "beyond the list looks at the whole list). A row with a NULL list is skipped; over "
    "no rows the result is NULL."
)
SCORED_NOTE = (
    "A row's labels are its scored labels and its true labels; a true label without a "
    "score ranks below every scored label. A row with a NULL input is skipped."
)
#: per measure: the tie rule and what an empty true set gives
NOTES = {
    "precision_at": "An empty ranked list scores 1 if nothing is true, else 0.",
    "recall_at": "An empty true set scores 1 if nothing is ranked, else 0.",
    "average_precision": (
        "Divides by the hits in the top k (Hivemall since 2017). An empty true set "
        "scores 1 if nothing is ranked, else 0; no hit scores 0."
    ),
    "hitrate": "1 if a true item is in the top k, else 0.",
    "mrr": "1 / position of the first true item in the top k; 0 without one.",
    "ndcg": "Binary relevance; the ideal DCG has min(|true|, k) hits; 0 when nothing is true.",
    "ranking_auc": (
        "Hivemall's ranking auc. Pairs are counted within the top k; 0.5 when the top k "
        "holds no hit or no miss."
    ),
    "graded_ndcg": (
        "Gain 2^grade - 1, discount 1 / log2(position + 1). A NULL grade adds nothing; "
        "0 when the ideal DCG is 0 (Hivemall divides by it)."
    ),
    "hits": (
        "A count, not a share (ranx's hits; hitrate is the share of rows with one). A k "
        "beyond the list looks at the whole list; no true item: 0."
    ),
    "map_score": (
        "Divides by all true items, as ranx and trec_eval (average_precision divides by "
        "the hits in the top k, as Hivemall). No true item: 0 (ranx; trec_eval leaves such "
        "a query out)."
    ),
    "r_precision": ("Divides by |true| even where the list is shorter (as ranx). No true item: 0."),
    "f1_at": (
        "n = min(k, list length), as precision_at: where k goes beyond the list ranx "
        "divides precision by k and scores lower. No hit (and so no true item): 0, as ranx "
        "(precision_at and recall_at score 1 when both lists are empty)."
    ),
    "dcg": (
        "Gain 1 per true item (ranx's jarvelin and burges DCG agree on binary relevance); "
        "no true item: 0. ndcg divides it by the ideal DCG."
    ),
    "rbp": (
        "Over the whole list (ranx's rbp takes no k), binary relevance (ranx weighs a hit "
        "by its relevance grade). No true item: 0."
    ),
    "bpref": (
        "ranx's formula: 1/R times the sum over the relevant items ranked of "
        "1 - min(n, R) / min(R, N), n the judged non-relevant items above it, R the "
        "relevant items, N the judged non-relevant ones (an item in both lists is "
        "relevant); unjudged items are left out. No judged non-relevant item: each "
        "relevant item ranked scores 1 (trec_eval; ranx gives NaN, 0 / 0). No relevant "
        "item: 0. No k (ranx's bpref ignores its k)."
    ),
    "coverage_error": "Ties count against: every label scored >= the lowest true one. No true label: 0.",
    "label_ranking_loss": "A false label tied with a true one is a wrong pair. No true or no false label: 0.",
    "label_ranking_average_precision": (
        "Tied labels rank at the lowest of their places. No true label, or all true: 1."
    ),
    "one_error": (
        "Ties: the share of top-scored labels that are not true. No true label, or no "
        "scored label: 1."
    ),
    "ndcg_score": (
        "k: count the first k places (whole number > 0; default all). Tied labels share "
        "their gain (scikit-learn's ignore_ties=False). No true label: 0."
    ),
}


# ------------------------------------------------------------------ declarations
#: Hivemall's order (its own measures keep it): the ranking first, then the truth
RANKED = ("rank_items", "correct_items")
#: the truth first, as scikit-learn's ``(y_true, y_score)``
SCORED = ("actual", "scores")

#: the messages of the inputs' types that are not labels (those are in :mod:`mlsql._label_types`)
#: the same in every engine; ``{type}`` is the input's type as its engine names it
SCORES_MESSAGE = (
    "{func} takes scores as a map or a list of (label, score) structs per row, the score "
    "a number. Got {name} {type}."
)


def score_fields(names: Sequence[str]) -> tuple[int, int]:
    """The positions of the label and the score in a scores struct whose fields are
    ``names``: the fields named label and score where it has both, in any order (the case
    aside, as DuckDB reads a struct by name), else its first two fields.

    Examples
    --------
    >>> score_fields(["score", "label"]), score_fields(["Label", "SCORE"]), score_fields(["name", "p"])
    ((1, 0), (0, 1), (0, 1))
    """
    lower = [n.lower() for n in names]
    if "label" in lower and "score" in lower:
        return lower.index("label"), lower.index("score")
    return 0, 1


GRADES_MESSAGE = (
    "{func} takes a list of numeric relevance grades per row for {name}. Got {name} {type}."
)

_AT_K = {
    "precision_at": (
        "Hivemall's Precision@k: hits in the top k / k, averaged over rows.",
        _precision_at,
    ),
    "recall_at": (
        "Hivemall's Recall@k: hits in the top k / |true|, averaged over rows.",
        _recall_at,
    ),
    "average_precision": (
        "Hivemall's MAP@k: mean precision at the hits of the top k, averaged over rows.",
        _average_precision,
    ),
    "hitrate": ("Hivemall's HitRate@k: share of rows with a true item in the top k.", _hitrate),
    "mrr": ("Hivemall's MRR@k: mean of 1 / position of the first true item in the top k.", _mrr),
    "ndcg": ("Hivemall's binary nDCG@k, averaged over rows.", _ndcg),
    "ranking_auc": (
        "Hivemall's ranking AUC@k (its auc over arrays): share of correctly ordered "
        "(hit, miss) pairs in the top k, averaged over rows.",
        _ranking_auc,
    ),
}
for _name, (_summary, _row) in _AT_K.items():
    measure(_name, "aggregate", FAMILY, _summary, inputs=RANKED, params=(K,))(
        _aggregate(_name, _row)
    )

measure(
    "graded_ndcg",
    "aggregate",
    FAMILY,
    "Hivemall's graded nDCG@k: relevance grades in ranked order against the ideal grades, "
    "gain 2^rel - 1, averaged over rows.",
    inputs=("ranked_relevance", "ideal_relevance"),
    params=(K,),
)(_aggregate("graded_ndcg", _graded_ndcg))

#: ranx's and trec_eval's order: the truth (qrels) first, then the ranking (run)
RETRIEVED = ("correct_items", "rank_items")
RETRIEVAL_NOTE = (
    "The truth comes first, as ranx's (qrels, run); Hivemall's measures (precision_at ...) "
    "take the ranking first. Binary relevance: an item of correct_items is relevant. The "
    "list's order is the ranking, so there are no ties: ranx orders a run by score with an "
    "unstable sort (tied documents in no set order) and trec_eval breaks ties by document "
    "id, so break ties before building the list (top_k breaks them by label). A row with a "
    "NULL list is skipped; over no rows the result is NULL."
)
_RETRIEVAL: dict[str, tuple[str, Callable[..., E], tuple[Any, ...]]] = {
    "hits": (
        "ranx's hits@k: the number of true items in the top k, averaged over rows.",
        _hits,
        (K,),
    ),
    "map_score": (
        "ranx's and trec_eval's MAP@k: the precisions at the hits of the top k summed and "
        "divided by all true items, averaged over rows.",
        _map_score,
        (K,),
    ),
    "r_precision": (
        "ranx's R-precision: the hits among the first |true| items / |true|, averaged over rows.",
        _r_precision,
        (),
    ),
    "f1_at": (
        "F1@k: the harmonic mean of precision@k and recall@k, 2 hits / (n + |true|), "
        "averaged over rows.",
        _f1_at,
        (K,),
    ),
    "dcg": (
        "ranx's DCG@k with binary relevance (raw, not normalized): the sum of "
        "1 / log2(position + 1) over the hits of the top k, averaged over rows.",
        _dcg,
        (K,),
    ),
    "rbp": (
        "ranx's rank-biased precision (Moffat and Zobel): (1 - p) times the sum of "
        "p^(position - 1) over the hits, averaged over rows.",
        _rbp,
        (P.PERSISTENCE,),
    ),
}
for _name, (_summary, _retrieval_row, _params) in _RETRIEVAL.items():
    measure(_name, "aggregate", FAMILY, _summary, inputs=RETRIEVED, params=_params)(
        _aggregate(_name, _retrieval_row)
    )

#: bpref's: the truth, the ranking, then the items judged not relevant (ranx's qrels at grade 0)
JUDGED = ("correct_items", "rank_items", "nonrelevant_items")
measure(
    "bpref",
    "aggregate",
    FAMILY,
    "ranx's and trec_eval's bpref (binary preference): per relevant item ranked, the share "
    "of judged non-relevant items not ranked above it, summed over the relevant items / R, "
    "averaged over rows.",
    inputs=JUDGED,
)(_aggregate("bpref", _bpref))

_SCORED = {
    "coverage_error": (
        "scikit-learn's coverage_error: how far down the scores to go to cover every true "
        "label (1-based), averaged over rows.",
        _coverage_error,
        (),
        (),
    ),
    "label_ranking_loss": (
        "scikit-learn's label_ranking_loss: share of (true, false) label pairs ordered wrongly "
        "by score, averaged over rows.",
        _label_ranking_loss,
        (),
        (),
    ),
    "label_ranking_average_precision": (
        "scikit-learn's label_ranking_average_precision_score: mean precision at each true "
        "label's rank, averaged over rows.",
        _label_ranking_average_precision,
        (),
        ("label_ranking_average_precision_score",),
    ),
    "one_error": (
        "One-error: share of rows whose top-scored label is not true (ties count fractionally).",
        _one_error,
        (),
        (),
    ),
    "ndcg_score": (
        "scikit-learn's ndcg_score over label scores (true labels relevant, ties averaged), "
        "averaged over rows.",
        _ndcg_score,
        (K,),
        (),
    ),
}
for _name, (_summary, _score_row, _params, _aliases) in _SCORED.items():
    measure(
        _name,
        "aggregate",
        FAMILY,
        _summary,
        inputs=SCORED,
        params=_params,
        aliases=_aliases,
    )(_aggregate(_name, _score_row))


# ------------------------------------------------------------------ scores to label lists
@dataclass(frozen=True)
class ScoredLabels:
    """A row's scored labels, as an engine holds them: each label once (its first entry), no
    NULL score. The statistics of ``top_k``, ``above_threshold`` and ``top_k_above``."""

    entries: E


class ScoreListOps(Protocol):
    """The two list primitives an engine adds to its ops for the functions from scores to
    label lists."""

    def ranked_labels(self, entries: E, threshold: E | None) -> E:
        """The labels of ``entries`` best score first, ties by label; only those scored >=
        ``threshold`` unless it is None."""
        ...

    def head(self, labels: E, k: E | None) -> E:
        """The first ``k`` of ``labels``; all of them where ``k`` is None (or NULL)."""
        ...


@measure(
    "top_k",
    "set",
    FAMILY,
    "The k best-scored labels, best first (ties by label); all scored labels without k.",
    inputs=("scores",),
    params=(P.TOP_K,),
)
def _top_k(ops: ScoreListOps, s: ScoredLabels, k: E) -> E:
    return ops.head(ops.ranked_labels(s.entries, None), k)


@measure(
    "above_threshold",
    "set",
    FAMILY,
    "Labels scored >= threshold, best first (ties by label).",
    inputs=("scores",),
    params=(P.THRESHOLD,),
)
def _above_threshold(ops: ScoreListOps, s: ScoredLabels, threshold: E) -> E:
    return ops.ranked_labels(s.entries, threshold)


@measure(
    "top_k_above",
    "set",
    FAMILY,
    "At most k labels, each scored >= threshold, best first (ties by label).",
    inputs=("scores",),
    params=(P.TOP_K, P.THRESHOLD),
)
def _top_k_above(ops: ScoreListOps, s: ScoredLabels, k: E, threshold: E) -> E:
    return ops.head(ops.ranked_labels(s.entries, threshold), k)
