"""``python -m mlsql._docs generate|build``: write the reference pages, build the site.

The reference pages are generated from the registry and not kept in git.
``generate`` writes them to ``docs/reference/`` (ignored by git), for a
preview with ``mkdocs serve``. ``build`` writes nothing in ``docs/``: it
copies the guides to a temporary directory, writes the reference pages
beside them and builds the site with mkdocs in strict mode into ``site/``
(or ``--site-dir``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from mlsql._docs import DOCS, REFERENCE, ROOT
from mlsql._docs.reference import pages


def write(reference: Path, want: dict[str, str]) -> list[str]:
    """Write the pages ``want`` into ``reference``, remove others; the names that changed."""
    reference.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in want.items():
        path = reference / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            changed.append(name)
    for path in reference.glob("*.md"):
        if path.name not in want:
            path.unlink()
            changed.append(path.name)
    return changed


def generate() -> list[str]:
    """Write the reference pages to ``docs/reference/``; return the names of those that changed."""
    return write(REFERENCE, pages())


def build(
    site_dir: str | None, reference: dict[str, str] | None = None, docs_dir: Path = DOCS
) -> None:
    """Build the site strictly (any warning, a broken link or a page left out, fails).

    The site is built from a temporary copy of ``docs_dir`` (``docs/``; a test gives an
    edited copy) holding the reference pages ``reference`` (by default generated now from
    the registry).
    """
    import logging

    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s - %(message)s"))
    logging.getLogger("mkdocs").addHandler(handler)
    logging.getLogger("mkdocs").setLevel(logging.WARNING)

    want = pages() if reference is None else reference
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="mlsql-docs-") as tmp:
        docs = Path(tmp) / "docs"
        shutil.copytree(docs_dir, docs, ignore=shutil.ignore_patterns("reference"))
        write(docs / "reference", want)
        os.chdir(ROOT)  # snippets (the benchmark page) are read relative to the repository
        try:
            config = load_config(
                str(ROOT / "mkdocs.yml"),
                strict=True,
                docs_dir=str(docs),
                site_dir=site_dir or str(ROOT / "site"),
            )
            mkdocs_build(config)
        finally:
            os.chdir(here)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mlsql._docs", description=__doc__)
    parser.add_argument("command", choices=("generate", "build"))
    parser.add_argument("--site-dir", help="where the site goes (default: site/)")
    args = parser.parse_args(argv)
    if args.command == "generate":
        for name in generate():
            print(f"wrote docs/reference/{name}")
        return 0
    try:
        build(args.site_dir)
    except Exception as error:  # mkdocs' Abort: the warnings above say why
        print(f"docs build failed: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
