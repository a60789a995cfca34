"""The suite's own scheduling: the markers that make a test long or start it first.

``tests/conftest.py`` reads them (``pytest_collection_modifyitems``). The mechanism is checked on
a small suite of its own, collected in a subprocess; the suite's own markers are read from the
test files.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ENGINE_ADAPTERS, LONG_DOCTEST_PATHS, ROOT

#: a suite for the mechanism alone: its cases are long by each kind of marker, or started first
SMALL_SUITE = """
import pytest

from tests.conftest import _engines

LONG_ENGINES = ("spark",)


@pytest.fixture(params=_engines())
def engine(request):
    return request.param


def test_short():
    pass


@pytest.mark.long
def test_long():
    pass


@pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.long)])
def test_param(x):
    pass


@pytest.mark.long_cases("duckdb-b", "polars-a")
@pytest.mark.parametrize("x", ["a", "b"])
def test_cases(x, engine):
    pass


@pytest.mark.first(rank=2)
@pytest.mark.parametrize("x", ["a", "b"])
def test_second(x):
    pass


@pytest.mark.first(rank=1)
def test_first():
    pass
"""


def collect(directory: Path, *args: str, engines: str = "") -> subprocess.CompletedProcess[str]:
    """``pytest --collect-only`` in ``directory``, with this suite's conftest hooks, on every
    engine or on ``engines`` (``MLSQL_TEST_ENGINES``)."""
    (directory / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    long\n    long_cases\n    rotating\n    first\n"
        "addopts = --strict-markers -p no:cacheprovider\n"
    )
    (directory / "conftest.py").write_text(
        "from tests.conftest import (\n"
        "    pytest_addoption, pytest_collection_modifyitems, pytest_pycollect_makeitem\n"
        ")\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MLSQL_TEST_ENGINES"}
    if engines:
        env["MLSQL_TEST_ENGINES"] = engines
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", *args]
    return subprocess.run(argv, cwd=directory, env=env, capture_output=True, text=True, timeout=120)


def collected(directory: Path, *args: str, engines: str = "") -> list[str]:
    out = collect(directory, *args, engines=engines)
    assert out.returncode == 0, out.stdout + out.stderr
    return [line.split("::", 1)[1] for line in out.stdout.splitlines() if "::" in line]


@pytest.mark.long
def test_a_case_marked_long_is_left_out_without_long(tmp_path: Path) -> None:
    """Each kind of marker makes its cases long: left out of the README's run, there with
    ``--long``, alone with ``-m long``; every other case stays in the README's run."""
    (tmp_path / "test_small.py").write_text(SMALL_SUITE)
    long = {
        "test_long",
        "test_param[2]",
        "test_cases[duckdb-b]",
        "test_cases[polars-a]",
        "test_cases[spark-a]",
        "test_cases[spark-b]",
    }
    everything = collected(tmp_path, "--long")
    assert long < set(everything)
    assert collected(tmp_path) == [name for name in everything if name not in long]
    assert collected(tmp_path, "--long", "-m", "long") == [n for n in everything if n in long]


#: a long test whose cases rotate over CI runs as Spark's long cases do
ROTATING = """

@pytest.mark.long
@pytest.mark.rotating
@pytest.mark.parametrize("part", range(3))
def test_rotating(part):
    pass
"""


@pytest.mark.long
def test_long_shards_split_the_rotating_cases_and_keep_the_rest(tmp_path: Path) -> None:
    """``--long-shard K/N`` keeps shard K of the rotating long cases (Spark's, and those of a
    test marked ``rotating``) and every other case; the N shards together are the whole run, no
    rotating case in two; the old name ``--spark-shard`` is the same option; a bad K/N is a
    usage error."""
    (tmp_path / "test_small.py").write_text(SMALL_SUITE + ROTATING)
    everything = collected(tmp_path, "--long")
    rotating = {"test_cases[spark-a]", "test_cases[spark-b]"}
    rotating |= {f"test_rotating[{part}]" for part in range(3)}
    assert rotating < set(everything)
    shards = [set(collected(tmp_path, "--long", f"--long-shard={k}/2")) for k in range(2)]
    assert shards[0] | shards[1] == set(everything)
    assert shards[0] & shards[1] == set(everything) - rotating
    assert all(shard & rotating for shard in shards)  # (the ids' checksums split them so)
    assert set(collected(tmp_path, "--long", "--spark-shard=1/2")) == shards[1]
    assert collected(tmp_path, "--long-shard=0/1", "--long") == everything
    out = collect(tmp_path, "--long-shard=2/2")
    assert out.returncode != 0
    assert "--long-shard K/N needs 0 <= K < N. Got '2/2'." in out.stdout + out.stderr


def test_parameters_keep_the_rank_of_their_test(tmp_path: Path) -> None:
    """The ``first`` tests come first, lowest rank first, each with all its cases; every other
    test keeps its place."""
    (tmp_path / "test_small.py").write_text(SMALL_SUITE)
    assert collected(tmp_path)[:4] == [
        "test_first",
        "test_second[a]",
        "test_second[b]",
        "test_short",
    ]


@pytest.mark.long
def test_a_long_case_that_is_no_case_of_its_test_stops_the_run(tmp_path: Path) -> None:
    """A renamed case would silently come back into the README's run: its old id is an error
    of the module's collection, whichever of its cases the run selects; a run of some engines
    only (``MLSQL_TEST_ENGINES``) lacks the others' cases and does not check."""
    suite = SMALL_SUITE.replace('"duckdb-b", "polars-a"', '"duckdb-b", "polars-a", "polars-c"')
    (tmp_path / "test_small.py").write_text(suite)
    for selected in ("test_small.py", "test_small.py::test_cases[duckdb-a]"):
        out = collect(tmp_path, selected)
        assert out.returncode != 0
        message = "test_small.py::test_cases: long_cases names 'polars-c', which is no case"
        assert message in out.stdout, out.stdout + out.stderr
    assert "test_cases[duckdb-b]" in collected(tmp_path, "--long", engines="duckdb")


def marker_calls(name: str) -> list[tuple[str, ast.FunctionDef | None, ast.Call]]:
    """Each ``pytest.mark.<name>(...)`` in the test files: its file, the test it decorates
    (None elsewhere) and the call."""
    found = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        tree = ast.parse(path.read_text(), str(path))
        decorating = {
            id(decorator): node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
            for decorator in node.decorator_list
        }
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == name
                and ast.unparse(node.func.value) == "pytest.mark"
            ):
                found.append((path.name, decorating.get(id(node)), node))
    return found


def test_first_ranks_are_one_to_n_on_test_functions() -> None:
    """Each ``first`` marker decorates a test, with a rank of its own: the order is total."""
    calls = marker_calls("first")
    assert calls
    ranks = []
    for path, test, call in calls:
        assert test is not None and test.name.startswith("test_"), f"{path}: {ast.unparse(call)}"
        (keyword,) = call.keywords
        ranks.append(ast.literal_eval(keyword.value))
    assert sorted(ranks) == list(range(1, len(ranks) + 1)), sorted(ranks)


def test_long_engines_name_engines() -> None:
    """A module's ``LONG_ENGINES`` names engines of the ``engine`` fixture."""
    modules = 0
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "LONG_ENGINES":
                modules += 1
                engines = ast.literal_eval(node.value)
                assert set(engines) <= set(ENGINE_ADAPTERS), f"{path.name}: {engines}"
    assert modules


def test_every_long_path_is_a_path():
    """A moved directory would silently bring its doctests back into the README's run."""
    for path in LONG_DOCTEST_PATHS:
        assert (ROOT / path).is_dir(), path


@pytest.mark.long
def test_long_tests_run_only_with_long():
    """Collected without ``--long``, a case the suite marks long is deselected; with it, it is
    there."""
    from tests import test_every_measure

    test = test_every_measure.test_expression_measures_match_their_reference
    (mark,) = [mark for mark in getattr(test, "pytestmark", ()) if mark.name == "long_cases"]
    path = "tests/test_every_measure.py"
    nodeid = f"{path}::{test.__name__}[{min(mark.args)}]"

    def collected(*extra: str) -> list[str]:
        argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0"]
        argv += ["-p", "no:cacheprovider", *extra, path]
        env = {k: v for k, v in os.environ.items() if k != "MLSQL_TEST_ENGINES"}  # every engine
        out = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        return [line for line in out.stdout.splitlines() if "::" in line]

    assert nodeid not in collected()
    assert nodeid in collected("--long")
    assert nodeid in collected("--long", "-m", "long")
    short = "tests/test_every_measure.py::test_every_measure_has_a_reference"
    assert short in collected() and short not in collected("--long", "-m", "long")
