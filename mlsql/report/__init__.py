"""Reports of mlsql's measures: rich tables, JSON, CSV, Markdown and a self-contained HTML page.

:class:`~mlsql.report.model.Report` holds the numbers (computed by an engine);
the modules here only show them.
"""

from mlsql.report.model import Confusion, Group, Report

__all__ = ["Confusion", "Group", "Report"]
