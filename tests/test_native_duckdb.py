"""mlsql's native DuckDB extension (native/duckdb_ext.c) against the portable macros and the oracle.

The extension is compiled once for this session (native/build_duckdb.py) and
chosen with ``MLSQL_DUCKDB_EXTENSION``. Random tables carry NULL lists, NULL
elements, duplicates, empty and long lists, labels longer than DuckDB's 12
inlined bytes, integers of every width and sign, more rows than one DuckDB
vector (2,048) and sliced Arrow inputs; every count and measure must equal
the oracle (tests/oracle.py) and the portable macros (``register()``).
"""

from __future__ import annotations

import importlib.util
import math
import os
import random
import re
import shutil
from pathlib import Path
from types import ModuleType
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

import mlsql
from mlsql._duckdb import native as _native
from mlsql._duckdb.library import macros, render
from mlsql._duckdb.native import LABEL_SCORES
from mlsql._errors import MlsqlError
from mlsql._sqlexpr import lit
from tests import oracle, oracle_labels
from tests import oracle_ranking as O
from tests.batches import CASE, batches, stack, with_rows
from tests.test_multilabel_properties import same

ROOT = Path(__file__).resolve().parents[1]
#: examples of the per-label table property (raise it to hunt: MLSQL_LABEL_TABLE_EXAMPLES=500)
LABEL_TABLE_EXAMPLES = int(os.environ.get("MLSQL_LABEL_TABLE_EXAMPLES", "25"))
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
SHORT = ["a", "b", "c", "d"]
LONG = ["label-longer-than-twelve-1", "label-longer-than-twelve-2", "x" * 40]
#: labels of at most 7 bytes (the extension counts a chunk of them as integer keys): the empty
#: label, embedded NULs, and labels that differ only in their length or their last byte
SEVEN = ["", "a", "a\x00", "a\x00\x00", "b", "abcdefg", "abcdefh", "abcdef", "\x00"]
#: a label of 8 bytes sharing the 7-byte ones' head: one of them sends its chunk to the two-word
#: keys of labels up to 12 bytes
EIGHT = ["abcdefgh"]
#: labels of 8 to 12 bytes (two-word keys): equal heads that differ after the eighth byte, in
#: their length or their last byte, embedded NULs, and the 7-byte labels' head
TWELVE = [
    "abcdefgh", "abcdefghi", "abcdefghij", "abcdefghijkl", "abcdefghijkm", "abcdefgh\x00",
    "abcdefgh\x00\x00\x00\x00", "prefix00-a", "prefix00-b", "twelve-bytes",
]  # fmt: skip
#: a label of 13 bytes with the 12-byte ones' head: one sends its chunk to the text path
THIRTEEN = ["abcdefghijklm"]
SIGNED = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64}
UNSIGNED = {pa.uint8(): 8, pa.uint16(): 16, pa.uint32(): 32, pa.uint64(): 64}
MEASURES = [
    ("micro_f1", {}),
    ("micro_precision", {}),
    ("micro_recall", {}),
    ("micro_jaccard", {}),
    ("samples_f1", {}),
    ("samples_fbeta", {"beta": 2.0, "zero_division": "diagnose"}),
    ("samples_jaccard", {"zero_division": "ignore"}),
    ("subset_accuracy", {}),
    ("zero_one_loss", {}),
    ("hamming_loss", {"n_labels": 50}),
]


def build_module() -> ModuleType:
    """native/build_duckdb.py as a module."""
    spec = importlib.util.spec_from_file_location(
        "build_duckdb", ROOT / "native" / "build_duckdb.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def extension(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The extension, compiled for this session (a C compiler is required: never skipped)."""
    return build_module().build(tmp_path_factory.mktemp("duckdb_ext"))


@pytest.fixture
def native(extension: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Connections opened under this fixture use the session's extension."""
    monkeypatch.setenv(_native.DUCKDB_PATH_ENV, str(extension))
    monkeypatch.delenv(_native.ENV, raising=False)
    status = _native.duckdb_native_status()
    assert status["enabled"], status
    return extension


@pytest.fixture(scope="module")
def both(extension: Path) -> tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection]:
    """A connection from mlsql.connect() on the native path, and a user's with register()."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(_native.DUCKDB_PATH_ENV, str(extension))
        mp.delenv(_native.ENV, raising=False)
        fast = mlsql.connect()
    return fast, mlsql.register(duckdb.connect())


def raw_connection(extension: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config=_native.open_config())
    con.execute(_native.load_sql(extension))
    return con


def uses_native(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection's per-row count macro calls the extension."""
    rows = con.execute(
        "SELECT macro_definition FROM duckdb_functions() WHERE function_name = '_mlsql_tp'"
    ).fetchall()
    return any("mlsql_native_counts" in definition for (definition,) in rows)


# ---------------------------------------------------------------- random label tables


def int_values(t: pa.DataType) -> list[int]:
    bits = SIGNED.get(t) or UNSIGNED[t]
    if t in SIGNED:
        return [-(2 ** (bits - 1)), -1, 0, 1, 2, 3, 2 ** (bits - 1) - 1]
    return [0, 1, 2, 3, 2**bits - 1, *([2**63, 2**63 + 1] if bits == 64 else [])]


@st.composite
def label_types(draw: st.DrawFn) -> tuple[pa.DataType, pa.DataType]:
    """Text on both sides, or integers of two widths."""
    if draw(st.booleans()):
        return pa.string(), pa.string()
    return draw(st.sampled_from([*SIGNED, *UNSIGNED])), draw(st.sampled_from([*SIGNED, *UNSIGNED]))


@st.composite
def tables(
    draw: st.DrawFn,
    min_rows: int = 0,
    max_rows: int = 40,
    types: tuple[pa.DataType, pa.DataType] | None = None,
    text_pool: list[str] | None = None,
    short_max: int = 6,
) -> tuple[pa.Table, list]:
    """A two-column Arrow table of label lists (text, or integers of two widths) and its rows.

    ``text_pool`` replaces the text labels drawn from; short lists have up to
    ``short_max`` items.
    """
    ta, tp = draw(label_types()) if types is None else types
    text = ta == pa.string()
    if text:
        pool_a = pool_p = SHORT + LONG if text_pool is None else text_pool
    else:
        pool_a, pool_p = int_values(ta), int_values(tp)
    long_list = st.integers(30, 200)

    def lists(pool: list[Any]) -> st.SearchStrategy:
        items = st.one_of(st.sampled_from(pool), st.none())
        short = st.lists(items, max_size=short_max)
        longer = long_list.flatmap(lambda n: st.lists(items, min_size=n, max_size=n))
        return st.one_of(st.none(), short, short, short, longer)

    n = draw(st.integers(min_rows, max_rows))
    rows = draw(st.lists(st.tuples(lists(pool_a), lists(pool_p)), min_size=n, max_size=n))
    offset = draw(st.integers(0, 3))
    padding = [(["pad"] if text else [0], None)] * offset
    full = padding + rows
    table = pa.table(
        {
            "a": pa.array([r[0] for r in full], type=pa.list_(ta)),
            "p": pa.array([r[1] for r in full], type=pa.list_(tp)),
        }
    )
    return table.slice(offset), rows


def expected_counts(a: Any, p: Any) -> dict[str, int] | None:
    sa, sp = oracle.as_set(a), oracle.as_set(p)
    if sa is None or sp is None:
        return None
    return {"tp": len(sa & sp), "n_actual": len(sa), "n_predicted": len(sp)}


def native_counts(con: duckdb.DuckDBPyConnection, table: pa.Table) -> list[Any]:
    con.register("t", table)
    try:
        return [r[0] for r in con.execute("SELECT mlsql_native_counts(a, p) FROM t").fetchall()]
    finally:
        con.unregister("t")


# ---------------------------------------------------------------- the counts


@pytest.mark.long
@SETTINGS
@given(tables())
def test_counts_equal_the_oracle(extension: Path, data: tuple[pa.Table, list]) -> None:
    table, rows = data
    con = raw_connection(extension)
    assert native_counts(con, table) == [expected_counts(a, p) for a, p in rows]


@pytest.mark.long
@SETTINGS
@given(
    st.sampled_from([SEVEN, SEVEN + EIGHT, SEVEN + TWELVE, TWELVE + THIRTEEN]).flatmap(
        lambda pool: tables(types=(pa.string(), pa.string()), text_pool=pool, short_max=10)
    )
)
def test_short_text_keys_equal_the_oracle(extension: Path, data: tuple[pa.Table, list]) -> None:
    """Chunks of labels of at most 7 bytes (counted as integer keys), of at most 12 (two-word
    keys), and the same with a 13-byte label of the same head (the text path); lists of every
    shape up to 10 a side."""
    table, rows = data
    con = raw_connection(extension)
    assert native_counts(con, table) == [expected_counts(a, p) for a, p in rows]


@pytest.mark.parametrize(
    "pool",
    [
        pytest.param(SHORT + LONG + [f"l{i}" for i in range(300)], marks=pytest.mark.long),
        SEVEN + [f"l{i}" for i in range(300)],
        TWELVE + [f"label-{i:05d}" for i in range(300)],
    ],
    ids=["long labels", "labels of at most 7 bytes", "labels of at most 12 bytes"],
)
@pytest.mark.long_cases("labels of at most 7 bytes")
def test_counts_over_many_vectors_and_threads(extension: Path, pool: list[str]) -> None:
    """10,000 rows (five DuckDB vectors) on two threads, long lists included."""
    rng = random.Random(7)

    def labels() -> list[Any] | None:
        r = rng.random()
        if r < 0.05:
            return None
        n = rng.randint(30, 200) if r > 0.97 else rng.randint(0, 6)
        return [rng.choice(pool) if rng.random() > 0.05 else None for _ in range(n)]

    rows = [(labels(), labels()) for _ in range(10_000)]
    table = pa.table({"a": [r[0] for r in rows], "p": [r[1] for r in rows]})
    con = raw_connection(extension)
    con.execute("SET threads = 2")
    assert native_counts(con, table) == [expected_counts(a, p) for a, p in rows]


@pytest.mark.parametrize(
    ("sql", "want"),
    [
        ("[]::INTEGER[], []::INTEGER[]", {"tp": 0, "n_actual": 0, "n_predicted": 0}),
        ("[NULL]::VARCHAR[], ['']", {"tp": 0, "n_actual": 0, "n_predicted": 1}),
        ("NULL::VARCHAR[], ['a']", None),
        ("['a'], NULL::VARCHAR[]", None),
        # UBIGINT beyond INT64_MAX has the bits of -1 but equals no signed label
        (
            "[18446744073709551615, 5]::UBIGINT[], [-1, 5]::BIGINT[]",
            {"tp": 1, "n_actual": 2, "n_predicted": 2},
        ),
        (
            "[18446744073709551615]::UBIGINT[], [18446744073709551615]::UBIGINT[]",
            {"tp": 1, "n_actual": 1, "n_predicted": 1},
        ),
        ("[255]::UTINYINT[], [-1]::TINYINT[]", {"tp": 0, "n_actual": 1, "n_predicted": 1}),
    ],
)
def test_counts_edge_cases(extension: Path, sql: str, want: Any) -> None:
    con = raw_connection(extension)
    assert con.execute(f"SELECT mlsql_native_counts({sql})").fetchall()[0][0] == want


def test_counts_refuse_text_against_integers(extension: Path) -> None:
    con = raw_connection(extension)
    with pytest.raises(duckdb.Error, match="mlsql_native_counts"):
        con.execute("SELECT mlsql_native_counts(['a'], [1])").fetchall()


# ---------------------------------------------------------------- the measures, native and portable


def measure_values(con: duckdb.DuckDBPyConnection, table: pa.Table) -> dict[int, list[Any]]:
    """Every measure per case of a stacked batch (tests/batches.py), in one query."""
    con.register("t", table)
    try:
        calls = []
        for name, params in MEASURES:
            args = "".join(f", {k} := {v!r}" for k, v in params.items())
            calls.append(f"{name}(a, p{args})")
        sql = f"SELECT {CASE}, {', '.join(calls)} FROM t GROUP BY {CASE}"
        return {r[0]: list(r[1:]) for r in con.execute(sql).fetchall()}
    finally:
        con.unregister("t")


@st.composite
def table_batches(draw: st.DrawFn) -> list[tuple[pa.Table, list]]:
    """Several tables of the same label types (sliced, with long lists): one query checks all."""
    types = draw(label_types())
    return draw(batches(tables(max_rows=30, types=types)))


@pytest.mark.first(rank=8)
@pytest.mark.long
@settings(SETTINGS, max_examples=15)
@given(table_batches())
def test_measures_equal_portable_and_oracle(
    both: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection],
    cases: list[tuple[pa.Table, list]],
) -> None:
    table = stack([t for t, _ in cases])
    fast, slow = both
    assert uses_native(fast) and not uses_native(slow)
    try:
        got_slow = measure_values(slow, table)
    except duckdb.Error as error:  # UBIGINT lists: both paths refuse them with mlsql's message
        assert "needs actual and predicted labels of one kind" in str(error)
        with pytest.raises(duckdb.Error) as raised:
            measure_values(fast, table)
        assert str(raised.value) == str(error)
        return
    got_fast = measure_values(fast, table)
    assert set(got_fast) == set(got_slow) == with_rows([t for t, _ in cases])
    for i, (_, rows) in enumerate(cases):
        if i not in got_fast:
            continue
        want = [oracle.aggregate(name, rows, **params) for name, params in MEASURES]
        for (name, _), f, s, w in zip(MEASURES, got_fast[i], got_slow[i], want, strict=True):
            assert same(f, w), (name, f, w)
            assert same(s, w), (name, s, w)


@pytest.mark.parametrize("t", ["VARCHAR", "TINYINT", "INTEGER", "BIGINT"])
def test_integer_and_text_columns_take_the_native_path(native: Path, t: str) -> None:
    """A BIGINT[] column reaches the extension (it was cast to HUGEINT[] and stayed portable)."""
    con = mlsql.connect()
    con.execute(f"CREATE TABLE t AS SELECT ['1', '2']::{t}[] AS a, ['2']::{t}[] AS p")
    for call in ("micro_f1(a, p)", "samples_f1(a, p)", "multilabel_counts(a, p)"):
        plan = con.execute(f"EXPLAIN SELECT {call} FROM t").fetchall()[0][1]
        assert "mlsql_native_counts" in plan and "list_filter" not in plan, (call, plan)


def test_multilabel_counts_native_equal_oracle(native: Path) -> None:
    rows = [(["a", "a", None], ["a", "b"]), (None, ["a"]), ([], []), (["x" * 30], ["x" * 30])]
    table = pa.table({"a": [r[0] for r in rows], "p": [r[1] for r in rows]})
    con = mlsql.connect()
    con.register("t", table)
    (got,) = con.execute("SELECT multilabel_counts(a, p) FROM t").fetchall()[0]
    assert got == oracle.multilabel_counts(rows)


# ---------------------------------------------------------------- per-label tables


def uses_native_table(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection's per-label spread calls the extension's aggregate."""
    rows = con.execute(
        "SELECT macro_definition FROM duckdb_functions() "
        "WHERE function_name = '_mlsql_label_spread'"
    ).fetchall()
    return any("mlsql_native_label_table" in definition for (definition,) in rows)


def table_rows(con: duckdb.DuckDBPyConnection, table: pa.Table, sql: str) -> Any:
    """The rows (with their column types) of ``sql`` over ``table`` as ``t``, or the error text."""
    con.register("t", table)
    try:
        result = con.execute(sql)
        return result.fetchall(), [d[1] for d in result.description]
    except duckdb.Error as error:
        return str(error)
    finally:
        con.unregister("t")


def equal(got: Any, want: Any) -> bool:
    """Labels and counts exactly; ratios to 1e-12 (NULL = NULL, NaN = NaN)."""
    return got == want if isinstance(want, (str, int)) else same(got, want)


def label_queries(labels: list[Any] | None) -> list[str]:
    given = "" if labels is None else f", labels := {labels!r}"
    return [
        f"SELECT * FROM label_metrics('t', 'a', 'p'{given})",
        f"SELECT * FROM label_metrics('t', 'a', 'p', beta := 2.0, by := ['g']{given})",
        f"SELECT * FROM multilabel_report('t', 'a', 'p'{given})",
        f"SELECT * FROM multilabel_report('t', 'a', 'p', by := ['g'], zero_division := 'nan'{given})",
        f"SELECT * FROM macro_f1('t', 'a', 'p'{given})",
        f"SELECT * FROM weighted_recall('t', 'a', 'p', by := ['g']{given})",
    ]


@pytest.mark.first(rank=9)
@pytest.mark.long
@settings(max_examples=LABEL_TABLE_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(tables(max_rows=30), st.booleans(), st.integers(0, 3))
def test_label_tables_equal_portable_and_oracle(
    both: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection],
    data: tuple[pa.Table, list],
    with_universe: bool,
    n_groups: int,
) -> None:
    """Native per-label tables give the portable macros' rows, types and errors, and the oracle's."""
    table, rows = data
    fast, slow = both
    assert uses_native_table(fast) and not uses_native_table(slow)
    groups = [i % n_groups if n_groups else 0 for i in range(len(rows))]
    table = table.append_column("g", pa.array(groups, pa.int32()))
    labels = None
    if with_universe:
        seen = [x for r in rows for side in r if side for x in side if x is not None]
        labels = sorted(set(seen))[:2] + (
            ["zz-not-seen"] if table.schema.field("a").type.value_type == pa.string() else [7]
        )
    for sql in label_queries(labels):
        got, want = table_rows(fast, table, sql), table_rows(slow, table, sql)
        # every table here is valid input: an error on both paths is no agreement but a bug
        # (a universe typed per list failed so, test_a_universe_of_the_wider_lists_type)
        assert not isinstance(want, str) and not isinstance(got, str), (sql, got, want)
        assert got[1] == want[1], sql  # the same column types
        assert len(got[0]) == len(want[0]), sql
        for g_row, w_row in zip(got[0], want[0], strict=True):
            assert all(equal(x, y) for x, y in zip(g_row, w_row, strict=True)), (sql, g_row, w_row)
    expected = oracle_labels.label_metrics(rows, labels)
    got = table_rows(fast, table, label_queries(labels)[0])
    columns = ["label", "tp", "fp", "fn", "tn", "support", "precision", "recall", "f1"]
    for g_row, want_row in zip(got[0], expected, strict=True):
        assert all(equal(x, want_row[c]) for x, c in zip(g_row, columns, strict=False)), (
            g_row,
            want_row,
        )


@pytest.mark.parametrize(
    ("ta", "tp", "rows"),
    [
        # the case Hypothesis found: the narrow side holds only a NULL element
        (pa.int8(), pa.int16(), [([None], [-32768])]),
        (pa.int16(), pa.int8(), [([-32768], [None])]),
        # a universe label the narrow side cannot hold, next to labels it does hold
        (pa.int8(), pa.int16(), [([-128, 1], [-32768, 1]), ([7], None), (None, [])]),
        (pa.uint8(), pa.int16(), [([255, 0], [-32768, 255])]),
    ],
)
def test_a_universe_of_the_wider_lists_type(
    both: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection],
    ta: pa.DataType,
    tp: pa.DataType,
    rows: list,
) -> None:
    """``labels`` is typed as the label column (both lists' common type), not as each list:
    -32768 is a SMALLINT label that a TINYINT list never holds. Typed per list, the universe
    failed with DuckDB's conversion error, on the native path even where the portable one
    ran (a TINYINT list of NULL elements only)."""
    table = pa.table(
        {
            "a": pa.array([r[0] for r in rows], pa.list_(ta)),
            "p": pa.array([r[1] for r in rows], pa.list_(tp)),
        }
    )
    labels = [-32768, 7, 255]
    want = [
        (r["label"], r["tp"], r["fp"], r["fn"], r["tn"], r["support"])
        for r in oracle_labels.label_metrics(rows, labels)
    ]
    sql = f"SELECT label, tp, fp, fn, tn, support FROM label_metrics('t', 'a', 'p', labels := {labels})"
    assert uses_native_table(both[0]) and not uses_native_table(both[1])
    for con in both:
        got = table_rows(con, table, sql)
        assert not isinstance(got, str), got
        assert got[0] == want


@pytest.mark.long
def test_label_tables_over_many_vectors_and_threads(native: Path) -> None:
    """30,000 rows on two threads (the aggregate's states merged), three groups, long lists."""
    rng = random.Random(11)
    pool = SHORT + LONG + [f"l{i}" for i in range(300)]

    def labels() -> list[Any] | None:
        r = rng.random()
        if r < 0.05:
            return None
        n = rng.randint(30, 200) if r > 0.98 else rng.randint(0, 6)
        return [rng.choice(pool) if rng.random() > 0.05 else None for _ in range(n)]

    rows = [(labels(), labels()) for _ in range(30_000)]
    table = pa.table(
        {"a": [r[0] for r in rows], "p": [r[1] for r in rows], "g": [i % 3 for i in range(30_000)]}
    )
    con = mlsql.connect()
    con.execute("SET threads = 2")
    assert uses_native_table(con)
    got = table_rows(con, table, "SELECT * FROM label_metrics('t', 'a', 'p', by := ['g'])")[0]
    for g in range(3):
        mine = [(r[1], r[2], r[3], r[4], r[5], r[6]) for r in got if r[0] == g]
        want = oracle_labels.label_metrics(rows[g::3])
        assert mine == [
            (w["label"], w["tp"], w["fp"], w["fn"], w["tn"], w["support"]) for w in want
        ]
    report = table_rows(con, table, "SELECT * FROM multilabel_report('t', 'a', 'p')")
    slow = table_rows(
        mlsql.register(duckdb.connect()), table, "SELECT * FROM multilabel_report('t', 'a', 'p')"
    )
    assert all(equal(x, y) for x, y in zip(report[0][0], slow[0][0], strict=True))


@pytest.mark.parametrize(
    ("a", "p"),
    [
        ("[1, 2, 2, -3]::HUGEINT[]", "[2, -3, 170141183460469231731687303715884105727]::HUGEINT[]"),
        ("[1, 18446744073709551615]::UBIGINT[]", "[18446744073709551615, 0]::UBIGINT[]"),
        ("[255, 1]::UTINYINT[]", "[-1, 1]::TINYINT[]"),
        ("[NULL, '']::VARCHAR[]", "['', 'x']"),
        ("[]::INTEGER[]", "[]::INTEGER[]"),
    ],
)
def test_label_table_aggregate_edge_cases(extension: Path, a: str, p: str) -> None:
    """The aggregate's per-label counts equal the oracle's, for every integer width and text."""
    con = raw_connection(extension)
    (rows,) = con.execute(
        f"SELECT mlsql_native_label_table(CASE WHEN false THEN y ELSE x END, "
        f"CASE WHEN false THEN x ELSE y END) FROM (SELECT {a} AS x, {p} AS y)"
    ).fetchall()[0]
    x, y = con.execute(f"SELECT {a}, {p}").fetchall()[0]
    sa, sp = oracle.as_set(x), oracle.as_set(y)
    labels = {
        r["label"]: (r["tp"], r["n_actual"], r["n_predicted"])
        for r in rows
        if r["label"] is not None
    }
    assert labels == {
        lab: (int(lab in sa and lab in sp), int(lab in sa), int(lab in sp)) for lab in sa | sp
    }
    kinds = [(r["tp"], r["n_actual"], r["n_predicted"], r["n"]) for r in rows if r["label"] is None]
    assert kinds == [(len(sa & sp), len(sa), len(sp), 1)]


# ---------------------------------------------------------------- which path, and why


def test_status_names_every_engine(native: Path) -> None:
    status = mlsql.native_status()
    assert set(status) == {"duckdb", "polars", "spark"}
    duck = status["duckdb"]
    assert duck["built"] and duck["available"] and duck["enabled"] and duck["reason"] is None
    assert duck["path"] == str(native) and duck["duckdb"] == duckdb.__version__
    assert {"available", "enabled", "reason"} <= set(status["polars"])
    assert {"available", "enabled", "reason"} <= set(status["spark"])


def test_switched_off_by_env(native: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_native.ENV, "0")
    status = _native.duckdb_native_status()
    assert status["available"] and not status["enabled"]
    assert status["reason"] == "MLSQL_NATIVE=0"
    assert not uses_native(mlsql.connect())


def test_user_connection_keeps_portable_macros(native: Path) -> None:
    assert not uses_native(mlsql.register(duckdb.connect()))


def test_register_native_on_a_plain_connection_says_why(native: Path) -> None:
    with pytest.raises(MlsqlError, match="allow_unsigned_extensions"):
        mlsql.register(duckdb.connect(), native=True)


def test_register_native_stores_macros_only_in_memory(native: Path, tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "file.db"), config=_native.open_config())
    with pytest.raises(MlsqlError, match="only in an in-memory database"):
        mlsql.register(con, temporary=False, native=True)
    memory = mlsql.register(
        duckdb.connect(config=_native.open_config()), temporary=False, native=True
    )
    assert uses_native(memory.cursor())


@pytest.mark.long
def test_stored_macros_stay_portable(native: Path) -> None:
    con = mlsql.connect(schema="ml")
    (definition,) = con.execute(
        "SELECT macro_definition FROM duckdb_functions() "
        "WHERE schema_name = 'ml' AND function_name = '_mlsql_tp'"
    ).fetchall()[0]
    assert "mlsql_native_counts" not in definition
    assert con.execute("SELECT ml.micro_f1(['a', 'b'], ['a'])").fetchall()[0][0] == pytest.approx(
        2 / 3
    )


@pytest.mark.long
def test_prefixed_macros_use_native(native: Path) -> None:
    con = mlsql.connect(prefix="ml_")
    rows = con.execute(
        "SELECT macro_definition FROM duckdb_functions() WHERE function_name = 'ml__mlsql_tp'"
    ).fetchall()
    assert any("mlsql_native_counts" in definition for (definition,) in rows)
    assert con.execute("SELECT ml_micro_f1(['a', 'b'], ['a'])").fetchall()[0][0] == pytest.approx(
        2 / 3
    )


def test_missing_extension(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(_native.DUCKDB_PATH_ENV, str(tmp_path / "absent.duckdb_extension"))
    monkeypatch.delenv(_native.ENV, raising=False)
    status = _native.duckdb_native_status()
    assert not status["built"] and not status["enabled"]
    assert status["reason"].startswith("no extension at")
    con = mlsql.connect()
    assert not uses_native(con)
    assert con.execute("SELECT micro_f1(['a', 'b'], ['a'])").fetchall()[0][0] == pytest.approx(
        2 / 3
    )


def test_broken_extension_falls_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    broken = tmp_path / "mlsql.duckdb_extension"
    broken.write_bytes(b"not a library" * 100)
    monkeypatch.setenv(_native.DUCKDB_PATH_ENV, str(broken))
    monkeypatch.delenv(_native.ENV, raising=False)
    status = _native.duckdb_native_status()
    assert status["built"] and not status["available"]
    assert status["reason"].startswith("the extension did not load")
    assert not uses_native(mlsql.connect())


def test_the_probe_checks_every_function_the_macros_call(extension: Path) -> None:
    """Every extension function named in the native macros is one the probe checks and runs."""
    sql = "".join(render(macros(native=True)).values())
    called = set(re.findall(r"(?<![\w])mlsql_native_\w+", sql))
    assert called == set(_native.FUNCTIONS) == set(_native._PROBES)
    assert _native.missing_functions(raw_connection(extension)) == []


@pytest.mark.long
def test_a_stale_extension_missing_a_function_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build of older sources: it loads and counts, but lacks the per-label aggregate."""
    renamed = '-DMLSQL_LABEL_TABLE_NAME="mlsql_absent_label_table"'
    stale = build_module().build(tmp_path, extra_flags=[renamed])
    monkeypatch.setenv(_native.DUCKDB_PATH_ENV, str(stale))
    monkeypatch.delenv(_native.ENV, raising=False)
    status = _native.duckdb_native_status()
    assert status["built"] and not status["available"] and not status["enabled"]
    assert status["reason"] == (
        f"the extension at {stale} lacks mlsql_native_label_table "
        "(built from older sources? rebuild it with native/build_duckdb.py)"
    )
    con = mlsql.connect()
    assert not uses_native(con) and not uses_native_table(con)
    table = pa.table({"a": [["x", "y"], ["z"]], "p": [["x"], ["z", "w"]]})
    assert table_rows(con, table, "SELECT micro_f1(a, p) FROM t")[0] == [(2 * 2 / (3 + 3),)]
    got = table_rows(con, table, "SELECT label, tp, fp, fn FROM label_metrics('t', 'a', 'p')")
    assert got[0] == [("w", 0, 1, 0), ("x", 1, 0, 0), ("y", 0, 0, 1), ("z", 1, 0, 0)]


def test_old_duckdb_is_not_tried(native: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_native, "duckdb_version", lambda: (1, 2, 2))
    status = _native.duckdb_native_status()
    assert not status["available"] and "older than 1.3.2" in status["reason"]
    assert not uses_native(mlsql.connect())


def test_path_with_a_quote_is_only_a_path(extension: Path, tmp_path: Path) -> None:
    """The LOAD statement quotes the path: a hostile folder name stays a name."""
    folder = tmp_path / "x'; SELECT error('injected'); --"
    folder.mkdir()
    copy = folder / "mlsql.duckdb_extension"
    shutil.copy(extension, copy)
    con = raw_connection(copy)
    assert con.execute("SELECT mlsql_native_counts(['a'], ['a'])").fetchall()[0][0]["tp"] == 1


def test_footer_layout() -> None:
    """DuckDB's footer: 22-byte section header, 8 fields of 32 bytes, a 256-byte signature."""
    build = build_module()
    f = build.footer("linux_amd64", "v0.1.0")
    assert len(f) == 22 + 8 * 32 + 256
    assert f[4:20] == b"duckdb_signature"
    fields = [f[22 + 32 * i : 22 + 32 * (i + 1)].rstrip(b"\0") for i in range(8)]
    assert fields == [b"", b"", b"", b"C_STRUCT", b"v0.1.0", b"v1.2.0", b"linux_amd64", b"4"]


# ---------------------------------------------------------------- label scores (issue 15)

#: text labels (the empty one, one past DuckDB's 12 inlined bytes) and integers at the ends
#: of BIGINT; the last label of each pool is never true (no positives)
SCORE_POOLS: dict[str, tuple[pa.DataType, list[Any]]] = {
    "text": (pa.string(), ["a", "", "label-longer-than-twelve", "b", "never"]),
    "int": (pa.int64(), [-(2**63), -1, 0, 2**40, 2**63 - 1]),
}
SCORE_ZERO_DIVISIONS = (0, 1, math.nan, "diagnose", "ignore")


def uses_native_scores(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection's label-score macros call the extension's aggregate."""
    rows = con.execute(
        "SELECT macro_definition FROM duckdb_functions() WHERE function_name = 'multilabel_roc_auc'"
    ).fetchall()
    return bool(rows) and all(LABEL_SCORES in definition for (definition,) in rows)


def first_scores(pairs: Any) -> Any:
    """A row's (label, score) pairs as the score map they mean: a label's first entry counts,
    a NULL label is no label."""
    if pairs is None:
        return None
    out: dict[Any, Any] = {}
    for label, score in pairs:
        if label is not None and label not in out:
            out[label] = score
    return out


def score_groups(seed: Any, pool: list[Any], form: str) -> dict[int, list[tuple[Any, Any, Any]]]:
    """Groups of (score pairs, actual, integer weight) rows: ties (-0.0 tied with 0.0), NULL
    scores, unscored true labels, repeated and NULL labels (list form), NULL rows and weights,
    weight 0, a label never true, a group of unknown rows, a group whose weights are all 0."""
    rng = random.Random(f"label-scores-{seed}-{form}")
    never = pool[-1]

    def row() -> tuple[Any, Any, Any]:
        r = rng.random()
        if r < 0.05:
            return None, [pool[0]], 1
        if r < 0.1:
            return [(pool[0], 0.3)], None, 2
        pairs = [
            (x, rng.choice([0.1, 0.5, 0.5, 0.9, 0.0, -0.0, None]))
            for x in pool
            if rng.random() < 0.6
        ]
        rng.shuffle(pairs)
        if form == "list" and pairs and rng.random() < 0.3:
            pairs.append((pairs[0][0], 0.77))  # a repeated label: the first entry counts
        if form == "list" and rng.random() < 0.1:
            pairs.append((None, 0.4))
        actual = [x for x in pool if x != never and rng.random() < 0.35]
        if actual and rng.random() < 0.2:
            actual += [actual[0], None]
        return pairs, actual, rng.choice([0, 1, 1, 2, 3, None])

    groups = {g: [row() for _ in range(rng.randint(3, 12))] for g in range(3)}
    groups[0][0] = (groups[0][0][0] or [], groups[0][0][1] or [], 2)  # a known row weighing 2
    groups[3] = [(None, [pool[0]], 1), ([(pool[1], 0.5)], None, 1)]  # every row unknown
    groups[4] = [([(pool[0], 0.5)], [pool[0]], 0), ([(pool[1], 0.2)], [], 0)]  # all weigh 0
    return groups


def score_table(
    groups: dict[int, list[tuple[Any, Any, Any]]], key: pa.DataType, form: str
) -> pa.Table:
    flat = [(g, s, a, w) for g, rows in groups.items() for s, a, w in rows]
    return pa.table(
        {
            "g": pa.array([g for g, *_ in flat], pa.int64()),
            "scores": O.score_column([s for _, s, _, _ in flat], form, key),
            "actual": pa.array([a for _, _, a, _ in flat], pa.list_(key)),
            "w": pa.array([w for *_, w in flat], pa.int64()),
        }
    )


def score_calls(weighted: bool) -> list[str]:
    weight = ", sample_weight := w" if weighted else ""
    return [
        f"{name}(actual, scores{weight}, average := {lit(average)}, zero_division := {lit(zd)})"
        for name in ("multilabel_average_precision", "multilabel_roc_auc")
        for average in O.SCORE_AVERAGES
        for zd in SCORE_ZERO_DIVISIONS
    ]


def score_expected(rows: list[tuple[Any, Any, Any]], call: str, weighted: bool) -> Any:
    """The oracle (tests/oracle_ranking.py, checked against scikit-learn) of one call: integer
    weights as rows repeated ``w`` times; known rows that all weigh 0 give zero_division."""
    name = call.split("(", 1)[0]
    average = re.search(r"average := '(\w+)'", call).group(1)  # type: ignore[union-attr]
    zd_text = re.search(r"zero_division := (.+)\)$", call).group(1)  # type: ignore[union-attr]
    zd: Any = {"'nan'": math.nan, "'diagnose'": "diagnose", "'ignore'": "ignore"}.get(zd_text)
    if zd is None:
        zd = math.nan if "nan" in zd_text.lower() else int(zd_text)
    if weighted:
        known = [(s, a, w) for s, a, w in rows if s is not None and a is not None and w is not None]
        if known and all(w == 0 for *_, w in known):
            return None if zd == "ignore" else 1.0 if zd == "diagnose" else float(zd)
        rows = [(s, a, 1) for s, a, w in known for _ in range(w)]
    plain = [(first_scores(s), a) for s, a, _ in rows]
    return getattr(O, name)(plain, average, zd)


@pytest.mark.long
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("form", O.FORMS)
@pytest.mark.parametrize("kind", list(SCORE_POOLS))
def test_label_scores_equal_portable_and_oracle(
    both: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection],
    kind: str,
    form: str,
    weighted: bool,
) -> None:
    """Every average and zero_division under GROUP BY, native and portable, to 1e-12 (each
    parameter set its own random groups)."""
    key, pool = SCORE_POOLS[kind]
    fast, slow = both
    assert uses_native_scores(fast) and not uses_native_scores(slow)
    groups = score_groups(f"{kind}-{weighted}", pool, form)
    table = score_table(groups, key, form)
    calls = score_calls(weighted)
    sql = f"SELECT g, {', '.join(calls)} FROM t GROUP BY g ORDER BY g"
    got_fast, got_slow = table_rows(fast, table, sql), table_rows(slow, table, sql)
    assert not isinstance(got_fast, str), got_fast
    assert not isinstance(got_slow, str), got_slow
    assert [r[0] for r in got_fast[0]] == sorted(groups)
    wrong = []
    for row_fast, row_slow in zip(got_fast[0], got_slow[0], strict=True):
        g = row_fast[0]
        for call, f, s in zip(calls, row_fast[1:], row_slow[1:], strict=True):
            want = score_expected(groups[g], call, weighted)
            for path, value in (("native", f), ("portable", s)):
                if not close12(value, want):
                    wrong.append(f"group {g} {path} {call}: {value!r}, want {want!r}")
    assert not wrong, "\n".join(wrong[:20])


def close12(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, float) and math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, float(want), rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.long
def test_label_scores_over_many_vectors_and_threads_are_scikit_learns(
    both: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection],
) -> None:
    """4,200 rows (three DuckDB vectors) on two threads, whose states DuckDB merges: the
    native macros equal scikit-learn, float weights too, to 1e-12."""
    rng = random.Random("label-scores-threads")
    labels = [f"l{i}" for i in range(12)] + ["label-longer-than-twelve"]
    rows, weights = [], []
    for i in range(4_200):
        scores = {x: rng.choice([0.1, 0.25, 0.5, 0.75, 0.9, rng.random()]) for x in labels}
        truth = [x for j, x in enumerate(labels) if j == i % len(labels) or rng.random() < 0.3]
        rows.append((scores, truth))
        weights.append(rng.choice([0.5, 1.0, 2.0, rng.random() * 3]))
    y = np.array([[int(x in a) for x in labels] for _, a in rows])
    s = np.array([[sc[x] for x in labels] for sc, _ in rows])
    table = pa.table(
        {
            "scores": O.score_column([sc for sc, _ in rows]),
            "actual": pa.array([a for _, a in rows], pa.list_(pa.string())),
            "w": pa.array(weights, pa.float64()),
        }
    )
    # batches of 500 rows: both threads scan some (one batch is one thread's), so DuckDB
    # merges their states
    table = pa.Table.from_batches(table.to_batches(max_chunksize=500))
    calls, expected = [], []
    for name, fn in (
        ("multilabel_average_precision", average_precision_score),
        ("multilabel_roc_auc", roc_auc_score),
    ):
        for average in O.SCORE_AVERAGES:
            for weighted in (False, True):
                weight = ", sample_weight := w" if weighted else ""
                calls.append(f"{name}(actual, scores{weight}, average := {lit(average)})")
                sw = weights if weighted else None
                expected.append(float(fn(y, s, average=average, sample_weight=sw)))
    sql = f"SELECT {', '.join(calls)} FROM t"
    fast, _ = both
    assert uses_native_scores(fast)
    fast.execute("SET threads = 2")
    got = table_rows(fast, table, sql)
    assert not isinstance(got, str), got
    wrong = [
        f"{call}: {f!r}, scikit-learn {want!r}"
        for call, f, want in zip(calls, got[0][0], expected, strict=True)
        if not math.isclose(f, want, rel_tol=1e-12)
    ]
    assert not wrong, "\n".join(wrong)


def test_label_scores_of_other_label_types_are_refused_alike(
    both: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection],
) -> None:
    """DECIMAL and BOOLEAN labels are no labels (DESIGN: text or integers), on both paths with
    one message, as in Polars and Spark (issue 35's catalogue)."""
    fast, slow = both
    for sql, got in (
        (
            "SELECT multilabel_roc_auc(a, s, average := 'macro') FROM (VALUES "
            "([1.5, 2.5], MAP {1.5: 0.3, 2.5: 0.1, 3.5: 0.7}), ([3.5], MAP {1.5: 0.9, 3.5: 0.2})) "
            "t(a, s)",
            "DECIMAL(2,1)[]",
        ),
        (
            "SELECT multilabel_average_precision(a, s, average := 'samples') FROM (VALUES "
            "([true], MAP {true: 0.3, false: 0.5}), ([false], MAP {true: 0.6})) t(a, s)",
            "BOOLEAN[]",
        ),
    ):
        messages = []
        for con in (fast, slow):
            with pytest.raises(duckdb.Error) as raised:
                con.execute(sql).fetchall()
            messages.append(str(raised.value))
        assert messages[0] == messages[1]
        assert "takes labels that are text or integers" in messages[0]
        assert f"Got actual {got}." in messages[0]


def test_label_scores_aggregate_refuses_a_mismatched_row(extension: Path) -> None:
    """Score labels and scores of different lengths, or two modes in one group: an error."""
    con = raw_connection(extension)
    with pytest.raises(duckdb.Error, match="differ in length"):
        con.execute("SELECT mlsql_native_label_scores(['a'], ['a', 'b'], [0.5], 1.0, 0)").fetchall()
    with pytest.raises(duckdb.Error, match="two modes"):
        con.execute(
            "SELECT mlsql_native_label_scores(['a'], ['a'], [0.5], 1.0, m::INTEGER) "
            "FROM range(2) r(m)"
        ).fetchall()
    empty = con.execute(
        "SELECT mlsql_native_label_scores([]::INT[], []::INT[], []::DOUBLE[], 1.0, 1), "
        "mlsql_native_label_scores(NULL::INT[], [1], [0.5], 1.0, 1) "
    ).fetchall()
    assert empty == [({"nu": 0, "segs": []}, {"nu": 0, "segs": []})]


@pytest.mark.long
def test_a_stale_extension_without_label_scores_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build of the sources before issue 15's aggregate: the probe refuses it, the label-score
    macros stay portable and give their numbers."""
    renamed = '-DMLSQL_LABEL_SCORES_NAME="mlsql_absent_label_scores"'
    stale = build_module().build(tmp_path, extra_flags=[renamed])
    monkeypatch.setenv(_native.DUCKDB_PATH_ENV, str(stale))
    monkeypatch.delenv(_native.ENV, raising=False)
    status = _native.duckdb_native_status()
    assert not status["available"] and f"lacks {LABEL_SCORES} " in status["reason"]
    con = mlsql.connect()
    assert not uses_native_scores(con)
    sql = (
        "SELECT multilabel_roc_auc(a, s, average := 'micro') FROM (VALUES "
        "(['x'], MAP {'x': 0.5, 'y': 0.5}), (['y'], MAP {'x': 0.2})) t(a, s)"
    )
    # cells: x 0.5 +, y 0.5 -, x 0.2 -, y -inf +: U = 1/2 + 1 + 0 = 3/2 of 2 x 2 pairs
    assert con.execute(sql).fetchall() == [(0.375,)]


@pytest.mark.long
def test_label_scores_over_many_groups_equal_portable(
    both: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection],
) -> None:
    """3,000 groups of 1-4 rows on two threads (DuckDB's hash aggregate combines partitioned
    states): every average, weighted and not, equal to the portable macros to 1e-12."""
    rng = random.Random("label-scores-groups")
    labels = ["a", "b", "c", "label-longer-than-twelve"]
    flat = []
    for g in range(3000):
        for _ in range(rng.randint(1, 4)):
            scores = {x: rng.choice([0.2, 0.5, rng.random()]) for x in labels if rng.random() < 0.7}
            truth = [x for x in labels if rng.random() < 0.4]
            flat.append((g, scores, truth, rng.choice([0.0, 0.5, 1.0, 2.5])))
    rng.shuffle(flat)
    table = pa.table(
        {
            "g": pa.array([g for g, *_ in flat], pa.int64()),
            "scores": O.score_column([s for _, s, _, _ in flat]),
            "actual": pa.array([a for _, _, a, _ in flat], pa.list_(pa.string())),
            "w": pa.array([w for *_, w in flat], pa.float64()),
        }
    )
    table = pa.Table.from_batches(table.to_batches(max_chunksize=500))  # both threads scan
    calls = [
        f"{name}(actual, scores{weight}, average := {lit(average)}, zero_division := 'nan')"
        for name in ("multilabel_average_precision", "multilabel_roc_auc")
        for average in O.SCORE_AVERAGES
        for weight in ("", ", sample_weight := w")
    ]
    sql = f"SELECT g, {', '.join(calls)} FROM t GROUP BY g ORDER BY g"
    fast, slow = both
    assert uses_native_scores(fast)
    fast.execute("SET threads = 2")
    got_fast, got_slow = table_rows(fast, table, sql), table_rows(slow, table, sql)
    assert not isinstance(got_fast, str), got_fast
    assert not isinstance(got_slow, str), got_slow
    assert len(got_fast[0]) == len(got_slow[0]) == 3000
    wrong = [
        f"group {f[0]} {call}: native {x!r}, portable {y!r}"
        for f, s in zip(got_fast[0], got_slow[0], strict=True)
        for call, x, y in zip(calls, f[1:], s[1:], strict=True)
        if not close12(x, y)
    ]
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.parametrize("t", ["TINYINT", "SMALLINT", "UINTEGER", "UBIGINT", "HUGEINT", "UHUGEINT"])
def test_label_scores_of_every_integer_type_equal_portable(
    both: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection], t: str
) -> None:
    """Integer labels of each width (the native overloads) against the portable macros, the
    actual lists of another width than the score maps' keys (cast to their common type)."""
    fast, slow = both
    m = f"MAP({t}, DOUBLE)"
    rows = (
        f"([1, 2]::TINYINT[], MAP {{1: 0.5, 3: 0.5, 100: 0.1}}::{m}), "
        f"([3]::TINYINT[], MAP {{1: 0.2, 2: 0.9}}::{m}), "
        f"([100, 2]::TINYINT[], MAP {{100: 0.9, 3: 0.1}}::{m})"
    )
    calls = ", ".join(
        f"{name}(a, s, average := {lit(average)})"
        for name in ("multilabel_average_precision", "multilabel_roc_auc")
        for average in O.SCORE_AVERAGES
    )
    sql = f"SELECT {calls} FROM (VALUES {rows}) v(a, s)"
    plan = fast.execute(f"EXPLAIN {sql}").fetchall()[0][1]
    assert LABEL_SCORES in plan
    got, want = fast.execute(sql).fetchall()[0], slow.execute(sql).fetchall()[0]
    assert all(close12(g, w) for g, w in zip(got, want, strict=True)), (got, want)


def _table_rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[Any, ...]] | str:
    """The rows of ``sql``, or its error's message."""
    try:
        return con.execute(sql).fetchall()
    except duckdb.Error as error:
        return str(error)


def _close_rows(fast: list[tuple[Any, ...]] | str, slow: list[tuple[Any, ...]] | str) -> bool:
    """Row lists equal, floats to 1e-12 relative (weighted sums add in another order); or
    one error message."""
    if isinstance(fast, str) or isinstance(slow, str):
        return fast == slow
    if len(fast) != len(slow):
        return False
    for x, y in zip(fast, slow, strict=True):
        for a, b in zip(x, y, strict=True):
            if isinstance(a, float) and isinstance(b, float):
                if not (
                    a == b or (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-12)
                ):
                    return False
            elif a != b:
                return False
    return True


@pytest.mark.parametrize("kind", ["text", "integer", "double", "entries"])
def test_curve_and_threshold_tables_equal_portable(
    both: tuple[duckdb.DuckDBPyConnection, duckdb.DuckDBPyConnection], kind: str
) -> None:
    """The tables over the extension's cell aggregate (mlsql.connect()) give the portable
    tables' rows: per label and binary curves, label_thresholds exact and binned, weighted
    and not, in groups, on two threads; score ties, NULL scores, labels true but never scored
    and scored but never true; DOUBLE labels (compared as text, cast back: the curves; the
    thresholds refuse them, with the same message)."""
    fast, slow = both
    rng = random.Random(f"native-tables-{kind}")
    pool: list[Any] = {
        "text": ["a", "b", "c", "label-longer-than-twelve", "never-scored"],
        "integer": [1, 2, 3, -7, 2**40],
        "double": [1.5, 2.5, -0.5, 10.0, 99.0],
        "entries": ["a", "b", "c", "d", "never-scored"],
    }[kind]
    rows = []
    for i in range(4000):
        scored = [x for x in pool[:-1] if rng.random() < 0.6]
        scores = {x: rng.choice([0.2, 0.5, 0.9, round(rng.random(), 2), None]) for x in scored}
        truth = [x for x in pool if rng.random() < 0.35]
        rows.append((i % 7, scores, truth, rng.choice([0.5, 1.0, 2.5, 0.0]), rng.random() < 0.5))
    label_type = {
        "text": pa.string(),
        "integer": pa.int64(),
        "double": pa.float64(),
        "entries": pa.string(),
    }[kind]
    if kind == "entries":
        scores_col = pa.array(
            [[{"label": k, "score": v} for k, v in s.items()] for _, s, *_ in rows],
            pa.list_(pa.struct([("label", pa.string()), ("score", pa.float64())])),
        )
    else:
        scores_col = pa.array(
            [list(s.items()) for _, s, *_ in rows], pa.map_(label_type, pa.float64())
        )
    table = pa.table(
        {
            "grp": pa.array([g for g, *_ in rows], pa.int64()),
            "scores": scores_col,
            "actual": pa.array([a for _, _, a, _, _ in rows], pa.list_(label_type)),
            "w": pa.array([w for *_, w, _ in rows], pa.float64()),
            "y": pa.array([y for *_, y in rows], pa.bool_()),
            "p": pa.array([round(rng.random(), 1) for _ in rows], pa.float64()),
        }
    )
    table = pa.Table.from_batches(table.to_batches(max_chunksize=500))  # both threads scan
    calls = [
        "roc_curve('t', 'actual', 'scores')",
        "precision_recall_curve('t', 'actual', 'scores', sample_weight := 'w', \"by\" := ['grp'])",
        "roc_curve('t', 'y', 'p', sample_weight := 'w')",
        "roc_curve('t', 'actual', 'scores', drop_intermediate := true, \"by\" := ['grp'])",
        "det_curve('t', 'actual', 'scores', sample_weight := 'w')",
        "det_curve('t', 'y', 'p', \"by\" := ['grp'])",
        "precision_recall_curve('t', 'y', 'p', \"by\" := ['grp'])",
        "label_thresholds('t', 'actual', 'scores')",
        "label_thresholds('t', 'actual', 'scores', sample_weight := 'w', beta := 2, \"by\" := ['grp'])",
        "label_thresholds('t', 'actual', 'scores', n_bins := 4)",
    ]
    for con in (fast, slow):
        con.register("t", table)
        con.execute("SET threads = 2")
    try:
        assert uses_native_tables(fast) and not uses_native_tables(slow)
        for call in calls:
            got, want = _table_rows(fast, f"FROM {call}"), _table_rows(slow, f"FROM {call}")
            assert want and _close_rows(got, want), (call, got, want)
            # DOUBLE labels: label_thresholds refuses them on both paths, the curves take them
            assert isinstance(want, str) == (kind == "double" and "thresholds" in call)
    finally:
        for con in (fast, slow):
            con.unregister("t")


def uses_native_tables(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection's label_thresholds calls the extension's cell aggregate."""
    rows = con.execute(
        "SELECT macro_definition FROM duckdb_functions() WHERE function_name = 'label_thresholds'"
    ).fetchall()
    return any(_native.LABEL_CELLS in str(r[0]) for r in rows)


def test_label_cells_aggregate_takes_only_its_mode(extension: Path) -> None:
    """The cell aggregate refuses the label-score modes, and the label-score aggregate the cell
    mode (each emits only its own table); no rows or a NULL row: no cells."""
    con = raw_connection(extension)
    with pytest.raises(duckdb.Error, match="mlsql_native_label_cells: a mode out of range"):
        con.execute("SELECT mlsql_native_label_cells(['a'], ['a'], [0.5], 1.0, 1)").fetchall()
    with pytest.raises(duckdb.Error, match="mlsql_native_label_scores: a mode out of range"):
        con.execute("SELECT mlsql_native_label_scores(['a'], ['a'], [0.5], 1.0, 3)").fetchall()
    empty = con.execute(
        "SELECT mlsql_native_label_cells([]::INT[], []::INT[], []::DOUBLE[], 1.0, 3), "
        "mlsql_native_label_cells(NULL::INT[], [1], [0.5], 1.0, 3)"
    ).fetchall()
    assert empty == [([], [])]


@pytest.mark.long
def test_a_stale_extension_without_label_cells_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build of the sources before the cell aggregate: the probe refuses it, and the curve
    and threshold tables stay portable and give scikit-learn's points."""
    renamed = '-DMLSQL_LABEL_CELLS_NAME="mlsql_absent_label_cells"'
    stale = build_module().build(tmp_path, extra_flags=[renamed])
    monkeypatch.setenv(_native.DUCKDB_PATH_ENV, str(stale))
    monkeypatch.delenv(_native.ENV, raising=False)
    status = _native.duckdb_native_status()
    assert not status["available"] and f"lacks {_native.LABEL_CELLS}" in status["reason"]
    con = mlsql.connect()
    assert not uses_native_tables(con)
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES (1, 0.9), (0, 0.4), (1, 0.4)) v(y, s)")
    got = con.execute("SELECT threshold, fpr, tpr FROM roc_curve('t', 'y', 's')").fetchall()
    assert got == [(math.inf, 0.0, 0.0), (0.9, 0.0, 0.5), (0.4, 1.0, 1.0)]
