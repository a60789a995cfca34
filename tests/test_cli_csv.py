"""CSV output is safe to open in a spreadsheet: text that starts like a formula gets a
leading apostrophe (OWASP's CSV injection advice); numbers, negative ones too, stay numbers."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from mlsql.cli import app

runner = CliRunner()


def invoke(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def rows_of(result: Any) -> list[list[str]]:
    assert result.exit_code == 0, result.output
    return list(csv.reader(io.StringIO(result.stdout, newline="")))


@pytest.mark.long
def test_sql_csv_guards_text_and_keeps_numbers() -> None:
    query = (
        "SELECT '=1+1' AS a, '+x' AS b, '-y' AS c, '@SUM(A1)' AS d, chr(9) || 't' AS e, "
        "chr(13) || 'r' AS f, 'a' || chr(13) || 'b' AS g, -1 AS h, -2.5 AS i, ['=x'] AS j, 1 AS \"=k\""
    )
    assert rows_of(invoke("sql", query, "-f", "csv")) == [
        ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "'=k"],
        ["'=1+1", "'+x", "'-y", "'@SUM(A1)", "'\tt", "'\rr", "a\rb", "-1", "-2.5", "[=x]", "1"],
    ]


def test_eval_csv_guards_labels(tmp_path: Path) -> None:
    """Three labels, each predicted right once: support 1 and F1 1.0 for each."""
    data = tmp_path / "labels.parquet"
    labels = ["=HYPERLINK(1)", "-1", "@x"]
    pq.write_table(
        pa.table({"actual": [[x] for x in labels], "predicted": [[x] for x in labels]}), data
    )
    rows = rows_of(
        invoke("eval", data, "-a", "actual", "-p", "predicted", "-f", "csv", "--per-label")
    )
    header, body = rows[0], rows[1:]
    got = {
        r[header.index("label")]: (r[header.index("support")], r[header.index("f1")]) for r in body
    }
    assert got == {"'=HYPERLINK(1)": ("1", "1.0"), "'-1": ("1", "1.0"), "'@x": ("1", "1.0")}


def test_eval_csv_guards_group_columns_and_values(tmp_path: Path) -> None:
    data = tmp_path / "groups.parquet"
    pq.write_table(
        pa.table({"actual": [["a"], ["b"]], "predicted": [["a"], ["b"]], "=g": ["+1", "cat"]}),
        data,
    )
    rows = rows_of(
        invoke("eval", data, "-a", "actual", "-p", "predicted", "-f", "csv", "--by", "=g")
    )
    assert rows[0][0] == "'=g"
    assert sorted(r[0] for r in rows[1:]) == ["'+1", "cat"]


def test_compare_csv_guards_model_names_not_negative_differences(tmp_path: Path) -> None:
    """Baseline 'A' right on every row, model '=B' wrong on every row: difference exactly -1."""
    data = tmp_path / "models.parquet"
    n = 6
    pq.write_table(
        pa.table(
            {
                "id": list(range(n)) * 2,
                "model": ["A"] * n + ["=B"] * n,
                "actual": [["x"]] * (2 * n),
                "predicted": [["x"]] * n + [["y"]] * n,
            }
        ),
        data,
    )
    rows = rows_of(
        invoke(
            "compare",
            data,
            "-a",
            "actual",
            "-p",
            "predicted",
            "--baseline",
            "A",
            "-m",
            "subset_accuracy",
            "--resamples",
            20,
            "-f",
            "csv",
        )
    )
    header, (row,) = rows[0], rows[1:]
    got = dict(zip(header, row, strict=True))
    assert (got["model"], got["baseline_estimate"], got["estimate"], got["difference"]) == (
        "'=B",
        "1.0",
        "0.0",
        "-1.0",
    )
