"""Shared fixtures: the engines every case runs on, and the conformance data."""

from __future__ import annotations

import json
import os
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


#: Tests that take ten seconds or more on two cores (``--durations``), longest first. They are
#: collected first, so xdist starts them first and the suite ends on short tests: a long test
#: scheduled last would leave the other worker idle until it ends. A test taken away from its
#: module sets the module's fixtures up once more: keep tests of costly module fixtures out
#: (test_spark_sql's registers 36 SQL functions, about ten seconds of JVM time).
LONG_FIRST = (
    "tests/test_native_polars.py::test_text_label_scores_equal_the_portable_expressions_and_the_oracle",
    "tests/test_native_polars.py::test_integer_label_scores_of_any_widths_equal_the_portable_expressions",
    "tests/test_examples.py::test_spark_eval_example_runs_and_its_numbers_match_the_oracle",
    "tests/test_param_constraints.py::test_spark_sql_functions_reject_bad_values_with_the_same_message",
    "tests/test_cli_sources.py::test_spark_prints_no_jvm_warning",
    "tests/test_every_measure.py::test_expression_measures_match_their_reference",
    "tests/test_param_constraints.py::test_every_engine_rejects_each_bad_value_with_one_message",
    "tests/test_native_duckdb.py::test_measures_equal_portable_and_oracle",
    "tests/test_native_duckdb.py::test_label_tables_equal_portable_and_oracle",
    "tests/test_reliability_catalog.py::test_spark_register_refuses_to_replace_a_users_temporary_function",
    "tests/test_cli_interrupt.py::test_ctrl_c_stops_spark_promptly",
    # beside the one above: both use the module's 12M-row file, which is then written once
    "tests/test_cli_interrupt.py::test_ctrl_c_stops_eval_promptly",
    "tests/test_typing.py::test_mypy_passes_on_the_package_and_the_typed_usage_file",
    "tests/test_label_conformance.py::test_indicator_columns_report",
    "tests/test_label_properties.py::test_text_labels_match_the_oracle",
    "tests/test_label_properties.py::test_integer_labels_match_the_oracle",
    "tests/test_single_label_conformance.py::test_averaged_scores_balanced_accuracy_and_mcc_match_the_oracle",
    "tests/test_regression_properties.py::test_regression_measures_match_scikit_learn",
    "tests/test_label_edges.py::test_scikit_learn_on_random_indicator_matrices",
    "tests/test_spark_label_tables.py::test_report_is_byte_identical_however_the_rows_are_partitioned",
    "tests/test_cli_sources.py::test_spark_master_option_is_the_session_master",
)


def long_first_rank(nodeid: str) -> int:
    """The place of a test in ``LONG_FIRST`` (any parameters), or after all of them."""
    name = nodeid.split("[", 1)[0]
    return LONG_FIRST.index(name) if name in LONG_FIRST else len(LONG_FIRST)


def is_long(nodeid: str) -> bool:
    """Whether a test is one of ``tests/long.py``'s (by its id, or its name for every parameter)."""
    from tests.long import LONG, LONG_PATHS

    return nodeid in LONG or nodeid.split("[", 1)[0] in LONG or nodeid.startswith(LONG_PATHS)


def is_long_item(item: pytest.Item) -> bool:
    """Whether a collected test is long: one of ``tests/long.py``'s, or a case of an engine its
    module names in ``LONG_ENGINES`` (a file of registry-driven edge cases whose Spark runs
    are long as a whole)."""
    if is_long(item.nodeid):
        return True
    callspec = getattr(item, "callspec", None)
    engines = getattr(getattr(item, "module", None), "LONG_ENGINES", ())
    return callspec is not None and callspec.params.get("engine") in engines


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        help="also run the long tests of tests/long.py (marked 'long'; `-m long` runs them alone)",
    )


def pytest_configure(config: pytest.Config) -> None:
    from hypothesis import settings

    # no per-example deadline: a loaded machine must not turn a slow example into a failure
    settings.register_profile("mlsql", deadline=None)
    settings.load_profile("mlsql")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the long tests, leave them out unless ``--long``; then ``LONG_FIRST`` first.

    Every other test keeps its place.
    """
    long = [item for item in items if is_long_item(item)]
    for item in long:
        item.add_marker(pytest.mark.long)
    if long and not config.getoption("--long", default=False):
        left_out = {id(item) for item in long}
        items[:] = [item for item in items if id(item) not in left_out]
        config.hook.pytest_deselected(items=long)
    items[:] = sorted(items, key=lambda item: long_first_rank(item.nodeid))


@pytest.fixture(scope="session")
def pg_server() -> Any:
    """A PostgreSQL server for the session (tests/pg_server.py): Debian's binaries on a Unix
    socket in a temporary directory, stopped after. Skips, saying why, where none is installed;
    fails instead where ``MLSQL_REQUIRE_SERVERS`` is set (CI, which installs the server)."""
    from tests import pg_server

    required = bool(os.environ.get("MLSQL_REQUIRE_SERVERS"))
    try:
        import psycopg  # noqa: F401
    except ImportError:
        (pytest.fail if required else pytest.skip)(pg_server.NO_CLIENT)
    bin_dir = pg_server.find_bin()
    if bin_dir is None:
        (pytest.fail if required else pytest.skip)(pg_server.NO_SERVER)
    server = pg_server.start(bin_dir)
    yield server
    server.stop()
