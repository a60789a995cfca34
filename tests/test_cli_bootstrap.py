"""``mlsql eval --ci`` and ``mlsql compare`` through the real entry point.

Expected numbers: estimates from the conformance data (exact fractions), intervals
and comparisons from the Python API of the same engine with the same seed
(``mlsql.bootstrap``, ``mp.bootstrap``, ``mlsql.compare``...), which
tests/test_bootstrap.py checks against an independent numpy bootstrap.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import mlsql
from mlsql._registry import LOWER_IS_BETTER, REGISTRY, measures
from mlsql.cli.compare import WORSE
from tests.conftest import ENGINE_ADAPTERS, _engines, _load_adapter
from tests.test_cli import EXAMPLE, EXPECTED, INJECTION, LOCAL_ENGINES, close, invoke

RESAMPLES = "300"
#: summary columns a bootstrap resamples from label lists (the rest get no interval)
LIST_COLUMNS = (
    "micro_precision",
    "micro_recall",
    "micro_f1",
    "micro_jaccard",
    "samples_precision",
    "samples_recall",
    "samples_f1",
    "samples_jaccard",
    "subset_accuracy",
    "zero_one_loss",
)


def api_bootstrap(engine: str, table: pa.Table, entries: list[Any], **kw: Any) -> list[dict]:
    """The engine's own ``bootstrap`` on ``table``, as dicts."""
    kw = {"n_resamples": int(RESAMPLES), "seed": 7, **kw}
    if engine == "duckdb":
        rel = mlsql.bootstrap(table, "actual", "predicted", entries, **kw)
        return [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]
    if engine == "polars":
        import polars as pl

        import mlsql.polars as mp

        return mp.bootstrap(pl.from_arrow(table), "actual", "predicted", entries, **kw).to_dicts()
    import mlsql.spark as ms
    from tests.engines.spark_engine import frame

    df = frame(table)
    return [r.asDict() for r in ms.bootstrap(df, "actual", "predicted", entries, **kw).collect()]


def eval_ci(engine: str, path: Any, *args: Any) -> dict:
    result = invoke(
        "eval", path, "-a", "actual", "-p", "predicted", "--engine", engine, "-f", "json",
        "--ci", "--resamples", RESAMPLES, "--seed", "7", *args,
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def same(got: Any, want: Any) -> bool:
    if got is None or want is None:
        return got is want
    return math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-15)


def assert_rows(got: dict, want: dict, keys: tuple[str, ...]) -> None:
    wrong = {k: (got[k], want[k]) for k in keys if not same(got[k], want[k])}
    assert not wrong, f"(CLI, API) per column: {wrong}"


def blog_table() -> pa.Table:
    return pq.read_table(EXAMPLE)


# ---------------------------------------------------------------- eval --ci
@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_eval_ci_equals_the_engines_bootstrap(engine: str) -> None:
    report = eval_ci(engine, EXAMPLE)
    ivs = {r["measure"]: r for r in report["intervals"]}
    assert list(ivs) == [*LIST_COLUMNS, "hamming_loss"]
    # the report's zero_division (0) goes to every measure that takes it
    entries = [c if c in ("subset_accuracy", "zero_one_loss") else (c, {"zero_division": 0})
               for c in LIST_COLUMNS]  # fmt: skip
    want = api_bootstrap(engine, blog_table(), entries)
    for column, row in zip(LIST_COLUMNS, want, strict=True):
        assert_rows(ivs[column], row, ("estimate", "low", "high", "std_error"))
    # the Hamming loss of the report divides by its label universe: 3 labels
    [hamming] = api_bootstrap(engine, blog_table(), [("hamming_loss", {"n_labels": 3})])
    assert_rows(ivs["hamming_loss"], hamming, ("estimate", "low", "high", "std_error"))
    # estimates are the report's numbers, which are the conformance fractions
    assert close(ivs["micro_f1"]["estimate"], EXPECTED["micro.f1"])
    assert close(ivs["hamming_loss"]["estimate"], EXPECTED["hamming_loss"])
    for r in ivs.values():
        assert r["low"] <= r["estimate"] <= r["high"] and r["std_error"] > 0
    assert report["params"]["ci"]["n_resamples"] == int(RESAMPLES)


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_eval_ci_says_which_measures_have_no_interval(engine: str) -> None:
    report = eval_ci(engine, EXAMPLE)
    measured = {r["measure"] for r in report["intervals"]}
    assert not measured & {"macro_f1", "weighted_f1", "label_accuracy_macro"}
    [note] = [n for n in report["notes"] if n.startswith("no interval for")]
    assert "macro_f1" in note and "weighted_f1" in note and "per-row weights" in note


def pairs_table(flip_for_b: int = 0) -> pa.Table:
    """60 ids scored by models A and B (B right on more labels), label lists."""
    labels = ["a", "b", "c", "d"]
    rows = []
    for i in range(60):
        actual = [labels[j] for j in range(4) if (i >> j) & 1 or j == i % 4]
        a_pred = actual[:1] + (["d"] if i % 3 == 0 else [])
        b_pred = actual if i >= flip_for_b else a_pred
        rows.append({"id": i, "model": "A", "actual": actual, "predicted": a_pred})
        rows.append({"id": i, "model": "B", "actual": actual, "predicted": b_pred})
    return pa.Table.from_pylist(rows)


@pytest.fixture
def pairs(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.parquet"
    pq.write_table(pairs_table(), path)
    return path


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_eval_ci_by_group_equals_the_api(engine: str, pairs: Path) -> None:
    report = eval_ci(engine, pairs, "--by", "model")
    got = {(r["model"], r["measure"]): r for r in report["intervals"]}
    table = pairs_table().drop_columns(["id"])
    want = api_bootstrap(engine, table, ["micro_f1", "subset_accuracy"], by="model")
    assert len(want) == 4
    for row in want:
        assert_rows(got[(row["model"], row["measure"])], row, ("estimate", "low", "high"))


def test_eval_ci_by_groups_of_different_label_universes(tmp_path: Path) -> None:
    """Each group's Hamming loss is over its own labels, and a group's rows may hold more
    labels than another group's universe (which once failed the whole report): each
    group's interval is the bootstrap of that group alone over its own labels."""
    table = pa.table(
        {
            "g": [1, 1, 1, 2, 2, 2, 3],
            "actual": [["a", "b"], ["b"], ["c", "a"], ["c"], ["c"], [], ["z"]],
            "predicted": [["a"], ["b", "c"], ["c"], ["c"], [], ["c"], []],
        }
    )
    path = tmp_path / "groups.parquet"
    pq.write_table(table, path)
    report = eval_ci("duckdb", path, "--by", "g")
    got = {r["g"]: r for r in report["intervals"] if r["measure"] == "hamming_loss"}
    universes = {r["g"]: r["n_labels"] for r in report["summary"]}
    assert universes == {1: 3, 2: 1, 3: 1} and sorted(got) == [1, 2, 3]
    for g, n_labels in universes.items():
        rows = table.filter(pa.compute.equal(table["g"], g))
        [want] = api_bootstrap("duckdb", rows, [("hamming_loss", {"n_labels": n_labels})], by="g")
        assert_rows(got[g], want, ("estimate", "low", "high", "std_error"))


@pytest.mark.long
def test_eval_ci_in_the_terminal_table_html_markdown_and_csv(pairs: Path, tmp_path: Path) -> None:
    base = ["eval", pairs, "-a", "actual", "-p", "predicted", "--by", "model", "--ci"]
    out = invoke(*base, "--resamples", RESAMPLES).stdout
    assert "groups: 95% bootstrap intervals, 300 resamples, seed 0" in out
    assert "std error" in out
    page = tmp_path / "r.html"
    assert invoke(*base, "--confidence", "0.9", "-f", "html", "-o", page).exit_code == 0
    html = page.read_text()
    assert "90% bootstrap intervals" in html and "<svg" in html.split("Groups with their")[1]
    md = invoke(*base, "-f", "markdown").stdout
    assert "| measure | estimate | low | high | std error |" in md
    csv_head = invoke(*base, "-f", "csv").stdout.splitlines()[0].split(",")
    assert {"micro_f1_low", "micro_f1_high", "micro_f1_std_error"} <= set(csv_head)
    assert "macro_f1_low" not in csv_head


def test_small_intervals_show_significant_digits(tmp_path: Path) -> None:
    # 40 rows, 40 labels, one row wrong on two labels: Hamming loss 2 / 1600 = 0.00125
    # before: at 4 decimals its estimate, low and high all read 0.0013 or 0.0000
    n = 40
    path = tmp_path / "small.parquet"
    predicted = [[f"l{i}"] for i in range(n)]
    predicted[0] = ["l1"]
    pq.write_table(
        pa.table(
            {
                "actual": pa.array([[f"l{i}"] for i in range(n)], pa.list_(pa.string())),
                "predicted": pa.array(predicted, pa.list_(pa.string())),
            }
        ),
        path,
    )
    base = ["eval", path, "-a", "actual", "-p", "predicted", "--ci", "--resamples", RESAMPLES]
    result = invoke(*base)
    assert result.exit_code == 0, result.stderr
    [line] = [x for x in result.stdout.splitlines() if x.strip().startswith("hamming_loss")]
    estimate, low, high, error = line.split()[1:]
    assert estimate == "0.001250"
    for cell in (low, high, error):
        assert cell == "0.0000" or len(cell.replace(".", "").lstrip("0")) == 4, line
    md = invoke(*base, "-f", "markdown").stdout
    assert "| hamming\\_loss | 0.001250 |" in md


@pytest.mark.long
def test_eval_ci_single_label_uses_the_class_measures(tmp_path: Path) -> None:
    path = tmp_path / "single.parquet"
    actual = ["x", "y", "z", "x", "y"] * 8
    predicted = ["x", "y", "x", "x", "z"] * 8
    pq.write_table(pa.table({"actual": actual, "predicted": predicted}), path)
    report = eval_ci("duckdb", path)
    ivs = {r["measure"]: r for r in report["intervals"]}
    scalar = pa.table({"actual": actual, "predicted": predicted})
    for column, entry in [
        ("accuracy", "accuracy"),
        ("macro_f1", ("f1_score", {"average": "macro", "zero_division": 0})),
        ("matthews_corrcoef", "matthews_corrcoef"),
    ]:
        [want] = api_bootstrap("duckdb", scalar, [entry])
        assert_rows(ivs[column], want, ("estimate", "low", "high", "std_error"))
    assert "micro_jaccard" not in ivs  # no resampled Jaccard over classes: said in a note
    assert any("micro_jaccard" in n for n in report["notes"])
    # a label universe changes the macro averages, which the bootstrap cannot follow: said so
    report = eval_ci("duckdb", path, "--labels", "x,y,z,w")
    measured = {r["measure"] for r in report["intervals"]}
    assert "accuracy" in measured and "macro_f1" not in measured
    assert any("macro_f1" in n and "label universe" in n for n in report["notes"])


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_eval_ci_with_weights_gives_the_weighted_numbers(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "w.parquet"
    weights = [2.0, 0.5, 0.0, 1.0, 3.0, 1.5, 1.0][: blog_table().num_rows]
    data = blog_table().append_column("w", pa.array(weights))
    pq.write_table(data, path)
    report = eval_ci(engine, path, "--sample-weight", "w")
    ivs = {r["measure"]: r for r in report["intervals"]}
    assert list(ivs) == [*LIST_COLUMNS, "hamming_loss"]
    con = mlsql.connect()
    for column in ("micro_f1", "samples_jaccard", "subset_accuracy", "micro_precision"):
        zd = "" if column == "subset_accuracy" else ", zero_division := 0"
        [(want,)] = con.sql(
            f"SELECT {column}(actual, predicted, sample_weight := w{zd}) FROM data"
        ).fetchall()
        assert same(ivs[column]["estimate"], want), column
        assert same(report["summary"][0][column], want), column
    [(unweighted,)] = con.sql("SELECT micro_f1(actual, predicted) FROM data").fetchall()
    assert not same(ivs["micro_f1"]["estimate"], unweighted)  # the weights do change it
    entries = [("micro_f1", {"zero_division": 0})]
    [want_row] = api_bootstrap(engine, data, entries, sample_weight="w")
    assert_rows(ivs["micro_f1"], want_row, ("estimate", "low", "high", "std_error"))


def test_eval_ci_refuses_bad_settings(tmp_path: Path) -> None:
    path = tmp_path / "w.parquet"
    pq.write_table(blog_table(), path)
    args = ["eval", path, "-a", "actual", "-p", "predicted", "--ci"]
    result = invoke(*args, "--confidence", "1.5")
    assert result.exit_code == 2 and "--confidence must be strictly between 0 and 1" in (
        result.stderr
    )
    assert invoke(*args, "--resamples", "1").exit_code == 2


# ---------------------------------------------------------------- compare
def compare_json(engine: str, path: Any, *args: Any) -> tuple[int, list[dict], str]:
    result = invoke(
        "compare", path, "-a", "actual", "-p", "predicted", "--engine", engine, "-f", "json",
        "--resamples", RESAMPLES, "--seed", "3", *args,
    )  # fmt: skip
    rows = json.loads(result.stdout) if result.exit_code in (0, WORSE) else []
    return result.exit_code, rows, result.stderr


COMPARE_KEYS = ("baseline_estimate", "estimate", "difference", "low", "high", "p_value")


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_compare_equals_the_api(engine: str, pairs: Path) -> None:
    code, rows, _ = compare_json(engine, pairs, "--baseline", "A", "-m", "micro_f1,subset_accuracy")
    assert code == 0
    kw = {"baseline": "A", "n_resamples": int(RESAMPLES), "seed": 3}
    if engine == "duckdb":
        rel = mlsql.compare(
            pairs_table(), "actual", "predicted", ["micro_f1", "subset_accuracy"], **kw
        )
        want = [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]
    else:
        import polars as pl

        import mlsql.polars as mp

        frame = pl.from_arrow(pairs_table())
        want = mp.compare(frame, "actual", "predicted", ["micro_f1", "subset_accuracy"], **kw)
        want = want.to_dicts()
    assert [(r["model"], r["measure"]) for r in rows] == [
        ("B", "micro_f1"),
        ("B", "subset_accuracy"),
    ]
    for got, expected in zip(rows, want, strict=True):
        assert_rows(got, expected, (*COMPARE_KEYS, "mcnemar_p_value"))
    assert rows[0]["difference"] > 0 and rows[0]["low"] > 0  # B is really better


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_fail_if_worse_exit_codes_follow_the_measure_direction(engine: str, pairs: Path) -> None:
    # B is better: nothing is worse than A; A is worse than B (lower F1, higher Hamming loss)
    hamming = ["--n-labels", "4", "--fail-if-worse"]
    assert compare_json(engine, pairs, "--baseline", "A", "--fail-if-worse", "micro_f1")[0] == 0
    assert compare_json(engine, pairs, "--baseline", "A", *hamming, "hamming_loss")[0] == 0
    code, rows, err = compare_json(engine, pairs, "--baseline", "B", "--fail-if-worse", "micro_f1")
    assert code == WORSE and "model 'A' is worse than the baseline 'B' on micro_f1" in err
    code, rows, err = compare_json(engine, pairs, "--baseline", "B", *hamming, "hamming_loss")
    assert code == WORSE and "on hamming_loss(n_labels=4)" in err
    [row] = [r for r in rows if r["measure"].startswith("hamming_loss")]
    assert row["low"] > 0  # a higher loss: worse although the difference is positive


def test_identical_models_are_never_worse(tmp_path: Path) -> None:
    path = tmp_path / "same.parquet"
    pq.write_table(pairs_table(flip_for_b=60), path)  # B predicts as A does
    code, rows, _ = compare_json("duckdb", path, "--baseline", "A", "--fail-if-worse", "micro_f1")
    assert code == 0
    assert all(r["difference"] == 0 and r["p_value"] == 1 for r in rows)


def test_unpaired_rows_are_an_error_unless_dropped(tmp_path: Path) -> None:
    path = tmp_path / "unpaired.parquet"
    table = pairs_table()
    pq.write_table(table.slice(0, table.num_rows - 1), path)  # the last id lacks model B's row
    code, _, err = compare_json("duckdb", path, "--baseline", "A")
    assert code == 2
    assert "1 rows have no partner (1 of the baseline without a row of model 'B')" in err
    assert "Pass --drop-unpaired to leave them out" in err
    code, rows, _ = compare_json("duckdb", path, "--baseline", "A", "--drop-unpaired")
    assert code == 0 and rows


def test_compare_says_what_is_wrong(pairs: Path) -> None:
    code, _, err = compare_json("duckdb", pairs, "--baseline", "C")
    assert code == 2 and "the baseline 'C' is not a value of the model column" in err
    code, _, err = compare_json("duckdb", pairs, "--baseline", "A", "--model", "nope")
    assert code == 2 and "--model 'nope': no such column" in err
    code, _, err = compare_json("duckdb", pairs, "--baseline", "A", "-m", "hamming_loss")
    assert code == 2 and "--n-labels" in err
    code, _, err = compare_json("duckdb", pairs, "--baseline", "A", "-m", "label_metrics")
    assert code == 2 and "compare cannot resample label_metrics" in err


def test_a_misspelt_measure_is_caught_before_the_data_and_gets_suggestions(
    tmp_path: Path,
) -> None:
    # before: the file was read first, then every one of 55 names was listed
    missing = tmp_path / "not-read.parquet"
    code, _, err = compare_json("duckdb", missing, "--baseline", "A", "-m", "micro_f11")
    assert code == 2
    assert err == (
        "mlsql: error: --measures 'micro_f11': no such measure; did you mean 'micro_f1', "
        "'macro_f1' or 'micro_fbeta'?\n"
    )
    code, _, err = compare_json("duckdb", missing, "--baseline", "A", "--fail-if-worse", "acuracy")
    assert code == 2 and err == (
        "mlsql: error: --fail-if-worse 'acuracy': no such measure; did you mean 'accuracy', "
        "'accuracy_score' or 'subset_accuracy'?\n"
    ), err


def test_a_null_model_is_spelt_null_and_named_as_the_cause_of_repeated_ids(
    tmp_path: Path,
) -> None:
    # rows 4k: A, 4k+1: B, 4k+2 and 4k+3: two runs of a model left NULL (ids repeat there)
    path = tmp_path / "null_model.parquet"
    pq.write_table(
        pa.table(
            {
                "model": [("A", "B", None, None)[i % 4] for i in range(40)],
                "id": [i // 4 for i in range(40)],
                "actual": [["a"]] * 40,
                "predicted": [["a"] if i % 3 == 0 else ["b"] for i in range(40)],
            }
        ),
        path,
    )
    code, _, err = compare_json("duckdb", path, "--baseline", "A")
    # before: "... Got 10 repeated rows." and nothing on where they are
    assert code == 2
    assert err == (
        "mlsql: error: compare pairs rows on 'id', which must be unique within each model "
        "(and group). Got 10 repeated rows. 20 rows have a NULL model 'model': they count as "
        "one model, NULL, and repeat 10 of its 'id' values; give them their model or leave "
        "them out.\n"
    )
    # the table spells the NULL group as the heading does (before: "–" in the table)
    result = invoke("eval", path, "-a", "actual", "-p", "predicted", "--by", "model")
    assert result.exit_code == 0, result.stderr
    rows = [line.split()[0] for line in result.stdout.splitlines() if line.strip()]
    assert "NULL" in rows and "–" not in rows
    assert "model = NULL" in result.stdout
    result = invoke(
        "eval", path, "-a", "actual", "-p", "predicted", "--by", "model", "-f", "markdown"
    )
    assert "| NULL |" in result.stdout


def test_compare_takes_macro_averages(pairs: Path) -> None:
    code, rows, err = compare_json("duckdb", pairs, "--baseline", "A", "-m", "macro_f1")
    assert code == 0, err
    [want] = mlsql.compare(
        pairs_table(), "actual", "predicted", ["macro_f1"], n_resamples=int(RESAMPLES), seed=3
    ).fetchall()
    assert rows[0]["measure"] == "macro_f1"
    assert same(rows[0]["difference"], want[4]) and same(rows[0]["p_value"], want[7])


def test_compare_help_documents_the_exit_code() -> None:
    out = " ".join(invoke("compare", "--help").stdout.split())
    assert "--fail-if-worse" in out and f"{WORSE} with --fail-if-worse" in out


def test_hostile_column_names_are_only_names(tmp_path: Path) -> None:
    hostile_model, hostile_id, hostile_by = INJECTION, INJECTION + "id", "g' OR 1=1 --"
    table = pairs_table()
    table = table.rename_columns(
        [{"model": hostile_model, "id": hostile_id}.get(c, c) for c in table.column_names]
    ).append_column(hostile_by, pa.array(["g"] * table.num_rows))
    path = tmp_path / "hostile.parquet"
    pq.write_table(table, path)
    code, rows, err = compare_json(
        "duckdb", path, "--baseline", "A", "--model", hostile_model, "--id", hostile_id,
        "--by", hostile_by, "-m", "micro_f1",
    )  # fmt: skip
    assert code == 0, err
    [row] = rows
    assert row[hostile_by] == "g" and row["model"] == "B"
    report = eval_ci("duckdb", path, "--by", hostile_model)
    assert {r[hostile_model] for r in report["intervals"]} == {"A", "B"}


# ---------------------------------------------------------------- Spark, once
@pytest.mark.long
@pytest.mark.skipif("spark" not in _engines(), reason="MLSQL_TEST_ENGINES leaves Spark out")
def test_spark_eval_ci_and_compare_equal_the_api(pairs: Path) -> None:
    _load_adapter(ENGINE_ADAPTERS["spark"])  # the CLI reuses the suite's running session
    report = eval_ci("spark", pairs, "--by", "model")
    got = {(r["model"], r["measure"]): r for r in report["intervals"]}
    want = api_bootstrap("spark", pairs_table().drop_columns(["id"]), ["micro_f1"], by="model")
    for row in want:
        assert_rows(got[(row["model"], "micro_f1")], row, ("estimate", "low", "high"))
    code, rows, _ = compare_json("spark", pairs, "--baseline", "B", "--fail-if-worse", "micro_f1")
    assert code == WORSE
    import mlsql.spark as ms
    from tests.engines.spark_engine import frame

    api = ms.compare(
        frame(pairs_table()), "actual", "predicted", ["micro_f1"], baseline="B",
        n_resamples=int(RESAMPLES), seed=3,
    )  # fmt: skip
    [want] = [r.asDict() for r in api.collect()]
    [got_row] = [r for r in rows if r["measure"] == "micro_f1"]
    assert_rows(got_row, want, COMPARE_KEYS)
    # Spark draws from its own hash in the executors: the estimates are DuckDB's exactly, the
    # interval DuckDB's within Monte Carlo error (300 resamples: a few hundredths)
    _, duck, _ = compare_json("duckdb", pairs, "--baseline", "B", "--fail-if-worse", "micro_f1")
    for got_row, want_row in zip(rows, duck, strict=True):
        assert_rows(got_row, want_row, ("baseline_estimate", "estimate", "difference"))
        assert abs(got_row["low"] - want_row["low"]) < 0.05
        assert abs(got_row["high"] - want_row["high"]) < 0.05


# ---------------------------------------------------------------- the registry's direction
def test_every_lower_is_better_name_is_a_declared_aggregate() -> None:
    measures()
    assert all(REGISTRY[name].kind == "aggregate" for name in LOWER_IS_BETTER)
    assert REGISTRY["error_rate"].lower_is_better and not REGISTRY["accuracy"].lower_is_better


def test_every_loss_and_error_is_lower_is_better() -> None:
    """An aggregate named a loss, an error or a Brier score ranks down in compare and slices
    (a standard error is a statistic's spread, not a measure of the predictions)."""
    measures()
    named = [
        m.name
        for m in REGISTRY.values()
        if m.kind == "aggregate"
        and re.search(r"loss|brier|_error$", m.name)
        and not m.name.endswith("std_error")
    ]
    assert "multiclass_brier_score" in named
    assert [name for name in named if name not in LOWER_IS_BETTER] == []


def test_an_integer_model_column_takes_an_integer_baseline(tmp_path: Path) -> None:
    table = pairs_table()
    codes = pa.array([1 if m == "A" else 2 for m in table.column("model").to_pylist()])
    path = tmp_path / "ints.parquet"
    pq.write_table(table.set_column(table.column_names.index("model"), "model", codes), path)
    code, rows, _ = compare_json("duckdb", path, "--baseline", "1", "-m", "micro_f1")
    assert code == 0 and [r["model"] for r in rows] == [2]
    code, _, err = compare_json("duckdb", path, "--baseline", "A")
    assert code == 2 and "holds integers, so the baseline must be one" in err
