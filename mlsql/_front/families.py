"""An engine's family modules, and the public functions they make with the registry.

Each engine has a package of family modules (``mlsql.polars.families``,
``mlsql.spark.families``; their hooks are described there). :func:`functions`
collects an engine's public functions: every module's hand-written ones
(``__all__``), one generated function per formula measure that a module
serves and the engine runs, and the registry's aliases.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from types import ModuleType
from typing import Any

from mlsql._front.build import function
from mlsql._front.engine import Engine
from mlsql._registry import Measure, measures

#: core modules load first, in this order; the others by name
CORE = ("multilabel", "hivemall")


def modules(package: ModuleType) -> list[ModuleType]:
    """Every family module of ``package``, the core ones first."""
    found = pkgutil.iter_modules(package.__path__)
    names = [info.name for info in found if not info.name.startswith("_")]
    ordered = [n for n in CORE if n in names] + sorted(n for n in names if n not in CORE)
    return [importlib.import_module(f"{package.__name__}.{name}") for name in ordered]


def serving(family: str, mods: list[ModuleType]) -> ModuleType | None:
    """The module whose ``FAMILIES`` holds ``family`` (None if no module serves it)."""
    return next((mod for mod in mods if family in getattr(mod, "FAMILIES", ())), None)


def input_check(engine: Engine, mod: ModuleType, measure: Measure) -> Any:
    """The module's type check for ``measure`` (default: the engine's)."""
    hook: Any = getattr(mod, "input_check", None)
    return hook(measure) if hook is not None else engine.default_check(measure)


def functions(engine: Engine) -> dict[str, Callable[..., Any]]:
    """Every public function of ``engine`` by name, aliases included."""
    mods = modules(engine.families)
    out: dict[str, Callable[..., Any]] = {}
    for mod in mods:
        for name in getattr(mod, "__all__", ()):
            out[name] = getattr(mod, name)
    for m in measures():
        if m.build is None or not m.available_in(engine.name) or m.name in out:
            continue
        family = serving(m.family, mods)
        if family is None or not hasattr(family, "stats"):
            continue
        build = engine.formula_build(m, family)
        check = input_check(engine, family, m)
        out[m.name] = function(engine, m, build, check, family, engine.example(m, family))
    for m in measures():
        for alias in m.aliases:
            if m.name in out and alias not in out:
                out[alias] = out[m.name]
    return out
