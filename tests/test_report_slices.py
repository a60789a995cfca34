"""The report's weakest slices: ``mlsql.report(..., slices=...)`` and ``mlsql eval --slices``.

The slices' estimates and the whole data's value are checked against a plain-Python
micro F1 (exact fractions); the page's chart in a real browser is in
``tests/test_cli_browser.py``.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import mlsql
from mlsql._errors import MlsqlError
from mlsql.cli import app
from tests.conftest import _engines

ENGINES = _engines()
#: Spark runs jobs of seconds each: its cases are long (tests/conftest.py reads this)
LONG_ENGINES = ("spark",)
LABELS = ["sport", "news", "tech", "art"]


def documents(seed: int, n: int) -> dict[str, list[Any]]:
    """Label lists of documents with a language and a source; French ones are predicted
    worse (a true label is kept with probability 0.5 instead of 0.9)."""
    rng = random.Random(seed)
    out: dict[str, list[Any]] = {"lang": [], "source": [], "actual": [], "predicted": []}
    for _ in range(n):
        lang, source = rng.choice(["de", "en", "fr"]), rng.choice(["web", "mail"])
        truth = rng.sample(LABELS, rng.randint(1, 3))
        keep = 0.5 if lang == "fr" else 0.9
        guess = [t for t in truth if rng.random() < keep]
        if rng.random() < 0.2:
            guess.append(rng.choice([t for t in LABELS if t not in guess] or LABELS))
        out["lang"].append(lang)
        out["source"].append(source)
        out["actual"].append(truth)
        out["predicted"].append(guess)
    return out


def micro_f1(actual: list[list[str]], predicted: list[list[str]]) -> Fraction:
    """2 tp / (|A| + |P|) summed over rows (the reference, in exact fractions)."""
    tp = sum(len(set(a) & set(p)) for a, p in zip(actual, predicted, strict=True))
    return Fraction(2 * tp, sum(len(a) + len(p) for a, p in zip(actual, predicted, strict=True)))


def reference(data: dict[str, list[Any]], column: str, value: str) -> Fraction:
    rows = [i for i, v in enumerate(data[column]) if v == value]
    return micro_f1([data["actual"][i] for i in rows], [data["predicted"][i] for i in rows])


def frame(engine: str, data: dict[str, list[Any]]) -> Any:
    if engine == "polars":
        import polars as pl

        return pl.DataFrame(data)
    if engine == "spark":
        from tests.engines.spark_engine import frame as spark_frame

        return spark_frame(pa.table(data))
    return pa.table(data)


@pytest.mark.parametrize("engine", ENGINES)
def test_report_slices_are_the_measure_of_each_slice_worst_first(engine: str) -> None:
    data = documents(1, 900)
    report = mlsql.report(frame(engine, data), "actual", "predicted", slices=["lang", "source"])
    assert report.engine == engine
    slices = report.slices
    assert slices is not None
    want = {f"{c} = '{v}'": reference(data, c, v) for c in ("lang", "source") for v in set(data[c])}
    assert sorted(r["slice"] for r in slices) == sorted(want)
    for row in slices:
        assert row["estimate"] == pytest.approx(float(want[row["slice"]]), rel=1e-12)
        assert row["low"] <= row["estimate"] <= row["high"]
    assert [r["estimate"] for r in slices] == sorted(r["estimate"] for r in slices)
    worst = slices[0]
    assert worst["slice"] == "lang = 'fr'" and worst["significant"] and worst["diff_high"] < 0
    overall = float(micro_f1(data["actual"], data["predicted"]))
    assert report.slicing is not None
    assert report.slicing["overall"] == pytest.approx(overall, rel=1e-12)
    assert report.slicing["candidates"] == ["lang", "source"]
    out = json.loads(report.to_json())
    assert out["params"]["slices"]["measure"] == "micro_f1"
    assert [r["slice"] for r in out["slices"]] == [r["slice"] for r in slices]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_grouped_report_draws_slices_of_all_the_data(engine: str) -> None:
    data = documents(2, 600)
    report = mlsql.report(frame(engine, data), "actual", "predicted", by="source", slices="lang")
    assert len(report.summary) == 2  # the groups stay
    assert report.slicing is not None
    overall = float(micro_f1(data["actual"], data["predicted"]))
    assert report.slicing["overall"] == pytest.approx(overall, rel=1e-12)
    assert {r["slice"] for r in report.slices or []} == {
        "lang = 'de'",
        "lang = 'en'",
        "lang = 'fr'",
    }


def test_beta_ranks_slices_by_micro_f_beta() -> None:
    data = documents(3, 300)
    report = mlsql.report(pa.table(data), "actual", "predicted", beta=2.0, slices="source")
    assert report.slicing is not None and report.slicing["measure"] == "micro_fbeta"
    for row in report.slices or []:
        rows = [i for i, v in enumerate(data["source"]) if v == row["slice"].split("'")[1]]
        tp = sum(len(set(data["actual"][i]) & set(data["predicted"][i])) for i in rows)
        size_a = sum(len(data["actual"][i]) for i in rows)
        size_p = sum(len(data["predicted"][i]) for i in rows)
        want = Fraction(5 * tp, 4 * size_a + size_p)  # (1 + b^2) tp / (b^2 |A| + |P|)
        assert row["estimate"] == pytest.approx(float(want), rel=1e-12)


def test_the_page_shows_the_forest_plot_and_escapes_values() -> None:
    pytest.importorskip("altair")
    pytest.importorskip("vl_convert")
    data = documents(4, 400)
    data["lang"] = ["<b>x</b>" if v == "fr" else v for v in data["lang"]]
    page = mlsql.report(pa.table(data), "actual", "predicted", slices="lang").to_html()
    section = page[page.index("<h2>Weakest slices</h2>") :]
    assert "<svg" in section and "Benjamini-Hochberg" in section
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in section
    assert "All the data: micro F1" in section


def test_no_slices_asked_no_section() -> None:
    report = mlsql.report(pa.table(documents(5, 50)), "actual", "predicted")
    assert report.slices is None and "slices" not in report.to_dict()
    assert "Weakest slices" not in report.to_html()


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("slices", "message"),
    [
        ([], "The 'slices' parameter of report must be a column name or a non-empty list"),
        (["lang", "lang"], "The 'slices' parameter of report must be"),
        ("actual", "The 'slices' parameter of report must be"),
        ([3], "The 'slices' parameter of report must be"),
        ("nope", "report: no column 'nope'"),
    ],
)
def test_every_engine_refuses_bad_slices_alike(engine: str, slices: Any, message: str) -> None:
    with pytest.raises(MlsqlError, match=message.replace("(", r"\(")):
        mlsql.report(frame(engine, documents(6, 40)), "actual", "predicted", slices=slices)


# ------------------------------------------------------------------ the command line
def run(args: list[str]) -> Any:
    return CliRunner().invoke(app, args)


@pytest.mark.parametrize("engine", ENGINES)
def test_eval_slices_gives_the_reports_slices(engine: str, tmp_path: Path) -> None:
    data = documents(7, 600)
    path = tmp_path / "docs.parquet"
    pq.write_table(pa.table(data), path)
    args = ["eval", str(path), "-a", "actual", "-p", "predicted", "--engine", engine]
    result = run([*args, "--slices", "lang,source", "--format", "json", "--no-progress"])
    assert result.exit_code == 0, result.stderr
    got = json.loads(result.stdout)
    want = mlsql.report(pa.table(data), "actual", "predicted", slices=["lang", "source"])
    assert got["slices"] == json.loads(want.to_json())["slices"]
    assert got["params"]["slices"]["candidates"] == ["lang", "source"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("nope", "--slices 'nope': no such column"),
        ("lang,,source", "--slices must name columns, comma-separated"),
        ("actual", "--slices 'actual' is a label or --sample-weight column"),
    ],
)
def test_eval_refuses_bad_slices(engine: str, option: str, message: str, tmp_path: Path) -> None:
    path = tmp_path / "docs.parquet"
    pq.write_table(pa.table(documents(8, 40)), path)
    args = ["eval", str(path), "-a", "actual", "-p", "predicted", "--engine", engine]
    result = run([*args, "--slices", option, "--no-progress"])
    assert result.exit_code != 0
    assert message in result.stderr


def test_a_score_report_refuses_slices(tmp_path: Path) -> None:
    path = tmp_path / "scores.parquet"
    table = pa.table(
        {
            "g": ["a", "b"] * 20,
            "actual": [["x"], ["y"]] * 20,
            "scores": pa.array(
                [[("x", 0.9)], [("y", 0.2)]] * 20,
                pa.map_(pa.string(), pa.float64()),
            ),
        }
    )
    pq.write_table(table, path)
    result = run(["eval", str(path), "-a", "actual", "-p", "scores", "--slices", "g"])
    assert result.exit_code != 0
    assert "--slices: a score report has no slices in this release" in result.stderr


def test_text_and_markdown_list_the_weakest_slices() -> None:
    data = documents(9, 600)
    data["lang"] = ["a|b" if v == "fr" else v for v in data["lang"]]
    report = mlsql.report(pa.table(data), "actual", "predicted", slices="lang")
    text = str(report)
    worst = next(line for line in text.splitlines() if line.strip().startswith("lang = 'a|b'"))
    assert worst.split()[-1] == "worse"
    markdown = report.to_markdown()
    assert "### weakest slices" in markdown
    assert "| lang = 'a\\|b' |" in markdown  # a pipe in a value does not split the table
    overall = float(micro_f1(data["actual"], data["predicted"]))
    assert (
        f"All the data: micro F1 {overall:.4f}." in text and f"micro F1 {overall:.4f}." in markdown
    )
