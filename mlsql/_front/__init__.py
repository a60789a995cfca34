"""The engine-neutral front: the public functions of every DataFrame engine, written once.

:mod:`mlsql.polars` and :mod:`mlsql.spark` build their public functions from
the registry (:mod:`mlsql._registry`) with the code here, handing it an
:class:`~mlsql._front.engine.Engine` that says what differs between them
(the expression type, how an input becomes an expression, how a formula
runs, the words their docstrings use). What is the same lives here once:

- :mod:`~mlsql._front.build`: registry lookup, parameter checks, the public
  function of a measure (signature, validation, numpydoc docstring);
- :mod:`~mlsql._front.docs`: the docstring fragments every engine shares;
- :mod:`~mlsql._front.families`: finding an engine's family modules and
  collecting its public functions (generated ones, hand-written ones, aliases);
- :mod:`~mlsql._front.tables`: what the frame-level label tables share
  (argument checks, the one-column wrappers of ``multilabel_report``);
- :mod:`~mlsql._front.table_functions`: a table function's signature from the
  registry, written once for every engine.

Nothing here imports Polars or PySpark: each engine imports the front, never
the other way round.
"""
