"""Shared fixtures: the engines every case runs on, and the conformance data."""

from __future__ import annotations

import functools
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def reference_pages() -> dict[str, str]:
    """The documentation's reference pages by file name, generated from the registry as the
    site's build generates them (git keeps none): once a worker, about 12 s of DuckDB examples."""
    from mlsql._docs.reference import pages

    return pages()


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


#: Where a docstring example is long: the Spark engine's (a tenth of the README's suite, where
#: each Spark call plans for a second). A doctest carries no marker, so its place marks it.
LONG_DOCTEST_PATHS = ("mlsql/spark",)


def first_rank(item: pytest.Item) -> float:
    """Where a test starts: its ``first`` marker's rank, or after every test that has one."""
    mark = item.get_closest_marker("first")
    if mark is not None:
        return float(mark.kwargs["rank"])
    return math.inf


def is_long_item(item: pytest.Item) -> bool:
    """Whether a collected test is long: marked ``long``, a case named by its test's
    ``long_cases`` marker, a case of an engine its module names in ``LONG_ENGINES``, or a
    docstring example under ``LONG_DOCTEST_PATHS`` (``pytest_collection_modifyitems``)."""
    if item.get_closest_marker("long") is not None:
        return True
    if not isinstance(item, pytest.Function):  # a docstring example
        return any(item.path.is_relative_to(ROOT / path) for path in LONG_DOCTEST_PATHS)
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return False
    if callspec.params.get("engine") in getattr(item.module, "LONG_ENGINES", ()):
        return True
    return any(callspec.id in mark.args for mark in item.iter_markers("long_cases"))


def marker_errors(cases: list[pytest.Function]) -> list[str]:
    """What is wrong with the ``first`` and ``long_cases`` markers of one test, given all its
    cases.

    A ``first`` marker takes an integer ``rank``. A ``long_cases`` marker takes case ids, as
    strings, and each must be a case of the test: a renamed parameter would otherwise bring its
    case back into the README's run without a word. (A run of some engines only, by
    ``MLSQL_TEST_ENGINES``, lacks the other engines' cases: the ids are not checked there.)
    """
    test = f"{cases[0].parent.nodeid}::{cases[0].originalname}" if cases[0].parent else ""
    errors = []
    first = cases[0].get_closest_marker("first")
    if first is not None and (first.args or type(first.kwargs.get("rank")) is not int):
        errors.append(f"{test}: the first marker takes one integer rank=, not {first}")
    named: set[Any] = set()
    for mark in cases[0].iter_markers("long_cases"):
        if mark.kwargs or not mark.args or not all(isinstance(a, str) for a in mark.args):
            errors.append(f"{test}: long_cases takes case ids, as strings, not {mark}")
        named.update(mark.args)
    if _engines() == list(ENGINE_ADAPTERS):
        ids = {case.callspec.id for case in cases if hasattr(case, "callspec")}
        for case in sorted(map(str, named - ids)):
            errors.append(f"{test}: long_cases names {case!r}, which is no case of the test")
    return errors


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Any:
    """Check each test's markers as it is collected, with all its cases (whatever the run then
    selects): an error is the module's collection error, which stops the run."""
    made = yield
    if isinstance(made, list) and made and all(isinstance(i, pytest.Function) for i in made):
        errors = marker_errors(made)
        if errors:
            raise pytest.Collector.CollectError("the test's markers:\n" + "\n".join(errors))
    return made


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--long",
        action="store_true",
        help="also run the long tests (marked 'long'; `-m long` runs them alone)",
    )
    parser.addoption(
        "--long-shard",
        "--spark-shard",
        dest="long_shard",
        default=None,
        metavar="K/N",
        help="of the rotating long cases (Spark's, and the tests marked 'rotating'), run only "
        "shard K of N (K = 0..N-1; .ci/run: see there)",
    )


def pytest_configure(config: pytest.Config) -> None:
    from hypothesis import settings

    # no per-example deadline: a loaded machine must not turn a slow example into a failure
    settings.register_profile("mlsql", deadline=None)
    settings.load_profile("mlsql")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the long tests, leave them out unless ``--long``; then the ``first`` tests first.

    The long tests are the longest tests of a timed run of the whole suite on two cores (pytest
    ``--junitxml``: setup, call and teardown of each test), taken longest first until the rest
    was a fifth of the suite's time (1.9 s or more each), and the tests added since that took as
    long in the next run (``--durations``): most of them Spark runs of every measure (Spark
    analyses each report's plan for seconds). The README's command leaves them out; ``.ci/run``
    runs them right after it (``python -m pytest -q --long -m long``). A test says it is long
    where it is defined:

    - ``@pytest.mark.long`` on a test: every case of it; ``pytestmark = pytest.mark.long``: every
      test of the module;
    - ``pytest.param(..., marks=pytest.mark.long)``: one case of a parameter list written out;
    - ``@pytest.mark.long_cases("spark", "duckdb-binary-actual-predicted")``: the cases whose id
      (the text in brackets) is one of these, where a case comes of a fixture's parameters or of
      several lists; an id that is no case of the test is a collection error (``marker_errors``);
    - ``LONG_ENGINES = ("spark",)`` in a module: its cases whose ``engine`` is one of these (the
      Spark runs of the registry-driven files, long as a whole). It stays a module attribute
      rather than a mark on the ``engine`` fixture's Spark parameter: that fixture serves every
      module, and only these modules' Spark cases are long;
    - a docstring example under ``LONG_DOCTEST_PATHS``, which can carry no marker.

    ``@pytest.mark.first(rank=N)`` marks the tests that take ten seconds or more on two cores
    (``--durations``), longest first: they are collected first, lowest rank first, so xdist
    starts them first and the suite ends on short tests (a long test scheduled last would leave
    the other worker idle until it ends). A test taken away from its module sets the module's
    fixtures up once more: keep tests of costly module fixtures out (test_spark_sql's registers
    36 SQL functions, about ten seconds of JVM time). The ranks are 1 to N, one a test
    (tests/test_suite_order.py). Every other test keeps its place.
    """
    long = [item for item in items if is_long_item(item)]
    for item in long:
        if item.get_closest_marker("long") is None:
            item.add_marker(pytest.mark.long)
    if not config.getoption("--long", default=False):
        _deselect(config, items, long)
    shard = config.getoption("long_shard", default=None)
    if shard is not None:
        k, n = parse_shard(shard)
        _deselect(
            config, items, [i for i in items if is_rotating(i) and not in_shard(i.nodeid, k, n)]
        )
    items[:] = sorted(items, key=first_rank)


def _deselect(config: pytest.Config, items: list[pytest.Item], out: list[pytest.Item]) -> None:
    """Take ``out`` from ``items`` in place, reported to pytest as deselected."""
    if out:
        left_out = {id(item) for item in out}
        items[:] = [item for item in items if id(item) not in left_out]
        config.hook.pytest_deselected(items=out)


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` as (K, N), 0 <= K < N; anything else is a usage error that says so."""
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise pytest.UsageError(
            f"--long-shard takes K/N (two whole numbers). Got {text!r}."
        ) from None
    if not 0 <= k < n:
        raise pytest.UsageError(f"--long-shard K/N needs 0 <= K < N. Got {text!r}.")
    return k, n


def is_rotating(item: pytest.Item) -> bool:
    """A long case that ``--long-shard`` spreads over successive CI runs: a long case of Spark
    (a long test whose id names Spark: its engine, module or name), or a case of a long test
    marked ``rotating`` (the largest of the others, whose cases are parts of one check: the
    bad-input catalogue's parts, random seeds, a second route to numbers checked each run)."""
    if item.get_closest_marker("long") is None:
        return False
    return "spark" in item.nodeid.lower() or item.get_closest_marker("rotating") is not None


def in_shard(nodeid: str, k: int, n: int) -> bool:
    """Whether the test ``nodeid`` is in shard ``k`` of ``n``: by a checksum of its id, the
    same on every machine and run (Python's own hash of a string is salted per process)."""
    import zlib

    return zlib.crc32(nodeid.encode()) % n == k


@pytest.fixture(scope="module")
def duck() -> Any:
    """A DuckDB connection with mlsql's macros: what the PostgreSQL library's tests compare
    against (a module that needs tables in it defines its own)."""
    import duckdb

    import mlsql

    con = duckdb.connect()
    mlsql.register(con)
    return con


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
