"""What the sdist and the wheel ship, and the conformance copy the tests read.

The tests read tests/data/conformance, a copy of ../shared/conformance that
the sdist ships; where shared/ is beside the repository the two must agree.
"""

from __future__ import annotations

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


def test_the_sdist_ships_what_the_tests_need(built: dict[str, Path]) -> None:
    with tarfile.open(built["sdist"]) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    needed = {
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "sql/mlsql.sql",
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


def test_the_wheel_has_metadata_the_library_and_its_sql(built: dict[str, Path]) -> None:
    with zipfile.ZipFile(built["wheel"]) as wheel:
        names = set(wheel.namelist())
        [metadata] = [n for n in names if n.endswith(".dist-info/METADATA")]
        text = wheel.read(metadata).decode()
        [entry_points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = wheel.read(entry_points).decode()
    assert {"mlsql/__init__.py", "mlsql/sql/mlsql.sql", "mlsql/cli/log4j2.properties"} <= names
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
