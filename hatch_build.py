"""Hatchling build hook: compile mlsql's native code into the wheel, or build it portable.

``pip install .`` (and the wheel builds cibuildwheel runs) compile, with the
system C compiler (``$CC``, else ``cc``):

- the DuckDB extension, ``native/build_duckdb.py`` (it fetches DuckDB's C API
  headers from DuckDB's source distribution on the package index);
- the Polars plugin, ``native/build_polars.py``;
- the resample kernels of bootstrap and compare, ``native/build_resample.py``.

Each lands in ``mlsql/_native/`` inside the wheel; an editable install
(``pip install -e .``) compiles them into the source tree's ``mlsql/_native/``,
where the package finds them. Where a compiler or the headers are missing,
the hook warns and that piece is left out: mlsql then runs on its portable
macros and expressions, with the same numbers. ``MLSQL_BUILD_NATIVE=0`` skips
native code altogether.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

#: the builders, each a module in native/ with ``build(out_dir, cc) -> Path``
BUILDERS = ("build_duckdb", "build_polars", "build_resample")


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


class NativeBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compile the native pieces; mark the wheel platform-specific if any was built."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        if os.environ.get("MLSQL_BUILD_NATIVE", "").strip().lower() in ("0", "false", "no"):
            self.app.display_info("mlsql: MLSQL_BUILD_NATIVE=0, building the portable package")
            return
        root = Path(self.root)
        editable = version == "editable"
        out_dir = root / "mlsql" / "_native" if editable else Path(tempfile.mkdtemp())
        self._temporary = None if editable else out_dir
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

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if getattr(self, "_temporary", None) is not None:
            shutil.rmtree(self._temporary, ignore_errors=True)
