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
