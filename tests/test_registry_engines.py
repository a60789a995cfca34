"""No measure is left out of an engine: every registry name (and alias) is offered by DuckDB,
Polars and Spark, unless the measure says why not (``unavailable[engine]``)."""

from __future__ import annotations

import importlib
from functools import cache

import polars as pl
import pytest

from mlsql._docs.reference import index_page
from mlsql._registry import ENGINES, Measure, measures

MEASURES = measures()


@cache
def duckdb_names() -> frozenset[str]:
    import mlsql

    con = mlsql.connect()
    rows = con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type LIKE '%macro%'"
    ).fetchall()
    return frozenset(r[0] for r in rows)


def offers(engine: str, name: str, kind: str = "row") -> bool:
    """Whether ``engine`` has a public function called ``name`` (Polars: and a namespace method,
    but for label tables, which take a frame)."""
    if engine == "duckdb":
        return name in duckdb_names()
    if engine == "polars":
        import mlsql.polars as mp

        return hasattr(mp, name) and (kind == "table" or hasattr(pl.col("x").mlsql, name))
    try:
        spark = importlib.import_module("mlsql.spark")
    except ImportError as error:
        pytest.fail(f"the Spark engine is missing: mlsql.spark does not import ({error})")
    return hasattr(spark, name)


def cases() -> list[object]:
    return [
        pytest.param(m, engine, id=f"{engine}-{m.name}") for m in MEASURES for engine in ENGINES
    ]


@pytest.mark.parametrize(("measure", "engine"), cases())
def test_engine_offers_the_measure_or_says_why_not(measure: Measure, engine: str):
    if not measure.available_in(engine):
        assert measure.unavailable[engine].strip(), f"{measure.name}: empty reason for {engine}"
        return
    names = (measure.name, *measure.aliases)
    missing = [n for n in names if not offers(engine, n, measure.kind)]
    assert not missing, (
        f"{engine} has no function {', '.join(missing)} (registry family {measure.family!r}); "
        f"add it or declare unavailable={{{engine!r}: 'reason'}}"
    )


def test_the_check_fails_for_a_name_no_engine_has():
    assert not offers("duckdb", "no_such_measure")
    assert not offers("polars", "no_such_measure")


def test_the_registry_is_not_empty():
    assert len(MEASURES) > 30 and {m.family for m in MEASURES} >= {"multilabel", "hivemall"}


def gaps_section() -> str:
    """The reference's list of what an engine lacks, as the registry says it."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for m in MEASURES:
        for engine, why in m.unavailable.items():
            by_reason.setdefault((engine, why.strip()), []).append(m.name)
    lines = [
        f"- **{engine}**: {', '.join(f'`{n}`' for n in names)}: {why.rstrip('.')}."
        for (engine, why), names in sorted(by_reason.items())
    ]
    return "\n".join(lines)


def test_reference_lists_every_engine_gap_with_its_reason():
    text = index_page()
    heading = "## Not in every engine"
    assert heading in text
    section = text[text.index(heading) :]
    expected = gaps_section()
    assert expected in section, f"the reference's gaps section should hold:\n{expected}"


def test_availability_in_an_engine_outside_the_registry_is_an_error_not_true():
    # "postgres" was True for the 22 measures the PostgreSQL library leaves out (its own list)
    from mlsql._postgres.library import missing
    from mlsql._registry import REGISTRY

    assert "rae" in missing()
    with pytest.raises(ValueError, match="'postgres' is not one of the registry's engines"):
        REGISTRY["rae"].available_in("postgres")
