"""binned_auc and binned_average_precision_score (torchmetrics' thresholds=N) on every engine.

The oracle (``tests.references``) re-derives torchmetrics' binned formulas in exact
fractions: the confusion counts at each threshold i / (N - 1) (a row positive where score >= threshold, compared in double
precision), then ``binary_auroc``'s trapezoid over the (fpr, tpr) points from threshold 1
down to 0 (no (0, 0) point), and ``binary_average_precision``'s -Σ (r[i+1] - r[i]) p[i] over
its precision-recall curve (precision 0 where nothing is predicted, the end point (1, 0)
appended), each rate 0 where its denominator is 0 (torchmetrics' safe division).
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction

import pyarrow as pa
import pytest

from tests.references import torch_binned_auroc, torch_binned_average_precision

#: the Spark cases run with the long tests (6-10 s each on two cores: a Spark query per case)
LONG_ENGINES = ("spark",)
COLUMNS = ("actual", "score")
MEASURES = ("binned_auc", "binned_average_precision_score")
ORACLES = {
    "binned_auc": torch_binned_auroc,
    "binned_average_precision_score": torch_binned_average_precision,
}


# ------------------------------------------------------------------ helpers
def table(actual, score, weight=None) -> pa.Table:
    columns = {"actual": pa.array(actual, pa.int64()), "score": pa.array(score, pa.float64())}
    if weight is not None:
        columns["w"] = pa.array(weight, pa.float64())
    return pa.table(columns)


def close(got, want) -> bool:
    return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15)


def both(engine, actual, score, thresholds, weight=None, **params):
    """Each measure's value (with ``weight``: as sample_weight) in one query."""
    extra = {"thresholds": thresholds, **params}
    if weight is not None:
        extra["sample_weight"] = "w"
    calls = [(m, COLUMNS, extra) for m in MEASURES]
    return dict(zip(MEASURES, engine.many(table(actual, score, weight), calls), strict=True))


# ------------------------------------------------------------------ worked examples
def test_the_roc_starts_at_threshold_one_not_at_the_origin(engine):
    """Thresholds 0 and 1: points (1/2, 1/2) (the rows scored 1) and (1, 1); the trapezoid
    between them is 3/8. The exact AUC of the bins, 1/2, also counts the segment from (0, 0),
    which torchmetrics' binned curve has not."""
    actual, score = [1, 0, 1, 0], [1.0, 1.0, 0.5, 0.2]
    assert torch_binned_auroc(actual, score, 2) == Fraction(3, 8)
    # precision-recall points (1/2, 1) at 0, (1/2, 1/2) at 1, then (1, 0): AP 1/2
    assert torch_binned_average_precision(actual, score, 2) == Fraction(1, 2)
    got = both(engine, actual, score, 2)
    assert close(got["binned_auc"], Fraction(3, 8))
    assert close(got["binned_average_precision_score"], Fraction(1, 2))


def test_scores_on_the_grid_give_the_exact_measures(engine):
    """Scores that are grid points other than 1 keep their order and ties in the bins: the
    binned measures equal auc and average_precision_score (the finer grid's limit)."""
    rng = random.Random(7)
    actual = [rng.randint(0, 1) for _ in range(50)]
    score = [rng.randint(0, 9) / 10 for _ in range(50)]
    calls = [
        ("binned_auc", COLUMNS, {"thresholds": 11}),
        ("auc", ("actual", "predicted"), {}),
        ("binned_average_precision_score", COLUMNS, {"thresholds": 11}),
        ("average_precision_score", COLUMNS, {}),
    ]
    data = table(actual, score).append_column("predicted", pa.array(score, pa.float64()))
    binned, exact, binned_ap, exact_ap = engine.many(data, calls)
    assert close(binned, exact) and close(binned_ap, exact_ap)
    assert close(binned, torch_binned_auroc(actual, score, 11))
    # a coarser grid ties scores that differ: another number
    coarse = both(engine, actual, score, 3)
    assert not close(coarse["binned_auc"], exact)
    assert close(coarse["binned_auc"], torch_binned_auroc(actual, score, 3))


# ------------------------------------------------------------------ random data
@pytest.mark.parametrize("thresholds", [2, 3, 11, 100, 1000])
def test_random_scores_match_torchmetrics_formulas(engine, thresholds):
    rng = random.Random(thresholds)
    n = 40
    actual = [rng.randint(0, 1) for _ in range(n)]
    grid = [i / (thresholds - 1) for i in range(thresholds)]
    score = []
    for _ in range(n):
        on_grid = rng.choice(grid)
        score.append(
            rng.choice([rng.random(), on_grid, math.nextafter(on_grid, -1.0), 0.0, 1.0, 0.5, -0.0])
        )
        score[-1] = min(max(score[-1], 0.0), 1.0)
    weight = [rng.choice([0.0, 0.5, 1.0, 2.0, 3.25]) for _ in range(n)]
    plain = both(engine, actual, score, thresholds)
    weighted = both(engine, actual, score, thresholds, weight)
    for name, oracle in ORACLES.items():
        assert close(plain[name], oracle(actual, score, thresholds)), name
        assert close(weighted[name], oracle(actual, score, thresholds, weight)), name


def test_the_default_grid_is_100_thresholds(engine):
    rng = random.Random(100)
    actual = [rng.randint(0, 1) for _ in range(30)]
    score = [rng.random() for _ in range(30)]
    calls = [(m, COLUMNS, {}) for m in MEASURES]
    got = engine.many(table(actual, score), calls)
    for name, value in zip(MEASURES, got, strict=True):
        assert close(value, ORACLES[name](actual, score, 100)), name


# ------------------------------------------------------------------ edge cases
def test_one_class_is_zero_division(engine):
    """torchmetrics gives 0 (safe division) where a class is missing; mlsql's zero_division."""
    positives = both(engine, [1, 1, 1], [0.2, 0.5, 1.0], 5)
    negatives = both(engine, [0, 0], [0.2, 0.5], 5)
    assert torch_binned_auroc([1, 1, 1], [0.2, 0.5, 1.0], 5) == 0
    assert positives["binned_auc"] == 0 and negatives["binned_auc"] == 0
    # AP with positives only is 1 (precision 1 everywhere), without positives undefined: 0
    assert torch_binned_average_precision([1, 1, 1], [0.2, 0.5, 1.0], 5) == 1
    assert torch_binned_average_precision([0, 0], [0.2, 0.5], 5) == 0
    assert positives["binned_average_precision_score"] == 1
    assert negatives["binned_average_precision_score"] == 0
    diagnose = both(engine, [0, 0], [0.2, 0.5], 5, zero_division="diagnose")
    assert diagnose == dict.fromkeys(MEASURES, 1.0)


def test_null_rows_are_skipped_and_none_known_is_null(engine):
    actual, score = [1, None, 0, 1, 0], [0.9, 0.1, None, 0.3, 0.4]
    got = both(engine, actual, score, 11)
    known = ([1, 1, 0], [0.9, 0.3, 0.4])
    for name, oracle in ORACLES.items():
        assert close(got[name], oracle(*known, 11)), name
    assert both(engine, [None, 1], [0.5, None], 11) == dict.fromkeys(MEASURES)


@pytest.mark.parametrize("bad", [1, 0, 100_001, 2.0, "10"])
def test_thresholds_must_be_a_whole_number_from_2(engine, bad):
    with pytest.raises(
        Exception,
        match=r"The 'thresholds' parameter of binned_auc must be a "
        r"whole number from 2 to 100000\. Got ",
    ):
        engine.aggregate("binned_auc", table([1, 0], [0.5, 0.2]), columns=COLUMNS, thresholds=bad)


@pytest.mark.parametrize(("bad", "got"), [(1.5, "above 1"), (-0.25, "below 0")])
def test_scores_outside_zero_one_are_errors(engine, bad, got):
    """The shared out-of-range message (torchmetrics would apply a sigmoid instead)."""
    message = f"binned_average_precision_score takes probabilities in [0, 1] for score. Got a value {got}."
    with pytest.raises(Exception, match=re.escape(message)):
        engine.aggregate(
            "binned_average_precision_score", table([1, 0], [bad, 0.2]), columns=COLUMNS
        )
