"""What the sdist and the wheel ship, and the conformance copy the tests read.

The tests read tests/data/conformance, a copy of ../shared/conformance that
the sdist ships; where shared/ is beside the repository the two must agree.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import mlsql
from tests.conftest import CONFORMANCE, ROOT, SHARED_CONFORMANCE


def test_the_conformance_copy_equals_shared() -> None:
    if not SHARED_CONFORMANCE.is_dir():
        pytest.skip("no ../shared/conformance beside the repository to compare with")
    shared = {p.name: p.read_bytes() for p in SHARED_CONFORMANCE.glob("*.json")}
    copy = {p.name: p.read_bytes() for p in CONFORMANCE.glob("*.json")}
    assert shared, "no conformance files in shared/"
    assert sorted(copy) == sorted(shared)
    stale = [name for name in shared if copy[name] != shared[name]]
    assert not stale, f"tests/data/conformance differs from shared/ in {stale}: copy them again"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sdist and the wheel, built by hatchling (the build backend) from this tree."""
    try:
        import hatchling  # noqa: F401
    except ImportError:
        pytest.fail("building needs hatchling: pip install -e '.[dev]'")
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-d", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    [sdist] = out.glob("*.tar.gz")
    [wheel] = out.glob("*.whl")
    return {"sdist": sdist, "wheel": wheel}


@pytest.mark.long
def test_the_sdist_ships_what_the_tests_need(built: dict[str, Path]) -> None:
    with tarfile.open(built["sdist"]) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    needed = {
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "sql/formulas.sql",
        "tests/conftest.py",
        "tests/oracle.py",
        "examples/data/blog_tags.parquet",
        *(f"tests/data/conformance/{p.name}" for p in CONFORMANCE.glob("*.json")),
    }
    assert needed <= names, f"missing from the sdist: {sorted(needed - names)}"
    tests = {p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("*.py")}
    assert tests <= names, f"tests missing from the sdist: {sorted(tests - names)}"
    junk = [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert not junk


@pytest.mark.long
def test_the_wheel_has_metadata_the_library_and_its_sql(built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = set(wheel.namelist())
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = wheel.read(metadata).decode()
        [entry_points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = wheel.read(entry_points).decode()
    assert {"mlsql/__init__.py", "mlsql/sql/formulas.sql", "mlsql/cli/log4j2.properties"} <= names
    assert not [n for n in names if n.startswith("tests/")]
    assert "mlsql = mlsql.cli:app" in scripts
    classifiers = [line for line in text.splitlines() if line.startswith("Classifier: ")]
    assert "Classifier: Programming Language :: Python :: 3 :: Only" in classifiers
    assert any(c.startswith("Classifier: Topic :: ") for c in classifiers)
    assert "Requires-Python: >=3.10" in text
    assert "License-Expression: Apache-2.0" in text
    # the one version mlsql reports (mlsql.__version__, the report's JSON, mlsql --version)
    assert f"Version: {mlsql.__version__}\n" in text
    assert built["wheel"].name.startswith(f"mlsql-{mlsql.__version__}-")


def test_native_status_says_a_source_tree_is_imported(tmp_path: Path) -> None:
    # before: "not built" from a checkout after pip install ., and nothing on which copy
    tree = tmp_path / "checkout"
    shutil.copytree(
        ROOT / "mlsql", tree / "mlsql", ignore=shutil.ignore_patterns("_native", "__pycache__")
    )
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    code = "import json, mlsql; print(json.dumps(mlsql.native_status()))"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the checkout first
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, check=True
    )
    status = json.loads(done.stdout)
    for engine in ("duckdb", "polars"):
        found = status[engine]
        assert found["package"] == str((tree / "mlsql").resolve())
        assert not found["enabled"]
        assert (
            f"; the mlsql imported is the source tree at {(tree / 'mlsql').resolve()} (Python "
            "run from a checkout imports it first), where nothing is compiled; "
        ) in found["reason"], found["reason"]
    # the imported copy's own directory is named even when its build is there
    assert mlsql.native_status()["duckdb"]["package"] == str(Path(mlsql.__file__).resolve().parent)
