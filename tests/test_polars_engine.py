"""What only Polars has: the ``.mlsql`` namespace, ``over()``, the plan-time type guard,
NULL elements (Polars' set operations keep them), LazyFrames and Python-side parameters.

Values shared by every engine are tested through the ``engine`` fixture elsewhere;
expected numbers here come from the conformance data and the plain-Python oracle.
"""

from __future__ import annotations

import doctest
import inspect
import math
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import mlsql.polars as mp
from mlsql import MlsqlError
from mlsql._registry import REGISTRY, measures
from tests import oracle
from tests.conftest import conformance
from tests.engines import label_table

BLOG = conformance("hivemall_blog_tags.json")
ROWS = [(r["actual"], r["predicted"]) for r in BLOG["rows"]]
MULTILABEL = list(measures(family="multilabel"))
AGGREGATES = [
    f"{a}_{m}" for a in ("micro", "samples") for m in ("precision", "recall", "f1", "jaccard")
]
PER_ROW = [m.name for m in MULTILABEL if m.kind in ("set", "row")]
#: the parameters a per-row function cannot do without (true_negatives' label universe: more
#: labels than any row of the tests holds)
ROW_PARAMS = {"true_negatives": {"n_labels": 12}}
LIST_INPUT = [m.name for m in MULTILABEL if m.inputs == ("actual", "predicted")] + ["fmeasure"]


def frame(rows: list[tuple[Any, Any]], **extra: list[Any]) -> pl.DataFrame:
    return pl.from_arrow(label_table(rows)).with_columns(  # type: ignore[union-attr]
        *(pl.Series(k, v) for k, v in extra.items())
    )


def same(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, list):
        return got == want
    if isinstance(want, float) and math.isnan(want):
        return math.isnan(got)
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)


# ---------------------------------------------------------------- the namespace
def test_namespace_offers_every_public_function_with_its_signature():
    tables = {m.name for m in measures(kind="table")} | set(mp.FRAME_FUNCTIONS)  # frame functions
    names = [n for n in mp.__all__ if n != "MlsqlError" and n not in tables]
    assert "micro_f1" in names and "fmeasure" in names
    for name in names:
        method = getattr(pl.col("actual").mlsql, name)
        want = list(inspect.signature(getattr(mp, name)).parameters)[1:]
        assert list(inspect.signature(method).parameters) == want, name


@pytest.mark.parametrize("name", [*AGGREGATES, "subset_accuracy", "zero_one_loss"])
def test_namespace_aggregates_match_the_oracle(name):
    got = frame(ROWS).select(getattr(pl.col("actual").mlsql, name)("predicted")).item()
    assert same(got, oracle.aggregate(name, ROWS)), name


@pytest.mark.parametrize("name", PER_ROW)
def test_namespace_per_row_functions_match_the_oracle(name):
    params = ROW_PARAMS.get(name, {})
    got = frame(ROWS).select(getattr(pl.col("actual").mlsql, name)("predicted", **params))
    want = [oracle.per_row(name, a, p, **params) for a, p in ROWS]
    got = got.to_series()
    assert all(same(g, w) for g, w in zip(got.to_list(), want, strict=True)), name


def test_namespace_takes_expressions_and_parameters():
    df = frame(ROWS)
    got = df.select(pl.col("actual").list.head(2).mlsql.micro_fbeta(pl.col("predicted"), beta=2))
    trimmed = [(a[:2], p) for a, p in ROWS]
    assert same(got.item(), oracle.aggregate("micro_fbeta", trimmed, beta=2))


# ---------------------------------------------------------------- contexts
def test_over_gives_every_row_its_groups_value():
    groups = ["x", "y", "x", "y", "x", "y", "x"]
    out = (
        frame(ROWS, g=groups)
        .lazy()
        .select("g", mp.micro_f1("actual", "predicted").over("g").alias("f"))
    )
    for engine in ("in-memory", "streaming"):
        got = out.collect(engine=engine)
        for g, f in got.iter_rows():
            rows = [r for r, h in zip(ROWS, groups, strict=True) if h == g]
            assert same(f, oracle.aggregate("micro_f1", rows)), (engine, g)


def test_per_row_functions_in_with_columns_and_aggregates_in_group_by():
    df = frame(ROWS, g=[1, 1, 2, 2, 2, 3, 3]).lazy()
    rows = df.with_columns(mp.row_recall("actual", "predicted")).collect(engine="streaming")
    want = [oracle.per_row("row_recall", a, p) for a, p in ROWS]
    assert [same(g, w) for g, w in zip(rows["row_recall"], want, strict=True)] == [True] * 7
    agg = df.group_by("g").agg(mp.samples_f1("actual", "predicted"), pl.len()).collect()
    for g, value, _ in agg.iter_rows():
        part = [r for r, h in zip(ROWS, [1, 1, 2, 2, 2, 3, 3], strict=True) if h == g]
        assert same(value, oracle.aggregate("samples_f1", part))


def test_lazy_parquet_scan(tmp_path):
    path = tmp_path / "tags.parquet"
    pq.write_table(label_table(ROWS), path)
    lf = pl.scan_parquet(path).select(
        mp.micro_precision("actual", "predicted"), mp.multilabel_counts("actual", "predicted")
    )
    got = lf.collect(engine="streaming").row(0)
    assert same(got[0], oracle.aggregate("micro_precision", ROWS))
    assert got[1] == oracle.multilabel_counts(ROWS)


def test_results_are_named_after_the_function():
    out = frame(ROWS).select(
        mp.micro_f1("actual", "predicted"), mp.samples_f1("actual", "predicted")
    )
    assert out.columns == ["micro_f1", "samples_f1"]


# ---------------------------------------------------------------- NULL elements and sets
NULLS = [
    ([None, "a"], [None]),  # Polars' intersection would keep the NULL
    ([None, None], [None, "b"]),
    (["a", "a", None], ["a", None, None]),
    ([None], []),
    (None, [None]),
]


@pytest.mark.parametrize("name", PER_ROW)
def test_null_elements_are_not_labels(name):
    params = ROW_PARAMS.get(name, {})
    got = frame(NULLS).select(getattr(mp, name)("actual", "predicted", **params))
    got = got.to_series().to_list()
    want = [oracle.per_row(name, a, p, **params) for a, p in NULLS]
    assert all(same(g, w) for g, w in zip(got, want, strict=True)), (name, got, want)


def test_null_elements_in_aggregates_and_counts():
    df = frame(NULLS)
    for name in AGGREGATES:
        assert same(
            df.select(getattr(mp, name)("actual", "predicted")).item(),
            oracle.aggregate(name, NULLS),
        )
    assert df.select(
        mp.multilabel_counts("actual", "predicted")
    ).item() == oracle.multilabel_counts(NULLS)


# ---------------------------------------------------------------- the type guard
def mismatched(tmp_path: Any) -> pl.LazyFrame:
    path = tmp_path / "mismatch.parquet"
    pq.write_table(
        pa.table(
            {
                "actual": pa.array([[1, 2]], pa.list_(pa.int64())),
                "predicted": pa.array([["1"]], pa.list_(pa.string())),
            }
        ),
        path,
    )
    return pl.scan_parquet(path)


@pytest.mark.parametrize("name", LIST_INPUT)
def test_type_mismatch_is_an_mlsql_error_at_plan_time(tmp_path, name):
    params = {"n_labels": 3} if name in ("hamming_loss", "true_negatives") else {}
    lf = mismatched(tmp_path).select(getattr(mp, name)("actual", "predicted", **params))
    with pytest.raises(MlsqlError, match=r"List\(Int64\).*List\(String\)"):
        lf.collect_schema()  # resolves the plan only: no data is read
    with pytest.raises(MlsqlError, match=r"actual List\(Int64\) and predicted List\(String\)"):
        lf.collect(engine="streaming")


def test_type_mismatch_in_group_by_and_on_a_dataframe(tmp_path):
    lf = mismatched(tmp_path).with_columns(g=pl.lit(1))
    with pytest.raises(MlsqlError, match="same label type"):
        lf.group_by("g").agg(mp.samples_f1("actual", "predicted")).collect()
    with pytest.raises(MlsqlError, match="same label type"):
        lf.collect().select(pl.col("predicted").mlsql.true_positives("actual"))


def test_a_column_that_is_not_a_list_is_an_error():
    df = pl.DataFrame({"actual": ["a"], "predicted": [["a"]]})
    with pytest.raises(MlsqlError, match=r"list of labels per row for actual\. Got actual String"):
        df.select(mp.micro_f1("actual", "predicted"))


def test_an_argument_that_is_not_a_column_is_an_error():
    with pytest.raises(MlsqlError, match="column name or a polars expression"):
        mp.micro_f1(["a"], "predicted")


@pytest.mark.parametrize(
    ("actual", "predicted"),
    [
        (pl.List(pl.Categorical()), pl.List(pl.String)),
        (pl.List(pl.Int8), pl.List(pl.UInt16)),
        (pl.Array(pl.String, 2), pl.List(pl.String)),
    ],
    ids=str,
)
def test_types_of_one_kind_mix(actual, predicted):
    rows = [(["a", "b"], ["a", "c"]), (["b", "c"], ["a", "b"])]
    if actual.inner.is_integer():  # type: ignore[union-attr]
        rows = [([1, 2], [1, 3]), ([2, 3], [1, 2])]
    df = pl.DataFrame(
        {"actual": [a for a, _ in rows], "predicted": [p for _, p in rows]},
        schema={"actual": actual, "predicted": predicted},
    )
    got = df.select(mp.micro_f1("actual", "predicted"), mp.set_union("actual", "predicted"))
    assert same(got["micro_f1"][0], oracle.aggregate("micro_f1", rows))
    assert got["set_union"].to_list() == [oracle.per_row("set_union", a, p) for a, p in rows]


def test_an_all_empty_or_all_null_side_fits_any_label_type():
    df = pl.DataFrame({"actual": [["a"], ["b"]], "predicted": [[], []]})  # List(Null)
    assert df.schema["predicted"] == pl.List(pl.Null)
    assert df.select(mp.micro_recall("actual", "predicted")).item() == 0.0
    df = pl.DataFrame({"actual": [["a"]], "predicted": [None]})  # Null
    assert df.select(mp.micro_recall("actual", "predicted")).item() is None


# ---------------------------------------------------------------- parameters
def test_parameters_are_checked_when_the_expression_is_built():
    with pytest.raises(MlsqlError, match="'beta' parameter of micro_fbeta"):
        mp.micro_fbeta("actual", "predicted", beta=-1)
    with pytest.raises(MlsqlError, match="'zero_division' parameter of row_precision"):
        pl.col("actual").mlsql.row_precision("predicted", zero_division="warn")
    with pytest.raises(MlsqlError, match="'n_labels' parameter of hamming_loss"):
        mp.hamming_loss("actual", "predicted")
    with pytest.raises(MlsqlError, match="fmeasure options"):
        mp.fmeasure("actual", "predicted", "-bogus")
    with pytest.raises(TypeError, match="unexpected keyword argument 'bta'"):
        mp.micro_fbeta("actual", "predicted", bta=2)


def test_zero_division_nan_and_ignore_leave_undefined_rows_out():
    rows = [(["a"], ["a"]), ([], []), (["b"], [])]
    df = frame(rows)
    for zd in (float("nan"), "ignore", "diagnose", 1):
        got = df.select(mp.samples_precision("actual", "predicted", zero_division=zd)).item()
        assert same(got, oracle.aggregate("samples_precision", rows, zero_division=zd)), zd


# ---------------------------------------------------------------- documentation
GENERATED = [
    n for n in mp.FUNCTIONS if n in REGISTRY and REGISTRY[n].family in ("multilabel", "hivemall")
]


@pytest.mark.parametrize("name", GENERATED)
def test_functions_have_the_registry_signature_and_a_runnable_example(name):
    fn, m = getattr(mp, name), REGISTRY[name]
    doc = inspect.getdoc(fn)
    params = list(inspect.signature(fn).parameters)
    assert params[: len(m.inputs)] == list(m.inputs)
    weight = {"sample_weight"} if m.weighted else set()
    assert set(params[len(m.inputs) :]) == {p.name for p in m.params} | weight or name == "fmeasure"
    assert "Examples\n--------\n>>> " in doc
    if name != "fmeasure":
        assert doc.startswith(m.summary)
    test = doctest.DocTestParser().get_doctest(doc, {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.failures == 0 and runner.tries >= 3


def test_aggregates_over_zero_rows_are_null_on_the_streaming_engine():
    schema = {"actual": pl.List(pl.String), "predicted": pl.List(pl.String)}
    lf = pl.LazyFrame({"actual": [], "predicted": []}, schema=schema)
    names = [*AGGREGATES, "subset_accuracy", "zero_one_loss", "fmeasure"]
    exprs = [getattr(mp, n)("actual", "predicted") for n in names]
    out = lf.select(*exprs, mp.hamming_loss("actual", "predicted", n_labels=3)).collect(
        engine="streaming"
    )
    assert out.row(0) == (None,) * (len(names) + 1)
    counts = lf.select(mp.multilabel_counts("actual", "predicted")).collect(engine="streaming")
    assert counts.item()["n_rows"] == 0
    assert {k for k, v in counts.item().items() if v is not None} == {"n_rows"}
