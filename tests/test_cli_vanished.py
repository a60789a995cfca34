"""An input file removed while the engine reads it: one line and exit 2 on every engine."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mlsql.cli import app, run
from tests.conftest import ENGINE_ADAPTERS, ROOT, _engines, _load_adapter

EXAMPLE = ROOT / "examples" / "data" / "blog_tags.parquet"

runner = CliRunner()


@pytest.fixture(params=_engines())
def cli_engine(request: pytest.FixtureRequest) -> str:
    """Every engine; Spark on the test suite's session (the CLI reuses an active one)."""
    if request.param == "spark":
        _load_adapter(ENGINE_ADAPTERS["spark"])
    return request.param


def test_a_file_removed_mid_glob_is_one_line_and_exit_2(
    tmp_path: Path, cli_engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        shutil.copyfile(EXAMPLE, tmp_path / f"part-{i}.parquet")
    gone = tmp_path / "part-1.parquet"
    real = run._on_engine

    def remove_then_read(*args: Any) -> Any:  # described by DuckDB, then removed
        gone.unlink()
        return real(*args)

    monkeypatch.setattr(run, "_on_engine", remove_then_read)
    result = runner.invoke(
        app,
        [
            "eval",
            str(tmp_path / "part-*.parquet"),
            "-a",
            "actual",
            "-p",
            "predicted",
            "--engine",
            cli_engine,
            "--no-progress",
        ],
    )
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("mlsql: error: ")
    assert result.stderr.count("\n") == 1
    assert str(gone) in result.stderr
