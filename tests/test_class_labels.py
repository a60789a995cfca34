"""precision, recall, F-beta and F1 over given ``labels`` (scikit-learn's), on every engine.

scikit-learn's ``precision_recall_fscore_support(labels=...)`` is the reference: the
average runs over the labels only, a label no row holds is a class without rows (its
ratios undefined: ``zero_division``), and a row of another class still counts against
the labels it meets (a false positive of its predicted label, a false negative of its
actual one). Under ``micro`` the labels' counts are pooled. Spark counts per label (one
count per label and side), so these aggregates hold no group's rows.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pyarrow as pa
import pytest

from tests.test_kappa_matrix import params
from tests.test_single_label_tables import close
from tests.verdicts import verdict_of

#: the Spark runs of the per-engine cases are long tests (tests/conftest.py reads it)
LONG_ENGINES = ("spark",)
#: the data's classes: x is not among the labels, z is a label no row holds
CLASSES = ["a", "b", "c", "d", "x"]
LABELS = ["c", "a", "z", "b"]
MEASURES = ("precision_score", "recall_score", "fbeta_score", "f1_score")
AVERAGES = ("micro", "macro", "weighted")


def table(n: int = 80, seed: int = 81, classes: list[Any] = CLASSES) -> pa.Table:
    rng = random.Random(seed)
    return pa.table(
        {
            "actual": [rng.choice(classes) for _ in range(n)],
            "predicted": [rng.choice(classes) for _ in range(n)],
            "w": [rng.choice([0.5, 1.0, 2.25, 3.0]) for _ in range(n)],
            "g": [rng.choice(["p", "q"]) for _ in range(n)],
        }
    )


def sklearn(name: str, t: pa.Table, weighted: bool = False, **given: Any) -> float:
    """scikit-learn's value of ``name`` over table ``t``'s rows."""
    from sklearn import metrics

    a, p, w = (t[c].to_pylist() for c in ("actual", "predicted", "w"))
    extra = {"beta": 2.0} if name == "fbeta_score" else {}
    fn = getattr(metrics, name)
    given = {"zero_division": 0.0, **given}  # mlsql's default, without scikit-learn's warning
    return float(fn(a, p, sample_weight=w if weighted else None, **extra, **given))


def calls_and_wants(
    t: pa.Table, engine: Any, labels: list[Any]
) -> tuple[list[tuple[str, tuple[str, ...], dict[str, Any]]], list[float]]:
    calls, want = [], []
    for name in MEASURES:
        extra = {"beta": 2.0} if name == "fbeta_score" else {}
        for average in AVERAGES:
            for weighted in (False, True):
                given = {"average": average, "labels": labels, **extra}
                weight = {"sample_weight": "w"} if weighted else {}
                calls.append((name, ("actual", "predicted"), {**params(engine, **given), **weight}))
                want.append(sklearn(name, t, weighted, average=average, labels=labels))
    return calls, want


def test_averages_over_labels_are_scikit_learn_s(engine):
    """Every average, counted and weighted, a class outside the labels and a label no row
    holds."""
    t = table()
    calls, want = calls_and_wants(t, engine, LABELS)
    got = engine.many(t, calls)
    wrong = [
        (c[0], c[2], g, x) for c, g, x in zip(calls, got, want, strict=True) if not close(g, x)
    ]
    assert not wrong, wrong


def test_labels_over_integer_classes_by_group(engine):
    """Integer classes and labels (one never seen, one class outside), per group."""
    t = table(60, seed=82, classes=[0, 1, 2, 7])
    labels = [2, 0, 9, 1]
    calls, _ = calls_and_wants(t, engine, labels)
    got = engine.many_by(t, calls, "g")
    for group, values in got.items():
        rows = t.filter(pa.compute.equal(t["g"], group))
        _, want = calls_and_wants(rows, engine, labels)
        assert all(close(g, x) for g, x in zip(values, want, strict=True)), (group, values, want)


def test_zero_division_nan_leaves_a_label_without_rows_out(engine):
    """zero_division NaN: the label no row holds is left out of the macro mean, as
    scikit-learn's zero_division=np.nan leaves it; 'ignore' does the same."""
    t = table(40, seed=83)
    got = engine.many(
        t,
        [
            ("precision_score", ("actual", "predicted"), params(engine, labels=LABELS, zero_division=zd))
            for zd in ("NaN", "ignore", 1)
        ],
    )  # fmt: skip
    nan = sklearn("precision_score", t, average="macro", labels=LABELS, zero_division=math.nan)
    one = sklearn("precision_score", t, average="macro", labels=LABELS, zero_division=1.0)
    assert close(got[0], nan) and close(got[1], nan) and close(got[2], one), (got, nan, one)
    assert not close(nan, one)  # the label without rows makes a difference


#: each engine's name of an integer class column's type in the labels= message
INTEGER_TYPE = {"duckdb": "INTEGER", "polars": "Int32", "spark": "int"}


@pytest.mark.parametrize("name", MEASURES)
def test_labels_of_another_kind_than_the_classes_are_refused(engine, name):
    """Text labels over integer classes: the labels= message of cohen_kappa_score's."""
    t = pa.table(
        {
            "actual": pa.array([0, 1, 2, 0], pa.int32()),
            "predicted": pa.array([1, 1, 2, 0], pa.int32()),
        }
    )
    want = (
        f"The 'labels' parameter of {name} must hold labels of the columns' type "
        f"({INTEGER_TYPE[engine.name]}): integer. Got ['0', '1'] instead."
    )
    with pytest.raises(Exception) as err:
        engine.aggregate(name, t, **params(engine, labels=["0", "1"]))
    got = verdict_of(err.value)
    assert not got.foreign and got.error == want, got


def test_repeated_labels_are_refused(engine):
    want = (
        "The 'labels' parameter of f1_score must be a non-empty list of distinct labels of "
        "one kind (text, integers or booleans) (or NULL for the classes seen). Got [1, 1] "
        "instead."
    )
    t = pa.table({"actual": [1, 2], "predicted": [1, 1]})
    with pytest.raises(Exception) as err:
        engine.aggregate("f1_score", t, **params(engine, labels=[1, 1]))
    assert str(err.value).removeprefix("Invalid Input Error: ") == want


def test_evaluate_takes_labels_and_bootstrap_refuses_them():
    """evaluate on DuckDB and Polars gives scikit-learn's value; bootstrap resamples the
    classes seen, so it refuses labels."""
    import polars as pl

    import mlsql
    import mlsql.polars as mp

    t = table()
    want = sklearn("f1_score", t, average="weighted", labels=LABELS)
    measures = [("f1_score", {"average": "weighted", "labels": LABELS})]
    got = mlsql.evaluate(t, "actual", "predicted", measures=measures).fetchall()
    assert close(got[0][1], want)
    frame = pl.from_arrow(t)
    assert close(mp.evaluate(frame, "actual", "predicted", measures=measures)["estimate"][0], want)
    with pytest.raises(Exception, match="bootstrap cannot resample f1_score over labels"):
        mp.bootstrap(frame, "actual", "predicted", measures=measures, n_resamples=10, seed=1)


#: each engine's name of a boolean class column's type in the labels= message
BOOLEAN_TYPE = {"duckdb": "BOOLEAN", "polars": "Boolean", "spark": "boolean"}


def test_boolean_classes_take_boolean_labels_only(engine):
    """Boolean classes: boolean labels are scikit-learn's, integer ones are refused in the
    labels= message, as over integer classes text ones are (Polars had refused both)."""
    a = [True, True, False, False, True, True]
    p = [True, False, False, True, True, False]
    t = pa.table({"actual": a, "predicted": p})
    calls = [
        ("precision_score", ("actual", "predicted"), params(engine, labels=[True])),
        ("recall_score", ("actual", "predicted"), params(engine, labels=[False, True], average="micro")),
        ("cohen_kappa_score", ("actual", "predicted"), params(engine, labels=[True, False])),
    ]  # fmt: skip
    from sklearn import metrics

    want = [
        metrics.precision_score(a, p, labels=[True], average="macro"),
        metrics.recall_score(a, p, labels=[False, True], average="micro"),
        metrics.cohen_kappa_score(a, p, labels=[True, False]),
    ]
    got = engine.many(t, calls)
    assert all(close(g, x) for g, x in zip(got, want, strict=True)), (got, want)
    want_error = (
        "The 'labels' parameter of f1_score must hold labels of the columns' type "
        f"({BOOLEAN_TYPE[engine.name]}): boolean. Got [1] instead."
    )
    with pytest.raises(Exception) as err:
        engine.aggregate("f1_score", t, **params(engine, labels=[1]))
    got_error = verdict_of(err.value)
    assert not got_error.foreign and got_error.error == want_error, got_error


#: (actual's type, predicted's type, the type both become, its largest integer)
WIDTHS = [
    (pa.int8(), pa.int32(), {"duckdb": "INTEGER", "polars": "Int32", "spark": "int"}, 2**31 - 1),
    (pa.int32(), pa.int8(), {"duckdb": "INTEGER", "polars": "Int32", "spark": "int"}, 2**31 - 1),
    (pa.int8(), pa.int8(), {"duckdb": "TINYINT", "polars": "Int8", "spark": "tinyint"}, 127),
]


@pytest.mark.parametrize(
    ("left", "right", "common", "high"), WIDTHS, ids=["int8-int32", "int32-int8", "int8-int8"]
)
@pytest.mark.parametrize("name", ["cohen_kappa_score", "precision_score"])
def test_labels_are_checked_against_the_type_both_columns_become(
    engine, name, left, right, common, high
):
    """Integer columns of two widths: a label the wider one holds is a label (scikit-learn's
    value), one neither holds is refused naming the type both become. Polars and Spark had
    checked the labels against actual's type alone, so an Int8 actual beside an Int32
    predicted refused 300, which DuckDB (and PostgreSQL) took."""
    from sklearn import metrics

    a, p = [1, 2, 3, 1, 2], [1, 3, 3, 2, 2]
    t = pa.table({"actual": pa.array(a, left), "predicted": pa.array(p, right)})
    extra = {"average": "macro"} if name == "precision_score" else {}
    fits = [1, 2, 300] if high > 127 else [1, 2, 3]
    got = engine.aggregate(name, t, **params(engine, labels=fits, **extra))
    reference = getattr(metrics, name)
    zero = {"zero_division": 0.0} if name == "precision_score" else {}
    assert close(got, float(reference(a, p, labels=fits, **extra, **zero))), got
    outside = high + 1
    want = (
        f"The 'labels' parameter of {name} holds {outside}, which the columns' label type "
        f"({common[engine.name]}) cannot hold: it holds integers from {-high - 1} to {high}."
    )
    with pytest.raises(Exception) as err:
        engine.aggregate(name, t, **params(engine, labels=[1, outside], **extra))
    got_error = verdict_of(err.value)
    assert not got_error.foreign and got_error.error == want, got_error
