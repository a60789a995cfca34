"""``evaluate``: every requested aggregate measure per group, one row per group and measure.

The plan, the same in every engine (:mod:`mlsql._evaluate.front` checks the call):

1. one grouped aggregation over the rows: every measure is the engine's own
   aggregate (a DuckDB macro, a Polars expression, a Spark Column), all of them
   in one ``GROUP BY`` of the ``by`` columns;
2. the wide row per group unpivoted to ``measure``, ``estimate`` (DOUBLE),
   ordered by group (NULL first) and then the measures' order.

The per-label averages of label lists (macro_*, weighted_*, the F of macro means, the
label accuracies and CLP, MLP, WLP: :data:`mlsql._evaluate.front.LABEL_MEASURES`, those
``bootstrap`` takes) run in two levels, one plan per parameter set
(:func:`mlsql._evaluate.front.label_reports`): per (group, label) counts of tp, fp, fn and
support (sums of weights with ``sample_weight``), then the registry's per-label formulas
(:mod:`mlsql.measures.label_based`) averaged over each group's labels, so memory grows with
groups x labels, never with rows. Polars and Spark run ``multilabel_report``'s plan; DuckDB
runs its per-label aggregate macros (native per-label counts on ``mlsql.connect()``).

Where it bounds memory, Spark adds a first level (:mod:`mlsql.spark.evaluate`):
the rows become distinct cells ``(by..., actual, predicted)`` with their total
weight, and the same aggregates run over the cells weighed by it.
"""
