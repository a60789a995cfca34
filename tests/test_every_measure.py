"""Every registry measure, by number, on every engine: the registry drives the cases.

Each measure names its reference in ``tests/references.py`` (the data it is checked
on, the parameter sets, the independent expected value). Per engine and data kind,
all the measures of one kind run in one query over each random table (NULL lists,
NULL elements, duplicates, empty lists, a table of unknown rows, a table without
rows), so every engine
meets the same cases at the cost of a few queries. A measure with no reference fails
``test_every_measure_has_a_reference``; a measure an engine lacks is skipped only with
the registry's stated reason.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from mlsql._registry import REGISTRY, Measure, measures
from tests.references import ELSEWHERE, REFERENCES, close, tables

MEASURES = measures()
ROOT = Path(__file__).resolve().parents[1]

#: random tables per data kind for the expression kinds (plus one of unknown rows)
SEEDS = range(4)
#: label tables cost a query each: fewer tables, parameter sets taken in turn
TABLE_SEEDS = range(2)
EXPRESSION_KINDS = ("aggregate", "counts", "row", "set")


def test_every_measure_has_a_reference():
    missing = [m.name for m in MEASURES if m.name not in REFERENCES and m.name not in ELSEWHERE]
    assert not missing, f"no reference in tests/references.py for {missing}"
    stale = sorted((set(REFERENCES) | set(ELSEWHERE)) - set(REGISTRY))
    assert not stale, f"tests/references.py names measures the registry lacks: {stale}"


@pytest.mark.parametrize("name", sorted(ELSEWHERE))
def test_measures_checked_elsewhere_name_a_real_test(name):
    path, _, function = ELSEWHERE[name].partition("::")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    assert callable(getattr(module, function, None)), f"{ELSEWHERE[name]} does not exist"
    text = (ROOT / path).read_text() + "".join(
        p.read_text() for p in (ROOT / "tests" / "engines").glob("*.py")
    )
    assert name in text, f"{path} and the engine adapters never call {name}"


def _available(engine: Any, m: Measure) -> bool:
    return m.available_in(engine.name)


#: engines whose every query is a job of its own: each table gets one parameter set of each
#: measure, taken in turn, instead of all of them (the formulas are shared; DuckDB and Polars
#: check every set)
ONE_SET_A_TABLE = ("spark",)


def _calls(
    engine: Any, kind: str, data: str, table: pa.Table, index: int = 0
) -> list[tuple[Measure, dict[str, Any]]]:
    """(measure, params) of every measure of ``kind`` checked on ``data`` that ``engine`` has."""
    out = []
    for m in MEASURES:
        ref = REFERENCES.get(m.name)
        if ref is None or m.kind != kind or ref.data != data or not _available(engine, m):
            continue
        sets = ref.params_for(table)
        if engine.name in ONE_SET_A_TABLE:
            sets = (sets[index % len(sets)],)
        out += [(m, params) for params in sets]
    return out


def _check(rows: list[tuple[Measure, dict[str, Any], Any, Any]], table: pa.Table) -> None:
    wrong = [
        f"{m.name}({params}): got {got!r}, expected {want!r}"
        for m, params, got, want in rows
        if not close(got, want)
    ]
    assert not wrong, "\n".join(wrong) + f"\non {table.to_pylist()}"


def _kinds() -> list[tuple[str, str]]:
    found = {
        (m.kind, REFERENCES[m.name].data)
        for m in MEASURES
        if m.name in REFERENCES and m.kind in EXPRESSION_KINDS and m.inputs != ("counts",)
    }
    return sorted(found)


@pytest.mark.first(rank=6)
@pytest.mark.long_cases(
    "duckdb-aggregate-binary",
    "duckdb-aggregate-classes",
    "duckdb-aggregate-label_lists",
    "duckdb-aggregate-numbers",
    "duckdb-aggregate-probabilities",
    "duckdb-aggregate-ranked",
    "duckdb-aggregate-score_maps",
    "duckdb-row-label_lists",
    "polars-aggregate-classes",
    "polars-aggregate-numbers",
    "polars-aggregate-probabilities",
    "polars-aggregate-score_maps",
)
@pytest.mark.parametrize(("kind", "data"), _kinds(), ids=[f"{k}-{d}" for k, d in _kinds()])
def test_expression_measures_match_their_reference(engine, kind, data):
    per_row = kind in ("row", "set")
    for i, table in enumerate(tables(data, SEEDS, no_rows=True)):
        calls = [(m, p) for m, p in _calls(engine, kind, data, table, i) if m.inputs != ("counts",)]
        if not calls:
            pytest.skip(f"{engine.name} has no {kind} measure on {data}")
        got = engine.many(table, [(m.name, m.inputs, p) for m, p in calls], per_row=per_row)
        want = [REFERENCES[m.name].expected(table, p) for m, p in calls]
        _check([(m, p, g, w) for (m, p), g, w in zip(calls, got, want, strict=True)], table)


@pytest.mark.long_cases("duckdb")
def test_from_counts_measures_match_their_reference(engine):
    """2x2 counts stored per row, and multi-label counts stored per partition then merged."""
    for i, table in enumerate(tables("counts_2x2", SEEDS, no_rows=True)):
        calls = _calls(engine, "from_counts", "counts_2x2", table, i)
        got = engine.many(table, [(m.name, m.inputs, p) for m, p in calls], per_row=True)
        want = [REFERENCES[m.name].expected(table, p) for m, p in calls]
        _check([(m, p, g, w) for (m, p), g, w in zip(calls, got, want, strict=True)], table)
    for i, table in enumerate(tables("label_lists", SEEDS)):
        table = table.append_column("g", pa.array([i % 3 for i in range(table.num_rows)]))
        daily = engine.daily_counts(table)
        merge = [(REGISTRY["merge_counts"], {})]
        (merged,) = engine.many(daily, [("merge_counts", ("counts",), {})])
        stored = pa.table({"counts": pa.array([merged], daily.schema.field("counts").type)})
        calls = _calls(engine, "from_counts", "label_lists", stored, i)
        got = engine.many(stored, [(m.name, m.inputs, p) for m, p in calls], per_row=True)
        rows = [
            (m, p, g[0], REFERENCES[m.name].expected(table, p))
            for (m, p), g in zip(calls, got, strict=True)
        ]
        rows += [(m, p, merged, REFERENCES[m.name].expected(table, p)) for m, p in merge]
        _check(rows, table)


def _table_cases() -> list[Any]:
    return [
        pytest.param(m, id=m.name) for m in MEASURES if m.kind == "table" and m.name in REFERENCES
    ]


def _value_of(name: str, out: pa.Table) -> Any:
    """A label table's result in the reference's shape."""
    rows = out.to_pylist()
    if name == "label_metrics":
        return rows
    if name == "multilabel_report":
        return rows[0] if rows else None
    return rows[0][name] if rows else None


@pytest.mark.parametrize("measure", _table_cases())
def test_label_tables_match_their_reference(engine, measure):
    if not _available(engine, measure):
        pytest.skip(f"{measure.name} is not in {engine.name}: {measure.unavailable[engine.name]}")
    ref = REFERENCES[measure.name]
    for i, table in enumerate(tables(ref.data, TABLE_SEEDS)):
        choices = ref.params_for(table)
        params = choices[i % len(choices)]
        labels = params.get("labels")
        if labels is not None and pa.types.is_integer(table.schema.field("actual").type.value_type):
            params = {**params, "labels": [1, 2, 99]}
        out = engine.table_function(measure.name, table, **params)
        got, want = _value_of(measure.name, out), ref.expected(table, params)
        if measure.name == "multilabel_report" and got is not None:
            got = {k: got[k] for k in want}
        _check([(measure, params, got, want)], table)


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
