"""Measure declarations by family; importing this package fills the registry.

Every module in this package is imported, so a new family is one new file.
"""

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    importlib.import_module(f"{__name__}.{_info.name}")
