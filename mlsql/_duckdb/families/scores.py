"""Scores against binary labels in DuckDB: aggregates that need no sorted input.

``logloss`` and ``brier_score_loss`` sum the registry's per-row term with ``fsum``
(compensated: a plain ``sum`` drifted by 1e-12 relative over millions of rows). ``auc``
is the Mann-Whitney statistic: the group's (score, label) pairs are sorted
twice inside the aggregate, once with negatives before positives at equal
scores and once after; the positives' positions summed in each order,
averaged, minus P(P+1)/2, give U with ties counting one half.

``average_precision_score`` sorts the pairs once, by score from the highest
and negatives first among equal scores, so the last positive of each run of
equal scores ends the run: its position there is N(>= s) and its position
among the positives P(>= s). The runs' last positives are found by comparing
each positive with the next (``list_zip`` with the list shifted by one), and
each run adds (its positives) x P(>= s) / N(>= s): one sort and a few linear
list passes, no window and no pre-sorted input.

``area_under_pr`` (Spark's ``areaUnderPR``) sorts the pairs twice, negatives first among
equal scores (as average precision: each run's point) and positives first (each run's first
row: the point before it), and adds each run's trapezoid from the two aligned. With
``sample_weight`` it, as average precision, reduces the sorted (score, label, weight) triples
in one pass (``list_reduce``), closing each run of equal scores with its trapezoid.

``expected_calibration_error`` collects the group's (bin, prob - actual, weight)
triples and sums them per bin (``n_bins`` is known only when the query runs): one
pass over the list per bin, whose sums make the bin's term under ``norm``.

Each of these keeps the group's rows in memory (a list).

``binned_auc`` and ``binned_average_precision_score`` do not: ``histogram`` counts the rows per
(bin, label) of the threshold grid (with ``sample_weight`` per (bin, label, weight)), and the
AUC and AP passes above read the map's entries sorted by bin, one per bin and label.
"""

from __future__ import annotations

from mlsql import _classification_params as CP
from mlsql._duckdb import classification_checks as CC
from mlsql._duckdb.classification_checks import let
from mlsql._duckdb.library import Macro, Qualify, sql_message
from mlsql._duckdb.ops import SqlOps
from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, call, lit
from mlsql.measures import scores as SC

FILE = "scores.sql"
DESCRIPTION = (
    "Scores against binary labels: logloss, auc (Mann-Whitney, ties one half), "
    "average precision, Spark's trapezoid area under the PR curve, Brier score and expected"
    " calibration error."
)
ORDER = 25
FAMILIES: tuple[str, ...] = ()  # rendered here


def _trapezoid_helper(ops: SqlOps) -> Macro:
    """Spark's trapezoid sum over (s, y, w) sorted from the highest score: one pass over the
    runs of equal scores, each closed run adding :func:`mlsql.measures.scores.pr_trapezoid`
    at its point (precision WP(>= s) / W(>= s)), the point before it (its own for the first)
    carried as ``prev``; a run reached before any weight is no point."""
    new_run = "x.s IS DISTINCT FROM acc.last"
    zero = "0::DOUBLE"
    carried = "s := NULL::DOUBLE, y := NULL::DOUBLE, w := NULL::DOUBLE"
    precision = Sql("acc.pos / acc.n")
    term = SC.pr_trapezoid(ops, Sql("acc.run"), precision, Sql(f"coalesce(acc.prev, {precision})"))
    closed = f"acc.total + CASE WHEN acc.n > 0 THEN {term} ELSE 0.0 END"
    step = (
        "struct_pack(last := x.s, n := acc.n + x.w, pos := acc.pos + x.y * x.w,"
        f" run := CASE WHEN {new_run} THEN {zero} ELSE acc.run END + x.y * x.w,"
        f" prev := CASE WHEN {new_run} AND acc.n > 0 THEN {precision} ELSE acc.prev END,"
        f" total := CASE WHEN {new_run} THEN {closed} ELSE acc.total END, {carried})"
    )
    start = (
        f"struct_pack(last := NULL::DOUBLE, n := {zero}, pos := {zero}, run := {zero},"
        f" prev := NULL::DOUBLE, total := {zero}, {carried})"
    )
    return Macro(
        FILE,
        "_mlsql_pr_trapezoid_sum",
        ("sorted",),
        str(let(f"list_reduce(sorted, lambda acc, x: {step}, {start})", "acc", closed)),
        "Σ over runs of equal scores of (run's positive weight) x (P(t) + P(t')) / 2, t' the run"
        " before (t for the first), (s, y, w) sorted from the highest score.",
        public=False,
    )


def _run_trapezoid_helper(ops: SqlOps) -> Macro:
    """Spark's trapezoid sum without weights, from the positives in two sorts: ``last`` with
    negatives first among equal scores (a run's last positive is its last row: P(>= t),
    N(>= t)), ``first`` with positives first (a run's first positive is its first row: the
    rows and positives above the run, the point before it). Each list filtered to one element
    per run of equal scores holding a positive, the two align; a run of negatives only adds no
    area, and its point is the next run's point before. Linear list passes, no reduce."""
    ends = (
        "list_filter(list_transform(list_zip(last, last[2:]), lambda z, j: struct_pack(j := j,"
        " i := z[1].i, keep := z[2] IS NULL OR z[2].s <> z[1].s)), lambda e: e.keep)"
    )
    starts = let(
        "first",
        "b",
        "list_filter(list_transform(list_zip(b, list_prepend(b[1], b), true), lambda z, j:"
        " struct_pack(j := j, i := z[1].i, keep := j = 1 OR z[2].s <> z[1].s)),"
        " lambda e: e.keep)",
    )
    precision = Sql("z[1].j / z[1].i")
    before = Sql(f"CASE WHEN z[2].i > 1 THEN (z[2].j - 1) / (z[2].i - 1) ELSE {precision} END")
    term = SC.pr_trapezoid(ops, Sql("z[1].j - z[2].j + 1"), precision, before)
    return Macro(
        FILE,
        "_mlsql_run_trapezoid_sum",
        ("last", "first"),
        f"list_sum(list_transform(list_zip({ends}, {starts}), lambda z: {term}))",
        "Σ over runs of equal scores of (positives in the run) x (P(t) + P(t')) / 2, t' the run"
        " before (t for the first), from the positives' (s, i) in two sorts.",
        public=False,
    )


def _helpers() -> list[Macro]:
    below, above = (
        sql_message(CP.probability_value_message("{}", "{}", got), "func", "name")
        for got in CP.OUT_OF_RANGE
    )
    new_run = "x.s IS DISTINCT FROM acc.last"
    zero = "0::DOUBLE"  # a plain 0.0 is a DECIMAL(2,1), which would round the weights
    # the accumulator also has the elements' fields (s, y, w; always NULL in it): DuckDB 1.x
    # binds a macro's list_reduce with its elements typed as the initial value
    carried = "s := NULL::DOUBLE, y := NULL::DOUBLE, w := NULL::DOUBLE"
    u_closed = "acc.u2 + acc.pos * (2 * acc.below + acc.neg)"
    u_step = (
        f"struct_pack(last := x.s, below := CASE WHEN {new_run} THEN acc.below + acc.neg"
        " ELSE acc.below END,"
        f" neg := CASE WHEN {new_run} THEN {zero} ELSE acc.neg END + (1 - x.y) * x.w,"
        f" pos := CASE WHEN {new_run} THEN {zero} ELSE acc.pos END + x.y * x.w,"
        f" u2 := CASE WHEN {new_run} THEN {u_closed} ELSE acc.u2 END, {carried})"
    )
    u_start = (
        f"struct_pack(last := NULL::DOUBLE, below := {zero}, neg := {zero}, pos := {zero},"
        f" u2 := {zero}, {carried})"
    )
    ap_closed = "acc.total + CASE WHEN acc.run > 0 THEN acc.run * acc.pos / acc.n ELSE 0.0 END"
    ap_step = (
        "struct_pack(last := x.s, n := acc.n + x.w, pos := acc.pos + x.y * x.w,"
        f" run := CASE WHEN {new_run} THEN {zero} ELSE acc.run END + x.y * x.w,"
        f" total := CASE WHEN {new_run} THEN {ap_closed} ELSE acc.total END, {carried})"
    )
    ap_start = (
        f"struct_pack(last := NULL::DOUBLE, n := {zero}, pos := {zero}, run := {zero},"
        f" total := {zero}, {carried})"
    )
    return [
        Macro(
            FILE,
            "_mlsql_weighted_u",
            ("sorted",),
            str(
                let(
                    f"list_reduce(sorted, lambda acc, x: {u_step}, {u_start})",
                    "acc",
                    f"({u_closed}) / 2",
                )
            ),
            "Weighted Mann-Whitney U of (s, y, w) sorted by score: Σ over positives of"
            " w x (negative weight below + ties / 2), one pass over the runs of equal scores.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_weighted_precision_sum",
            ("sorted",),
            str(
                let(
                    f"list_reduce(sorted, lambda acc, x: {ap_step}, {ap_start})",
                    "acc",
                    ap_closed,
                )
            ),
            "Σ over runs of equal scores of (run's positive weight) x WP(>= s) / W(>= s), (s, y, w)"
            " sorted from the highest score.",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_positive_rank_sum",
            ("sorted",),
            "list_sum(list_transform(sorted, lambda x, i: CASE WHEN x.y THEN i ELSE 0 END))",
            "Σ of the 1-based positions of the positives in a sorted list of (s, k, y).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_probability",
            ("x", "name", "func"),
            f"CASE WHEN x < 0 THEN error({below}) WHEN x > 1 THEN error({above}) ELSE x END",
            "x, a DOUBLE, after checking that it lies in [0, 1] (NULL stays NULL).",
            public=False,
        ),
        Macro(
            FILE,
            "_mlsql_run_precision_sum",
            ("positives",),
            # positives: (s, i) of the positive rows sorted by score from the highest,
            # negatives first among equal scores; i = the position among all rows
            str(
                let(
                    "list_filter(list_transform(list_zip(positives, positives[2:]), lambda z, j:"
                    " struct_pack(j := j, i := z[1].i, last := z[2] IS NULL OR z[2].s <> z[1].s)),"
                    " lambda e: e.last)",
                    "runs",
                    "list_sum(list_transform(list_zip(runs, list_prepend("
                    "struct_pack(j := 0, i := 0, last := true), runs), true),"
                    " lambda z: (z[1].j - z[2].j) * z[1].j / z[1].i))",
                )
            ),
            "Σ over runs of equal scores of (positives in the run) x P(>= s) / N(>= s).",
            public=False,
        ),
    ]


def first_checked(q: Qualify, m: Measure, y: Sql, s: Sql) -> tuple[Sql, Sql]:
    """The label and score checks with the second input's guarded by the first input's type
    check: when both inputs are of a wrong type, the first argument is named (as in Polars)."""
    label, score = SC.label_and_score(m)
    if m.inputs[0] == label:
        return y, call(q("_mlsql_binary_type_first"), Sql(label), label, m.name, s)
    return call(q("_mlsql_number_type_first"), Sql(score), score, m.name, y), s


def over_bins(pairs: str, n_bins: object, term: SC.BinTerm, largest: bool, size: str) -> Sql:
    """The sum (or ``largest``: maximum) over the bins k < ``n_bins`` of ``term(gap, size)``,
    from the group's (b, d[, w]) ``pairs``: one pass over them per bin, its rows filtered once;
    ``size``: the size of the bin's rows ``f``. A term without the size (l1) reads the filtered
    rows directly, as before the norms."""
    rows = "list_filter(c, lambda x: x.b = k)"
    gap = "abs(list_sum(list_transform({}, lambda x: x.d)))"
    sized = term(Sql(gap.format("f")), Sql(size))
    if size in str(sized):
        per_bin = let(rows, "f", sized)
    else:
        per_bin = term(Sql(gap.format(rows)), Sql(size))
    combine = "list_max" if largest else "list_sum"
    return let(pairs, "c", f"{combine}(list_transform(range({n_bins}), lambda k: {per_bin}))")


def grid_stats(
    q: Qualify, m: Measure, ops: SqlOps, y: Sql, s: Sql, known: str, w: object
) -> SC.GridStats:
    """The statistics of a measure over the threshold grid: the known rows counted per (bin,
    label) by ``histogram`` (with ``sample_weight``: per (bin, label, weight), each entry then
    weighing its count times its weight), so the group holds a map of at most 2 x thresholds
    entries (times the distinct weights); the entries, sorted by bin, are the sorted (s, y, w)
    triples the weighted AUC and AP passes read, one triple per bin and label."""
    weight = "1" if w is None else f"{w}"
    n = Sql(f"count(CASE WHEN {known} THEN 1 END)")

    def total(value: str, top: bool = False) -> Sql:
        if top:  # 0, not NULL, where no row is scored 1
            return Sql(f"coalesce(sum(CASE WHEN {known} AND {s} >= 1 THEN {value} END), 0)")
        return Sql(f"sum(CASE WHEN {known} THEN {value} END)")

    positive, negative = f"{y} * {weight}", f"(1 - {y}) * {weight}"

    def at(thresholds: object) -> object:
        b = f"CAST({SC.grid_bin(ops, s, thresholds)} AS BIGINT)"
        if w is None:
            key = f"CASE WHEN {known} THEN {b} * 2 + CAST({y} AS BIGINT) END"
            fields = "s := (e.key // 2)::DOUBLE, y := (e.key % 2)::DOUBLE, w := e.value::DOUBLE"
        else:
            key = f"CASE WHEN {known} THEN struct_pack(b := {b}, y := {y}, w := {w}) END"
            fields = "s := e.key.b::DOUBLE, y := e.key.y, w := e.key.w * e.value"
        entries = f"list_transform(map_entries(histogram({key})), lambda e: struct_pack({fields}))"
        if m.name == "binned_average_precision_score":
            precision_sum = call(
                q("_mlsql_weighted_precision_sum"), Sql(f"list_sort({entries}, 'DESC')")
            )
            return SC.PrecisionStats(n=n, n_positive=total(positive), precision_sum=precision_sum)
        u = call(q("_mlsql_weighted_u"), Sql(f"list_sort({entries})"))
        u = SC.grid_top_ties(ops, u, total(positive, True), total(negative, True))
        return SC.RankStats(total(positive), total(negative), u, rows=n)

    return SC.GridStats(at=at)


def stats(q: Qualify, m: Measure, ops: SqlOps) -> object:
    """The statistics of score measure ``m`` over its (label, score) inputs."""
    label, score = SC.label_and_score(m)
    known = f"{label} IS NOT NULL AND {score} IS NOT NULL"
    y = call(q("_mlsql_binary_flag"), Sql(label), label, m.name)
    # a score is checked (NaN, infinite, outside [0, 1]) on rows whose label is known
    s = call(
        q("_mlsql_number"), Sql(f"CASE WHEN {label} IS NOT NULL THEN {score} END"), score, m.name
    )
    if m.name in SC.PROBABILITIES:
        s = call(q("_mlsql_probability"), s, score, m.name)
    y, s = first_checked(q, m, y, s)
    y_num = Sql(f"CAST({y} AS DOUBLE)")
    n = Sql(f"count(CASE WHEN {known} THEN 1 END)")
    n_pos = Sql(f"sum(CASE WHEN {known} THEN CAST({y} AS BIGINT) END)")
    if m.name.endswith("logloss"):
        p = f"greatest(least({s}, {lit(1 - SC.CLIP)}), {lit(SC.CLIP)})"
        term = SC.log_loss_term(ops, y_num, Sql(f"ln({p})"), Sql(f"ln(1 - {p})"))
        return SC.LossStats(n=n, total_loss=Sql(f"fsum(CASE WHEN {known} THEN {term} END)"))
    if m.name == "brier_score_loss":
        term = SC.squared_error_term(ops, y_num, s)
        return SC.LossStats(n=n, total_loss=Sql(f"fsum(CASE WHEN {known} THEN {term} END)"))
    if m.name in ("average_precision_score", "area_under_pr"):
        # + 0.0 makes -0.0 equal to 0.0 in the sort as in the comparisons
        def positives(first: bool) -> str:  # (s, i) of the positives, i among all rows
            k = f"{y}" if first else f"NOT {y}"
            pairs = f"list(struct_pack(s := {s} + 0.0, k := {k})) FILTER (WHERE {known})"
            flag = "x.k" if first else "NOT x.k"
            return (
                f"list_filter(list_transform(list_sort({pairs}, 'DESC'), lambda x, i:"
                f" struct_pack(s := x.s, i := i, y := {flag})), lambda x: x.y)"
            )

        if m.name == "area_under_pr":
            total = call(q("_mlsql_run_trapezoid_sum"), Sql(positives(False)), Sql(positives(True)))
        else:
            total = call(q("_mlsql_run_precision_sum"), Sql(positives(False)))
        return SC.PrecisionStats(n=n, n_positive=n_pos, precision_sum=total)
    if m.name in SC.GRID:
        return grid_stats(q, m, ops, y_num, s, known, None)
    if m.name == "expected_calibration_error":

        def bins(n_bins: object, term: SC.BinTerm, largest: bool) -> Sql:
            b = SC.calibration_bin(ops, s, n_bins)
            pairs = f"list(struct_pack(b := {b}, d := {s} - {y_num})) FILTER (WHERE {known})"
            return over_bins(pairs, n_bins, term, largest, "len(f)")

        return SC.CalibrationStats(n=n, over_bins=bins)
    rank_sum = q("_mlsql_positive_rank_sum")

    def ranks(first: str) -> str:  # positions of the positives, ties broken `first`
        k = "NOT " if first == "positives" else ""
        return (
            f"{rank_sum}(list_sort(list(struct_pack(s := {s}, k := {k}{y}, y := {y})) "
            f"FILTER (WHERE {known})))"
        )

    u = Sql(f"(({ranks('negatives')} + {ranks('positives')}) / 2 - {n_pos} * ({n_pos} + 1) / 2)")
    n_neg = Sql(f"sum(CASE WHEN {known} THEN 1 - CAST({y} AS BIGINT) END)")
    return SC.RankStats(n_positive=n_pos, n_negative=n_neg, u=u)


def weighted_stats(q: Qualify, m: Measure, ops: SqlOps) -> object:
    """The statistics of score measure ``m`` with each row weighted by ``sample_weight``."""
    label, score = SC.label_and_score(m)
    w = CC.weight(m.name, q)
    known = f"{label} IS NOT NULL AND {score} IS NOT NULL AND {w} IS NOT NULL"
    y = call(q("_mlsql_binary_flag"), Sql(label), label, m.name)
    s = call(
        q("_mlsql_number"), Sql(f"CASE WHEN {label} IS NOT NULL THEN {score} END"), score, m.name
    )
    if m.name in SC.PROBABILITIES:
        s = call(q("_mlsql_probability"), s, score, m.name)
    y, s = first_checked(q, m, y, s)
    y_num = Sql(f"CAST({y} AS DOUBLE)")
    n = Sql(f"sum(CASE WHEN {known} THEN {w} END)")
    n_pos = Sql(f"sum(CASE WHEN {known} THEN {y_num} * {w} END)")
    if m.name.endswith("logloss") or m.name == "brier_score_loss":
        if m.name == "brier_score_loss":
            term = SC.squared_error_term(ops, y_num, s)
        else:
            p = f"greatest(least({s}, {lit(1 - SC.CLIP)}), {lit(SC.CLIP)})"
            term = SC.log_loss_term(ops, y_num, Sql(f"ln({p})"), Sql(f"ln(1 - {p})"))
        return SC.LossStats(n=n, total_loss=Sql(f"fsum(CASE WHEN {known} THEN {term} * {w} END)"))
    rows = f"list(struct_pack(s := {s} + 0.0, y := {y_num}, w := {w})) FILTER (WHERE {known})"
    if m.name == "average_precision_score":
        precision_sum = call(q("_mlsql_weighted_precision_sum"), Sql(f"list_sort({rows}, 'DESC')"))
        count = Sql(f"count(CASE WHEN {known} THEN 1 END)")
        return SC.PrecisionStats(n=count, n_positive=n_pos, precision_sum=precision_sum)
    if m.name == "area_under_pr":
        area = call(q("_mlsql_pr_trapezoid_sum"), Sql(f"list_sort({rows}, 'DESC')"))
        count = Sql(f"count(CASE WHEN {known} THEN 1 END)")
        return SC.PrecisionStats(n=count, n_positive=n_pos, precision_sum=area)
    if m.name in SC.GRID:
        return grid_stats(q, m, ops, y_num, s, known, w)
    if m.name == "expected_calibration_error":

        def bins(n_bins: object, term: SC.BinTerm, largest: bool) -> Sql:
            b = SC.calibration_bin(ops, s, n_bins)
            pairs = (
                f"list(struct_pack(b := {b}, d := ({s} - {y_num}) * {w}, w := {w}))"
                f" FILTER (WHERE {known})"
            )
            return over_bins(
                pairs, n_bins, term, largest, "list_sum(list_transform(f, lambda x: x.w))"
            )

        return SC.CalibrationStats(n=n, over_bins=bins)
    n_neg = Sql(f"sum(CASE WHEN {known} THEN (1 - {y_num}) * {w} END)")
    u = call(q("_mlsql_weighted_u"), Sql(f"list_sort({rows})"))
    count = Sql(f"count(CASE WHEN {known} THEN 1 END)")
    return SC.RankStats(n_positive=n_pos, n_negative=n_neg, u=u, rows=count)


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """logloss, auc, average precision, Brier score, calibration error, and their other names."""
    out = [*_helpers(), _trapezoid_helper(ops), _run_trapezoid_helper(ops)]
    for m in measures(family=SC.FAMILY):
        if m.build is not None and m.available_in("duckdb"):
            weighted = weighted_stats(qualify, m, ops)
            out += CC.render(m, qualify, ops, FILE, stats(qualify, m, ops), weighted=weighted)
    return out
