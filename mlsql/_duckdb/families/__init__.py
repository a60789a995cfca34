"""SQL families beyond the multi-label core, one module each.

A module here defines ``FILE`` (its ``sql/`` file name), ``DESCRIPTION``,
``ORDER`` (loading order; the core files come first) and
``macros(qualify, ops) -> list[Macro]`` for macros that are not plain
registry formulas. Registry measures of the module's ``FAMILIES`` that carry
a formula are rendered into ``FILE`` automatically by
:func:`mlsql._duckdb.library.macros`; an optional ``stats(qualify, measure)``
gives the statistics object handed to those formulas (default: the
multi-label :class:`~mlsql._formulas.RowStats` of ``actual`` and
``predicted``).
"""
