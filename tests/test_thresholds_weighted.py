"""``sample_weight`` on calibration_table and label_thresholds, every engine.

scikit-learn's ``calibration_curve`` takes no weights, so the weighted table is
checked against the plain-Python oracle (``tests/oracle_thresholds.py``: count a
bin's total weight, mean_score and observed_rate weighted means) with float
weights, and against the unweighted table over each row repeated ``w`` times
with integer weights. A row weighing 0 is dropped, as in the curves; a NULL
weight makes the row unknown. label_thresholds is checked against the
brute-force oracle with weights (every count a sum of exact fractions of the
weights) and against repeated rows.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pyarrow as pa
import pytest

from mlsql import _params as P
from tests import oracle_thresholds as O
from tests.references import close
from tests.test_curves_weighted import repeated, weights
from tests.test_reliability_inputs import assert_mlsql_error
from tests.test_single_label_tables import run_table
from tests.test_thresholds import (
    CAL_COLUMNS,
    TH_COLUMNS,
    _oracle_rows,
    _probabilities,
    _rows,
    _same,
    _scores_table,
)


def assert_same_rows(got: list[tuple], want: list[tuple]) -> None:
    """Row by row equal: numbers to 1e-12 relative (weighted counts are floats), NaN to NaN."""
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want, strict=True):
        assert len(g) == len(w)
        for a, b in zip(g, w, strict=True):
            if isinstance(b, (int, float)) and not isinstance(b, bool):
                assert close(a, float(b)), (g, w)
            else:
                assert a == b, (g, w)


def _weighted(seed: int, integer: bool) -> pa.Table:
    """:func:`tests.test_thresholds._probabilities` with weights ``w`` and groups ``g``."""
    t = _probabilities(seed)
    rng = random.Random(seed)
    t = t.append_column("g", pa.array([rng.choice(["a", "b"]) for _ in range(len(t))]))
    return t.append_column("w", pa.array(weights(seed, len(t), integer), pa.float64()))


@pytest.mark.parametrize("n_bins", [1, 7, 10])
def test_weighted_calibration_table_equals_the_oracle(engine, n_bins):
    for seed in range(1 if engine.name == "spark" else 3):
        t = _weighted(seed, False)
        got = run_table(
            engine, "calibration_table", t, "actual", "prob", n_bins=n_bins, sample_weight="w"
        )
        pairs = list(zip(t["actual"].to_pylist(), t["prob"].to_pylist(), strict=True))
        want = O.calibration_table(pairs, n_bins, t["w"].to_pylist())
        _same(_rows(got, CAL_COLUMNS), want)


@pytest.mark.parametrize("by", [None, ["g"]])
def test_integer_weights_equal_repeated_rows(engine, by):
    for seed in range(1 if engine.name == "spark" else 3):
        t = _weighted(seed, True)
        got = run_table(
            engine, "calibration_table", t, "actual", "prob", n_bins=7, by=by, sample_weight="w"
        )
        want = run_table(
            engine, "calibration_table", repeated(t), "actual", "prob", n_bins=7, by=by
        )
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g[:-5] == w[:-5]  # the group and the bin
            assert g[-5:] == pytest.approx(w[-5:], rel=1e-12), (seed, g, w)


def test_a_bin_whose_rows_weigh_nothing_has_no_row(engine):
    t = pa.table(
        {"actual": [1, 0, 1, 0], "prob": [0.05, 0.55, 0.6, 0.95], "w": [2.0, 0.0, 1.0, 0.0]}
    )
    got = run_table(engine, "calibration_table", t, "actual", "prob", n_bins=2, sample_weight="w")
    assert [tuple(float(x) for x in r) for r in got] == [
        (0.0, 0.0, 0.5, 2.0, 0.05, 1.0),
        (1.0, 0.5, 1.0, 1.0, 0.6, 1.0),
    ]


@pytest.mark.parametrize(
    ("bad", "got"),
    [(-0.5, "a negative number"), (float("nan"), "NaN"), (float("inf"), "inf")],
)
def test_bad_weight_is_an_error(engine, bad, got):
    t = _weighted(1, False)
    w: list[Any] = [1.0] * len(t)
    w[2] = bad
    t = t.set_column(t.schema.get_field_index("w"), "w", pa.array(w))
    message = P.sample_weight_message("calibration_table", got)
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, "calibration_table", t, "actual", "prob", sample_weight="w")
    assert_mlsql_error(engine, info.value, when_read=True)


# ------------------------------------------------------------------ label_thresholds
def _scored(seed: int, form: str, integer: bool) -> pa.Table:
    """:func:`tests.test_thresholds._scores_table` with weights ``w`` and groups ``g``."""
    t = _scores_table(seed, form=form, probabilities=True)
    rng = random.Random(seed)
    t = t.append_column("g", pa.array([rng.choice(["a", "b"]) for _ in range(len(t))]))
    return t.append_column("w", pa.array(weights(seed + 5, len(t), integer), pa.float64()))


@pytest.mark.parametrize(
    ("seed", "form", "params"),
    [
        (0, "map", {}),
        (1, "entries", {"beta": 2.0}),
        (2, "map", {"beta": 0.5, "zero_division": 1}),
        (3, "entries", {"n_bins": 4}),
    ],
)
def test_weighted_label_thresholds_equal_the_oracle(engine, seed, form, params):
    if engine.name == "spark" and seed not in (0, 3):
        pytest.skip("Spark: two cases (the tables are the same engine-neutral formulas)")
    t = _scored(seed, form, False)
    got = run_table(engine, "label_thresholds", t, "actual", "scores", sample_weight="w", **params)
    want = O.label_thresholds(_oracle_rows(t), weights=t["w"].to_pylist(), **params)
    _same(_rows(got, TH_COLUMNS), want)


@pytest.mark.parametrize("form", ["map", "entries"])
def test_weighted_label_thresholds_integer_weights_equal_repeated_rows(engine, form):
    for seed in range(1 if engine.name == "spark" else 3):
        t = _scored(seed, form, True)
        for by, params in ((None, {}), (["g"], {"beta": 2.0}), (None, {"n_bins": 4})):
            got = run_table(
                engine,
                "label_thresholds",
                t,
                "actual",
                "scores",
                by=by,
                sample_weight="w",
                **params,
            )
            want = run_table(
                engine, "label_thresholds", repeated(t), "actual", "scores", by=by, **params
            )
            assert_same_rows(got, want)


def test_weighted_label_thresholds_bad_weight_is_an_error(engine):
    t = _scored(1, "map", False)
    w: list[Any] = [1.0] * len(t)
    w[2] = -1.0
    t = t.set_column(t.schema.get_field_index("w"), "w", pa.array(w))
    message = P.sample_weight_message("label_thresholds", "a negative number")
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, "label_thresholds", t, "actual", "scores", sample_weight="w")
    assert_mlsql_error(engine, info.value, when_read=True)
