"""The suite's own scheduling: the tests conftest starts first exist."""

from __future__ import annotations

import importlib

from tests.conftest import LONG_FIRST, long_first_rank


def test_every_long_first_name_is_a_test_function():
    """A renamed test would silently lose its early start: each name must still resolve."""
    for name in LONG_FIRST:
        path, _, function = name.partition("::")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        assert callable(getattr(module, function, None)), f"LONG_FIRST names no test: {name}"


def test_parameters_keep_the_rank_of_their_test():
    first = LONG_FIRST[0]
    assert long_first_rank(f"{first}[spark-0]") == long_first_rank(first) == 0
    assert long_first_rank("tests/test_cli.py::test_x[a]") == len(LONG_FIRST)


def test_every_long_name_is_a_test():
    """A renamed test would silently move into the README's run: each long name must resolve."""
    import doctest

    from tests.long import LONG

    for nodeid in LONG:
        path, _, rest = nodeid.partition("::")
        name = rest.split("[", 1)[0]
        module = importlib.import_module(
            path.removesuffix("/__init__.py").removesuffix(".py").replace("/", ".")
        )
        if name.startswith("mlsql."):  # a doctest: the object its docstring belongs to
            finder = doctest.DocTestFinder()
            assert any(t.name == name for t in finder.find(module)), f"no doctest: {nodeid}"
        else:
            assert callable(getattr(module, name, None)), f"LONG names no test: {nodeid}"


def test_every_long_path_is_a_path():
    """A moved file would silently come back into the README's run."""
    from tests.conftest import ROOT
    from tests.long import LONG_PATHS

    for path in LONG_PATHS:
        assert (ROOT / path).exists(), path


def test_long_tests_run_only_with_long():
    """Collected without ``--long``, a long test is deselected; with it, it is there."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT
    from tests.long import LONG

    nodeid = min(n for n in LONG if n.startswith("tests/test_every_measure.py") and "[" in n)
    path = nodeid.split("::", 1)[0]

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
