"""``mlsql.report`` over ibis tables, computed live in DuckDB, DataFusion and PostgreSQL.

The report's two tables against the plain-Python oracle in exact fractions
(tests/oracle_labels.py, through tests/references.py), the Hivemall blog's conformance
numbers, and whole reports (summary, labels, confusion cells, notes, intervals) against
the DuckDB engine's report of the same rows; the refusals in words; hostile names.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import pyarrow as pa
import pytest

import mlsql
from mlsql._errors import MlsqlError
from mlsql._registry import REGISTRY
from tests.conftest import conformance
from tests.references import REFERENCES, tables
from tests.test_every_measure import _check, _value_of

ibis = pytest.importorskip("ibis", reason="ibis is missing: pip install -e '.[ibis]'")

from mlsql._ibis import tables as ibis_tables  # noqa: E402
from tests import test_ibis  # noqa: E402
from tests.test_ibis import Live  # noqa: E402

#: each live backend in turn (test_ibis' fixture)
live = test_ibis.live

#: the random tables of the label tables' references each backend computes
SEEDS = range(4)


# the report 3.6 s a backend: DuckDB's stays in the README's run
@pytest.mark.long_cases("datafusion-multilabel_report", "postgres-multilabel_report")
@pytest.mark.parametrize("name", ["multilabel_report", "label_metrics"])
def test_label_tables_match_the_oracle(live: Live, name: str) -> None:
    """Every zero_division, beta and a universe (with a label no row holds and rows holding
    labels outside it), on text and integer label lists with NULL lists and elements."""
    ref = REFERENCES[name]
    choices = [*ref.params_for(pa.table({"actual": [["a"]]})), {"labels": ["a", "b", "zz"]}]
    for i, table in enumerate(tables(ref.data, SEEDS)):
        params = choices[i % len(choices)] if i else choices[-1]
        if "labels" in params and pa.types.is_integer(table.schema.field("actual").type.value_type):
            params = {**params, "labels": [1, 2, 99]}
        out = getattr(ibis_tables, name)(live.table(table), "actual", "predicted", **params)
        got, want = _value_of(name, out), ref.expected(table, params)
        if name == "multilabel_report" and got is not None:
            got = {k: got[k] for k in want}
        _check([(REGISTRY[name], params, got, want)], table)


BLOG = conformance("hivemall_blog_tags.json")


def test_the_report_s_numbers_are_the_conformance_data(live: Live) -> None:
    rows = BLOG["rows"]
    table = live.table(
        pa.table(
            {"actual": [r["actual"] for r in rows], "predicted": [r["predicted"] for r in rows]}
        )
    )
    report = mlsql.report(table, "actual", "predicted")
    expected = BLOG["expected"]
    assert report.engine == f"ibis/{live.name}"
    [row] = report.summary
    assert (row["n_rows"], row["n_labels"]) == (expected["n_rows"], expected["n_labels"])
    for column, key in (
        ("micro_f1", "micro.f1"),
        ("macro_f1", "macro.f1[zd=0]"),
        ("samples_f1", "samples.f1[zd=0]"),
    ):
        assert math.isclose(row[column], expected[key], rel_tol=1e-12)
    counts = {
        r["label"]: {k: r[k] for k in ("tp", "fp", "fn", "tn", "support")} for r in report.labels
    }
    assert counts == expected["per_label"]


def same(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two reports' dicts differ (floats within 1e-12, NaN equal to NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return [f"{where}: keys {list(a)} != {list(b)}"]
        return [d for k in a for d in same(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in same(x, y, f"{where}[{i}]")
        ]
    if isinstance(a, float) and isinstance(b, float):
        ok = math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15) or (math.isnan(a) and math.isnan(b))
        return [] if ok else [f"{where}: {a!r} != {b!r}"]
    if type(a) is not type(b) or a != b:
        return [f"{where}: {a!r} != {b!r}"]
    return []


def as_compared(report: Any) -> dict[str, Any]:
    """A report's dict without what names the engine and the source."""
    out = report.to_dict()
    for key in ("engine", "source", "mlsql_version"):
        out.pop(key)
    return out


#: label lists with a NULL group, NULL lists, empty lists, NULL elements and repeats
LISTS = pa.table(
    {
        "g": [1, 1, 1, 2, 2, None, None, 3],
        "actual": [["a", "b"], ["b", None], [], ["c"], None, ["a", "a"], ["b"], None],
        "predicted": [["a"], ["b", "c"], ["a"], [], ["a"], ["a"], None, ["b"]],
    }
)
#: one label per row: two groups, a NULL label, integer classes
SINGLE = pa.table(
    {
        "g": ["x", "x", "x", "y", "y", "y"],
        "actual": [3, 1, 1, 2, None, 2],
        "predicted": [3, 3, 1, 2, 2, 1],
    }
)
REPORTS = [
    (LISTS, {}),
    (LISTS, {"by": "g"}),
    (LISTS, {"by": "g", "labels": ["b", "a", "zz"], "zero_division": "nan"}),
    (LISTS, {"beta": 2.0, "zero_division": "diagnose", "min_support": 1}),
    (SINGLE, {"by": "g"}),
    (SINGLE, {"labels": [2, 1, 3, 4], "zero_division": 1}),
]


@functools.cache
def duckdb_report(case: int) -> Any:
    """The DuckDB engine's report of ``REPORTS[case]`` (made once for every backend)."""
    data, kwargs = REPORTS[case]
    return mlsql.report(data, "actual", "predicted", **kwargs)


@pytest.mark.long  # 3-12 s a backend on two cores
def test_a_report_is_the_duckdb_engine_s(live: Live) -> None:
    """The whole report (summary, label rows, confusion cells, notes, rows read and skipped)
    is the DuckDB engine's report of the same rows."""
    for case, (data, kwargs) in enumerate(REPORTS):
        want = duckdb_report(case)
        got = mlsql.report(live.table(data), "actual", "predicted", **kwargs)
        assert got.engine == f"ibis/{live.name}"
        assert not same(as_compared(got), as_compared(want)), (
            kwargs,
            same(as_compared(got), as_compared(want)),
        )


def test_intervals_are_the_duckdb_engine_s(live: Live) -> None:
    """``--ci``'s intervals: the same draws over the statistics the database computed."""
    from mlsql.report.engines import DuckDBFrames
    from mlsql.report.ibis_frames import IbisFrames
    from mlsql.report.intervals import Resampling, add_intervals

    data, kwargs = LISTS, {"by": "g"}
    reports = []
    for source, engine in (
        (data, DuckDBFrames(mlsql.connect())),
        (live.table(data), None),
    ):
        report = mlsql.report(source, "actual", "predicted", **kwargs)
        engine = engine or IbisFrames(source)
        frame, _ = engine.from_source(source, "actual", "predicted", ["g"], None)
        reports.append(add_intervals(report, engine, frame, "actual", "predicted", Resampling(200)))
    want, got = (r.intervals for r in reports)
    assert want and not same(got, want)
    assert reports[1].notes == reports[0].notes


# 1.3-2.5 s a case: one separator a backend in the README's run, the others long
@pytest.mark.long_cases(
    "duckdb-$.", "duckdb- - ", "datafusion-|", "datafusion- - ", "postgres-|", "postgres-$."
)
@pytest.mark.parametrize("sep", ["|", "$.", " - "])
def test_text_split_on_sep_as_every_engine_splits_it(live: Live, sep: str) -> None:
    """Tabs, newlines and a no-break space around the labels, separators that are regular
    expressions' own characters (DataFusion splits by a regular expression): the labels
    Python's ``str.strip`` gives, and the DuckDB engine's whole report."""
    import string

    from tests.test_report_api import SPLIT

    columns = {
        k: [None if v is None else v.replace("|", sep) for v in vs] for k, vs in SPLIT.items()
    }
    text = pa.table(columns)
    if live.name == "datafusion" and sep != sep.strip():
        with pytest.raises(MlsqlError, match="sep must not begin or end with whitespace"):
            mlsql.report(live.table(text), "actual", "predicted", sep=sep)
        sep = sep.strip()
        columns = {
            k: [None if v is None else v.replace("|", sep) for v in vs] for k, vs in SPLIT.items()
        }
        text = pa.table(columns)
    got = mlsql.report(live.table(text), "actual", "predicted", sep=sep)
    want = mlsql.report(text, "actual", "predicted", sep=sep)
    assert not same(as_compared(got), as_compared(want))
    parts = {
        p.strip(string.whitespace)
        for vs in columns.values()
        for v in vs
        for p in (v or "").split(sep)
    }
    assert [r["label"] for r in got.labels] == sorted(parts - {""})


def test_what_is_not_computed_there_is_refused_with_the_reason(live: Live) -> None:
    data = pa.table({"lang": ["de", "en"], "actual": [["a"], ["b"]], "predicted": [["a"], ["a"]]})
    table = live.table(data)
    with pytest.raises(
        MlsqlError, match="slices of an ibis table are not computed in its database"
    ):
        mlsql.report(table, "actual", "predicted", slices=["lang"])
    with pytest.raises(MlsqlError, match="report: no column 'truth'; the table has 'lang', "):
        mlsql.report(table, "truth", "predicted")
    with pytest.raises(MlsqlError, match="labels"):
        mlsql.report(table, "actual", "predicted", labels=[1, 2])


def test_hostile_names_are_names(live: Live) -> None:
    hostile = ['a"; DROP TABLE x; --', "b'); SELECT 1; --", "model name"]
    data = pa.table(
        {
            hostile[2]: ["m", "m", "n"],
            hostile[0]: [["x", "y"], ["y"], ["x"]],
            hostile[1]: [["x"], ["y", "z"], ["x"]],
        }
    )
    got = mlsql.report(live.table(data), hostile[0], hostile[1], by=hostile[2])
    want = mlsql.report(data, hostile[0], hostile[1], by=hostile[2])
    assert [r[hostile[2]] for r in got.summary] == ["m", "n"]
    assert not same(as_compared(got), as_compared(want))
