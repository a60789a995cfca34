"""Ctrl-C while a report is rendered (minutes for a --per-label table of many labels)
stops the rendering where it is: exit 130, one line, no output file."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mlsql.cli import app
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "data" / "blog_tags.parquet"
#: rows the fake rendering prints after the signal (a long per-label table)
ROWS_AFTER = 2000

pytestmark = pytest.mark.skipif(os.name != "posix", reason="sends SIGINT to itself")

runner = CliRunner()


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Rows a rendering printed after SIGINT came in its middle."""
    from mlsql.cli import compare
    from mlsql.report import tabular, text

    printed: list[int] = []

    def long_render(*args: Any, **kwargs: Any) -> None:
        console = next(a for a in args if hasattr(a, "print"))
        console.print("the first rows")
        os.kill(os.getpid(), signal.SIGINT)
        for i in range(ROWS_AFTER):
            console.print(f"row {i}")
            printed.append(i)

    monkeypatch.setattr(text, "render", long_render)
    monkeypatch.setattr(compare, "print_comparison", long_render)
    monkeypatch.setattr(tabular, "print_table", long_render)
    return printed


def interrupted(result: Any, printed: list[int], out: Path) -> None:
    assert result.exit_code == 130, result.output
    assert result.stderr == "mlsql: interrupted\n"
    assert len(printed) < ROWS_AFTER  # stopped mid-rendering, not once it ended
    assert not out.exists()
    assert list(out.parent.iterdir()) == []  # no temporary file left either


def test_ctrl_c_stops_eval_per_label_rendering(rendered: list[int], tmp_path: Path) -> None:
    out = tmp_path / "out" / "labels.txt"
    out.parent.mkdir()
    args = ["eval", str(EXAMPLE), "-a", "actual", "-p", "predicted", "--per-label", "-o", str(out)]
    interrupted(runner.invoke(app, args), rendered, out)


def test_ctrl_c_stops_compare_rendering(rendered: list[int], tmp_path: Path) -> None:
    data = tmp_path / "models.parquet"
    import duckdb

    duckdb.execute(
        f"COPY (SELECT i AS id, m AS model, ['a'] AS actual, ['a'] AS predicted "
        f"FROM range(4) r(i), (VALUES ('A'), ('B')) v(m)) TO '{data}'"
    )
    out = tmp_path / "out" / "compare.txt"
    out.parent.mkdir()
    args = [
        "compare",
        str(data),
        "-a",
        "actual",
        "-p",
        "predicted",
        "--baseline",
        "A",
        "--resamples",
        "10",
        "-o",
        str(out),
    ]
    interrupted(runner.invoke(app, args), rendered, out)


def test_ctrl_c_stops_sql_rendering(rendered: list[int], tmp_path: Path) -> None:
    out = tmp_path / "out" / "sql.txt"
    out.parent.mkdir()
    interrupted(runner.invoke(app, ["sql", "SELECT 1 AS x", "-o", str(out)]), rendered, out)
