"""The argument-order rule over the whole registry: the truth first, except Hivemall's own measures.

DESIGN.md: every function takes the truth first, as scikit-learn's
``(y_true, y_pred / y_score)``; only Hivemall's measures keep Hivemall's order
(``precision_at(rank_items, correct_items, k)``, ``hivemall_auc(score, label)``, ...).
A new input name must be classified here, so no measure escapes the rule.
"""

from __future__ import annotations

from mlsql._registry import measures

#: inputs that hold the truth (bpref's judged non-relevant items too)
TRUTH = {"actual", "label", "holds", "correct_items", "ideal_relevance", "nonrelevant_items"}
#: inputs that hold a prediction (labels, scores, a ranking)
PREDICTION = {"predicted", "scores", "score", "prob", "fires", "rank_items", "ranked_relevance"}
#: inputs that are neither (counts, frames, label universes, costs; the agreement family's
#: raters' labels of a row and several models' outcomes on it, one input each)
OTHER = {
    "tp",
    "fp",
    "fn",
    "tn",
    "counts",
    "source",
    "indicators",
    "labels",
    "cost",
    "ratings",
    "correct",
}
#: Hivemall's measures, in Hivemall's order (the ranking or the prediction first)
HIVEMALL_ORDER = {
    "precision_at",
    "recall_at",
    "average_precision",
    "hitrate",
    "mrr",
    "ndcg",
    "ranking_auc",  # Hivemall's auc over arrays
    "graded_ndcg",  # Hivemall's ndcg over relevance grades
    "hivemall_auc",
    "hivemall_logloss",
    "hivemall_r2",
}


def test_every_input_name_is_classified():
    names = {name for m in measures() for name in m.inputs}
    assert names <= TRUTH | PREDICTION | OTHER, sorted(names - TRUTH - PREDICTION - OTHER)


def test_the_truth_comes_first_except_in_hivemalls_measures():
    wrong, hivemall = [], {}
    for m in measures():
        truth = [i for i, name in enumerate(m.inputs) if name in TRUTH]
        predicted = [i for i, name in enumerate(m.inputs) if name in PREDICTION]
        if not truth or not predicted:
            continue
        truth_first = truth[0] < predicted[0]
        if m.name in HIVEMALL_ORDER:
            hivemall[m.name] = truth_first
        elif not truth_first:
            wrong.append(f"{m.name}{m.inputs}")
    assert not wrong, f"the truth must come first: {wrong}"
    assert hivemall == dict.fromkeys(HIVEMALL_ORDER, False)  # Hivemall's order, as Hivemall
