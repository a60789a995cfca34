"""``mlsql eval`` on a predicted column of label scores: the score report (issue 15).

Expected numbers come from scikit-learn (averaged average precision and ROC
AUC on the indicator matrix) and from the plain-Python oracles in
tests/oracle_thresholds.py (per-label thresholds, calibration bins), never
from mlsql's own output.
"""

from __future__ import annotations

import json
import math
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import average_precision_score, roc_auc_score

import mlsql
from tests import oracle_thresholds as OT
from tests.conftest import _engines
from tests.test_cli import INJECTION, assert_self_contained, invoke

LABELS = ("ant", "bee", "cat", "dog")
AVERAGES = ("micro", "macro", "weighted", "samples")
LOCAL_ENGINES = [e for e in _engines() if e != "spark"]
#: an unscored cell's score for scikit-learn: below every score (scores are in [0, 1])
UNSCORED = -1.0


def _rows(seed: int, n: int, labels: tuple[str, ...] = LABELS) -> list[dict[str, Any]]:
    """Rows with ties (scores on a 0.1 grid), unscored labels, and in each group every label
    and every row holding both a true and a false label (scikit-learn's ROC AUC needs both)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        group = "north" if i % 2 else "south"
        true = [x for x in labels if rng.random() < 0.4]
        if not true or len(true) == len(labels):
            true = [labels[i % len(labels)]]
        # the first rows of each group make every label true somewhere, false elsewhere
        if i < 2 * len(labels):
            true = [labels[(i // 2) % len(labels)]]
        scores = {x: round(rng.random(), 1) for x in labels if rng.random() < 0.85}
        out.append({"g": group, "actual": true, "scores": scores})
    return out


def _table(
    rows: list[dict[str, Any]], actual: str = "actual", scores: str = "scores", group: str = "g"
) -> pa.Table:
    return pa.table(
        {
            group: [r["g"] for r in rows],
            actual: pa.array([r["actual"] for r in rows], pa.list_(pa.string())),
            scores: pa.array(
                [list(r["scores"].items()) for r in rows], pa.map_(pa.string(), pa.float64())
            ),
            "entries": pa.array(
                [[{"label": k, "score": v} for k, v in r["scores"].items()] for r in rows],
                pa.list_(pa.struct([("label", pa.string()), ("score", pa.float64())])),
            ),
        }
    )


ROWS = _rows(7, 60)


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("scores") / "scored.parquet"
    pq.write_table(_table(ROWS), path)
    return path


def score_json(path: Path, *args: Any, engine: str = "duckdb", predicted: str = "scores") -> dict:
    result = invoke(
        "eval", path, "-a", "actual", "-p", predicted, "-f", "json", "--engine", engine, *args
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["engine"] == engine and report["scores"] is True
    return report


def sklearn_summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    """scikit-learn's averaged AP and ROC AUC on the indicator matrix (unscored lowest)."""
    labels = sorted({x for r in rows for x in (*r["actual"], *r["scores"])})
    y = np.array([[x in r["actual"] for x in labels] for r in rows], dtype=int)
    s = np.array([[r["scores"].get(x, UNSCORED) for x in labels] for r in rows])
    out = {}
    for average in AVERAGES:
        out[f"{average}_average_precision"] = average_precision_score(y, s, average=average)
        out[f"{average}_roc_auc"] = roc_auc_score(y, s, average=average)
    return out


def by_group(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["g"], []).append(r)
    return out


def close(got: Any, want: Any) -> bool:
    if want is None or (isinstance(want, float) and math.isinf(want)):
        return got is None  # JSON holds no infinity: +inf is null
    return got is not None and math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12)


@pytest.mark.long_cases("scores-duckdb", "entries-duckdb")
@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("predicted", ["scores", "entries"])
def test_averages_equal_scikit_learn_per_group(scored: Path, engine: str, predicted: str) -> None:
    report = score_json(scored, "--by", "g", engine=engine, predicted=predicted)
    groups = by_group(ROWS)
    assert [row["g"] for row in report["summary"]] == sorted(groups)
    for row in report["summary"]:
        rows = groups[row["g"]]
        assert row["n_rows"] == len(rows) and row["n_labels"] == len(LABELS)
        for key, want in sklearn_summary(rows).items():
            assert close(row[key], want), (row["g"], key, row[key], want)


@pytest.mark.long_cases("duckdb")
@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_thresholds_and_calibration_equal_the_oracles(scored: Path, engine: str) -> None:
    report = score_json(scored, "--by", "g", engine=engine)
    groups = by_group(ROWS)
    for g, rows in groups.items():
        want = OT.label_thresholds([(r["actual"], r["scores"]) for r in rows])
        got = [r for r in report["label_thresholds"] if r["g"] == g]
        assert [r["label"] for r in got] == [w["label"] for w in want]
        for r, w in zip(got, want, strict=True):
            for key in ("threshold", "precision", "recall", "fbeta", "micro_fbeta"):
                assert close(r[key], w[key]), (g, r["label"], key)
            assert (r["tp"], r["fp"], r["fn"], r["support"]) == (
                w["tp"],
                w["fp"],
                w["fn"],
                w["support"],
            )
        # calibration pools every scored (row, label) cell
        cells = [(x in r["actual"], p) for r in rows for x, p in r["scores"].items()]
        want_bins = OT.calibration_table(cells, 10)
        got_bins = [r for r in report["calibration"] if r["g"] == g]
        assert [b["bin"] for b in got_bins] == [w["bin"] for w in want_bins]
        for b, w in zip(got_bins, want_bins, strict=True):
            assert b["count"] == w["count"]
            assert close(b["mean_score"], w["mean_score"])
            assert close(b["observed_rate"], w["observed_rate"])
    assert any("pools the scored (row, label) cells" in n for n in report["notes"])


@pytest.mark.long
def test_terminal_and_markdown_show_the_score_tables(scored: Path) -> None:
    want = sklearn_summary(ROWS)["micro_average_precision"]
    for fmt in ("table", "markdown"):
        result = invoke("eval", scored, "-a", "actual", "-p", "scores", "-f", fmt, "--no-progress")
        assert result.exit_code == 0, result.stderr
        out = result.stdout
        assert "average precision" in out and "ROC AUC" in out
        assert f"{want:.4f}" in out
        assert "thresholds maximising F1" in out and "observed rate" in out


@pytest.mark.long_cases("duckdb")
@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_html_draws_the_pr_curves_and_the_reliability_diagram(
    scored: Path, tmp_path: Path, engine: str
) -> None:
    target = tmp_path / "scores.html"
    result = invoke(
        "eval",
        scored,
        "-a",
        "actual",
        "-p",
        "scores",
        "-f",
        "html",
        "-o",
        target,
        "--engine",
        engine,
    )
    assert result.exit_code == 0, result.stderr
    page = target.read_text()
    assert_self_contained(page)
    assert "<h3>Precision-recall curve per label</h3>" in page
    assert "<h3>Reliability diagram</h3>" in page
    assert len(re.findall(r'<svg[^>]*class="chart', page)) == 2
    # every label has its line (Vega names each mark's data for screen readers)
    for label in LABELS:
        assert f"curve: {label}" in page
    assert "observed rate" in page and "mean score" in page


@pytest.mark.long
def test_many_labels_draw_one_micro_curve(tmp_path: Path) -> None:
    labels = tuple(f"tag{i:02d}" for i in range(12))
    path = tmp_path / "many.parquet"
    pq.write_table(_table(_rows(3, 40, labels)), path)
    result = invoke("eval", path, "-a", "actual", "-p", "scores", "-f", "html")
    assert result.exit_code == 0, result.stderr
    assert "<h3>Micro precision-recall curve</h3>" in result.stdout
    assert "more than 10 labels" in result.stdout
    assert "curve: micro" in result.stdout


def test_a_page_of_many_labels_shows_the_ends_of_the_table_after_the_charts(
    tmp_path: Path,
) -> None:
    # before: every label's row (5,000 per model at scale) above the charts
    labels = tuple(f"tag{i:03d}" for i in range(80))
    rows = _rows(5, 400, labels)
    path = tmp_path / "wide.parquet"
    pq.write_table(_table(rows), path)
    result = invoke("eval", path, "-a", "actual", "-p", "scores", "-f", "html")
    assert result.exit_code == 0, result.stderr
    page = result.stdout
    support = {x: sum(x in r["actual"] for r in rows) for x in labels}
    order = sorted(labels, key=lambda x: (-support[x], x))
    [table] = re.findall(r"<h3>Per-label thresholds</h3>.*?</table>", page)
    shown = re.findall(r"<tr><td>(tag\d+)</td>", table)
    assert shown == order[:25] + order[-25:]
    assert '<td colspan="6" class="gap">… 30 labels …</td>' in table
    assert (
        "30 of 80 labels left out between the most and the least frequent; the whole table: "
        "mlsql eval ... --per-label --format csv, or Report.labels in Python"
    ) in page
    # the charts come first
    assert page.index("<h3>Micro precision-recall curve</h3>") < page.index(
        "<h3>Per-label thresholds</h3>"
    )
    assert page.index("<h3>Reliability diagram</h3>") < page.index("<h3>Calibration</h3>")
    # the CSV the note names has every label
    result = invoke("eval", path, "-a", "actual", "-p", "scores", "-f", "csv", "--per-label")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("\ntag") == 80


def _step_area(points: list[dict[str, Any]]) -> float:
    """Average precision as the area under a drawn step curve: sum of recall steps x precision."""
    area, before = 0.0, 0.0
    for p in sorted(points, key=lambda p: p["recall"]):
        area += (p["recall"] - before) * p["precision"]
        before = p["recall"]
    return area


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("weighted", [False, True])
def test_the_micro_curve_is_the_one_micro_average_precision_describes(
    engine: str, weighted: bool
) -> None:
    # before: the curve of the scored cells alone (recall 1 where micro AP's recall is far
    # below), so its area was not the micro AP printed above it
    import polars as pl

    from mlsql.report.build import Settings
    from mlsql.report.engines import DuckDBFrames, PolarsFrames
    from mlsql.report.score_engines import DuckDBScores, PolarsScores
    from mlsql.report.scores import build_scores

    labels = tuple(f"tag{i:02d}" for i in range(12))
    rows = _rows(11, 200, labels)
    table = _table(rows).append_column("w", pa.array([1 + i % 3 for i in range(len(rows))]))
    weight = "w" if weighted else None
    settings = Settings(by=("g",), sample_weight=weight)
    if engine == "duckdb":
        con = mlsql.connect()
        scores, frames, frame = DuckDBScores(con), DuckDBFrames(con), con.from_arrow(table)
    else:
        scores, frames, frame = PolarsScores(), PolarsFrames(), pl.from_arrow(table).lazy()
    report = build_scores(
        scores, frames, frame, "actual", "scores", settings, source="t", curves=True
    )
    assert report.curve_scope == "micro"
    for group in ("north", "south"):
        mine = [r for r in rows if r["g"] == group]
        y = np.array([[x in r["actual"] for x in labels] for r in mine])
        s = np.array([[r["scores"].get(x, UNSCORED) for x in labels] for r in mine])
        w = [1 + i % 3 for i, r in enumerate(rows) if r["g"] == group]
        want = average_precision_score(y, s, average="micro", sample_weight=w if weighted else None)
        points = [p for p in report.curves or [] if p["g"] == group]
        assert _step_area(points) == pytest.approx(want, rel=1e-12)
        assert max(p["recall"] for p in points) == 1.0


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_a_long_micro_curve_comes_back_thinned(
    engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: every distinct score came back as a Python row (GBs at a million rows)
    import polars as pl

    from mlsql.report import score_engines as SE

    rows = _rows(13, 300, tuple(f"tag{i:02d}" for i in range(12)))
    for r in rows:  # many distinct scores
        r["scores"] = {k: v + random.Random(len(r["actual"]) + int(v * 10)).random() / 100
                       for k, v in r["scores"].items()}  # fmt: skip
    table = _table(rows)

    def curve(limit: int) -> list[dict[str, Any]]:
        monkeypatch.setattr(SE, "CURVE_ROWS", limit)
        if engine == "duckdb":
            con = mlsql.connect()
            scores, frame = SE.DuckDBScores(con), con.from_arrow(table)
        else:
            scores, frame = SE.PolarsScores(), pl.from_arrow(table).lazy()
        return scores.micro_curve(scores.cells(frame, "actual", "scores", ["g"]), ["g"])

    whole, thin = curve(10**9), curve(7)
    for group in ("north", "south"):
        every = [p for p in whole if p["g"] == group]
        every.sort(key=lambda p: -p["threshold"])
        step = -(-len(every) // 7)
        want = [p for i, p in enumerate(every) if i % step == 0 or i == len(every) - 1]
        assert len(every) > 50
        assert [p for p in thin if p["g"] == group] == want


@pytest.mark.long
def test_scores_outside_zero_one_have_no_calibration(tmp_path: Path) -> None:
    rows = [{**r, "scores": {k: 10 * v - 3 for k, v in r["scores"].items()}} for r in ROWS]
    path = tmp_path / "logits.parquet"
    pq.write_table(_table(rows), path)
    report = score_json(path)
    assert report["calibration"] is None
    assert any("not probabilities in [0, 1]" in n for n in report["notes"])
    # a monotone change of the scores leaves the ranking measures as they were
    for key, want in sklearn_summary(ROWS).items():
        assert close(report["summary"][0][key], want), key


@pytest.mark.long_cases("a-duckdb", 'g"); DROP TABLE x; ---duckdb')
@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("group", ["a", 'g"); DROP TABLE x; --'])
def test_hostile_column_names_are_only_names(tmp_path: Path, engine: str, group: str) -> None:
    path = tmp_path / "hostile.parquet"
    actual, scores = INJECTION, "s'); SELECT 1; --"
    pq.write_table(_table(ROWS, actual=actual, scores=scores, group=group), path)
    result = invoke(
        "eval", path, "-a", actual, "-p", scores, "-f", "json", "--by", group, "--engine", engine
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["params"]["actual"] == actual and report["params"]["predicted"] == scores
    assert report["calibration"] and report["label_thresholds"]
    for row in report["summary"]:
        want = sklearn_summary(by_group(ROWS)[row[group]])
        assert close(row["macro_average_precision"], want["macro_average_precision"])


def test_label_lists_still_give_the_label_report(tmp_path: Path) -> None:
    path = tmp_path / "lists.parquet"
    rows = [{**r, "predicted": sorted(k for k, v in r["scores"].items() if v >= 0.5)} for r in ROWS]
    pq.write_table(
        pa.table(
            {
                "actual": [r["actual"] for r in rows],
                "predicted": pa.array([r["predicted"] for r in rows], pa.list_(pa.string())),
            }
        ),
        path,
    )
    result = invoke("eval", path, "-a", "actual", "-p", "predicted", "-f", "json")
    report = json.loads(result.stdout)
    assert "scores" not in report and "label_thresholds" not in report
    assert "micro_f1" in report["summary"][0] and report["labels"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--labels", "ant,bee"], "leave --labels out"),
    ],
)
def test_options_a_score_report_refuses(tmp_path: Path, args: list[str], message: str) -> None:
    path = tmp_path / "weighted.parquet"
    pq.write_table(_table(ROWS).append_column("w", pa.array([1.0] * len(ROWS))), path)
    result = invoke("eval", path, "-a", "actual", "-p", "scores", *args)
    assert result.exit_code == 2
    assert message in result.stderr


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("group", ["label", "bin", "threshold"])
def test_a_group_named_like_a_table_column_is_refused_alike(
    tmp_path: Path, engine: str, group: str
) -> None:
    path = tmp_path / "named.parquet"
    pq.write_table(_table(ROWS, group=group), path)
    result = invoke("eval", path, "-a", "actual", "-p", "scores", "--by", group, "--engine", engine)
    assert result.exit_code == 2
    assert f"--by {group!r}: a score report's tables have a column of that name" in result.stderr


def test_one_label_per_row_against_scores_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "single.parquet"
    table = _table(ROWS).append_column("one", pa.array([r["actual"][0] for r in ROWS]))
    pq.write_table(table, path)
    result = invoke("eval", path, "-a", "one", "-p", "scores")
    assert result.exit_code == 2
    assert "holds label scores" in result.stderr


@pytest.mark.long
@pytest.mark.skipif("spark" not in _engines(), reason="MLSQL_TEST_ENGINES leaves Spark out")
def test_spark_gives_the_same_score_report(scored: Path) -> None:
    report = score_json(scored, "--by", "g", engine="spark")
    groups = by_group(ROWS)
    for row in report["summary"]:
        for key, want in sklearn_summary(groups[row["g"]]).items():
            assert close(row[key], want), (row["g"], key)
    duck = score_json(scored, "--by", "g")
    assert len(report["label_thresholds"]) == len(duck["label_thresholds"])
    for r, d in zip(report["label_thresholds"], duck["label_thresholds"], strict=True):
        assert r["label"] == d["label"] and close(r["fbeta"], d["fbeta"])
    assert [(b["g"], b["bin"], b["count"]) for b in report["calibration"]] == [
        (b["g"], b["bin"], b["count"]) for b in duck["calibration"]
    ]


def _api_rows(engine: str, path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(per-group averages, label_thresholds rows) straight from the engine's public API."""
    calls = [
        (f"{a}_{m}", f"multilabel_{m}", a)
        for m in ("average_precision", "roc_auc")
        for a in AVERAGES
    ]
    if engine == "duckdb":
        import mlsql

        con = mlsql.connect()
        source = f"read_parquet('{path}')"
        exprs = ", ".join(f"{f}(actual, scores, average := '{a}') AS {c}" for c, f, a in calls)
        rel = con.sql(f"SELECT g, {exprs} FROM {source} GROUP BY g ORDER BY g")
        summary = [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]
        rel = con.sql(
            f"""SELECT * FROM label_thresholds('{path}', 'actual', 'scores', "by" := ['g'])
            ORDER BY g, label"""
        )
        return summary, [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]
    import polars as pl

    import mlsql.polars as mp

    frame = pl.read_parquet(path)
    summary = (
        frame.group_by("g")
        .agg(getattr(mp, f)("actual", "scores", average=a).alias(c) for c, f, a in calls)
        .sort("g")
        .to_dicts()
    )
    table = mp.label_thresholds(frame, "actual", "scores", by="g")
    if isinstance(table, pl.LazyFrame):
        table = table.collect()
    return summary, table.sort("g", "label").to_dicts()


@pytest.mark.long_cases("duckdb")
@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_json_numbers_are_the_apis(scored: Path, engine: str) -> None:
    report = score_json(scored, "--by", "g", engine=engine)
    summary, thresholds = _api_rows(engine, scored)
    for got, want in zip(report["summary"], summary, strict=True):
        assert {k: got[k] for k in want} == want
    assert len(report["label_thresholds"]) == len(thresholds)
    for got, want in zip(report["label_thresholds"], thresholds, strict=True):
        want = {k: (None if v == math.inf else v) for k, v in want.items()}
        assert got == want
