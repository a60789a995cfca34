"""Reports of mlsql's measures: the :class:`Report` object and its formats.

The function :func:`mlsql.report` (:func:`mlsql.report.api.report`) computes
one on the engine holding the data; :class:`~mlsql.report.model.Report` holds
the numbers and the modules here only show them.
"""

from mlsql.report.model import Confusion, Group, Report

__all__ = ["Confusion", "Group", "Report"]
