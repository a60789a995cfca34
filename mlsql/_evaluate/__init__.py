"""``evaluate``: every requested aggregate measure per group, one row per group and measure.

The plan, the same in every engine (:mod:`mlsql._evaluate.front` checks the call):

1. one grouped aggregation over the rows: every measure is the engine's own
   aggregate (a DuckDB macro, a Polars expression, a Spark Column), all of them
   in one ``GROUP BY`` of the ``by`` columns;
2. the wide row per group unpivoted to ``measure``, ``estimate`` (DOUBLE),
   ordered by group (NULL first) and then the measures' order.

Where it bounds memory, Spark adds a first level (:mod:`mlsql.spark.evaluate`):
the rows become distinct cells ``(by..., actual, predicted)`` with their total
weight, and the same aggregates run over the cells weighed by it.
"""
