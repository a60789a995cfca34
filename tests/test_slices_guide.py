"""The slices guide (docs/guides/slices.md): its Python runs, prints what the guide shows,
and its numbers are those of a plain-Python micro F1 (exact fractions) of each slice."""

from __future__ import annotations

import contextlib
import io
import re
from fractions import Fraction
from typing import Any

import pytest

from tests.conftest import ROOT

pytest.importorskip("polars")
pytest.importorskip("numpy")

GUIDE = ROOT / "docs" / "guides" / "slices.md"
#: a slice's condition: ``column = 'value'`` or ``column in [low, high)`` (``]``: closed)
CONDITION = re.compile(r"(\w+) (?:= '([^']*)'|in \[(\d+), (\d+)([)\]]))")


def blocks() -> list[tuple[str, str | None]]:
    """The guide's runnable Python blocks, each with the text block printed after it (None:
    the block prints nothing)."""
    text = GUIDE.read_text()
    found = re.findall(r"```(python|text)\n(.*?)```", text, re.S)
    out: list[tuple[str, str | None]] = []
    for kind, body in found:
        if kind == "python" and "preds.parquet" not in body:  # the first is an outline
            out.append((body, None))
        elif kind == "text" and out and out[-1][1] is None:
            out[-1] = (out[-1][0], body)
    return out


def inside(row: dict[str, Any], slice_text: str) -> bool:
    for column, value, low, high, close in CONDITION.findall(slice_text):
        if value:
            if row[column] != value:
                return False
        elif not (
            int(low) <= row[column]
            and (row[column] <= int(high) if close == "]" else row[column] < int(high))
        ):
            return False
    return True


def micro_f1(rows: list[dict[str, Any]]) -> Fraction:
    tp = sum(len(set(r["actual"]) & set(r["predicted"])) for r in rows)
    return Fraction(2 * tp, sum(len(r["actual"]) + len(r["predicted"]) for r in rows))


@pytest.mark.long
def test_the_guide_runs_prints_what_it_shows_and_its_numbers_are_right() -> None:
    namespace: dict[str, Any] = {}
    found = blocks()
    assert len(found) == 3
    for code, shown in found:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, str(GUIDE), "exec"), namespace)
        assert out.getvalue() == (shown or "")  # a block without a text block prints nothing
    rows = namespace["docs"].to_dicts()
    weak = namespace["weak"].to_dicts()
    assert weak[0]["slice"] == "language = 'ja' and source = 'forum'"  # the planted weakness
    for r in weak:
        part = [row for row in rows if inside(row, r["slice"])]
        rest = [row for row in rows if not inside(row, r["slice"])]
        assert r["rows"] == len(part)
        assert r["estimate"] == pytest.approx(float(micro_f1(part)), rel=1e-12)
        want = micro_f1(part) - micro_f1(rest)
        assert r["difference"] == pytest.approx(float(want), rel=1e-9, abs=1e-12)
