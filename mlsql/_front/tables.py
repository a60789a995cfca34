"""What the engines' frame-level label tables share: argument checks and one-column wrappers.

``label_metrics`` and ``multilabel_report`` take a frame and column names; each
engine counts in its own way, but the arguments are checked alike
(:func:`checked_arguments`, :func:`beta_and_zero_division`), and every macro or
weighted measure of :data:`mlsql.measures.label_based.STANDALONE` is the one
column of ``multilabel_report`` that :func:`standalone` picks.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._front import examples
from mlsql._front.docs import standalone_docstring
from mlsql._front.engine import Engine
from mlsql._front.table_functions import table_call
from mlsql.measures import curves as CV
from mlsql.measures import label_based as LB

#: the error of a named column the source lacks: function, role (``actual``, ``by``, ...),
#: the name given, the source's columns; the DuckDB table macros fill it in SQL
#: (:func:`mlsql._duckdb.source_sql.checked_body_sql`), so it quotes the name plainly
MISSING_COLUMN = "{}: the {} column '{}' is not in the source. Its columns: {}."


def missing_column_message(func: str, role: str, name: Any, columns: Iterable[str]) -> str:
    """:data:`MISSING_COLUMN` filled in: ``name`` (the ``role`` column) is not one of ``columns``.

    Examples
    --------
    >>> missing_column_message("roc_curve", "by", "day", ["actual", "score"])
    "roc_curve: the by column 'day' is not in the source. Its columns: actual, score."
    """
    return MISSING_COLUMN.format(func, role, name, ", ".join(columns))


def check_columns(func: str, columns: Collection[str], named: Iterable[tuple[str, Any]]) -> None:
    """Every ``(role, name)`` of ``named`` names one of ``columns`` (the frame's); an empty
    name names none (no SQL can quote it, and DuckDB renames such a column when it reads it)."""
    for role, name in named:
        if not isinstance(name, str) or not name or name not in columns:
            raise MlsqlError(missing_column_message(func, role, name, columns))


def check_by_names(func: str, groups: Sequence[str], outputs: Collection[str]) -> None:
    """No group column has the name of one of the table's ``outputs``."""
    for name in groups:
        if name in outputs:
            raise MlsqlError(by_output_message(func, name))


def checked_arguments(
    func: str,
    columns: Collection[str],
    actual: str,
    predicted: str,
    by: str | Sequence[str] | None,
    labels: Sequence[Any] | None,
) -> tuple[list[str], list[Any] | None]:
    """(group column names, label universe): every named column is one of ``columns``
    (the frame's), and no group column has the name of an output column."""
    groups = P.check_by(by, func)
    universe = LT.check_universe(labels, func)
    named = {"actual": actual, "predicted": predicted}
    check_columns(func, columns, [*named.items(), *(("by", b) for b in groups)])
    outputs = LB.LABEL_COLUMNS if func == "label_metrics" else LB.REPORT_COLUMNS
    check_by_names(func, groups, outputs)
    return groups, universe


def by_output_message(func: str, name: str) -> str:
    """The error of a ``by`` column named as one of the table's output columns."""
    return P.BY_OUTPUT_MESSAGE.format(func=func, name=name)


#: the error of a class that cannot name a column of ``confusion_matrix_wide``
WIDE_NAME_MESSAGE = (
    "confusion_matrix_wide names a column after each class, and the class {name!r} cannot"
    " name one: {why}. confusion_matrix gives the same counts one row per cell."
)


def class_column(value: Any) -> str:
    """The name of a class's column in ``confusion_matrix_wide``: its text, a boolean as SQL
    writes it.

    Examples
    --------
    >>> class_column(True), class_column(-1), class_column("cat")
    ('true', '-1', 'cat')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def wide_columns(classes: Sequence[Any], taken: Sequence[str]) -> list[str]:
    """The class columns of ``confusion_matrix_wide`` (:func:`class_column` of each of
    ``classes``, in their order), checked the same in every engine: none empty, none the
    name of a column in ``taken`` (``actual`` and the groups) or of another class, case
    ignored (DuckDB's and Spark's column names ignore it).

    Examples
    --------
    >>> wide_columns([False, True], ["actual"])
    ['false', 'true']
    >>> wide_columns(["A", "a"], ["actual"])
    Traceback (most recent call last):
    ...
    mlsql._errors.MlsqlError: confusion_matrix_wide names a column after each class, and the class 'a' cannot name one: it is the name of the class 'A' (case ignored). confusion_matrix gives the same counts one row per cell.
    """
    seen = {name.lower(): f"the column {name!r}" for name in taken}
    names = [class_column(c) for c in classes]
    for name in names:
        why = "it is empty" if not name else None
        if name.lower() in seen:
            why = f"it is the name of {seen[name.lower()]} (case ignored)"
        if why is not None:
            raise MlsqlError(WIDE_NAME_MESSAGE.format(name=name, why=why))
        seen[name.lower()] = f"the class {name!r}"
    return names


def curve_groups(
    func: str,
    columns: Collection[str],
    actual: str,
    score: str,
    by: str | Sequence[str] | None,
    sample_weight: str | None = None,
) -> list[str]:
    """The group column names of curve table ``func``: every named column (``sample_weight``
    too, if given) is one of ``columns`` (the frame's), and no group column has the name of an
    output column."""
    groups = P.check_by(by, func)
    weights = [] if sample_weight is None else [("sample_weight", sample_weight)]
    check_columns(
        func,
        columns,
        [("actual", actual), ("score", score), *weights, *(("by", b) for b in groups)],
    )
    for name in groups:
        if name.lower() in CV.output_columns(func):
            raise MlsqlError(by_output_message(func, name))
    return groups


def beta_and_zero_division(
    func: str, beta: float | None, zero_division: Any
) -> tuple[float, P.ZeroDivision]:
    """(beta, zero division) validated; no ``beta`` is 1."""
    zd = P.check_zero_division(zero_division, func)
    beta = P.check(P.TABLE_BETA, beta, func)
    return (1.0 if beta is None else beta), zd


def standalone(
    name: str,
    summary: str,
    report: Callable[..., Any],
    pick: Callable[[Any, list[str], str], Any],
    *,
    engine: Engine,
    module: str,
    annotation: str,
) -> Callable[..., Any]:
    """The public function of the ``name`` column of ``multilabel_report``: ``report(source,
    call)`` computes the report's table (the engine's, as :func:`table_function
    <mlsql._front.table_functions.table_function>` calls it) for a call named ``name``.

    ``pick(report_frame, groups, name)`` selects the group columns and the
    column; ``annotation`` is the type of ``source`` and of the result, as the
    engine's module spells it. Its docstring's example is
    :func:`mlsql._front.examples.standalone`, written by ``engine``, its output
    :data:`~mlsql.measures.label_based.STANDALONE_OUTPUTS`' value.
    """
    with_beta = "fbeta" in name

    def measure(
        source: Any,
        actual: str,
        predicted: str,
        *,
        labels: Sequence[Any] | None = None,
        zero_division: Any = 0,
        by: str | Sequence[str] | None = None,
        sample_weight: str | None = None,
        **beta: Any,
    ) -> Any:
        if set(beta) - ({"beta"} if with_beta else set()):
            raise TypeError(f"{name}() got unexpected keyword arguments {sorted(beta)}")
        # no beta (or None, as DuckDB's NULL) is 1, the rule of the report's beta
        given = (1.0 if beta.get("beta") is None else beta["beta"]) if with_beta else None
        arguments = {
            "actual": actual,
            "predicted": predicted,
            "labels": labels,
            "beta": given,
            "zero_division": zero_division,
            "by": by,
            "sample_weight": sample_weight,
        }
        out = report(source, table_call("multilabel_report", arguments, func=name))
        return pick(out, P.check_by(by, name), name)

    measure.__name__ = measure.__qualname__ = name
    measure.__module__ = module
    measure.__annotations__["source"] = measure.__annotations__["return"] = annotation
    statements = engine.frame_example(name, examples.standalone(with_beta))
    output = repr(float(LB.STANDALONE_OUTPUTS[name]))
    measure.__doc__ = standalone_docstring(
        engine, name, summary, with_beta, [*(f">>> {s}" for s in statements), output]
    )
    return measure


def standalones(
    report: Callable[..., Any],
    pick: Callable[[Any, list[str], str], Any],
    *,
    engine: Engine,
    module: str,
    annotation: str,
) -> dict[str, Callable[..., Any]]:
    """:func:`standalone` of every measure of :data:`~mlsql.measures.label_based.STANDALONE`."""
    return {
        name: standalone(
            name,
            summary,
            report,
            pick,
            engine=engine,
            module=module,
            annotation=annotation,
        )
        for name, summary in LB.STANDALONE.items()
    }
