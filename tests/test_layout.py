"""The package's layout: its layers, no import cycle, and the guide that describes it.

Every module of ``mlsql`` belongs to one layer: the engine-neutral core, one of
three sibling engines, or the front. The import graph is read from the source
with :mod:`ast`: every runtime import, at module level or inside a function
(a lazy import is still a dependency), but not what only type checkers read
(``if TYPE_CHECKING:``). Plug-in discovery by name (``importlib.import_module``
of the family modules) is no edge.

The Layout section of ``docs/guides/architecture.md`` must name every package
folder and top module, and nothing that does not exist; its "Adding a measure"
walkthrough is followed, step by step, on a copy of the repository.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mlsql"
GUIDE = ROOT / "docs" / "guides" / "architecture.md"

ENGINES = ("mlsql._duckdb", "mlsql.polars", "mlsql.spark", "mlsql._postgres", "mlsql._ibis")
#: the engine-neutral core: what a measure is, once
CORE = (
    "mlsql._registry",
    "mlsql.measures",
    "mlsql._formulas",
    "mlsql._params",
    "mlsql._classification_params",
    "mlsql._label_types",
    "mlsql._errors",
    "mlsql._cache",
    "mlsql._sqlexpr",
    "mlsql._sqldialects",
    "mlsql._sqltext",
    "mlsql._sqlops",
    "mlsql._native_switch",
    "mlsql._version",
    "mlsql._front",
    "mlsql._weights",
    "mlsql._resample",
    "mlsql._slices",
    "mlsql._evaluate",
)
#: what users run over any engine (``mlsql`` itself is the package's ``__init__``)
FRONT = ("mlsql", "mlsql.cli", "mlsql.report", "mlsql._docs", "mlsql._stubs", "mlsql._dispatch")


# ------------------------------------------------------------------ the import graph
def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its ``__init__``)."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported(name: str, source: str, known: set[str], *, is_package: bool = False) -> set[str]:
    """The modules of ``known`` that module ``name`` imports at run time."""
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for branch in child.orelse:
                    visit(ast.Module(body=[branch], type_ignores=[]))
                continue
            if isinstance(child, ast.Import):
                out.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    parts = name.split(".")
                    parts = parts[: len(parts) - child.level + (1 if is_package else 0)]
                    base = ".".join([*parts, *([child.module] if child.module else [])])
                for alias in child.names:
                    sub = f"{base}.{alias.name}"
                    out.add(sub if sub in known else base)
            visit(child)

    visit(ast.parse(source))
    return {m for m in out if m in known and m != name}


def graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    found = modules(package)
    known = set(found)
    return {
        name: imported(name, path.read_text(), known, is_package=path.name == "__init__.py")
        for name, path in found.items()
    }


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return out


def layer(module: str) -> str:
    """``core``, an engine's package name, or ``front``."""

    def within(prefixes: tuple[str, ...]) -> str | None:
        return next((p for p in prefixes if module == p or module.startswith(p + ".")), None)

    if within(CORE):
        return "core"
    engine = within(ENGINES)
    if engine:
        return engine
    if module == "mlsql" or within(FRONT[1:]):
        return "front"
    raise AssertionError(f"{module} belongs to no layer: add it to CORE, ENGINES or FRONT")


GRAPH = graph()


def test_the_graph_reader_sees_lazy_imports_and_skips_type_checking() -> None:
    known = {"p.a", "p.b", "p.c", "p.d", "p.e"}
    source = textwrap.dedent(
        """
        from typing import TYPE_CHECKING
        from p import b
        if TYPE_CHECKING:
            from p.c import Thing
        else:
            import p.e
        def f():
            from .d import g
        """
    )
    assert imported("p.a", source, known) == {"p.b", "p.d", "p.e"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_knows_the_packages_modules() -> None:
    for name in ("mlsql._registry", "mlsql._duckdb.library", "mlsql.polars", "mlsql.cli.run"):
        assert name in GRAPH
    assert "mlsql._formulas" in GRAPH["mlsql.measures.multilabel"]
    assert "mlsql.cli.evaluate" in GRAPH["mlsql.cli.run"]  # a lazy import, inside a function


def test_no_import_cycle() -> None:
    found = cycles(GRAPH)
    assert not found, "modules that import each other (directly or round a loop): " + "; ".join(
        " <-> ".join(c) for c in found
    )


def test_every_module_has_a_layer_and_every_layer_entry_exists() -> None:
    for module in GRAPH:
        layer(module)
    stale = [m for m in (*CORE, *ENGINES, *FRONT) if m not in GRAPH]
    assert not stale, f"CORE, ENGINES or FRONT name modules that do not exist: {stale}"


def test_no_engine_imports_another_and_the_core_imports_no_engine() -> None:
    wrong = []
    for module, targets in sorted(GRAPH.items()):
        mine = layer(module)
        for target in sorted(targets):
            theirs = layer(target)
            if mine == "core" and theirs != "core":
                wrong.append(f"the core module {module} imports {target} ({theirs})")
            elif mine in ENGINES and theirs not in ("core", mine):
                wrong.append(f"{module} ({mine}) imports {target} ({theirs})")
    assert not wrong, "\n".join(wrong)


def test_the_report_does_not_import_the_command_line() -> None:
    wrong = [
        f"{m} imports {t}"
        for m, targets in GRAPH.items()
        if m.startswith("mlsql.report")
        for t in targets
        if t.startswith("mlsql.cli")
    ]
    assert not wrong, wrong


# ------------------------------------------------------------------ the Layout section
def section(title: str) -> str:
    """One ``## `` section of the architecture guide."""
    text = GUIDE.read_text()
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, f"docs/guides/architecture.md has no '## {title}' section"
    return found.group(1)


def test_the_layout_section_names_every_folder_and_top_module_and_nothing_else() -> None:
    named = set(re.findall(r"`(mlsql/[^`\s]*)`", section("Layout")))
    packages = {str(p.parent.relative_to(ROOT)) + "/" for p in PACKAGE.rglob("__init__.py")}
    top = {str(p.relative_to(ROOT)) for p in PACKAGE.glob("*.py")}
    missing = sorted((packages | top) - named)
    assert not missing, f"the Layout section of docs/guides/architecture.md omits {missing}"
    absent = sorted(n for n in named if not (ROOT / n).exists())
    assert not absent, f"the Layout section names what does not exist: {absent}"


def test_the_readme_points_to_the_layout() -> None:
    readme = (ROOT / "README.md").read_text()
    layout = re.search(r"^## Layout\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    assert layout, "README.md has no Layout section"
    assert "docs/guides/architecture.md" in layout.group(1)
    absent = [
        n for n in re.findall(r"`(mlsql/[^`\s]*)`", layout.group(1)) if not (ROOT / n).exists()
    ]
    assert not absent, f"README's Layout names what does not exist: {absent}"


# ------------------------------------------------------------------ adding a measure
def walkthrough() -> tuple[str, list[tuple[str, str]]]:
    """The new measure's name and each step's (file, code) in the order of the guide."""
    text = section("Adding a measure")
    steps = []
    for block in re.finditer(r"```python\n(.*?)```", text, re.S):
        before = text[: block.start()]
        step = before[[m.start() for m in re.finditer(r"^\d+\. ", before, re.M)][-1] :]
        target = re.findall(r"`((?:mlsql|tests)/[^`\s]+\.py)`", step)[0]  # "at the end of ..."
        steps.append((target, textwrap.dedent(block.group(1))))
    name = re.search(r'@measure\(\s*"(\w+)"', steps[0][1])
    assert name, "the walkthrough's first step declares no measure"
    return name.group(1), steps


def _copy(dest: Path) -> None:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for part in ("mlsql", "tests", "sql"):
        shutil.copytree(ROOT / part, dest / part, ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", dest / "pyproject.toml")


def _run(
    copy: Path, *args: str, engines: str = "duckdb,polars"
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(copy), "MLSQL_TEST_ENGINES": engines}
    return subprocess.run(
        [sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=600
    )


#: the new measure's input: two known rows (tp 1 + 1, fp 2 + 0: "c" twice and a NULL element
#: count once) and an unknown one, so its false discovery rate is 2 / 4
ROWS = {
    "actual": [["a", "b"], ["c"], None],
    "predicted": [["a", "c", "d"], ["c", None, "c"], ["x"]],
}

#: run in the copy after step 1: the measure in each engine, the SQL library, the reference test
DECLARED = """
import inspect, json, sys
import polars as pl
import mlsql, mlsql.polars as mp, mlsql.spark as ms
from mlsql._duckdb import generate
import tests.test_every_measure as every

name, rows = sys.argv[1], json.loads(sys.argv[2])
assert mlsql.__file__.startswith(sys.argv[3]), mlsql.__file__
con = mlsql.connect()
duck = con.execute(
    f"SELECT {name}(a, p) FROM (SELECT unnest($a) AS a, unnest($p) AS p)",
    {"a": rows["actual"], "p": rows["predicted"]},
).fetchone()[0]
polars = pl.DataFrame(rows).select(getattr(mp, name)("actual", "predicted")).item()
spark = list(inspect.signature(getattr(ms, name)).parameters)
stale = generate.main(["--check"])
generate.main([])
try:
    every.test_every_measure_has_a_reference()
    demanded = ""
except AssertionError as error:
    demanded = str(error)
print(json.dumps({"duckdb": duck, "polars": polars, "spark": spark, "stale": stale,
                  "demanded": demanded}))
"""

#: run in the copy after step 2: the reference test passes, and test_every_measure's own
#: check (its tables, its comparison) holds for the new measure on DuckDB and Polars
REFERENCED = """
import json, sys
import pyarrow as pa
import tests.test_every_measure as every
from tests.conftest import ENGINE_ADAPTERS, _load_adapter
from tests.references import REFERENCES

name, rows = sys.argv[1], json.loads(sys.argv[2])
every.test_every_measure_has_a_reference()
ref = REFERENCES[name]
ours = float(ref.expected(pa.table(rows), {"zero_division": 0}))
checked = {}
n_tables = len(every.tables(ref.data, every.SEEDS))
for engine in map(_load_adapter, (ENGINE_ADAPTERS["duckdb"], ENGINE_ADAPTERS["polars"])):
    checked[engine.name] = 0
    for table in every.tables(ref.data, every.SEEDS):
        calls = [c for c in every._calls(engine, "aggregate", ref.data, table) if c[0].name == name]
        got = engine.many(table, [(m.name, m.inputs, p) for m, p in calls])
        every._check(
            [(m, p, g, ref.expected(table, p)) for (m, p), g in zip(calls, got, strict=True)], table
        )
        checked[engine.name] += len(calls)
print(json.dumps({"reference": ours, "checked": checked, "tables": n_tables}))
"""


@pytest.mark.long
def test_adding_a_measure_as_the_guide_says(tmp_path: Path) -> None:
    name, steps = walkthrough()
    assert [file for file, _ in steps] == ["mlsql/measures/multilabel.py", "tests/references.py"]
    copy = tmp_path / "repo"
    _copy(copy)
    (declare_in, declaration), (reference_in, reference) = steps

    with open(copy / declare_in, "a") as f:
        f.write("\n\n" + declaration)
    run = _run(copy, "-c", DECLARED, name, json.dumps(ROWS), str(copy))
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert Fraction(got["duckdb"]) == Fraction(got["polars"]) == Fraction(2, 4)
    assert got["spark"] == ["actual", "predicted", "zero_division", "sample_weight"]
    assert got["stale"] == 1, "sql/ was not stale after declaring a measure"
    assert any(f"MACRO {name}(" in p.read_text() for p in (copy / "sql").glob("*.sql"))
    assert f"no reference in tests/references.py for ['{name}']" in got["demanded"]

    with open(copy / reference_in, "a") as f:
        f.write("\n\n" + reference)
    run = _run(copy, "-c", REFERENCED, name, json.dumps(ROWS))
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert Fraction(got["reference"]) == Fraction(2, 4)
    # each of the five zero_division conventions, on each of test_every_measure's tables
    assert got["checked"] == {"duckdb": 5 * got["tables"], "polars": 5 * got["tables"]}
