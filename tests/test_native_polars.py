"""mlsql's native Polars plugin (native/polars_plugin.c) against the portable expressions and the oracle.

The plugin is compiled once for this session (native/build_polars.py) and
chosen with ``MLSQL_POLARS_PLUGIN``. Random frames carry NULL lists, NULL
elements, duplicates, empty and long lists, labels longer than 12 bytes
(string views keep those out of line), integers of several widths, several
chunks chunked differently per column, and sliced arrays; every statistic
and measure must equal the oracle (tests/oracle.py) and the portable
expressions (``MLSQL_NATIVE=0``), in memory and on the streaming engine.

The label-score aggregates (``multilabel_average_precision``,
``multilabel_roc_auc``) are checked the same way on random groups of score
lists with ties (-0.0 and 0.0, an explicit -inf beside the unscored cells),
NULL entries, labels and scores, labels scored twice, NULL rows and weights,
weights of 0, and integer labels of two widths: per group equal to the
portable expressions to 1e-12 (select, group_by, over; in memory and
streaming) and to the oracle (tests/oracle_ranking.py, itself checked against
scikit-learn). NaN scores, which both paths (as DuckDB) rank above +infinity,
are checked against scikit-learn in tests/test_label_scores_nan.py.
"""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import math
import os
import random
import shutil
import subprocess
import sys
import textwrap
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mlsql.polars as mp
from mlsql._errors import MlsqlError
from mlsql.polars import _lowering as S
from mlsql.polars import _native
from tests import oracle, oracle_labels
from tests import oracle_ranking as O
from tests.test_multilabel_properties import same
from tests.test_native_duckdb import first_scores
from tests.test_polars_streaming import FALLBACK_NODES, physical_nodes

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
SHORT = ["a", "b", "c", "d"]
LONG = ["label-longer-than-twelve-1", "label-longer-than-twelve-2", "x" * 40]
INT_TYPES = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64]
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
    ("hamming_loss", {"n_labels": 128}),  # every distinct label int_rows and text_rows draw
]


def _build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "build_polars", ROOT / "native" / "build_polars.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: a prebuilt plugin for this test file to use (the sanitizer run passes its own build)
PREBUILT_ENV = "MLSQL_TEST_POLARS_PLUGIN"


@pytest.fixture(scope="session")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin, compiled for this session (a C compiler is required: never skipped)."""
    prebuilt = os.environ.get(PREBUILT_ENV)
    if prebuilt:
        return Path(prebuilt)
    return _build_module().build(tmp_path_factory.mktemp("plugin"))


@pytest.fixture
def native(plugin: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Expressions built under this fixture use the session's plugin."""
    monkeypatch.setenv(_native.PATH_ENV, str(plugin))
    monkeypatch.delenv(_native.ENV, raising=False)
    status = _native.polars_native_status()
    assert status["enabled"], status
    return plugin


def portable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_native.ENV, "0")


def uses_plugin(expr: pl.Expr, frame: pl.DataFrame) -> bool:
    return "mlsql_polars_plugin" in frame.lazy().select(expr).explain()


# ---------------------------------------------------------------- random frames
def label_list(labels: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """NULL, or a list with duplicates and NULL elements: usually short, sometimes 30-200 long."""
    return st.one_of(
        st.none(),
        st.lists(labels, max_size=6),
        st.lists(labels, min_size=30, max_size=200),
    )


def text_rows() -> st.SearchStrategy[list[tuple[Any, Any]]]:
    labels = st.sampled_from([*SHORT, *LONG, None])
    return st.lists(st.tuples(label_list(labels), label_list(labels)), max_size=25)


def int_rows() -> st.SearchStrategy[list[tuple[Any, Any]]]:
    labels = st.one_of(st.none(), st.integers(0, 12), st.integers(0, 127))
    return st.lists(st.tuples(label_list(labels), label_list(labels)), max_size=25)


def chunked(series: pl.Series, cuts: list[int]) -> pl.Series:
    """``series`` as several chunks, cut at ``cuts`` (positions, any order)."""
    bounds = sorted({0, len(series), *(c % (len(series) + 1) for c in cuts)})
    parts = [series.slice(lo, hi - lo) for lo, hi in itertools.pairwise(bounds)]
    return pl.concat(parts, rechunk=False) if parts else series


def frame(
    rows: list[tuple[Any, Any]],
    dtypes: tuple[pl.DataType, pl.DataType],
    cuts: tuple[list[int], list[int]] = ([], []),
    prefix: int = 0,
) -> pl.DataFrame:
    """The rows as (a, p), chunked per column at ``cuts``, after slicing ``prefix`` rows off."""
    filler = [(["a"] if dtypes[0].inner == pl.String else [1], None)] * prefix  # type: ignore[attr-defined]
    all_rows = filler + rows
    columns = {}
    for i, name in enumerate(("a", "p")):
        values = [r[i] for r in all_rows]
        series = pl.Series(name, values, dtype=dtypes[i]).slice(prefix)
        columns[name] = chunked(series, cuts[i])
    return pl.DataFrame(columns)


def oracle_counts(rows: list[tuple[Any, Any]]) -> list[tuple[Any, Any, Any]]:
    out = []
    for a, p in rows:
        sa, sp = oracle.as_set(a), oracle.as_set(p)
        out.append((None,) * 3 if sa is None or sp is None else (len(sa & sp), len(sa), len(sp)))
    return out


def plugin_counts(df: pl.DataFrame, plugin: Path, engine: str = "in-memory") -> list[Any]:
    """The plugin's set_counts; its packed form (set_counts_packed) must hold the same counts."""
    counts = _native._call(plugin, "set_counts", pl.col("a"), pl.col("p")).alias("c")
    packed = _native._call(plugin, _native.PACKED, pl.col("a"), pl.col("p")).alias("x")
    out = df.lazy().select(counts, packed).collect(engine=engine)  # type: ignore[arg-type]
    rows = out.select("c").unnest("c").rows()
    unpacked = [
        (None,) * 3 if x is None else (x % 2**42, x // 2**42 % 2**42, x // 2**84)
        for x in out["x"].to_list()
    ]
    assert unpacked == rows, (unpacked, rows)
    return rows


def measures(df: pl.DataFrame, engine: str) -> dict[str, Any]:
    exprs = [getattr(mp, name)("a", "p", **params).alias(name) for name, params in MEASURES]
    return df.lazy().select(exprs).collect(engine=engine).row(0, named=True)  # type: ignore[arg-type]


def check_measures(df: pl.DataFrame, rows: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every measure equals the oracle, natively and portably, in memory and streaming."""
    engines = ("in-memory", "streaming")
    native_values = {engine: measures(df, engine) for engine in engines}
    with monkeypatch.context() as m:
        portable(m)
        portable_values = {engine: measures(df, engine) for engine in engines}
    for name, params in MEASURES:
        want = oracle.aggregate(name, rows, **params)
        for engine in engines:
            assert same(native_values[engine][name], want), (name, engine, native_values, want)
            assert same(portable_values[engine][name], want), (name, engine, portable_values, want)
    counts = oracle.multilabel_counts(rows)
    for engine in engines:
        got = df.lazy().select(mp.multilabel_counts("a", "p")).collect(engine=engine).item()  # type: ignore[arg-type]
        assert got == counts if counts["n_rows"] else got["n_rows"] == 0, (engine, got, counts)


# ---------------------------------------------------------------- the plugin's counts
@SETTINGS
@given(rows=text_rows(), cuts=st.tuples(st.lists(st.integers(0, 30)), st.lists(st.integers(0, 30))))
def test_text_counts_equal_the_oracle_over_any_chunking(
    plugin: Path, rows: list[Any], cuts: tuple[list[int], list[int]]
) -> None:
    df = frame(rows, (pl.List(pl.String), pl.List(pl.String)), cuts)
    want = oracle_counts(rows)
    assert plugin_counts(df, plugin) == want
    assert plugin_counts(df, plugin, "streaming") == want


@SETTINGS
@given(
    rows=int_rows(),
    types=st.tuples(st.sampled_from(INT_TYPES), st.sampled_from(INT_TYPES)),
    cuts=st.tuples(st.lists(st.integers(0, 30)), st.lists(st.integers(0, 30))),
    prefix=st.integers(0, 5),
)
def test_integer_counts_of_any_widths_equal_the_oracle(
    plugin: Path, rows: list[Any], types: tuple[Any, Any], cuts: Any, prefix: int
) -> None:
    df = frame(rows, (pl.List(types[0]), pl.List(types[1])), cuts, prefix)
    assert plugin_counts(df, plugin) == oracle_counts(rows)


def test_sliced_arrays_are_read_from_their_offset(plugin: Path) -> None:
    rows = [(["x", None, "y" * 20], ["y" * 20]), (None, ["a"]), ([], []), (["b", "b"], ["b", "c"])]
    whole = frame([(["q"] * 40, ["q"])] * 7 + rows, (pl.List(pl.String), pl.List(pl.String)))
    sliced = whole.slice(7)
    assert sliced["a"].to_arrow().offset > 0 or sliced["a"].n_chunks() == 1
    assert plugin_counts(sliced, plugin) == oracle_counts(rows)
    ints = frame([(None, [1])] * 3 + [([1, 2, None], [2]), ([9], None)], (pl.List(pl.Int16),) * 2)
    assert plugin_counts(ints.slice(3), plugin) == [(1, 2, 1), (None, None, None)]


def test_uint64_above_int64_matches_nothing_signed(plugin: Path) -> None:
    df = pl.DataFrame(
        {"a": [[2**64 - 1, 1, 2**63]], "p": [[-1, 1, -(2**63)]]},
        schema={"a": pl.List(pl.UInt64), "p": pl.List(pl.Int64)},
    )
    assert plugin_counts(df, plugin) == [(1, 3, 3)]
    both = df.with_columns(pl.col("a").alias("p"))
    assert plugin_counts(both, plugin) == [(3, 3, 3)]


def test_all_null_lists_and_null_elements(plugin: Path) -> None:
    df = pl.DataFrame({"a": [[None, None], [], None], "p": [["x"], [None], ["y"]]})
    assert df["a"].dtype == pl.List(pl.Null)
    assert plugin_counts(df, plugin) == [(0, 0, 1), (0, 0, 0), (None, None, None)]


def test_the_plugin_refuses_other_label_types_with_a_message(plugin: Path) -> None:
    df = pl.DataFrame({"a": [[1.5]], "p": [[1.5]]})
    with pytest.raises(pl.exceptions.ComputeError, match="unsupported Arrow format 'g'"):
        plugin_counts(df, plugin)
    with pytest.raises(pl.exceptions.ComputeError, match="different kinds of labels"):
        plugin_counts(pl.DataFrame({"a": [[1]], "p": [["1"]]}), plugin)


# ---------------------------------------------------------------- mlsql.polars on the plugin
@pytest.mark.long
@SETTINGS
@given(rows=text_rows(), cuts=st.tuples(st.lists(st.integers(0, 30)), st.lists(st.integers(0, 30))))
def test_measures_equal_the_oracle_and_the_portable_expressions(
    native: Path, monkeypatch: pytest.MonkeyPatch, rows: list[Any], cuts: Any
) -> None:
    check_measures(frame(rows, (pl.List(pl.String),) * 2, cuts), rows, monkeypatch)


@pytest.mark.long
@SETTINGS
@given(rows=int_rows(), types=st.tuples(st.sampled_from(INT_TYPES), st.sampled_from(INT_TYPES)))
def test_integer_measures_equal_the_oracle(
    native: Path, monkeypatch: pytest.MonkeyPatch, rows: list[Any], types: Any
) -> None:
    check_measures(frame(rows, (pl.List(types[0]), pl.List(types[1]))), rows, monkeypatch)


def test_measures_use_the_plugin_and_not_when_switched_off(
    native: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    df = pl.DataFrame({"a": [["x", "y"], None], "p": [["x"], ["z"]]})
    for name, params in MEASURES:
        assert uses_plugin(getattr(mp, name)("a", "p", **params), df), name
    assert uses_plugin(mp.true_positives("a", "p"), df)
    native_values = measures(df, "streaming")
    portable(monkeypatch)
    assert _native.polars_native_status() | {"path": None} == {
        "enabled": False,
        "available": True,
        "path": None,
        "polars": pl.__version__,
        "reason": "MLSQL_NATIVE=0",
    }
    assert not uses_plugin(mp.micro_f1("a", "p"), df)
    assert measures(df, "streaming") == native_values


@pytest.mark.parametrize(
    ("name", "calls"),
    [
        ("samples_f1", {"set_counts": 1}),
        ("samples_recall", {"set_counts": 1}),
        ("subset_accuracy", {"set_counts": 1}),
        ("row_precision", {"set_counts": 1}),
        ("true_positives", {"set_tp": 1}),
        ("micro_f1", {"set_counts_packed": 1}),  # one packed sum of the plugin's Int128
        ("micro_precision", {"set_counts_packed": 1}),
        # its row check reads |A| and |P| one by one: two packed in Polars, one alone
        ("hamming_loss", {"set_counts": 1, "set_n_actual": 1}),
        # the three counts from one packed sum; n_exact, a row test, from set_counts
        ("multilabel_counts", {"set_counts": 1, "set_counts_packed": 1}),
    ],
)
def test_each_row_statistic_is_computed_once(native: Path, name: str, calls: dict) -> None:
    """Row formulas and sums read tp, |A|, |P| from one set_counts; one statistic alone, set_tp."""
    lf = pl.LazyFrame({"a": [["x", "y"]], "p": [["x"]]})
    params = {"n_labels": 4} if name == "hamming_loss" else {}
    plan = lf.select(getattr(mp, name)("a", "p", **params)).explain(engine="streaming")
    names = ("set_counts", _native.PACKED, *_native.FIELDS.values())
    found = {f: plan.count(f":{f}(") for f in names}
    assert {f: n for f, n in found.items() if n} == calls, plan


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_packed_sums_are_exact_over_the_int64_range(engine: str) -> None:
    """Sums of fields of one struct come from one Int128 sum, unpacked exactly up to 2**63.

    Three 42-bit fields carried silently from one field into the next once a
    sum passed 2**42 (4.4e12 labels in a group): these sums are near 2**62.
    """
    big = 2**60 - 3
    lf = pl.LazyFrame({"x": [big, big, 5, None], "y": [1, big, big, None], "z": [big, 0, 7, None]})
    source = pl.struct(tp=pl.col("x"), n_actual=pl.col("y"), n_predicted=pl.col("z"))
    leaves = [S.share(pl.col(c), source, f) for c, f in zip("xyz", _native.FIELDS, strict=True)]
    x, y, z = (S.leaf(e, strict=True) for e in leaves)
    node = S.total(x) + S.total(y) - S.total(z)
    expr = S.Lowering(pl.col("x").is_not_null()).expr(node)
    assert lf.select(expr).explain().count(".sum()") == 2  # two fields packed, one alone
    got = lf.select(expr).collect(engine=engine).item()  # type: ignore[arg-type]
    assert got == (2 * big + 5) + (1 + 2 * big) - (big + 7)


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_packed_sum_beyond_int64_fails_instead_of_wrapping(engine: str) -> None:
    """A packed sum past the Int64 range is an error, never a silently wrong number."""
    big = 2**62
    lf = pl.LazyFrame({"x": [big, big, 1], "y": [big, big, big]})
    source = pl.struct(tp=pl.col("x"), n_actual=pl.col("y"))
    leaves = [S.share(pl.col(c), source, f) for c, f in zip("xy", _native.FIELDS, strict=False)]
    x, y = (S.leaf(e, strict=True) for e in leaves)
    for node in (S.total(x) - S.total(y), S.total(y) - S.total(x)):  # low field, then top field
        expr = S.Lowering(pl.col("x").is_not_null()).expr(node)
        with pytest.raises(pl.exceptions.InvalidOperationError):
            lf.select(expr).collect(engine=engine)  # type: ignore[arg-type]


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_offered_packing_is_exact_below_its_bound_and_refused_at_it(engine: str) -> None:
    """Three fields from one packed sum: exact while the bound's sum is below 2**bits, else an error.

    The plugin packs 42 bits a field (a group of 2**42 labels cannot be made in a
    test); the same mechanism at 4 bits: sums up to 15 unpack exactly, and a
    bound of 18 is refused even though these fields' sums would still fit.
    """
    bits = 4
    lf = pl.LazyFrame({"x": [1, 2, None], "y": [3, 4, None], "z": [5, 0, None], "b": [7, 7, 1]})
    fields = ("tp", "n_actual", "n_predicted")
    source = pl.struct(tp=pl.col("x"), n_actual=pl.col("y"), n_predicted=pl.col("z"))
    packed = sum(pl.col(c).cast(pl.Int128) * 2 ** (bits * i) for i, c in enumerate("xyz"))
    for bound, fails in ((pl.col("b"), False), (pl.col("b") + 1, True)):  # sums 15, then 18
        S.offer_packed(source, S.PackedFields(packed, fields, bits, bound))
        leaves = [S.share(pl.col(c), source, f) for c, f in zip("xyz", fields, strict=True)]
        x, y, z = (S.leaf(e, strict=True) for e in leaves)
        expr = S.Lowering(pl.col("x").is_not_null()).expr(
            S.total(x) * 100 + S.total(y) * 10 + S.total(z)
        )
        if fails:
            with pytest.raises(pl.exceptions.InvalidOperationError):
                lf.select(expr).collect(engine=engine)  # type: ignore[arg-type]
        else:
            assert lf.select(expr).explain().count(".sum()") == 2  # the packed sum and the bound's
            assert lf.select(expr).collect(engine=engine).item() == 3 * 100 + 7 * 10 + 5  # type: ignore[arg-type]


def test_missing_or_broken_library_falls_back_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    df = pl.DataFrame({"a": [["x", "y"], ["z"]], "p": [["x"], ["z", "w"]]})
    monkeypatch.setenv(_native.PATH_ENV, str(tmp_path / "absent.so"))
    assert _native.polars_native_status()["reason"].startswith("no plugin library")
    assert not uses_plugin(mp.micro_f1("a", "p"), df)
    broken = tmp_path / "broken.so"
    broken.write_bytes(b"not a library")
    monkeypatch.setenv(_native.PATH_ENV, str(broken))
    status = _native.polars_native_status()
    assert not status["available"] and status["reason"].startswith("the plugin did not load")
    assert df.select(mp.micro_f1("a", "p")).item() == pytest.approx(2 * 2 / (3 + 3))


@pytest.mark.long
def test_a_stale_library_missing_a_function_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a build of older sources: it loads and counts, but one function mlsql calls is absent
    renamed = "-D_polars_plugin_label_table_rows=mlsql_absent_label_table_rows"
    stale = _build_module().build(tmp_path, extra_flags=[renamed])
    monkeypatch.setenv(_native.PATH_ENV, str(stale))
    status = _native.polars_native_status()
    assert not status["available"] and not status["enabled"]
    assert status["reason"].startswith(f"the plugin at {stale} lacks")
    assert "_polars_plugin_label_table_rows" in status["reason"]
    assert "_polars_plugin_field_label_table_rows" not in status["reason"]
    df = pl.DataFrame({"a": [["x", "y"], ["z"]], "p": [["x"], ["z", "w"]]})
    assert not uses_plugin(mp.micro_f1("a", "p"), df)
    assert df.select(mp.micro_f1("a", "p")).item() == pytest.approx(2 * 2 / (3 + 3))


def test_the_probe_checks_every_function_mlsql_calls(plugin: Path) -> None:
    assert _native._missing_symbols(plugin) == []
    called = {"set_counts", _native.PACKED, "label_table", "label_table_rows"}
    called |= set(_native.FIELDS.values())
    called |= {"label_scores_pool", "label_scores_labels", "label_scores_rows"}
    assert set(_native.FUNCTIONS) == called


def test_old_polars_is_not_used(native: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_native, "polars_version", lambda: (1, 19))
    assert "older than 1.20" in _native.polars_native_status()["reason"]


def test_type_mismatch_gives_the_same_error(native: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    df = pl.DataFrame({"a": [[1]], "p": [["1"]]})
    with pytest.raises(MlsqlError) as native_error:
        df.select(mp.micro_f1("a", "p"))
    portable(monkeypatch)
    with pytest.raises(MlsqlError) as portable_error:
        df.select(mp.micro_f1("a", "p"))
    assert str(native_error.value) == str(portable_error.value)
    assert "same label type" in str(native_error.value)


def test_labels_the_plugin_does_not_read_stay_portable(native: Path) -> None:
    """128-bit integers are labels the plugin does not read: portable, same numbers."""
    wide = pl.DataFrame(
        {"a": [[1, 2], [3]], "p": [[1], [3, None]]},
        schema={"a": pl.List(pl.Int128), "p": pl.List(pl.Int128)},
    )
    assert not uses_plugin(mp.micro_f1("a", "p"), wide)
    assert wide.select(mp.micro_f1("a", "p")).item() == pytest.approx(2 * 2 / (3 + 2))
    cat = pl.DataFrame(
        {"a": [["x", "y"]], "p": [["x"]]},
        schema={"a": pl.List(pl.Categorical)} | {"p": pl.List(pl.Categorical)},
    )
    assert uses_plugin(mp.micro_f1("a", "p"), cat)
    assert cat.select(mp.micro_f1("a", "p")).item() == pytest.approx(2 / 3)


@pytest.mark.parametrize("inner", [pl.Float64, pl.Boolean], ids=str)
def test_non_label_types_fail_as_in_the_portable_path(
    native: Path, monkeypatch: pytest.MonkeyPatch, inner: pl.DataType
) -> None:
    """Floats and booleans are not labels: the same MlsqlError with or without the plugin."""
    values = [[1.5, 2.5], [0.5]] if inner == pl.Float64 else [[True, False], [True]]
    df = pl.DataFrame({"a": values, "p": values}, schema={"a": pl.List(inner), "p": pl.List(inner)})
    with pytest.raises(MlsqlError, match="not labels") as native_error:
        df.select(mp.micro_f1("a", "p"))
    portable(monkeypatch)
    with pytest.raises(MlsqlError) as portable_error:
        df.select(mp.micro_f1("a", "p"))
    assert str(native_error.value) == str(portable_error.value)


def test_streaming_plan_runs_the_plugin_without_fallback(native: Path) -> None:
    lf = pl.LazyFrame({"a": [["x", "y"], None], "p": [["x"], ["z"]]})
    for name, params in MEASURES:
        lazy = lf.select(getattr(mp, name)("a", "p", **params))
        assert not [n for n in physical_nodes(lazy) if n.startswith(FALLBACK_NODES)], name


def test_group_by_and_broadcast_literals(native: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    df = pl.DataFrame(
        {
            "g": [1, 1, 2, 2, 2],
            "a": [["x"], ["y", "z"], None, ["x"], []],
            "p": [["x"], ["z"], ["x"], ["y"], ["x"]],
        }
    )

    def run() -> tuple[Any, ...]:
        grouped = (
            df.lazy()
            .group_by("g")
            .agg(mp.micro_f1("a", "p"), mp.samples_jaccard("a", "p"))
            .sort("g")
            .collect(engine="streaming")
            .rows()
        )
        literal = df.select(mp.true_positives("a", pl.lit(["x", "y"]))).to_series().to_list()
        window = df.select(mp.micro_recall("a", "p").over("g")).to_series().to_list()
        return grouped, literal, window

    got = run()
    assert got[1] == [1, 1, None, 1, 0]
    portable(monkeypatch)
    assert run() == got


# ---------------------------------------------------------------- memory safety
ASAN_SCRIPT = textwrap.dedent(
    """
    import os
    import polars as pl
    import mlsql.polars as mp
    from mlsql.polars import _native
    assert _native.polars_native_status()["enabled"], _native.polars_native_status()
    long = ["label-longer-than-twelve-%d" % i for i in range(300)]
    rows = [
        (long[: i % 200] + [None, "a"], ["a", None] + long[i % 7 : i % 7 + 30]) if i % 5 else (None, [])
        for i in range(2000)
    ]
    a = pl.Series("a", [r[0] for r in rows])
    p = pl.Series("p", [r[1] for r in rows])
    df = pl.DataFrame({
        "a": pl.concat([a.slice(0, 333), a.slice(333, 1000), a.slice(1333)], rechunk=False),
        "p": pl.concat([p.slice(0, 1500), p.slice(1500)], rechunk=False),
    }).slice(3)
    ints = df.select(
        pl.col("a").list.eval(pl.element().str.len_bytes().cast(pl.Int16)),
        pl.col("p").list.eval(pl.element().str.len_bytes().cast(pl.UInt64)),
    )
    def run(frame, engine):
        return frame.lazy().select(
            mp.micro_f1("a", "p"), mp.samples_f1("a", "p"), mp.hamming_loss("a", "p", n_labels=400)
        ).collect(engine=engine).row(0)
    got = {(i, e): run(f, e) for i, f in enumerate((df, ints)) for e in ("in-memory", "streaming")}
    same_ints = ints.with_columns(pl.col("p").cast(pl.List(pl.Int16)))
    def tables(frame):
        grouped = frame.with_row_index("i").with_columns(g=pl.col("i") % 3)
        return [
            mp.label_metrics(grouped, "a", "p", by="g"),
            mp.multilabel_report(frame, "a", "p"),
        ]
    assert "mlsql_polars_plugin" in mp.label_metrics(df.lazy(), "a", "p").explain()
    got_tables = [t for f in (df, same_ints) for t in tables(f)]
    def scores(frame):
        scored = frame.with_row_index("i").select(
            g=pl.col("i") % 3,
            w=(pl.col("i") % 4).cast(pl.Float64),
            actual=pl.col("a"),
            scores=pl.col("p").list.eval(
                pl.struct(label=pl.element(), score=(pl.element().hash() % 7).cast(pl.Float64) / 7)
            ),
        )
        exprs = [
            f("actual", "scores", average=avg, **weight).alias(f"{f.__name__}{avg}{len(weight)}")
            for f in (mp.multilabel_average_precision, mp.multilabel_roc_auc)
            for avg in ("micro", "macro", "weighted", "samples")
            for weight in ({}, {"sample_weight": "w"})
        ]
        return scored.group_by("g").agg(exprs).sort("g").rows()
    got_scores = [scores(f) for f in (df, ints)]
    os.environ["MLSQL_NATIVE"] = "0"
    want = {(i, e): run(f, e) for i, f in enumerate((df, ints)) for e in ("in-memory", "streaming")}
    assert got == want, (got, want)
    want_tables = [t for f in (df, same_ints) for t in tables(f)]
    assert all(g.equals(w) for g, w in zip(got_tables, want_tables))
    want_scores = [scores(f) for f in (df, ints)]
    def close(x, y):
        return x is y or (x is not None and y is not None and abs(x - y) <= 1e-12 * max(1, abs(y)))
    assert all(
        close(x, y) for g, w in zip(got_scores, want_scores) for a, b in zip(g, w) for x, y in zip(a, b)
    ), (got_scores, want_scores)
    os.environ["MLSQL_NATIVE"] = "1"
    try:
        pl.DataFrame({"a": [[1.5]], "p": [[1.5]]}).select(
            _native._call(_native.library_path(), "set_counts", pl.col("a"), pl.col("p"))
        )
    except pl.exceptions.ComputeError:
        pass
    print("ok")
    """
)


def _libasan() -> str | None:
    gcc = shutil.which("gcc")
    if gcc is None or not sys.platform.startswith("linux"):
        return None
    path = subprocess.run(
        [gcc, "-print-file-name=libasan.so"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


@pytest.mark.long
@pytest.mark.skipif(_libasan() is None, reason="AddressSanitizer needs gcc's libasan on Linux")
def test_plugin_under_address_sanitizer(tmp_path: Path) -> None:
    lib = _build_module().build(
        tmp_path,
        os.environ.get("CC") or "gcc",
        ["-fsanitize=address", "-fno-omit-frame-pointer", "-g", "-O1"],
    )
    env = dict(os.environ)
    env.update(
        {
            "LD_PRELOAD": _libasan() or "",
            "ASAN_OPTIONS": "detect_leaks=0",
            _native.PATH_ENV: str(lib),
            "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]),
        }
    )
    env.pop(_native.ENV, None)
    result = subprocess.run(
        [sys.executable, "-c", ASAN_SCRIPT], capture_output=True, text=True, env=env, timeout=600
    )
    assert "AddressSanitizer" not in result.stderr, result.stderr[-4000:]
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-4000:]
    # this file's tests of the plugin itself (Polars' inputs and the other Arrow layouts)
    env[PREBUILT_ENV] = str(lib)
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
         "counts or sliced or uint64 or all_null or refuses or layouts or inconsistent or label_tables"
         " or label_scores"],
        capture_output=True, text=True, env=env, timeout=900, cwd=ROOT,
    )  # fmt: skip
    assert "AddressSanitizer" not in tests.stdout + tests.stderr, tests.stdout[-4000:]
    assert tests.returncode == 0, tests.stdout[-4000:]


# ---------------------------------------------------------------- the C interface itself
class _ArrowSchema(ctypes.Structure):
    pass


class _ArrowArray(ctypes.Structure):
    pass


_RELEASE_SERIES = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _SeriesExport(ctypes.Structure):
    _fields_ = [
        ("field", ctypes.POINTER(_ArrowSchema)),
        ("arrays", ctypes.POINTER(ctypes.POINTER(_ArrowArray))),
        ("len", ctypes.c_size_t),
        ("release", _RELEASE_SERIES),
        ("private_data", ctypes.c_void_p),
    ]


#: sizes of the Arrow C structs (public spec): 9 and 10 pointer-sized members
_SCHEMA_BYTES = 9 * 8
_ARRAY_BYTES = 10 * 8


def call_plugin(
    plugin: Path, function: str, *chunked: list[pa.Array], tamper: Any = None
) -> tuple[pa.Array, list[int]]:
    """Call ``_polars_plugin_<function>`` as Polars does, with pyarrow's arrays as the chunks.

    Returns the output and how often each input's release callback ran.
    """
    lib = ctypes.CDLL(str(plugin))
    keep: list[Any] = []
    released = [0] * len(chunked)
    exports = (_SeriesExport * len(chunked))()
    for i, chunks in enumerate(chunked):
        schema = ctypes.create_string_buffer(_SCHEMA_BYTES)
        chunks[0].type._export_to_c(ctypes.addressof(schema))
        arrays = [ctypes.create_string_buffer(_ARRAY_BYTES) for _ in chunks]
        for chunk, buf in zip(chunks, arrays, strict=True):
            chunk._export_to_c(ctypes.addressof(buf))
            if tamper is not None and i == 0:
                tamper(buf)
        pointers = (ctypes.POINTER(_ArrowArray) * len(chunks))(
            *(ctypes.cast(b, ctypes.POINTER(_ArrowArray)) for b in arrays)
        )

        def release(_: int, i: int = i, schema: Any = schema) -> None:
            released[i] += 1
            pa.DataType._import_from_c(ctypes.addressof(schema))  # frees the schema

        callback = _RELEASE_SERIES(release)
        keep += [schema, arrays, pointers, callback]
        exports[i].field = ctypes.cast(schema, ctypes.POINTER(_ArrowSchema))
        exports[i].arrays = pointers
        exports[i].len = len(chunks)
        exports[i].release = callback
        exports[i].private_data = 1
    out = _SeriesExport()
    func = getattr(lib, f"_polars_plugin_{function}")
    func(exports, ctypes.c_size_t(len(chunked)), None, ctypes.c_size_t(0), ctypes.byref(out), None)
    if not out.private_data:
        lib._polars_plugin_get_last_error_message.restype = ctypes.c_char_p
        raise RuntimeError(lib._polars_plugin_get_last_error_message().decode())
    assert out.len == 1
    schema_ptr = ctypes.cast(out.field, ctypes.c_void_p).value
    array_ptr = ctypes.cast(out.arrays[0], ctypes.c_void_p).value
    result = pa.Array._import_from_c(array_ptr, schema_ptr)
    out.release(ctypes.addressof(out))  # frees the output's schema and boxes (arrays moved)
    assert not out.release
    return result, released


TEXT_TYPES = [pa.string(), pa.large_string(), pa.string_view(), pa.binary()]


@pytest.mark.parametrize("label_type", TEXT_TYPES, ids=str)
@pytest.mark.parametrize("list_type", [pa.list_, pa.large_list], ids=["list", "large_list"])
def test_arrow_layouts_polars_does_not_send(plugin: Path, label_type: Any, list_type: Any) -> None:
    """Utf8, LargeUtf8 and int32 list offsets, sliced and chunked, through the C interface."""
    rows = [(["x", "x", None, "y" * 20], ["y" * 20, "z"]), (None, ["a"]), ([], []), (["b"], ["b"])]
    if label_type == pa.binary():
        rows = [
            tuple(None if s is None else [x and x.encode() for x in s] for s in r) for r in rows
        ]
    typ = list_type(label_type)
    filler = [(["q"] * 3, None)] * 2 if label_type != pa.binary() else [([b"q"], None)] * 2
    a = pa.array([r[0] for r in filler + rows], type=typ).slice(2)
    p = pa.array([r[1] for r in rows], type=typ)
    out, released = call_plugin(plugin, "set_counts", [a.slice(0, 1), a.slice(1)], [p])
    got = [
        None if r["tp"] is None else (r["tp"], r["n_actual"], r["n_predicted"])
        for r in out.to_pylist()
    ]
    assert got == [(1, 2, 2), None, (0, 0, 0), (1, 1, 1)]
    assert released == [1, 1]
    tp, _ = call_plugin(plugin, "set_tp", [a], [p.slice(0, 2), p.slice(2)])
    assert tp.to_pylist() == [1, None, 0, 1]
    assert tp.null_count == 1


def _shorten_child(array: Any) -> None:
    """Make an exported list array's elements one shorter than its offsets claim."""
    children = ctypes.cast(ctypes.addressof(array) + 6 * 8, ctypes.POINTER(ctypes.c_void_p))[0]
    child = ctypes.cast(children, ctypes.POINTER(ctypes.c_void_p))[0]
    length = ctypes.cast(child, ctypes.POINTER(ctypes.c_int64))
    length[0] -= 1


def test_inconsistent_offsets_are_refused(plugin: Path) -> None:
    good = pa.array([["a", "b"]], type=pa.large_list(pa.string()))
    with pytest.raises(RuntimeError, match="list offsets outside its elements"):
        call_plugin(plugin, "set_counts", [good], [good], tamper=_shorten_child)


# ---------------------------------------------------------------- per-label tables
def grouped(rows: list[tuple[Any, Any]], groups: list[Any], dtype: pl.DataType) -> pl.DataFrame:
    g = [groups[i % len(groups)] if groups else None for i in range(len(rows))]
    return pl.DataFrame(
        {
            "g": pl.Series(g, dtype=pl.Int32),
            "a": pl.Series([r[0] for r in rows], dtype=dtype),
            "p": pl.Series([r[1] for r in rows], dtype=dtype),
        }
    )


def tables(df: pl.DataFrame, **params: Any) -> list[pl.DataFrame]:
    return [
        mp.label_metrics(df, "a", "p", **params),
        mp.multilabel_report(df, "a", "p", **params),
        mp.label_metrics(df.lazy(), "a", "p", **params).collect(engine="streaming"),  # type: ignore[union-attr]
    ]


def check_tables(
    df: pl.DataFrame, rows: list[Any], labels: list[Any] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """label_metrics / multilabel_report: the plugin's frames are the portable ones, and the oracle's."""
    assert "mlsql_polars_plugin" in mp.label_metrics(df.lazy(), "a", "p").explain()  # type: ignore[union-attr]
    for params in ({}, {"by": "g"}, {"labels": labels, "by": "g"}, {"beta": 2.0}):
        if params.get("labels", 0) is None:
            continue
        native_frames = tables(df, **params)
        with monkeypatch.context() as m:
            portable(m)
            portable_frames = tables(df, **params)
        for got, want in zip(native_frames, portable_frames, strict=True):
            assert got.schema == want.schema, params
            assert got.to_dicts() == want.to_dicts() or got.equals(want), params
    got = mp.label_metrics(df, "a", "p", labels=labels).to_dicts()  # type: ignore[union-attr]
    want = oracle_labels.label_metrics(rows, labels)
    assert [r["label"] for r in got] == [r["label"] for r in want]
    for g, w in zip(got, want, strict=True):
        for key, value in w.items():
            assert key == "label" or same(g[key], value), (key, g, w)


TABLE_SETTINGS = settings(SETTINGS, max_examples=15)


@pytest.mark.long
@TABLE_SETTINGS
@given(
    rows=text_rows(),
    groups=st.lists(st.integers(0, 3), max_size=4),
    labels=st.one_of(st.none(), st.lists(st.sampled_from([*SHORT, *LONG, "never"]), min_size=1)),
)
def test_text_label_tables_equal_the_portable_plan_and_the_oracle(
    rows: list[Any], groups: list[int], labels: Any, native: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = sorted(set(labels)) if labels else None
    check_tables(grouped(rows, groups, pl.List(pl.String)), rows, labels, monkeypatch)


@pytest.mark.long
@TABLE_SETTINGS
@given(
    rows=int_rows(),
    groups=st.lists(st.integers(0, 3), max_size=4),
    dtype=st.sampled_from(INT_TYPES),
)
def test_integer_label_tables_equal_the_portable_plan_and_the_oracle(
    rows: list[Any],
    groups: list[int],
    dtype: pl.DataType,
    native: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    check_tables(grouped(rows, groups, pl.List(dtype)), rows, [0, 5, 200 % 128], monkeypatch)


def test_uint64_labels_above_int64_in_label_tables(native: Path) -> None:
    big = 2**64 - 1
    df = pl.DataFrame(
        {"a": [[big, 1], [big]], "p": [[big], None]},
        schema={"a": pl.List(pl.UInt64), "p": pl.List(pl.UInt64)},
    )
    got = mp.label_metrics(df, "a", "p").select("label", "tp", "fp", "fn").rows()  # type: ignore[union-attr]
    assert got == [(1, 0, 0, 1), (big, 1, 0, 0)]


@pytest.mark.parametrize(
    ("ta", "tp", "rows", "labels"),
    [
        (pl.Int8, pl.Int16, [([None], [-32768])], [-32768, 7]),
        (pl.Int16, pl.Int8, [([-32768], [None])], [-32768, 7]),
        (pl.Int8, pl.Int16, [([-128, 1], [-32768, 1]), ([7], None), (None, [])], [-32768, 7]),
        (pl.UInt8, pl.Int8, [([255, 1], [-1])], [-1, 255]),
        (pl.UInt64, pl.Int8, [([2**63 + 1, 1], [-1])], [-1, 2**63 + 1]),
    ],
)
def test_a_universe_of_the_wider_lists_type(
    ta: pl.DataType,
    tp: pl.DataType,
    rows: list[Any],
    labels: list[int],
    native: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``labels`` is typed as the label column (both lists' supertype), not as the actual
    list: -32768 is an Int16 label an Int8 list never holds. Matched against each list's
    own type, the universe failed to build (TypeError), on both paths."""
    df = pl.DataFrame(
        {
            "a": pl.Series([r[0] for r in rows], dtype=pl.List(ta)),
            "p": pl.Series([r[1] for r in rows], dtype=pl.List(tp)),
        }
    )
    want = [
        (r["label"], r["tp"], r["fp"], r["fn"], r["tn"], r["support"])
        for r in oracle_labels.label_metrics(rows, labels)
    ]
    columns = ("label", "tp", "fp", "fn", "tn", "support")
    for switched_off in (False, True):
        with monkeypatch.context() as m:
            if switched_off:
                portable(m)
            got = mp.label_metrics(df, "a", "p", labels=labels)
            assert got.select(columns).rows() == want, switched_off  # type: ignore[union-attr]


@pytest.mark.long
def test_label_tables_add_up_over_streaming_batches(
    native: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without groups the plugin makes one table per batch; the batches' tables add up."""
    rows = [
        ([f"l{i % 7}", f"l{i % 5}", None], [f"l{i % 3}"] if i % 11 else None) for i in range(60000)
    ]
    parts = [grouped(rows[i : i + 6000], [], pl.List(pl.String)) for i in range(0, 60000, 6000)]
    lazy = pl.concat(parts, rechunk=False).lazy()
    got = [
        mp.label_metrics(lazy, "a", "p").collect(engine="streaming"),  # type: ignore[union-attr]
        mp.multilabel_report(lazy, "a", "p").collect(engine="streaming"),  # type: ignore[union-attr]
    ]
    portable(monkeypatch)
    want = [
        mp.label_metrics(lazy, "a", "p").collect(engine="streaming"),  # type: ignore[union-attr]
        mp.multilabel_report(lazy, "a", "p").collect(engine="streaming"),  # type: ignore[union-attr]
    ]
    for g, w in zip(got, want, strict=True):
        assert g.equals(w), (g, w)
    want_tp = {r["label"]: r["tp"] for r in oracle_labels.label_metrics(rows)}
    assert dict(got[0].select("label", "tp").rows()) == want_tp
    # the streaming engine did cut the rows into several batches, each with its own table
    tables = lazy.select(_native.label_table(pl.col("a"), pl.col("p"), per_batch=True).alias("t"))
    batches = tables.collect(engine="streaming").filter(pl.col("t").list.len() > 0).height
    assert batches > 1


@pytest.mark.parametrize("measure", ["label_metrics", "multilabel_report", "macro_f1"])
def test_a_streaming_label_table_runs_the_plugin_once(native: Path, measure: str) -> None:
    """The frames derived from the batches' tables share one computation of them.

    Each used to get its own copy of the plan (its filters pushed into it), so the
    plugin ran over every row once per derived frame.
    """
    lf = pl.LazyFrame({"a": [["x", "y"], ["z"], None], "p": [["x"], ["z", "w"], ["x"]]})
    captured: list[pl.LazyFrame] = []
    collect = pl.LazyFrame.collect

    def spy(self: pl.LazyFrame, *args: Any, **kwargs: Any) -> pl.DataFrame:
        captured.append(self)
        return collect(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pl.LazyFrame, "collect", spy)
        out = getattr(mp, measure)(lf, "a", "p")
        if isinstance(out, pl.LazyFrame):
            spy(out)
    plans = [frame.explain(engine="streaming") for frame in captured]
    assert plans and all(plan.count("label_table_rows") <= 1 for plan in plans)
    assert sum(plan.count("label_table_rows") for plan in plans) >= 1


# ---------------------------------------------------------------- label scores
SCORE_MEASURES = ("multilabel_average_precision", "multilabel_roc_auc")
SCORE_ZERO_DIVISIONS = (0, 1, float("nan"), "diagnose", "ignore")
#: scores with ties: -0.0 ties 0.0, and an explicit -inf ties the unscored cells
SCORE_VALUES = [0.1, 0.5, 0.5, 0.9, 0.0, -0.0, 2.0, float("inf"), float("-inf"), None]


def score_rows(labels: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    """(group, entries, actual, weight) rows: entries a list of (label, score) pairs or NULL
    (a NULL label, a NULL score, a label scored twice: its first entry counts), actual a
    list (repeats, NULL elements) or NULL, the weight an integer 0-3 or NULL."""
    entry = st.tuples(labels, st.sampled_from(SCORE_VALUES))
    return st.lists(
        st.tuples(
            st.integers(0, 3),
            st.one_of(st.none(), st.lists(entry, max_size=6)),
            st.one_of(st.none(), st.lists(labels, max_size=5)),
            st.one_of(st.none(), st.integers(0, 3)),
        ),
        min_size=1,
        max_size=20,
    )


def score_frame(
    rows: list[Any], label: pl.DataType, actual: pl.DataType, cuts: tuple[list[int], ...] = ()
) -> pl.DataFrame:
    """The rows as columns g, scores (list of {label, score} structs), actual and w, each
    cut into chunks at its own ``cuts``."""
    entry = pl.Struct({"label": label, "score": pl.Float64})
    columns = {
        "g": pl.Series([r[0] for r in rows], dtype=pl.Int64),
        "scores": pl.Series(
            [None if r[1] is None else [{"label": x, "score": v} for x, v in r[1]] for r in rows],
            dtype=pl.List(entry),
        ),
        "actual": pl.Series([r[2] for r in rows], dtype=pl.List(actual)),
        "w": pl.Series([r[3] for r in rows], dtype=pl.Int64),
    }
    cuts = cuts or ([],) * len(columns)
    return pl.DataFrame(
        {
            name: chunked(s.alias(name), c)
            for (name, s), c in zip(columns.items(), cuts, strict=True)
        }
    )


def score_exprs(weighted: bool) -> list[pl.Expr]:
    """Every measure, average and zero_division, weighted or not, as one list of columns."""
    weight = {"sample_weight": "w"} if weighted else {}
    return [
        getattr(mp, name)("actual", "scores", average=average, zero_division=zd, **weight).alias(
            f"{name}:{average}:{zd}"
        )
        for name in SCORE_MEASURES
        for average in O.SCORE_AVERAGES
        for zd in SCORE_ZERO_DIVISIONS
    ]


def score_values(df: pl.DataFrame, weighted: bool) -> dict[str, list[Any]]:
    """The measures by group (``group_by`` and ``over``) and over all rows (``select``), in
    memory and streaming."""
    exprs = score_exprs(weighted)
    lazy = df.lazy()
    out = {}
    for engine in ("in-memory", "streaming"):
        out[f"select {engine}"] = lazy.select(exprs).collect(engine=engine).rows()  # type: ignore[arg-type]
        grouped = lazy.group_by("g").agg(exprs).sort("g").collect(engine=engine)  # type: ignore[arg-type]
        out[f"group_by {engine}"] = grouped.rows()
    out["over"] = df.select("g", *(e.over("g") for e in exprs)).unique().sort("g").rows()
    return out


def close12(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, (int, float, Fraction)) and not isinstance(want, bool):
        return math.isclose(got, float(want), rel_tol=1e-12, abs_tol=1e-12)
    return bool(got == want)


def same_rows(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> bool:
    return len(got) == len(want) and all(
        len(g) == len(w) and all(close12(x, y) for x, y in zip(g, w, strict=True))
        for g, w in zip(got, want, strict=True)
    )


def score_oracle(rows: list[Any], name: str, average: str, zd: Any, weighted: bool) -> Any:
    """tests/oracle_ranking.py (checked against scikit-learn) of one group's rows: integer
    weights as rows repeated ``w`` times, known rows that all weigh 0 the zero_division value."""
    known = [(s, a, w) for _, s, a, w in rows if s is not None and a is not None]
    if weighted:
        known = [(s, a, w) for s, a, w in known if w is not None]
        if known and all(w == 0 for *_, w in known):
            return None if zd == "ignore" else 1.0 if zd == "diagnose" else float(zd)
        known = [(s, a, 1) for s, a, w in known for _ in range(w)]
    return getattr(O, name)([(first_scores(s), a) for s, a, _ in known], average, zd)


def check_scores(
    df: pl.DataFrame, rows: list[Any], weighted: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plugin's numbers per group are the portable expressions' (to 1e-12) in every
    context, and the oracle's; over all rows, the oracle's."""
    assert uses_plugin(score_exprs(weighted)[0], df)
    native_values = score_values(df, weighted)
    with monkeypatch.context() as m:
        portable(m)
        assert not uses_plugin(score_exprs(weighted)[0], df)
        want = df.group_by("g").agg(score_exprs(weighted)).sort("g").rows()
    for context in ("group_by in-memory", "group_by streaming", "over"):
        got = native_values[context]
        assert same_rows(got, want), (context, got, want)
    names = [e.meta.output_name() for e in score_exprs(weighted)]
    everything = [(None, *values) for values in native_values["select in-memory"]]
    assert same_rows(native_values["select streaming"], native_values["select in-memory"])
    for g, *values in [*native_values["group_by in-memory"], *everything]:
        group = [r for r in rows if g is None or r[0] == g]
        for column, value in zip(names, values, strict=True):
            name, average, zd_text = column.split(":")
            zd = next(z for z in SCORE_ZERO_DIVISIONS if str(z) == zd_text)
            want_value = score_oracle(group, name, average, zd, weighted)
            assert close12(value, want_value), (g, column, value, want_value)


SCORE_SETTINGS = settings(SETTINGS, max_examples=12)  # each also runs the portable path
TEXT_SCORE_LABELS = st.sampled_from(["a", "b", "", "x" * 20, "label-longer-than-twelve", None])


@pytest.mark.first(rank=1)
@pytest.mark.long
@SCORE_SETTINGS
@given(
    rows=score_rows(TEXT_SCORE_LABELS),
    weighted=st.booleans(),
    cuts=st.tuples(*[st.lists(st.integers(0, 20), max_size=3)] * 4),
)
def test_text_label_scores_equal_the_portable_expressions_and_the_oracle(
    native: Path, monkeypatch: pytest.MonkeyPatch, rows: list[Any], weighted: bool, cuts: Any
) -> None:
    df = score_frame(rows, pl.String, pl.String, cuts)
    check_scores(df, rows, weighted, monkeypatch)


@pytest.mark.first(rank=2)
@pytest.mark.long
@SCORE_SETTINGS
@given(
    rows=score_rows(st.one_of(st.none(), st.integers(0, 6), st.integers(0, 127))),
    types=st.tuples(st.sampled_from(INT_TYPES), st.sampled_from(INT_TYPES)),
    weighted=st.booleans(),
)
def test_integer_label_scores_of_any_widths_equal_the_portable_expressions(
    native: Path, monkeypatch: pytest.MonkeyPatch, rows: list[Any], types: Any, weighted: bool
) -> None:
    """The scores' labels and the true labels of two integer types, compared as values."""
    df = score_frame(rows, types[0], types[1])
    check_scores(df, rows, weighted, monkeypatch)


def test_label_scores_of_wide_and_signed_integers(
    native: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """UInt64 labels above the Int64 range against Int8 true labels: -1 is not 2**64 - 1."""
    rows = [
        (0, [(2**64 - 1, 0.9), (1, 0.2), (2**63, 0.5)], [-1, 1], 1),
        (0, [(2**64 - 1, 0.3)], [], 2),
        (0, [(1, 0.7)], [1, -1], 1),
    ]
    entry = pl.Struct({"label": pl.UInt64, "score": pl.Float64})
    df = pl.DataFrame(
        {
            "g": [0, 0, 0],
            "scores": pl.Series(
                [[{"label": x, "score": v} for x, v in r[1]] for r in rows], dtype=pl.List(entry)
            ),
            "actual": pl.Series([r[2] for r in rows], dtype=pl.List(pl.Int8)),
            "w": [1, 2, 1],
        }
    )
    check_scores(df, rows, True, monkeypatch)
    check_scores(df, rows, False, monkeypatch)


@pytest.mark.parametrize("form", O.FORMS)
def test_label_scores_of_maps_and_arrow_tables_use_the_plugin(
    native: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    """Score maps (a list of {key, value} in Polars) and score lists from Arrow, int and
    text labels: the plugin, with the portable numbers."""
    rows = [({"a": 0.5, "b": 0.5}, ["a"]), ({"b": 0.9}, ["a", "b"]), (None, ["a"]), ({}, [])]
    for key, cast in ((pa.string(), str), (pa.int16(), lambda x: ord(x))):
        table = pa.table(
            {
                "scores": O.score_column(
                    [None if s is None else {cast(k): v for k, v in s.items()} for s, _ in rows],
                    form,
                    key,
                ),
                "actual": pa.array([[cast(x) for x in a] for _, a in rows], pa.list_(key)),
            }
        )
        df = pl.from_arrow(table)
        assert isinstance(df, pl.DataFrame)
        exprs = [e for e in score_exprs(False) if ":nan" in e.meta.output_name()]
        assert uses_plugin(exprs[0], df)
        got = df.select(exprs).row(0)
        portable(monkeypatch)
        assert same_rows([got], [df.select(exprs).row(0)])
        monkeypatch.delenv(_native.ENV)


def test_label_scores_of_other_label_types_stay_portable(native: Path) -> None:
    """Labels the plugin does not read (here 128-bit integers) take the portable expressions."""
    entry = pl.Struct({"label": pl.Int128, "score": pl.Float64})
    df = pl.DataFrame(
        {
            "scores": pl.Series(
                [[{"label": 1, "score": 0.5}, {"label": 2, "score": 0.2}]], dtype=pl.List(entry)
            ),
            "actual": pl.Series([[1]], dtype=pl.List(pl.Int128)),
        }
    )
    expr = mp.multilabel_roc_auc("actual", "scores", average="micro")
    assert not uses_plugin(expr, df)
    assert df.select(expr).item() == 1.0


@pytest.mark.long
def test_label_scores_over_no_rows_and_unknown_rows(
    native: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only unknown rows, only rows of weight 0, a row with nothing: NULL, or the
    zero_division value, as on the portable path; no rows at all: NULL, and no groups."""
    rows = [
        (0, None, ["a"], 1),
        (0, [("a", 0.5)], None, 1),
        (1, [("a", 0.5)], ["a"], 0),
        (1, [("b", 0.2)], [], 0),
        (2, [], [], 1),
        (2, [(None, 0.3), ("a", None)], [None], 2),
        (3, [("a", 0.5)], ["a"], None),
    ]
    df = score_frame(rows, pl.String, pl.String)
    for weighted in (False, True):
        check_scores(df, rows, weighted, monkeypatch)
        empty = df.clear().lazy()
        exprs = score_exprs(weighted)
        for engine in ("in-memory", "streaming"):
            assert empty.select(exprs).collect(engine=engine).rows() == [(None,) * len(exprs)]  # type: ignore[arg-type]
            assert empty.group_by("g").agg(exprs).collect(engine=engine).rows() == []  # type: ignore[arg-type]


def test_label_scores_bad_inputs_fail_as_on_the_portable_path(
    native: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A label type mismatch, a score that is no number, a negative weight: the same message."""
    entry = pl.Struct({"label": pl.Int64, "score": pl.Float64})
    scores = pl.Series([[{"label": 1, "score": 0.5}]], dtype=pl.List(entry))
    cases = [
        (pl.DataFrame({"actual": [["1"]], "scores": scores}), {}),
        (pl.DataFrame({"actual": [[1]], "scores": [[{"label": 1, "score": "x"}]]}), {}),
        (pl.DataFrame({"actual": [[1]], "scores": scores, "w": [-1.0]}), {"sample_weight": "w"}),
    ]
    for df, params in cases:
        messages = []
        for off in (False, True):
            with monkeypatch.context() as m:
                if off:
                    portable(m)
                with pytest.raises(MlsqlError) as error:
                    df.select(mp.multilabel_average_precision("actual", "scores", **params))
                # the message, without the expression Polars appends to an error raised in a query
                messages.append(str(error.value).split("\n")[0])
        assert messages[0] == messages[1], messages


def test_label_scores_of_a_literal_weight(native: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A weight that is one value for every row (broadcast to the rows by the plugin)."""
    df = pl.DataFrame(
        {"actual": [["a"], ["b"], ["a", "b"]], "scores": [[{"label": "a", "score": 0.5}]] * 3}
    )
    exprs = [
        mp.multilabel_average_precision(
            "actual", "scores", average=a, sample_weight=pl.lit(2.5)
        ).alias(a)
        for a in O.SCORE_AVERAGES
    ]
    assert uses_plugin(exprs[0], df)
    got = df.select(exprs).row(0)
    portable(monkeypatch)
    assert same_rows([got], [df.select(exprs).row(0)])


@pytest.mark.long
def test_label_scores_over_many_groups_and_chunks(
    native: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 groups of 1-4 rows from several chunks, float weights: every average, as the
    portable expressions give, in memory and streaming."""
    rng = random.Random("polars-label-scores-groups")
    labels = ["a", "b", "c", "label-longer-than-twelve"]
    rows = []
    for g in range(2000):
        for _ in range(rng.randint(1, 4)):
            entries = [
                (x, rng.choice([0.2, 0.5, rng.random()])) for x in labels if rng.random() < 0.7
            ]
            rows.append((g, entries, [x for x in labels if rng.random() < 0.4], 1))
    rng.shuffle(rows)
    df = score_frame(rows, pl.String, pl.String, ([1000, 3000], [500], [2500, 10], []))
    df = df.with_columns(w=pl.Series([rng.choice([0.0, 0.5, 1.0, 2.5]) for _ in rows]))
    exprs = [e for e in score_exprs(True) if ":nan" in e.meta.output_name()]
    lazy = df.lazy().group_by("g").agg(exprs).sort("g")
    got = {engine: lazy.collect(engine=engine).rows() for engine in ("in-memory", "streaming")}  # type: ignore[arg-type]
    portable(monkeypatch)
    want = lazy.collect().rows()
    for engine, values in got.items():
        assert len(values) == 2000 and same_rows(values, want), engine


#: the statistics of a segment the plugin gives, beside its number of rows
SEGMENT_STATS = ("n_explicit", "n_positive", "n_positive_unscored", "precision_sum", "u", "w")


def _segment(ne: float, np: float, npu: float, ps: float, u: float, w: float = 1.0) -> Any:
    """A segment's statistics as the plugin gives them, of one row."""
    return {**dict(zip(SEGMENT_STATS, (ne, np, npu, ps, u, w), strict=True)), "rows": 1}


def test_label_scores_segments_by_hand(plugin: Path) -> None:
    """The plugin's statistics of three rows, worked out by hand, for each mode.

    Row 1 (weight 2): x 0.5 true, y 0.5; row 2 (weight 1): y 0.9 true, x unscored and true
    (y's second entry and a NULL label are no scores); row 3 (weight 0): known, no cell.
    """
    df = pl.DataFrame(
        {
            "a": [["x"], ["y", "x", "y"], ["z"]],
            "s": [
                [{"label": "x", "score": 0.5}, {"label": "y", "score": 0.5}],
                [
                    {"label": "y", "score": 0.9},
                    {"label": None, "score": 0.1},
                    {"label": "y", "score": 0.0},
                ],
                [{"label": "z", "score": 0.4}],
            ],
            "w": [2.0, 1.0, 0.0],
        }
    )

    def stats(average: str) -> dict[str, Any]:
        expr = _native.label_scores(pl.col("a"), pl.col("s"), average, pl.col("w")).alias("t")
        return df.select(expr).item()

    pool = stats("micro")
    assert {k: pool[k] for k in ("nu", "n", "npos", "wsum")} == {
        "nu": 2,
        "n": 3,
        "npos": 2,
        "wsum": 3.0,
    }
    # cells from the highest: y 0.9 (+1), x 0.5 (+2), y 0.5 (-2), x -inf (+1)
    # precision: 1 x 1/1 + 2 x 3/5 (the tie at 0.5 is one step); U: 1 x 2 + 2 x 2/2 + 1 x 0
    assert pool["segs"] == [_segment(6, 4, 1, 1 + 6 / 5, 4)]
    # y: 0.9 (+1), 0.5 (-2); x: 0.5 (+2), -inf (+1)
    labels = sorted(stats("macro")["segs"], key=lambda s: s["n_positive"])
    assert labels == [_segment(3, 1, 0, 1, 2), _segment(3, 3, 1, 2, 0)]
    # row 1: x 0.5 (+), y 0.5 (-): precision 1/2, U 1/2; row 2: y 0.9 (+), x -inf (+): 1, 0
    rows = sorted(stats("samples")["segs"], key=lambda s: s["n_positive"])
    assert rows == [_segment(2, 1, 0, 0.5, 0.5, w=2), _segment(2, 2, 1, 1, 0)]


#: rows of (actual, entries, weight) for the C-interface tests: repeated, NULL and long labels,
#: a NULL entry, label and score, a label scored twice, NULL rows, a row of weight 0
LAYOUT_ROWS = [
    (["x", "x", None, "y" * 20], [("x", 0.5), ("y" * 20, 0.5), (None, 0.3), ("z", None)], 2.0),
    (None, [("a", 0.1)], 1.0),
    ([], [], 1.0),
    (["b"], None, 1.0),
    (["b", "z"], [("b", 0.9), ("b", 0.1), None, ("x", 0.5)], 0.5),
    (["x"], [("x", 0.2)], 0.0),
    (["y" * 20], [("b", 0.9)], None),
]


def _entries(rows: list[Any], label: Any, list_type: Any = pa.list_, prefix: int = 0) -> Any:
    """The rows' entries as a list of {label, score} structs whose struct array and fields
    have offsets of their own (``prefix`` filler entries sliced off)."""
    flat, offsets, valid = [], [0], []
    for _, entries, _ in rows:
        valid.append(entries is not None)
        for e in entries or []:
            flat.append(e)
        offsets.append(len(flat))
    filler = [("q", 9.0)] * prefix
    everything = filler + flat
    labels = pa.array(["?"] + [None if e is None else e[0] for e in everything], label).slice(1)
    scores = pa.array(
        [7.0] + [None if e is None else e[1] for e in everything], pa.float64()
    ).slice(1)
    mask = pa.array([False] + [e is None for e in everything])
    structs = pa.StructArray.from_arrays(
        [labels, scores], names=["label", "score"], mask=mask.slice(1)
    ).slice(prefix)
    offset_type = pa.int64() if list_type == pa.large_list else pa.int32()
    lists = (pa.LargeListArray if list_type == pa.large_list else pa.ListArray).from_arrays(
        pa.array(offsets, offset_type), structs, mask=pa.array([not v for v in valid])
    )
    return lists


def _polars_statistics(plugin: Path, rows: list[Any], average: str, weighted: bool) -> Any:
    """The plugin's output for ``rows`` as Polars sends them."""
    entry = pl.Struct({"label": pl.String, "score": pl.Float64})
    df = pl.DataFrame(
        {
            "a": pl.Series([r[0] for r in rows], dtype=pl.List(pl.String)),
            "s": pl.Series(
                [
                    None
                    if r[1] is None
                    else [None if e is None else {"label": e[0], "score": e[1]} for e in r[1]]
                    for r in rows
                ],
                dtype=pl.List(entry),
            ),
            "w": pl.Series([r[2] for r in rows], dtype=pl.Float64),
        }
    )
    weight = pl.col("w") if weighted else None
    return df.select(_native.label_scores(pl.col("a"), pl.col("s"), average, weight)).item()


def _sorted_statistics(value: dict[str, Any]) -> dict[str, Any]:
    return {**value, "segs": sorted(value["segs"], key=lambda s: sorted(s.items()))}


@pytest.mark.parametrize("label_type", TEXT_TYPES, ids=str)
@pytest.mark.parametrize("list_type", [pa.list_, pa.large_list], ids=["list", "large_list"])
def test_label_scores_read_every_arrow_layout(
    plugin: Path, label_type: Any, list_type: Any
) -> None:
    """Utf8, LargeUtf8, views and binary labels, int32 and int64 list offsets, struct arrays
    and fields with offsets, inputs chunked differently: the statistics Polars' own layout gives."""
    rows = LAYOUT_ROWS
    if label_type == pa.binary():
        rows = [
            (
                None if a is None else [x and x.encode() for x in a],
                None
                if s is None
                else [None if e is None else (e[0] and e[0].encode(), e[1]) for e in s],
                w,
            )
            for a, s, w in rows
        ]
    actual = pa.array([r[0] for r in rows], list_type(label_type))
    entries = _entries(rows, label_type, list_type, prefix=3)
    weight = pa.array([5.0] + [r[2] for r in rows], pa.float64()).slice(1)
    for function, average in (
        ("label_scores_pool", "micro"),
        ("label_scores_labels", "macro"),
        ("label_scores_rows", "samples"),
    ):
        for weighted in (False, True):
            inputs = [
                [actual.slice(0, 2), actual.slice(2)],
                [entries.slice(0, 5), entries.slice(5)],
            ]
            if weighted:
                inputs.append([weight.slice(0, 1), weight.slice(1, 3), weight.slice(4)])
            out, released = call_plugin(plugin, function, *inputs)
            assert released == [1] * len(inputs)
            assert len(out) == 1
            want = _polars_statistics(plugin, LAYOUT_ROWS, average, weighted)
            assert _sorted_statistics(out.to_pylist()[0]) == _sorted_statistics(want), (
                function,
                weighted,
            )


def test_label_scores_broadcast_one_row_and_refuse_other_lengths(plugin: Path) -> None:
    """A one-row input (a literal) stands for every row; inputs of two other lengths are an error."""
    actual = pa.array([["x"], ["y"], ["x", "y"]], pa.list_(pa.string()))
    entries = _entries([(None, [("x", 0.5), ("y", 0.2)], None)], pa.string())
    broadcast, _ = call_plugin(plugin, "label_scores_pool", [actual], [entries], [pa.array([2.0])])
    repeated = _entries([(None, [("x", 0.5), ("y", 0.2)], None)] * 3, pa.string())
    weight = pa.array([2.0] * 3)
    full, _ = call_plugin(plugin, "label_scores_pool", [actual], [repeated], [weight])
    assert broadcast.to_pylist() == full.to_pylist()
    with pytest.raises(RuntimeError, match="actual has 3 rows, scores 2"):
        call_plugin(plugin, "label_scores_pool", [actual], [repeated.slice(1)])


def test_label_scores_refuse_inputs_they_do_not_read(plugin: Path) -> None:
    """Scores without a Float64 score, labels of two kinds, a weight that is no Float64."""
    actual = pa.array([["x"]], pa.list_(pa.string()))
    entries = _entries([(None, [("x", 0.5)], None)], pa.string())
    ints = pa.array(
        [[{"label": 1, "score": 0.5}]],
        pa.list_(pa.struct([("label", pa.int64()), ("score", pa.float64())])),
    )
    floats = pa.array(
        [[{"label": "x", "score": 0.5}]],
        pa.list_(pa.struct([("label", pa.string()), ("score", pa.float32())])),
    )
    with pytest.raises(RuntimeError, match="different kinds of labels"):
        call_plugin(plugin, "label_scores_labels", [actual], [ints])
    with pytest.raises(RuntimeError, match="scores must be a list of"):
        call_plugin(plugin, "label_scores_labels", [actual], [floats])
    with pytest.raises(RuntimeError, match="weight must be a Float64"):
        call_plugin(plugin, "label_scores_labels", [actual], [entries], [pa.array([1], pa.int64())])
    with pytest.raises(RuntimeError, match="list offsets outside its elements"):
        call_plugin(plugin, "label_scores_rows", [actual], [entries], tamper=_shorten_child)


def test_label_scores_of_all_null_types(plugin: Path) -> None:
    """Null-typed columns, labels and scores: unknown rows, or rows without a scored label."""
    nulls = pa.nulls(2)
    actual = pa.array([["x"], ["y"]], pa.list_(pa.string()))
    entry = pa.struct([("label", pa.null()), ("score", pa.null())])
    no_labels = pa.array([[{"label": None, "score": None}], []], pa.list_(entry))
    nothing = {"nu": 0, "n": 0, "npos": 0, "wsum": 0.0, "segs": []}
    for inputs in ([[nulls], [no_labels]], [[actual], [nulls]], [[actual], [no_labels], [nulls]]):
        out, _ = call_plugin(plugin, "label_scores_pool", *inputs)
        assert out.to_pylist() == [nothing]
    # x and y: true, unscored (at -infinity), one tie
    out, _ = call_plugin(plugin, "label_scores_pool", [actual], [no_labels])
    segment = _segment(2, 2, 2, 0, 0)
    assert out.to_pylist() == [{"nu": 2, "n": 2, "npos": 2, "wsum": 2.0, "segs": [segment]}]
