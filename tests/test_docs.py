"""The documentation site: the generated reference pages, every name in them, checked examples, a strict build.

The reference pages are generated from the registry when the site is built
(git keeps none). Here they are generated the same way: every registry name
and alias must have its entry, each
example's output (computed on DuckDB when the page was written) must equal the
independent reference of ``tests/references.py`` where the measure has one,
and Polars must give the same output. The site must build strictly, offline.
"""

from __future__ import annotations

import re
from typing import Any

import pyarrow as pa
import pytest

import mlsql
from mlsql._docs import DOCS
from mlsql._docs import examples as E
from mlsql._docs.reference import PARAMETERS, page_name, table
from mlsql._registry import Measure, measures
from tests.conftest import ROOT, reference_pages
from tests.references import REFERENCES, close

MEASURES = measures()


@pytest.fixture(scope="module")
def con() -> Any:
    return mlsql.connect()


def entry(m: Measure) -> str:
    """``m``'s section of its family's page."""
    text = reference_pages()[page_name(m.family)]
    found = re.search(rf"^## {re.escape(m.name)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, f"the reference page {page_name(m.family)} has no entry for {m.name}"
    return found.group(1)


def test_every_registry_name_and_alias_has_a_reference_entry() -> None:
    index = reference_pages()["index.md"]
    missing = []
    for m in MEASURES:
        try:
            text = entry(m)
        except AssertionError as error:
            missing.append(str(error))
            continue
        for name in (m.name, *m.aliases):
            if f"`{name}`" not in index:
                missing.append(f"the reference's index.md does not list {name}")
        missing += [
            f"{m.name}'s entry does not name its alias {a}"
            for a in m.aliases
            if f"`{a}`" not in text
        ]
    assert not missing, "\n".join(missing)


def test_every_function_has_an_example_with_its_output() -> None:
    lacking = [m.name for m in MEASURES if E.example(m) is None or "**Example**" not in entry(m)]
    assert not lacking, f"no example in the reference for {lacking}"


def test_every_parameter_is_described() -> None:
    # the reference looks a parameter up by its check key first, then by its name
    undescribed = sorted(
        {p.name for m in MEASURES for p in m.params if not {p.check_key, p.name} & set(PARAMETERS)}
    )
    assert not undescribed, f"add to mlsql._docs.reference.PARAMETERS: {undescribed}"


def test_an_entry_without_a_page_fails(tmp_path: Any) -> None:
    """The entry lookup the name test relies on fails for a name that is not on the page."""
    fake = Measure("not_a_measure", "aggregate", "multilabel", "A measure with no entry.")
    with pytest.raises(AssertionError, match="no entry for not_a_measure"):
        entry(fake)


# ---------------------------------------------------------------- example outputs
def reference_input(m: Measure, ex: E.Example) -> pa.Table:
    """The example's table as the reference expects its data kind."""
    ref = REFERENCES[m.name]
    columns = dict(ex.columns)
    if ref.data == "label_lists" and "actual" not in columns:
        columns = dict(E.TAGS)  # stored counts: the reference counts the tags themselves
    if ref.data in ("score_maps", "class_scores"):
        columns["scores"] = [{e["label"]: e["score"] for e in row} for row in columns["scores"]]
    if m.inputs == ("score", "label"):
        columns = {"actual": columns["label"], "predicted": columns["score"]}
    if ref.data in ("score_maps", "class_scores"):
        return pa.table({k: pa.array(v) if k != "scores" else _map(v) for k, v in columns.items()})
    return pa.table(columns)


def _map(rows: list[dict[str, float]]) -> pa.Array:
    return pa.array([list(r.items()) for r in rows], type=pa.map_(pa.string(), pa.float64()))


def as_reference(m: Measure, out: E.Output, want: Any) -> Any:
    """The DuckDB output shaped as the reference's value."""
    rows = [dict(zip(out.columns, r, strict=True)) for r in out.rows]
    if m.kind == "table":
        if isinstance(want, list):
            return sorted(rows, key=repr)
        if isinstance(want, dict):
            return {k: rows[0][k] for k in want}
        return rows[0][m.name]
    values = [r[0] for r in out.rows]
    return values if isinstance(want, list) else values[0]


CHECKED = [m for m in MEASURES if m.name in REFERENCES and m.available_in("duckdb")]


@pytest.mark.parametrize("m", CHECKED, ids=[m.name for m in CHECKED])
def test_example_output_equals_the_independent_reference(m: Measure, con: Any) -> None:
    ex = E.example(m)
    _, out = E.on_duckdb(ex, con)
    want = REFERENCES[m.name].expected(reference_input(m, ex), dict(ex.params))
    if isinstance(want, list) and want and isinstance(want[0], dict):
        want = sorted(want, key=repr)
    got = as_reference(m, out, want)
    assert close(got, want), f"{m.name}: the page shows {got!r}, the reference gives {want!r}"
    assert table(out.columns, out.rows) in entry(m), f"{m.name}'s page does not show this output"


BOTH = [m for m in MEASURES if m.available_in("duckdb") and m.available_in("polars")]


@pytest.mark.parametrize("m", BOTH, ids=[m.name for m in BOTH])
def test_example_output_is_the_same_on_polars(m: Measure, con: Any) -> None:
    ex = E.example(m)
    _, on_duckdb = E.on_duckdb(ex, con)
    on_polars = E.on_polars(ex)
    assert E.same_output(on_duckdb, on_polars, names=m.kind == "table"), (
        f"{m.name}: DuckDB {on_duckdb} but Polars {on_polars}"
    )


SPARK = [m for m in MEASURES if m.available_in("spark")]


@pytest.mark.parametrize("m", SPARK, ids=[m.name for m in SPARK])
def test_spark_call_fits_the_function(m: Measure) -> None:
    """The Spark tab's call binds to mlsql.spark's function (no session needed)."""
    pytest.importorskip("pyspark")
    import inspect

    import mlsql.spark as ms

    class Binder:
        def __getattr__(self, name: str) -> Any:
            assert name in ms.FUNCTIONS, f"mlsql.spark has no {name}"
            return lambda *a, **k: inspect.signature(ms.FUNCTIONS[name]).bind(*a, **k)

    call = E.spark_call(E.example(m)).removesuffix(".show()")
    call = re.sub(r"^df\.(agg|select)\((.*)\)$", r"\2", call)  # the function call itself
    eval(call, {"ms": Binder(), "df": object()})


# ---------------------------------------------------------------- the guides
ROWS = [
    ("m1", "2024-06-01", ["cat", "bird"], ["cat"]),
    ("m1", "2024-06-02", ["dog"], ["dog", "fish"]),
    ("m2", "2024-06-01", ["dog", None], ["cat", "cat"]),
    ("m2", "2024-07-01", ["owl"], ["owl"]),  # outside the guide's month: must not count
]


def test_duckdb_guide_sql_runs_and_agrees(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every SQL statement of the DuckDB guide runs on a small ``preds``; the numbers are the oracle's."""
    import pyarrow.parquet as pq

    from tests import oracle, oracle_labels

    text = (DOCS / "guides" / "duckdb.md").read_text()
    statements = [
        s.strip()
        for block in re.findall(r"```sql\n(.*?)```", text, re.S)
        for s in block.split(";")
        if s.strip()
    ]
    assert len(statements) == 5, statements
    preds = pa.table(
        {
            name: [r[i] for r in ROWS]
            for i, name in enumerate(("model", "day", "actual", "predicted"))
        }
    )
    (tmp_path / "preds").mkdir()
    pq.write_table(preds, tmp_path / "preds" / "part.parquet")
    monkeypatch.chdir(tmp_path)
    con = mlsql.connect()  # the guide creates a table: a connection of its own
    con.register("preds", preds)
    results = []
    for statement in statements:
        relation = con.sql(statement)
        results.append(None if relation is None else relation.fetchall())
    per_label, report, aggregates, _, stored = results
    assert {r[0] for r in per_label} == {"m1", "m2"}
    assert report[0][0] == len(ROWS)  # n_rows
    assert [r[0] for r in aggregates] == ["m1", "m2"]
    for model, *got in aggregates:  # the macro and weighted aggregates beside micro_f1
        rows = [(a, p) for m, _, a, p in ROWS if m == model]
        want = [
            oracle.aggregate("micro_f1", rows),
            oracle_labels.report(rows)["macro_f1"],
            oracle_labels.report(rows, beta=2.0)["weighted_fbeta"],
            oracle_labels.report(rows, labels=["cat", "dog"])["macro_f1"],
        ]
        assert all(close(g, w) for g, w in zip(got, want, strict=True)), (model, got, want)
    for model in ("m1", "m2"):  # June only
        rows = [(a, p) for m, day, a, p in ROWS if m == model and day.startswith("2024-06")]
        want = oracle.aggregate("micro_f1", rows)
        got = next(r[1] for r in stored if r[0] == model)
        assert close(got, want), (model, got, want)


# ---------------------------------------------------------------- the site
@pytest.mark.long  # CI builds the site strictly too
def test_site_builds_strictly_offline(tmp_path: Any) -> None:
    pytest.importorskip("mkdocs")
    from mlsql._docs.__main__ import build

    build(str(tmp_path / "site"), reference_pages())
    html = (tmp_path / "site" / "reference" / "multilabel.html").read_text()
    assert 'id="micro_f1"' in html and "tabbed-set" in html
    # opened from disk, every link names a file (a directory would show its listing)
    home = (tmp_path / "site" / "index.html").read_text()
    assert 'href="guides/getting-started.html"' in home
    assert not re.search(r'href="(?!https?:|#)[^"]*/"', home)
    pages_html = "".join(p.read_text() for p in (tmp_path / "site").rglob("*.html"))
    assert "fonts.googleapis" not in pages_html  # theme.font: false
    assert (tmp_path / "site" / "search" / "search_index.json").is_file()


@pytest.mark.long
def test_a_broken_link_fails_the_build(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """The site's own build (``python -m mlsql._docs build``) of the guides with one link to
    a page that does not exist fails, and its only warnings name that link."""
    pytest.importorskip("mkdocs")
    import shutil

    from mkdocs.exceptions import Abort

    from mlsql._docs.__main__ import build

    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs, ignore=shutil.ignore_patterns("reference"))
    with (docs / "guides" / "polars.md").open("a") as f:
        f.write("\n[a page that does not exist](nowhere.md)\n")
    with pytest.raises(Abort):
        build(str(tmp_path / "site"), reference_pages(), docs_dir=docs)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert warnings and all("nowhere.md" in w for w in warnings), warnings


def test_readme_is_short_and_its_suite_time_is_the_guides() -> None:
    # before: 204 lines, "under ten minutes" beside the guide's "about sixteen minutes"
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    guide = (ROOT / "docs" / "guides" / "getting-started.md").read_text()
    claim = r"(\S+) minutes on two idle cores"
    found = [re.findall(claim, " ".join(text.split())) for text in (readme, guide)]
    assert len(found[0]) == 1 and found[0] == found[1], found


#: a line that opens or closes a fenced code block: ``` alone, or ``` and a language
FENCE = re.compile(r"\s*```")
GOOD_FENCE = re.compile(r"\s*```[\w+-]*\s*$")


def test_every_code_fence_opens_or_closes() -> None:
    """A fence followed by text (``` The names...) closes nothing in Markdown: the code block
    then runs on over the page's prose and tables, and the strict site build does not say so."""
    kept = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    texts = {
        **{str(p.relative_to(ROOT)): p.read_text() for p in kept if "reference" not in p.parts},
        **{f"reference/{name}": text for name, text in reference_pages().items()},
    }
    bad = [
        f"{name}:{number}: {line.strip()[:50]}"
        for name, text in texts.items()
        for number, line in enumerate(text.splitlines(), 1)
        if FENCE.match(line) and not GOOD_FENCE.match(line)
    ]
    assert not bad, bad
