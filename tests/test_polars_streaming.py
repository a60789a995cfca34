"""mlsql.polars on the streaming engine: no fallback to the in-memory engine, each statistic once.

A fallback shows two ways, both checked: a node of the physical streaming plan
that runs the in-memory engine (``in-memory-map``, ...), and the verbose log
(``POLARS_VERBOSE``) of a query that runs one or falls back as a whole. The
functions are every public function with an engine-neutral docstring example
(:mod:`mlsql._front.examples`: its small table is the input here), in every context that applies to it.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import mlsql.polars as mp
from mlsql._front import examples
from mlsql._registry import REGISTRY
from mlsql.polars import families

#: physical nodes that run (part of) the query on the in-memory engine
FALLBACK_NODES = ("in-memory-map", "in-memory-join", "columnar-function")
FALLBACK_LOG = re.compile(
    r"fall(ing)? ?back|running (in-memory-map|in-memory-join|columnar-function)"
)


def physical_nodes(lf: pl.LazyFrame) -> list[str]:
    """The node names of ``lf``'s physical plan on the streaming engine."""
    graph = lf.show_graph(engine="streaming", plan_stage="physical", raw_output=True)
    return [label.split("\\n")[0] for label in re.findall(r'label="([^"]*)"', graph or "")]


def fallbacks(
    lf: pl.LazyFrame, capfd: pytest.CaptureFixture[str], *, run: bool = True
) -> list[str]:
    """Everything in ``lf``'s streaming plan (and run, if ``run``) that is not streaming."""
    found = [n for n in physical_nodes(lf) if n.startswith(FALLBACK_NODES)]
    if not run:
        return found
    capfd.readouterr()
    with pl.Config(verbose=True):
        lf.collect(engine="streaming")
    log = capfd.readouterr().err
    return found + [m.group(0) for m in FALLBACK_LOG.finditer(log)]


# ---------------------------------------------------------------- the cases
def _example(name: str) -> tuple[dict[str, list[Any]], dict[str, Any], Any] | None:
    m = REGISTRY.get(name)
    if m is None:
        return None
    found = examples.example(m)
    if found is None or families.serving(m.family, families.modules()) is None:
        return None
    columns, params = found
    return columns, params, m


def _frame(columns: dict[str, list[Any]], inputs: tuple[str, ...]) -> pl.LazyFrame:
    n = len(next(iter(columns.values())))
    lf = pl.LazyFrame({**columns, "g": [i % 2 for i in range(n)]})
    if inputs == ("counts",):  # stored counts, two partitions
        counts = lf.group_by("g").agg(mp.multilabel_counts("actual", "predicted").alias("counts"))
        lf = pl.LazyFrame(counts.collect())
    return lf


#: the families whose functions must stream (issue 4); the others are checked and reported
CORE_FAMILIES = ("multilabel", "hivemall")

#: (function, context) pairs of the other families that Polars' streaming engine runs partly on
#: its in-memory engine today: class-wise single-label measures, AUC and average precision (a sort or a per-class
#: count; over label scores, a sort of the exploded cells), and regression aggregates and the calibration error (a window sum per bin, which
#: replaced one expression per bin: 1000 bins overflowed Python's recursion) under group_by/over (Polars' streaming group_by takes
#: when/otherwise over aggregates to the in-memory engine). The test checks that each still falls
#: back, so a pair that starts to stream fails it until it is taken off this list.
KNOWN_FALLBACKS = {
    **dict.fromkeys(
        [
            "auc",
            "hivemall_auc",
            "average_precision_score",
            "binned_auc",  # auc's ranks, of each row's bin
            "binned_average_precision_score",  # average_precision_score's ranks, of the bins
            "multilabel_average_precision",
            "multilabel_roc_auc",
            "balanced_accuracy_score",
            "cohen_kappa_score",
            "cohen_kappa_std_error",
            "cohen_kappa_z_value",
            "cohen_kappa_p_value",
            "cohen_kappa_p_value_one_sided",
            "cohen_kappa_low",
            "cohen_kappa_high",
            "bowker_statistic",
            "bowker_p_value",
            "f1_score",
            "fbeta_score",
            "matthews_corrcoef",
            "precision_score",
            "recall_score",
            "majority_class",
            "majority_error",
            "minority_class",
        ],
        ("select", "group_by", "over"),
    ),
    **dict.fromkeys(
        [
            "expected_calibration_error",  # its bins' sums are a window over the bin
            "area_under_pr",  # a sort; in select the streaming engine runs it
            "multiclass_brier_score",  # its cells are exploded per (row, class) in the aggregation
            "multiclass_calibration_error",  # expected_calibration_error's window over the bin
            "multilabel_brier_score",  # its labels are exploded in the aggregation (counted distinct)
            "explained_variance",
            "hivemall_r2",
            "mae",
            "mape",
            "mse",
            "pearson_corr",
            "r2",
            "rae",
            "rmse",
            "rrse",
            "rse",
        ],
        ("group_by", "over"),
    ),
    **dict.fromkeys(
        [
            # a group's rows are imploded into one list, read once (every statistic over it in
            # one list.eval); the sorts of the exploded ratings before held them all the same
            "fleiss_kappa",
            "cochrans_q_statistic",
            "cochrans_q_p_value",
        ],
        ("select", "group_by", "over"),
    ),
}


#: (function, context) pairs whose streaming physical plan Polars 2.1 cannot draw (show_graph
#: panics); none since the chi-square tail's series runs inside one list.eval per group
GRAPH_PANICS: set[tuple[str, str]] = set()


def cases() -> list[Any]:
    out = []
    for name in sorted(mp.FUNCTIONS):
        found = _example(name)
        if found is None or found[2].kind == "table":  # tables take a frame, not columns
            continue
        columns, params, m = found
        fn = getattr(mp, name)

        def call(fn: Any = fn, m: Any = m, params: Any = params) -> pl.Expr:
            return fn(*m.inputs, **params).alias("out")

        def lf(columns: Any = columns, m: Any = m) -> pl.LazyFrame:
            return _frame(columns, m.inputs)

        if m.kind in ("set", "row", "from_counts"):
            contexts = {
                "select": lambda lf=lf, call=call: lf().select(call()),
                "with_columns": lambda lf=lf, call=call: lf().with_columns(call()),
            }
        else:
            contexts = {
                "select": lambda lf=lf, call=call: lf().select(call()),
                "group_by": lambda lf=lf, call=call: lf().group_by("g").agg(call()),
                "over": lambda lf=lf, call=call: lf().select(call().over("g")),
            }
        for context, build in contexts.items():
            streams = context not in KNOWN_FALLBACKS.get(name, ())
            marks = []
            if (name, context) in GRAPH_PANICS:
                reason = "Polars 2.1 panics drawing this streaming plan (GRAPH_PANICS)"
                marks.append(pytest.mark.xfail(raises=BaseException, strict=True, reason=reason))
            out.append(
                pytest.param(name, context, build, streams, id=f"{name}-{context}", marks=marks)
            )
    return out


CASES = cases()
BINARY = pl.LazyFrame({"actual": [1, 0, -1, 1], "predicted": [1, 1, -1, 0], "g": [0, 1, 0, 1]})


@pytest.mark.parametrize(("name", "context", "build", "streams"), CASES)
def test_streaming_engine_falls_back_only_where_known(name, context, build, streams, capfd):
    # Other families' queries are planned, not run: one of them (sort_by of search_sorted
    # counts, then first(), in a streaming group_by) crashes Polars 2.1 now and then.
    core = REGISTRY[name].family in CORE_FAMILIES
    found = fallbacks(build(), capfd, run=core)
    if streams:
        assert found == []
    else:
        assert found, f"{name} in {context} streams now: take it off KNOWN_FALLBACKS"


@pytest.mark.parametrize("options", ["", "-average binary"])
@pytest.mark.parametrize("kind", ["int", "bool"])
def test_binary_fmeasure_streams(options, kind, capfd):
    lf = BINARY if kind == "int" else BINARY.with_columns(pl.col("actual", "predicted") == 1)
    expr = mp.fmeasure("actual", "predicted", options)
    assert fallbacks(lf.select(expr), capfd) == []
    assert fallbacks(lf.group_by("g").agg(expr), capfd) == []


def test_every_multilabel_function_is_checked():
    checked = {case.values[0] for case in CASES if case.values[3]}
    core = {
        n
        for n in mp.FUNCTIONS
        if REGISTRY.get(n) and REGISTRY[n].family == "multilabel" and REGISTRY[n].kind != "table"
    }
    assert core and core <= checked


def test_no_multilabel_function_is_excused():
    excused = {n for n in KNOWN_FALLBACKS if REGISTRY[n].family in CORE_FAMILIES}
    assert not excused


def test_the_check_sees_a_fallback(capfd):
    lf = pl.LazyFrame({"x": [1, 2, 3]})
    assert fallbacks(lf.select(pl.col("x").implode()), capfd)
    udf = pl.col("x").map_batches(lambda s: s, return_dtype=pl.Int64).sum()
    assert fallbacks(lf.select(udf), capfd)


# ---------------------------------------------------------------- each statistic once
LISTS = pl.LazyFrame({"actual": [["a", "b"], ["c"]], "predicted": [["a"], ["c", "d"]]})


def plan(expr: pl.Expr) -> str:
    return LISTS.select(expr).explain(engine="streaming")


@pytest.mark.parametrize(
    "name",
    [
        "micro_f1",
        "micro_precision",
        "micro_jaccard",
        "samples_f1",
        "samples_recall",
        "subset_accuracy",
    ],
)
def test_each_row_statistic_is_computed_once(name, monkeypatch):
    monkeypatch.setenv("MLSQL_NATIVE", "0")  # the portable expressions (native: test_native_polars)
    text = plan(getattr(mp, name)("actual", "predicted"))
    assert text.count(".intersection(") == 1, text
    assert 1 <= text.count("n_unique") <= 2, text  # |A| and |P|, each at most once


def test_micro_average_sums_three_statistics(monkeypatch):
    monkeypatch.setenv("MLSQL_NATIVE", "0")
    text = plan(mp.micro_fbeta("actual", "predicted", beta=2))
    assert text.count(".sum()") == 4, text  # tp, |A|, |P| and the count of known rows


def test_the_type_guard_leaves_no_trace_in_the_plan():
    text = plan(mp.micro_f1("actual", "predicted"))
    assert "python" not in text.lower() and "udf" not in text.lower(), text
