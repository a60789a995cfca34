"""What a report asks of an ibis table, answered in the table's own database.

The questions are :mod:`mlsql.report.engines`' (rows read and skipped, the two label
tables, the single-label measures and the non-zero confusion cells). The tables are
:mod:`mlsql._ibis.tables`' queries, the single-label measures one ``evaluate`` query, and
the counts plain ``GROUP BY`` queries; ibis compiles each to the backend's SQL and only
the results come back (a row per group, per label or per non-zero cell). ibis is imported
only when a report reads an ibis table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlsql import _label_types as LT
from mlsql._errors import MlsqlError
from mlsql.report.engines import SINGLE_MEASURES, TABLES

#: what a report over an ibis table does not do yet, and where it runs instead
NOT_HERE = (
    "report: {what} of an ibis table are not computed in its database in this release; "
    "they are on duckdb, polars and spark (read the table into one of them)"
)


def _rows(table: Any) -> list[dict[str, Any]]:
    """An Arrow table's rows as dicts."""
    return table.to_pylist()  # type: ignore[no-any-return]


def _rust_regex(text: str) -> str:
    """``text`` as a Rust regular expression (DataFusion's) matching it literally: each
    character as its hexadecimal escape.

    Examples
    --------
    >>> print(_rust_regex("|$"))
    \\x{7C}\\x{24}
    """
    return "".join(f"\\x{{{ord(ch):X}}}" for ch in text)


def _split(value: Any, sep: str, backend: str) -> Any:
    """Text split on ``sep``, each part stripped of ``LT.SPLIT_STRIPPED`` and empty parts
    dropped, as every engine splits it.

    ibis' ``strip`` removes Python's ``string.whitespace``, which is ``LT.SPLIT_STRIPPED``.
    Where ibis maps and filters no list (DataFusion) the text is made clean first: the
    whitespace around each separator removed by a regular expression, then the ends
    stripped; then split, and the empty parts removed. That is the same split where ``sep``
    neither begins nor ends with whitespace (whitespace next to a separator is then part of
    a label's end); another ``sep`` is refused there."""
    from mlsql._ibis import stats

    if backend not in stats.WITHOUT_ARRAY_FILTER:
        return value.split(sep).map(lambda x: x.strip()).filter(lambda x: x != "")
    if sep != sep.strip(LT.SPLIT_STRIPPED):  # the ends' strip would eat into a separator
        raise MlsqlError(
            f"report: on an ibis table of {backend} sep must not begin or end with whitespace "
            f"(ibis maps no list there, so the labels are stripped before the split). Got "
            f"{sep!r}: pass {sep.strip(LT.SPLIT_STRIPPED)!r}, or store the labels as lists"
        )
    space = "[" + _rust_regex(LT.SPLIT_STRIPPED) + "]*"
    joined = value.re_replace(space + _rust_regex(sep) + space, sep.replace("$", "$$"))
    return joined.strip().split(sep).remove("")


class IbisFrames:
    """An ibis table (DuckDB, DataFusion, PostgreSQL, ... through ibis): a frame is a table
    expression of the group columns and the two label lists."""

    def __init__(self, data: Any) -> None:
        from mlsql._ibis import backend_name

        self.backend = backend_name(data)
        self.name = f"ibis/{self.backend}"

    def from_source(
        self, data: Any, actual: str, predicted: str, by: Sequence[str], sep: str | None
    ) -> tuple[Any, bool]:
        """The table as one of label lists, and whether labels are one per row."""
        from mlsql._ibis.ops import where

        columns = list(data.columns)
        for column in (actual, predicted, *by):
            if column not in columns:
                raise MlsqlError(
                    f"report: no column {column!r}; the table has {', '.join(map(repr, columns))}"
                )
        types = {c: data[c].type() for c in (actual, predicted)}
        is_list = {c: t.is_array() for c, t in types.items()}
        lists = {}
        for c, dtype in types.items():
            if is_list[c]:
                continue
            value = data[c]
            if sep is not None and dtype.is_string():
                lists[c] = where(value.notnull(), _split(value, sep, self.backend))
            else:
                import ibis

                lists[c] = where(value.notnull(), ibis.array([value]))
        frame = data.select(*by, actual, predicted)
        if lists:
            frame = frame.mutate(**lists)
        return frame, not any(is_list.values()) and sep is None

    def row_counts(self, frame: Any, actual: str, predicted: str) -> tuple[int, int]:
        """(rows with a NULL side, all rows)."""
        unknown = frame[actual].isnull() | frame[predicted].isnull()
        counted = frame.aggregate(
            skipped=unknown.ifelse(1, 0).sum(), total=frame.count()
        ).to_pyarrow()
        [row] = counted.to_pylist()
        return int(row["skipped"] or 0), int(row["total"])

    def known_rows(
        self, frame: Any, known: Sequence[str], by: Sequence[str]
    ) -> list[dict[str, Any]]:
        """Per group (``by``), ``n``: the number of rows with no NULL among ``known``."""
        kept = frame
        for column in known:
            kept = kept.filter(kept[column].notnull())
        grouped = kept.group_by(list(by)) if by else kept
        return [
            {**r, "n": int(r["n"])} for r in _rows(grouped.aggregate(n=kept.count()).to_pyarrow())
        ]

    def tables(
        self, frame: Any, actual: str, predicted: str, kwargs: dict[str, Any], wanted: Sequence[str]
    ) -> list[list[dict[str, Any]] | None]:
        """The rows of ``multilabel_report`` and ``label_metrics`` (those ``wanted``)."""
        from mlsql._ibis import tables

        return [
            _rows(getattr(tables, name)(frame, actual, predicted, **kwargs))
            if name in wanted
            else None
            for name in TABLES
        ]

    @staticmethod
    def _first_labels(frame: Any, actual: str, predicted: str) -> Any:
        """``frame`` with each label list replaced by its label (single-label data)."""
        return frame.mutate(**{c: frame[c][0] for c in (actual, predicted)})

    def single(
        self,
        frame: Any,
        actual: str,
        predicted: str,
        by: Sequence[str],
        sample_weight: str | None = None,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Per group the single-label measures; the non-zero (actual, predicted) counts
        (with ``sample_weight``: the weighted measures, and the cells' total weights)."""
        from mlsql._evaluate import front as EV
        from mlsql._ibis.evaluate import planned, run

        values = self._first_labels(frame, actual, predicted)
        req = EV.request(
            values.columns, actual, predicted, list(SINGLE_MEASURES), list(by), sample_weight
        )
        wide = run(planned(values, actual, predicted, req), self.backend)
        measures = [
            {
                **{b: row[EV.group_column(k)] for k, b in enumerate(by)},
                **{m: row[f"__mlsql_v{i}"] for i, m in enumerate(SINGLE_MEASURES)},
            }
            for row in _rows(wide)
        ]
        known = [actual, predicted, *([sample_weight] if sample_weight else [])]
        kept = values
        for column in known:
            kept = kept.filter(kept[column].notnull())
        keys = {EV.group_column(k): kept[b] for k, b in enumerate(by)}
        cells = kept.group_by(
            [
                *(kept[b].name(g) for g, b in zip(keys, by, strict=True)),
                kept[actual].name("__mlsql_a"),
                kept[predicted].name("__mlsql_p"),
            ]
        ).aggregate(__mlsql_n=kept.count() if sample_weight is None else kept[sample_weight].sum())
        found = [
            {
                **{b: row[g] for g, b in zip(keys, by, strict=True)},
                "actual": row["__mlsql_a"],
                "predicted": row["__mlsql_p"],
                "count": row["__mlsql_n"],
            }
            for row in _rows(cells.to_pyarrow())
        ]
        return measures, found

    def resample(
        self,
        func: str,
        frame: Any,
        actual: str,
        predicted: str,
        *,
        single: bool,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """Rows of ``mlsql.bootstrap`` on the frame (``func``; compare and slices are
        refused with the reason). ``single``: the measures get each list's label."""
        if func != "bootstrap":
            raise MlsqlError(NOT_HERE.format(what=func))
        from mlsql._ibis.resample import bootstrap

        if single:
            frame = self._first_labels(frame, actual, predicted)
        kwargs.setdefault("by", None)
        kwargs.setdefault("sample_weight", None)
        return _rows(bootstrap(frame, actual, predicted, **kwargs).to_pyarrow())
