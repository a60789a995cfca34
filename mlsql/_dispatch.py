"""Which engine evaluates a source: ``mlsql.evaluate``, ``mlsql.bootstrap`` and
``mlsql.compare`` in front of DuckDB and ibis.

They read DuckDB's sources (a table name, a query, a path, a relation, an Arrow table, a
Polars or pandas DataFrame) on DuckDB, and an ibis table expression in its own database
through :mod:`mlsql._ibis`. Neither engine imports the other; this front module picks
one. Each function is DuckDB's, with its signature and docstring (which describe both):
the ibis function of the same name takes the same arguments but ``con``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import ParamSpec, TypeVar, cast

from mlsql._duckdb.evaluate import evaluate as on_duckdb
from mlsql._duckdb.resample import bootstrap as bootstrap_on_duckdb
from mlsql._duckdb.resample import compare as compare_on_duckdb
from mlsql._ibis import is_table

Params = ParamSpec("Params")
Result = TypeVar("Result")


def _or_on_ibis(on_duckdb: Callable[Params, Result], module: str) -> Callable[Params, Result]:
    """``on_duckdb``, but for an ibis table expression as its data: then the function of the
    same name in ``mlsql._ibis.<module>`` (imported on first use), computed in the table's own
    database, with the same arguments, defaults filled in, but ``con``.

    Examples
    --------
    >>> import mlsql
    >>> mlsql.evaluate.__wrapped__ is on_duckdb
    True
    >>> list(inspect.signature(mlsql.bootstrap).parameters)[-2:]
    ['sample_weight', 'con']
    """
    signature = inspect.signature(on_duckdb)
    data = next(iter(signature.parameters))

    @functools.wraps(on_duckdb)
    def dispatch(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        bound = signature.bind(*args, **kwargs)
        if not is_table(bound.arguments[data]):
            return on_duckdb(*args, **kwargs)
        bound.apply_defaults()
        settings = dict(bound.arguments)
        table = settings.pop(data)
        del settings["con"]
        on_ibis = getattr(importlib.import_module(f"mlsql._ibis.{module}"), on_duckdb.__name__)
        # an ibis table in, an ibis table out: the annotation names DuckDB's relation
        return cast(Result, on_ibis(table, **settings))

    return dispatch


evaluate = _or_on_ibis(on_duckdb, "evaluate")
bootstrap = _or_on_ibis(bootstrap_on_duckdb, "resample")
compare = _or_on_ibis(compare_on_duckdb, "resample")
