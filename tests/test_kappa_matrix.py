"""cohen_kappa_score with a custom disagreement-weight matrix and its labels (issue 34).

The reference is statsmodels' ``cohens_kappa(table, weights=W)`` (its 2-D weights, kappa =
1 - Σ w o / Σ w e) on the confusion matrix over the labels, the rows whose classes are not
labels left out as scikit-learn's ``confusion_matrix(labels=...)`` leaves them (with
sample weights, the table holds their sums); scikit-learn's ``linear`` and ``quadratic``
kappas are the matrices |i - j| and (i - j)². The messages are written out here.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from mlsql._sqlexpr import Sql
from tests.oracle_agreement import KAPPA_RESULTS as KAPPA_TESTS  # each test's statsmodels field
from tests.test_single_label_tables import close
from tests.verdicts import verdict_of

#: the data's classes; the labels take three of them in another order and one never seen
#: the Spark runs of the per-engine cases are long tests (tests/conftest.py reads it): the
#: README's suite keeps to its ten minutes
LONG_ENGINES = ("spark",)
CLASSES = ["a", "b", "c", "d"]
LABELS = ["c", "a", "z", "b"]
#: a matrix that is neither symmetric nor a function of |i - j|
MATRIX = [[0, 1, 4, 2], [3, 0, 1, 5], [1, 2, 0, 1], [4, 1, 2, 0]]
RULE = (
    "one of 'linear', 'quadratic', or a square matrix of finite numbers >= 0 with a row and "
    "a column per label of labels"
)


def table(n: int = 60, seed: int = 34) -> pa.Table:
    rng = random.Random(seed)
    return pa.table(
        {
            "actual": [rng.choice(CLASSES) for _ in range(n)],
            "predicted": [rng.choice(CLASSES) for _ in range(n)],
            "w": [rng.choice([0.5, 1.0, 2.25, 3.0]) for _ in range(n)],
        }
    )


def value(engine: Any, x: Any) -> Any:
    """A list parameter as the engine takes it: a DuckDB list literal, else the list."""
    return Sql(repr(x)) if engine.name == "duckdb" and isinstance(x, list) else x


def params(engine: Any, **given: Any) -> dict[str, Any]:
    return {k: value(engine, v) for k, v in given.items()}


def statsmodels_kappa(t: pa.Table, labels: list[str], matrix: Any, weighted: bool) -> float:
    from statsmodels.stats.inter_rater import cohens_kappa

    cells = np.zeros((len(labels), len(labels)))
    rows = zip(*(t[c].to_pylist() for c in ("actual", "predicted", "w")), strict=True)
    for a, p, w in rows:
        if a in labels and p in labels:  # scikit-learn's confusion_matrix(labels=...)
            cells[labels.index(a), labels.index(p)] += w if weighted else 1
    return float(cohens_kappa(cells, weights=np.asarray(matrix, float)).kappa)


def test_matrix_kappa_is_statsmodels(engine):
    """Counted and weighted, on random rows (a class outside the labels, a label never seen)."""
    t = table()
    given = params(engine, weights=MATRIX, labels=LABELS)
    calls = [
        ("cohen_kappa_score", ("actual", "predicted"), given),
        ("cohen_kappa_score", ("actual", "predicted"), {**given, "sample_weight": "w"}),
    ]
    got = engine.many(t, calls)
    assert close(got[0], statsmodels_kappa(t, LABELS, MATRIX, weighted=False))
    assert close(got[1], statsmodels_kappa(t, LABELS, MATRIX, weighted=True))


def test_named_weights_are_their_matrices(engine):
    """scikit-learn's linear and quadratic kappas over labels are the |i - j| and (i - j)²
    matrices; without labels, over the sorted classes."""
    from sklearn.metrics import cohen_kappa_score

    t = table(seed=7)
    a, p, w = (t[c].to_pylist() for c in ("actual", "predicted", "w"))
    k = len(LABELS)
    calls, want = [], []
    for name, power in (("linear", 1), ("quadratic", 2)):
        matrix = [[abs(i - j) ** power for j in range(k)] for i in range(k)]
        sorted_matrix = [[abs(i - j) ** power for j in range(4)] for i in range(4)]
        reference = cohen_kappa_score(a, p, weights=name, labels=LABELS, sample_weight=w)
        calls += [
            ("cohen_kappa_score", ("actual", "predicted"), params(engine, weights=matrix, labels=LABELS, sample_weight="w")),
            ("cohen_kappa_score", ("actual", "predicted"), params(engine, weights=name, labels=LABELS, sample_weight="w")),
            ("cohen_kappa_score", ("actual", "predicted"), params(engine, weights=sorted_matrix, labels=CLASSES)),
        ]  # fmt: skip
        want += [reference, reference, cohen_kappa_score(a, p, weights=name)]
    got = engine.many(t, calls)
    assert all(close(g, x) for g, x in zip(got, want, strict=True)), (got, want)


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        ({"weights": [[0, 1], [1, 0]]}, "[[0, 1], [1, 0]]"),  # a matrix without its labels
        ({"weights": [[0, 1], [1, 0]], "labels": LABELS}, "[[0, 1], [1, 0]]"),  # 2 x 2, 4 labels
        ({"weights": [[0, 1], [-1, 0]], "labels": ["a", "b"]}, "[[0, 1], [-1, 0]]"),
        ({"weights": [[0, 1, 2], [1, 0, 1]], "labels": ["a", "b"]}, "[[0, 1, 2], [1, 0, 1]]"),
    ],
    ids=["no labels", "not their size", "negative", "not square"],
)
def test_bad_matrices_have_one_message(engine, given, shown):
    want = f"The 'weights' parameter of cohen_kappa_score must be {RULE}. Got {shown} instead."
    with pytest.raises(Exception) as err:
        engine.aggregate("cohen_kappa_score", table(8), **params(engine, **given))
    assert str(err.value).removeprefix("Invalid Input Error: ") == want


def test_repeated_labels_are_refused(engine):
    want = (
        "The 'labels' parameter of cohen_kappa_score must be a non-empty list of distinct "
        "labels of one kind (text, integers or booleans) (or NULL for the classes seen). "
        "Got [1, 1] instead."
    )
    t = pa.table({"actual": [1, 2], "predicted": [1, 1]})
    with pytest.raises(Exception) as err:
        engine.aggregate("cohen_kappa_score", t, **params(engine, labels=[1, 1]))
    assert str(err.value).removeprefix("Invalid Input Error: ") == want


def test_evaluate_takes_the_matrix_and_bootstrap_refuses_it():
    """evaluate (DuckDB and Polars; Spark's is the aggregate above) gives the aggregate's value;
    bootstrap resamples the classes seen, so it refuses labels and a matrix."""
    import polars as pl

    import mlsql
    import mlsql.polars as mp

    t = table()
    want = statsmodels_kappa(t, LABELS, MATRIX, weighted=False)
    measures = [("cohen_kappa_score", {"weights": MATRIX, "labels": LABELS})]
    got = mlsql.evaluate(t, "actual", "predicted", measures=measures).fetchall()
    assert close(got[0][1], want)
    frame = pl.from_arrow(t)
    assert close(mp.evaluate(frame, "actual", "predicted", measures=measures)["estimate"][0], want)
    with pytest.raises(Exception, match="bootstrap cannot resample cohen_kappa_score over labels"):
        mp.bootstrap(frame, "actual", "predicted", measures=measures, n_resamples=10, seed=1)


#: each engine's name of an integer class column's type in the labels= message
INTEGER_TYPE = {"duckdb": "INTEGER", "polars": "Int32", "spark": "int"}


@pytest.mark.parametrize(
    "given",
    [{"weights": [[0, 1], [1, 0]]}, {"weights": "linear"}, {}],
    ids=["matrix", "linear", "plain"],
)
def test_labels_of_another_kind_than_the_classes_are_refused(engine, given):
    """Text labels over integer classes: the labels= message of the label-list measures,
    where DuckDB had raised a Binder Error and Polars an InvalidOperationError."""
    t = pa.table(
        {
            "actual": pa.array([0, 1, 2, 0], pa.int32()),
            "predicted": pa.array([1, 1, 2, 0], pa.int32()),
        }
    )
    want = (
        "The 'labels' parameter of cohen_kappa_score must hold labels of the columns' type "
        f"({INTEGER_TYPE[engine.name]}): integer. Got ['0', '1'] instead."
    )
    with pytest.raises(Exception) as err:
        engine.aggregate("cohen_kappa_score", t, **params(engine, labels=["0", "1"], **given))
    got = verdict_of(err.value)  # mlsql's message out of the engine's wrapper
    assert not got.foreign and got.error == want, got
    # the same labels as integers are taken
    got = engine.aggregate("cohen_kappa_score", t, **params(engine, labels=[0, 1], **given))
    assert got is not None and math.isfinite(got)


# ------------------------------------------------------------------ the kappa tests' matrix


def statsmodels_tests(t: pa.Table, labels: list[str], weighted: bool, **given: Any) -> list[float]:
    """statsmodels' cohens_kappa(table, **given) on the (weighted) confusion matrix over the
    labels, rows outside them left out: each kappa test's field, in KAPPA_TESTS' order."""
    from statsmodels.stats.inter_rater import cohens_kappa

    cells = np.zeros((len(labels), len(labels)))
    rows = zip(*(t[c].to_pylist() for c in ("actual", "predicted", "w")), strict=True)
    for a, p, w in rows:
        if a in labels and p in labels:
            cells[labels.index(a), labels.index(p)] += w if weighted else 1
    if "weights" in given:
        given = {"weights": np.asarray(given["weights"], float)}
    result = cohens_kappa(cells, **given)
    return [float(getattr(result, field)) for field in KAPPA_TESTS.values()]


def random_matrix(rng: random.Random, k: int, zero_diagonal: bool) -> list[list[float]]:
    """k x k non-negative weights, some of them whole and some 0."""
    return [
        [
            0.0 if zero_diagonal and i == j else rng.choice([0, 1, 2, 5, rng.uniform(0, 3)])
            for j in range(k)
        ]
        for i in range(k)
    ]


@pytest.mark.long_cases("polars")
def test_kappa_tests_with_a_matrix_are_statsmodels(engine):
    """std_kappa, z, both p-values and the interval of statsmodels' cohens_kappa(table,
    weights=W) (its 2-D W as given, not rescaled) on a random table: a random matrix with a
    zero diagonal counted, one without it weighted (every cell weighs in the variances;
    there var_kappa, var_kappa0 and kappa through the standard error, z and the interval's
    upper end: Polars' weighted expressions take about a second each to plan)."""
    rng = random.Random(3)
    t = table(n=50, seed=3)
    calls, want = [], []
    for zero_diagonal, weighted in ((True, False), (False, True)):
        matrix = random_matrix(rng, len(LABELS), zero_diagonal)
        given = params(engine, weights=matrix, labels=LABELS)
        everything = statsmodels_tests(t, LABELS, weighted, weights=matrix)
        chosen = list(KAPPA_TESTS)
        if weighted:
            given["sample_weight"] = "w"
            chosen = ["cohen_kappa_std_error", "cohen_kappa_z_value", "cohen_kappa_high"]
        calls += [(name, ("actual", "predicted"), given) for name in chosen]
        want += [x for name, x in zip(KAPPA_TESTS, everything, strict=True) if name in chosen]
    got = engine.many(t, calls)
    assert all(math.isfinite(x) for x in want), want
    wrong = [(c[0], g, x) for c, g, x in zip(calls, got, want, strict=True) if not close(g, x)]
    assert not wrong, wrong


@pytest.mark.long
def test_kappa_tests_named_weights_are_their_matrices(engine):
    """The |i - j| and (i - j)² matrices over labels are weights 'linear' and 'quadratic' over
    them, both statsmodels' wt='linear' and wt='quadratic' on the table over the labels (it
    divides by (k - 1) or (k - 1)², to which the tests are invariant): var_kappa,
    var_kappa0 and kappa through the standard error, z and the interval's upper end."""
    t = table(seed=7)
    k = len(LABELS)
    chosen = ("cohen_kappa_std_error", "cohen_kappa_z_value", "cohen_kappa_high")
    calls, want = [], []
    for name, power in (("linear", 1), ("quadratic", 2)):
        matrix = [[abs(i - j) ** power for j in range(k)] for i in range(k)]
        everything = dict(
            zip(KAPPA_TESTS, statsmodels_tests(t, LABELS, weighted=False, wt=name), strict=True)
        )
        for weights in (matrix, name):
            given = params(engine, weights=weights, labels=LABELS)
            calls += [(test, ("actual", "predicted"), given) for test in chosen]
            want += [everything[test] for test in chosen]
    got = engine.many(t, calls)
    wrong = [(c[0], g, x) for c, g, x in zip(calls, got, want, strict=True) if not close(g, x)]
    assert not wrong, wrong


def test_kappa_tests_refuse_bad_matrices_with_cohen_kappa_scores_message(engine):
    """Each bad matrix of test_bad_matrices_have_one_message, given to a kappa test, gets
    cohen_kappa_score's message under the test's own name."""
    cases = [
        ({"weights": [[0, 1], [1, 0]]}, "[[0, 1], [1, 0]]"),
        ({"weights": [[0, 1], [1, 0]], "labels": LABELS}, "[[0, 1], [1, 0]]"),
        ({"weights": [[0, 1], [-1, 0]], "labels": ["a", "b"]}, "[[0, 1], [-1, 0]]"),
        ({"weights": [[0, 1, 2], [1, 0, 1]], "labels": ["a", "b"]}, "[[0, 1, 2], [1, 0, 1]]"),
    ]
    names = list(KAPPA_TESTS)
    for n, (given, shown) in enumerate(cases):
        name = names[n % len(names)] if n else names[-1]
        want = f"The 'weights' parameter of {name} must be {RULE}. Got {shown} instead."
        with pytest.raises(Exception) as err:
            engine.aggregate(name, table(8), **params(engine, **given))
        assert str(err.value).removeprefix("Invalid Input Error: ") == want, name
