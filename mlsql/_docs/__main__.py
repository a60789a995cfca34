"""``python -m mlsql._docs generate|build [--check]``: write the reference pages, build the site.

``generate`` writes ``docs/reference/`` from the registry. ``build`` does the
same, then builds the site with mkdocs in strict mode into ``site/`` (or
``--site-dir``); with ``--check`` it writes nothing and fails when a
committed page is stale (for CI).
"""

from __future__ import annotations

import argparse
import os
import sys

from mlsql._docs import REFERENCE, ROOT
from mlsql._docs.reference import pages


def stale() -> list[str]:
    """Reference pages whose committed text differs from what the registry gives."""
    want = pages()
    have = {p.name for p in REFERENCE.glob("*.md")}
    out = [
        n
        for n, text in want.items()
        if not (REFERENCE / n).is_file() or (REFERENCE / n).read_text() != text
    ]
    return sorted(out + sorted(have - set(want)))


def generate() -> list[str]:
    """Write the reference pages; return the names of those that changed."""
    REFERENCE.mkdir(parents=True, exist_ok=True)
    want = pages()
    changed = []
    for name, text in want.items():
        path = REFERENCE / name
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            changed.append(name)
    for path in REFERENCE.glob("*.md"):
        if path.name not in want:
            path.unlink()
            changed.append(path.name)
    return changed


def build(site_dir: str | None) -> None:
    """Build the site strictly (any warning, a broken link or a page left out, fails)."""
    import logging

    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config

    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s - %(message)s"))
    logging.getLogger("mkdocs").addHandler(handler)
    logging.getLogger("mkdocs").setLevel(logging.WARNING)

    here = os.getcwd()
    os.chdir(ROOT)  # snippets (the benchmark page) are read relative to the repository
    try:
        config = load_config(str(ROOT / "mkdocs.yml"), strict=True, site_dir=site_dir)
        mkdocs_build(config)
    finally:
        os.chdir(here)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mlsql._docs", description=__doc__)
    parser.add_argument("command", choices=("generate", "build"))
    parser.add_argument("--check", action="store_true", help="fail on stale pages, write none")
    parser.add_argument("--site-dir", help="where the site goes (default: site/)")
    args = parser.parse_args(argv)
    if args.check:
        found = stale()
        if found:
            print(
                f"stale reference pages: {', '.join(found)}; run python -m mlsql._docs generate",
                file=sys.stderr,
            )
            return 1
    else:
        for name in generate():
            print(f"wrote docs/reference/{name}")
    if args.command == "build":
        try:
            build(args.site_dir)
        except Exception as error:  # mkdocs' Abort: the warnings above say why
            print(f"docs build failed: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
