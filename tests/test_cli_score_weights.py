"""``mlsql eval --sample-weight`` and ``--ci`` on a predicted column of label scores.

Weighted numbers are scikit-learn's with ``sample_weight`` (averaged average
precision and ROC AUC on the indicator matrix; precision, recall and F of each
label at the threshold the report gives), never mlsql's own output.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import (
    average_precision_score,
    fbeta_score,
    precision_score,
    recall_score,
    roc_auc_score,
)

from tests.conftest import _engines
from tests.test_cli_scores import AVERAGES, LOCAL_ENGINES, ROWS, UNSCORED, _table, close, score_json

ENGINES = _engines()


def _weights(n: int, seed: int = 3) -> list[float]:
    rng = random.Random(seed)
    return [round(rng.uniform(0.0, 3.0), 2) for _ in range(n)]


WEIGHTS = _weights(len(ROWS))


@pytest.fixture(scope="module")
def weighted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("score_weights") / "weighted.parquet"
    pq.write_table(_table(ROWS).append_column("w", pa.array(WEIGHTS, pa.float64())), path)
    return path


def _matrix(rows: list[dict[str, Any]]) -> tuple[list[str], np.ndarray, np.ndarray]:
    labels = sorted({x for r in rows for x in (*r["actual"], *r["scores"])})
    y = np.array([[x in r["actual"] for x in labels] for r in rows], dtype=int)
    s = np.array([[r["scores"].get(x, UNSCORED) for x in labels] for r in rows])
    return labels, y, s


def _sklearn_weighted(rows: list[dict[str, Any]], w: list[float]) -> dict[str, float]:
    _, y, s = _matrix(rows)
    out = {}
    for average in AVERAGES:
        out[f"{average}_average_precision"] = average_precision_score(
            y, s, average=average, sample_weight=w
        )
        out[f"{average}_roc_auc"] = roc_auc_score(y, s, average=average, sample_weight=w)
    return out


@pytest.mark.long_cases("duckdb", "spark")
@pytest.mark.parametrize("engine", ENGINES)
def test_weighted_score_report_equals_scikit_learn(weighted: Path, engine: str) -> None:
    report = score_json(weighted, "--sample-weight", "w", engine=engine)
    [row] = report["summary"]
    assert row["n_rows"] == len(ROWS)
    assert close(row["total_weight"], sum(WEIGHTS))
    want = _sklearn_weighted(ROWS, WEIGHTS)
    for key, value in want.items():
        assert close(row[key], value), (key, row[key], value)
    # the weighted numbers differ from the unweighted ones: the weight was used (one Spark
    # run per test: the CLI's Spark session is not started twice in one process)
    plain = score_json(weighted)["summary"][0]
    assert not close(plain["macro_average_precision"], want["macro_average_precision"])
    # each label's precision, recall and F at the threshold shown are the weighted ones
    labels, y, s = _matrix(ROWS)
    for r in report["label_thresholds"]:
        j = labels.index(r["label"])
        chosen = (s[:, j] >= r["threshold"]).astype(int)
        for key, score in (
            ("precision", precision_score),
            ("recall", recall_score),
        ):
            assert close(r[key], score(y[:, j], chosen, sample_weight=WEIGHTS)), (r["label"], key)
        f = fbeta_score(y[:, j], chosen, beta=1.0, sample_weight=WEIGHTS)
        assert close(r["fbeta"], f), r["label"]
    # the calibration bins count weights: their total is the scored cells' weight
    cell_weight = sum(w for r, w in zip(ROWS, WEIGHTS, strict=True) for _ in r["scores"])
    assert close(sum(b["count"] for b in report["calibration"]), cell_weight)


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_weighted_html_draws_the_curves(weighted: Path, engine: str, tmp_path: Path) -> None:
    from tests.test_cli import invoke

    out = tmp_path / "r.html"
    result = invoke(
        "eval", weighted, "-a", "actual", "-p", "scores", "--sample-weight", "w",
        "--engine", engine, "-f", "html", "-o", out,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "<svg" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_ci_on_label_scores_says_in_one_note_why_no_interval(weighted: Path, engine: str) -> None:
    report = score_json(weighted, "--ci", "--resamples", "50", engine=engine)
    assert report["params"]["ci"]["n_resamples"] == 50
    assert report["intervals"] == []
    notes = [n for n in report["notes"] if n.startswith("no interval for")]
    assert len(notes) == 1
    for average in AVERAGES:
        assert f"{average}_average_precision" in notes[0] and f"{average}_roc_auc" in notes[0]
    assert "multilabel_average_precision" in notes[0]
