"""Log loss and ROC AUC in DuckDB, aggregates that need no sorted input.

``logloss`` sums the registry's per-row term over clipped probabilities.
``auc`` is the Mann-Whitney statistic: the group's (score, label) pairs are
sorted twice inside the aggregate, once with negatives before positives at
equal scores and once after; the positives' positions summed in each order,
averaged, minus P(P+1)/2, give U with ties counting one half. That keeps the
group's rows in memory (a list) but needs no window and no pre-sorted input.
"""

from __future__ import annotations

from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.library import Macro, Qualify
from mlsql._duckdb.ops import SqlOps
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, call, lit
from mlsql.measures import scores as SC

FILE = "scores.sql"
DESCRIPTION = "Scores against binary labels: logloss and auc (Mann-Whitney, ties one half)."
ORDER = 25
FAMILIES: tuple[str, ...] = ()  # rendered here


def _helpers() -> list[Macro]:
    return [
        Macro(
            FILE,
            "_mlsql_positive_rank_sum",
            ("sorted",),
            "list_sum(list_transform(sorted, lambda x, i: CASE WHEN x.y THEN i ELSE 0 END))",
            "Σ of the 1-based positions of the positives in a sorted list of (s, k, y).",
            public=False,
        )
    ]


def stats(q: Qualify, m: Measure) -> object:
    """Loss or rank statistics over the measure's (label, score) inputs, in its order."""
    label, score = ("label", "score") if m.inputs == ("score", "label") else ("actual", "predicted")
    known = f"{label} IS NOT NULL AND {score} IS NOT NULL"
    y = call(q("_mlsql_binary_flag"), Sql(label), label, m.name)
    # a score is checked (NaN, infinite) on rows whose label is known
    s = call(
        q("_mlsql_number"), Sql(f"CASE WHEN {label} IS NOT NULL THEN {score} END"), score, m.name
    )
    if m.name.endswith("logloss"):
        p = f"greatest(least({s}, {lit(1 - SC.CLIP)}), {lit(SC.CLIP)})"
        term = SC.log_loss_term(
            SqlOps(q), Sql(f"CAST({y} AS DOUBLE)"), Sql(f"ln({p})"), Sql(f"ln(1 - {p})")
        )
        return SC.LossStats(
            n=Sql(f"count(CASE WHEN {known} THEN 1 END)"),
            total_loss=Sql(f"sum(CASE WHEN {known} THEN {term} END)"),
        )
    n_pos = Sql(f"sum(CASE WHEN {known} THEN CAST({y} AS BIGINT) END)")
    n_neg = Sql(f"sum(CASE WHEN {known} THEN 1 - CAST({y} AS BIGINT) END)")
    rank_sum = q("_mlsql_positive_rank_sum")

    def ranks(first: str) -> str:  # positions of the positives, ties broken `first`
        k = "NOT " if first == "positives" else ""
        return (
            f"{rank_sum}(list_sort(list(struct_pack(s := {s}, k := {k}{y}, y := {y})) "
            f"FILTER (WHERE {known})))"
        )

    u = Sql(f"(({ranks('negatives')} + {ranks('positives')}) / 2 - {n_pos} * ({n_pos} + 1) / 2)")
    return SC.RankStats(n_positive=n_pos, n_negative=n_neg, u=u)


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """logloss, auc, their Hivemall-order forms and aliases."""
    out = _helpers()
    for m in measures(family=SC.FAMILY):
        if m.build is not None and m.available_in("duckdb"):
            out += CC.render(m, qualify, ops, FILE, stats(qualify, m))
    return out
