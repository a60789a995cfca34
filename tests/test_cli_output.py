"""``--output``: never over an input, and never half a file (a failure keeps the old one)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from typer.testing import CliRunner

from mlsql.cli import app
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "data" / "blog_tags.parquet"
OLD = b"the old report, which must survive\n"

runner = CliRunner()


def invoke(*args: Any) -> Any:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def eval_args(path: Any, *args: Any) -> list[Any]:
    return ["eval", path, "-a", "actual", "-p", "predicted", "--no-progress", *args]


def compare_args(path: Any, *args: Any) -> list[Any]:
    return ["compare", path, "-a", "actual", "-p", "predicted", "--baseline", "A", *args]


def refused(result: Any, output: Path, before: bytes) -> None:
    """Exit 2, one line saying why, and the file untouched."""
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"mlsql: error: --output {output} is ")
    assert "would destroy it; choose another file" in result.stderr
    assert result.stderr.count("\n") == 1
    assert output.read_bytes() == before


@pytest.fixture
def data(tmp_path: Path) -> Path:
    copy = tmp_path / "preds.parquet"
    shutil.copyfile(EXAMPLE, copy)
    return copy


# ---------------------------------------------------------------- an input is no output


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_eval_refuses_to_write_over_its_input(data: Path, fmt: str) -> None:
    before = data.read_bytes()
    refused(invoke(*eval_args(data, "-f", fmt, "-o", data)), data, before)


def test_eval_refuses_another_name_of_its_input(data: Path, tmp_path: Path) -> None:
    """Another spelling, a hard link and a symbolic link all name the same file."""
    before = data.read_bytes()
    (tmp_path / "sub").mkdir()
    spelled = tmp_path / "sub" / ".." / data.name
    refused(invoke(*eval_args(data, "-o", spelled)), spelled, before)
    linked = tmp_path / "hard.parquet"
    os.link(data, linked)
    refused(invoke(*eval_args(data, "-o", linked)), linked, before)
    symbolic = tmp_path / "soft.parquet"
    symbolic.symlink_to(data)
    refused(invoke(*eval_args(symbolic, "-o", data)), data, before)


def test_eval_refuses_any_file_of_a_glob_or_directory(tmp_path: Path) -> None:
    parts = tmp_path / "parts"
    parts.mkdir()
    for i in range(3):
        shutil.copyfile(EXAMPLE, parts / f"part-{i}.parquet")
    second = parts / "part-1.parquet"
    before = second.read_bytes()
    refused(invoke(*eval_args(parts / "part-*.parquet", "-o", second)), second, before)
    refused(invoke(*eval_args(parts, "-f", "csv", "-o", second)), second, before)


def test_eval_refuses_its_duckdb_database(tmp_path: Path) -> None:
    db = tmp_path / "my.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE tags AS SELECT * FROM '{EXAMPLE}'")
    con.close()
    before = db.read_bytes()
    refused(invoke(*eval_args(f"{db}:tags", "-o", db)), db, before)


def test_compare_refuses_to_write_over_its_input(tmp_path: Path) -> None:
    data = tmp_path / "models.parquet"
    duckdb.execute(
        f"COPY (SELECT i AS id, m AS model, ['a'] AS actual, ['a'] AS predicted "
        f"FROM range(4) r(i), (VALUES ('A'), ('B')) v(m)) TO '{data}'"
    )
    before = data.read_bytes()
    refused(invoke(*compare_args(data, "--resamples", 10, "-o", data)), data, before)


def test_sql_refuses_to_write_over_its_database(tmp_path: Path) -> None:
    db = tmp_path / "my.db"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t AS SELECT 1 AS x")
    con.close()
    before = db.read_bytes()
    refused(invoke("sql", "SELECT * FROM t", "--db", db, "-o", db), db, before)
    linked = tmp_path / "other-name.db"
    linked.symlink_to(db)
    refused(invoke("sql", "SELECT * FROM t", "--db", linked, "-o", db), db, before)
    assert duckdb.connect(str(db)).execute("SELECT x FROM t").fetchall() == [(1,)]


def test_another_output_file_is_still_written(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    assert invoke(*eval_args(data, "-f", "json", "-o", out)).exit_code == 0
    assert out.read_text().startswith("{")


# ---------------------------------------------------------------- all of it or nothing


def leftovers(folder: Path, *keep: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p not in keep)


def test_a_render_crash_keeps_the_old_file(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlsql.report import text

    out = tmp_path / "report.txt"
    out.write_bytes(OLD)

    def crash(report: Any, console: Any, **kwargs: Any) -> None:
        console.print("mlsql eval: the header, then a crash")
        raise RuntimeError("render bug")

    monkeypatch.setattr(text, "render", crash)
    with pytest.raises(RuntimeError, match="render bug"):
        invoke(*eval_args(data, "-o", out))
    assert out.read_bytes() == OLD
    assert leftovers(tmp_path, out, data) == []


@pytest.mark.parametrize("fmt", ["table", "csv"])
def test_a_write_error_keeps_the_old_file(
    data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """A full disk (ENOSPC at the last flush) is one clear line, exit 2, old file intact."""
    out = tmp_path / "report.txt"
    out.write_bytes(OLD)
    real_fsync = os.fsync

    def disk_full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    result = invoke(*eval_args(data, "-f", fmt, "-o", out))
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert result.exit_code == 2
    assert result.stderr == f"mlsql: error: cannot write {out}: No space left on device\n"
    assert out.read_bytes() == OLD
    assert leftovers(tmp_path, out, data) == []


def test_success_replaces_the_old_file_and_keeps_its_mode(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.csv"
    out.write_bytes(OLD)
    out.chmod(0o640)
    assert invoke(*eval_args(data, "-f", "csv", "-o", out)).exit_code == 0
    assert out.read_text().startswith("n_rows,")
    assert oct(out.stat().st_mode & 0o777) == oct(0o640)
    assert leftovers(tmp_path, out, data) == []


def test_an_output_through_a_link_writes_the_linked_file(data: Path, tmp_path: Path) -> None:
    real = tmp_path / "real.csv"
    real.write_bytes(OLD)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert invoke(*eval_args(data, "-f", "csv", "-o", link)).exit_code == 0
    assert link.is_symlink()
    assert real.read_text().startswith("n_rows,")
