"""Conformance of the label tables: every key of every multi-label seed, on every engine.

Each key of ``expected`` (and ``expected_mldr_diagnose`` / ``expected_mldr_ignore``)
maps to a column of ``multilabel_report`` or ``label_metrics``; a key that
maps to nothing fails the test, so no figure of the seeds is left unchecked.
The mldr and R walkthrough seeds are also read from their 0/1 indicator
columns through ``labels_from_indicators``.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pyarrow as pa
import pytest

from mlsql._errors import MlsqlError
from tests.conftest import conformance
from tests.engines import label_table

#: Spark's cases are long as a whole (tests/conftest.py reads this): CI's long tests run
#: them; the README's suite, at 10 min 20 s with them, stays under ten minutes
LONG_ENGINES = ("spark",)

FILES = ["hivemall_blog_tags.json", "mldr_example.json", "gatto_51.json"]
INDICATOR_FILES = ["mldr_example.json", "gatto_51.json"]
REL = 1e-12


def needs(engine: Any, *names: str) -> None:
    """Skip where the registry says ``engine`` lacks a function (with its stated reason).

    Registry-declared gaps are the only skips: tests/test_registry_engines.py
    checks that every other measure exists in every engine.
    """
    from mlsql._registry import REGISTRY, measures

    measures()  # fills the registry
    for name in names:
        m = REGISTRY[name]
        if not m.available_in(engine.name):
            pytest.skip(f"{name} is not in {engine.name}: {m.unavailable[engine.name]}")


def close(got: Any, want: float) -> bool:
    return got is not None and math.isclose(got, want, rel_tol=REL, abs_tol=REL)


def report_column(key: str) -> tuple[str, dict[str, Any]]:
    """(report column, parameters) for a conformance key; KeyError if it has none."""
    if key in ("n_rows", "n_labels", "hamming_loss", "subset_accuracy", "zero_one_loss"):
        return key, {}
    if key in ("clp", "mlp", "wlp"):
        return key, {}
    if key == "label_accuracy.micro":
        return "label_accuracy_micro", {}
    m = re.fullmatch(
        r"(micro|macro|weighted|samples)\.(precision|recall|jaccard|f1|f2|f0\.5|f1_of_means)"
        r"(?:\[zd=(\d)\])?",
        key,
    )
    if not m:
        raise KeyError(key)
    average, measure, zd = m.groups()
    params: dict[str, Any] = {} if zd is None else {"zero_division": int(zd)}
    if measure in ("f2", "f0.5"):
        return f"{average}_fbeta", {"beta": float(measure[1:]), **params}
    return f"{average}_{measure}", params


def cases() -> list[tuple[str, str, str, dict[str, Any], Any]]:
    out = []
    for file in FILES:
        data = conformance(file)
        sections = [("expected", {})]
        if "expected_mldr_diagnose" in data:
            sections.append(("expected_mldr_diagnose", {"zero_division": "diagnose"}))
        if "expected_mldr_ignore" in data:
            sections.append(("expected_mldr_ignore", {"zero_division": "ignore"}))
        for section, extra in sections:
            for key, want in data[section].items():
                if key == "per_label" or re.fullmatch(r"micro\.(tp|fp|fn)", key):
                    continue  # checked against label_metrics below
                column, params = report_column(key)
                out.append((file, f"{section}:{key}", column, {**params, **extra}, want))
    return out


def rows_of(file: str) -> list[tuple[Any, Any]]:
    return [(r["actual"], r["predicted"]) for r in conformance(file)["rows"]]


def only_row(table: pa.Table) -> dict[str, Any]:
    rows = table.to_pylist()
    assert len(rows) == 1, rows
    return rows[0]


_REPORTS: dict[tuple[str, str, str], dict[str, Any]] = {}


def cached_report(engine: Any, file: str, params: dict[str, Any]) -> dict[str, Any]:
    """The report of ``file`` under ``params``, computed once per engine (many keys share it)."""
    key = (engine.name, file, repr(sorted(params.items())))
    if key not in _REPORTS:
        table = label_table(rows_of(file))
        _REPORTS[key] = only_row(engine.table_function("multilabel_report", table, **params))
    return _REPORTS[key]


@pytest.mark.parametrize(("file", "key", "column", "params", "want"), cases(), ids=str)
def test_report_value(engine, file, key, column, params, want):
    needs(engine, "multilabel_report")
    got = cached_report(engine, file, params)
    assert close(got[column], want), (
        f"{engine.name} {column}{params} on {file}: {got[column]} != {want}"
    )


STANDALONE_CASES = [c for c in cases() if c[2].startswith(("macro_", "weighted_"))]


@pytest.mark.parametrize(("file", "key", "column", "params", "want"), STANDALONE_CASES, ids=str)
def test_standalone_value(engine, file, key, column, params, want):
    """The macro_* and weighted_* table functions give the report's numbers."""
    needs(engine, column)
    table = engine.table_function(column, label_table(rows_of(file)), **params)
    assert table.column_names == [column]
    assert close(only_row(table)[column], want)


@pytest.mark.parametrize("name", ["macro_f1", "weighted_jaccard", "macro_fbeta_of_means", "clp"])
@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"zero_division": "x"}, "The 'zero_division' parameter of {name} must be"),
        ({"labels": [1, 2]}, "The 'labels' parameter of {name} must hold labels"),
        ({"columns": ("actual", "nope")}, "{name}"),
    ],
    ids=["zero_division", "labels", "column"],
)
def test_a_standalone_table_s_errors_name_it(engine, name, params, said):
    """DuckDB's standalone tables read multilabel_report's, and named it in their errors."""
    needs(engine, name)
    table = label_table([(["a"], ["a", "b"]), (["b"], ["b"])])
    with pytest.raises(Exception) as raised:
        engine.table_function(name, table, **params)
    assert said.format(name=name) in str(raised.value), raised.value
    assert "multilabel_report" not in str(raised.value), raised.value


@pytest.mark.parametrize("file", FILES)
def test_per_label_counts(engine, file):
    needs(engine, "label_metrics")
    expected = conformance(file)["expected"]
    got = engine.table_function("label_metrics", label_table(rows_of(file))).to_pylist()
    assert [r["label"] for r in got] == sorted(expected["per_label"])
    for r in got:
        want = expected["per_label"][r["label"]]
        assert {k: r[k] for k in ("tp", "fp", "fn", "tn", "support")} == want, r["label"]
    assert sum(r["tp"] for r in got) == expected["micro.tp"]
    assert sum(r["fp"] for r in got) == expected["micro.fp"]
    assert sum(r["fn"] for r in got) == expected["micro.fn"]
    for r in got:  # each label's ratios from its own counts
        tp, fp, fn, tn = r["tp"], r["fp"], r["fn"], r["tn"]
        assert close(r["precision"], tp / (tp + fp) if tp + fp else 0.0)
        assert close(r["recall"], tp / (tp + fn) if tp + fn else 0.0)
        assert close(r["f1"], 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0)
        assert close(r["jaccard"], tp / (tp + fp + fn) if tp + fp + fn else 0.0)
        assert close(r["accuracy"], (tp + tn) / expected["n_rows"])


def test_every_key_is_mapped():
    for file in FILES:
        data = conformance(file)
        for section in ("expected", "expected_mldr_diagnose", "expected_mldr_ignore"):
            for key in data.get(section, {}):
                if key != "per_label" and not re.fullmatch(r"micro\.(tp|fp|fn)", key):
                    report_column(key)  # raises KeyError on a key no column covers


def indicator_table(file: str) -> tuple[pa.Table, list[str]]:
    """The seed as the R walkthrough holds it: L1..Ln true, L1.1..Ln.1 predicted (0/1 ints)."""
    data = conformance(file)
    labels = data["labels"]
    columns = {}
    for matrix, suffix in ((data["true_indicators"], ""), (data["predicted_indicators"], ".1")):
        for j, label in enumerate(labels):
            columns[label + suffix] = pa.array([row[j] for row in matrix], pa.int32())
    return pa.table(columns), labels


@pytest.mark.parametrize("file", INDICATOR_FILES)
def test_indicator_columns_give_the_seed_rows(engine, file):
    needs(engine, "labels_from_indicators")
    table, labels = indicator_table(file)
    sides = {"actual": labels, "predicted": [f"{lab}.1" for lab in labels]}
    lists = engine.lists_from_indicators(table, sides, labels)
    got = list(
        zip(lists.column("actual").to_pylist(), lists.column("predicted").to_pylist(), strict=True)
    )
    assert got == [(sorted(a), sorted(p)) for a, p in rows_of(file)]


@pytest.mark.first(rank=14)
@pytest.mark.parametrize("file", INDICATOR_FILES)
def test_indicator_columns_report(engine, file):
    """Every expected figure, from the indicator columns (the seeds' own layout)."""
    needs(engine, "labels_from_indicators", "multilabel_report", "label_metrics")
    table, labels = indicator_table(file)
    sides = {"actual": labels, "predicted": [f"{lab}.1" for lab in labels]}
    lists = engine.lists_from_indicators(table, sides, labels)
    by_params: dict[str, dict[str, Any]] = {}
    for f, key, column, params, want in cases():
        if f != file:
            continue
        frozen = repr(sorted(params.items()))
        if frozen not in by_params:
            by_params[frozen] = only_row(
                engine.table_function("multilabel_report", lists, **params)
            )
        got = by_params[frozen][column]
        assert close(got, want), f"{key}: {got} != {want}"
    expected = conformance(file)["expected"]["per_label"]
    per_label = engine.table_function("label_metrics", lists, labels=labels).to_pylist()
    for r in per_label:
        assert {k: r[k] for k in ("tp", "fp", "fn", "tn", "support")} == expected[r["label"]]


@pytest.mark.parametrize("file", INDICATOR_FILES)
def test_indicators_round_trip(engine, file):
    needs(engine, "indicators_from_labels")
    data = conformance(file)
    labels = data["labels"]
    got = engine.indicators_from_lists(label_table(rows_of(file)), "actual", labels)
    assert got == data["true_indicators"]
    got = engine.indicators_from_lists(label_table(rows_of(file)), "predicted", labels)
    assert got == data["predicted_indicators"]


def test_gatto_errata_are_not_reproduced(engine):
    """The walkthrough's printed (wrong) figures must not come out."""
    needs(engine, "multilabel_report")
    got = only_row(
        engine.table_function("multilabel_report", label_table(rows_of("gatto_51.json")))
    )
    assert not close(got["macro_precision"], 0.8630952)
    assert not close(got["micro_precision"], 0.9622642)
    assert got["wlp"] == 0.25
    assert not close(got["subset_accuracy"], got["label_accuracy_micro"])


@pytest.mark.parametrize("bad", [2, -1])
def test_an_indicator_other_than_0_or_1_is_one_error(engine, bad):
    """Every engine refuses an indicator that is not 0 or 1 with one message (Polars and
    Spark read such a value as 'not 1' before, where DuckDB refused it)."""
    needs(engine, "labels_from_indicators")
    table = pa.table({"a": pa.array([1, bad], pa.int32()), "b": pa.array([0, 1], pa.int32())})
    with pytest.raises(Exception) as raised:
        engine.lists_from_indicators(
            table, {"actual": ["a", "b"], "predicted": ["a", "b"]}, ["a", "b"]
        )
    assert (
        f"labels_from_indicators takes indicators 0 or 1 (or booleans). Got {bad} instead."
        in str(raised.value)
    )


def test_indicator_rows_are_one_verdict(engine):
    """Every engine: a NULL label name is no label (dropped), a repeated name stays (in the
    names' order), a NULL indicator makes the row NULL; and an indicator other than 0 or 1
    is an error in such a row too (DuckDB and PostgreSQL gave NULL, Polars and Spark the
    error; Spark dropped the repeated name, DuckDB kept the NULL one)."""
    needs(engine, "labels_from_indicators")
    table = pa.table(
        {
            "a": pa.array([1, 1, 0], pa.int32()),
            "b": pa.array([1, None, 1], pa.int32()),
            "c": pa.array([1, 0, 1], pa.int32()),
        }
    )
    got = engine.lists_from_indicators(table, {"x": ["a", "b", "c"]}, ["c", None, "c"])
    assert got.column("x").to_pylist() == [["c", "c"], None, ["c"]]
    bad = pa.table({"a": pa.array([2], pa.int32()), "b": pa.array([None], pa.int32())})
    with pytest.raises(Exception) as raised:
        engine.lists_from_indicators(bad, {"x": ["a", "b"]}, ["a", "b"])
    assert "labels_from_indicators takes indicators 0 or 1 (or booleans). Got 2" in str(
        raised.value
    )


def test_indicators_of_a_null_label_and_of_boolean_lists(engine):
    """A NULL label of the universe has a NULL indicator in every engine (Polars gave 1 for a
    list holding NULL, Spark 0). Boolean lists (not a label kind of lists: Polars refuses
    them, naming the type) get the right 0/1 where accepted (Spark compared 'True' with
    'true' and gave 0 everywhere)."""
    needs(engine, "indicators_from_labels")
    table = pa.table({"actual": pa.array([["a"], ["b", None], None, []], pa.list_(pa.string()))})
    got = engine.indicators_from_lists(table, "actual", ["a", None, "b"])
    assert got == [[1, None, 0], [0, None, 1], None, [0, None, 0]]
    booleans = pa.table({"actual": pa.array([[True], [False, True], []], pa.list_(pa.bool_()))})
    if engine.name == "polars":
        with pytest.raises(MlsqlError, match="Boolean"):
            engine.indicators_from_lists(booleans, "actual", [False, True])
        return
    got = engine.indicators_from_lists(booleans, "actual", [False, True])
    assert got == [[0, 1], [1, 1], [0, 0]]


@pytest.mark.parametrize("name", ["macro_fbeta", "weighted_fbeta"])
def test_an_fbeta_table_without_beta_is_f1(engine, name):
    """beta=None is beta 1, as omitting it is, in every engine (DuckDB's NULL was; Polars and
    Spark asked their report for F1 columns and failed to find the F-beta one)."""
    needs(engine, name)
    table = label_table(rows_of("gatto_51.json"))
    got = only_row(engine.table_function(name, table, beta=None))[name]
    f1 = name.replace("fbeta", "f1")
    assert close(got, only_row(engine.table_function(f1, table))[f1])
