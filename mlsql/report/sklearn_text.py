"""The report as scikit-learn's ``classification_report`` text (same layout, same rounding)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mlsql.report.model import Group, Report


HEADERS = ("precision", "recall", "{f}-score", "support")
LONGEST_AVERAGE = "weighted avg"


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)


def _block(report: Report, group: Group, digits: int) -> str:
    """One group's table, laid out as scikit-learn lays it out."""
    f_key = report.f_key
    f_name = "f1" if f_key == "f1" else f"f{report.params.get('beta', 1.0):g}"
    rows = sorted(group.labels or [], key=lambda r: (str(type(r["label"])), r["label"]))
    names = [str(r["label"]) for r in rows]
    width = max([len(n) for n in names] + [len(LONGEST_AVERAGE), digits])
    headers = [h.format(f=f_name) for h in HEADERS]
    head_fmt = "{:>{width}s} " + " {:>9}" * len(headers)
    out = head_fmt.format("", *headers, width=width) + "\n\n"
    row_fmt = "{:>{width}s} " + " {:>9.{digits}f}" * 3 + " {:>9}\n"
    for name, r in zip(names, rows, strict=True):
        values = [_number(r.get(k)) for k in ("precision", "recall", f_key)]
        out += row_fmt.format(name, *values, int(r.get("support") or 0), width=width, digits=digits)
    out += "\n"
    support = sum(int(r.get("support") or 0) for r in rows)
    s = group.summary
    micro_is_accuracy = report.single_label and report.params.get("labels") is None
    for average in ("micro", "macro", "weighted", "samples"):
        columns = [report.column(average, m) for m in ("precision", "recall", "f")]
        if not any(c in s for c in columns):
            continue
        values = [_number(s.get(c)) for c in columns]
        if average == "micro" and micro_is_accuracy:
            accuracy_fmt = "{:>{width}s} " + " {:>9.{digits}}" * 2 + " {:>9.{digits}f} {:>9}\n"
            out += accuracy_fmt.format(
                "accuracy", "", "", values[2], support, width=width, digits=digits
            )
        else:
            out += row_fmt.format(f"{average} avg", *values, support, width=width, digits=digits)
    return out


def classification_report(report: Report, *, digits: int = 2) -> str:
    """Per group (titled when grouped), scikit-learn's ``classification_report`` text.

    Examples
    --------
    >>> from mlsql.report.model import Report
    >>> labels = [{"label": "cat", "precision": 1.0, "recall": 0.5, "f1": 2 / 3, "support": 2}]
    >>> summary = [{"micro_precision": 1.0, "micro_recall": 0.5, "micro_f1": 2 / 3}]
    >>> print(classification_report(Report("x", "duckdb", {}, (), summary, labels)))
                  precision    recall  f1-score   support
    <BLANKLINE>
             cat       1.00      0.50      0.67         2
    <BLANKLINE>
       micro avg       1.00      0.50      0.67         2
    <BLANKLINE>
    """
    blocks = []
    for group in report.groups():
        title = f"{group.title}\n\n" if report.group_columns else ""
        blocks.append(title + _block(report, group, digits))
    return "\n".join(blocks)
