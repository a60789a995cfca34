"""Hivemall's blog-tag example on the embedded DuckDB engine.

Run: ``python examples/blog_tags.py``. Prints micro F1 0.6956521739130435 and
F2 0.6779661016949152 (Hivemall's published figures), then the other measures.
"""

from __future__ import annotations

import pyarrow as pa

import mlsql

ROWS = [
    (["cat", "bird"], ["cat", "dog"]),
    (["cat", "dog"], ["cat", "bird"]),
    (["cat"], []),
    (["bird"], ["bird"]),
    (["bird", "cat"], ["bird", "cat"]),
    (["cat", "dog"], ["cat", "dog", "bird"]),
    (["dog", "bird"], ["dog"]),
]


def main() -> None:
    """Score the blog tags with fmeasure and friends, and print the results."""
    preds = pa.table(
        {
            "actual": pa.array([a for a, _ in ROWS], pa.list_(pa.string())),
            "predicted": pa.array([p for _, p in ROWS], pa.list_(pa.string())),
        }
    )
    con = mlsql.connect()
    con.register("preds", preds)
    [(f1, f2)] = con.execute(
        "SELECT fmeasure(actual, predicted), fmeasure(actual, predicted, '-beta 2.') FROM preds"
    ).fetchall()
    print(f"fmeasure(actual, predicted)            = {f1!r}")
    print(f"fmeasure(actual, predicted, '-beta 2.') = {f2!r}")
    con.sql(
        "SELECT micro_precision(actual, predicted) AS micro_p, micro_recall(actual, predicted) AS micro_r,"
        " samples_f1(actual, predicted) AS samples_f1, hamming_loss(actual, predicted, 3) AS hamming,"
        " subset_accuracy(actual, predicted) AS subset_acc FROM preds"
    ).show()


if __name__ == "__main__":
    main()
