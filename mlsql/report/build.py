"""Build a :class:`~mlsql.report.model.Report` from an engine's frame: one code path for all.

:func:`build` asks the engine (:mod:`mlsql.report.engines`) for its tables
and puts the rows in a fixed order; the Python API (:func:`mlsql.report`)
and ``mlsql eval`` both end here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypeVar

from mlsql.report.engines import SINGLE_MEASURES, TABLES
from mlsql.report.model import MIN_SUPPORT, Confusion, Report

T = TypeVar("T")

#: a single-label report warns when there are at least this share of classes per row
CLASSES_PER_ROW = 0.5
#: ... and at least this many rows (tiny examples have as many classes as rows)
CLASSES_WARN_ROWS = 50


@dataclass(frozen=True)
class Settings:
    """The parameters of a report, validated by the engine functions that use them."""

    by: tuple[str, ...] = ()
    labels: tuple[Any, ...] | None = None
    beta: float = 1.0
    zero_division: Any = 0
    sep: str | None = None
    min_support: int = MIN_SUPPORT
    #: which of TABLES to compute (CSV needs only one of them)
    tables: tuple[str, ...] = TABLES
    #: the column of row weights (each row counts as its weight), if any
    sample_weight: str | None = None

    def kwargs(self) -> dict[str, Any]:
        """Keyword arguments of the engines' table functions."""
        weight = {} if self.sample_weight is None else {"sample_weight": self.sample_weight}
        return {
            "labels": list(self.labels) if self.labels is not None else None,
            # beta=None keeps the F columns F1 (named *_f1); any other beta names them *_fbeta
            "beta": None if self.beta == 1 else self.beta,
            "zero_division": self.zero_division,
            "by": list(self.by) or None,
            **weight,
        }

    def params(self, actual: str, predicted: str) -> dict[str, Any]:
        """The parameters as a report shows them."""
        zd = self.zero_division
        return {
            "actual": actual,
            "predicted": predicted,
            "by": list(self.by),
            "beta": self.beta,
            "zero_division": "nan" if isinstance(zd, float) and math.isnan(zd) else zd,
            "labels": list(self.labels) if self.labels is not None else None,
            "sep": self.sep,
        }


def integral(label: Any) -> Any:
    """``label``, an integral :class:`~decimal.Decimal` as an int.

    DuckDB and Spark hold 128-bit integer labels as DECIMAL(38,0), Polars as integers:
    every engine's report shows the same labels.

    Examples
    --------
    >>> integral(Decimal("18446744073709551615")), integral(Decimal("0.5")), integral("a")
    (18446744073709551615, Decimal('0.5'), 'a')
    """
    if isinstance(label, Decimal) and label.is_finite() and label == label.to_integral_value():
        return int(label)
    return label


def sorted_rows(rows: list[dict[str, Any]], keys: Sequence[str]) -> list[dict[str, Any]]:
    """Rows ordered by ``keys`` (NULL last; mixed types by their text)."""
    return _sorted(rows, lambda row: tuple(row[k] for k in keys))


def _sorted(items: Iterable[T], values: Callable[[T], tuple]) -> list[T]:
    """``items`` ordered by their ``values`` (NULL last; mixed types by their text).

    Engines return rows and groups in any order; this one order makes reports equal.
    """
    items = list(items)
    try:
        return sorted(items, key=lambda i: tuple((v is None, str(type(v)), v) for v in values(i)))
    except TypeError:
        return sorted(items, key=lambda i: tuple(str(v) for v in values(i)))


def with_total_weight(
    summary: list[dict[str, Any]], known: list[dict[str, Any]], by: Sequence[str]
) -> list[dict[str, Any]]:
    """Weighted summary rows: their ``n_rows`` (the weights' total) becomes ``total_weight``,
    beside ``n_rows``, the number of known rows of the group (``known``: per group, ``n``).

    Examples
    --------
    >>> with_total_weight([{"n_rows": 7.5, "micro_f1": 0.5}], [{"n": 5}], [])
    [{'n_rows': 5, 'total_weight': 7.5, 'micro_f1': 0.5}]
    """
    counts = {tuple(r[c] for c in by): int(r["n"]) for r in known}
    out = []
    for row in summary:
        new: dict[str, Any] = {}
        for key, value in row.items():
            if key == "n_rows":
                new["n_rows"] = counts.get(tuple(row[c] for c in by), 0)
                new["total_weight"] = value
            else:
                new[key] = value
        out.append(new)
    return out


def build(
    engine: Any,
    frame: Any,
    actual: str,
    predicted: str,
    settings: Settings,
    *,
    single_label: bool,
    source: str,
    params: dict[str, Any] | None = None,
) -> Report:
    """The report of ``frame`` (group columns and two label-list columns) on ``engine``.

    ``single_label`` says each list holds at most one label (values, not sets):
    the report then adds accuracy, kappa, MCC and the confusion cells.
    """
    by = settings.by
    skipped, total = engine.row_counts(frame, actual, predicted)
    summary, labels = engine.tables(frame, actual, predicted, settings.kwargs(), settings.tables)
    summary = sorted_rows(summary or [], by)
    if settings.sample_weight is not None:
        known = [actual, predicted, settings.sample_weight]
        summary = with_total_weight(summary, engine.known_rows(frame, known, by), by)
    if labels is not None:
        labels = sorted_rows([{**r, "label": integral(r["label"])} for r in labels], (*by, "label"))
    confusion: dict[tuple[Any, ...], Confusion] = {}
    notes: list[str] = []
    if single_label:
        measures, cells = engine.single(frame, actual, predicted, by, settings.sample_weight)
        found = {tuple(r[c] for c in by): {m: r[m] for m in SINGLE_MEASURES} for r in measures}
        for row in summary:
            row.update(found.get(tuple(row[c] for c in by), {}))
        confusion = confusions(cells, by, settings.labels)
        notes += _single_label_notes(summary, labels or [], settings.sep)
    if skipped:
        notes.append(
            f"{skipped} of {total} rows have a NULL {actual!r} or {predicted!r} and are left out "
            "as unknown (an empty list [] counts as predicting nothing)"
        )
    return Report(
        source=source,
        engine=engine.name,
        params=params if params is not None else settings.params(actual, predicted),
        group_columns=by,
        summary=summary,
        labels=labels,
        confusion=confusion,
        single_label=single_label,
        notes=notes,
        skipped_rows=skipped,
        total_rows=total,
        min_support=settings.min_support,
    )


#: separators a forgotten ``sep`` leaves inside one-label-per-row values
COMMON_SEPARATORS = ("|", ",", ";")


def _single_label_notes(
    summary: list[dict[str, Any]], labels: list[dict[str, Any]], sep: str | None
) -> list[str]:
    """Warnings that one-label-per-row data may be label lists read whole (a forgotten ``sep``)."""
    notes = []
    hint = "; if the values are delimited label lists, pass a separator (sep, --sep)"
    for row in summary:
        n_rows, n_labels = row.get("n_rows") or 0, row.get("n_labels") or 0
        if n_rows >= CLASSES_WARN_ROWS and n_labels >= CLASSES_PER_ROW * n_rows:
            notes.append(f"{n_labels} classes for {n_rows} rows: nearly one class per row{hint}")
            break
    if sep is None:
        for r in labels:
            value = r["label"]
            found = [c for c in COMMON_SEPARATORS if isinstance(value, str) and c in value]
            if found:
                notes.append(
                    f"the class {value!r} holds {found[0]!r}: is it a list of labels? "
                    f"pass sep={found[0]!r} (--sep {found[0]!r}) to split it"
                )
                break
    return notes


def confusions(
    cells: list[dict[str, Any]], by: Sequence[str], labels: Sequence[Any] | None
) -> dict[tuple, Confusion]:
    """Non-zero confusion cells (group, actual, predicted, count), one Confusion per group.

    Classes: the ``labels`` given first, in their order, then the others seen, sorted.
    """
    grouped: dict[tuple, list[tuple[Any, Any, float]]] = {}
    for r in cells:
        key = tuple(r[c] for c in by)
        # a count of rows, or with sample weights a total weight (kept whole where it is)
        n = float(r["count"])
        cell = (integral(r["actual"]), integral(r["predicted"]), int(n) if n.is_integer() else n)
        grouped.setdefault(key, []).append(cell)
    order = lambda c: (str(type(c)), c)  # noqa: E731
    out = {}
    for key in _sorted(grouped, lambda k: k):
        found = grouped[key]
        seen = sorted({c for a, p, _ in found for c in (a, p)}, key=order)
        given = list(labels or ())
        known = set(given)
        classes = given + [c for c in seen if c not in known]
        position = {c: i for i, c in enumerate(classes)}
        found.sort(key=lambda t: (position[t[0]], position[t[1]]))
        out[key] = Confusion(tuple(classes), tuple(found))
    return out
