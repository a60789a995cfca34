"""bootstrap() and compare() of the class-score measures (multiclass_brier_score,
multiclass_calibration_error), in every engine.

References written here, never the code under test: the measures themselves (DuckDB's
aggregates, with and without ``sample_weight``), scikit-learn's multiclass
``brier_score_loss``, and a plain numpy per-row Poisson bootstrap of both measures from each
row's probability vector (the top-label calibration error as torchmetrics defines it).
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from sklearn import metrics as skm

import mlsql
from mlsql._errors import MlsqlError
from tests.conftest import _engines
from tests.test_bootstrap import run_engine

CLASSES = ["a", "b", "c"]
MEASURES = [
    "multiclass_brier_score",
    ("multiclass_brier_score", {"scale_by_half": True}),
    "multiclass_calibration_error",
    ("multiclass_calibration_error", {"n_bins": 4, "norm": "l2"}),
    ("multiclass_calibration_error", {"norm": "max"}),
]
#: the Spark runs of the per-engine cases are long tests (tests/conftest.py reads it)
LONG_ENGINES = ("spark",)


def probabilities(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """True classes and each row's probabilities over CLASSES, rounded to 2 places (ties at
    the top), a true class more likely where its probability is high."""
    rng = np.random.default_rng(seed)
    p = np.round(rng.dirichlet([1.0, 1.0, 1.0], n), 2)
    truth = [CLASSES[rng.choice(3, p=row / row.sum())] for row in p]
    return truth, p


def entries(p: np.ndarray, leave_out: bool) -> list:
    """Each row's {label, score} list; with ``leave_out`` every fifth row leaves its class
    ``c`` out (its probability then 0, as the measures read a class a row does not score)."""
    out = []
    for i, row in enumerate(p):
        kept = [
            (c, x)
            for c, x in zip(CLASSES, row, strict=True)
            if not (leave_out and i % 5 == 0 and c == "c")
        ]
        out.append([{"label": c, "score": float(x)} for c, x in kept])
    return out


def data(n: int, seed: int, weighted: bool, gaps: bool = True) -> pa.Table:
    truth, p = probabilities(n, seed)
    actual: list = list(truth)
    scores: list = entries(p, leave_out=gaps)
    if gaps:
        actual[1], scores[3] = None, None  # NULL on either side: the row is skipped
    cols: dict = {"actual": actual, "scores": scores}
    if weighted:
        rng = np.random.default_rng(seed + 1)
        w: list = rng.choice([0.0, 0.5, 1.0, 2.0, 3.25], n).tolist()
        w[2] = None
        cols["w"] = w
    return pa.table(cols)


def _sql(entry, weighted: bool) -> str:
    name, params = (entry, {}) if isinstance(entry, str) else entry
    args = "".join(f", {k} := {v!r}" for k, v in params.items())
    return f"{name}(actual, scores{args}{', sample_weight := w' if weighted else ''})"


def measured(t: pa.Table, weighted: bool) -> tuple:
    """The measures themselves on ``t`` (DuckDB's aggregates)."""
    con = mlsql.connect()
    con.register("t", t)
    return con.sql(f"SELECT {', '.join(_sql(e, weighted) for e in MEASURES)} FROM t").fetchall()[0]


# ------------------------------------------------------------------ estimates
@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize("weighted", [False, True])
def test_estimate_is_the_measure_itself(engine: str, weighted: bool) -> None:
    t = data(60, 1, weighted)
    kw = {"sample_weight": "w"} if weighted else {}
    got = run_engine(engine, "bootstrap", t, "actual", "scores", MEASURES, n_resamples=20, **kw)
    assert len(got) == len(MEASURES)
    for row, want in zip(got, measured(t, weighted), strict=True):
        assert row[1] == pytest.approx(want, rel=1e-12, abs=1e-15), row[0]
        assert row[2] <= row[3] and row[4] > 0, row[0]


@pytest.mark.filterwarnings("ignore:The y_prob values do not sum to one")
def test_brier_estimate_equals_scikit_learn_and_a_map_is_read_as_a_list() -> None:
    truth, p = probabilities(50, 2)
    w = np.random.default_rng(3).choice([0.5, 1.0, 2.0], 50)
    want = skm.brier_score_loss(truth, p, sample_weight=w, labels=CLASSES)
    as_list = pa.table({"actual": truth, "scores": entries(p, False), "w": w})
    as_map = pa.table(
        {
            "actual": truth,
            "scores": pa.array(
                [list(zip(CLASSES, row.tolist(), strict=True)) for row in p],
                pa.map_(pa.string(), pa.float64()),
            ),
            "w": w,
        }
    )
    rows = [
        mlsql.bootstrap(
            t, "actual", "scores", ["multiclass_brier_score"], n_resamples=30, sample_weight="w"
        ).fetchall()
        for t in (as_list, as_map)
    ]
    assert rows[0][0][1] == pytest.approx(want, rel=1e-12)
    assert rows[0] == rows[1]


# ------------------------------------------------------------------ the independent bootstrap
def numpy_measures(truth: list[str], p: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """Under each row of the weights ``w`` (resamples x rows): the unhalved multiclass Brier
    score (Σ over classes of (p - [class is true])², weighted mean) and torchmetrics' top-label
    calibration error, 15 bins (l1: Σ over bins |Σ w (confidence - correct)| / Σ w)."""
    index = np.array([CLASSES.index(c) for c in truth])
    onehot = np.eye(len(CLASSES))[index]
    loss = ((p - onehot) ** 2).sum(axis=1)
    confidence = p.max(axis=1)
    correct = (p.argmax(axis=1) == index).astype(float)  # the first (smallest) class of a tie
    bins = np.minimum(np.floor(confidence * 15), 14).astype(int)
    n = w.sum(axis=1)
    gaps = np.stack([(w * ((bins == b) * (confidence - correct))).sum(axis=1) for b in range(15)])
    return {
        "multiclass_brier_score": (w @ loss) / n,
        "multiclass_calibration_error": np.abs(gaps).sum(axis=0) / n,
    }


def test_intervals_agree_with_a_per_row_numpy_bootstrap() -> None:
    truth, p = probabilities(300, 4)
    reference = numpy_measures(truth, p, np.random.default_rng(5).poisson(1.0, (3000, 300)))
    t = pa.table({"actual": truth, "scores": entries(p, False)})
    chosen = [("multiclass_brier_score", {"scale_by_half": False}), "multiclass_calibration_error"]
    rows = mlsql.bootstrap(
        t, "actual", "scores", chosen, n_resamples=3000, confidence=0.9
    ).fetchall()
    estimates = numpy_measures(truth, p, np.ones((1, 300)))
    for row, name in zip(rows, reference, strict=True):
        assert row[1] == pytest.approx(estimates[name][0], rel=1e-12), name
        low, high = np.quantile(reference[name], [0.05, 0.95])
        se = reference[name].std(ddof=1)
        # Monte Carlo error of a standard deviation over 3000 draws is about 1.3%
        assert row[4] == pytest.approx(se, rel=0.07), name
        assert row[2] == pytest.approx(low, abs=0.3 * se), name
        assert row[3] == pytest.approx(high, abs=0.3 * se), name


# ------------------------------------------------------------------ engines and compare
@pytest.mark.long
def test_engines_agree_on_one_dataset() -> None:
    t = data(90, 6, weighted=True).append_column("g", pa.array([i % 3 for i in range(90)]))
    results = {
        e: run_engine(
            e, "bootstrap", t, "actual", "scores", MEASURES[:3], by="g", n_resamples=100,
            sample_weight="w",
        )
        for e in _engines()
    }  # fmt: skip
    first = results[_engines()[0]]
    for engine, rows in results.items():
        assert len(rows) == len(first) == 3 * 3
        for got, want in zip(rows, first, strict=True):
            assert got[:2] == want[:2], engine
            assert got[2:] == pytest.approx(want[2:], rel=1e-12), engine


def paired(n: int, seed: int) -> tuple[pa.Table, pa.Table]:
    """Models A and B on the same ids: B's probabilities other than A's, and B = A."""
    truth, a = probabilities(n, seed)
    _, b = probabilities(n, seed + 1)

    def table(p_b: np.ndarray) -> pa.Table:
        return pa.table(
            {
                "id": list(range(n)) * 2,
                "model": ["A"] * n + ["B"] * n,
                "actual": truth * 2,
                "scores": entries(a, True) + entries(p_b, True),
            }
        )

    return table(b), table(a)


@pytest.mark.parametrize("engine", _engines())
def test_compare_pairs_rows_and_identical_models_differ_by_zero(engine: str) -> None:
    other, same = paired(40, 7)
    chosen = ["multiclass_brier_score", "multiclass_calibration_error"]
    rows = run_engine(engine, "compare", other, "actual", "scores", chosen, n_resamples=100)
    for row, entry in zip(rows, chosen, strict=True):
        con = mlsql.connect()
        con.register("t", other)
        base, model = (
            con.sql(f"SELECT {entry}(actual, scores) FROM t WHERE model = '{m}'").fetchall()[0][0]
            for m in ("A", "B")
        )
        assert row[:2] == ("B", entry)
        assert row[2] == pytest.approx(base, rel=1e-12) and row[3] == pytest.approx(
            model, rel=1e-12
        )
        assert row[4] == pytest.approx(model - base, rel=1e-9) and row[5] <= row[6]
    for row in run_engine(engine, "compare", same, "actual", "scores", chosen, n_resamples=100):
        assert row[2] == row[3] and row[4] == 0.0 and row[5] == row[6] == 0.0 and row[7] == 1.0


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    ("score", "message"),
    [
        (1.5, "bootstrap takes probabilities in [0, 1] for predicted. Got a value above 1."),
        (-0.5, "bootstrap takes probabilities in [0, 1] for predicted. Got a value below 0."),
        (
            math.nan,
            "bootstrap takes finite numbers for predicted: NaN and infinite values are errors "
            "(as in scikit-learn). Got NaN.",
        ),
    ],
    ids=["above", "below", "nan"],
)
@pytest.mark.parametrize("engine", _engines())
def test_a_bad_probability_gets_one_verdict(engine: str, score: float, message: str) -> None:
    """The same MlsqlError in every engine (DuckDB had raised its own error naming the
    class-score macros' ``scores``)."""
    t = pa.table(
        {
            "actual": ["a", "b"],
            "scores": [[{"label": "a", "score": score}], [{"label": "b", "score": 0.5}]],
        }
    )
    for measure in ("multiclass_brier_score", "multiclass_calibration_error"):
        with pytest.raises(MlsqlError) as raised:
            run_engine(engine, "bootstrap", t, "actual", "scores", [measure])
        assert str(raised.value) == message, (measure, str(raised.value))


def test_one_kind_of_input_per_call() -> None:
    t = data(10, 8, weighted=False)
    with pytest.raises(MlsqlError, match=r"a label and its class probabilities .*multiclass_brier"):
        mlsql.bootstrap(t, "actual", "scores", ["multiclass_brier_score", "accuracy"])


def test_the_sql_macro_names_the_python_call() -> None:
    con = mlsql.connect()
    con.register("t", data(10, 9, weighted=False))
    with pytest.raises(duckdb.Error, match="SQL table macro bootstrap does not resample multic"):
        con.sql(
            "SELECT * FROM bootstrap('t', 'actual', 'scores', measures := "
            "['multiclass_calibration_error'])"
        ).fetchall()
