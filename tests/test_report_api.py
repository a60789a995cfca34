"""The report as a Python object (``mlsql.report``) and what every format shows.

Expected numbers come from the conformance data (exact fractions) or the
plain-Python oracles in tests/oracle*.py, never from mlsql's own output.
"""

from __future__ import annotations

import json
import math
import random
import re
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pytest
from typer.testing import CliRunner

import mlsql
from mlsql import MlsqlError
from mlsql.cli import app
from mlsql.report import Report
from tests.conftest import _engines, conformance

#: many labels with Zipf-like frequencies, so per-label ratios have many digits
ZIPF_ROWS = """
SELECT i % 3 AS model,
       list_distinct([ 'l' || CAST(floor(1 / (random() + 0.0005)) AS INT)
                       FOR j IN range(1 + CAST(random() * 4 AS INT))]) AS actual,
       list_distinct([ 'l' || CAST(floor(1 / (random() + 0.0005)) AS INT)
                       FOR j IN range(CAST(random() * 4 AS INT))]) AS predicted
FROM range({n}) t(i)
"""


@pytest.mark.long
def test_multilabel_report_is_byte_identical_across_runs() -> None:
    """Issue 17.12: macro and weighted means are summed in a fixed order, not thread order."""
    con = duckdb.connect()
    con.execute("SET threads = 4")
    con.execute("SELECT setseed(0.42)")
    con.execute(f"CREATE TABLE t AS {ZIPF_ROWS.format(n=300_000)}")
    runs = {
        repr(mlsql.multilabel_report(con, "t", "actual", "predicted").fetchall()) for _ in range(8)
    }
    assert len(runs) == 1


def _zipf_columns(n: int, seed: int = 42) -> dict[str, list[Any]]:
    """``ZIPF_ROWS`` in plain Python: three models, one to four actual labels, zero to three predicted."""
    rng = random.Random(seed)

    def labels(at_least: int) -> list[str]:
        return sorted(
            {f"l{int(1 / (rng.random() + 0.0005))}" for _ in range(rng.randint(at_least, 4))}
        )

    return {
        "model": [i % 3 for i in range(n)],
        "actual": [labels(1) for _ in range(n)],
        "predicted": [labels(0) for _ in range(n)],
    }


def test_polars_report_is_byte_identical_across_runs() -> None:
    """Issue 17.12 on Polars: its threads add a group's floats in varying order unless sorted."""
    df = pl.DataFrame(_zipf_columns(20_000))
    for frame in (df, df.lazy()):
        runs = {mlsql.report(frame, "actual", "predicted", by="model").to_json() for _ in range(4)}
        assert len(runs) == 1


# ------------------------------------------------------------------ data and helpers
BLOG = conformance("hivemall_blog_tags.json")
ROWS = [(r["actual"], r["predicted"]) for r in BLOG["rows"]]
EXPECTED = BLOG["expected"]
ANIMALS = conformance("slides_single_label.json")["animals"]
HOSTILE = ["<img src=x onerror=alert(1)>", "a|b", "`tick`", "[link](http://x)"]


def close(a: Any, b: float) -> bool:
    return a is not None and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15)


def _frames(engine: str, columns: dict[str, list[Any]]) -> list[Any]:
    """The same rows as every kind of source ``engine`` reads (Spark: a DataFrame)."""
    table = pa.table(columns)
    if engine == "polars":
        df = pl.from_arrow(table)
        return [df, df.lazy()]
    if engine == "spark":
        from tests.engines.spark_engine import session

        return [session().createDataFrame(table)]
    return [table]


def _report(engine: str, columns: dict[str, list[Any]], **kwargs: Any) -> list[Report]:
    return [
        mlsql.report(frame, "actual", "predicted", **kwargs) for frame in _frames(engine, columns)
    ]


@pytest.fixture(scope="module", params=_engines())
def engine_name(request: pytest.FixtureRequest) -> str:
    return request.param


def _blog() -> dict[str, list[Any]]:
    return {"actual": [a for a, _ in ROWS], "predicted": [p for _, p in ROWS]}


# ------------------------------------------------------------------ 18.4: the report object
@pytest.mark.long_cases("spark")
def test_report_numbers_match_the_conformance_data(engine_name: str) -> None:
    for report in _report(engine_name, _blog()):
        assert report.engine == engine_name
        [row] = report.summary
        assert row["n_rows"] == EXPECTED["n_rows"] and row["n_labels"] == EXPECTED["n_labels"]
        assert close(row["micro_f1"], EXPECTED["micro.f1"])
        assert close(row["macro_f1"], EXPECTED["macro.f1[zd=0]"])
        assert close(row["samples_f1"], EXPECTED["samples.f1[zd=0]"])
        counts = {
            r["label"]: {k: r[k] for k in ("tp", "fp", "fn", "tn", "support")}
            for r in report.labels
        }
        assert counts == EXPECTED["per_label"]


@pytest.mark.long
def test_report_is_one_object_with_every_format() -> None:
    con = mlsql.connect()
    con.register("blog", pa.table(_blog()))
    for data in ("blog", "SELECT * FROM blog", con.table("blog")):
        report = mlsql.report(data, "actual", "predicted", con=con, beta=2.0)
        assert report.engine == "duckdb"
        assert close(report.summary[0]["micro_fbeta"], EXPECTED["micro.f2"])
        as_dict = report.to_dict()
        assert (
            json.loads(report.to_json())["summary"][0]["micro_fbeta"]
            == as_dict["summary"][0]["micro_fbeta"]
        )
        assert report.to_html().startswith("<!DOCTYPE html>")
        assert report._repr_html_() == report.to_html()
        assert "micro F2" in str(report) and "F2" in report.to_markdown()
        assert report.to_csv().splitlines()[0].startswith("n_rows,")


def test_report_rejects_bad_parameters_clearly() -> None:
    frame = pl.DataFrame(_blog())
    with pytest.raises(MlsqlError, match="beta"):
        mlsql.report(frame, "actual", "predicted", beta=0)
    with pytest.raises(MlsqlError, match="no column 'nope'"):
        mlsql.report(frame, "actual", "predicted", by="nope")
    with pytest.raises(MlsqlError, match="sep"):
        mlsql.report(frame, "actual", "predicted", sep="")
    with pytest.raises(MlsqlError, match="label column"):
        mlsql.report(frame, "actual", "predicted", by="actual")


def test_report_is_a_typed_function_with_its_own_help() -> None:
    # before: help() showed the package (292 lines) and (*args, **kwargs); dir(mlsql) lacked it
    import inspect
    import pydoc
    import subprocess
    import sys

    assert inspect.isfunction(mlsql.report)
    assert "report" in dir(mlsql)
    signature = inspect.signature(mlsql.report)
    assert list(signature.parameters) == [
        "data", "actual", "predicted", "by", "labels", "beta", "zero_division", "sep",
        "min_support", "con", "source", "slices", "sample_weight",
    ]  # fmt: skip
    assert signature.return_annotation == "Report"
    page = pydoc.render_doc(mlsql.report, renderer=pydoc.plaintext)
    assert "function report" in page and "Parameters" in page and "PACKAGE CONTENTS" not in page
    # whichever is imported first, the name stays the function and the package stays importable
    code = (
        "from mlsql.report import Report\n"
        "import mlsql.report.html, inspect, mlsql\n"
        "print(inspect.isfunction(mlsql.report), Report.__name__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout == "True Report\n", done.stderr


@pytest.mark.long
def test_a_relation_is_read_on_its_own_connection() -> None:
    # before: "report cannot read the table or view '__mlsql_source_...'"
    for con in (mlsql.connect(), duckdb.connect()):
        con.execute(
            "CREATE TABLE t AS SELECT * FROM (VALUES (['a', 'b'], ['a']), (['c'], ['c'])) v(a, p)"
        )
        report = mlsql.report(con.table("t"), actual="a", predicted="p")
        # tp 2, fp 0, fn 1: micro F1 = 2 * 2 / (2 * 2 + 0 + 1)
        assert report.summary[0]["micro_f1"] == 4 / 5
    with pytest.raises(MlsqlError) as error:
        mlsql.report(con.table("t"), "a", "p", con=mlsql.connect())
    assert str(error.value) == (
        "The 'con' parameter of report must be the connection of the relation 'data' (a "
        "relation is read on the connection that made it); leave 'con' out to use it."
    )


def test_user_frame_is_not_modified() -> None:
    frame = pl.DataFrame({"a": ["x", "y", None], "p": ["x", "x", "y"]})
    before = frame.clone()
    mlsql.report(frame, "a", "p")
    assert frame.equals(before) and frame.schema == before.schema


@pytest.mark.parametrize("digits", [2, 4])
def test_classification_report_is_scikit_learns_text(digits: int) -> None:
    from sklearn.metrics import classification_report
    from sklearn.preprocessing import MultiLabelBinarizer

    binarizer = MultiLabelBinarizer().fit([a for a, _ in ROWS] + [p for _, p in ROWS])
    y_true = binarizer.transform([a for a, _ in ROWS])
    y_pred = binarizer.transform([p for _, p in ROWS])
    want = classification_report(
        y_true, y_pred, target_names=list(binarizer.classes_), digits=digits, zero_division=0
    )
    report = mlsql.report(pl.DataFrame(_blog()), "actual", "predicted")
    assert report.classification_report(digits=digits) == want
    # one label per row: an accuracy row instead of micro avg, no samples avg
    columns = {"actual": ANIMALS["actual"], "predicted": ANIMALS["predicted"]}
    want = classification_report(
        ANIMALS["actual"], ANIMALS["predicted"], digits=digits, zero_division=0
    )
    assert (
        mlsql.report(pa.table(columns), "actual", "predicted").classification_report(digits=digits)
        == want
    )


# ------------------------------------------------------------------ 17.3: Markdown escapes
def test_markdown_escapes_label_text() -> None:
    """Issue 17.3: label text is shown, never read as HTML, links, code or table syntax."""
    columns = {"actual": [[x] for x in HOSTILE] * 2, "predicted": [[x] for x in HOSTILE] * 2}
    report = mlsql.report(pa.table(columns), "actual", "predicted", source="`x` <b>")
    for page in (report.to_markdown(per_label=True), report.to_markdown()):
        assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
        assert "<b>" not in page and not re.search(r"(?<!\\)\]\(http", page)
        assert "a\\|b" in page and "\\`tick\\`" in page
        lines = page.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("| label"))
        rows = lines[start + 2 : lines.index("", start)]
        assert len(rows) == len(HOSTILE)
        assert {_pipes(row) for row in rows} == {_pipes(lines[start])}


def _pipes(line: str) -> int:
    """Cell borders of a Markdown table row (pipes not escaped)."""
    return len(re.findall(r"(?<!\\)\|", line))


def test_sql_markdown_escapes_values(tmp_path: Any) -> None:
    from mlsql.report.tabular import render

    page = render("markdown", ["label"], [(HOSTILE[0],), (HOSTILE[1],)])
    assert "<img" not in page and "a\\|b" in page


# ------------------------------------------------------------------ 18.5: what the report shows
@pytest.mark.long_cases("spark")
def test_skipped_rows_are_in_json_and_html(engine_name: str) -> None:
    columns = _blog()
    columns["actual"] += [None, ["cat"]]
    columns["predicted"] += [["cat"], None]
    for report in _report(engine_name, columns):
        data = json.loads(report.to_json())
        assert data["rows_read"] == len(ROWS) + 2 and data["rows_skipped_null"] == 2
        assert close(data["summary"][0]["micro_f1"], EXPECTED["micro.f1"])
        assert f"2 of {len(ROWS) + 2} rows have a NULL" in report.to_html()


def test_json_carries_version_and_parameters() -> None:
    report = mlsql.report(pa.table(_blog()), "actual", "predicted", beta=2.0, labels=["cat", "dog"])
    data = json.loads(report.to_json())
    assert data["mlsql_version"] == mlsql.__version__
    assert data["params"]["beta"] == 2.0 and data["params"]["labels"] == ["cat", "dog"]
    assert data["params"]["min_support"] == 5


def test_the_groups_table_keeps_its_headings_whole_at_80_columns() -> None:
    # before: "weigh…", "sampl…", "Hammi…" at 80 columns
    import io

    from rich.console import Console

    from mlsql.report import text

    columns = {**_blog(), "model": ["a", "b"] * (len(ROWS) // 2) + ["a"] * (len(ROWS) % 2)}
    report = mlsql.report(pl.DataFrame(columns), "actual", "predicted", by="model")
    for width in (80, 60):
        out = io.StringIO()
        text.render(report, Console(file=out, width=width, color_system=None), digits=4)
        table = out.getvalue().split("model = a")[0]
        assert "…" not in table, table
        words = table.split()
        assert {"weighted", "samples", "Hamming", "loss", "subset", "acc."} <= set(words)
        if width == 80:
            assert max(map(len, table.splitlines())) <= 80, table


def _svg_texts(svg: str) -> list[str]:
    return re.findall(r"<text[^>]*>([^<]*)</text>", svg)


def test_charts_label_their_axes_with_whole_supports_and_names_apart() -> None:
    from mlsql.report import charts

    # supports 3 to 5: before, the log axis ticked 3, 3.2 ... 5
    narrow = [{"label": f"l{i}", "support": 3 + i % 3, "f1": i / 20} for i in range(20)]
    texts = _svg_texts(charts.frequency_scatter(narrow, "F1", "f1"))
    assert texts[: texts.index("support (log)")] == ["3", "4", "5"]
    # supports 1 to 5,000: before, ticks at 2,000 and 3,000 ran together ("2,0003,000")
    wide = [{"label": f"w{i}", "support": 1 + 5 * i, "f1": (i % 7) / 7} for i in range(1000)]
    texts = _svg_texts(charts.frequency_scatter(wide, "F1", "f1"))
    assert texts[: texts.index("support (log)")] == ["1", "10", "100", "1,000"]
    # five labels on one spot: one name is drawn there, not five on top of each other
    same = [{"label": f"same{i}", "support": 7, "f1": 0.25} for i in range(5)]
    other = [{"label": "far", "support": 900, "f1": 0.9}]
    texts = _svg_texts(charts.frequency_scatter(same + other, "F1", "f1", min_support=5))
    assert [t for t in texts if t.startswith("same")] == ["same0"] and "far" in texts
    # the bars' value axis says what it measures (before: no title)
    bars = [{"label": "a", "support": 3, "precision": 0.5, "recall": 0.25, "f1": 1 / 3}]
    assert "precision, recall, F1" in _svg_texts(charts.label_bars(bars, "F1", "f1"))


def test_best_and_worst_labels_need_support() -> None:
    """A label seen once and predicted right is not 'best'; labels never seen are not 'worst'."""
    rows = []
    for i in range(8):  # eight labels with support 6 and F falling with i
        rows += [([f"l{i}"], [f"l{i}"])] * (6 - i % 6) + [([f"l{i}"], ["x"])] * (i % 6)
    rows += [(["rare"], ["rare"]), (["z"], ["never_true"])]
    columns = {"actual": [a for a, _ in rows], "predicted": [p for _, p in rows]}
    report = mlsql.report(pa.table(columns), "actual", "predicted", min_support=5)
    [group] = report.groups()
    best, worst = group.best_and_worst(min_support=5)
    shown = {r["label"] for r in best + worst}
    assert all(r["support"] >= 5 for r in best + worst)
    assert not shown & {"rare", "never_true", "x", "z"}
    text = str(report)
    assert "support >= 5" in text and "support &gt;= 5" in report.to_html()
    page = report.to_markdown()
    assert "**best labels**" in page and "**worst labels**" in page


def test_single_label_report_has_no_multi_label_rows() -> None:
    columns = {"actual": ANIMALS["actual"], "predicted": ANIMALS["predicted"]}
    report = mlsql.report(pl.DataFrame(columns), "actual", "predicted")
    assert report.single_label
    [row] = report.summary
    assert close(row["accuracy"], ANIMALS["expected"]["accuracy"])
    for page in (str(report), report.to_markdown(), report.to_html()):
        for name in ("samples", "Hamming", "CLP", "MLP", "WLP", "subset accuracy"):
            assert name not in page, name


def test_many_groups_print_one_comparison_table() -> None:
    rng = random.Random(3)
    n = 400
    columns = {
        "model": [f"m{i % 200:03d}" for i in range(n)],
        "actual": [[rng.choice("abc"), rng.choice("de")] for _ in range(n)],
        "predicted": [[rng.choice("abcde")] for _ in range(n)],
    }
    report = mlsql.report(pa.table(columns), "actual", "predicted", by="model")
    text = str(report)
    lines = text.splitlines()
    assert len(lines) < 200 + 20  # one line per group, not a block each
    assert "m000" in lines[3] or any("m000" in line for line in lines[:8])
    assert "--format html" in text
    page = report.to_markdown()
    assert page.index("### groups") < page.index("### model = m000")


def test_cli_json_has_skipped_rows_and_version(tmp_path: Any) -> None:
    import pyarrow.parquet as pq

    path = tmp_path / "nulls.parquet"
    columns = _blog()
    columns["actual"] += [None]
    columns["predicted"] += [["cat"]]
    pq.write_table(pa.table(columns), path)
    result = CliRunner().invoke(
        app, ["eval", str(path), "-a", "actual", "-p", "predicted", "-f", "json"]
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["rows_skipped_null"] == 1 and data["mlsql_version"] == mlsql.__version__


# ------------------------------------------------------------------ 18.1: many classes
@pytest.mark.long
def test_many_classes_keep_only_non_zero_confusion_cells() -> None:
    rng = random.Random(1)
    n = 50_000
    actual = [f"c{rng.randrange(5000)}" for _ in range(n)]
    predicted = [a if rng.random() < 0.5 else f"c{rng.randrange(5000)}" for a in actual]
    report = mlsql.report(
        pa.table({"actual": actual, "predicted": predicted}), "actual", "predicted"
    )
    [confusion] = report.confusion.values()
    assert len(confusion.classes) == len(set(actual) | set(predicted))
    assert len(confusion.cells) == len(set(zip(actual, predicted, strict=True)))
    assert sum(c for _, _, c in confusion.cells) == n
    cells = json.loads(report.to_json())["confusion_matrices"][0]["cells"]
    assert len(cells) == len(confusion.cells)
    assert len(str(report).splitlines()) < 60  # the terminal shows a bounded summary


#: text label lists with tabs, newlines, a vertical tab and a no-break space around their labels
SPLIT = {
    "actual": ["a\t| b\n", " c |\x0bd", "\xa0e|a", None, "|"],
    "predicted": ["a|b", "c\r\n", "\xa0e", "a", "b"],
}


@pytest.mark.long_cases("spark")
def test_text_split_on_sep_strips_the_same_whitespace_on_every_engine(engine_name: str) -> None:
    """Each part of a text split on sep loses its ASCII whitespace at both ends (Python's
    ``str.strip(string.whitespace)``), on every engine; a no-break space is kept, and an
    empty part is no label. (DuckDB's trim once kept 'a\t', Polars' stripped the no-break
    space.)"""
    import string

    def labels(text: str | None) -> set[str]:
        parts = (p.strip(string.whitespace) for p in (text or "").split("|"))
        return {p for p in parts if p}

    want = sorted(
        set().union(*(labels(t) for t in SPLIT["actual"]), *(labels(t) for t in SPLIT["predicted"]))
    )
    assert want == ["a", "b", "c", "d", "\xa0e"]  # code point order
    for report in _report(engine_name, SPLIT, sep="|"):
        assert [r["label"] for r in report.labels] == want
        tp = {r["label"]: r["tp"] for r in report.labels}
        assert tp == {"\xa0e": 1, "a": 1, "b": 1, "c": 1, "d": 0}


def test_single_label_values_that_look_like_lists_are_warned_about() -> None:
    rows = 100
    columns = {
        "actual": [f"t{i}|t{i + 1}" for i in range(rows)],
        "predicted": [f"t{i}" for i in range(rows)],
    }
    report = mlsql.report(pl.DataFrame(columns), "actual", "predicted")
    notes = " ".join(report.notes)
    assert "nearly one class per row" in notes and "sep='|'" in notes
    split = mlsql.report(pl.DataFrame(columns), "actual", "predicted", sep="|")
    assert not split.single_label and not split.notes


# ------------------------------------------------------------------ 18.6: charts
def _axis(svg: str, title: str) -> tuple[str, float, float]:
    """(scale type, first, last value) of the Vega SVG axis titled ``title`` (its aria-label)."""
    found = re.search(
        rf"axis titled '{re.escape(title)}' for a (\w+) scale with values from ([\d.,]+) to ([\d.,]+)",
        svg,
    )
    assert found, f"no axis {title!r}"
    low, high = (float(v.replace(",", "")) for v in found.group(2, 3))
    return found.group(1), low, high


def test_charts_fit_the_data_and_name_few_points() -> None:
    from mlsql.report import charts

    rows = [{"label": f"l{i}", "support": 199_770 + i, "f1": 0.80 + i / 1000} for i in range(50)]
    svg = charts.frequency_scatter(rows, "F1", "f1", min_support=5)
    assert "http" not in svg.split(">", 1)[1] and "<script" not in svg
    _, low, high = _axis(svg, "F1")
    assert low >= 0.75 and high <= 0.9  # fitted, not a fixed 0-1 axis
    scale, low, high = _axis(svg, "support (log)")
    assert scale == "log" and low > 199_000 and high < 200_000  # fitted, never from 0
    named = re.findall(r">(l\d+)</text>", svg)
    assert 0 < len(named) <= 2 * charts.NAMED_POINTS  # a few extremes, not every point


def test_html_page_is_self_contained_and_says_how_to_get_charts(monkeypatch: Any) -> None:
    from mlsql.report import charts

    report = mlsql.report(pa.table(_blog()), "actual", "predicted")
    page = report.to_html()
    assert not re.search(r"<script[^>]*src", page, re.I)
    assert "https://" not in page and "http://" not in page
    assert len(re.findall(r'<svg[^>]*class="chart', page)) == 2
    monkeypatch.setattr(
        charts, "missing", lambda: "Charts need altair: pip install 'mlsql[report]'"
    )
    page = report.to_html()
    assert "mlsql[report]" in page and "<svg" not in page
