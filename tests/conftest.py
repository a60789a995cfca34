"""Shared fixtures: the engines every case runs on, and the conformance data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the conformance files the tests read: a copy of ../shared/conformance, shipped in the sdist
CONFORMANCE = ROOT / "tests" / "data" / "conformance"
#: where the copy comes from, beside the repository (tests/test_packaging.py checks they agree)
SHARED_CONFORMANCE = ROOT.parent / "shared" / "conformance"

#: engine name -> "module:Class" of its adapter under tests/engines
ENGINE_ADAPTERS = {
    "duckdb": "tests.engines.duckdb_engine:DuckDBEngine",
    "polars": "tests.engines.polars_engine:PolarsEngine",
    "spark": "tests.engines.spark_engine:SparkEngine",
}


def _load_adapter(spec: str) -> Any:
    import importlib

    module, cls = spec.split(":")
    return getattr(importlib.import_module(module), cls)()


def _engines() -> list[str]:
    """All engines; MLSQL_TEST_ENGINES=duckdb,polars narrows a local run (CI runs all)."""
    import os

    chosen = os.environ.get("MLSQL_TEST_ENGINES")
    return [e for e in ENGINE_ADAPTERS if not chosen or e in chosen.split(",")]


@pytest.fixture(scope="session", params=_engines())
def engine(request: pytest.FixtureRequest) -> Any:
    """Each engine in turn. A missing engine fails loudly: it is never skipped."""
    return _load_adapter(ENGINE_ADAPTERS[request.param])


def conformance(name: str) -> dict[str, Any]:
    """One conformance file from tests/data/conformance."""
    path = CONFORMANCE / name
    if not path.exists():
        pytest.fail(f"conformance data missing: {path}")
    return json.loads(path.read_text())


#: Spark runs each property example as several jobs (a second or more under load); it gets this
#: share of a property test's examples, and never fewer than SPARK_MIN_EXAMPLES.
SPARK_EXAMPLE_SHARE = 4
SPARK_MIN_EXAMPLES = 5


@pytest.fixture(autouse=True)
def _fewer_property_examples_on_spark(request: pytest.FixtureRequest) -> Any:
    """Property tests on Spark draw a quarter of their examples (DuckDB and Polars run them all).

    The formulas are shared by every engine, and DuckDB and Polars check each
    one on the full budget; on Spark the examples check the engine's own
    statistics, which a few draws reach. Hypothesis reads a test's settings
    when the test is called, so they are swapped for this call only.
    """
    from hypothesis import settings

    callspec = getattr(request.node, "callspec", None)
    test = getattr(request.node, "obj", None)
    current = getattr(test, "_hypothesis_internal_use_settings", None)
    if callspec is None or callspec.params.get("engine") != "spark" or current is None:
        yield
        return
    fewer = max(SPARK_MIN_EXAMPLES, current.max_examples // SPARK_EXAMPLE_SHARE)
    test._hypothesis_internal_use_settings = settings(current, max_examples=fewer)
    try:
        yield
    finally:
        test._hypothesis_internal_use_settings = current
