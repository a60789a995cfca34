"""The typed face of mlsql: generated stubs are current, shipped, and agree with the functions.

``python -m mlsql._stubs`` writes ``mlsql/polars/__init__.pyi``,
``mlsql/spark/__init__.pyi`` and the Polars examples' outputs from the functions
an import builds; the build hook writes the stubs (git keeps only the outputs).
These tests fail when a generated file is stale, when the build hook would ship
the package without ``py.typed`` or its stubs, and when a written example output
is not what the function returns.
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import inspect
import sys
from pathlib import Path

import pytest

from mlsql import _stubs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")
from tests.conftest import ROOT

pytest.importorskip("pyspark")  # the Spark stub is written from mlsql.spark (no session needed)

import mlsql.polars as mp
import mlsql.spark as ms

STUBS = {"mlsql.polars": mp, "mlsql.spark": ms}


def test_generated_files_are_current():
    stale = [str(p.relative_to(ROOT)) for p in _stubs.stale()]
    assert not stale, f"stale generated files {stale}: run python -m mlsql._stubs"


def _stub_functions(module: str) -> dict[str, ast.FunctionDef]:
    path = ROOT.joinpath(*module.split("."), "__init__.pyi")
    tree = ast.parse(path.read_text())
    return {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("module", sorted(STUBS))
def test_every_public_function_is_in_the_stub_with_its_parameters(module):
    mod = STUBS[module]
    stub = _stub_functions(module)
    public = [n for n in mod.__all__ if callable(getattr(mod, n)) and n != "MlsqlError"]
    assert sorted(stub) == sorted(public)
    for name in public:
        args = stub[name].args
        written = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        written += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
        assert written == list(inspect.signature(getattr(mod, name)).parameters), name
        assert stub[name].returns is not None, name


def test_return_types_say_what_each_kind_returns():
    polars, spark = _stub_functions("mlsql.polars"), _stub_functions("mlsql.spark")
    assert ast.unparse(polars["micro_f1"].returns) == "pl.Expr"
    assert ast.unparse(polars["label_metrics"].returns) == "_Frame"  # DataFrame in, DataFrame out
    assert ast.unparse(spark["micro_f1"].returns) == "Column"
    assert ast.unparse(spark["label_metrics"].returns) == "DataFrame"


def _build_hook():
    spec = importlib.util.spec_from_file_location("_mlsql_hatch_build", ROOT / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_package_ships_py_typed_and_its_stubs(tmp_path):
    assert (ROOT / "mlsql" / "py.typed").is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wheel = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]
    assert wheel["packages"] == ["mlsql"]  # the whole folder: py.typed included
    assert "exclude" not in wheel
    # the hook writes the stubs in a build environment holding the engines they are read from
    hook = wheel["hooks"]["custom"]
    assert hook["require-runtime-dependencies"] is True
    assert hook["require-runtime-features"] == ["spark"]
    written = _build_hook().write_stubs(ROOT, tmp_path)
    expected = _stubs.outputs()
    assert [p.relative_to(tmp_path) for p in written] == [Path("mlsql") / p for p in _stubs.STUBS]
    for path in written:
        assert path.read_text() == expected[_stubs.PACKAGE / path.relative_to(tmp_path / "mlsql")]


@pytest.mark.parametrize("name", sorted(mp._EXAMPLES))
def test_generated_polars_example_prints_its_written_output(name):
    doc = inspect.getdoc(getattr(mp, name))
    assert "Examples\n--------\n>>> " in doc
    test = doctest.DocTestParser().get_doctest(doc, {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 3
