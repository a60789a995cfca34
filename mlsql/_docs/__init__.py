"""The documentation site: reference pages generated from the registry, and its build.

``python -m mlsql._docs build`` generates the reference pages from the measure
registry (:mod:`mlsql._registry`) into a temporary copy of ``docs/`` and builds
the site with mkdocs-material in strict mode (a broken link or a page missing
from the navigation fails it). The pages are not kept in git;
``python -m mlsql._docs generate`` writes them to ``docs/reference/`` (ignored)
for a preview.

Modules: :mod:`mlsql._docs.examples` (each function's tiny input table, its call
in DuckDB SQL, Polars and Spark, and its output computed on DuckDB),
:mod:`mlsql._docs.formulas` (which formulas a measure uses, found by tracing its
build), :mod:`mlsql._docs.reference` (the pages).
"""

from __future__ import annotations

from pathlib import Path

#: the repository (the docs are built from a checkout, not from an installed wheel)
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"
