"""``mlsql compare`` on numbers: regression measures and the scores of a 0/1 label.

Estimates are scikit-learn's (mean_squared_error, mean_absolute_error, r2_score,
log_loss, roc_auc_score); differences, intervals and p-values are the engine's
own ``compare`` with the same seed; ``--fail-if-worse`` follows the measure's
direction (a higher mse or logloss is worse, a higher r2 or auc better).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import (
    log_loss,
    mean_absolute_error,
    mean_squared_error,
    r2_score,
    roc_auc_score,
)

import mlsql
from mlsql.cli.compare import WORSE
from tests.test_cli import LOCAL_ENGINES, invoke

RESAMPLES = 300
SEED = 5
N = 150
SKLEARN = {
    "mse": mean_squared_error,
    "mae": mean_absolute_error,
    "r2": r2_score,
    "logloss": log_loss,
    "auc": roc_auc_score,
}
REGRESSION = ("y", "yhat", ("mse", "mae", "r2"))
SCORES = ("label", "score", ("logloss", "auc"))


def numbers_table(same: bool = False) -> pa.Table:
    """Models A and B on the same ids: B's predictions and scores are much better (unless
    ``same``: B predicts as A does)."""
    rng = np.random.default_rng(11)
    y = rng.normal(10.0, 2.0, N)
    label = (rng.random(N) < 0.5).astype(np.int64)
    noise = {"A": 2.0, "B": 2.0 if same else 0.5}
    signal = {"A": 0.6, "B": 0.6 if same else 3.0}
    draws = {m: (rng.normal(0.0, 1.0, N), rng.normal(0.0, 1.0, N)) for m in ("A", "B")}
    if same:
        draws["B"] = draws["A"]
    cols: dict[str, list[Any]] = {k: [] for k in ("model", "id", "y", "yhat", "label", "score")}
    for model in ("A", "B"):
        e, z = draws[model]
        logit = signal[model] * (2 * label - 1) + z
        cols["model"] += [model] * N
        cols["id"] += list(range(N))
        cols["y"] += list(y)
        cols["yhat"] += list(y + noise[model] * e)
        cols["label"] += list(label)
        cols["score"] += list(1.0 / (1.0 + np.exp(-logit)))
    return pa.table(cols)


@pytest.fixture(scope="module")
def numbers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("compare_numbers") / "numbers.parquet"
    pq.write_table(numbers_table(), path)
    return path


def compare_cli(
    engine: str, path: Path, actual: str, predicted: str, *args: Any
) -> tuple[int, list[dict], str]:
    result = invoke(
        "compare", path, "-a", actual, "-p", predicted, "--engine", engine, "-f", "json",
        "--resamples", str(RESAMPLES), "--seed", str(SEED), *args,
    )  # fmt: skip
    rows = json.loads(result.stdout) if result.exit_code in (0, WORSE) else []
    return result.exit_code, rows, result.stderr


def api_compare(engine: str, actual: str, predicted: str, names: tuple[str, ...]) -> list[dict]:
    kw = {"baseline": "A", "n_resamples": RESAMPLES, "seed": SEED}
    table = numbers_table()
    if engine == "duckdb":
        con = mlsql.connect()
        con.register("numbers_source", table)
        rel = con.sql(
            f"SELECT model, id, CAST({actual} AS DOUBLE) AS {actual}, "
            f"CAST({predicted} AS DOUBLE) AS {predicted} FROM numbers_source"
        )
        out = mlsql.compare(rel, actual, predicted, list(names), con=con, **kw)
        return [dict(zip(out.columns, r, strict=True)) for r in out.fetchall()]
    import polars as pl

    import mlsql.polars as mp

    frame = pl.from_arrow(table).with_columns(pl.col(actual, predicted).cast(pl.Float64))
    return mp.compare(frame, actual, predicted, list(names), **kw).to_dicts()


def sklearn_estimate(name: str, actual: str, predicted: str, model: str) -> float:
    table = numbers_table().to_pydict()
    rows = [i for i, m in enumerate(table["model"]) if m == model]
    y = [table[actual][i] for i in rows]
    p = [table[predicted][i] for i in rows]
    return float(SKLEARN[name](y, p))


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("columns", [REGRESSION, SCORES], ids=["regression", "scores"])
def test_compare_table_on_numbers(engine: str, numbers: Path, columns: tuple) -> None:
    actual, predicted, names = columns
    code, rows, err = compare_cli(engine, numbers, actual, predicted, "--baseline", "A",
                                  "-m", ",".join(names))  # fmt: skip
    assert code == 0, err
    assert [(r["model"], r["measure"]) for r in rows] == [("B", n) for n in names]
    for got, want in zip(rows, api_compare(engine, actual, predicted, names), strict=True):
        for key in ("baseline_estimate", "estimate", "difference", "low", "high", "p_value"):
            assert got[key] == pytest.approx(want[key], rel=1e-12, abs=1e-15), key
    for row in rows:
        name = row["measure"]
        base = sklearn_estimate(name, actual, predicted, "A")
        cand = sklearn_estimate(name, actual, predicted, "B")
        assert row["baseline_estimate"] == pytest.approx(base, rel=1e-9)
        assert row["estimate"] == pytest.approx(cand, rel=1e-9)
        assert row["difference"] == pytest.approx(cand - base, rel=1e-9, abs=1e-12)
        # B is better: a lower loss or error, a higher r2 or auc, and significantly so
        lower = name in ("mse", "mae", "logloss")
        assert (row["high"] < 0) if lower else (row["low"] > 0), row
        assert row["p_value"] < 0.05


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize(
    ("columns", "measure"),
    [(REGRESSION, "mse"), (REGRESSION, "mae"), (REGRESSION, "r2"),
     (SCORES, "logloss"), (SCORES, "auc")],
)  # fmt: skip
def test_fail_if_worse_follows_the_direction_of_numbers(
    engine: str, numbers: Path, columns: tuple, measure: str
) -> None:
    actual, predicted, _ = columns
    # against A, B is better: nothing is worse
    code, _, err = compare_cli(engine, numbers, actual, predicted, "--baseline", "A",
                               "--fail-if-worse", measure)  # fmt: skip
    assert code == 0, err
    # against B, A is worse (higher mse, mae, logloss; lower r2, auc)
    code, rows, err = compare_cli(engine, numbers, actual, predicted, "--baseline", "B",
                                  "--fail-if-worse", measure)  # fmt: skip
    assert code == WORSE, err
    assert f"model 'A' is worse than the baseline 'B' on {measure}" in err
    [row] = [r for r in rows if r["measure"] == measure]
    lower = measure in ("mse", "mae", "logloss")
    assert (row["difference"] > 0) if lower else (row["difference"] < 0)


def test_identical_models_are_never_worse_on_numbers(tmp_path: Path) -> None:
    path = tmp_path / "same.parquet"
    pq.write_table(numbers_table(same=True), path)
    for actual, predicted, names in (REGRESSION, SCORES):
        for name in names:
            code, rows, err = compare_cli("duckdb", path, actual, predicted, "--baseline", "A",
                                          "--fail-if-worse", name)  # fmt: skip
            assert code == 0, err
            assert all(r["difference"] == 0 and r["p_value"] == 1 for r in rows)


def test_numbers_need_measures_and_eval_says_where_to_go(numbers: Path) -> None:
    code, _, err = compare_cli("duckdb", numbers, "y", "yhat", "--baseline", "A")
    assert code == 2 and "name the measures with --measures" in err
    result = invoke("eval", numbers, "-a", "y", "-p", "yhat")
    assert result.exit_code == 2 and "mlsql compare --measures" in result.stderr
    # a label list against numbers is no pair of numbers: the label rules say what is wrong
    path = numbers.parent / "mixed.parquet"
    pq.write_table(numbers_table().append_column("tags", pa.array([["a"]] * 2 * N)), path)
    code, _, err = compare_cli("duckdb", path, "tags", "score", "--baseline", "A", "-m", "auc")
    assert code == 2 and "column 'score' has type DOUBLE" in err
    assert "mlsql compare also takes two columns of numbers" in err
