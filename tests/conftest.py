"""Shared fixtures: the engines every case runs on, and the conformance data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = ROOT.parent / "shared" / "conformance"

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
    """One conformance file from ../shared/conformance."""
    path = CONFORMANCE / name
    if not path.exists():
        pytest.fail(f"conformance data missing: {path} (the repo expects shared/ beside it)")
    return json.loads(path.read_text())
