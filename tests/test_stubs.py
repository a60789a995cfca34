"""The typed face of mlsql: generated stubs are current, shipped, and agree with the functions.

``python -m mlsql._stubs`` writes ``mlsql/polars/__init__.pyi``,
``mlsql/spark/__init__.pyi`` and the Polars examples' outputs from the functions
an import builds; these tests fail when a committed file is stale, when the
package would ship without ``py.typed``, and when a written example output is
not what the function returns.
"""

from __future__ import annotations

import ast
import doctest
import inspect

import pytest

from mlsql import _stubs
from tests.conftest import ROOT

pytest.importorskip("pyspark")  # the Spark stub is written from mlsql.spark (no session needed)

import mlsql.polars as mp
import mlsql.spark as ms

STUBS = {"mlsql.polars": mp, "mlsql.spark": ms}


def test_generated_files_are_current():
    stale = [str(p.relative_to(ROOT)) for p in _stubs.stale()]
    assert not stale, f"stale generated files {stale}: run python -m mlsql._stubs and commit"


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


def test_the_package_ships_py_typed_and_its_stubs():
    assert (ROOT / "mlsql" / "py.typed").is_file()
    assert (ROOT / "mlsql" / "polars" / "__init__.pyi").is_file()
    assert (ROOT / "mlsql" / "spark" / "__init__.pyi").is_file()
    pyproject = (ROOT / "pyproject.toml").read_text()
    wheel = pyproject[pyproject.index("[tool.hatch.build.targets.wheel]") :]
    wheel = wheel[: wheel.index("\n[", 1)]
    assert 'packages = ["mlsql"]' in wheel  # the whole folder: py.typed and *.pyi included
    assert "exclude" not in wheel


@pytest.mark.parametrize("name", sorted(mp._EXAMPLES))
def test_generated_polars_example_prints_its_written_output(name):
    doc = inspect.getdoc(getattr(mp, name))
    assert "Examples\n--------\n>>> " in doc
    test = doctest.DocTestParser().get_doctest(doc, {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 3
