"""The ``mlsql`` command through its real entry point, on the conformance data.

Expected numbers come from tests/data/conformance (exact fractions) or from
the plain-Python oracle in tests/oracle.py, never from mlsql's own output.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from mlsql.cli import app
from tests import oracle
from tests.conftest import ENGINE_ADAPTERS, ROOT, _engines, _load_adapter, conformance

EXAMPLE = ROOT / "examples" / "data" / "blog_tags.parquet"
BLOG = conformance("hivemall_blog_tags.json")
ROWS = [(r["actual"], r["predicted"]) for r in BLOG["rows"]]
EXPECTED = BLOG["expected"]
SLIDES = conformance("slides_single_label.json")
ANIMALS = SLIDES["animals"]
INJECTION = 'x"; DROP TABLE t; --'

runner = CliRunner()


def invoke(*args: Any) -> Any:
    """Run ``mlsql ARGS`` in-process; return the click result."""
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def eval_json(
    path: Any,
    *args: Any,
    actual: str = "actual",
    predicted: str = "predicted",
    engine: str = "duckdb",
) -> dict:
    result = invoke(
        "eval", path, "-a", actual, "-p", predicted, "-f", "json", "--engine", engine, *args
    )
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["engine"] == engine
    return report


#: engines run in-process by most tests (Spark only where it says so: its start is slow)
LOCAL_ENGINES = [e for e in _engines() if e != "spark"]


@pytest.fixture(params=LOCAL_ENGINES)
def cli_engine(request: pytest.FixtureRequest) -> str:
    """--engine duckdb, then --engine polars."""
    return request.param


def eval_on(engine: str, path: Any, *args: Any) -> Any:
    """``mlsql eval PATH -a actual -p predicted --engine ENGINE ARGS``."""
    return invoke("eval", path, "-a", "actual", "-p", "predicted", "--engine", engine, *args)


# ---------------------------------------------------------------- expected values

#: conformance key -> multilabel_report column
SUMMARY_KEYS = {
    "n_rows": "n_rows",
    "n_labels": "n_labels",
    "micro.precision": "micro_precision",
    "micro.recall": "micro_recall",
    "micro.f1": "micro_f1",
    "micro.jaccard": "micro_jaccard",
    "macro.precision[zd={zd}]": "macro_precision",
    "macro.recall[zd={zd}]": "macro_recall",
    "macro.f1[zd={zd}]": "macro_f1",
    "macro.jaccard[zd={zd}]": "macro_jaccard",
    "macro.f1_of_means[zd={zd}]": "macro_f1_of_means",
    "weighted.precision[zd={zd}]": "weighted_precision",
    "weighted.f1[zd={zd}]": "weighted_f1",
    "samples.precision[zd={zd}]": "samples_precision",
    "samples.recall[zd={zd}]": "samples_recall",
    "samples.f1[zd={zd}]": "samples_f1",
    "samples.jaccard[zd={zd}]": "samples_jaccard",
    "hamming_loss": "hamming_loss",
    "subset_accuracy": "subset_accuracy",
    "zero_one_loss": "zero_one_loss",
    "label_accuracy.micro": "label_accuracy_micro",
    "clp": "clp",
    "mlp": "mlp",
    "wlp": "wlp",
}


def expected_summary(zd: int = 0) -> dict[str, Any]:
    return {col: EXPECTED[key.format(zd=zd)] for key, col in SUMMARY_KEYS.items()}


def close(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return got is want
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-15)


def assert_summary(row: dict[str, Any], want: dict[str, Any]) -> None:
    wrong = {k: (row.get(k), v) for k, v in want.items() if not close(row.get(k), v)}
    assert not wrong, f"(got, expected) per column: {wrong}"


def assert_labels(rows: list[dict[str, Any]], per_label: dict[str, dict[str, int]]) -> None:
    got = {r["label"]: {k: r[k] for k in ("tp", "fp", "fn", "tn", "support")} for r in rows}
    assert got == per_label
    for r in rows:  # the ratios from the counts, as the definitions say
        tp, fp, fn = r["tp"], r["fp"], r["fn"]
        assert close(r["precision"], oracle.precision(tp, fp, fn))
        assert close(r["recall"], oracle.recall(tp, fp, fn))
        assert close(r["f1"], oracle.fbeta(tp, fp, fn))
        assert close(r["jaccard"], oracle.jaccard(tp, fp, fn))


# ---------------------------------------------------------------- data files


def _labels_table(rows: list[tuple[Any, Any]], **extra: list[Any]) -> pa.Table:
    kind = pa.list_(pa.string())
    return pa.table(
        {
            **{k: pa.array(v) for k, v in extra.items()},
            "actual": pa.array([a for a, _ in rows], kind),
            "predicted": pa.array([p for _, p in rows], kind),
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli")
    out: dict[str, Path] = {}
    table = _labels_table(ROWS)
    out["parquet"] = d / "blog.parquet"
    pq.write_table(table, out["parquet"])
    parts = d / "parts"
    parts.mkdir()
    pq.write_table(table.slice(0, 3), parts / "part-0.parquet")
    pq.write_table(table.slice(3), parts / "part-1.parquet")
    out["dir"] = parts
    out["ndjson"] = d / "blog.ndjson"
    out["ndjson"].write_text(
        "".join(json.dumps({"actual": a, "predicted": p}) + "\n" for a, p in ROWS)
    )
    out["csv"] = d / "blog.csv"
    with out["csv"].open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["actual", "predicted"])
        writer.writerows([",".join(a), ",".join(p)] for a, p in ROWS)
    out["duckdb"] = d / "blog.duckdb"
    con = duckdb.connect(str(out["duckdb"]))
    con.register("src", table)
    con.execute("CREATE TABLE tags AS SELECT * FROM src")
    con.close()
    groups = ["a", "a", "a", "b", "b", "b", "b"]
    out["grouped"] = d / "grouped.parquet"
    pq.write_table(_labels_table(ROWS, g=groups), out["grouped"])
    out["injection"] = d / "injection.parquet"
    pq.write_table(
        pa.table(
            {
                INJECTION: pa.array(groups),
                "a'); DROP TABLE t; --": table["actual"],
                'p"': table["predicted"],
            }
        ),
        out["injection"],
    )
    ints = {"bird": 1, "cat": 2, "dog": 3}
    out["ints"] = d / "ints.parquet"
    pq.write_table(
        pa.table(
            {
                "actual": pa.array([[ints[x] for x in a] for a, _ in ROWS], pa.list_(pa.int32())),
                "predicted": pa.array(
                    [[ints[x] for x in p] for _, p in ROWS], pa.list_(pa.int64())
                ),
                "score": pa.array([0.5] * len(ROWS)),
                "words": pa.array(["x"] * len(ROWS)),
            }
        ),
        out["ints"],
    )
    out["animals"] = d / "animals.parquet"
    pq.write_table(
        pa.table({"actual": ANIMALS["actual"], "predicted": ANIMALS["predicted"]}),
        out["animals"],
    )
    out["garbage"] = d / "garbage.parquet"
    out["garbage"].write_bytes(b"this is not parquet at all\n" * 10)
    out["garbage_db"] = d / "garbage.duckdb"
    out["garbage_db"].write_bytes(b"this is not a database\n" * 10)
    out["unknown"] = d / "notes.xyz"
    out["unknown"].write_bytes(b"\x00\x01 who knows")
    return out


# ---------------------------------------------------------------- the example


def test_example_file_holds_the_conformance_rows() -> None:
    table = pq.read_table(EXAMPLE)
    assert table.schema.field("actual").type == pa.list_(pa.string())
    assert table.schema.field("predicted").type == pa.list_(pa.string())
    assert list(zip(*(table[c].to_pylist() for c in ("actual", "predicted")), strict=True)) == [
        tuple(r) for r in ROWS
    ]


def test_quick_start_guide_shows_what_the_command_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first command of the getting-started guide's command-line section, and its output."""
    monkeypatch.chdir(ROOT)
    text = GUIDE.read_text()
    assert QUICK in text, f"{GUIDE.relative_to(ROOT)} has no section {QUICK!r}"
    section = text[text.index(QUICK) :]
    command = re.search(r"```bash\n(mlsql eval [^\n]+)\n```", section).group(1)
    assert command == (
        "mlsql eval examples/data/blog_tags.parquet --actual actual --predicted predicted"
    )
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    result = invoke(*command.split()[1:])
    assert result.exit_code == 0, result.stderr
    printed = "\n".join(line.rstrip() for line in result.stdout.splitlines())
    assert printed.strip() == shown.strip()
    assert "micro F1 0.6957" in shown and "0.6956521739130435" in section


QUICK = "## Command line quick start"
GUIDE = ROOT / "docs" / "guides" / "getting-started.md"


@pytest.mark.long_cases("duckdb")
def test_quick_start_table_headline_follows_digits(cli_engine: str) -> None:
    """Issue 18.5: the headline micro F1 has --digits places, like every other number."""
    result = eval_on(cli_engine, EXAMPLE, "--digits", "16")
    assert repr(EXPECTED["micro.f1"]) == "0.6956521739130435"
    assert "micro F1 0.6956521739130435" in result.stdout
    result = eval_on(cli_engine, EXAMPLE)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "micro F1 0.6957" in out and "0.69565" not in out
    assert re.search(r"micro\s+macro\s+weighted\s+samples", out)
    assert "Hamming loss" in out and "subset accuracy" in out
    # the best and worst labels: cat (F1 8/9) before dog (2/3) before bird (1/2)
    assert out.index("cat") < out.index("dog") < out.index("bird")
    assert "0.8889" in out and "0.5000" in out
    assert result.stderr == ""


def engine_lacks_tables(engine: str) -> str | None:
    """The module an engine's table functions would come from, when it lacks them."""
    name = {"duckdb": "mlsql", "polars": "mlsql.polars", "spark": "mlsql.spark"}[engine]
    try:
        module = importlib.import_module(name)
    except ImportError:
        return name
    if not all(hasattr(module, f) for f in ("multilabel_report", "label_metrics")):
        return f"{name}.multilabel_report"
    return None


@pytest.mark.long_cases("spark")
@pytest.mark.parametrize("engine", _engines())
def test_json_matches_conformance_on_every_engine(engine: str) -> None:
    missing = engine_lacks_tables(engine)
    if missing is not None:  # the CLI must say what it needs, in one line
        result = invoke("eval", EXAMPLE, "-a", "actual", "-p", "predicted", "--engine", engine)
        assert result.exit_code == 2
        assert f"--engine {engine} needs {missing.split('.multilabel')[0]}" in result.stderr
        return
    if engine == "spark":  # the CLI reuses a running session: make it the test suite's one
        _load_adapter(ENGINE_ADAPTERS["spark"])
    report = eval_json(EXAMPLE, engine=engine)
    [row] = report["summary"]
    assert_summary(row, expected_summary(0))
    assert row["micro_f1"] == 0.6956521739130435  # exactly, as printed in the getting-started guide
    assert_labels(report["labels"], EXPECTED["per_label"])


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_zero_division_one_and_beta_two(engine: str) -> None:
    if engine_lacks_tables(engine):
        return  # test_json_matches_conformance_on_every_engine checks the message
    [row] = eval_json(EXAMPLE, "--zero-division", "1", engine=engine)["summary"]
    assert_summary(row, expected_summary(1))
    # with a beta the F columns are F-beta, named *_fbeta (as multilabel_report names them)
    report = eval_json(EXAMPLE, "--beta", "2", engine=engine)
    [row] = report["summary"]
    assert close(row["micro_fbeta"], EXPECTED["micro.f2"])
    assert close(row["samples_fbeta"], oracle.aggregate("samples_fbeta", ROWS, beta=2))
    assert "micro_f1" not in row
    for label in report["labels"]:
        assert close(label["fbeta"], oracle.fbeta(label["tp"], label["fp"], label["fn"], beta=2))
    [row] = eval_json(EXAMPLE, "--beta", "0.5", engine=engine)["summary"]
    assert close(row["micro_fbeta"], EXPECTED["micro.f0.5"])


def test_zero_division_nan_is_null_in_json(tmp_path: Path, cli_engine: str) -> None:
    path = tmp_path / "empty_predictions.parquet"
    pq.write_table(_labels_table([(["a"], []), (["b"], [])]), path)
    [row] = eval_json(path, "--zero-division", "nan", engine=cli_engine)["summary"]
    assert row["micro_precision"] is None  # NaN: JSON has no NaN, so null
    assert row["micro_recall"] == 0.0


# ---------------------------------------------------------------- inputs


@pytest.mark.parametrize(
    ("key", "extra"),
    [
        ("parquet", ()),
        ("dir", ()),
        ("ndjson", ()),
        ("csv", ("--sep", ",")),
    ],
)
def test_every_input_kind(files: dict[str, Path], key: str, extra: tuple[str, ...]) -> None:
    [row] = eval_json(files[key], *extra)["summary"]
    assert_summary(row, expected_summary(0))


def test_glob_and_duckdb_table(files: dict[str, Path]) -> None:
    [row] = eval_json(f"{files['dir']}/*.parquet")["summary"]
    assert_summary(row, expected_summary(0))
    [row] = eval_json(f"{files['duckdb']}:tags")["summary"]
    assert_summary(row, expected_summary(0))


def test_integer_labels_and_a_label_universe(files: dict[str, Path], cli_engine: str) -> None:
    report = eval_json(files["ints"], "--labels", "1,2,3,4", engine=cli_engine)
    [row] = report["summary"]
    int_rows = [
        (
            [{"bird": 1, "cat": 2, "dog": 3}[x] for x in a],
            [{"bird": 1, "cat": 2, "dog": 3}[x] for x in p],
        )
        for a, p in ROWS
    ]
    assert row["n_labels"] == 4
    assert close(row["hamming_loss"], oracle.hamming_loss(int_rows, 4))
    assert close(row["micro_f1"], EXPECTED["micro.f1"])
    # label 4 never occurs: precision and recall 0/0 -> 0, so the macro mean has one more 0
    assert close(row["macro_f1"], EXPECTED["macro.f1[zd=0]"] * 3 / 4)
    assert {r["label"] for r in report["labels"]} == {1, 2, 3, 4}


def test_groups_match_the_oracle(files: dict[str, Path], cli_engine: str) -> None:
    report = eval_json(files["grouped"], "--by", "g", engine=cli_engine)
    assert [r["g"] for r in report["summary"]] == ["a", "b"]
    for row, part in zip(report["summary"], (ROWS[:3], ROWS[3:]), strict=True):
        for name in (
            "micro_precision",
            "micro_recall",
            "micro_f1",
            "samples_f1",
            "subset_accuracy",
        ):
            assert close(row[name], oracle.aggregate(name, part)), name
    assert {r["g"] for r in report["labels"]} == {"a", "b"}


@pytest.mark.long_cases("duckdb")
def test_names_are_quoted_everywhere(files: dict[str, Path], cli_engine: str) -> None:
    report = eval_json(
        files["injection"],
        "--by",
        INJECTION,
        actual="a'); DROP TABLE t; --",
        predicted='p"',
        engine=cli_engine,
    )
    assert [r[INJECTION] for r in report["summary"]] == ["a", "b"]
    assert close(report["summary"][0]["micro_f1"], oracle.aggregate("micro_f1", ROWS[:3]))
    result = invoke(
        "eval", files["injection"], "-a", "a'); DROP TABLE t; --", "-p", 'p"', "--by", INJECTION,
        "-f", "html",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert "x&quot;; DROP TABLE t; --" in result.stdout


def test_single_label_columns_give_a_confusion_matrix(
    files: dict[str, Path], cli_engine: str
) -> None:
    report = eval_json(files["animals"], engine=cli_engine)
    assert report["single_label"] is True
    [row] = report["summary"]
    # one label per row: micro F1 is the accuracy; multi-label rows are left out
    assert close(row["micro_f1"], ANIMALS["expected"]["accuracy"])
    assert not {"subset_accuracy", "hamming_loss", "samples_f1", "clp"} & set(row)
    [matrix] = report["confusion_matrices"]
    want = ANIMALS["expected"]["confusion_matrix(actual row, predicted column, classes sorted)"]
    assert matrix["classes"] == want["classes"]
    assert _dense(matrix) == want["matrix"]
    # long form: only the non-zero cells
    assert len(matrix["cells"]) == sum(1 for r in want["matrix"] for n in r if n)
    assert close(row["accuracy"], ANIMALS["expected"]["accuracy"])
    assert close(row["cohen_kappa_score"], ANIMALS["expected"]["kappa"])
    # the ten-row example of the slides, with a class universe that adds a class never seen
    ten = SLIDES["ten_rows"]
    path = files["animals"].with_name("ten_rows.parquet")
    pq.write_table(pa.table({"actual": ten["actual"], "predicted": ten["predicted"]}), path)
    report = eval_json(path, "--labels", "inimigo,amigo,chato,neutro", engine=cli_engine)
    [row] = report["summary"]
    assert close(row["accuracy"], ten["expected"]["accuracy"])
    assert close(row["cohen_kappa_score"], ten["expected"]["kappa"])
    [matrix] = report["confusion_matrices"]
    assert matrix["classes"] == ["inimigo", "amigo", "chato", "neutro"]
    counts = {
        (a, p): sum(
            1 for x, y in zip(ten["actual"], ten["predicted"], strict=True) if (x, y) == (a, p)
        )
        for a in matrix["classes"]
        for p in matrix["classes"]
    }
    assert _dense(matrix) == [[counts[a, p] for p in matrix["classes"]] for a in matrix["classes"]]


def _dense(matrix: dict[str, Any]) -> list[list[int]]:
    """A JSON confusion matrix (long, non-zero cells) as rows of counts over its classes."""
    cells = {(c["actual"], c["predicted"]): c["count"] for c in matrix["cells"]}
    return [[cells.get((a, p), 0) for p in matrix["classes"]] for a in matrix["classes"]]


def test_forgotten_sep_stops_the_run(files: dict[str, Path], tmp_path: Path) -> None:
    # read whole, 'bird,cat' would be a class of its own: stop before any report is built
    result = invoke("eval", files["csv"], "-a", "actual", "-p", "predicted", "-f", "json")
    assert result.exit_code == 2, result.stdout
    assert result.stdout == ""
    first = next(",".join(a) for a, _ in ROWS if len(a) > 1 or "," in "".join(a))
    assert result.stderr == (
        f"mlsql: error: column 'actual' holds one label per row, but {first!r} looks like a "
        "list; pass --sep to split it (e.g. --sep ','), or --single-label if each value "
        "is one label\n"
    )
    path = tmp_path / "models.csv"
    path.write_text('model,id,actual,predicted\nA,1,"a,b",a\nB,1,"a,b",b\n')
    args = ("-a", "actual", "-p", "predicted", "--baseline", "A")
    result = invoke("compare", path, *args)
    assert result.exit_code == 2, result.stdout
    assert "but 'a,b' looks like a list; pass --sep" in result.stderr


def test_single_label_says_whole_values_are_meant(tmp_path: Path) -> None:
    path = tmp_path / "places.csv"
    path.write_text('actual,predicted\n"Paris, TX","Paris, TX"\nLyon,"Paris, TX"\n')
    result = invoke("eval", path, "-a", "actual", "-p", "predicted", "-f", "json", "--single-label")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["single_label"] is True
    assert report["summary"][0]["accuracy"] == 0.5
    # with lists, --single-label is a contradiction
    result = invoke("eval", path, "-a", "actual", "-p", "predicted", "--sep", ",", "--single-label")
    assert result.exit_code == 2
    assert result.stderr == (
        "mlsql: error: --single-label: the label columns hold lists (split with --sep); "
        "drop --single-label, or give columns of one label per row\n"
    )


def test_unknown_rows_are_left_out_with_a_warning(tmp_path: Path, cli_engine: str) -> None:
    path = tmp_path / "nulls.parquet"
    pq.write_table(_labels_table([*ROWS, (["cat"], None), (None, ["dog"])]), path)
    result = eval_on(cli_engine, path, "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert "2 of 9 rows have a NULL" in result.stderr
    assert_summary(json.loads(result.stdout)["summary"][0], expected_summary(0))


# ---------------------------------------------------------------- formats


def test_csv_summary_and_per_label(cli_engine: str) -> None:
    result = eval_on(cli_engine, EXAMPLE, "-f", "csv")
    assert result.exit_code == 0, result.stderr
    [row] = list(csv.DictReader(io.StringIO(result.stdout)))
    assert row["micro_f1"] == "0.6956521739130435"
    assert close(float(row["hamming_loss"]), EXPECTED["hamming_loss"])
    result = eval_on(cli_engine, EXAMPLE, "-f", "csv", "--per-label")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert {r["label"]: int(r["support"]) for r in rows} == {
        k: v["support"] for k, v in EXPECTED["per_label"].items()
    }


def test_markdown(cli_engine: str) -> None:
    result = eval_on(cli_engine, EXAMPLE, "-f", "markdown")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "**0.6957**" in out
    assert "| precision | 0.7273 | 0.7222 | 0.7500 | 0.6667 |" in out
    assert "| cat |" in out


def test_per_label_table(cli_engine: str) -> None:
    result = eval_on(cli_engine, EXAMPLE, "--per-label")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    for label, c in EXPECTED["per_label"].items():
        line = next(line for line in out.splitlines() if line.strip().startswith(label))
        assert line.split()[1:6] == [str(c[k]) for k in ("support", "tp", "fp", "fn", "tn")]


def test_output_file_and_html(tmp_path: Path, cli_engine: str) -> None:
    target = tmp_path / "report.html"
    result = eval_on(cli_engine, EXAMPLE, "-f", "html", "-o", target)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert_self_contained(page)
    assert ">0.6957<" in page
    assert (
        len(re.findall(r'<svg[^>]*class="chart', page)) == 2
    )  # the label bars and the frequency scatter
    assert "support (log)" in page


def assert_self_contained(page: str) -> None:
    """No external URL anywhere: no http(s) src/href, no protocol-relative links, no scripts."""
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert "http://" not in page and "https://" not in page
    assert "<script" not in page.lower()
    assert "@import" not in page and "url(" not in page


def test_html_escapes_labels(tmp_path: Path, cli_engine: str) -> None:
    path = tmp_path / "evil.parquet"
    evil = "<img src=x onerror=alert(1)>"
    pq.write_table(_labels_table([([evil], [evil]), (["ok"], [evil])]), path)
    result = eval_on(cli_engine, path, "-f", "html")
    assert result.exit_code == 0, result.stderr
    assert evil not in result.stdout
    assert "&lt;img src=x onerror=alert(1)&gt;" in result.stdout
    assert_self_contained(result.stdout)


def test_single_label_html_has_a_heatmap(files: dict[str, Path], cli_engine: str) -> None:
    result = eval_on(cli_engine, files["animals"], "-f", "html")
    assert result.exit_code == 0, result.stderr
    assert "Confusion matrix" in result.stdout
    # each cell's aria-label (Vega names a mark's numbers for screen readers)
    cell = r"predicted: repteis; actual: mamiferos; share: [\d.]+; count: 1; rows of the class: 7"
    assert re.search(cell, result.stdout)


# ---------------------------------------------------------------- newcomer errors


def _error_cases(files: dict[str, Path]) -> list[tuple[list[Any], str]]:
    ex = [EXAMPLE, "-a", "actual", "-p", "predicted"]
    return [
        ([files["parquet"].with_name("missing.parquet"), "-a", "actual", "-p", "predicted"], "no such file"),
        ([f"{files['dir']}/*.csv", "-a", "actual", "-p", "predicted"], "no files match"),
        ([EXAMPLE, "-a", "actuals", "-p", "predicted"], "columns: actual, predicted"),
        ([EXAMPLE, "-a", "actual", "-p", "Predicted"], "did you mean 'predicted'"),
        ([*ex, "--by", "nope"], "--by 'nope': no such column"),
        ([files["ints"], "-a", "score", "-p", "predicted"], "column 'score' has type DOUBLE"),
        ([files["ints"], "-a", "words", "-p", "predicted"], "holds one label per row"),
        ([files["ints"], "-a", "actual", "-p", "words", "--sep", ","], "same kind of label"),
        ([files["garbage"], "-a", "actual", "-p", "predicted"], "cannot read"),
        ([files["unknown"], "-a", "actual", "-p", "predicted"], "cannot tell the format"),
        ([f"{files['duckdb']}:nope", "-a", "actual", "-p", "predicted"], "tables: tags"),
        ([f"{files['garbage_db']}:t", "-a", "actual", "-p", "predicted"], "as a DuckDB database"),
        ([files["duckdb"], "-a", "actual", "-p", "predicted"], "name a table"),
        ([*ex, "--zero-division", "2"], "The '--zero-division' option of mlsql eval must be one of 0, 1, nan, 'diagnose', 'ignore'. Got 2 instead."),
        ([*ex, "--zero-division", "warn"], "Got 'warn' instead"),
        ([*ex, "--zero-division", " nan"], "Got ' nan' instead"),
        ([*ex, "--beta", "-1"], "The '--beta' option of mlsql eval must be a finite number > 0. Got -1 instead."),
        ([*ex, "--beta", "0"], "--beta' option of mlsql eval must be a finite number > 0"),
        ([*ex, "--beta", "inf"], "must be a finite number > 0. Got inf instead"),
        ([*ex, "--beta", "two"], "Got 'two' instead"),
        ([files["ints"], "-a", "actual", "-p", "predicted", "--labels", "1,x"], "must be one"),
        ([*ex, "--labels", "a,,b"], "comma-separated"),
        ([*ex, "--sep", ""], "--sep must not be empty"),
        ([*ex, "-o", files["parquet"].parent / "no" / "dir" / "out.json"], "cannot write"),
    ]  # fmt: skip


@pytest.mark.long
def test_newcomer_errors_are_one_line_with_exit_code_2(files: dict[str, Path]) -> None:
    for args, message in _error_cases(files):
        result = invoke("eval", *args)
        assert result.exit_code == 2, (args, result.stdout, result.stderr)
        assert result.stdout == "", args
        lines = result.stderr.splitlines()
        assert len(lines) == 1, (args, result.stderr)
        assert lines[0].startswith("mlsql: error: "), lines[0]
        assert message in lines[0], (message, lines[0])
        assert "Traceback" not in result.stderr


def test_engine_errors_are_one_line_too(files: dict[str, Path], cli_engine: str) -> None:
    for args, message in (
        ([EXAMPLE, "--zero-division", "2"], "--zero-division' option of mlsql eval must be one of"),
        ([EXAMPLE, "--beta", "-1"], "--beta' option of mlsql eval must be a finite number > 0"),
        ([files["ints"], "--labels", "a,b"], "the label columns hold integers"),
        ([files["parquet"].with_name("missing.parquet")], "no such file"),
    ):
        result = eval_on(cli_engine, *args)
        assert result.exit_code == 2, (args, result.stdout)
        assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_unknown_option_values_exit_2() -> None:
    for args in (["--engine", "pandas"], ["--format", "xml"], ["--digits", "40"]):
        result = invoke("eval", EXAMPLE, "-a", "actual", "-p", "predicted", *args)
        assert result.exit_code == 2, args
        assert "Traceback" not in result.stderr


# ---------------------------------------------------------------- sql and sql-path


@pytest.mark.long
def test_sql_runs_with_every_macro() -> None:
    result = invoke("sql", "SELECT micro_f1(['cat', 'bird'], ['cat', 'dog']) AS f, 'x' AS s")
    assert result.exit_code == 0, result.stderr
    assert "0.5" in result.stdout and "1 row" in result.stdout
    result = invoke("sql", "SELECT fmeasure(['cat', 'dog'], ['cat']) AS f", "-f", "json")
    assert json.loads(result.stdout) == [{"f": 2 / 3}]
    result = invoke(
        "sql", "SELECT 1 AS a, NULL AS b UNION ALL SELECT 2, 'y' ORDER BY a", "-f", "csv"
    )
    assert result.stdout == "a,b\n1,\n2,y\n"


@pytest.mark.long
def test_sql_table_shows_at_most_max_rows() -> None:
    result = invoke("sql", "SELECT range AS i FROM range(5)", "--max-rows", "3")
    assert result.exit_code == 0, result.stderr
    assert "first 3 rows shown" in result.stdout
    shown = [line.strip() for line in result.stdout.splitlines()]
    assert "2" in shown and "3" not in shown
    result = invoke("sql", "SELECT range AS i FROM range(5)", "--max-rows", "3", "-f", "csv")
    assert result.stdout == "i\n0\n1\n2\n3\n4\n"


def test_html_is_not_poured_onto_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mlsql.cli.run.is_terminal", lambda stream: True)
    result = invoke("eval", EXAMPLE, "-a", "actual", "-p", "predicted", "-f", "html")
    assert result.exit_code == 2
    assert "add --output report.html" in result.stderr


@pytest.mark.long
def test_sql_on_a_database_file(files: dict[str, Path]) -> None:
    query = "SELECT micro_f1(actual, predicted) AS f FROM tags"
    result = invoke("sql", query, "--db", files["duckdb"], "--read-only", "-f", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == [{"f": EXPECTED["micro.f1"]}]
    # the macros are temporary: a new connection to the file finds none of them
    result = invoke("sql", query, "--db", files["duckdb"])
    assert result.exit_code == 0, result.stderr
    con = duckdb.connect(str(files["duckdb"]), read_only=True)
    found = "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'micro_f1'"
    assert con.execute(found).fetchall() == [(0,)]
    con.close()


@pytest.mark.long
def test_each_command_releases_the_database_file_it_opened(files: dict[str, Path]) -> None:
    """In one process (a notebook, a test run), eval then sql on the same file: no handle is left.

    A failed command keeps its traceback, whose frames hold the connection: only
    the cycle collector would close it, so the commands close it themselves.
    """
    import gc

    gc.disable()
    try:
        source = f"{files['duckdb']}:tags"
        failed = invoke("eval", files["duckdb"], "-a", "actual", "-p", "predicted")
        assert failed.exit_code == 2  # no table named: a mistake, after the file was attached
        failed_sql = invoke("sql", "SELECT nope FROM tags", "--db", files["duckdb"])
        assert failed_sql.exit_code == 2
        for _ in range(2):
            result = invoke("eval", source, "-a", "actual", "-p", "predicted", "-f", "json")
            assert result.exit_code == 0, result.stderr
            result = invoke("sql", "SELECT count(*) AS n FROM tags", "--db", files["duckdb"])
            assert result.exit_code == 0, result.stderr
    finally:
        gc.enable()


@pytest.mark.long
def test_sql_errors_are_one_line(files: dict[str, Path]) -> None:
    for args, message in (
        (["SELECT nope FROM"], "Parser Error"),
        (["SELECT micro_f1(['a'], ['a'], zero_division := 7)"], "zero_division"),
        (["SELECT 1", "--db", files["parquet"].with_name("none.duckdb")], "no such database file"),
        (["SELECT 1", "--db", files["garbage_db"]], "cannot open"),
    ):
        result = invoke("sql", *args)
        assert result.exit_code == 2, (args, result.stdout)
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert message in result.stderr, result.stderr


def test_sql_path_loads_into_plain_duckdb() -> None:
    result = invoke("sql-path")
    assert result.exit_code == 0
    where = Path(result.stdout.strip())
    assert where.is_dir()
    whole = Path(invoke("sql-path", "--file").stdout.strip())
    assert whole == where / "mlsql.sql"
    con = duckdb.connect()  # no mlsql.register: only the SQL file
    con.execute(whole.read_text())
    assert con.execute("SELECT micro_f1(['cat', 'bird'], ['cat', 'dog'])").fetchall() == [(0.5,)]


# ---------------------------------------------------------------- the installed command


@pytest.mark.long
def test_python_dash_m_is_quiet_in_a_pipe() -> None:
    """A real process: stdout is a pipe, so no progress bar or spinner may appear anywhere."""
    command = [sys.executable, "-m", "mlsql.cli", "eval", str(EXAMPLE), "--actual", "actual"]
    done = subprocess.run(
        [*command, "--predicted", "predicted", "--format", "json"],
        capture_output=True, text=True, cwd=ROOT, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert json.loads(done.stdout)["summary"][0]["micro_f1"] == 0.6956521739130435
    failed = subprocess.run(
        [*command, "--predicted", "nope"], capture_output=True, text=True, cwd=ROOT, timeout=120,
        check=False,
    )  # fmt: skip
    assert failed.returncode == 2
    assert failed.stderr.startswith("mlsql: error: --predicted 'nope': no such column")
    assert "Traceback" not in failed.stderr


#: (actual, predicted, weight, group): a NULL prediction or weight leaves the row out
WEIGHTED_ROWS = [
    ("x", "x", 1.5, "g1"),
    ("y", "x", 2.0, "g1"),
    ("x", "y", 0.5, "g2"),
    ("y", "y", 2.5, "g2"),
    ("x", "x", 0.25, "g2"),
    ("x", None, 1.0, "g2"),
    ("y", "y", None, "g1"),
]


def _weighted_file(tmp_path: Path, *, lists: bool) -> Path:
    def cell(v: Any) -> Any:
        return None if v is None else [v] if lists else v

    path = tmp_path / f"weighted_{'lists' if lists else 'values'}.parquet"
    columns = {
        "actual": [cell(r[0]) for r in WEIGHTED_ROWS],
        "predicted": [cell(r[1]) for r in WEIGHTED_ROWS],
        "w": [r[2] for r in WEIGHTED_ROWS],
        "g": [r[3] for r in WEIGHTED_ROWS],
    }
    pq.write_table(pa.table(columns), path)
    return path


def _known(group: str | None = None) -> tuple[int, float]:
    """(rows, total weight) of the known rows (no NULL side or weight), of ``group`` or all."""
    known = [r for r in WEIGHTED_ROWS if None not in r and group in (None, r[3])]
    return len(known), sum(r[2] for r in known)


@pytest.mark.long
@pytest.mark.parametrize("engine", _engines())
def test_weighted_eval_counts_rows_and_shows_the_total_weight(tmp_path: Path, engine: str) -> None:
    """--sample-weight: ``n_rows`` is the number of rows (an integer), ``total_weight`` the sum
    of their weights, beside it in JSON and said so in every format ("5.0000 rows" before)."""
    if engine == "spark":  # the CLI reuses a running session: make it the test suite's one
        _load_adapter(ENGINE_ADAPTERS["spark"])
    assert _known() == (5, 6.75)
    for lists in (False, True):
        path = _weighted_file(tmp_path, lists=lists)
        [row] = eval_json(path, "--sample-weight", "w", engine=engine)["summary"]
        assert (row["n_rows"], row["total_weight"]) == _known()
        assert type(row["n_rows"]) is int
        assert list(row)[:2] == ["n_rows", "total_weight"]
        grouped = eval_json(path, "--sample-weight", "w", "--by", "g", engine=engine)["summary"]
        for group in grouped:
            assert (group["n_rows"], group["total_weight"]) == _known(group["g"]), group["g"]
    path = _weighted_file(tmp_path, lists=False)
    args = ("eval", path, "-a", "actual", "-p", "predicted", "--sample-weight", "w")
    result = invoke(*args, "--engine", engine)
    assert result.exit_code == 0, result.stderr
    assert "5 rows, total weight 6.75 ·" in result.stdout
    result = invoke(*args, "--engine", engine, "-f", "markdown")
    assert "5 rows, total weight 6.75, 2 labels" in result.stdout
    target = tmp_path / "weighted.html"
    result = invoke(*args, "--engine", engine, "-f", "html", "-o", target)
    assert result.exit_code == 0, result.stderr
    page = target.read_text()
    assert '<div class="k">rows</div><div class="v">5</div>' in page
    assert '<div class="k">total weight</div><div class="v">6.75</div>' in page
    grouped = invoke(*args, "--engine", engine, "--by", "g")
    assert re.search(r"total weight", grouped.stdout)
    # without weights: rows only (the row of NULL weight is then known too)
    [row] = eval_json(path, engine=engine)["summary"]
    assert row["n_rows"] == 6 and "total_weight" not in row
