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
    "exact to 1e-12 only centred on the group's mean, which one streaming pass does not know: "
    "var_pop/covar_pop (Welford updates) drift by 5e-7 relative at a 1e12 offset, 6e-4 at 1e15"
)
#: aggregates that still collect a group's rows (unweighted and weighted), with the reason
COLLECTING: dict[str, str] = {
    **dict.fromkeys(CLASS_MEASURES, CLASSES),
    "minority_class": CLASSES,
    "majority_error": CLASSES,
    "rae": "Σ|y - mean(y)| needs the mean before the pass over y: two passes",
    **dict.fromkeys(
        ("r2", "rse", "rrse", "explained_variance", "pearson_corr", "hivemall_r2"),
        CENTRED,
    ),
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
#: aggregates that collect only with sample_weight (the plain form is bounded)
COLLECTING_WEIGHTED: dict[str, str] = {
    "majority_class": CLASSES,
}


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
    listed = name in COLLECTING or (weighted and name in COLLECTING_WEIGHTED)
    collects = bool(ROWS_IN_ONE_ARRAY.search(plans[name, weighted]))
    if listed:
        assert collects, f"{name} no longer collects its rows: take it off the list"
    else:
        assert not collects, f"{name} collects its group's rows (weighted={weighted})"


def test_the_lists_name_spark_aggregates():
    names = {m.name for m in _aggregates()}
    assert set(COLLECTING) <= names
    assert set(COLLECTING_WEIGHTED) <= names


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
