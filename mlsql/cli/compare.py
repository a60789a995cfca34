"""What ``mlsql compare`` does: a paired comparison of models with a baseline, on any engine.

The rows are read and judged as ``mlsql eval`` reads them (:mod:`mlsql.cli.sources`);
the engine's own ``compare`` (:mod:`mlsql._resample`) computes every number.
``--fail-if-worse`` reads which direction is better from the registry
(:attr:`mlsql._registry.Measure.lower_is_better`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mlsql._errors import MlsqlError
from mlsql.cli.errors import UserError

#: exit code when a candidate is significantly worse than the baseline (--fail-if-worse)
WORSE = 3
#: measures compared when --measures is not given
DEFAULT_LIST_MEASURES = ("micro_f1", "samples_f1", "subset_accuracy")
DEFAULT_SINGLE_MEASURES = ("accuracy", "balanced_accuracy_score", "matthews_corrcoef")
#: the result columns shown, after the --by columns
COLUMNS = (
    "model",
    "measure",
    "baseline_estimate",
    "estimate",
    "difference",
    "low",
    "high",
    "p_value",
    "mcnemar_p_value",
)

#: the table's width at least (its columns need it)
WIDTH = 100
#: the table's short headers (JSON, CSV and Markdown keep the column names)
HEADERS = {
    "baseline_estimate": "baseline",
    "difference": "diff.",
    "p_value": "p",
    "mcnemar_p_value": "McNemar p",
}


@dataclass(frozen=True)
class Request:
    """What ``mlsql compare`` was asked, apart from where the data is."""

    model: str
    id: str
    baseline: str
    measures: tuple[str, ...] = ()
    by: tuple[str, ...] = ()
    n_labels: int | None = None
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    drop_unpaired: bool = False
    test: str = "bootstrap"
    fail_if_worse: str | None = None


def measure_names(given: Sequence[str]) -> tuple[str, ...]:
    """``--measures`` values, each possibly comma-separated, in order, once each.

    Examples
    --------
    >>> measure_names(["micro_f1,subset_accuracy", "micro_f1"])
    ('micro_f1', 'subset_accuracy')
    """
    names = [n.strip() for value in given for n in value.split(",")]
    if any(not n for n in names):
        raise UserError(f"--measures must name measures, comma-separated; got {list(given)!r}")
    return tuple(dict.fromkeys(names))


def canonical(name: str) -> str:
    """The registry's name of ``name`` (an alias gives its measure); unknown names stay."""
    from mlsql._registry import REGISTRY, measures

    measures()
    for m in REGISTRY.values():
        if name == m.name or name in m.aliases:
            return m.name
    return name


def _entries(names: Sequence[str], n_labels: int | None) -> list[Any]:
    """The API's measures argument: names, hamming_loss with its number of labels."""
    out: list[Any] = []
    for name in names:
        if canonical(name) != "hamming_loss":
            out.append(name)
        elif n_labels is None:
            raise UserError(
                f"{name} divides by the number of labels: give it with --n-labels "
                "(the size of the label universe)"
            )
        else:
            out.append((name, {"n_labels": n_labels}))
    return out


def check_measures(entries: Sequence[Any], option: str = "--measures") -> None:
    """Check measures before any data is read; a misspelt name gets the closest ones.

    The names and parameters are judged as the engines judge them
    (:func:`mlsql._resample.measures.resolve`); a name that is no measure at
    all is answered with the resamplable names :func:`difflib.get_close_matches`
    finds, rather than the list of every one. ``option`` is how the message
    names where the names came from.

    Raises
    ------
    UserError
        A name is misspelt and close to a measure ``compare`` resamples.
    MlsqlError
        A measure cannot be resampled, or the measures mix kinds of input.
    """
    import difflib

    from mlsql._registry import REGISTRY, measures
    from mlsql._resample.measures import resolve

    try:
        resolve(entries, "compare")
        return
    except MlsqlError as exc:
        error = exc
    measures()
    known = {n for m in REGISTRY.values() for n in (m.name, *m.aliases)}
    for entry in entries:
        name = entry if isinstance(entry, str) else entry[0]
        if name in known:
            continue
        close = difflib.get_close_matches(name, sorted(filter(_resamplable, known)), n=3)
        if close:
            options = ", ".join(repr(c) for c in close[:-1])
            options = f"{options} or {close[-1]!r}" if options else repr(close[-1])
            raise UserError(f"{option} {name!r}: no such measure; did you mean {options}?")
    raise error


def _resamplable(name: str) -> bool:
    """Whether ``compare`` resamples the measure ``name`` (one that needs parameters too)."""
    from mlsql._resample.measures import resolve

    try:
        resolve([name], "compare")
    except MlsqlError as exc:
        return not str(exc).startswith("compare cannot resample")
    return True


def _baseline(opened: Any, model: str, baseline: str) -> Any:
    """``--baseline`` as a value of the model column (an integer for an integer column)."""
    from mlsql.cli.sources import INTEGER_TYPES

    if str(opened.type_of(model)).lower() not in INTEGER_TYPES:
        return baseline
    try:
        return int(baseline)
    except ValueError:
        raise UserError(
            f"--baseline {baseline!r}: the model column {model!r} holds integers, "
            "so the baseline must be one"
        ) from None


def worse(
    rows: list[dict[str, Any]], measure: str, baseline: Any, label: str | None = None
) -> list[str]:
    """Why each candidate is significantly worse than ``baseline`` on ``measure`` (if it is).

    Worse: the interval of the difference (model - baseline) lies entirely
    below 0 for a measure that is better higher, entirely above 0 for one that
    is better lower (losses and errors, as the registry says). ``label`` is how
    the rows name the measure (``hamming_loss(n_labels=4)``), default ``measure``.

    Examples
    --------
    >>> rows = [{"model": "B", "measure": "micro_f1", "difference": -0.2, "low": -0.3,
    ...          "high": -0.1}]
    >>> worse(rows, "micro_f1", "A")
    ["model 'B' is worse than the baseline 'A' on micro_f1: difference -0.2 in [-0.3, -0.1]"]
    >>> worse(rows, "hamming_loss", "A")
    []
    """
    from mlsql._registry import REGISTRY, measures

    measures()
    lower = REGISTRY[canonical(measure)].lower_is_better
    out = []
    for row in rows:
        if row["measure"] != (label or measure) or row["low"] is None or row["high"] is None:
            continue
        if (row["low"] > 0) if lower else (row["high"] < 0):
            group = "".join(f", {k} = {row[k]!r}" for k in row if k not in COLUMNS)
            out.append(
                f"model {row['model']!r} is worse than the baseline {baseline!r} on {label or measure}"
                f"{group}: difference {row['difference']:.4g} in "
                f"[{row['low']:.4g}, {row['high']:.4g}]"
            )
    return out


def print_comparison(
    console: Any, columns: list[str], rows: list[tuple[Any, ...]], digits: int
) -> None:
    """The comparison as a rich table: long names fold, numbers to ``digits`` places."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from mlsql.report.text import cell, key_cell

    shown = [
        i
        for i, c in enumerate(columns)
        if c != "mcnemar_p_value" or any(r[i] is not None for r in rows)
    ]
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), collapse_padding=True)
    for i in shown:
        name = columns[i]
        header = HEADERS.get(name, name) if name in COLUMNS else name
        right = name in COLUMNS[2:]
        width = None
        if name == "measure":  # measure names fold only when very long
            width = min(18, max([7, *(len(str(r[i])) for r in rows)]))
        table.add_column(
            cell(header), justify="right" if right else "left", overflow="fold", min_width=width
        )
    keys = {i for i in shown if columns[i] not in COLUMNS or columns[i] == "model"}
    for row in rows:
        table.add_row(*(key_cell(row[i]) if i in keys else cell(row[i], digits) for i in shown))
    # every column at any terminal width (a narrow one wraps lines, but drops no column)
    wide = Console(
        file=console.file,
        width=max(console.width, WIDTH),
        color_system=console.color_system,  # type: ignore[arg-type]
        highlight=False,
    )
    wide.print(table)


def _null_model_repeats(con: Any, request: Request) -> str:
    """Why ids repeat, when the rows of a NULL model repeat them (else nothing to add).

    Rows whose model is NULL are one model, NULL; when they hold several
    runs, their ids repeat and ``compare`` says only how many rows do.
    """
    from mlsql._sqlexpr import quote_ident
    from mlsql.cli.sources import RAW

    key = ", ".join(quote_ident(c) for c in (*request.by, request.id))
    [(rows, repeated)] = con.execute(
        f"SELECT count(*), count(*) - count(DISTINCT ({key})) FROM {RAW} "
        f"WHERE {quote_ident(request.model)} IS NULL"
    ).fetchall()
    if not repeated:
        return ""
    return (
        f" {rows} rows have a NULL model {request.model!r}: they count as one model, NULL, "
        f"and repeat {repeated} of its {request.id!r} values; give them their model or leave "
        "them out."
    )


def run_compare(
    *,
    path: str,
    actual: str,
    predicted: str,
    request: Request,
    sep: str | None,
    engine: str,
    format_: str,
    output: Path | None,
    digits: int,
    show_progress: bool,
    spark_master: str | None = None,
    single_label: bool = False,
) -> int:
    """Read ``path``, compare on ``engine``, write the table; the exit code (0 or :data:`WORSE`)."""
    import mlsql
    from mlsql.cli import interrupt
    from mlsql.cli.evaluate import _frame
    from mlsql.cli.output import refuse_source
    from mlsql.cli.progress import progress
    from mlsql.cli.run import _on_engine, _write
    from mlsql.cli.sources import (
        ACTUAL,
        PREDICTED,
        _need_column,
        open_source,
        prepare,
        refuse_no_rows,
        resolve,
        warn_unknown_rows,
    )
    from mlsql.report import tabular

    names = request.measures
    fail_on = request.fail_if_worse
    if fail_on is not None and fail_on not in names and names:
        names = (*names, fail_on)
    # judged before the data is read: each option's names, then all of them together
    if request.measures:
        check_measures(_entries(request.measures, request.n_labels))
    if fail_on is not None:
        check_measures(_entries((fail_on,), request.n_labels), "--fail-if-worse")
    if names:
        check_measures(_entries(names, request.n_labels))
    con = mlsql.connect()
    try:
        with progress(
            con,
            f"mlsql: comparing models in {path} on {engine}",
            engine=engine,
            enabled=show_progress,
        ):
            interrupt.on_cancel(con.interrupt)
            source = resolve(path)
            refuse_source(output, source)
            opened = open_source(con, source)
            for option, column in (("--model", request.model), ("--id", request.id)):
                _need_column(opened, column, option)
                if column in (actual, predicted, *request.by):
                    raise UserError(f"{option} {column!r} is a label or --by column")
            if request.model == request.id:
                raise UserError("--model and --id must be two different columns")
            prepared = prepare(
                con,
                opened,
                actual,
                predicted,
                by=(*request.by, request.model, request.id),
                sep=sep,
                single_label=single_label,
            )
            if not names and prepared.numbers and fail_on is not None:
                names = (fail_on,)
            if not names and prepared.numbers:
                raise UserError(
                    f"--actual {actual!r} and --predicted {predicted!r} hold numbers: name the "
                    "measures with --measures (regression: mse, mae, r2...; a 0/1 label and a "
                    "score: logloss, auc, brier_score_loss...)"
                )
            if not names:
                names = DEFAULT_SINGLE_MEASURES if prepared.single_label else DEFAULT_LIST_MEASURES
                if fail_on is not None and fail_on not in names:
                    names = (*names, fail_on)
            measures = _entries(names, request.n_labels)
            baseline = _baseline(opened, request.model, request.baseline)
            prepared, (unknown, total) = _on_engine(con, prepared, engine, spark_master)
            prepared = replace(prepared, by=request.by)
            refuse_no_rows(prepared, total)
            warn_unknown_rows(prepared, unknown, total)
            frames, frame = _frame(con, engine, prepared)
            try:
                rows = frames.resample(
                    "compare",
                    frame,
                    ACTUAL,
                    PREDICTED,
                    single=prepared.single_label,
                    measures=measures,
                    model=request.model,
                    id=request.id,
                    baseline=baseline,
                    by=list(request.by) or None,
                    n_resamples=request.n_resamples,
                    confidence=request.confidence,
                    seed=request.seed,
                    drop_unpaired=request.drop_unpaired,
                    test=request.test,
                )
            except MlsqlError as exc:  # the API names its argument, the command its option
                message = str(exc).replace("drop_unpaired=True", "--drop-unpaired")
                message = message.replace("The 'test' parameter of compare", "--test")
                message = message.replace("model None", "model NULL")  # as the table spells it
                raise UserError(message + _null_model_repeats(con, request)) from None
        interrupt.engines_done()
    finally:
        con.close()
    columns = [*request.by, *COLUMNS]
    table = [tuple(r[c] for c in columns) for r in rows]
    if format_ == "table":
        _write(output, None, lambda c: print_comparison(c, columns, table, digits))
    else:
        _write(output, tabular.render(format_, columns, table))
    if fail_on is None:
        return 0
    from mlsql._resample.measures import resolve as resolve_measures

    entry = measures[list(names).index(fail_on)]
    found = worse(rows, fail_on, baseline, resolve_measures([entry], "compare")[0].label)
    for line in found:
        sys.stderr.write(f"mlsql: {line}\n")
    return WORSE if found else 0
