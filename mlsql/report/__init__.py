"""Reports of mlsql's measures: the :class:`Report` object and its formats.

``mlsql.report(data, actual, predicted, ...)`` (this module, called) computes
one on the engine holding ``data``; :class:`~mlsql.report.model.Report` holds
the numbers and the modules here only show them.
"""

import sys
import types
from typing import Any

from mlsql.report.model import Confusion, Group, Report


class _CallableModule(types.ModuleType):
    """``mlsql.report`` is both this package and the function :func:`mlsql.report.api.report`."""

    def __call__(self, *args: Any, **kwargs: Any) -> Report:
        from mlsql.report.api import report

        return report(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["Confusion", "Group", "Report"]
