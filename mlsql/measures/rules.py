"""A rule's contingency measures: novelty and satisfaction, beside the binary 2x2 measures.

A rule "if L then R" over a table gives two boolean columns per row: ``fires``
(L holds) and ``holds`` (R holds: the row is of the rule's class). Its
contingency table is the binary one with actual = ``holds`` and predicted =
``fires``, so, keeping mlsql's order (actual, predicted) everywhere:

======  ======================  ===========================================
rule    meaning                 mlsql call
======  ======================  ===========================================
prel    p(R | L)                ``prel(holds, fires)`` = binary_precision
nrel    p(not R | not L)        ``nrel(holds, fires)``
sup     p(L R)                  ``sup(holds, fires)`` = binary_support
sens    p(L | R)                ``sens(holds, fires)`` = binary_recall
spec    p(not L | not R)        ``spec(holds, fires)``
tacc    p(L R) + p(not L not R) ``tacc(holds, fires)`` = binary_accuracy
cov     p(L)                    ``cov(holds, fires)`` = binary_coverage
nov     p(L R) - p(L) p(R)      ``rule_novelty(holds, fires)`` (alias nov)
sat     1 - p(not R | L) / p(not R)  ``rule_satisfaction(holds, fires)`` (alias sat)
======  ======================  ===========================================

Each has a ``*_from_counts(tp, fp, fn, tn)`` form, tp = |L and R|,
fp = |L and not R|, fn = |not L and R|, tn = |not L and not R|.

Notes
-----
Novelty is symmetric in L and R. Satisfaction is undefined when the rule never
fires or every row is of the class; it then follows ``zero_division``.
"""

from __future__ import annotations

from typing import Any

from mlsql import _params as P
from mlsql._registry import measure
from mlsql.measures import contingency as C
from mlsql.measures.contingency import Table2x2

FAMILY = "rules"
ZD = P.ZERO_DIVISION
RULE_INPUTS = ("holds", "fires")
COUNT_INPUTS = ("tp", "fp", "fn", "tn")


def _novelty(ops: Any, t: Table2x2) -> Any:
    return C.novelty(ops, t.counts, t.tn)


def _satisfaction(ops: Any, t: Table2x2, zero_division: Any) -> Any:
    return C.satisfaction(ops, t.counts, t.tn, zero_division)


MEASURES = {
    "rule_novelty": ("p(LR) - p(L) p(R): the lecture's nov.", _novelty, (), ("nov",)),
    "rule_satisfaction": (
        "1 - n |L and not R| / (|L| |not R|): the lecture's sat.",
        _satisfaction,
        (ZD,),
        ("sat",),
    ),
}

for _name, (_summary, _build, _params, _aliases) in MEASURES.items():
    measure(
        _name,
        "aggregate",
        FAMILY,
        f"{_summary} Inputs: holds (R, the class), fires (L, the rule).",
        inputs=RULE_INPUTS,
        params=_params,
        aliases=_aliases,
    )(_build)
    measure(
        f"{_name}_from_counts",
        "from_counts",
        FAMILY,
        f"{_name} of stored counts tp = |L R|, fp = |L not R|, fn = |not L R|, tn.",
        inputs=COUNT_INPUTS,
        params=_params,
    )(_build)
