"""Spark aggregates in bounded memory: no Column aggregate collects its group's rows unless listed.

Every Spark aggregate of the registry (and its ``sample_weight`` form) is built on a
small table of its data kind, and its optimised plan is read: a ``collect_list``,
``collect_set`` or ``array_agg`` there holds a group's rows in one array, which at
warehouse scale is one task's heap. :data:`COLLECTING` lists the aggregates that
still do, each with the reason no bounded exact Column form exists: the list is the
documentation of what is unbounded (``ms.evaluate`` is the bounded form of those).
A listed aggregate that no longer collects fails too, so the list stays true.

The class-wise measures over a known class universe
(:func:`mlsql.spark.families.single_label.over_labels`) count per class and are
checked here against scikit-learn's ``labels``.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

pytest.importorskip("pyspark")

from pyspark.sql import functions as F

import mlsql.spark as ms
from mlsql._errors import MlsqlError
from mlsql._registry import Measure, measures
from mlsql.spark.families.single_label import CLASS_MEASURES, over_labels
from tests.engines.spark_engine import frame, session
from tests.references import REFERENCES, tables

#: every test here is long: Spark's own tests, where each Spark call plans for a second (with
#: the Spark engine's doctests, a tenth of the README's suite)
pytestmark = pytest.mark.long

ROWS_IN_ONE_ARRAY = re.compile(r"\b(collect_list|collect_set|array_agg)\(", re.IGNORECASE)

CLASSES = (
    "Spark has no exact aggregate that counts per value: without the classes known in advance "
    "the counts per class need the group's rows (over_labels counts per given class, bounded)"
)
RANKED = (
    "the area under a curve needs the group's rows sorted by score; no streaming aggregate "
    "gives it exactly"
)
CENTRED = (
    "exact to 1e-12 only centred on the group's mean, which one streaming pass of DOUBLEs does "
    "not know: var_pop/covar_pop (Welford updates) drift by 5e-7 relative at a 1e12 offset, 6e-4 "
    "at 1e15 (mlsql's Java aggregate sums exact products instead)"
)
#: the measures whose co-moments come from mlsql's Java aggregate
CENTRED_MEASURES = ("r2", "rse", "rrse", "explained_variance", "pearson_corr", "hivemall_r2")
#: aggregates that still collect a group's rows (unweighted and weighted), with the reason
COLLECTING: dict[str, str] = {
    "rae": "Σ|y - mean(y)| needs the mean before the pass over y: two passes",
    **dict.fromkeys(("area_under_pr", "auc", "average_precision_score", "hivemall_auc"), RANKED),
    **dict.fromkeys(("multilabel_average_precision", "multilabel_roc_auc"), RANKED),
    "multilabel_brier_score": "the label universe is a union of the rows' label sets, which no "
    "Spark aggregate forms: the distinct label sets are collected (collect_set)",
    **dict.fromkeys(
        ("expected_calibration_error", "multiclass_calibration_error"),
        "a sum per bin is bounded but overflowed Spark's planner at 1000 bins; the (bin, gap) "
        "pairs are collected and sorted instead",
    ),
    **dict.fromkeys(
        ("binned_auc", "binned_average_precision_score"),
        "a sum per threshold is bounded but overflows Spark's planner as the bins do; the "
        "(bin, label) pairs are collected and sorted instead",
    ),
    **dict.fromkeys(
        ("fleiss_kappa", "cochrans_q_statistic", "cochrans_q_p_value"),
        "the category or column totals: the (category, weight) cells are collected and sorted",
    ),
}
#: aggregates that, with the jar, find their class's value among the group's distinct
#: classes: one collect_set of the scalar label (memory grows with the classes, as the Java
#: cells' does), by (name, weighted)
CLASS_VALUES = {("minority_class", False), ("minority_class", True), ("majority_class", True)}
#: aggregates that collect only where mlsql's jar is not used (Spark Connect, the session
#: setting off, no JDK at install time)
COLLECTING_WITHOUT_JAR: dict[str, str] = {
    **dict.fromkeys(CENTRED_MEASURES, CENTRED),
    # with the jar their confusion cells are counted in Java (tests/test_spark_jvm.py)
    **dict.fromkeys((*CLASS_MEASURES, "majority_error", "minority_class"), CLASSES),
}
#: the same, only with sample_weight (unweighted, majority_class is Spark's mode)
COLLECTING_WEIGHTED_WITHOUT_JAR: dict[str, str] = {"majority_class": CLASSES}


def _aggregates() -> list[Measure]:
    """Spark's aggregates with a reference table (all but merge_counts, which reads stored
    counts, and cost_error and cost_map, which take a cost table: sums, and a cost table's
    rows)."""
    return [
        m
        for m in measures()
        if m.kind in ("aggregate", "counts")
        and m.available_in("spark")
        and m.name in REFERENCES
        and m.inputs != ("counts",)
    ]


def _jar_used() -> bool:
    """Whether the Spark Columns use mlsql's jar in the tests' session."""
    from mlsql.spark.jvm import co_moment

    return co_moment(F.lit(1.0)) is not None


def _named_plans(data: str, weighted: bool) -> dict[str, str]:
    """Each aggregate of data kind ``data`` (its reference's first parameter set) built in one
    ``agg`` on a small table: the analysed plan's text of each, by measure name."""
    table = tables(data, range(1))[0]
    df = frame(table).withColumn("w", F.lit(1.5))
    weight = {"sample_weight": df["w"]} if weighted else {}
    cols = [
        ms.FUNCTIONS[m.name](
            *(df[c] for c in m.inputs), **REFERENCES[m.name].params_for(table)[0], **weight
        ).alias(m.name)
        for m in _aggregates()
        if REFERENCES[m.name].data == data and (m.weighted or not weighted)
    ]
    analysed = df.agg(*cols)._jdf.queryExecution().analyzed()
    named = analysed.aggregateExpressions()
    return {named.apply(i).name(): named.apply(i).toString() for i in range(named.length())}


class _Plans:
    """The analysed plan of each Spark aggregate, plain and weighted, by (name, weighted):
    each data kind's ``agg`` analysed when one of its measures is first asked for (an xdist
    worker analyses only the kinds of the cases it runs, not every kind)."""

    def __init__(self) -> None:
        self.done: dict[tuple[str, bool], dict[str, str]] = {}

    def __getitem__(self, key: tuple[str, bool]) -> str:
        name, weighted = key
        kind = (REFERENCES[name].data, weighted)
        if kind not in self.done:
            self.done[kind] = _named_plans(*kind)
        return self.done[kind][name]


@pytest.fixture(scope="module")
def plans() -> _Plans:
    """The analysed plans, one ``agg`` per data kind, plain and weighted."""
    return _Plans()


def _cases() -> list[Any]:
    out = []
    for m in _aggregates():
        out.append(pytest.param(m.name, False, id=m.name))
        if m.weighted:
            out.append(pytest.param(m.name, True, id=f"{m.name}-weighted"))
    return out


@pytest.mark.parametrize(("name", "weighted"), _cases())
def test_spark_aggregate_collects_no_rows_unless_listed(plans, name, weighted):
    without_jar = name in COLLECTING_WITHOUT_JAR or (
        weighted and name in COLLECTING_WEIGHTED_WITHOUT_JAR
    )
    listed = name in COLLECTING or (without_jar and not _jar_used())
    plan = plans[name, weighted]
    if (name, weighted) in CLASS_VALUES and _jar_used():
        assert len(re.findall(r"\bcollect_set\(", plan)) == 1, plan  # the classes, once
        plan = plan.replace("collect_set(", "classes(")
    collects = bool(ROWS_IN_ONE_ARRAY.search(plan))
    if listed:
        assert collects, f"{name} no longer collects its rows: take it off the list"
    else:
        assert not collects, f"{name} collects its group's rows (weighted={weighted})"


def test_the_lists_name_spark_aggregates():
    names = {m.name for m in _aggregates()}
    assert set(COLLECTING) <= names
    assert set(COLLECTING_WITHOUT_JAR) | set(COLLECTING_WEIGHTED_WITHOUT_JAR) <= names


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_centred_measures_collect_only_without_the_jar(weighted):
    """With mlsql's jar the centred regression measures read its Java co-moments (no group's
    rows in the plan); with ``spark.mlsql.jvm=false`` they collect, as their docstrings say."""
    spark = session()
    df = spark.createDataFrame([(1.0, 2.0, 0.5), (3.0, 2.5, 1.0)], "y double, p double, w double")
    w = {"sample_weight": "w"} if weighted else {}

    def plans() -> dict[str, str]:
        return {
            n: str(df.agg(ms.FUNCTIONS[n]("y", "p", **w))._jdf.queryExecution().optimizedPlan())
            for n in CENTRED_MEASURES
        }

    spark.conf.set("spark.mlsql.jvm", "false")
    try:
        off = plans()
    finally:
        spark.conf.unset("spark.mlsql.jvm")
    assert all(ROWS_IN_ONE_ARRAY.search(plan) for plan in off.values()), off
    if not _jar_used():
        pytest.skip("mlsql's jar is not used here (not built, or MLSQL_NATIVE=0)")
    on = plans()
    assert not any(ROWS_IN_ONE_ARRAY.search(plan) for plan in on.values()), on
    assert all("mlsql_co_moment" in plan for plan in on.values()), on


# ------------------------------------------------------------------ over a known class universe
def _rows(seed: int, n: int = 200) -> list[tuple[Any, Any, Any]]:
    rng = random.Random(seed)
    rows: list[tuple[Any, Any, Any]] = [
        (rng.choice("abcd"), rng.choice("abcd"), rng.randint(1, 4) / 2) for _ in range(n)
    ]
    return [*rows, (None, "a", 1.0), ("b", None, 1.0)]


def _sklearn(name: str, actual, predicted, labels, weights, params) -> float:
    sk = pytest.importorskip("sklearn.metrics")
    kwargs: dict[str, Any] = {"sample_weight": weights}
    if name in ("precision_score", "recall_score", "fbeta_score", "f1_score"):
        kwargs |= {"labels": labels, "average": params.get("average", "macro")}
        kwargs |= {"zero_division": 0}
        if name == "fbeta_score":
            kwargs["beta"] = params.get("beta", 1.0)
    if name == "cohen_kappa_score":
        kwargs |= {"labels": labels, "weights": params.get("weights")}
    return float(getattr(sk, name)(actual, predicted, **kwargs))


CASES = [
    ("precision_score", {}),
    ("recall_score", {"average": "weighted"}),
    ("f1_score", {}),
    ("f1_score", {"average": "micro"}),
    ("fbeta_score", {"beta": 2.0}),
    ("balanced_accuracy_score", {}),
    ("cohen_kappa_score", {}),
    ("cohen_kappa_score", {"weights": "quadratic"}),
    ("matthews_corrcoef", {}),
]


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_over_labels_matches_scikit_learn_with_its_labels(weighted):
    rows = _rows(7)
    known = [r for r in rows if r[0] is not None and r[1] is not None]
    labels = ["a", "b", "c", "d", "e"]  # "e" never occurs: a class with no rows
    df = session().createDataFrame(rows, "a string, p string, w double")
    w = {"sample_weight": "w"} if weighted else {}
    cols = [over_labels(name, "a", "p", labels, **w, **params) for name, params in CASES]
    got = df.agg(*cols).first()
    weights = [r[2] for r in known] if weighted else None
    for (name, params), value in zip(CASES, got, strict=True):
        a, p = [r[0] for r in known], [r[1] for r in known]
        want = _sklearn(name, a, p, labels, weights, params)
        assert value == pytest.approx(want, rel=1e-12, abs=1e-12), (name, params)


def test_over_labels_plan_is_bounded():
    df = session().createDataFrame(_rows(3), "a string, p string, w double")
    cols = [over_labels(name, "a", "p", ["a", "b", "c", "d"]) for name in CLASS_MEASURES]
    cols += [over_labels("cohen_kappa_score", "a", "p", ["a", "b", "c", "d"], sample_weight="w")]
    plan = str(df.agg(*cols)._jdf.queryExecution().optimizedPlan().toString())
    assert not ROWS_IN_ONE_ARRAY.search(plan)


def test_averages_over_their_labels_are_bounded():
    """precision, recall, F-beta and F1 with ``labels=`` count per label (tests/
    test_class_labels.py checks their values): their plan holds no group's rows, where the
    same aggregates without labels do."""
    df = session().createDataFrame(_rows(3), "a string, p string, w double")
    names = ("precision_score", "recall_score", "fbeta_score", "f1_score")
    labels = ["a", "b", "z"]
    cols = [getattr(ms, n)("a", "p", labels=labels) for n in names]
    cols += [getattr(ms, n)("a", "p", labels=labels, sample_weight="w") for n in names]
    plan = str(df.agg(*cols)._jdf.queryExecution().optimizedPlan().toString())
    assert not ROWS_IN_ONE_ARRAY.search(plan)
    collected = df.agg(ms.f1_score("a", "p"))._jdf.queryExecution().optimizedPlan().toString()
    assert ROWS_IN_ONE_ARRAY.search(str(collected))


def test_over_labels_a_class_outside_the_labels_is_an_error():
    df = session().createDataFrame(_rows(5), "a string, p string, w double")
    with pytest.raises(Exception, match=r"f1_score: a known row's actual or predicted class"):
        df.agg(over_labels("f1_score", "a", "p", ["a", "b", "c"])).first()


@pytest.mark.parametrize("labels", [[], ["a", 1], [1.5]])
def test_over_labels_checks_the_labels(labels):
    with pytest.raises(MlsqlError, match="The 'labels' parameter of f1_score must be"):
        over_labels("f1_score", "a", "p", labels)


def test_over_labels_over_integer_classes_and_groups():
    rows = [(g, a, p) for g in (1, 2) for a in range(3) for p in range(3) if (a + p + g) % 2]
    df = session().createDataFrame(rows, "g int, a int, p int")
    got = dict(
        df.groupBy("g").agg(over_labels("f1_score", "a", "p", [0, 1, 2, 7]).alias("v")).collect()
    )
    sk = pytest.importorskip("sklearn.metrics")
    for g in (1, 2):
        a = [r[1] for r in rows if r[0] == g]
        p = [r[2] for r in rows if r[0] == g]
        want = sk.f1_score(a, p, labels=[0, 1, 2, 7], average="macro", zero_division=0)
        assert got[g] == pytest.approx(want, rel=1e-12, abs=1e-12)


# ------------------------------------------------------------------ ms.evaluate over cells per bin
#: the measures ``ms.evaluate`` runs over cells per bin, with parameters that change the bins
BINNED_ASKED: list[Any] = [
    "binned_auc",
    ("binned_auc", {"thresholds": 5}),
    ("binned_average_precision_score", {"thresholds": 5}),
    ("binned_average_precision_score", {"thresholds": 2, "zero_division": 1}),
    "expected_calibration_error",
    ("expected_calibration_error", {"n_bins": 4, "norm": "l2"}),
    ("expected_calibration_error", {"n_bins": 3, "norm": "max"}),
]
CLASS_SCORES_ASKED: list[Any] = [
    "multiclass_calibration_error",
    ("multiclass_calibration_error", {"n_bins": 4, "norm": "max"}),
    ("multiclass_calibration_error", {"n_bins": 2, "norm": "l2"}),
]


def _scored_rows(seed: int, n: int = 300) -> list[tuple[Any, ...]]:
    """(g, actual, score, w) rows: scores on the grid points of 5 and 100 thresholds, off them,
    0 and 1 (several positives and negatives scored 1); weights with zeros and NULLs; NULL
    labels and scores; group 3 has one class only, group 4 only rows that weigh 0."""
    rng = random.Random(seed)
    rows: list[tuple[Any, ...]] = []
    for _ in range(n):
        kind = rng.randrange(5)
        score = (
            rng.randrange(5) / 4
            if kind == 0
            else rng.randrange(100) / 99
            if kind == 1
            else float(rng.choice((0, 1)))
            if kind == 2
            else rng.random()
        )
        weight = rng.choice((0.0, None, 0.5, 1.0, 2.25, rng.random() * 3))
        rows.append((rng.choice((1, 2)), rng.choice((0, 1)), score, weight))
    rows += [(1, None, 0.3, 1.0), (1, 1, None, 1.0), (2, 1, 1.0, 1.0), (2, 0, 1.0, 2.0)]
    rows += [(3, 1, rng.random(), 1.0) for _ in range(5)] + [(4, 1, 0.5, 0.0), (4, 0, 0.2, 0.0)]
    return rows


def _class_score_rows(seed: int, n: int = 200) -> list[tuple[Any, ...]]:
    """(g, actual, scores, w) rows over the classes a, b, c: ties, rows scoring no class,
    probabilities on bin edges, weights with zeros and NULLs."""
    rng = random.Random(seed)
    rows: list[tuple[Any, ...]] = []
    for _ in range(n):
        scores = {c: rng.choice((0.0, 0.25, 0.5, 1.0, rng.random())) for c in rng.sample("abc", 2)}
        if rng.random() < 0.05:
            scores = {}
        weight = rng.choice((0.0, None, 1.0, 2.5, rng.random()))
        rows.append((rng.choice((1, 2)), rng.choice("abc"), scores, weight))
    return [*rows, (1, None, {"a": 0.5}, 1.0), (2, "a", None, 1.0)]


def _arrays_hold_rows(plan: str) -> bool:
    """Whether an array of the optimised ``plan`` is filled from rows: an aggregate that
    collects with no aggregate of cells per bin (``__mlsql_b``, a bin's rows summed) below it.
    The binned measures' Columns run over such cells, at most groups x labels x bins of them."""
    lines = plan.splitlines()

    def depth(line: str) -> int:
        return len(line) - len(line.lstrip(" :+-|"))

    for k, line in enumerate(lines):
        if ROWS_IN_ONE_ARRAY.search(line):
            below = []
            for deeper in lines[k + 1 :]:
                if depth(deeper) <= depth(line):
                    break
                below.append(deeper.lstrip(" :+-|"))
            if not any(b.startswith("Aggregate") and "AS __mlsql_b#" in b for b in below):
                return True
    return False


def _evaluated(df, asked, weighted):
    w = {"sample_weight": "w"} if weighted else {}
    out = ms.evaluate(df, "a", "s", asked, by="g", **w)
    return out, {(r["g"], r["measure"]): r["estimate"] for r in out.collect()}


def _one_level(df, asked, weighted):
    """Each measure's own Column per group (one level over the rows), by (g, measure label)."""
    from mlsql._evaluate import front as EV

    items = EV.items(asked, weighted)
    w = {"sample_weight": df["w"]} if weighted else {}
    cols = [
        ms.FUNCTIONS[i.name](df["a"], df["s"], **w, **i.params).alias(f"v{k}")
        for k, i in enumerate(items)
    ]
    out = {}
    for r in df.groupBy("g").agg(*cols).collect():
        for k, i in enumerate(items):
            out[r["g"], i.label] = r[f"v{k}"]
    return out


def _duckdb(table, asked, weighted):
    import mlsql

    w = {"sample_weight": "w"} if weighted else {}
    got = mlsql.evaluate(table, "a", "s", asked, by="g", con=mlsql.connect(), **w).fetchall()
    return {(g, m): v for g, m, v in got}


def _same(got, want):
    assert set(got) == set(want)
    for k, v in want.items():
        if v is None:
            assert got[k] is None, k
        else:
            assert got[k] == pytest.approx(v, rel=1e-12, abs=1e-12, nan_ok=True), (k, got[k], v)


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_evaluate_counts_per_bin_the_binned_and_calibration_measures(weighted):
    """``ms.evaluate`` of the binned AUC/AP and the calibration errors collects no rows (its
    plan holds no array of a group's rows) and gives the values of each measure's own Column
    and of DuckDB's ``evaluate``."""
    import pyarrow as pa

    rows = _scored_rows(11)
    schema = "g int, a int, s double, w double"
    df = session().createDataFrame(rows, schema)
    out, got = _evaluated(df, BINNED_ASKED, weighted)
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    assert not _arrays_hold_rows(plan), plan
    _same(got, _one_level(df, BINNED_ASKED, weighted))
    table = pa.Table.from_pylist([dict(zip("gasw", r, strict=True)) for r in rows])
    _same(got, _duckdb(table, BINNED_ASKED, weighted))


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_evaluate_counts_per_bin_the_multiclass_calibration_error(weighted):
    import pyarrow as pa

    rows = _class_score_rows(5)
    schema = "g int, a string, s map<string, double>, w double"
    df = session().createDataFrame(rows, schema)
    out, got = _evaluated(df, CLASS_SCORES_ASKED, weighted)
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    assert not ROWS_IN_ONE_ARRAY.search(plan), plan
    _same(got, _one_level(df, CLASS_SCORES_ASKED, weighted))
    scores = pa.map_(pa.string(), pa.float64())
    table = pa.table(
        {
            "g": [r[0] for r in rows],
            "a": [r[1] for r in rows],
            "s": pa.array([None if r[2] is None else list(r[2].items()) for r in rows], scores),
            "w": [r[3] for r in rows],
        }
    )
    _same(got, _duckdb(table, CLASS_SCORES_ASKED, weighted))


def test_the_docs_name_the_measures_evaluate_counts_per_bin_or_category():
    from mlsql.spark import evaluate_agreement, evaluate_bins, evaluate_ranks
    from mlsql.spark.families import _memory

    assert set(_memory.BINNED) == set(evaluate_bins.BINNED)
    assert set(_memory.AGREED) == set(evaluate_agreement.AGREEMENT)
    assert set(_memory.RUNS) == set(evaluate_ranks.RANKED)
    for name in evaluate_ranks.RANKED:
        assert _memory.SORTED_RUNS in (ms.FUNCTIONS[name].__doc__ or ""), name
    for name in evaluate_bins.BINNED:
        assert _memory.BINS in (ms.FUNCTIONS[name].__doc__ or ""), name
    for name in evaluate_agreement.AGREEMENT:
        assert _memory.CATEGORIES in (ms.FUNCTIONS[name].__doc__ or ""), name


def test_evaluate_binned_grid_points_stay_in_their_bins():
    """Each grid point k / (thresholds - 1), the score a cell of bin k is given, is in bin k
    (the cells' value rests on it), for grids up to 1000 thresholds and the largest."""
    from mlsql.measures import scores as SC
    from mlsql.spark._build import OPS

    grids = session().createDataFrame([(t,) for t in (*range(2, 1001), 100000)], "t long")
    points = grids.select(
        "t", F.explode(F.sequence(F.lit(0).cast("long"), F.col("t") - 1)).alias("k")
    )
    bins = SC.grid_bin(OPS, F.col("k") / (F.col("t") - 1), F.col("t")).cast("bigint")
    assert points.where(bins != F.col("k")).count() == 0


@pytest.mark.parametrize(
    ("asked", "score", "got"),
    [
        ("binned_auc", 1.5, "above 1"),
        ("binned_average_precision_score", -0.25, "below 0"),
        ("binned_auc", float("nan"), "NaN"),
        ("expected_calibration_error", 1.5, "above 1"),
        ("expected_calibration_error", float("inf"), "Got inf."),
    ],
)
def test_evaluate_per_bin_keeps_the_columns_verdicts(asked, score, got):
    """A bad score raises in ``evaluate`` the message of the measure's own Column."""
    rows = [(1, 1, 0.5, 1.0), (1, 0, score, 1.0), (1, None, 7.0, 1.0)]
    df = session().createDataFrame(rows, "g int, a int, s double, w double")
    with pytest.raises(Exception) as own:
        df.agg(ms.FUNCTIONS[asked](df["a"], df["s"])).first()
    message = re.search(rf"{asked} takes [^\n]*? Got [^\n]*?\.", str(own.value))
    assert message is not None and got in message.group(0), str(own.value)
    message = message.group(0)
    with pytest.raises(Exception, match=re.escape(message)):
        ms.evaluate(df, "a", "s", [asked], by="g").collect()


# ------------------------------------------------------------------ ms.evaluate over sorted runs
RANKED_ASKED = ["auc", "average_precision_score", "area_under_pr", ("auc", {"zero_division": 1})]


def _sklearn_ranked(rows, weighted):
    """scikit-learn's AUC and AP per group over the known rows (a group of both classes)."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    out = {}
    for g in {r[0] for r in rows}:
        known = [r for r in rows if r[0] == g and None not in r[1:3]]
        if weighted:
            known = [r for r in known if r[3] is not None]
        y, s = [r[1] for r in known], [r[2] for r in known]
        w = [r[3] for r in known] if weighted else None
        if len({a for a, v in zip(y, w or [1] * len(y), strict=True) if v > 0}) == 2:
            out[g, "auc"] = roc_auc_score(y, s, sample_weight=w)
            out[g, "average_precision_score"] = average_precision_score(y, s, sample_weight=w)
    return out


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_evaluate_sorts_runs_for_auc_and_average_precision(weighted):
    """``ms.evaluate`` of AUC, AP and Spark's area under the PR curve collects no rows (its plan
    holds no array) and gives scikit-learn's values, each measure's own Column's and DuckDB's."""
    import pyarrow as pa

    rows = _scored_rows(13)
    df = session().createDataFrame(rows, "g int, a int, s double, w double")
    asked = [*RANKED_ASKED, *([] if weighted else [("hivemall_auc", {})])]
    out, got = _evaluated(df, asked, weighted)
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    assert not ROWS_IN_ONE_ARRAY.search(plan), plan
    reference = _sklearn_ranked(rows, weighted)
    assert len(reference) >= 4
    for key, want in reference.items():
        assert got[key] == pytest.approx(want, rel=1e-12), key
    # hivemall_auc's Column takes Hivemall's order (score, label); evaluate maps the roles
    own = {k: v for k, v in got.items() if k[1] != "hivemall_auc"}
    _same(own, _one_level(df, RANKED_ASKED, weighted))
    table = pa.Table.from_pylist([dict(zip("gasw", r, strict=True)) for r in rows])
    _same(got, _duckdb(table, asked, weighted))


@pytest.mark.parametrize(
    ("asked", "label", "score", "got"),
    [
        ("auc", 2, 0.5, "Got 2"),
        ("average_precision_score", 1, float("nan"), "NaN"),
        ("area_under_pr", 1, float("-inf"), "Got -inf."),
    ],
)
def test_evaluate_over_runs_keeps_the_columns_verdicts(asked, label, score, got):
    rows = [(1, 1, 0.5, 1.0), (1, label, score, 1.0), (1, None, float("nan"), 1.0)]
    df = session().createDataFrame(rows, "g int, a int, s double, w double")
    with pytest.raises(Exception) as own:
        df.agg(ms.FUNCTIONS[asked](df["a"], df["s"])).first()
    message = re.search(rf"{asked} takes [^\n]*? Got [^\n]*?\.", str(own.value))
    assert message is not None and got in message.group(0), str(own.value)
    with pytest.raises(Exception, match=re.escape(message.group(0))):
        ms.evaluate(df, "a", "s", [asked], by="g").collect()


# ------------------------------------------------------------------ ms.evaluate over cells per category
def _ratings_rows(seed: int, n: int = 150) -> list[tuple[Any, ...]]:
    """(g, ratings, w) rows of 3 raters over 4 categories (a NULL rating left out makes a row of
    fewer raters, so none here), NULL lists, weights with zeros and NULLs; group 3 all agree."""
    rng = random.Random(seed)
    rows: list[tuple[Any, ...]] = [
        (
            rng.choice((1, 2)),
            [rng.choice("abcd") for _ in range(3)],
            rng.choice((0.0, None, 1.0, 2.5, rng.random())),
        )
        for _ in range(n)
    ]
    return [*rows, (1, None, 1.0), (3, ["a", "a", "a"], 1.0), (3, ["a", "a", "a"], 2.0)]


def _outcome_rows(seed: int, n: int = 150) -> list[tuple[Any, ...]]:
    """(g, outcomes, w) rows of 4 models' 0/1 outcomes, a NULL outcome making a row unknown,
    NULL lists, weights with zeros and NULLs; group 3 all successes."""
    rng = random.Random(seed)
    rows: list[tuple[Any, ...]] = [
        (
            rng.choice((1, 2)),
            [rng.choice((0, 1)) for _ in range(4)],
            rng.choice((0.0, None, 1.0, 2.5, rng.random())),
        )
        for _ in range(n)
    ]
    return [*rows, (1, None, 1.0), (2, [1, None, 0, 1], 1.0), (3, [1, 1, 1, 1], 1.0)]


AGREEMENT_CASES = [
    (_ratings_rows, "array<string>", ["fleiss_kappa"]),
    (_outcome_rows, "array<int>", ["cochrans_q_statistic", "cochrans_q_p_value"]),
]


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
@pytest.mark.parametrize(("make", "kind", "asked"), AGREEMENT_CASES, ids=["fleiss", "cochran"])
def test_evaluate_counts_per_category_the_agreement_measures(make, kind, asked, weighted):
    """``ms.evaluate`` of Fleiss' kappa and Cochran's Q collects no rows and gives the values of
    each measure's own Column and of DuckDB's ``evaluate``."""
    import pyarrow as pa

    import mlsql

    rows = make(3)
    df = session().createDataFrame(rows, f"g int, a {kind}, w double")
    w = {"sample_weight": "w"} if weighted else {}
    out = ms.evaluate(df, "a", None, asked, by="g", **w)
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    assert not ROWS_IN_ONE_ARRAY.search(plan), plan
    got = {(r["g"], r["measure"]): r["estimate"] for r in out.collect()}
    weight = {"sample_weight": df["w"]} if weighted else {}
    cols = [ms.FUNCTIONS[name](df["a"], **weight).alias(name) for name in asked]
    own = {(r["g"], name): r[name] for r in df.groupBy("g").agg(*cols).collect() for name in asked}
    _same(got, own)
    table = pa.Table.from_pylist([dict(zip("gaw", r, strict=True)) for r in rows])
    con = mlsql.connect()
    duck = mlsql.evaluate(table, "a", "a", asked, by="g", con=con, **w).fetchall()
    _same(got, {(g, m): v for g, m, v in duck})


@pytest.mark.parametrize(
    ("kind", "row", "asked"),
    [
        ("array<string>", ["a", "b"], "fleiss_kappa"),
        ("array<string>", ["a", None, "b"], "fleiss_kappa"),
        ("array<int>", [1, 0], "cochrans_q_statistic"),
        ("array<int>", [1, 2, 0], "cochrans_q_p_value"),
    ],
)
def test_evaluate_per_category_keeps_the_columns_verdicts(kind, row, asked):
    """Rows of different lengths, or a value that is no 0/1 outcome, raise in ``evaluate`` the
    message of the measure's own Column."""
    first = ["a", "b", "a"] if kind == "array<string>" else [1, 0, 1]
    df = session().createDataFrame([(1, first), (1, row)], f"g int, a {kind}")
    with pytest.raises(Exception) as own:
        df.agg(ms.FUNCTIONS[asked](df["a"])).first()
    message = re.search(rf"{asked} [^\n]*?\.(?=[\"' \n]|$)", str(own.value))
    assert message is not None, str(own.value)
    with pytest.raises(Exception, match=re.escape(message.group(0))):
        ms.evaluate(df, "a", None, [asked], by="g").collect()


def _label_set_rows(seed: int, n: int = 150) -> list[tuple[Any, ...]]:
    """(g, actual labels, scores, w) rows over the labels a-e: label sets of 0-3 labels,
    scores of 0-3 labels (a true label unscored counts 0), a group holding a label no other
    has, weights with zeros and NULLs, and rows with a NULL side."""
    rng = random.Random(seed)
    rows: list[tuple[Any, ...]] = []
    for _ in range(n):
        g = rng.choice((1, 2, None))
        pool = "abcd" if g != 2 else "abcde"
        actual = rng.sample(pool, rng.randint(0, 3))
        scores = {
            x: rng.choice((0.0, 0.5, 1.0, rng.random()))
            for x in rng.sample(pool, rng.randint(0, 3))
        }
        rows.append((g, actual, scores, rng.choice((0.0, None, 1.0, 2.5, rng.random()))))
    return [*rows, (1, None, {"a": 0.5}, 1.0), (2, ["a"], None, 1.0), (3, ["z"], {"y": 0.25}, 0.0)]


def _brier_oracle(rows, weighted):
    """Σ w (p - y)² over each group's cells / Σ w / the group's labels (true or scored, of
    the known rows of positive weight when weighted): plain Python, by group."""
    out = {}
    for g in {r[0] for r in rows}:
        known = [r for r in rows if r[0] == g and r[1] is not None and r[2] is not None]
        if weighted:
            known = [r for r in known if r[3] is not None]
        w = [(r[3] if weighted else 1.0) for r in known]
        labels = {
            x
            for r, wr in zip(known, w, strict=True)
            if wr > 0 or not weighted
            for x in [*r[1], *r[2]]
        }
        total = sum(w)
        if not known or not labels or total == 0:
            out[g] = None
            continue
        loss = sum(
            wr * sum((r[2].get(x, 0.0) - (x in r[1])) ** 2 for x in labels)
            for r, wr in zip(known, w, strict=True)
        )
        out[g] = loss / total / len(labels)
    return out


BRIER_ASKED = ["multilabel_brier_score", ("multilabel_brier_score", {"average": "samples"})]


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_evaluate_counts_the_labels_of_the_brier_score(weighted):
    """``ms.evaluate`` of ``multilabel_brier_score`` collects no label sets (the labels are
    counted per group first): its values are a plain-Python oracle's, the Column's and
    DuckDB's ``evaluate``'s."""
    import pyarrow as pa

    rows = _label_set_rows(3)
    schema = "g int, a array<string>, s map<string, double>, w double"
    df = session().createDataFrame(rows, schema)
    out, got = _evaluated(df, BRIER_ASKED, weighted)
    plan = out._jdf.queryExecution().optimizedPlan().toString()
    assert not ROWS_IN_ONE_ARRAY.search(plan), plan
    oracle = _brier_oracle(rows, weighted)
    labels = {m for _, m in got}
    assert len(labels) == 2
    _same(got, {(g, m): v for g, v in oracle.items() for m in labels})
    _same(got, _one_level(df, BRIER_ASKED, weighted))
    scores = pa.map_(pa.string(), pa.float64())
    table = pa.table(
        {
            "g": [r[0] for r in rows],
            "a": pa.array([r[1] for r in rows], pa.list_(pa.string())),
            "s": pa.array([None if r[2] is None else list(r[2].items()) for r in rows], scores),
            "w": [r[3] for r in rows],
        }
    )
    _same(got, _duckdb(table, BRIER_ASKED, weighted))


def test_evaluate_brier_keeps_the_columns_verdict():
    """A probability above 1 raises the Column's own error through ``ms.evaluate``."""
    df = session().createDataFrame(
        [(1, ["a"], {"a": 1.5}, 1.0)], "g int, a array<string>, s map<string, double>, w double"
    )
    asked = "multilabel_brier_score"
    with pytest.raises(Exception) as own:
        df.agg(ms.FUNCTIONS[asked](df["a"], df["s"])).first()
    message = re.search(rf"{asked} [^\n]*?\.(?=[\"' \n]|$)", str(own.value))
    assert message is not None, str(own.value)
    with pytest.raises(Exception, match=re.escape(message.group(0))):
        ms.evaluate(df, "a", "s", [asked], by="g").collect()


def test_the_docs_name_evaluate_for_the_brier_score():
    from mlsql.spark import evaluate_brier
    from mlsql.spark.families import _memory

    assert set(_memory.COUNTED_LABELS) == set(evaluate_brier.BRIER)
    for name in evaluate_brier.BRIER:
        assert _memory.LABEL_COUNTS in (ms.FUNCTIONS[name].__doc__ or ""), name
