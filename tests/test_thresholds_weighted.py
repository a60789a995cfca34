"""``sample_weight`` on calibration_table and label_thresholds, every engine.

scikit-learn's ``calibration_curve`` takes no weights, so the weighted table is
checked against the plain-Python oracle (``tests/oracle_thresholds.py``: count a
bin's total weight, mean_score and observed_rate weighted means) with float
weights, and against the unweighted table over each row repeated ``w`` times
with integer weights. label_thresholds is checked against the brute-force
oracle with weights (every count a sum of exact fractions of the weights) and
against repeated rows. A row weighing 0 is dropped, as in the curves; a NULL
weight makes the row unknown.
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
from tests.test_curves_weighted import float_weights
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
from tests.weights import integer_weights, repeated, with_weights


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


def _grouped(t: pa.Table, seed: int) -> pa.Table:
    """``t`` with random groups ``g`` (a or b)."""
    rng = random.Random(seed)
    return t.append_column("g", pa.array([rng.choice(["a", "b"]) for _ in range(len(t))]))


def _bad_weight_at_a_known_row(t: pa.Table, bad: float) -> pa.Table:
    """``t`` with weights 1 but ``bad`` at its first row whose inputs are not NULL."""
    inputs = [c for c in t.column_names if c != "g"]
    rows = t.select(inputs).to_pylist()
    i = next(i for i, r in enumerate(rows) if all(v is not None for v in r.values()))
    w: list[Any] = [1.0] * len(t)
    w[i] = bad
    return with_weights(t, w)


# ------------------------------------------------------------------ calibration_table
@pytest.mark.parametrize("n_bins", [1, 7, 10])
def test_weighted_calibration_table_equals_the_oracle(engine, n_bins):
    for seed in range(1 if engine.name == "spark" else 3):
        t = _grouped(_probabilities(seed), seed)
        t = with_weights(t, float_weights(seed, len(t)))
        got = run_table(
            engine, "calibration_table", t, "actual", "prob", n_bins=n_bins, sample_weight="w"
        )
        pairs = list(zip(t["actual"].to_pylist(), t["prob"].to_pylist(), strict=True))
        want = O.calibration_table(pairs, n_bins, t["w"].to_pylist())
        _same(_rows(got, CAL_COLUMNS), want)


@pytest.mark.parametrize("by", [None, ["g"]])
def test_calibration_table_integer_weights_equal_repeated_rows(engine, by):
    for seed in range(1 if engine.name == "spark" else 3):
        t = _grouped(_probabilities(seed), seed)
        w = integer_weights(len(t), seed)
        got = run_table(
            engine,
            "calibration_table",
            with_weights(t, w),
            "actual",
            "prob",
            n_bins=7,
            by=by,
            sample_weight="w",
        )
        want = run_table(
            engine, "calibration_table", repeated(t, w), "actual", "prob", n_bins=7, by=by
        )
        assert_same_rows(got, want)


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
def test_calibration_table_bad_weight_is_an_error(engine, bad, got):
    t = _bad_weight_at_a_known_row(_probabilities(1), bad)
    message = P.sample_weight_message("calibration_table", got)
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, "calibration_table", t, "actual", "prob", sample_weight="w")
    assert_mlsql_error(engine, info.value, when_read=True)


# ------------------------------------------------------------------ label_thresholds
def _scored(seed: int, form: str) -> pa.Table:
    """:func:`tests.test_thresholds._scores_table` (probabilities) with groups ``g``."""
    return _grouped(_scores_table(seed, form=form, probabilities=True), seed)


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
    t = _scored(seed, form)
    t = with_weights(t, float_weights(seed + 5, len(t)))
    got = run_table(engine, "label_thresholds", t, "actual", "scores", sample_weight="w", **params)
    want = O.label_thresholds(_oracle_rows(t), weights=t["w"].to_pylist(), **params)
    _same(_rows(got, TH_COLUMNS), want)


@pytest.mark.parametrize("form", ["map", "entries"])
def test_label_thresholds_integer_weights_equal_repeated_rows(engine, form):
    for seed in range(1 if engine.name == "spark" else 3):
        t = _scored(seed, form)
        w = integer_weights(len(t), seed)
        for by, params in ((None, {}), (["g"], {"beta": 2.0}), (None, {"n_bins": 4})):
            got = run_table(
                engine,
                "label_thresholds",
                with_weights(t, w),
                "actual",
                "scores",
                by=by,
                sample_weight="w",
                **params,
            )
            want = run_table(
                engine, "label_thresholds", repeated(t, w), "actual", "scores", by=by, **params
            )
            assert_same_rows(got, want)


def test_label_thresholds_bad_weight_is_an_error(engine):
    t = _bad_weight_at_a_known_row(_scored(1, "map").drop_columns(["g"]), -1.0)
    message = P.sample_weight_message("label_thresholds", "a negative number")
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, "label_thresholds", t, "actual", "scores", sample_weight="w")
    assert_mlsql_error(engine, info.value, when_read=True)


@pytest.mark.parametrize(
    ("name", "table"),
    [
        ("roc_curve", {"y": [1, None, 0], "s": [0.2, 0.5, 0.7]}),
        ("precision_recall_curve", {"y": [1, 0, 0], "s": [0.2, None, 0.7]}),
        ("calibration_table", {"y": [1, None, 0], "s": [0.2, 0.5, 0.7]}),
        (
            "label_thresholds",
            {"y": [["a"], None, ["b"]], "s": [{"a": 0.2}, {"a": 0.5}, {"b": 0.7}]},
        ),
    ],
)
def test_a_bad_weight_on_a_row_with_a_null_input_is_an_error_too(engine, name, table):
    """Every row's weight is checked, as each engine reads the weight column (DuckDB's
    optimizer would otherwise skip the weights of the rows it filters out first)."""
    data = dict(table)
    if name == "label_thresholds":
        data["s"] = pa.array(
            [list(s.items()) for s in data["s"]], pa.map_(pa.string(), pa.float64())
        )
    t = pa.table({**data, "w": [1.0, -1.0, 1.0]})
    message = P.sample_weight_message(name, "a negative number")
    with pytest.raises(Exception, match=re.escape(message)) as info:
        run_table(engine, name, t, "y", "s", sample_weight="w")
    assert_mlsql_error(engine, info.value, when_read=True)


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
