"""Write blog_tags.parquet: Hivemall's blog-tag example, one row per post.

The rows come from ``shared/conformance/hivemall_blog_tags.json`` (Apache
Hivemall's multilabel-measures documentation), written here as literals so
the example needs nothing outside this repository. Columns ``actual`` and
``predicted`` are ``list<string>``. Run from anywhere::

    python examples/data/make_blog_tags.py
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = [
    (["cat", "bird"], ["cat", "dog"]),
    (["cat", "dog"], ["cat", "bird"]),
    (["cat"], []),
    (["bird"], ["bird"]),
    (["bird", "cat"], ["bird", "cat"]),
    (["cat", "dog"], ["cat", "dog", "bird"]),
    (["dog", "bird"], ["dog"]),
]


def main() -> Path:
    """Write the file beside this script and return its path."""
    labels = pa.list_(pa.string())
    table = pa.table(
        {
            "actual": pa.array([a for a, _ in ROWS], labels),
            "predicted": pa.array([p for _, p in ROWS], labels),
        }
    )
    path = Path(__file__).with_name("blog_tags.parquet")
    pq.write_table(table, path, compression="zstd")
    return path


if __name__ == "__main__":
    print(main())
