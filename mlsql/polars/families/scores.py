"""Log loss and ROC AUC in Polars: aggregates that need no sorted input.

``logloss`` sums the registry's per-row term over clipped probabilities (each
statistic computed once, streaming). ``auc`` ranks the known rows' scores
(``rank('average')``, ties averaged) and takes the Mann-Whitney statistic of
the positives' ranks.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame({"actual": [1, 1, 0, 1, 1, 0], "predicted": [0.8, 0.7, 0.5, 0.5, 0.3, 0.2]})
>>> df.select(mp.auc("actual", "predicted")).item()
0.8125
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import polars as pl

from mlsql._front.build import lookup
from mlsql._registry import Measure, measures
from mlsql.measures import scores as SC
from mlsql.polars._dtypes import Pairs
from mlsql.polars.families import _classification as K
from mlsql.polars.families._classification import params  # noqa: F401  (plug-in hook)

FAMILIES = (SC.FAMILY,)
EXAMPLE = {"actual": [1, 1, 0, 1, 1, 0], "predicted": [0.8, 0.7, 0.5, 0.5, 0.3, 0.2]}
NAMES = {"actual": "label", "label": "label", "predicted": "score", "score": "score"}


def check(func: str, names: Sequence[str], pairs: Pairs) -> list[pl.Expr]:
    """The label boolean or 0/1, the score a number (as Float64)."""
    out = []
    mask = K.known(*(e for e, _ in pairs))
    for name, (expr, dtype) in zip(names, pairs, strict=True):
        if NAMES[name] == "label":
            out.append(K.binary_flag(func, name, expr, dtype))
        else:  # a score is checked on rows whose label is known
            out.append(K.number(func, name, pl.when(mask).then(expr), dtype, finite=True))
    return out


def _label_score(m: Measure, inputs: tuple[pl.Expr, ...]) -> tuple[pl.Expr, pl.Expr]:
    by_role = {NAMES[n]: x for n, x in zip(m.inputs, inputs, strict=True)}
    return by_role["label"], by_role["score"]


class _Loss:
    """Per-row statistics of logloss: 1 per known row and its loss (NULL where unknown)."""

    def __init__(self, m: Measure) -> None:
        self.m = m

    def rows(self, *inputs: pl.Expr) -> SC.LossStats:
        y, s = _label_score(self.m, inputs)
        p = s.clip(SC.CLIP, 1 - SC.CLIP)
        term = SC.log_loss_term(K.OPS, y.cast(pl.Float64), p.log(), (1 - p).log())
        return SC.LossStats(n=y.cast(pl.Int64) * 0 + s * 0 + 1, total_loss=term)

    @staticmethod
    def pool(ops: Any, s: SC.LossStats) -> SC.LossStats:
        return SC.LossStats(ops.sum(s.n), ops.sum(s.total_loss))


def rank_stats_of(m: Measure) -> Any:
    """Positives, negatives and U from the average ranks of the known rows' scores."""

    def stats(*inputs: pl.Expr) -> SC.RankStats:
        y, s = _label_score(m, inputs)
        mask = K.known(y, s)
        yk, sk = y.filter(mask), s.filter(mask)
        n_pos = yk.cast(pl.Int64).sum()
        n_neg = mask.sum().cast(pl.Int64) - n_pos
        u = sk.rank("average").filter(yk).sum() - n_pos * (n_pos + 1) / 2
        return SC.RankStats(n_pos, n_neg, u)

    return stats


def function_of(m: Measure) -> Any:
    """The Polars function of a score measure."""
    module = sys.modules[__name__]
    if m.name.endswith("logloss"):
        loss = _Loss(m)
        return K.pooled(m, loss.rows, loss.pool, check, module)
    return K.direct(m, rank_stats_of(m), check, module)


def example(measure: Measure) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Hivemall's AUC example (scores .8 .7 .5 .5 .3 .2)."""
    roles = {"label": EXAMPLE["actual"], "score": EXAMPLE["predicted"]}
    return {name: roles[NAMES[name]] for name in measure.inputs}, {}


__all__: list[str] = []
for _m in measures(family=SC.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m))
        __all__.append(_m.name)
