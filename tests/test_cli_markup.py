"""Table output shows labels, values and names as themselves: never as rich markup,
emoji codes or terminal escape sequences."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from mlsql.cli import app
from tests.conftest import _engines

#: labels rich would read as markup (the first crashed eval), or as an emoji code
MARKUP = ["[/]", "[red]y[/red]", "a[b]c", ":cat:"]
#: a label carrying a colour and a terminal title: shown as its plain text
ANSI = "\x1b[31mred\x1b[0m\x1b]0;pwned\x07"
ANSI_SHOWN = "red"
LABELS = [*MARKUP, ANSI]

runner = CliRunner()
LOCAL_ENGINES = [e for e in _engines() if e != "spark"]


def invoke(*args: Any) -> Any:
    """``mlsql ARGS`` on a terminal wide enough that no label is cut short."""
    return runner.invoke(
        app, [str(a) for a in args], catch_exceptions=False, env={"COLUMNS": "200"}
    )


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every label right once per row of its own, with a group and model named '[/]'."""
    path = tmp_path_factory.mktemp("markup") / "markup.parquet"
    rows = [([label], [label]) for label in LABELS]
    rows += [([LABELS[0]], [LABELS[1]])]
    n = len(rows)
    pq.write_table(
        pa.table(
            {
                "actual": [a for a, _ in rows] * 2,
                "predicted": [p for _, p in rows] * 2,
                "[/]": ["[/]"] * n + ["[b]g"] * n,
                "model": ["A"] * n + ["[/]"] * n,
                "id": list(range(n)) * 2,
            }
        ),
        path,
    )
    return path


def plain(output: str) -> None:
    """No escape character reaches the terminal."""
    assert "\x1b" not in output and "\x07" not in output


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_eval_per_label_shows_every_label_as_itself(data: Path, engine: str) -> None:
    result = invoke(
        "eval", data, "-a", "actual", "-p", "predicted", "--per-label", "--engine", engine
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    for label in [*MARKUP, ANSI_SHOWN]:
        assert any(line.split()[:1] == [label] for line in lines), label
    plain(result.stdout)


def test_eval_best_and_worst_and_groups_show_names_as_themselves(data: Path) -> None:
    result = invoke("eval", data, "-a", "actual", "-p", "predicted", "--by", "[/]")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "[/] = [/]" in out and "[/] = [b]g" in out  # the group titles
    for label in MARKUP:
        assert f" {label} " in out, label
    assert any(line.split()[:1] == ["[/]"] for line in out.splitlines())  # groups table header
    plain(out)


def test_compare_shows_a_model_named_markup(data: Path) -> None:
    result = invoke(
        "compare",
        data,
        "-a",
        "actual",
        "-p",
        "predicted",
        "--baseline",
        "A",
        "--resamples",
        20,
        "--no-progress",
    )
    assert result.exit_code == 0, result.output
    rows = [line.split() for line in result.stdout.splitlines()]
    assert [r[:2] for r in rows if r[:1] == ["[/]"]] == [
        ["[/]", "micro_f1"],
        ["[/]", "samples_f1"],
        ["[/]", "subset_accuracy"],
    ]


@pytest.mark.long
def test_sql_table_shows_lists_brackets_and_names_as_themselves() -> None:
    query = (
        "SELECT ['cat', 'bird'] AS animals, 'a[b]c' AS s, '[red]y[/red]' AS r, "
        "':cat:' AS e, chr(27) || '[31mred' || chr(27) || '[0m' AS ansi, 1 AS \"[/]\""
    )
    result = invoke("sql", query, "--no-progress")
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.stdout.splitlines() if line.strip()]
    assert lines[0] == ["animals", "s", "r", "e", "ansi", "[/]"]
    assert lines[2] == ["[cat,", "bird]", "a[b]c", "[red]y[/red]", ":cat:", "red", "1"]
    plain(result.stdout)


def test_sql_shows_a_value_that_is_a_closing_tag() -> None:
    result = invoke("sql", "SELECT '[/]' AS x", "--no-progress")
    assert result.exit_code == 0, result.output
    assert [line.strip() for line in result.stdout.splitlines() if line.strip()][2] == "[/]"


@pytest.mark.long
def test_markdown_output_carries_no_escape_sequences(data: Path) -> None:
    result = invoke(
        "eval", data, "-a", "actual", "-p", "predicted", "-f", "markdown", "--per-label"
    )
    assert result.exit_code == 0, result.output
    assert f"| {ANSI_SHOWN} |" in result.stdout
    plain(result.stdout)
    query = "SELECT chr(27) || '[2J' || 'cleared' || chr(7) AS x"
    result = invoke("sql", query, "-f", "markdown")
    assert result.stdout.splitlines()[2] == "| cleared |"
