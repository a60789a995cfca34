"""Edge cases of the label tables, on every engine: numbers worked out by hand or by scikit-learn.

A label of the universe that never occurs, groups whose rows are all
unknown, an empty table, one label only, all-empty predictions, labels
outside the universe, and scikit-learn's figures on random indicator
matrices.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from tests import oracle_labels as O
from tests.batches import CASE, stack
from tests.engines import label_table
from tests.test_label_conformance import needs
from tests.test_label_properties import ZERO_DIVISIONS, same

NAN = float("nan")


def report(engine: Any, rows: list, **params: Any) -> dict[str, Any]:
    needs(engine, "multilabel_report")
    out = engine.table_function("multilabel_report", label_table(rows), **params).to_pylist()
    assert len(out) == 1
    return out[0]


def metrics(engine: Any, rows: list, **params: Any) -> dict[Any, dict[str, Any]]:
    needs(engine, "label_metrics")
    out = engine.table_function("label_metrics", label_table(rows), **params).to_pylist()
    return {r["label"]: r for r in out}


def assert_matches_oracle(
    engine: Any, rows: list, labels: Any = None, **params: Any
) -> tuple[dict[str, Any], dict[Any, dict[str, Any]]]:
    """The report and the per-label table agree with the oracle; both are returned.

    One query each (Spark runs every query as jobs of its own): the tests check
    their hand-worked figures on the tables returned here.
    """
    if labels is not None:
        params["labels"] = labels
    zd = params.get("zero_division", 0)
    beta = params.get("beta")
    got = report(engine, rows, **params)
    for key, want in O.report(rows, labels, beta, zd).items():
        assert same(got[key], want), f"{key}: {got[key]} != {want}"
    got_labels = metrics(engine, rows, **params)
    for want in O.label_metrics(rows, labels, beta, zd):
        for key, value in want.items():
            assert same(got_labels[want["label"]][key], value), (want["label"], key)
    return got, got_labels


@pytest.mark.long_cases(
    "spark-0-0.5-0.5",
    "spark-1-1.0-1.0",
    "spark-nan-1.0-1.0",
    "spark-diagnose-1.0-1.0",
    "spark-ignore-1.0-1.0",
)
@pytest.mark.parametrize(
    ("zd", "macro_f1", "macro_precision"),
    [(0, 0.5, 0.5), (1, 1.0, 1.0), (NAN, 1.0, 1.0), ("diagnose", 1.0, 1.0), ("ignore", 1.0, 1.0)],
    ids=str,
)
def test_a_universe_label_that_never_occurs(engine, zd, macro_f1, macro_precision):
    rows = [(["a"], ["a"]), (["a"], ["a"])]
    r, got = assert_matches_oracle(engine, rows, ["a", "b"], zero_division=zd)
    b = got["b"]
    assert (b["tp"], b["fp"], b["fn"], b["tn"], b["support"]) == (0, 0, 0, 2, 0)
    assert b["accuracy"] == 1.0
    assert r["n_labels"] == 2
    assert r["macro_f1"] == macro_f1
    assert r["macro_precision"] == macro_precision
    assert r["weighted_f1"] == 1.0  # b has no support: no weight
    assert r["hamming_loss"] == 0.0
    assert (r["clp"], r["mlp"], r["wlp"]) == (0.5, 0.5, 0.5)


@pytest.mark.long_cases("spark")
def test_labels_outside_the_universe_are_ignored(engine):
    rows = [(["a", "x"], ["a", "y"]), (["b"], ["x"])]
    got, per_label = assert_matches_oracle(engine, rows, ["a", "b"])
    # as if x and y were never there: rows (a | a), (b | -)
    assert got["n_labels"] == 2
    assert got["micro_precision"] == 1.0
    assert got["micro_recall"] == 0.5
    assert got["hamming_loss"] == 0.25
    assert got["subset_accuracy"] == 0.5
    assert sorted(per_label) == ["a", "b"]


@pytest.mark.long_cases("spark")
def test_groups_without_known_rows(engine):
    needs(engine, "label_metrics", "multilabel_report")
    rows = [(None, ["a"]), (["a"], None), (["a"], ["a", "b"]), (None, None)]
    groups = ["empty", "empty", "full", "empty"]
    table = label_table(rows, groups=groups)
    got = engine.table_function("multilabel_report", table, by=["g"]).to_pylist()
    assert [r["g"] for r in got] == ["empty", "full"]
    empty, full = got
    assert empty["n_rows"] == 0 and empty["n_labels"] == 0
    assert all(v is None for k, v in empty.items() if k not in ("g", "n_rows", "n_labels"))
    assert full["n_rows"] == 1 and full["micro_precision"] == 0.5
    per_label = engine.table_function("label_metrics", table, by=["g"], labels=["a", "b"])
    rows_empty = [r for r in per_label.to_pylist() if r["g"] == "empty"]
    assert [(r["label"], r["tp"], r["tn"], r["precision"], r["accuracy"]) for r in rows_empty] == [
        ("a", 0, 0, None, None),
        ("b", 0, 0, None, None),
    ]
    with_universe = engine.table_function("multilabel_report", table, by=["g"], labels=["a"])
    assert with_universe.to_pylist()[0]["n_labels"] == 1
    assert with_universe.to_pylist()[0]["macro_f1"] is None


@pytest.mark.long_cases("spark")
def test_an_empty_table_gives_one_empty_report_row(engine):
    needs(engine, "label_metrics", "multilabel_report")
    table = label_table([], pa.string())
    got = engine.table_function("multilabel_report", table).to_pylist()
    assert len(got) == 1 and got[0]["n_rows"] == 0 and got[0]["micro_f1"] is None
    assert engine.table_function("label_metrics", table).num_rows == 0
    per_label = engine.table_function("label_metrics", table, labels=["a"]).to_pylist()
    assert [(r["label"], r["tp"], r["precision"]) for r in per_label] == [("a", 0, None)]


@pytest.mark.long_cases("spark-0", "spark-1", "spark-nan", "spark-diagnose", "spark-ignore")
@pytest.mark.parametrize("zd", ZERO_DIVISIONS, ids=str)
def test_one_label_only(engine, zd):
    rows = [(["a"], ["a"]), (["a"], []), ([], ["a"]), ([], [])]
    got, _ = assert_matches_oracle(engine, rows, zero_division=zd)
    assert got["n_labels"] == 1
    assert got["macro_f1"] == got["micro_f1"] == 0.5
    assert got["weighted_f1"] == 0.5
    assert got["hamming_loss"] == 0.5


@pytest.mark.long_cases("spark-0", "spark-1", "spark-nan", "spark-diagnose", "spark-ignore")
@pytest.mark.parametrize("zd", ZERO_DIVISIONS, ids=str)
def test_all_empty_predictions(engine, zd):
    rows = [(["a", "b"], []), (["b"], []), ([], [])]
    got, _ = assert_matches_oracle(engine, rows, zero_division=zd)
    assert got["micro_recall"] == 0.0
    assert got["macro_recall"] == 0.0
    assert (got["clp"], got["mlp"], got["wlp"]) == (0.0, 1.0, 1.0)
    assert_matches_oracle(engine, rows, ["a", "b", "c"], zero_division=zd, beta=2.0)


def test_duplicates_and_null_elements_count_once(engine):
    rows = [(["a", "a", None], ["a", None, "a", "b"]), (["b", "b"], ["b"])]
    got = metrics(engine, rows)
    assert [(r["label"], r["tp"], r["fp"], r["fn"], r["tn"]) for r in got.values()] == [
        ("a", 1, 0, 0, 1),
        ("b", 1, 1, 0, 0),
    ]


@pytest.mark.long_cases("spark")
def test_beta_adds_fbeta_and_renames_the_report_f_columns(engine):
    needs(engine, "label_metrics", "multilabel_report")
    rows = [(["a", "b"], ["a"]), (["b"], ["a", "b"])]
    plain = engine.table_function("multilabel_report", label_table(rows))
    with_beta = engine.table_function("multilabel_report", label_table(rows), beta=2.0)
    assert "micro_f1" in plain.column_names and "micro_fbeta" not in plain.column_names
    f_columns = [c for c in with_beta.column_names if "_f" in c]
    assert f_columns == [
        "micro_fbeta",
        "macro_fbeta",
        "macro_fbeta_of_means",
        "weighted_fbeta",
        "samples_fbeta",
    ]
    per_label = engine.table_function("label_metrics", label_table(rows), beta=2.0)
    assert "fbeta" in per_label.column_names and "f1" in per_label.column_names
    assert "fbeta" not in engine.table_function("label_metrics", label_table(rows)).column_names


SEEDS = [0, 1, 2]


def indicator_matrices(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random 40 x 5 indicator matrices (truth, prediction): label 3 never true, 4 never predicted."""
    rng = np.random.default_rng(seed)
    n, k = 40, 5
    y = (rng.random((n, k)) < 0.3).astype(int)
    p = (rng.random((n, k)) < 0.3).astype(int)
    p[:, 4] = 0  # a label never predicted
    y[:, 3] = 0  # a label never true
    return y, p


@pytest.mark.first(rank=19)
@pytest.mark.long_cases("spark-0", "spark-1")
@pytest.mark.parametrize("zd", [0, 1])
def test_scikit_learn_on_random_indicator_matrices(engine, zd):
    """Each seed's matrices are one case of a batch (tests/batches.py): one query per table."""
    from sklearn import metrics as skm

    needs(engine, "label_metrics", "multilabel_report")
    labels = [f"L{j}" for j in range(5)]
    matrices = [indicator_matrices(seed) for seed in SEEDS]
    table = stack(
        [
            label_table(
                [
                    (
                        [labels[j] for j in np.flatnonzero(yi)],
                        [labels[j] for j in np.flatnonzero(pi)],
                    )
                    for yi, pi in zip(y, p, strict=True)
                ],
                pa.string(),
            )
            for y, p in matrices
        ]
    )
    params = {"labels": labels, "zero_division": zd, "by": [CASE]}
    reports = engine.table_function("multilabel_report", table, **params).to_pylist()
    with_beta = engine.table_function("multilabel_report", table, beta=2.0, **params).to_pylist()
    per_label = engine.table_function("label_metrics", table, **params).to_pylist()
    assert [r[CASE] for r in reports] == [r[CASE] for r in with_beta] == list(range(len(SEEDS)))
    for seed, (y, p), got, got_beta in zip(SEEDS, matrices, reports, with_beta, strict=True):
        for average in ("micro", "macro", "weighted", "samples"):
            prec, rec, f1, _ = skm.precision_recall_fscore_support(
                y, p, average=average, zero_division=zd
            )
            f2 = skm.fbeta_score(y, p, beta=2, average=average, zero_division=zd)
            jac = skm.jaccard_score(y, p, average=average, zero_division=zd)
            for name, want in (("precision", prec), ("recall", rec), ("f1", f1), ("jaccard", jac)):
                assert math.isclose(got[f"{average}_{name}"], want, rel_tol=1e-9), (
                    seed,
                    average,
                    name,
                )
            assert math.isclose(got_beta[f"{average}_fbeta"], f2, rel_tol=1e-9), (seed, average)
        assert math.isclose(got["hamming_loss"], skm.hamming_loss(y, p), rel_tol=1e-12), seed
        assert math.isclose(got["subset_accuracy"], skm.accuracy_score(y, p), rel_tol=1e-12), seed
        cm = skm.multilabel_confusion_matrix(y, p)
        mine = {r["label"]: r for r in per_label if r[CASE] == SEEDS.index(seed)}
        assert sorted(mine) == labels, seed
        for j, label in enumerate(labels):
            (tn, fp), (fn, tp) = cm[j]
            r = mine[label]
            assert (r["tp"], r["fp"], r["fn"], r["tn"]) == (tp, fp, fn, tn), (seed, label)
