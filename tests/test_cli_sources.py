"""What ``mlsql eval`` reads, on every engine: literal file names, every input kind, zero rows.

Each engine reads the files itself (Polars lazily, Spark with ``spark.read``);
the expected numbers come from tests/data/conformance and the plain-Python
oracle in tests/oracle.py, and every engine must give the same report.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from mlsql.cli import app
from tests import oracle
from tests.conftest import ENGINE_ADAPTERS, _engines, _load_adapter, conformance

BLOG = conformance("hivemall_blog_tags.json")
ROWS = [(r["actual"], r["predicted"]) for r in BLOG["rows"]]
EXPECTED = BLOG["expected"]

runner = CliRunner()


@pytest.fixture(params=_engines())
def engine(request: pytest.FixtureRequest) -> str:
    """Every engine; Spark on the test suite's session (the CLI reuses an active one)."""
    if request.param == "spark":
        _load_adapter(ENGINE_ADAPTERS["spark"])
    return request.param


def report(path: Any, engine: str, *args: Any) -> dict[str, Any]:
    """``mlsql eval PATH --format json --engine ENGINE ARGS``, parsed."""
    argv = ["eval", str(path), "-a", "actual", "-p", "predicted", "-f", "json", "--engine", engine]
    result = runner.invoke(app, [*argv, *map(str, args)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def table(rows: list[tuple[Any, Any]]) -> pa.Table:
    kind = pa.list_(pa.string())
    return pa.table(
        {
            "actual": pa.array([a for a, _ in rows], kind),
            "predicted": pa.array([p for _, p in rows], kind),
        }
    )


def assert_rows(got: dict[str, Any], rows: list[tuple[Any, Any]]) -> None:
    """The summary is that of exactly ``rows`` (by the oracle)."""
    [row] = got["summary"]
    assert row["n_rows"] == len(rows)
    assert row["micro_f1"] == pytest.approx(oracle.aggregate("micro_f1", rows), rel=1e-12)
    assert row["samples_jaccard"] == pytest.approx(
        oracle.aggregate("samples_jaccard", rows), rel=1e-12
    )


def assert_same_report(got: dict[str, Any], want: dict[str, Any]) -> None:
    """The same report but for the engine's name, floats to 1e-12 (sums may differ in order)."""

    def norm(value: Any, approx: bool) -> Any:
        if isinstance(value, dict):
            return {k: norm(v, approx) for k, v in value.items() if k != "engine"}
        if isinstance(value, list):
            return [norm(v, approx) for v in value]
        if approx and isinstance(value, float):
            return pytest.approx(value, rel=1e-12, abs=1e-15)
        return value

    assert norm(got, False) == norm(want, True)


# ---------------------------------------------------------------- 17.13 literal names


@pytest.fixture(scope="module")
def tricky(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Files whose names hold glob characters, one conformance row each."""
    d = tmp_path_factory.mktemp("tricky")
    stars = d / "stars"
    stars.mkdir()
    for i, name in enumerate(["a*.parquet", "ab.parquet", "ac.parquet"]):
        pq.write_table(table(ROWS[i : i + 1]), stars / name)
    brackets = d / "brackets"
    brackets.mkdir()
    pq.write_table(table(ROWS[3:4]), brackets / "br[1].parquet")
    ndjson = d / "ndjson"
    ndjson.mkdir()
    for i, name in enumerate(["n*.ndjson", "nb.ndjson", "n[1].ndjson"]):
        a, p = ROWS[i]
        (ndjson / name).write_text(json.dumps({"actual": a, "predicted": p}) + "\n")
    return d


@pytest.mark.long_cases("spark")
def test_a_directory_counts_each_file_once(tricky: Path, engine: str) -> None:
    # a*.parquet must not be expanded again to a*, ab and ac (5 rows before the fix)
    assert_rows(report(tricky / "stars", engine), ROWS[0:3])


@pytest.mark.long_cases("spark")
def test_a_pattern_counts_each_match_once(tricky: Path, engine: str) -> None:
    # ? matches the * of a*.parquet too: three files, each read once
    assert_rows(report(tricky / "stars" / "a?.parquet", engine), ROWS[0:3])


@pytest.mark.long_cases("spark")
def test_a_path_naming_an_existing_file_is_that_file(tricky: Path, engine: str) -> None:
    assert_rows(report(tricky / "stars" / "a*.parquet", engine), ROWS[0:1])


@pytest.mark.long_cases("spark")
def test_a_name_with_brackets_is_that_file(tricky: Path, engine: str) -> None:
    # "no files match" before the fix: [1] was read as a character class
    assert_rows(report(tricky / "brackets" / "br[1].parquet", engine), ROWS[3:4])
    assert_rows(report(tricky / "brackets", engine), ROWS[3:4])


@pytest.mark.long_cases("spark")
def test_ndjson_names_with_glob_characters(tricky: Path, engine: str) -> None:
    assert_rows(report(tricky / "ndjson", engine), ROWS[0:3])
    assert_rows(report(tricky / "ndjson" / "n[1].ndjson", engine), ROWS[2:3])


# ---------------------------------------------------------------- every input kind


@pytest.fixture(scope="module")
def kinds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The conformance rows in every format mlsql reads."""
    d = tmp_path_factory.mktemp("kinds")
    out = {"parquet": d / "blog.parquet"}
    pq.write_table(table(ROWS), out["parquet"])
    parts = d / "parts"
    parts.mkdir()
    pq.write_table(table(ROWS[:3]), parts / "part-0.parquet")
    pq.write_table(table(ROWS[3:]), parts / "part-1.parquet")
    out["dir"] = parts
    lines = [json.dumps({"actual": a, "predicted": p}) for a, p in ROWS]
    out["ndjson"] = d / "blog.ndjson"
    out["ndjson"].write_text("".join(line + "\n" for line in lines))
    out["json"] = d / "blog.json"
    out["json"].write_text("[" + ",\n".join(lines) + "]")
    for key, delimiter in (("csv", ","), ("tsv", "\t"), ("semicolon", ";")):
        out[key] = d / f"blog_{key}.{'tsv' if key == 'tsv' else 'csv'}"
        with out[key].open("w", newline="") as f:
            writer = csv.writer(f, delimiter=delimiter)
            writer.writerow(["actual", "predicted"])
            writer.writerows(["|".join(a), "|".join(p)] for a, p in ROWS)
    out["duckdb"] = d / "blog.duckdb"
    con = duckdb.connect(str(out["duckdb"]))
    con.register("src", table(ROWS))
    con.execute("CREATE TABLE tags AS SELECT * FROM src")
    con.close()
    return out


def refuse_duckdb_data(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any data fetched from a DuckDB relation fails the test (issue 18.3: each engine reads)."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the data went through DuckDB")

    for name in ("pl", "to_arrow_table", "arrow", "df", "fetchall", "fetch_arrow_table"):
        monkeypatch.setattr(duckdb.DuckDBPyRelation, name, refuse, raising=False)


@pytest.mark.long_cases(
    "spark-parquet-extra0",
    "spark-dir-extra1",
    "spark-ndjson-extra2",
    "spark-json-extra3",
    "spark-csv-extra4",
    "spark-tsv-extra5",
    "spark-semicolon-extra6",
    "spark-duckdb-extra7",
)
@pytest.mark.parametrize(
    ("key", "extra"),
    [
        ("parquet", ()),
        ("dir", ()),
        ("ndjson", ()),
        ("json", ()),
        ("csv", ("--sep", "|")),
        ("tsv", ("--sep", "|")),
        ("semicolon", ("--sep", "|")),
        ("duckdb", ()),
    ],
)
def test_every_input_kind_on_every_engine(
    kinds: dict[str, Path],
    engine: str,
    key: str,
    extra: tuple[str, ...],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 18.3 too: Polars and Spark read every kind but a DuckDB file without DuckDB."""
    if engine != "duckdb" and key != "duckdb":
        refuse_duckdb_data(monkeypatch)
    path = f"{kinds[key]}:tags" if key == "duckdb" else kinds[key]
    [row] = report(path, engine, *extra)["summary"]
    assert row["n_rows"] == EXPECTED["n_rows"]
    for column, want in (
        ("micro_f1", EXPECTED["micro.f1"]),
        ("macro_f1", EXPECTED["macro.f1[zd=0]"]),
        ("samples_jaccard", EXPECTED["samples.jaccard[zd=0]"]),
        ("hamming_loss", EXPECTED["hamming_loss"]),
    ):
        assert row[column] == pytest.approx(want, rel=1e-12), column


# ---------------------------------------------------------------- 17.15 zero rows


@pytest.mark.long_cases("spark-lists", "spark-one label per row")
@pytest.mark.parametrize("shape", ["lists", "one label per row"])
def test_zero_rows_stop_the_run_on_every_engine(tmp_path: Path, engine: str, shape: str) -> None:
    # before: exit 0 and a table of dashes (an empty CSV already stopped with exit 2)
    path = tmp_path / "zero.parquet"
    kind = pa.list_(pa.string()) if shape == "lists" else pa.string()
    pq.write_table(pa.table({"actual": pa.array([], kind), "predicted": pa.array([], kind)}), path)
    argv = ["eval", str(path), "-a", "actual", "-p", "predicted", "--engine", engine]
    result = runner.invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 2, result.stdout
    assert result.stdout == ""
    assert result.stderr == (
        f"mlsql: error: {path} is empty: it has columns but no rows; mlsql needs rows of "
        "'actual' and 'predicted' to evaluate\n"
    )


@pytest.mark.parametrize("name", ["empty.csv", "empty.ndjson"])
def test_an_empty_file_says_it_is_empty(tmp_path: Path, engine: str, name: str) -> None:
    # before: "no such column ...; columns: column0" (or "json"), names DuckDB invented
    path = tmp_path / name
    path.write_text("\n")
    argv = ["eval", str(path), "-a", "actual", "-p", "predicted", "--engine", engine]
    result = runner.invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stderr == (
        f"mlsql: error: {path} is empty: it has no columns and no rows; mlsql needs the "
        "columns named by --actual and --predicted\n"
    )


@pytest.mark.long_cases("spark")
def test_a_quoted_line_break_is_part_of_its_value(tmp_path: Path, engine: str) -> None:
    """Spark split such a record (four rows read, the class 'b"'), and a header holding one
    failed with a raw ASSIGNMENT_ARITY_MISMATCH."""
    path = tmp_path / "breaks.csv"
    path.write_text('"y\nz",p\n"a\nb","a\nb"\nc,c\nc,d\n')
    argv = ["eval", str(path), "-a", "y\nz", "-p", "p", "-f", "json", "--engine", engine]
    result = runner.invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["rows_read"] == 3, report

    def strings(x: object) -> list[str]:
        if isinstance(x, dict):
            return [s for v in x.values() for s in strings(v)]
        if isinstance(x, list):
            return [s for v in x for s in strings(v)]
        return [x] if isinstance(x, str) else []

    assert "a\nb" in strings(report)  # the class, whole


@pytest.mark.long_cases("spark")
def test_a_header_without_rows_stops_the_run(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "header.csv"
    path.write_text("actual,predicted\n")
    argv = ["eval", str(path), "-a", "actual", "-p", "predicted", "--sep", "|"]
    result = runner.invoke(app, [*argv, "--engine", engine], catch_exceptions=False)
    assert result.exit_code == 2, result.stdout
    assert result.stderr == (
        f"mlsql: error: {path} is empty: it has columns but no rows; mlsql needs rows of "
        "'actual' and 'predicted' to evaluate\n"
    )


# ---------------------------------------------------------------- 18.3 each engine reads


def test_the_polars_frame_is_a_lazy_scan_of_the_files(kinds: dict[str, Path]) -> None:
    from mlsql.cli import polars_input
    from mlsql.cli.sources import open_source, prepare, resolve

    con = duckdb.connect()
    prepared = prepare(con, open_source(con, resolve(str(kinds["dir"]))), "actual", "predicted")
    frame = polars_input.prepare(con, prepared)
    plan = frame.explain()
    assert "part-0.parquet" in plan or "Parquet SCAN" in plan.replace("PARQUET", "Parquet")
    assert polars_input.count_unknown(frame) == (0, EXPECTED["n_rows"])


@pytest.mark.first(rank=21)
@pytest.mark.long
def test_spark_master_option_is_the_session_master(kinds: dict[str, Path]) -> None:
    """--spark-master reaches Spark (no session is running in this fresh process)."""
    if "spark" not in _engines():
        pytest.skip("Spark is not among MLSQL_TEST_ENGINES")
    import subprocess
    import sys

    argv = ["eval", str(kinds["parquet"]), "-a", "actual", "-p", "predicted", "--engine", "spark"]
    result = subprocess.run(
        [sys.executable, "-m", "mlsql.cli", *argv, "--spark-master", "nonsense://nowhere"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert "Master must" in result.stderr  # Spark's own verdict on the URL it was given


@pytest.mark.first(rank=5)
@pytest.mark.long
def test_spark_prints_no_jvm_warning(kinds: dict[str, Path]) -> None:
    """Issue 18.5: no "WARNING: Using incubator modules" from the JVM Spark starts."""
    if "spark" not in _engines():
        pytest.skip("Spark is not among MLSQL_TEST_ENGINES")
    import subprocess
    import sys

    argv = ["eval", str(kinds["parquet"]), "-a", "actual", "-p", "predicted", "--engine", "spark"]
    result = subprocess.run(
        [sys.executable, "-m", "mlsql.cli", *argv, "--spark-master", "local[1]"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "micro" in result.stdout.lower()
    assert "WARNING" not in result.stderr and "incubator" not in result.stderr, result.stderr


# ---------------------------------------------------------------- the same columns everywhere


@pytest.fixture(scope="module")
def awkward(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Column types and cells every engine must turn into the same label lists."""
    d = tmp_path_factory.mktemp("awkward")
    con = duckdb.connect()
    out = {k: d / f"{k}.parquet" for k in ("wide", "boolean", "enum")}
    con.execute(
        "COPY (SELECT 'g' || (i % 2) AS g, [i::UBIGINT, 18446744073709551615::UBIGINT] AS actual, "
        f"[i::UBIGINT] AS predicted FROM range(6) r(i)) TO '{out['wide']}'"
    )
    con.execute(
        f"COPY (SELECT i % 2 = 0 AS actual, i % 3 = 0 AS predicted FROM range(9) r(i)) "
        f"TO '{out['boolean']}'"
    )
    con.execute("CREATE TYPE animal AS ENUM ('cat', 'dog', 'bird')")
    con.execute(
        "COPY (SELECT (['cat', 'dog', 'bird'])[1 + i % 3]::animal AS actual, "
        "(['cat', 'dog', 'bird'])[1 + i % 2]::animal AS predicted, i % 2 AS g "
        f"FROM range(9) r(i)) TO '{out['enum']}'"
    )
    out["cells"] = d / "cells.csv"
    out["cells"].write_text("g,actual,predicted\n1,a|b,a\n1,,b\n2,c| , \n2,a,\n")
    out["headerless"] = d / "headerless.csv"  # DuckDB names the columns column0, column1
    out["headerless"].write_text("1,2\n2,2\n3,1\n")
    out["twice"] = d / "twice.csv"  # DuckDB names the second 'a' a_1
    out["twice"].write_text("a,a\nx,x\ny,x\n")
    return out


# 1.4-3.5 s a case: Polars' ``wide`` case stays in the README's run beside DuckDB's six
@pytest.mark.long_cases(
    "polars-boolean-extra1",
    "polars-enum-extra2",
    "polars-cells-extra3",
    "polars-headerless-extra4",
    "polars-twice-extra5",
    "spark-boolean-extra1",
    "spark-enum-extra2",
    "spark-cells-extra3",
    "spark-headerless-extra4",
    "spark-twice-extra5",
)
@pytest.mark.parametrize(
    ("key", "extra"),
    [
        ("wide", ("--by", "g")),
        ("boolean", ()),
        ("enum", ("--by", "g")),
        ("cells", ("--sep", "|")),
        ("headerless", ("-a", "column0", "-p", "column1")),
        ("twice", ("-a", "a", "-p", "a_1")),
    ],
)
def test_awkward_columns_give_the_same_report_on_every_engine(
    awkward: dict[str, Path],
    engine: str,
    key: str,
    extra: tuple[str, ...],
) -> None:
    if engine == "spark" and key == "wide":
        # Spark has no integer wider than 64 bits (it reads UBIGINT as DECIMAL(20,0), and
        # decimals are no labels): --engine spark says so before it starts, and exits 2
        argv = ["eval", str(awkward[key]), "-a", "actual", "-p", "predicted", "--engine", engine]
        result = runner.invoke(app, [*argv, *extra])
        assert result.exit_code == 2, result.output
        assert "integers wider than 64 bits" in result.stderr
        assert "--engine duckdb or --engine polars" in result.stderr
        return
    got = report(awkward[key], engine, *extra)
    assert_same_report(got, report(awkward[key], "duckdb", *extra))
    assert got["summary"][0]["n_rows"] > 0


@pytest.mark.long_cases("spark")
def test_boolean_labels_are_one_label_per_row(awkward: dict[str, Path], engine: str) -> None:
    # before: a Binder Error from the --sep hint (regexp_matches on BOOLEAN)
    [row] = report(awkward["boolean"], engine)["summary"]
    pairs = [(i % 2 == 0, i % 3 == 0) for i in range(9)]
    assert row["n_rows"] == 9
    assert row["accuracy"] == pytest.approx(sum(a == p for a, p in pairs) / 9, rel=1e-12)


@pytest.mark.long_cases("spark")
def test_sep_strips_ascii_whitespace_around_each_label(tmp_path: Path, engine: str) -> None:
    """--sep: each part loses its ASCII whitespace at both ends, as every engine's report
    strips it (tests/test_report_api.py); a no-break space stays part of the label."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.test_report_api import SPLIT

    path = tmp_path / "split.parquet"
    pq.write_table(pa.table(SPLIT), path)
    argv = ["eval", str(path), "-a", "actual", "-p", "predicted", "--sep", "|", "-f", "json"]
    result = runner.invoke(app, [*argv, "--engine", engine], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    labels = [r["label"] for r in json.loads(result.stdout)["labels"]]
    assert labels == ["a", "b", "c", "d", "\xa0e"]
