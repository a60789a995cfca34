"""The DuckDB engine: SQL macros generated from the registry's formulas.

Beside the macros (``library``, ``families``, ``generate``, ``register``), the
Python functions that run them on a connection: ``label_tables``,
``confusion_wide`` and ``indicators`` (public as ``mlsql.label_metrics``,
``mlsql.confusion_matrix_wide``, ``mlsql.from_indicators``, ...).
"""
