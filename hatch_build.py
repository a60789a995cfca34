"""Hatchling build hook: compile mlsql's native code into the wheel, or build it portable.

``pip install .`` (and the wheel builds cibuildwheel runs) compile, with the
system C compiler (``$CC``, else ``cc``):

- the DuckDB extension, ``native/build_duckdb.py`` (it fetches DuckDB's C API
  headers from DuckDB's source distribution on the package index);
- the Polars plugin, ``native/build_polars.py``;
- the resample kernels of bootstrap and compare, ``native/build_resample.py``;
- the JVM function of the Spark engine, ``native/build_spark.py``, with the JDK's
  ``javac`` against PySpark's jars (the build environment holds the ``spark`` extra).

Each lands in ``mlsql/_native/`` inside the wheel; an editable install
(``pip install -e .``) compiles them into the source tree's ``mlsql/_native/``,
where the package finds them. Where a compiler (a JDK) or the headers are missing,
the hook warns and that piece is left out: mlsql then runs on its portable
macros and expressions, with the same numbers. ``MLSQL_BUILD_NATIVE=0`` skips
native code altogether.

It also writes the typed stubs of the functions the registry builds at import,
``mlsql/polars/__init__.pyi`` and ``mlsql/spark/__init__.pyi``, which git does
not keep: into the wheel, or into the source tree for an editable install
(``python -m mlsql._stubs --out ROOT --only-stubs``, run on the sources being
built, in the build environment, which holds mlsql's dependencies and its
``spark`` extra for it: the hook's ``require-runtime-*`` options in
``pyproject.toml``). A failure warns and leaves them out.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: the builders, each a module in native/ with ``build(out_dir, cc) -> Path``
BUILDERS = ("build_duckdb", "build_polars", "build_resample", "build_spark")


def _module(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_mlsql_{path.stem}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _platform_tag() -> str:
    from packaging.tags import sys_tags

    return next(iter(sys_tags())).platform


#: the stubs the hook writes, under the package (as ``mlsql._stubs.STUBS``)
STUBS = ("polars/__init__.pyi", "spark/__init__.pyi")


def write_stubs(root: Path, out: Path) -> list[Path]:
    """Write the typed stubs of the sources at ``root`` under ``out/mlsql`` (a process of
    this interpreter that imports them); the files written."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(root), env.get("PYTHONPATH"))))
    command = [sys.executable, "-m", "mlsql._stubs", "--out", str(out), "--only-stubs"]
    subprocess.run(command, cwd=root, env=env, check=True, capture_output=True, text=True)
    return [out / "mlsql" / stub for stub in STUBS]


class NativeBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Write the stubs; compile the native pieces, and mark the wheel platform-specific if
    any was built."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        editable = version == "editable"
        self._temporary: list[Path] = []
        self._stubs(root, editable, build_data)
        if os.environ.get("MLSQL_BUILD_NATIVE", "").strip().lower() in ("0", "false", "no"):
            self.app.display_info("mlsql: MLSQL_BUILD_NATIVE=0, building the portable package")
            return
        out_dir = root / "mlsql" / "_native" if editable else Path(tempfile.mkdtemp())
        if not editable:
            self._temporary.append(out_dir)
        cc = os.environ.get("CC") or "cc"
        built: list[Path] = []
        for name in BUILDERS:
            script = root / "native" / f"{name}.py"
            if not script.is_file():
                continue
            try:
                built.append(_module(script).build(out_dir, cc))
            except Exception as error:  # any failure: that piece stays portable
                detail = getattr(error, "stderr", "") or ""
                self.app.display_warning(
                    f"mlsql: {name} failed, installing without it (the portable path gives "
                    f"the same numbers): {type(error).__name__}: {error} {detail}".strip()
                )
        if not built:
            return
        for path in built:
            self.app.display_info(f"mlsql: built {path.name}")
            if not editable:
                build_data["force_include"][str(path)] = f"mlsql/_native/{path.name}"
        build_data["pure_python"] = False
        build_data["tag"] = f"py3-none-{_platform_tag()}"

    def _stubs(self, root: Path, editable: bool, build_data: dict[str, Any]) -> None:
        """The typed stubs: into the source tree (editable) or the wheel."""
        out = root if editable else Path(tempfile.mkdtemp())
        if not editable:
            self._temporary.append(out)
        try:
            written = write_stubs(root, out)
        except Exception as error:  # the package works without them; type checkers see Any
            detail = getattr(error, "stderr", "") or ""
            self.app.display_warning(
                f"mlsql: the typed stubs could not be written, installing without them: "
                f"{type(error).__name__}: {error} {detail}".strip()
            )
            return
        for path in written:
            self.app.display_info(f"mlsql: wrote {path.relative_to(out)}")
            if not editable:
                build_data["force_include"][str(path)] = str(path.relative_to(out).as_posix())

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        for path in getattr(self, "_temporary", []):
            shutil.rmtree(path, ignore_errors=True)
