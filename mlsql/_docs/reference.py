"""The reference pages: one per family of the registry, one section per function.

Each section holds the function's summary, the formulas it is made of (their
docstrings, found by :func:`mlsql._docs.formulas.formulas_of`), what happens
when it is undefined, its parameters, its call in DuckDB SQL, Polars and Spark
side by side, its aliases, and an example whose output DuckDB computed when
the page was written (:mod:`mlsql._docs.examples`).
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterable
from typing import Any

from mlsql._docs import examples as E
from mlsql._docs.formulas import docstring, formulas_of
from mlsql._docs.peers import cell_text, peers_of
from mlsql._registry import ENGINES, KINDS, Measure, measures

GENERATED = "<!-- Generated from the registry by `python -m mlsql._docs generate`: do not edit. -->"

#: page order and titles; a family not named here gets a page titled from its name
FAMILIES = {
    "multilabel": "Multi-label sets",
    "hivemall": "Hivemall's fmeasure",
    "label_based": "Per-label tables",
    "single_label": "Single-label",
    "agreement": "Agreement among raters",
    "binary": "Binary",
    "rules": "Rules",
    "regression": "Regression",
    "scores": "Scores",
    "thresholds": "Calibration and thresholds",
    "ranking": "Ranking",
    "label_scores": "Label scores",
    "class_scores": "Class scores",
}
#: families with no module of their own, or whose module speaks to developers
INTROS = {
    "multilabel": (
        "Multi-label set measures over two label lists per row, `actual` (A) and "
        "`predicted` (P): the set helpers, per-row counts and ratios, micro averages "
        "(counts pooled over rows, then divided), samples averages (the measure per row, "
        "then the mean), exact match and Hamming loss, and stored counts that can be "
        "merged later.\n\nPer row: tp = |A ∩ P|, fp = |P \\ A|, fn = |A \\ P|, "
        "tn = L - |A ∪ P| (L: the number of labels). Labels are sets: a label repeated in "
        "one list counts once and NULL elements are not labels; a NULL list is an unknown "
        "row, skipped by aggregates (per-row functions give NULL). The "
        "[semantics](../guides/semantics.md) hold for every engine."
    ),
    "hivemall": (
        "Apache Hivemall's `fmeasure(actual, predicted [, options])`: micro F-beta with "
        "Hivemall's option string (`-beta B`, `-average micro|binary`), over label arrays, "
        "int (1, 0, -1) or boolean binary inputs, raising Hivemall's errors (beta <= 0, "
        "`-average macro`, a binary average on arrays). Labels are sets: unlike Hivemall, a "
        "label repeated in one list counts once (Hivemall can return F > 1 on duplicates)."
    ),
}

#: each parameter's meaning and what it accepts
PARAMETERS = {
    "beta": "F-beta's beta: a finite number > 0 (recall weighs beta times precision).",
    "zero_division": (
        "The value of an undefined ratio: `0` (default), `1`, NaN (`'nan'`), `'diagnose'` "
        "or `'ignore'`; see [zero division](../guides/semantics.md#zero-division)."
    ),
    "n_labels": "The size L of the label universe: a whole number > 0 (required).",
    "k": "Look at the first k items: a whole number > 0; NULL / `None` looks at all.",
    "threshold": "Keep the labels scored >= threshold: a number (required).",
    "p": "Persistence, the chance of going on to the next item: a number > 0 and < 1.",
    "labels": (
        "A list of labels: the label universe (tables; default: every label seen in the "
        "group), or the labels in the order of the indicators."
    ),
    "by": "Grouping columns: a name or a list of names; one result per group.",
    "average": (
        "`'micro'`, `'macro'` or `'weighted'`, over the classes seen on either side (or the "
        "`labels` given)."
    ),
    # the label-score averages (by check key: the same name, other options)
    "score_average": (
        "`'micro'` (every (row, label) cell pooled), `'macro'` (default; the mean over "
        "labels), `'weighted'` (by each label's positives) or `'samples'` (the mean over "
        "rows), over the labels true or scored in some row of the group."
    ),
    "brier_average": (
        "`'micro'`, `'macro'` (default) or `'samples'`: the mean over the cells, over the "
        "labels or over the rows, one number (every label has the group's rows, every row "
        "the group's labels); `'weighted'` is refused."
    ),
    # cohen_kappa_score's and the kappa tests' (by check key): a matrix too, over its labels
    "kappa_weights": (
        "`None` (plain kappa), `'linear'` or `'quadratic'` (over the sorted classes, or the "
        "order of `labels`), or a k x k matrix of disagreement weights, finite and >= 0, for "
        "the k `labels` (row: actual, column: predicted): statsmodels' 2-D `weights`, kappa "
        "= 1 - Σ w_ij M_ij / Σ w_ij A_i P_j / n. DuckDB: `weights := [[0, 1, 4], [1, 0, 1], "
        "[4, 1, 0]], labels := ['a', 'b', 'c']`; Polars and Spark: a list of lists."
    ),
    "kappa_labels": (
        "The classes, in the order of the weights matrix's rows and columns (scikit-learn's "
        "`labels`): a non-empty list of distinct labels of the columns' kind. Rows whose "
        "actual or predicted class is not among them are left out, as scikit-learn's "
        "confusion matrix leaves them; default `None`: the classes seen, sorted."
    ),
    "class_labels": (
        "The classes to average over (scikit-learn's `labels`): a non-empty list of distinct "
        "labels of the columns' kind. A label no row holds is a class without rows (its "
        "ratios are undefined: `zero_division`); a row of another class still counts against "
        "the labels it meets, as a false positive or a false negative; under `micro` the "
        "counts of the labels are pooled. Default `None`: the classes seen."
    ),
    "alpha": "F_alpha's alpha: a finite number > 0 (F-beta with beta = sqrt(alpha)).",
    "n_bins": "The number of equal-width bins on [0, 1], the last closed: a whole number "
    "from 1 to 100000.",
    "strategy": (
        "How the calibration bins are cut, scikit-learn's `calibration_curve` strategy: "
        "`'uniform'` (default) n_bins equal-width bins on [0, 1]; `'quantile'` edges at the "
        "group's percentiles k / n_bins (numpy's, to the bit), a probability on an inner edge "
        "in the bin below, equal edges leaving empty bins out."
    ),
    "thresholds": "The number of thresholds i / (thresholds - 1), i = 0 .. thresholds - 1 "
    "(torchmetrics' `thresholds=N`, `linspace(0, 1, N)`): a whole number from 2 to 100000.",
    "norm": (
        "How the bins' gaps |mean prob - share of positives| combine, torchmetrics' `norm`: "
        "`'l1'` (default) their mean weighted by the bins' shares of the rows, `'l2'` the root "
        "of the weighted mean of their squares, `'max'` the largest gap of a non-empty bin."
    ),
    "drop_intermediate": (
        "`true` drops each threshold whose step in fp and tp from the previous one equals "
        "its step to the next (scikit-learn's `drop_intermediate=True`, its default); `false` "
        "(mlsql's default) keeps every distinct score."
    ),
    "scale_by_half": (
        "scikit-learn's `scale_by_half`: `'auto'` (default) or a boolean. The binary Brier "
        "score is the mean of (prob - actual)² under `'auto'` and `true`; `false` doubles it "
        "(both classes' squared errors, the [0, 2] range)."
    ),
    "cost_fn": "The cost of a false negative: a finite number.",
    "cost_fp": "The cost of a false positive: a finite number.",
    "correction": (
        "McNemar's continuity correction, subtracted from |fp - fn|: a finite number >= 0; "
        "`1` (default) is statsmodels' `correction=True`, `0` its `correction=False`."
    ),
    "options": "Hivemall's option string: `-beta B` and `-average micro|binary`.",
    "positive": "The positive class (required).",
    "label": "The class whose error rate is wanted (required).",
    "sample_weight": (
        "A column of row weights: a NULL weight makes the row unknown; a negative, NaN "
        "or infinite weight is an error."
    ),
    "costs": (
        "The cost of each (actual, predicted) pair: in DuckDB a MAP (see `cost_map`); in "
        "Polars a dict or a DataFrame (actual, predicted, cost); in Spark a dict, a cost "
        "DataFrame or a `cost_map` Column. A pair without a cost costs 1 off the diagonal "
        "and 0 on it."
    ),
}

NO_ZERO_DIVISION = {
    "aggregate": "It has no undefined ratio to choose a value for: over no known rows it is NULL.",
    "row": "It has no undefined ratio: a row with a NULL input gives NULL.",
    "set": "A row with a NULL input gives NULL.",
}


def family_module(family: str) -> Any | None:
    """The module of :mod:`mlsql.measures` that declares ``family`` (its ``FAMILY``)."""
    import pkgutil

    import mlsql.measures as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
        if getattr(mod, "FAMILY", None) == family:
            return mod
    return None


def families() -> list[str]:
    """Every family of the registry, in page order."""
    found = list(dict.fromkeys(m.family for m in measures()))
    return [f for f in FAMILIES if f in found] + [f for f in found if f not in FAMILIES]


def title(family: str) -> str:
    return FAMILIES.get(family, family.replace("_", " ").capitalize())


def page_name(family: str) -> str:
    return family.replace("_", "-") + ".md"


# ---------------------------------------------------------------- docstrings as Markdown
ROLE = re.compile(r":(?:mod|class|func|data|meth|attr):`~?([^`]+)`")
RST_RULE = re.compile(r"^=+( +=+)+$")


def markdown(text: str) -> str:
    """A numpydoc docstring's text as Markdown (roles, literals, tables, section heads)."""
    text = ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    text = text.replace("``", "`")
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if RST_RULE.match(line.strip()):  # a simple table: three rules, kept as text
            block, rules = [], 0
            while i < len(lines) and rules < 3:
                rules += bool(RST_RULE.match(lines[i].strip()))
                block.append(lines[i])
                i += 1
            out += ["", "```text", *block, "```", ""]
            continue
        if i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"} and line.strip():
            out += ["", f"**{line.strip()}**", ""]
            i += 2
            continue
        out.append(line)
        i += 1
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def user_part(doc: str) -> str:
    """What a family module's docstring tells users: its first line, its tables, its Notes."""
    first, _, rest = doc.partition("\n")
    body, _, notes = rest.partition("\nNotes\n-----\n")
    kept = [first]
    tables = re.findall(r"^(=+(?: +=+)+\n.*?^=+(?: +=+)+\n.*?^=+(?: +=+)+)$", body, re.M | re.S)
    kept += tables
    if notes.strip():
        kept += ["Notes\n-----\n" + notes.strip()]
    return markdown("\n\n".join(kept))


# ---------------------------------------------------------------- tables
def cell(value: Any) -> str:
    """One value in a Markdown table."""
    if value is None:
        text = "NULL"
    elif isinstance(value, str):
        text = value
    else:
        text = repr(value)
    return text.replace("|", "\\|")


def table(columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    columns = list(columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def input_table(ex: E.Example) -> str:
    cols = list(ex.columns)
    n = len(ex.columns[cols[0]])
    return table(cols, ([ex.columns[c][i] for c in cols] for i in range(n)))


# ---------------------------------------------------------------- one function
def tabs(ex: E.Example, sql: str, m: Measure) -> list[str]:
    """The call in each engine, as content tabs."""
    calls = [
        ("DuckDB SQL", "sql", sql, "duckdb"),
        ("Polars", "python", E.polars_call(ex), "polars"),
        ("Spark", "python", E.spark_call(ex), "spark"),
    ]
    out = []
    for label, lang, code, engine in calls:
        out.append(f'=== "{label}"')
        out.append("")
        if not m.available_in(engine):
            out.append(f"    Not in {label}: {m.unavailable[engine].strip().rstrip('.')}.")
        else:
            out += [f"    ```{lang}", f"    {code}", "    ```"]
        out.append("")
    return out


def section(m: Measure, con: Any) -> str:
    """The reference entry of ``m``."""
    out = [f"## {m.name}", "", m.summary, ""]
    out.append(f"*{m.kind}*: {KINDS[m.kind]}. Inputs: {', '.join(f'`{i}`' for i in m.inputs)}.")
    if m.aliases:
        out += ["", "Aliases: " + ", ".join(f"`{a}`" for a in m.aliases) + "."]
    found = peers_of(m.name)
    out += ["", "Peers: " + ("; ".join(p.markdown() for p in found) if found else "none") + "."]
    names = formulas_of(m)
    if names:
        out += ["", "**Formula**", ""]
        for name in names:
            doc = "\n".join(
                f"    {line}" if line.strip() else ""
                for line in markdown(docstring(name)).splitlines()
            ).strip()
            out.append(f"- `{name}`: {doc}")
    out += ["", "**When undefined**", ""]
    if any(p.name == "zero_division" for p in m.params):
        out.append(
            "Where a ratio above is undefined (its denominator is 0), the result is the "
            "`zero_division` value: `0` (default) or `1`; NaN (left out of averages); "
            "`'diagnose'` (1 where tp + fp + fn = 0, else 0: MULAN and mldr); `'ignore'` "
            "(left out of averages, NULL if nothing is left). See "
            "[zero division](../guides/semantics.md#zero-division)."
        )
    else:
        out.append(NO_ZERO_DIVISION.get(m.kind, "It takes no `zero_division`."))
    notes = getattr(family_module(m.family), "NOTES", {})
    if isinstance(notes, dict) and m.name in notes:
        out += ["", notes[m.name]]
    if m.params:
        out += ["", "**Parameters**", ""]
        out.append(
            table(
                ["name", "default", "accepts"],
                (
                    [
                        f"`{p.name}`",
                        f"`{p.default!r}`",
                        PARAMETERS.get(p.check_key, PARAMETERS.get(p.name, "")),
                    ]
                    for p in m.params
                ),
            )
        )
    missing = [e for e in ENGINES if not m.available_in(e)]
    ex = E.example(m)
    if ex is None:
        return "\n".join(out) + "\n"
    if m.available_in("duckdb"):
        sql, result = E.on_duckdb(ex, con)
        engine = "DuckDB"
    else:
        sql, result, engine = E.sql_call(ex), E.on_polars(ex), "Polars"
    out += ["", "**Call**", "", *tabs(ex, sql, m)]
    out += ["**Example**", "", "Input (`t` in DuckDB, `df` in Polars and Spark):", ""]
    out += [input_table(ex), "", f"Output (computed on {engine}):", ""]
    out += [table(result.columns, result.rows), ""]
    if missing:
        out += [f"Not in {', '.join(missing)}: see the tabs above.", ""]
    return "\n".join(out)


# ---------------------------------------------------------------- pages
def family_page(family: str, con: Any) -> str:
    ms = measures(family=family)
    mod = family_module(family)
    intro = INTROS.get(family) or user_part(inspect.getdoc(mod) or "")
    out = [GENERATED, "", f"# {title(family)}", "", intro, "", "## Functions", ""]
    out.append(
        table(
            ["function", "kind", "summary", "peers"],
            ([f"[`{m.name}`](#{m.name})", m.kind, m.summary, cell_text(m.name)] for m in ms),
        )
    )
    out += [
        "",
        "The examples run on the table shown as `t` in DuckDB "
        "(`con = mlsql.connect()`; `con.register('t', data)`) and as `df` in Polars "
        "(`import mlsql.polars as mp`) and Spark (`import mlsql.spark as ms`).",
        "",
    ]
    out += [section(m, con) for m in ms]
    return "\n".join(out).rstrip() + "\n"


def index_page() -> str:
    """Every function and alias, with its family's page, and the engine gaps."""
    out = [GENERATED, "", "# Reference", ""]
    out.append(
        "One page per family of measures, generated from the registry "
        "(`mlsql/_registry.py`, `mlsql/measures/`). The same names, parameters and "
        "numbers in DuckDB SQL, Polars and Spark. The *peers* column names the functions "
        "of scikit-learn, statsmodels, SciPy, Spark MLlib, torchmetrics, ranx, trec_eval "
        "and Hivemall that give the same number, within the conventions each function's "
        "notes state (where a peer raises an error or gives NaN, mlsql applies "
        "`zero_division`); a dash: no peer has it."
    )
    out += ["", "## Families", ""]
    out += [
        f"- [{title(f)}]({page_name(f)}): {len(measures(family=f))} functions" for f in families()
    ]
    out += ["", "## Every function", ""]
    rows = []
    for m in measures():
        link = f"[`{m.name}`]({page_name(m.family)}#{m.name})"
        aliases = ", ".join(f"`{a}`" for a in m.aliases)
        rows.append([link, aliases, title(m.family), m.kind, cell_text(m.name)])
    out.append(table(["function", "aliases", "family", "kind", "peers"], rows))
    out += ["", "## Not in every engine", "", gaps(), ""]
    return "\n".join(out)


def gaps() -> str:
    """What an engine lacks, with the registry's reason."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for m in measures():
        for engine, why in m.unavailable.items():
            by_reason.setdefault((engine, why.strip()), []).append(m.name)
    lines = [
        f"- **{engine}**: {', '.join(f'`{n}`' for n in names)}: {why.rstrip('.')}."
        for (engine, why), names in sorted(by_reason.items())
    ]
    return "\n".join(lines) or "Every function is in every engine."


def pages() -> dict[str, str]:
    """Every reference page by file name (under ``docs/reference/``)."""
    import mlsql

    con = mlsql.connect()
    out = {"index.md": index_page()}
    for family in families():
        out[page_name(family)] = family_page(family, con)
    return out
