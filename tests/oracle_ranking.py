"""A plain-Python reference for the ranking measures, written from their definitions.

Independent of mlsql's code: loops over positions and label pairs, exact
fractions where the measure is rational (logarithms make nDCG a float).

- Ranked lists follow Hivemall's ``BinaryResponsesMeasures`` after dropping
  NULL items and repeats (first occurrence kept); ``k`` None means the whole
  list; a row with a NULL list is skipped; no rows gives None.
- Score maps follow scikit-learn's definitions over the row's labels: the
  scored ones (NULL scores dropped) and the true ones (unscored: -infinity).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pyarrow as pa

NEG_INF = float("-inf")


def clean(items: list[Any]) -> list[Any]:
    """Items without None and repeats, first occurrence kept."""
    out: list[Any] = []
    for x in items:
        if x is not None and x not in out:
            out.append(x)
    return out


def _top(rank: list[Any], truth: list[Any], k: int | None) -> tuple[list[Any], set[Any], int]:
    r = clean(rank)
    t = {x for x in truth if x is not None}
    n = len(r) if k is None else min(len(r), k)
    return r[:n], t, len(r)


def precision_at(rank: list[Any], truth: list[Any], k: int | None) -> Any:
    top, t, size = _top(rank, truth, k)
    if size == 0:
        return Fraction(1 if not t else 0)
    return Fraction(sum(x in t for x in top), len(top))


def recall_at(rank: list[Any], truth: list[Any], k: int | None) -> Any:
    top, t, size = _top(rank, truth, k)
    if not t:
        return Fraction(1 if size == 0 else 0)
    return Fraction(sum(x in t for x in top), len(t))


def hitrate(rank: list[Any], truth: list[Any], k: int | None) -> Any:
    top, t, _ = _top(rank, truth, k)
    return Fraction(int(any(x in t for x in top)))


def mrr(rank: list[Any], truth: list[Any], k: int | None) -> Any:
    top, t, _ = _top(rank, truth, k)
    for i, x in enumerate(top, start=1):
        if x in t:
            return Fraction(1, i)
    return Fraction(0)


def average_precision(rank: list[Any], truth: list[Any], k: int | None) -> Any:
    top, t, size = _top(rank, truth, k)
    if not t:
        return Fraction(1 if size == 0 else 0)
    hits, total = 0, Fraction(0)
    for i, x in enumerate(top, start=1):
        if x in t:
            hits += 1
            total += Fraction(hits, i)
    return total / hits if hits else Fraction(0)


def ranking_auc(rank: list[Any], truth: list[Any], k: int | None) -> Any:
    top, t, _ = _top(rank, truth, k)
    flags = [x in t for x in top]
    pairs = [(i, j) for i in range(len(flags)) for j in range(len(flags)) if flags[i] != flags[j]]
    hit_miss = [(i, j) for i, j in pairs if flags[i]]  # (hit, miss) pairs
    if not hit_miss:
        return Fraction(1, 2)
    return Fraction(sum(i < j for i, j in hit_miss), len(hit_miss))


def _dcg_weight(position: int) -> float:
    return 1 / math.log2(position + 1)


def ndcg(rank: list[Any], truth: list[Any], k: int | None) -> Any:
    top, t, _ = _top(rank, truth, k)
    dcg = sum(_dcg_weight(i) for i, x in enumerate(top, start=1) if x in t)
    ideal = sum(_dcg_weight(i) for i in range(1, min(len(t), len(top)) + 1))
    return 0.0 if ideal == 0 else dcg / ideal


def graded_ndcg(ranked: list[Any], ideal: list[Any], k: int | None) -> float:
    n = len(ranked) if k is None else k

    def dcg(grades: list[Any]) -> float:
        return sum(
            (2.0**g - 1) * _dcg_weight(i)
            for i, g in enumerate(grades[:n], start=1)
            if g is not None
        )

    best = dcg(sorted((g for g in ideal if g is not None), reverse=True))
    return 0.0 if best == 0 else dcg(ranked) / best


AT_K: dict[str, Callable[..., Any]] = {
    "precision_at": precision_at,
    "recall_at": recall_at,
    "hitrate": hitrate,
    "mrr": mrr,
    "average_precision": average_precision,
    "ranking_auc": ranking_auc,
    "ndcg": ndcg,
}


# ------------------------------------------------------------------ ranx's retrieval measures
# Written from ranx 0.3's metrics (ranx/metrics/*.py) over one query: ``truth`` the relevant
# documents (qrels), ``rank`` the run in ranked order, binary relevance. The run is cleaned
# as above (ranx's runs are dicts: no repeats); ``k`` None is ranx's k=0 (the whole run).


def _ranx_top(truth: list[Any], rank: list[Any], k: int | None) -> tuple[list[Any], set[Any]]:
    r = clean(rank)
    return r[: len(r) if k is None else k], {x for x in truth if x is not None}


def hits(truth: list[Any], rank: list[Any], k: int | None) -> Any:
    top, t = _ranx_top(truth, rank, k)
    return Fraction(sum(x in t for x in top))


def map_score(truth: list[Any], rank: list[Any], k: int | None) -> Any:
    top, t = _ranx_top(truth, rank, k)
    if not t:
        return Fraction(0)
    found, total = 0, Fraction(0)
    for i, x in enumerate(top, start=1):
        if x in t:
            found += 1
            total += Fraction(found, i)
    return total / len(t)  # ranx: np.sum(precision_scores) / qrels.shape[0]


def r_precision(truth: list[Any], rank: list[Any]) -> Any:
    top, t = _ranx_top(truth, rank, None)
    if not t:
        return Fraction(0)
    return Fraction(sum(x in t for x in top[: len(t)]), len(t))  # ranx: _precision(k=R)


def f1_at(truth: list[Any], rank: list[Any], k: int | None) -> Any:
    """ranx's f1 with precision over min(k, |run|) (ranx: over k; the same while k <= |run|)."""
    top, t = _ranx_top(truth, rank, k)
    if not t or not top:
        return Fraction(0)
    precision = Fraction(sum(x in t for x in top), len(top))
    recall = Fraction(sum(x in t for x in top), len(t))
    if precision + recall == 0:
        return Fraction(0)
    return 2 * precision * recall / (precision + recall)


def dcg(truth: list[Any], rank: list[Any], k: int | None) -> float:
    top, t = _ranx_top(truth, rank, k)
    return sum(1 / math.log2(i + 1) for i, x in enumerate(top, start=1) if x in t)


def rbp(truth: list[Any], rank: list[Any], p: float = 0.8) -> float:
    top, t = _ranx_top(truth, rank, None)
    return (1 - p) * sum(p ** (i - 1) for i, x in enumerate(top, start=1) if x in t)


def bpref(truth: list[Any], rank: list[Any], nonrelevant: list[Any]) -> Any:
    """ranx's bpref (ranx/metrics/bpref.py) as a loop, as trec_eval's m_bpref.c writes it.

    An item in both judged sets is relevant (a qrels dict holds one grade a document);
    unjudged items are skipped; where no judged non-relevant item is ranked above a
    relevant one it adds 1 (trec_eval's ``nonrel_so_far > 0`` test; ranx's 0 / 0 where
    there is no judged non-relevant item at all).
    """
    t = {x for x in truth if x is not None}
    n = {x for x in nonrelevant if x is not None} - t
    if not t:
        return Fraction(0)
    total, above = Fraction(0), 0
    for x in clean(rank):
        if x in t:
            total += 1 if above == 0 else 1 - Fraction(min(above, len(t)), min(len(t), len(n)))
        elif x in n:
            above += 1
    return total / len(t)


#: measures with ``k`` (truth first, as ranx's (qrels, run))
RETRIEVAL_AT_K: dict[str, Callable[..., Any]] = {
    "hits": hits,
    "map_score": map_score,
    "f1_at": f1_at,
    "dcg": dcg,
}


def mean_over_rows(fn: Callable[..., Any], rows: list[tuple[Any, ...]], *args: Any) -> Any:
    """Mean of ``fn`` over rows where no list is None; None without such rows."""
    values = [fn(*row, *args) for row in rows if all(x is not None for x in row)]
    if not values:
        return None
    return sum(values) / len(values)


# ------------------------------------------------------------------ label scores
def universe(scores: dict[Any, Any], actual: list[Any]) -> tuple[dict[Any, float], set[Any]]:
    """Every label of the row with its score (unscored true labels at -inf), and the true set."""
    truth = {x for x in actual if x is not None}
    scored = {label: float(s) for label, s in scores.items() if s is not None}
    return {**{t: NEG_INF for t in truth}, **scored}, truth


def coverage_error(scores: dict[Any, Any], actual: list[Any]) -> Any:
    s, truth = universe(scores, actual)
    if not truth:
        return Fraction(0)
    return Fraction(max(sum(v >= s[t] for v in s.values()) for t in truth))


def label_ranking_loss(scores: dict[Any, Any], actual: list[Any]) -> Any:
    s, truth = universe(scores, actual)
    false = [f for f in s if f not in truth]
    if not truth or not false:
        return Fraction(0)
    wrong = sum(s[f] >= s[t] for t in truth for f in false)
    return Fraction(wrong, len(truth) * len(false))


def label_ranking_average_precision(scores: dict[Any, Any], actual: list[Any]) -> Any:
    s, truth = universe(scores, actual)
    if not truth or len(truth) == len(s):
        return Fraction(1)
    total = Fraction(0)
    for t in truth:
        at_or_above = [u for u in s if s[u] >= s[t]]
        total += Fraction(sum(u in truth for u in at_or_above), len(at_or_above))
    return total / len(truth)


def one_error(scores: dict[Any, Any], actual: list[Any]) -> Any:
    truth = {x for x in actual if x is not None}
    scored = {label: s for label, s in scores.items() if s is not None}
    if not scored:
        return Fraction(1)
    best = max(scored.values())
    top = [label for label, v in scored.items() if v == best]
    return Fraction(sum(label not in truth for label in top), len(top))


def ndcg_score(scores: dict[Any, Any], actual: list[Any], k: int | None = None) -> float:
    """scikit-learn's tie-averaged nDCG with binary relevance: the expected DCG over tie orders."""
    s, truth = universe(scores, actual)
    n = len(s) if k is None else k
    dcg = 0.0
    for t in truth:
        above = sum(v > s[t] for v in s.values())
        tied = sum(v == s[t] for v in s.values())
        places = [p for p in range(above + 1, above + tied + 1) if p <= n]
        dcg += sum(_dcg_weight(p) for p in places) / tied
    ideal = sum(_dcg_weight(p) for p in range(1, min(len(truth), n) + 1))
    return 0.0 if ideal == 0 else dcg / ideal


SCORED: dict[str, Callable[..., Any]] = {
    "coverage_error": coverage_error,
    "label_ranking_loss": label_ranking_loss,
    "label_ranking_average_precision": label_ranking_average_precision,
    "one_error": one_error,
    "ndcg_score": ndcg_score,
}


def ranked_labels(scores: dict[Any, Any] | None) -> list[Any] | None:
    """Scored labels, best first, ties by label."""
    if scores is None:
        return None
    kept = [(label, s) for label, s in scores.items() if s is not None]
    return [label for label, _ in sorted(kept, key=lambda e: (-e[1], e[0]))]


def top_k(scores: dict[Any, Any] | None, k: int | None = None) -> list[Any] | None:
    labels = ranked_labels(scores)
    return labels if labels is None or k is None else labels[:k]


def above_threshold(scores: dict[Any, Any] | None, threshold: float) -> list[Any] | None:
    if scores is None:
        return None
    return ranked_labels({x: s for x, s in scores.items() if s is not None and s >= threshold})


def top_k_above(scores: dict[Any, Any] | None, k: int | None, threshold: float) -> Any:
    labels = above_threshold(scores, threshold)
    return labels if labels is None or k is None else labels[:k]


# ------------------------------------------------------------------ test support
#: the two ways to give scores: a map, or a list of {label, score} structs
FORMS = ("map", "list")


def score_column(maps: list[Any], form: str = "map", key: pa.DataType | None = None) -> pa.Array:
    """Score maps (dicts, or lists of (label, score) pairs) as a map or struct-list column."""
    key = pa.string() if key is None else key
    pairs = [None if m is None else list(m.items() if isinstance(m, dict) else m) for m in maps]
    if form == "map":
        return pa.array(pairs, pa.map_(key, pa.float64()))
    entry = pa.struct([("label", key), ("score", pa.float64())])
    entries = [None if p is None else [{"label": x, "score": v} for x, v in p] for p in pairs]
    return pa.array(entries, pa.list_(entry))


def scored(rows: list[tuple[Any, Any]], form: str = "map") -> pa.Table:
    return pa.table(
        {
            "scores": score_column([s for s, _ in rows], form),
            "actual": pa.array([a for _, a in rows], pa.list_(pa.string())),
        }
    )


class Available:
    """An engine adapter that skips a measure the registry says the engine lacks.

    Registry-declared gaps (``unavailable[engine]``, with the reason) are the
    only skips; tests/test_registry_engines.py checks every other measure.
    """

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.name = engine.name

    def needs(self, measure: str) -> None:
        """Skip with the registry's reason where the engine lacks ``measure``."""
        import pytest

        from mlsql._registry import REGISTRY, measures

        measures()  # fills the registry
        m = REGISTRY[measure]
        if not m.available_in(self.name):
            pytest.skip(f"{measure} is not in {self.name}: {m.unavailable[self.name]}")

    def aggregate(self, measure: str, *args: Any, **kwargs: Any) -> Any:
        self.needs(measure)
        return self.engine.aggregate(measure, *args, **kwargs)

    def many(self, table: pa.Table, calls: list[Any]) -> list[Any]:
        for name, _, _ in calls:
            self.needs(name)
        return self.engine.many(table, calls)

    def many_by(self, table: pa.Table, calls: list[Any], by: str) -> dict[Any, list[Any]]:
        for name, _, _ in calls:
            self.needs(name)
        return self.engine.many_by(table, calls, by)


# ------------------------------------------------------------------ averaged scores per label
#: the averages of ``multilabel_average_precision`` and ``multilabel_roc_auc``
SCORE_AVERAGES = ("micro", "macro", "weighted", "samples")


def indicator_cells(
    rows: list[tuple[Any, Any]],
) -> tuple[list[Any], list[list[tuple[bool, float]]]]:
    """The group's label universe and, per row, (true?, score) of every label.

    Rows whose scores or labels are None are skipped. The universe is every
    label true in some row or scored (score not None) in some row, sorted; a
    label a row does not score has score -inf there: below every score, so the
    unscored cells of a label form its last tied run.
    """
    kept = [(s, a) for s, a in rows if s is not None and a is not None]
    labels: set[Any] = set()
    for s, a in kept:
        labels |= {x for x in a if x is not None}
        labels |= {x for x, v in s.items() if x is not None and v is not None}
    universe = sorted(labels)
    cells = []
    for s, a in kept:
        truth = {x for x in a if x is not None}
        scored = {x: float(v) for x, v in s.items() if v is not None}
        cells.append([(x in truth, scored.get(x, NEG_INF)) for x in universe])
    return universe, cells


def binary_average_precision(pairs: list[tuple[bool, float]]) -> Any:
    """scikit-learn's step-wise AP (ties one step); None without positives."""
    positives = [s for y, s in pairs if y]
    if not positives:
        return None
    total = Fraction(0)
    for p in positives:
        at_or_above = [y for y, s in pairs if s >= p]
        total += Fraction(sum(at_or_above), len(at_or_above))
    return total / len(positives)


def binary_roc_auc(pairs: list[tuple[bool, float]]) -> Any:
    """Share of (positive, negative) pairs ordered right, a tie one half; None with one class."""
    pos = [s for y, s in pairs if y]
    neg = [s for y, s in pairs if not y]
    if not pos or not neg:
        return None
    u = sum(Fraction(int(p > n)) + Fraction(int(p == n), 2) for p in pos for n in neg)
    return u / (len(pos) * len(neg))


def _undefined(zero_division: Any) -> Any:
    """What an undefined label (or row, or pool) counts as: None and NaN are left out."""
    if zero_division == "ignore":
        return None
    if zero_division == "diagnose":
        return Fraction(1)
    if isinstance(zero_division, float) and math.isnan(zero_division):
        return math.nan
    return Fraction(zero_division)


def _left_out(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def averaged_over_labels(
    binary: Callable[[list[tuple[bool, float]]], Any],
    rows: list[tuple[Any, Any]],
    average: str = "macro",
    zero_division: Any = 0,
) -> Any:
    """``binary`` over the indicator matrix of ``rows`` ((scores, actual) pairs), averaged.

    micro pools every (row, label) cell; macro is the mean over labels;
    weighted weighs each label by its positives; samples is the mean over
    rows. An undefined value counts as ``zero_division`` (0 or 1; 'diagnose':
    1; NaN or 'ignore': left out, as DESIGN 1.8 says). None over no rows; when
    everything is left out, NaN under NaN (an undefined micro value too) and
    None under 'ignore'.
    """
    universe, cells = indicator_cells(rows)
    if not cells:
        return None
    fill = _undefined(zero_division)

    def value(pairs: list[tuple[bool, float]]) -> Any:
        v = binary(pairs)
        return fill if v is None else v

    if average == "micro":
        return value([c for row in cells for c in row])
    if average == "samples":
        parts = [(value(row), 1) for row in cells]
    else:
        columns = [[row[j] for row in cells] for j in range(len(universe))]
        weigh = average == "weighted"
        parts = [(value(col), sum(y for y, _ in col) if weigh else 1) for col in columns]
    kept = [(v, w) for v, w in parts if not _left_out(v)]
    weight = sum(w for _, w in kept)
    if not kept:
        return math.nan if any(v is not None for v, _ in parts) else None
    if weight == 0:  # weighted, no label with positives: scikit-learn returns 0
        return fill
    return sum(v * w for v, w in kept) / weight


def multilabel_average_precision(
    rows: list[tuple[Any, Any]], average: str = "macro", zero_division: Any = 0
) -> Any:
    return averaged_over_labels(binary_average_precision, rows, average, zero_division)


def multilabel_roc_auc(
    rows: list[tuple[Any, Any]], average: str = "macro", zero_division: Any = 0
) -> Any:
    return averaged_over_labels(binary_roc_auc, rows, average, zero_division)
