"""``mlsql.report(...)``: a whole evaluation report from Python, on the engine holding the data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql.report import slicing
from mlsql.report.build import Settings, build
from mlsql.report.engines import ENGINES, DuckDBFrames, engine_of
from mlsql.report.model import MIN_SUPPORT, Report


def report(
    data: Any,
    actual: str,
    predicted: str,
    *,
    by: str | Sequence[str] | None = None,
    labels: Sequence[Any] | None = None,
    beta: float = 1.0,
    zero_division: Any = 0,
    sep: str | None = None,
    min_support: int = MIN_SUPPORT,
    con: Any = None,
    source: str | None = None,
    slices: str | Sequence[str] | None = None,
    sample_weight: str | None = None,
) -> Report:
    """Evaluate predictions and return the whole report as a :class:`~mlsql.report.Report`.

    Parameters
    ----------
    data : DuckDB relation, table name, query or path; Polars or Spark DataFrame; ibis table
        Where the predictions are. A Polars DataFrame or LazyFrame is evaluated
        by ``mlsql.polars``, a Spark DataFrame by ``mlsql.spark`` (on its own
        session), an ibis table expression in its own database (PostgreSQL,
        DataFusion, DuckDB, ...: only the report's rows come back; no ``slices``
        there yet), anything else by DuckDB on ``con`` (an Arrow table or pandas
        DataFrame too).
    actual, predicted : str
        The label columns: lists of labels, one label per row (a single-label
        report: accuracy, kappa, MCC and the confusion cells), or text split on ``sep``.
    by : str or sequence of str, optional
        Grouping columns: one report section per group.
    labels : sequence, optional
        The label universe (labels in it that never occur count too).
    beta : float, default 1
        F-beta's beta (a finite number > 0).
    zero_division : {0, 1, nan, 'diagnose', 'ignore'}, default 0
        Value of undefined ratios.
    sep : str, optional
        Split text label columns on this delimiter; each label loses the ASCII
        whitespace around it (spaces, tabs, line breaks), and an empty one is no label.
    min_support : int, default 5
        Labels ranked best and worst need at least this support.
    con : duckdb.DuckDBPyConnection, optional
        DuckDB only: the connection holding ``data`` (default: a DuckDB
        relation's own connection, else a new in-memory one).
    source : str, optional
        How the report names the data (default: the name or the frame's type).
    slices : str or sequence of str, optional
        Candidate columns: the report adds its weakest slices, micro F on each
        value of each column (numeric ones in quartile bins), worst first,
        with bootstrap intervals and adjusted p-values
        (:mod:`mlsql.report.slicing`); the HTML page draws them as a forest plot.
    sample_weight : str, optional
        A column of row weights (finite numbers >= 0; a NULL weight skips the
        row), as every measure takes it: supports and counts become total weights.

    Returns
    -------
    Report
        Numbers in ``summary`` (one row per group) and ``labels`` (per label);
        ``to_dict()``, ``to_json()``, ``to_html()``, ``to_markdown()``,
        ``classification_report()``; a notebook shows the HTML. With ``slices``,
        ``slices`` holds the rows of the weakest slices.

    Examples
    --------
    >>> import mlsql, polars as pl
    >>> df = pl.DataFrame({"actual": [["cat", "bird"], ["dog"]], "predicted": [["cat"], ["dog", "cat"]]})
    >>> r = mlsql.report(df, "actual", "predicted")
    >>> r.engine, r.summary[0]["micro_f1"]
    ('polars', 0.6666666666666666)
    >>> df = pl.DataFrame({"lang": ["de", "en"] * 40, "actual": [["a"], ["a"]] * 40,
    ...                    "predicted": [["b"], ["a"]] * 40})
    >>> r = mlsql.report(df, "actual", "predicted", slices=["lang"])
    >>> [(s["slice"], s["estimate"], s["significant"]) for s in r.slices]
    [("lang = 'de'", 0.0, True), ("lang = 'en'", 1.0, True)]
    """
    func = "report"
    for role, name in (("actual", actual), ("predicted", predicted)):
        if not isinstance(name, str) or not name:
            raise MlsqlError(
                f"The '{role}' parameter of {func} must be a column name. Got {name!r}."
            )
    if sep is not None and (not isinstance(sep, str) or sep == ""):
        raise MlsqlError(f"The 'sep' parameter of {func} must be a non-empty string. Got {sep!r}.")
    if isinstance(min_support, bool) or not isinstance(min_support, int) or min_support < 0:
        raise MlsqlError(
            f"The 'min_support' parameter of {func} must be an integer >= 0. Got {min_support!r}."
        )
    by_names = tuple(P.check_by(by, func))
    for column in by_names:
        if column in (actual, predicted):
            raise MlsqlError(f"The 'by' column {column!r} of {func} is a label column.")
    weights = _weight_column(sample_weight, (actual, predicted, *by_names), func)
    candidates = slicing.check_slices(slices, func, (actual, predicted, sample_weight))
    settings = Settings(
        by=by_names,
        labels=tuple(labels) if labels is not None else None,
        beta=P.check_beta(beta, func),
        zero_division=zero_division,
        sep=sep,
        min_support=min_support,
        sample_weight=sample_weight,
    )
    name = engine_of(data)
    if name == "duckdb":
        engine: Any = DuckDBFrames(_connection(data, con, func))
    elif name == "ibis":  # computed in the table's own database
        from mlsql.report.ibis_frames import NOT_HERE, IbisFrames

        if candidates is not None:
            raise MlsqlError(NOT_HERE.format(what="slices"))
        engine = IbisFrames(data)
    else:
        engine = ENGINES[name]()
    # the frame keeps the slices' columns beside the group columns
    kept = (*by_names, *weights, *(c for c in candidates or () if c not in by_names))
    frame, single = engine.from_source(data, actual, predicted, kept, sep)
    if source is None:
        source = data if isinstance(data, str) else type(data).__name__
    out = build(engine, frame, actual, predicted, settings, single_label=single, source=source)
    if candidates is None:
        return out
    return slicing.add_slices(out, engine, frame, actual, predicted, settings, candidates)


def _weight_column(sample_weight: Any, taken: Sequence[str], func: str) -> tuple[str, ...]:
    """``(sample_weight,)``, or ``()`` without one; a name that is no column name, or a label
    or group column, is an error."""
    if sample_weight is None:
        return ()
    if not isinstance(sample_weight, str) or not sample_weight:
        raise MlsqlError(
            f"The 'sample_weight' parameter of {func} must be a column name or None. "
            f"Got {sample_weight!r}."
        )
    if sample_weight in taken:
        raise MlsqlError(
            f"The 'sample_weight' column {sample_weight!r} of {func} is a label or 'by' "
            "column: give a column of its own."
        )
    return (sample_weight,)


def _connection(data: Any, con: Any, func: str) -> Any:
    """The DuckDB connection to read ``data`` on: ``con``, a relation's own, or a new one.

    A relation can be read only on the connection that made it (its tables
    and views are there), and it knows that connection.

    Raises
    ------
    MlsqlError
        ``con`` is not the connection of the relation ``data``.
    """
    import duckdb

    own = getattr(data, "_con", None) if isinstance(data, duckdb.DuckDBPyRelation) else None
    if own is not None and con is not None and own is not con:
        raise MlsqlError(
            f"The 'con' parameter of {func} must be the connection of the relation 'data' "
            "(a relation is read on the connection that made it); leave 'con' out to use it."
        )
    if con is not None:
        from mlsql._duckdb.threads import in_this_thread

        return in_this_thread(con)
    if own is not None:
        return own
    import mlsql

    return mlsql.connect()
