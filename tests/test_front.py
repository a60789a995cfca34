"""The engine-neutral front (mlsql._front): engine-free, and one API for every engine.

The Polars and Spark functions of a registry measure are built by the same
code from the same registry entry, so their parameters (names, kinds,
defaults) and their docstrings' Parameters sections (but for the engine's type
words) must agree. The front itself imports no engine.
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from mlsql._registry import measures
from tests.conftest import ROOT

PROBE = """
import sys
import mlsql._front.build, mlsql._front.docs, mlsql._front.families, mlsql._front.tables
print(sorted(m for m in ("polars", "pyspark", "duckdb") if m in sys.modules))
"""


def test_the_front_imports_no_engine():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _parameters(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_polars_and_spark_functions_of_a_measure_take_the_same_arguments():
    mp = pytest.importorskip("mlsql.polars")
    ms = pytest.importorskip("mlsql.spark")
    both = [m for m in measures() if m.name in mp.FUNCTIONS and m.name in ms.FUNCTIONS]
    assert len(both) > 100
    differ = [
        m.name
        for m in both
        if _parameters(mp.FUNCTIONS[m.name]) != _parameters(ms.FUNCTIONS[m.name])
    ]
    assert not differ, differ


def test_a_generated_docstring_differs_between_engines_only_in_the_engines_words():
    mp = pytest.importorskip("mlsql.polars")
    ms = pytest.importorskip("mlsql.spark")

    def parameters_section(fn):
        doc = inspect.getdoc(fn) or ""
        section = doc.split("Parameters\n----------\n")[1].split("\n\nReturns")[0]
        for words in ("str or polars.Expr", "str or pyspark.sql.Column"):
            section = section.replace(words, "<input>")
        for words in ("a list column (name or expression)", "an array column (name or Column)"):
            section = section.replace(words, "<label lists>")
        return section

    multilabel = [m.name for m in measures(family="multilabel") if m.build is not None]
    assert multilabel
    for name in multilabel:
        assert parameters_section(mp.FUNCTIONS[name]) == parameters_section(ms.FUNCTIONS[name])
