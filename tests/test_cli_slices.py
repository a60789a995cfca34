"""``mlsql slices``: the API's table on the command line, and the --fail-if-slice-below gate.

The numbers are the engine's own ``slices`` with the same arguments (test_slices.py
checks those against a plain-Python oracle); here the command must print them,
name its options in its messages, and exit 3 only when a slice is worse than the
gate, in the measure's direction (registry: a loss is worse higher).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import mlsql
from mlsql.cli.slices import BELOW
from tests.conftest import _engines
from tests.test_cli import LOCAL_ENGINES, invoke
from tests.test_slices import simulate

ENGINES = [e for e in LOCAL_ENGINES if e in ("duckdb", "polars")]


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("slices") / "docs.parquet"
    pq.write_table(simulate(2, 1200, weak="fr"), out)
    return out


def slices_json(path: Path, *args: Any, engine: str = "duckdb") -> tuple[int, list[dict], str]:
    result = invoke(
        "slices",
        path,
        "-a",
        "actual",
        "-p",
        "predicted",
        "-f",
        "json",
        "--engine",
        engine,
        "--no-progress",
        "--resamples",
        200,
        *args,
    )
    return result.exit_code, json.loads(result.stdout or "[]"), result.stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_the_command_prints_the_apis_table(path: Path, engine: str) -> None:
    code, rows, _ = slices_json(
        path, "--candidates", "lang,length", "-m", "micro_f1", engine=engine
    )
    assert code == 0
    want = mlsql.slices(
        str(path), "actual", "predicted", ["lang", "length"], "micro_f1", n_resamples=200
    ).fetchall()
    assert [tuple(r.values()) for r in rows] == want
    assert rows[0]["slice"] == "lang = 'fr'" and rows[0]["significant"]


def test_the_gate_follows_the_measures_direction(path: Path) -> None:
    code, rows, err = slices_json(path, "-c", "lang", "--fail-if-slice-below", "0.7")
    worst = rows[0]["estimate"]
    assert worst < 0.7 and code == BELOW and "lang = 'fr'" in err
    code, _, _ = slices_json(path, "-c", "lang", "--fail-if-slice-below", f"{worst - 1e-9}")
    assert code == 0
    # zero_one_loss is worse higher: a bound above every slice's loss passes
    code, rows, _ = slices_json(
        path, "-c", "lang", "-m", "zero_one_loss", "--fail-if-slice-below", "0.99"
    )
    assert code == 0 and rows[0]["estimate"] == max(r["estimate"] for r in rows)
    code, _, err = slices_json(
        path, "-c", "lang", "-m", "zero_one_loss", "--fail-if-slice-below", "0.2"
    )
    assert code == BELOW and "above 0.2" in err


def test_table_output_and_errors(path: Path) -> None:
    result = invoke(
        "slices",
        path,
        "-a",
        "actual",
        "-p",
        "predicted",
        "-c",
        "lang",
        "--top",
        "2",
        "--no-progress",
        "--resamples",
        50,
    )
    assert result.exit_code == 0 and "lang = 'fr'" in result.stdout and "adj. p" in result.stdout
    result = invoke(
        "slices", path, "-a", "actual", "-p", "predicted", "-c", "nope", "--no-progress"
    )
    assert result.exit_code == 2 and "nope" in result.stderr
    result = invoke(
        "slices",
        path,
        "-a",
        "actual",
        "-p",
        "predicted",
        "-c",
        "lang",
        "-m",
        "ndcg",
        "--no-progress",
    )
    assert result.exit_code == 2 and "slices cannot resample ndcg" in result.stderr


@pytest.mark.parametrize("engine", ENGINES)
def test_one_label_per_row(tmp_path: Path, engine: str) -> None:
    rows = {"lang": ["de", "en"] * 30, "actual": ["x", "y"] * 30, "predicted": ["y", "y"] * 30}
    path = tmp_path / "single.parquet"
    pq.write_table(pa.table(rows), path)
    code, got, _ = slices_json(
        path, "-c", "lang", "-m", "accuracy", "--single-label", engine=engine
    )
    assert code == 0
    assert [(r["slice"], r["rows"], r["estimate"]) for r in got] == [
        ("lang = 'de'", 30, 0.0),
        ("lang = 'en'", 30, 1.0),
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_every_family_bootstrap_takes(path: Path, tmp_path: Path, engine: str) -> None:
    """A macro average of the label lists, and a regression measure of two columns of numbers:
    the API's table, on either engine."""
    code, rows, _ = slices_json(path, "-c", "lang", "-m", "macro_f1", engine=engine)
    assert code == 0
    want = mlsql.slices(
        str(path), "actual", "predicted", ["lang"], "macro_f1", n_resamples=200
    ).fetchall()
    assert [tuple(r.values()) for r in rows] == want
    numbers = {"lang": ["de", "en"] * 30, "y": [1.0, 2.0, 3.0, 4.0] * 15}
    numbers["yhat"] = [2.0, 2.0, 1.0, 4.0] * 15  # de's errors 1 and 2, en's none
    numbers_path = tmp_path / "numbers.parquet"
    pq.write_table(pa.table(numbers), numbers_path)
    result = invoke(
        "slices",
        numbers_path,
        "-a",
        "y",
        "-p",
        "yhat",
        "-c",
        "lang",
        "-m",
        "mae",
        "-f",
        "json",
        "--engine",
        engine,
        "--no-progress",
        "--resamples",
        50,
    )
    assert result.exit_code == 0, result.stderr
    got = json.loads(result.stdout)
    assert [(r["slice"], r["rows"], r["estimate"]) for r in got] == [
        ("lang = 'de'", 30, 1.5),
        ("lang = 'en'", 30, 0.0),
    ]


def test_min_weight_leaves_light_slices_out(path: Path) -> None:
    """--min-weight: the slices whose summed weight (a plain-Python sum) reaches it, and the
    API's message for a bad value."""
    from fractions import Fraction

    data = pq.read_table(path)
    langs, w = data.column("lang").to_pylist(), data.column("w").to_pylist()
    weight = {
        v: sum(Fraction(x) for g, x in zip(langs, w, strict=True) if g == v) for v in set(langs)
    }
    bound = sorted(weight.values())[1]
    code, rows, _ = slices_json(
        path, "-c", "lang", "--sample-weight", "w", "--min-weight", f"{float(bound)!r}"
    )
    assert code == 0
    texts = {v: "lang is null" if v is None else f"lang = '{v}'" for v in weight}
    assert sorted(r["slice"] for r in rows) == sorted(
        t for v, t in texts.items() if weight[v] >= bound
    )
    code, _, err = slices_json(path, "-c", "lang", "--min-weight", "-1")
    assert code != 0
    assert "The 'min_weight' parameter of slices must be None or a finite number >= 0" in err


@pytest.mark.long
@pytest.mark.skipif("spark" not in _engines(), reason="pyspark is not installed")
def test_spark_prints_the_apis_table(path: Path, tmp_path: Path) -> None:
    """--engine spark: DuckDB's table exactly (the same tuples through the same core), for label
    lists and for one label per row (long)."""
    code, rows, err = slices_json(
        path, "--candidates", "lang,length", "-m", "micro_f1", engine="spark"
    )
    assert code == 0, err
    want = mlsql.slices(
        str(path), "actual", "predicted", ["lang", "length"], "micro_f1", n_resamples=200
    ).fetchall()
    assert [tuple(r.values()) for r in rows] == want
    single = tmp_path / "single.parquet"
    pq.write_table(
        pa.table({"lang": ["de", "en"] * 30, "actual": ["x", "y"] * 30, "predicted": ["y"] * 60}),
        single,
    )
    code, got, err = slices_json(
        single, "-c", "lang", "-m", "accuracy", "--single-label", engine="spark"
    )
    assert code == 0, err
    assert [(r["slice"], r["rows"], r["estimate"]) for r in got] == [
        ("lang = 'de'", 30, 0.0),
        ("lang = 'en'", 30, 1.0),
    ]
