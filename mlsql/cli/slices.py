"""What ``mlsql slices`` does: the measure on every slice of a file of predictions, worst first.

The rows are read and judged as ``mlsql eval`` and ``mlsql compare`` read
them (:mod:`mlsql.cli.sources`); the engine's own ``slices``
(:mod:`mlsql._slices`) computes every number. ``--fail-if-slice-below``
is a CI gate: the exit code is :data:`BELOW` when a slice's estimate is
below the value (above it for a measure that is better lower, as the
registry says).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsql._errors import MlsqlError
from mlsql.cli.errors import UserError

#: exit code when a slice is worse than --fail-if-slice-below
BELOW = 3
#: the table's short headers (JSON, CSV and Markdown keep the column names)
HEADERS = {
    "difference": "diff.",
    "diff_low": "diff. low",
    "diff_high": "diff. high",
    "p_value": "p",
    "p_adjusted": "adj. p",
    "significant": "sig.",
}
#: the table's width at least (its columns need it)
WIDTH = 110
#: the engines ``slices`` runs on
ENGINES = ("duckdb", "polars", "spark")


@dataclass(frozen=True)
class Request:
    """What ``mlsql slices`` was asked, apart from where the data is."""

    candidates: tuple[str, ...]
    measure: str = "micro_f1"
    depth: int = 1
    n_bins: int = 4
    min_rows: int = 30
    min_weight: float | None = None
    n_labels: int | None = None
    n_resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    adjust: str = "bh"
    top: int | None = None
    fail_if_slice_below: float | None = None


def candidate_names(given: Sequence[str], option: str = "--candidates") -> tuple[str, ...]:
    """``--candidates`` (or ``option``: ``mlsql eval --slices``) values, each possibly
    comma-separated, in order, once each.

    Examples
    --------
    >>> candidate_names(["lang,source", "lang"])
    ('lang', 'source')
    """
    names = [n.strip() for value in given for n in value.split(",")]
    if not names or any(not n for n in names):
        raise UserError(f"{option} must name columns, comma-separated; got {list(given)!r}")
    return tuple(dict.fromkeys(names))


def measure_entry(measure: str, n_labels: int | None) -> Any:
    """The API's measure argument: the name, or hamming_loss with its number of labels."""
    from mlsql.cli.compare import canonical

    if canonical(measure) != "hamming_loss":
        return measure
    if n_labels is None:
        raise UserError(
            f"{measure} divides by the number of labels: give it with --n-labels "
            "(the size of the label universe)"
        )
    return (measure, {"n_labels": n_labels})


def below(rows: Sequence[dict[str, Any]], measure: str, value: float) -> list[str]:
    """Why each slice fails ``--fail-if-slice-below value``: its estimate is worse than it.

    Worse is below for a measure that is better higher, above for a loss.

    Examples
    --------
    >>> rows = [{"slice": "lang = 'fr'", "estimate": 0.5, "low": 0.4, "high": 0.6}]
    >>> below(rows, "micro_f1", 0.7)
    ["slice lang = 'fr' has micro_f1 0.5 in [0.4, 0.6], below 0.7"]
    >>> below(rows, "zero_one_loss", 0.7)
    []
    """
    from mlsql._registry import REGISTRY, measures
    from mlsql.cli.compare import canonical

    measures()
    lower = REGISTRY[canonical(measure)].lower_is_better
    out = []
    for row in rows:
        estimate = row["estimate"]
        if estimate is None or not ((estimate > value) if lower else (estimate < value)):
            continue
        interval = "" if row["low"] is None else f" in [{row['low']:.4g}, {row['high']:.4g}]"
        side = "above" if lower else "below"
        out.append(f"slice {row['slice']} has {measure} {estimate:.4g}{interval}, {side} {value:g}")
    return out


def print_slices(
    console: Any, columns: list[str], rows: list[tuple[Any, ...]], digits: int
) -> None:
    """The slices as a rich table: slice text folds, numbers to ``digits`` places."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from mlsql.report.text import cell, key_cell

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), collapse_padding=True)
    for name in columns:
        right = name != "slice"
        table.add_column(
            cell(HEADERS.get(name, name)), justify="right" if right else "left", overflow="fold"
        )
    for row in rows:
        table.add_row(
            *(
                key_cell(v)
                if c == "slice"
                else cell("yes" if v else "", digits)
                if c == "significant"
                else cell(v, digits)
                for c, v in zip(columns, row, strict=True)
            )
        )
    wide = Console(
        file=console.file,
        width=max(console.width, WIDTH),
        color_system=console.color_system,  # type: ignore[arg-type]
        highlight=False,
    )
    wide.print(table)


def run_slices(
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
    sample_weight: str | None = None,
    single_label: bool = False,
    spark_master: str | None = None,
) -> int:
    """Read ``path``, find the slices on ``engine``, write the table; the exit code (0 or
    :data:`BELOW`)."""
    import mlsql
    from mlsql._sqlexpr import quote_ident
    from mlsql.cli import interrupt
    from mlsql.cli.output import refuse_source
    from mlsql.cli.progress import progress
    from mlsql.cli.run import _on_engine, _write
    from mlsql.cli.sources import (
        ACTUAL,
        PREDICTED,
        PREPARED,
        open_source,
        prepare,
        refuse_no_rows,
        resolve,
        warn_unknown_rows,
    )
    from mlsql.report import tabular

    if engine not in ENGINES:
        raise UserError(
            f"--engine {engine}: slices runs on {' and '.join(ENGINES)} in this release"
        )
    measure = measure_entry(request.measure, request.n_labels)
    con = mlsql.connect()
    try:
        with progress(
            con,
            f"mlsql: finding the weakest slices of {path} on {engine}",
            engine=engine,
            enabled=show_progress,
        ):
            interrupt.on_cancel(con.interrupt)
            source = resolve(path)
            refuse_source(output, source)
            opened = open_source(con, source)
            prepared = prepare(
                con,
                opened,
                actual,
                predicted,
                by=request.candidates,
                sep=sep,
                sample_weight=sample_weight,
                single_label=single_label,
            )
            prepared, (unknown, total) = _on_engine(con, prepared, engine, spark_master)
            refuse_no_rows(prepared, total)
            warn_unknown_rows(prepared, unknown, total)
            args = (ACTUAL, PREDICTED, list(request.candidates), measure)
            kwargs: dict[str, Any] = {
                "depth": request.depth,
                "n_bins": request.n_bins,
                "min_rows": request.min_rows,
                "min_weight": request.min_weight,
                "sample_weight": sample_weight,
                "n_resamples": request.n_resamples,
                "confidence": request.confidence,
                "seed": request.seed,
                "adjust": request.adjust,
            }
            try:
                # single-label data: the prepared lists hold one label each; the measures
                # take the label itself (as mlsql.report.engines does for compare)
                if engine == "duckdb":
                    query = f"SELECT * FROM {PREPARED}"
                    if prepared.single_label:
                        a, p = quote_ident(ACTUAL), quote_ident(PREDICTED)
                        query = f"SELECT * REPLACE ({a}[1] AS {a}, {p}[1] AS {p}) FROM {PREPARED}"
                    result = mlsql.slices(con.sql(query), *args, con=con, **kwargs)
                    columns, table = result.columns, result.fetchall()
                elif engine == "polars":
                    import polars as pl

                    import mlsql.polars as mp

                    frame = prepared.frame
                    if prepared.single_label:
                        frame = frame.with_columns(
                            pl.col(ACTUAL).list.first(), pl.col(PREDICTED).list.first()
                        )
                    out = mp.slices(frame, *args, **kwargs)
                    columns, table = out.columns, out.rows()
                else:  # Spark: the driver collects the slices' statistic tuples only
                    from pyspark.sql import functions as F

                    import mlsql.spark as ms

                    sframe = prepared.frame
                    if prepared.single_label:
                        sframe = sframe.withColumns(
                            {ACTUAL: F.col(ACTUAL)[0], PREDICTED: F.col(PREDICTED)[0]}
                        )
                    weakest = ms.slices(sframe, *args, **kwargs)
                    columns, table = weakest.columns, [tuple(r) for r in weakest.collect()]
            except MlsqlError as exc:
                raise UserError(str(exc)) from None
        interrupt.engines_done()
    finally:
        con.close()
    rows = [dict(zip(columns, r, strict=True)) for r in table]
    shown = table[: request.top] if request.top else table
    if format_ == "table":
        _write(output, None, lambda c: print_slices(c, columns, shown, digits))
    else:
        _write(output, tabular.render(format_, columns, shown))
    if request.fail_if_slice_below is None:
        return 0
    found = below(rows, request.measure, request.fail_if_slice_below)
    for line in found:
        sys.stderr.write(f"mlsql: {line}\n")
    return BELOW if found else 0
