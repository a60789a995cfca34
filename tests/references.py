"""Every registry measure names its reference here: the random data it is checked on and the
independent value it must equal (the plain-Python oracles, scikit-learn, exact fractions).

``tests/test_every_measure.py`` iterates the registry and runs each measure on every
engine over this data; a measure with no entry here fails that test. Data comes in
*kinds* (label lists, 0/1 columns, classes, numbers, probabilities, ranked items, score
maps, stored counts); each kind's tables hold NULL rows, NULL elements, duplicates and
empty lists where the kind has lists, and one table whose rows are all unknown.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import pyarrow as pa

from tests import oracle, oracle_agreement, oracle_labels, oracle_ranking, oracle_single

NAN = float("nan")
ZERO_DIVISIONS: tuple[Any, ...] = (0, 1, NAN, "diagnose", "ignore")
Columns = dict[str, list[Any]]


# ------------------------------------------------------------------ data kinds
def _maybe(rng: random.Random, value: Any, none_share: float = 0.12) -> Any:
    return None if rng.random() < none_share else value


def _label_list(rng: random.Random, labels: list[Any]) -> list[Any] | None:
    if rng.random() < 0.1:
        return None
    n = rng.choice([0, 1, 1, 2, 2, 3, 4, 6])
    out = [rng.choice(labels) for _ in range(n)]  # duplicates happen
    if out and rng.random() < 0.2:
        out.insert(rng.randrange(len(out) + 1), None)  # a NULL element
    return out


def label_lists(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """actual, predicted: label lists (text or integers) with NULLs, duplicates and empties."""
    if rng.random() < 0.5:
        labels: list[Any] = ["a", "b", "c", "d", "long label ü" * 2]
        dtype = pa.list_(pa.string())
    else:
        labels = [1, 2, 3, 40, 2**40]
        dtype = pa.list_(pa.int64())
    cols = {
        "actual": [_label_list(rng, labels) for _ in range(n)],
        "predicted": [_label_list(rng, labels) for _ in range(n)],
    }
    return cols, {"actual": dtype, "predicted": dtype}


def binary(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """actual, predicted (and holds, fires for rules): 0/1 values with NULLs."""
    as_bool = rng.random() < 0.5
    cols: Columns = {}
    for name in ("actual", "predicted", "holds", "fires"):
        values = [_maybe(rng, rng.random() < 0.5) for _ in range(n)]
        cols[name] = values if as_bool else [None if v is None else int(v) for v in values]
    dtype = pa.bool_() if as_bool else pa.int8()
    return cols, dict.fromkeys(cols, dtype)


def classes(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """actual, predicted, label: one class per row (text or integers) with NULLs."""
    pool: list[Any] = ["x", "y", "z"] if rng.random() < 0.5 else [3, 1, 2]
    dtype = pa.string() if isinstance(pool[0], str) else pa.int64()
    cols = {c: [_maybe(rng, rng.choice(pool)) for _ in range(n)] for c in ("actual", "predicted")}
    cols["label"] = list(cols["actual"])
    return cols, dict.fromkeys(cols, dtype)


def numbers(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """actual, predicted: small dyadic numbers (exact in floating point) with NULLs."""
    cols = {
        c: [_maybe(rng, rng.randint(-8, 8) / 4) for _ in range(n)] for c in ("actual", "predicted")
    }
    return cols, dict.fromkeys(cols, pa.float64())


def probabilities(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """actual 0/1 and predicted probabilities with ties (and label/score for Hivemall's order,
    prob for the calibration measures)."""
    actual = [_maybe(rng, rng.randint(0, 1)) for _ in range(n)]
    predicted = [_maybe(rng, rng.choice([0.0, 0.125, 0.5, 0.75, 1.0])) for _ in range(n)]
    cols = {"actual": actual, "predicted": predicted, "label": actual, "score": predicted}
    types = {"actual": pa.int64(), "predicted": pa.float64()}
    cols["prob"] = predicted
    return cols, {**types, "label": pa.int64(), "score": pa.float64(), "prob": pa.float64()}


def ranked(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """rank_items, correct_items, nonrelevant_items: item lists (NULLs, repeats); graded
    relevance lists."""
    items = [1, 2, 3, 4, 5, 6]

    def item_list(size: int) -> list[Any] | None:
        if rng.random() < 0.1:
            return None
        return [_maybe(rng, rng.choice(items), 0.1) for _ in range(rng.randint(0, size))]

    def grades() -> list[Any] | None:
        if rng.random() < 0.1:
            return None
        return [_maybe(rng, float(rng.randint(0, 3)), 0.1) for _ in range(rng.randint(0, 5))]

    cols = {
        "rank_items": [item_list(7) for _ in range(n)],
        "correct_items": [item_list(4) for _ in range(n)],
        "ranked_relevance": [grades() for _ in range(n)],
        "ideal_relevance": [grades() for _ in range(n)],
        "nonrelevant_items": [item_list(4) for _ in range(n)],  # drawn last: the others' draws stay
    }
    return cols, {
        "nonrelevant_items": pa.list_(pa.int64()),
        "rank_items": pa.list_(pa.int64()),
        "correct_items": pa.list_(pa.int64()),
        "ranked_relevance": pa.list_(pa.float64()),
        "ideal_relevance": pa.list_(pa.float64()),
    }


def _score_maps(rng: random.Random, n: int, labels: list[str], values: list[float]) -> list[Any]:
    """``n`` label -> score maps: a NULL map one time in ten, else some of ``labels`` scored
    from ``values`` (a NULL score one time in ten)."""
    maps: list[Any] = []
    for _ in range(n):
        if rng.random() < 0.1:
            maps.append(None)
            continue
        chosen = rng.sample(labels, rng.randint(0, 4))
        maps.append({x: _maybe(rng, rng.choice(values), 0.1) for x in chosen})
    return maps


def score_maps(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """scores: label -> score maps (NULL scores, unscored true labels); actual: label lists."""
    labels = ["a", "b", "c", "d"]
    maps = _score_maps(rng, n, labels, [0.0, 0.25, 0.5, 1.0])
    cols = {"scores": maps, "actual": [_label_list(rng, labels) for _ in range(n)]}
    return cols, {"scores": pa.map_(pa.string(), pa.float64()), "actual": pa.list_(pa.string())}


def class_scores(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """actual: one label per row (NULLs); scores: label -> probability maps (NULL maps, NULL
    probabilities, classes left out, the true class among them)."""
    labels = ["a", "b", "c", "d"]
    maps = _score_maps(rng, n, labels, [0.0, 0.25, 0.5, 0.75, 1.0])
    cols = {"scores": maps, "actual": [_maybe(rng, rng.choice(labels), 0.1) for _ in range(n)]}
    return cols, {"scores": pa.map_(pa.string(), pa.float64()), "actual": pa.string()}


def multiclass_brier(rows: list[tuple[Any, Any]], scale_by_half: Any = "auto") -> Any:
    """scikit-learn's multiclass Brier score in exact fractions: per known row, Σ over its
    scored classes of (p - [class is true])², plus 1 when the true class is unscored (its
    probability 0); the mean over the rows, halved when ``scale_by_half`` says so ('auto':
    fewer than 3 classes in the widest row). NULL over no known row."""
    total, n, widest = Fraction(0), 0, 0
    for scores, actual in rows:
        if scores is None or actual is None:
            continue
        scored = {k: Fraction(v) for k, v in scores.items() if v is not None}
        total += sum(((p - (k == actual)) ** 2 for k, p in scored.items()), Fraction(0))
        total += 0 if actual in scored else 1
        n += 1
        widest = max(widest, len(scored) + (0 if actual in scored else 1))
    if n == 0:
        return None
    halved = widest < 3 if str(scale_by_half).lower() == "auto" else scale_by_half
    return float(total / n / (2 if halved else 1))


def multilabel_brier(rows: list[tuple[Any, Any]], average: str = "macro") -> Any:
    """scikit-learn's binary Brier score of each label's column of the indicator matrix, in
    exact fractions, averaged as ``average`` says: the labels are those true or scored in a
    known row, a cell without a score has probability 0. macro: the mean over the columns of
    each column's mean over the rows; micro: the mean over every cell; samples: the mean
    over the rows of each row's mean over the columns. NULL over no known row or no label."""
    known = [
        ({k: Fraction(v) for k, v in scores.items() if v is not None}, set(actual) - {None})
        for scores, actual in rows
        if scores is not None and actual is not None
    ]
    labels = sorted({x for scored, truth in known for x in (*scored, *truth)})
    if not known or not labels:
        return None

    def cell(scored: dict[Any, Fraction], truth: set[Any], x: Any) -> Fraction:
        return (scored.get(x, Fraction(0)) - (x in truth)) ** 2

    if average == "micro":
        cells = [cell(s, t, x) for s, t in known for x in labels]
        return float(sum(cells, Fraction(0)) / len(cells))
    if average == "samples":
        per_row = [
            sum((cell(s, t, x) for x in labels), Fraction(0)) / len(labels) for s, t in known
        ]
        return float(sum(per_row, Fraction(0)) / len(per_row))
    per_label = [sum((cell(s, t, x) for s, t in known), Fraction(0)) / len(known) for x in labels]
    return float(sum(per_label, Fraction(0)) / len(per_label))


def counts_2x2(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """tp, fp, fn, tn: stored 2x2 counts, one table per row (zeros common), the first row
    all zeros (a table of known rows that weigh nothing)."""
    cols = {c: [rng.choice([0, 0, 1, 2, 5]) for _ in range(n)] for c in ("tp", "fp", "fn", "tn")}
    for c in cols:
        cols[c][0] = 0
    return cols, dict.fromkeys(cols, pa.int64())


def ratings(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """ratings: one list per row of m raters' labels (text or integers; m the same on every
    row, 2 to 4), NULL rows, a NULL element beside the m labels now and then, few categories
    (one of them common, so every rating of one category happens)."""
    text = rng.random() < 0.5
    labels: list[Any] = ["a", "b", "c", "long label ü"] if text else [1, 2, 40, 2**40]
    m = rng.randint(2, 4)
    weights = [0.55, 0.2, 0.15, 0.1] if rng.random() < 0.7 else [1.0, 0.0, 0.0, 0.0]
    rows: list[Any] = []
    for _ in range(n):
        if rng.random() < 0.1:
            rows.append(None)
            continue
        row: list[Any] = rng.choices(labels, weights, k=m)
        if rng.random() < 0.1:
            row.insert(rng.randrange(m + 1), None)
        rows.append(row)
    dtype = pa.list_(pa.string() if text else pa.int64())
    return {"ratings": rows}, {"ratings": dtype}


def outcomes(rng: random.Random, n: int) -> tuple[Columns, dict[str, pa.DataType]]:
    """correct: one list per row of k models' outcomes (booleans or 0/1; k the same on every
    row, 2 to 5), NULL rows, a NULL value now and then (an incomplete row), models of
    different accuracies, and now and then a table whose every row is all right or all wrong."""
    as_bool = rng.random() < 0.5
    k = rng.randint(2, 5)
    accuracy = [rng.choice([0.1, 0.5, 0.7, 0.9]) for _ in range(k)]
    constant = rng.random() < 0.15
    rows: list[Any] = []
    for _ in range(n):
        if rng.random() < 0.1:
            rows.append(None)
            continue
        if constant:
            row: list[Any] = [rng.random() < 0.5] * k
        else:
            row = [rng.random() < a for a in accuracy]
        if rng.random() < 0.08:
            row[rng.randrange(k)] = None
        rows.append(row if as_bool else [None if x is None else int(x) for x in row])
    return {"correct": rows}, {"correct": pa.list_(pa.bool_() if as_bool else pa.int8())}


DATA: dict[str, Callable[[random.Random, int], tuple[Columns, dict[str, pa.DataType]]]] = {
    "label_lists": label_lists,
    "binary": binary,
    "classes": classes,
    "numbers": numbers,
    "probabilities": probabilities,
    "ranked": ranked,
    "score_maps": score_maps,
    "class_scores": class_scores,
    "counts_2x2": counts_2x2,
    "ratings": ratings,
    "outcomes": outcomes,
}


def tables(kind: str, seeds: range, *, no_rows: bool = False) -> list[pa.Table]:
    """Random tables of one kind: one per seed, plus one whose rows are all unknown (and, with
    ``no_rows``, one without rows: the batched property tests leave that case to this one)."""
    out = []
    for seed in seeds:
        rng = random.Random(f"{kind}-{seed}")
        cols, types = DATA[kind](rng, rng.randint(1, 30))
        out.append(pa.table({c: pa.array(v, types[c]) for c, v in cols.items()}))
    cols, types = DATA[kind](random.Random(kind), 3)
    if kind != "counts_2x2":
        cols = {c: [None] * 3 for c in cols}
    out.append(pa.table({c: pa.array(v, types[c]) for c, v in cols.items()}))
    if no_rows:
        out.append(out[-1].slice(0, 0))
    return out


def rows_of(table: pa.Table, *names: str) -> list[tuple[Any, ...]]:
    """The table's ``names`` columns as row tuples (map columns as dicts)."""
    columns = []
    for name in names:
        values = table.column(name).to_pylist()
        if pa.types.is_map(table.schema.field(name).type):
            values = [None if v is None else dict(v) for v in values]
        columns.append(values)
    return list(zip(*columns, strict=True))


# ------------------------------------------------------------------ references
@dataclass(frozen=True)
class Reference:
    """How one measure is checked: its data kind, parameter sets and the expected value.

    ``expected(table, params)`` gives the value over the whole table (aggregates and
    tables) or the list of per-row values (per-row kinds). ``source`` names the reference.
    """

    data: str
    expected: Callable[[pa.Table, dict[str, Any]], Any]
    params: tuple[dict[str, Any], ...] | Callable[[pa.Table], tuple[dict[str, Any], ...]] = ({},)
    source: str = "oracle"

    def params_for(self, table: pa.Table) -> tuple[dict[str, Any], ...]:
        """The parameter sets to try on ``table`` (some name one of its classes)."""
        return self.params(table) if callable(self.params) else self.params


def _zd(extra: dict[str, Any] | None = None) -> tuple[dict[str, Any], ...]:
    return tuple({"zero_division": zd, **(extra or {})} for zd in ZERO_DIVISIONS)


def _oracle_zd(params: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k != "zero_division"} | {
        "zd": params.get("zero_division", 0)
    }


REFERENCES: dict[str, Reference] = {}


def _add(names: list[str], make: Callable[[str], Reference]) -> None:
    for name in names:
        REFERENCES[name] = make(name)


# multi-label sets, rows and aggregates: tests/oracle.py
ML = ("actual", "predicted")
_add(
    [
        *("set_intersection", "set_difference", "set_union", "set_symmetric_difference"),
        *("true_positives", "false_positives", "false_negatives"),
    ],
    lambda name: Reference(
        "label_lists",
        lambda t, p, name=name: [oracle.per_row(name, a, b, **p) for a, b in rows_of(t, *ML)],
    ),
)
_add(
    ["set_jaccard", "row_precision", "row_recall"],
    lambda name: Reference(
        "label_lists",
        lambda t, p, name=name: [oracle.per_row(name, a, b, **p) for a, b in rows_of(t, *ML)],
        _zd(),
    ),
)
REFERENCES["row_fbeta"] = Reference(
    "label_lists",
    lambda t, p: [oracle.per_row("row_fbeta", a, b, **p) for a, b in rows_of(t, *ML)],
    (*_zd(), {"beta": 2.0}, {"beta": 0.5, "zero_division": 1}),
)
_ML_AGGREGATES = ["micro_precision", "micro_recall", "micro_f1", "micro_jaccard"]
_ML_AGGREGATES += ["samples_precision", "samples_recall", "samples_f1", "samples_jaccard"]
_add(
    _ML_AGGREGATES,
    lambda name: Reference(
        "label_lists", lambda t, p, name=name: oracle.aggregate(name, rows_of(t, *ML), **p), _zd()
    ),
)
_add(
    ["micro_fbeta", "samples_fbeta"],
    lambda name: Reference(
        "label_lists",
        lambda t, p, name=name: oracle.aggregate(name, rows_of(t, *ML), **p),
        (*_zd({"beta": 2.0}), {"beta": 0.5}, {}),
    ),
)
_add(
    ["subset_accuracy", "zero_one_loss"],
    lambda name: Reference(
        "label_lists", lambda t, p, name=name: oracle.aggregate(name, rows_of(t, *ML), **p)
    ),
)
REFERENCES["true_negatives"] = Reference(
    "label_lists",
    lambda t, p: [oracle.per_row("true_negatives", a, b, **p) for a, b in rows_of(t, *ML)],
    ({"n_labels": 5}, {"n_labels": 12}),
)
REFERENCES["hamming_loss"] = Reference(
    "label_lists",
    lambda t, p: oracle.aggregate("hamming_loss", rows_of(t, *ML), **p),
    ({"n_labels": 5}, {"n_labels": 12}),
)


def _counts(t: pa.Table, p: dict[str, Any]) -> dict[str, Any]:
    """The stored counts; over no known rows the sums are NULL (SQL's SUM of nothing), while
    n_rows and n_exact count 0 (unknown rows are never exact matches)."""
    rows = rows_of(t, *ML)
    out: dict[str, Any] = oracle.multilabel_counts(rows)
    if out["n_rows"] == 0:
        out = {k: None for k in out} | {"n_rows": 0, "n_exact": 0 if rows else None}
    return out


REFERENCES["multilabel_counts"] = Reference("label_lists", _counts)
#: from stored counts: the micro measure of the rows the counts were made of
_FROM_COUNTS = {f"{name}_from_counts": name for name in ["micro_f1", "micro_jaccard"]}
_FROM_COUNTS |= {f"{n}_from_counts": n for n in ["micro_precision", "micro_recall"]}
_FROM_COUNTS |= {f"{n}_from_counts": n for n in ["subset_accuracy", "zero_one_loss"]}
_add(
    list(_FROM_COUNTS),
    lambda name: Reference(
        "label_lists",
        lambda t, p, name=name: oracle.aggregate(_FROM_COUNTS[name], rows_of(t, *ML), **p),
        _zd() if "accuracy" not in name and "loss" not in name else ({},),
    ),
)
REFERENCES["micro_fbeta_from_counts"] = Reference(
    "label_lists",
    lambda t, p: oracle.aggregate("micro_fbeta", rows_of(t, *ML), **p),
    (*_zd({"beta": 2.0}), {"beta": 0.5}),
)
REFERENCES["hamming_loss_from_counts"] = Reference(
    "label_lists",
    lambda t, p: oracle.aggregate("hamming_loss", rows_of(t, *ML), **p),
    ({"n_labels": 5},),
)
REFERENCES["merge_counts"] = Reference("label_lists", _counts)


def _fmeasure(t: pa.Table, p: dict[str, Any]) -> Any:
    options = p.get("options", "")
    beta = float(options.split()[1]) if "-beta" in options else 1
    return oracle.aggregate("micro_fbeta", rows_of(t, *ML), beta=beta)


REFERENCES["fmeasure"] = Reference(
    "label_lists", _fmeasure, ({}, {"options": "-beta 2."}, {"options": "-beta 0.5 -average micro"})
)

# label tables: tests/oracle_labels.py (the report row and per-label counts)
_REPORT_COLUMNS = {
    "macro_precision": "macro_precision",
    "macro_recall": "macro_recall",
    "macro_f1": "macro_f1",
    "macro_jaccard": "macro_jaccard",
    "macro_f1_of_means": "macro_f1_of_means",
    "weighted_precision": "weighted_precision",
    "weighted_recall": "weighted_recall",
    "weighted_f1": "weighted_f1",
    "weighted_jaccard": "weighted_jaccard",
    "label_accuracy_macro": "label_accuracy_macro",
    "label_accuracy_micro": "label_accuracy_micro",
    "clp": "clp",
    "mlp": "mlp",
    "wlp": "wlp",
}
_LABELS = {"labels": ["a", "b", "zz"]}


def _report_value(column: str, beta: bool = False) -> Callable[[pa.Table, dict[str, Any]], Any]:
    def expected(t: pa.Table, p: dict[str, Any]) -> Any:
        labels = p.get("labels")
        if labels is not None and pa.types.is_integer(t.schema.field("actual").type.value_type):
            labels = [1, 2, 99]
        b = p.get("beta")
        row = oracle_labels.report(
            rows_of(t, *ML), labels, b if beta else None, p.get("zero_division", 0)
        )
        return row[column.replace("f1", "fbeta") if beta else column]

    return expected


def _typed_labels(
    choices: tuple[dict[str, Any], ...],
) -> Callable[[pa.Table], tuple[dict[str, Any], ...]]:
    """``choices`` for a table: a ``labels`` universe of integers on integer label lists (the
    expected values read the same, :func:`_report_value`)."""

    def params(t: pa.Table) -> tuple[dict[str, Any], ...]:
        if not pa.types.is_integer(t.schema.field("actual").type.value_type):
            return choices
        return tuple({**p, "labels": [1, 2, 99]} if "labels" in p else p for p in choices)

    return params


_add(
    list(_REPORT_COLUMNS),
    lambda name: Reference(
        "label_lists",
        _report_value(_REPORT_COLUMNS[name]),
        _typed_labels((*_zd(), {**_LABELS})),
    ),
)
_add(
    ["macro_fbeta", "weighted_fbeta", "macro_fbeta_of_means"],
    lambda name: Reference(
        "label_lists",
        _report_value(name.replace("fbeta", "f1"), beta=True),
        _typed_labels((*_zd({"beta": 2.0}), {"beta": 0.5, **_LABELS})),
    ),
)
REFERENCES["multilabel_report"] = Reference(
    "label_lists",
    lambda t, p: oracle_labels.report(
        rows_of(t, *ML), p.get("labels"), p.get("beta"), p.get("zero_division", 0)
    ),
    (*_zd(), {"beta": 2.0}),
)
REFERENCES["label_metrics"] = Reference(
    "label_lists",
    lambda t, p: oracle_labels.label_metrics(
        rows_of(t, *ML), p.get("labels"), p.get("beta"), p.get("zero_division", 0)
    ),
    (*_zd(), {"beta": 2.0}),
)

# binary and rules: tests/oracle_single.py's 2x2 definitions
_2X2 = {
    "binary_precision": "prel",
    "binary_recall": "sens",
    "binary_specificity": "spec",
    "binary_negative_predictive_value": "nrel",
    "binary_support": "sup",
    "binary_accuracy": "tacc",
    "binary_coverage": "cov",
    "binary_error_rate": "error_rate",
    "binary_fbeta": "fbeta",
    "binary_f1": "fbeta",
    "binary_f_alpha": "f_alpha",
    "binary_kappa": "kappa",
    "binary_false_negative_rate": "fnr",
    "binary_false_positive_rate": "fpr",
    "binary_cost_error": "cost_error",
    "rule_novelty": "nov",
    "rule_satisfaction": "sat",
}
_2X2_PARAMS: dict[str, tuple[dict[str, Any], ...]] = {
    "binary_fbeta": (*_zd({"beta": 2.0}), {}),
    "binary_f_alpha": (*_zd({"alpha": 4.0}), {}),
    "binary_cost_error": ({}, {"cost_fn": 5.0, "cost_fp": 0.5}),
}
_2X2_DEFAULTS = {"f_alpha": {"alpha": 1.0}, "cost_error": {"cost_fn": 1.0, "cost_fp": 1.0}}


def _two_by_two(code: str, tp: int, fp: int, fn: int, tn: int, p: dict[str, Any]) -> Any:
    args = {**_2X2_DEFAULTS.get(code, {}), **_oracle_zd(p)}
    return oracle_single.two_by_two(tp, fp, fn, tn, code, **args)


def _2x2_params(name: str) -> tuple[dict[str, Any], ...]:
    from mlsql._registry import REGISTRY, measures

    measures()  # fills the registry
    if name in _2X2_PARAMS:
        return _2X2_PARAMS[name]
    takes_zd = any(p.name == "zero_division" for p in REGISTRY[name].params)
    return _zd() if takes_zd else ({},)


def _binary_reference(name: str) -> Reference:
    code = _2X2[name]
    cols = ("holds", "fires") if name.startswith("rule_") else ML
    return Reference(
        "binary",
        lambda t, p: _two_by_two(code, *oracle_single.table(rows_of(t, *cols)), p),
        _2x2_params(name),
    )


def _from_counts_reference(name: str) -> Reference:
    """Each row's counts as the measure's table; counts that are all 0 are known rows of total
    weight 0 (README, "Sample weights"), not no rows: the ``zero_division`` value of a measure
    that takes one ('diagnose': 1), else NULL."""
    code = _2X2[name]

    def one(counts: tuple[int, int, int, int], p: dict[str, Any]) -> Any:
        if any(counts) or not any(q.get("zero_division") is not None for q in _2x2_params(name)):
            return _two_by_two(code, *counts, p)
        return oracle.undefined(p.get("zero_division", 0), True)

    return Reference(
        "counts_2x2",
        lambda t, p: [one(r, p) for r in rows_of(t, "tp", "fp", "fn", "tn")],
        _2x2_params(name),
    )


for _name in _2X2:
    REFERENCES[_name] = _binary_reference(_name)
    REFERENCES[f"{_name}_from_counts"] = _from_counts_reference(_name)


# agreement tests of the 2x2 table: statsmodels (tests/oracle_agreement.py)
_AGREEMENT: dict[str, Callable[..., Any]] = {
    "binary_mcnemar_statistic": lambda *t, **p: oracle_agreement.mcnemar(*t, "statistic", **p),
    "binary_mcnemar_p_value": lambda *t, **p: oracle_agreement.mcnemar(*t, "pvalue", **p),
    "binary_kappa_std_error": lambda *t: oracle_agreement.cohens_kappa(*t, "std_kappa"),
    "binary_kappa_z_value": lambda *t: oracle_agreement.cohens_kappa(*t, "z_value"),
    "binary_kappa_p_value": lambda *t: oracle_agreement.cohens_kappa(*t, "pvalue_two_sided"),
    "binary_kappa_p_value_one_sided": lambda *t: oracle_agreement.cohens_kappa(
        *t, "pvalue_one_sided"
    ),
}
_CORRECTIONS = ({}, {"correction": 0.0}, {"correction": 0.5})


def _agreement_params(name: str) -> tuple[dict[str, Any], ...]:
    return _CORRECTIONS if "mcnemar" in name else ({},)


def _agreement_reference(name: str) -> Reference:
    fn = _AGREEMENT[name]

    def expected(t: pa.Table, p: dict[str, Any]) -> Any:
        rows = rows_of(t, *ML)
        return fn(*oracle_single.table(rows), **p) if oracle_single.known(rows) else None

    return Reference("binary", expected, _agreement_params(name), "statsmodels")


def _agreement_counts_reference(name: str) -> Reference:
    fn = _AGREEMENT[name]
    return Reference(
        "counts_2x2",
        lambda t, p: [fn(*r, **p) for r in rows_of(t, "tp", "fp", "fn", "tn")],
        _agreement_params(name),
        "statsmodels",
    )


for _name in _AGREEMENT:
    REFERENCES[_name] = _agreement_reference(_name)
    REFERENCES[f"{_name}_from_counts"] = _agreement_counts_reference(_name)


def _binary_counts(t: pa.Table, p: dict[str, Any]) -> Any:
    """The four cells; over no known rows each is NULL (SQL's SUM of nothing)."""
    rows = rows_of(t, *ML)
    cells = oracle_single.table(rows) if oracle_single.known(rows) else (None,) * 4
    return dict(zip(("tp", "fp", "fn", "tn"), cells, strict=True))


REFERENCES["binary_counts"] = Reference("binary", _binary_counts)

# several raters: statsmodels' fleiss_kappa of aggregate_raters' table
REFERENCES["fleiss_kappa"] = Reference(
    "ratings",
    lambda t, p: oracle_agreement.fleiss([r for (r,) in rows_of(t, "ratings")]),
    source="statsmodels",
)
for _name, _what in (("cochrans_q_statistic", "statistic"), ("cochrans_q_p_value", "pvalue")):
    REFERENCES[_name] = Reference(
        "outcomes",
        lambda t, p, what=_what: oracle_agreement.cochran(
            [r for (r,) in rows_of(t, "correct")], what
        ),
        source="statsmodels",
    )

# regression and scores
_REGRESSION = ["mse", "rmse", "mae", "mape"]
_add(
    _REGRESSION,
    lambda name: Reference(
        "numbers", lambda t, p, name=name: oracle_single.regression(rows_of(t, *ML), name)
    ),
)
_add(
    ["rse", "rrse", "rae", "pearson_corr", "r2", "explained_variance"],
    lambda name: Reference(
        "numbers",
        lambda t, p, name=name: oracle_single.regression(rows_of(t, *ML), name, **_oracle_zd(p)),
        _zd(),
    ),
)
REFERENCES["hivemall_r2"] = Reference(
    "numbers",
    lambda t, p: oracle_single.regression(rows_of(t, *ML), "r2", **_oracle_zd(p)),
    _zd(),
)
REFERENCES["logloss"] = Reference(
    "probabilities", lambda t, p: oracle_single.logloss(rows_of(t, *ML))
)
REFERENCES["hivemall_logloss"] = REFERENCES["logloss"]
REFERENCES["auc"] = Reference(
    "probabilities", lambda t, p: oracle_single.auc(rows_of(t, *ML), **_oracle_zd(p)), _zd()
)
REFERENCES["hivemall_auc"] = REFERENCES["auc"]


def _known_scores(t: pa.Table, score: str) -> tuple[list[int], list[float]]:
    rows = [(y, s) for y, s in rows_of(t, "actual", score) if y is not None and s is not None]
    return [int(y) for y, _ in rows], [float(s) for _, s in rows]


def _average_precision(t: pa.Table, p: dict[str, Any]) -> Any:
    y, s = _known_scores(t, "score")
    if not y:
        return None
    if not any(y):  # scikit-learn warns and gives 0: the value is zero_division's
        return oracle.undefined(p.get("zero_division", 0), True)
    return sklearn_metrics().average_precision_score(y, s)


def spark_area_under_pr(
    y: list[int], s: list[float], weights: list[float] | None = None
) -> Fraction | None:
    """Spark MLlib's areaUnderPR in exact fractions, written from its definition: the points
    (recall, precision) of predicting positive at each distinct score from the highest, (0, the
    first precision) put first, summed by the trapezoid rule; rows of weight 0 left out (as
    repeated rows: none). No positive weight: 0 (Spark's recall is 0 everywhere)."""
    w = [Fraction(1)] * len(y) if weights is None else [Fraction(x) for x in weights]
    rows = [(Fraction(si), yi, wi) for yi, si, wi in zip(y, s, w, strict=True) if wi > 0]
    if not rows:
        return None
    positives = sum((wi for _, yi, wi in rows if yi), Fraction(0))
    if positives == 0:
        return Fraction(0)
    points, tp, n = [], Fraction(0), Fraction(0)
    for t in sorted({si for si, _, _ in rows}, reverse=True):
        tp += sum((wi for si, yi, wi in rows if si == t and yi), Fraction(0))
        n += sum((wi for si, _, wi in rows if si == t), Fraction(0))
        points.append((tp / positives, tp / n))
    points.insert(0, (Fraction(0), points[0][1]))
    pairs = itertools.pairwise(points)
    return sum(((r2 - r1) * (p1 + p2) / 2 for (r1, p1), (r2, p2) in pairs), Fraction(0))


def _area_under_pr(t: pa.Table, p: dict[str, Any]) -> Any:
    y, s = _known_scores(t, "score")
    if y and not any(y):
        return oracle.undefined(p.get("zero_division", 0), True)
    return spark_area_under_pr(y, s)


def _grid_counts(
    y: list[int], s: list[float], thresholds: int, weights: list[float] | None
) -> list[tuple[Fraction, Fraction]]:
    """(tp, fp) at each threshold i / (thresholds - 1) (as a double), increasing: a row is
    predicted positive where its score >= the threshold (torchmetrics' binned update)."""
    w = [1.0] * len(y) if weights is None else weights
    rows = list(zip(y, s, w, strict=True))
    out = []
    for i in range(thresholds):
        t = i / (thresholds - 1)
        tp = sum((Fraction(wi) for yi, si, wi in rows if yi and si >= t), Fraction(0))
        fp = sum((Fraction(wi) for yi, si, wi in rows if not yi and si >= t), Fraction(0))
        out.append((tp, fp))
    return out


def torch_binned_auroc(
    y: list[int], s: list[float], thresholds: int, weights: list[float] | None = None
) -> Fraction:
    """torchmetrics' binary_auroc(thresholds=N) in exact fractions: _binary_roc_compute's
    binned branch (tpr, fpr by safe division, 0 over 0 is 0, flipped so the points run from
    threshold 1 down to 0, no (0, 0) point) then the trapezoid rule (torch.trapz)."""
    counts = _grid_counts(y, s, thresholds, weights)
    positives, negatives = counts[0]  # threshold 0: every row
    tpr = [tp / positives if positives else Fraction(0) for tp, _ in counts][::-1]
    fpr = [fp / negatives if negatives else Fraction(0) for _, fp in counts][::-1]
    pairs = zip(itertools.pairwise(fpr), itertools.pairwise(tpr), strict=True)
    return sum(((x2 - x1) * (y1 + y2) / 2 for (x1, x2), (y1, y2) in pairs), Fraction(0))


def torch_binned_average_precision(
    y: list[int], s: list[float], thresholds: int, weights: list[float] | None = None
) -> Fraction:
    """torchmetrics' binary_average_precision(thresholds=N) in exact fractions: the binned
    precision-recall curve (precision tp / (tp + fp), NaN then 0 where nothing is predicted;
    recall tp / P, 0 without positives; (1, 0) appended) and -Σ (r[i+1] - r[i]) p[i]."""
    counts = _grid_counts(y, s, thresholds, weights)
    positives = counts[0][0]
    precision = [tp / (tp + fp) if tp + fp else Fraction(0) for tp, fp in counts]
    recall = [tp / positives if positives else Fraction(0) for tp, _ in counts] + [Fraction(0)]
    steps = zip(itertools.pairwise(recall), precision, strict=True)
    return -sum(((r2 - r1) * p for (r1, r2), p in steps), Fraction(0))


def _binned(auc: bool) -> Callable[[pa.Table, dict[str, Any]], Any]:
    def expected(t: pa.Table, p: dict[str, Any]) -> Any:
        y, s = _known_scores(t, "score")
        if not y:
            return None
        if not any(y) or (auc and all(y)):  # torchmetrics gives 0: zero_division's value
            return oracle.undefined(p.get("zero_division", 0), True)
        thresholds = p.get("thresholds", 100)
        if auc:
            return torch_binned_auroc(y, s, thresholds)
        return torch_binned_average_precision(y, s, thresholds)

    return expected


def _brier(t: pa.Table, p: dict[str, Any]) -> Any:
    y, s = _known_scores(t, "prob")
    return sklearn_metrics().brier_score_loss(y, s) if y else None


def calibration_error(
    y: list[int],
    prob: list[float],
    n_bins: int,
    norm: str = "l1",
    weights: list[float] | None = None,
) -> Any:
    """The calibration error of equal-width bins, in exact fractions of the inputs (a float
    for 'l2', the root of a fraction).

    The bin of p is min(floor(p * n_bins), n_bins - 1) with p * n_bins rounded as a
    double, the documented rule. With g_b = |mean prob_b - mean y_b| and s_b = n_b / n (both
    weighted by ``weights``), the norms follow torchmetrics' ``_ce_compute``
    (torchmetrics/functional/classification/calibration_error.py): l1 Σ s_b g_b, l2
    sqrt(Σ s_b g_b²), max the largest g_b (an empty bin's gap is 0 there, which never wins).
    """
    w = [Fraction(1)] * len(y) if weights is None else [Fraction(x) for x in weights]
    n = sum(w, Fraction(0))
    if not y or n == 0:
        return None
    size: dict[int, Fraction] = {}
    gap: dict[int, Fraction] = {}
    for yi, pi, wi in zip(y, prob, w, strict=True):
        b = min(math.floor(pi * n_bins), n_bins - 1)
        size[b] = size.get(b, Fraction(0)) + wi
        gap[b] = gap.get(b, Fraction(0)) + wi * (Fraction(pi) - yi)
    gaps = {b: abs(gap[b]) / size[b] for b in size if size[b] > 0}
    if norm == "max":
        return max(gaps.values())
    if norm == "l2":
        return math.sqrt(sum((size[b] / n * g * g for b, g in gaps.items()), Fraction(0)))
    return sum((size[b] / n * g for b, g in gaps.items()), Fraction(0))


REFERENCES["average_precision_score"] = Reference(
    "probabilities", _average_precision, _zd(), source="scikit-learn"
)
REFERENCES["area_under_pr"] = Reference("probabilities", _area_under_pr, _zd())
_GRIDS = ({"thresholds": 2}, {"thresholds": 11}, {"thresholds": 1000})
REFERENCES["binned_auc"] = Reference(
    "probabilities", _binned(True), (*_zd(), *_GRIDS), source="torchmetrics (formulas)"
)
REFERENCES["binned_average_precision_score"] = Reference(
    "probabilities", _binned(False), (*_zd(), *_GRIDS), source="torchmetrics (formulas)"
)
REFERENCES["brier_score_loss"] = Reference("probabilities", _brier, source="scikit-learn")
REFERENCES["expected_calibration_error"] = Reference(
    "probabilities",
    lambda t, p: calibration_error(
        *_known_scores(t, "prob"), p.get("n_bins", 10), p.get("norm", "l1")
    ),
    (
        {},
        {"n_bins": 1},
        {"n_bins": 3},
        {"n_bins": 8},
        {"norm": "l2"},
        {"norm": "max"},
        {"n_bins": 3, "norm": "l2"},
        {"n_bins": 8, "norm": "max"},
    ),
    source="torchmetrics (norm)",
)

# single-label
_SL = ("actual", "predicted")


def _averaged(measure: str) -> Callable[[pa.Table, dict[str, Any]], Any]:
    def expected(t: pa.Table, p: dict[str, Any]) -> Any:
        args = _oracle_zd(p)
        average = args.pop("average", "macro")
        return oracle_single.averaged(rows_of(t, *_SL), measure, average, **args)

    return expected


_AVERAGES = tuple({"average": a} for a in ("micro", "macro", "weighted"))
_add(
    ["precision_score", "recall_score", "f1_score"],
    lambda name: Reference(
        "classes",
        _averaged(name.removesuffix("_score").replace("f1", "fbeta")),
        (*_zd(), *_AVERAGES),
    ),
)
REFERENCES["fbeta_score"] = Reference(
    "classes", _averaged("fbeta"), (*_zd({"beta": 2.0}), {"beta": 0.5, "average": "weighted"})
)
REFERENCES["accuracy"] = Reference("classes", lambda t, p: oracle_single.accuracy(rows_of(t, *_SL)))


def _error_rate(t: pa.Table, p: dict[str, Any]) -> Any:
    acc = oracle_single.accuracy(rows_of(t, *_SL))
    return None if acc is None else 1 - acc


REFERENCES["error_rate"] = Reference("classes", _error_rate)
REFERENCES["balanced_accuracy_score"] = Reference(
    "classes", lambda t, p: oracle_single.balanced_accuracy(rows_of(t, *_SL))
)
REFERENCES["cohen_kappa_score"] = Reference(
    "classes",
    lambda t, p: oracle_single.kappa(rows_of(t, *_SL), **_oracle_zd(p)),
    (*_zd(), {"weights": "linear"}, {"weights": "quadratic"}),
)
for _name in oracle_agreement.KAPPA_RESULTS:
    REFERENCES[_name] = Reference(
        "classes",
        lambda t, p, name=_name: oracle_agreement.kappa_test(
            rows_of(t, *_SL), name, p.get("weights")
        ),
        ({}, {"weights": "linear"}, {"weights": "quadratic"}),
        source="statsmodels",
    )
for _name in oracle_agreement.BOWKER_RESULTS:
    REFERENCES[_name] = Reference(
        "classes",
        lambda t, p, name=_name: oracle_agreement.bowker(rows_of(t, *_SL), name),
        source="statsmodels",
    )
REFERENCES["matthews_corrcoef"] = Reference(
    "classes", lambda t, p: oracle_single.mcc(rows_of(t, *_SL), **_oracle_zd(p)), _zd()
)


def _class_error_rate(t: pa.Table, p: dict[str, Any]) -> Any:
    """Share of the rows of class ``label`` (by actual) that are predicted otherwise."""
    ks = oracle_single.known(rows_of(t, *_SL))
    if not ks:
        return None
    mine = [(a, b) for a, b in ks if a == p["label"]]
    if not mine:  # undefined; 'diagnose' gives 1 only where the class is not predicted either
        predicted = any(b == p["label"] for _, b in ks)
        return oracle.undefined(p.get("zero_division", 0), not predicted)
    return Fraction(sum(a != b for a, b in mine), len(mine))


def _classes_of(table: pa.Table) -> tuple[Any, Any]:
    """A class that occurs in ``table`` (where one does) and one that never does."""
    return ("x", "never") if pa.types.is_string(table.schema.field("label").type) else (1, 99)


REFERENCES["class_error_rate"] = Reference(
    "classes",
    _class_error_rate,
    lambda t: tuple(
        {"label": c, "zero_division": zd} for c in _classes_of(t) for zd in ZERO_DIVISIONS
    ),
)


def _labels(t: pa.Table) -> list[Any]:
    return t.column("label").to_pylist()


REFERENCES["majority_class"] = Reference(
    "classes", lambda t, p: oracle_single.majority_class(_labels(t))
)
REFERENCES["minority_class"] = Reference(
    "classes", lambda t, p: oracle_single.minority_class(_labels(t))
)
REFERENCES["majority_error"] = Reference(
    "classes", lambda t, p: oracle_single.majority_error(_labels(t))
)


def _prevalence(t: pa.Table, p: dict[str, Any]) -> Any:
    seen = [x for x in _labels(t) if x is not None]
    return Fraction(sum(x == p["positive"] for x in seen), len(seen)) if seen else None


REFERENCES["prevalence"] = Reference(
    "classes", _prevalence, lambda t: tuple({"positive": c} for c in _classes_of(t))
)

# ranking: tests/oracle_ranking.py
_RANKED = ("rank_items", "correct_items")
_add(
    list(oracle_ranking.AT_K),
    lambda name: Reference(
        "ranked",
        lambda t, p, name=name: oracle_ranking.mean_over_rows(
            oracle_ranking.AT_K[name], rows_of(t, *_RANKED), p.get("k")
        ),
        ({}, {"k": 1}, {"k": 3}),
    ),
)
_RETRIEVED = ("correct_items", "rank_items")
_add(
    list(oracle_ranking.RETRIEVAL_AT_K),
    lambda name: Reference(
        "ranked",
        lambda t, p, name=name: oracle_ranking.mean_over_rows(
            oracle_ranking.RETRIEVAL_AT_K[name], rows_of(t, *_RETRIEVED), p.get("k")
        ),
        ({}, {"k": 1}, {"k": 3}),
    ),
)
REFERENCES["r_precision"] = Reference(
    "ranked",
    lambda t, p: oracle_ranking.mean_over_rows(oracle_ranking.r_precision, rows_of(t, *_RETRIEVED)),
)
REFERENCES["rbp"] = Reference(
    "ranked",
    lambda t, p: oracle_ranking.mean_over_rows(
        oracle_ranking.rbp, rows_of(t, *_RETRIEVED), *([p["p"]] if "p" in p else [])
    ),
    ({}, {"p": 0.5}, {"p": 0.95}),
)
REFERENCES["bpref"] = Reference(
    "ranked",
    lambda t, p: oracle_ranking.mean_over_rows(
        oracle_ranking.bpref, rows_of(t, "correct_items", "rank_items", "nonrelevant_items")
    ),
)
REFERENCES["graded_ndcg"] = Reference(
    "ranked",
    lambda t, p: oracle_ranking.mean_over_rows(
        oracle_ranking.graded_ndcg, rows_of(t, "ranked_relevance", "ideal_relevance"), p.get("k")
    ),
    ({}, {"k": 2}),
)


def _scored_mean(name: str) -> Callable[[pa.Table, dict[str, Any]], Any]:
    def expected(t: pa.Table, p: dict[str, Any]) -> Any:
        fn = oracle_ranking.SCORED[name]
        rows = [
            (s, a) for s, a in rows_of(t, "scores", "actual") if s is not None and a is not None
        ]
        if not rows:
            return None
        return sum(fn(s, a, **p) for s, a in rows) / len(rows)

    return expected


_add(
    ["coverage_error", "label_ranking_loss", "label_ranking_average_precision", "one_error"],
    lambda name: Reference("score_maps", _scored_mean(name)),
)
REFERENCES["ndcg_score"] = Reference(
    "score_maps", _scored_mean("ndcg_score"), ({}, {"k": 1}, {"k": 3})
)
REFERENCES["top_k"] = Reference(
    "score_maps",
    lambda t, p: [oracle_ranking.top_k(s, p.get("k")) for (s,) in rows_of(t, "scores")],
    ({}, {"k": 2}),
)
REFERENCES["above_threshold"] = Reference(
    "score_maps",
    lambda t, p: [
        oracle_ranking.above_threshold(s, p["threshold"]) for (s,) in rows_of(t, "scores")
    ],
    ({"threshold": 0.5}, {"threshold": 0.0}),
)
REFERENCES["top_k_above"] = Reference(
    "score_maps",
    lambda t, p: [
        oracle_ranking.top_k_above(s, p.get("k"), p["threshold"]) for (s,) in rows_of(t, "scores")
    ],
    ({"k": 1, "threshold": 0.25}, {"threshold": 0.5}),
)


def _label_scores(name: str) -> Callable[[pa.Table, dict[str, Any]], Any]:
    def expected(t: pa.Table, p: dict[str, Any]) -> Any:
        fn = getattr(oracle_ranking, name)
        return fn(
            rows_of(t, "scores", "actual"), p.get("average", "macro"), p.get("zero_division", 0)
        )

    return expected


#: every average, and every zero_division convention under one average or another
_SCORE_AVERAGES = (
    {},
    {"average": "micro"},
    {"average": "weighted"},
    {"average": "samples"},
    {"average": "macro", "zero_division": 1},
    {"average": "micro", "zero_division": NAN},
    {"average": "samples", "zero_division": "ignore"},
    {"average": "weighted", "zero_division": "diagnose"},
    {"average": "macro", "zero_division": NAN},
    {"average": "weighted", "zero_division": "ignore"},
)
_add(
    ["multilabel_average_precision", "multilabel_roc_auc"],
    lambda name: Reference("score_maps", _label_scores(name), _SCORE_AVERAGES),
)

REFERENCES["multilabel_brier_score"] = Reference(
    "score_maps",
    lambda t, p: multilabel_brier(rows_of(t, "scores", "actual"), p.get("average", "macro")),
    ({}, {"average": "micro"}, {"average": "samples"}),
)

REFERENCES["multiclass_brier_score"] = Reference(
    "class_scores",
    lambda t, p: multiclass_brier(rows_of(t, "scores", "actual"), p.get("scale_by_half", "auto")),
    ({}, {"scale_by_half": True}, {"scale_by_half": False}),
)


def top_labels(rows: list[tuple[Any, Any]]) -> tuple[list[int], list[float]]:
    """Each known row's (correct, confidence), torchmetrics' ``_multiclass_calibration_error_update``
    over a row's scored classes: the highest probability, and whether the class scored it (the
    smallest label among ties, torch's first index) is the true one; a row that scores no class
    has confidence 0 and is not correct."""
    correct, confidence = [], []
    for scores, actual in rows:
        if scores is None or actual is None:
            continue
        scored = {k: v for k, v in scores.items() if k is not None and v is not None}
        top = max(scored.values(), default=0.0)
        predicted = min((k for k, v in scored.items() if v == top), default=None)
        correct.append(int(predicted is not None and predicted == actual))
        confidence.append(float(top))
    return correct, confidence


REFERENCES["multiclass_calibration_error"] = Reference(
    "class_scores",
    lambda t, p: calibration_error(
        *top_labels(rows_of(t, "scores", "actual")), p.get("n_bins", 15), p.get("norm", "l1")
    ),
    (
        {},
        {"n_bins": 1},
        {"n_bins": 4},
        {"norm": "l2"},
        {"norm": "max"},
        {"n_bins": 3, "norm": "l2"},
    ),
)

#: measures whose call does not fit the common shapes (a cost table, indicator columns, a
#: table whose columns depend on the data): the test named here checks their numbers, and
#: ``test_every_measure.py`` checks that the test exists and calls the measure.
ELSEWHERE = {
    "cost_error": "tests/test_single_label_properties.py::test_cost_error",
    "cost_map": "tests/test_single_label_tables.py::run_cost_error",
    "labels_from_indicators": "tests/test_label_conformance.py::test_indicator_columns_report",
    "indicators_from_labels": "tests/test_label_conformance.py::test_indicators_round_trip",
    "confusion_matrix_wide": (
        "tests/test_single_label_tables.py::test_wide_confusion_matrix_of_the_twenty_animals"
    ),
    "confusion_matrix": (
        "tests/test_single_label_properties.py::test_confusion_matrix_and_class_metrics_tables"
    ),
    "class_metrics": (
        "tests/test_single_label_properties.py::test_confusion_matrix_and_class_metrics_tables"
    ),
    "class_distribution": "tests/test_single_label_properties.py::test_distribution_majority_minority",
    "precision_recall_curve": (
        "tests/test_curves.py::test_curves_equal_scikit_learn_on_random_data_with_ties"
    ),
    "roc_curve": "tests/test_curves.py::test_curves_equal_scikit_learn_on_random_data_with_ties",
    "det_curve": (
        "tests/test_det_curve.py::test_equals_scikit_learn_on_random_data_with_ties_and_weights"
    ),
    "confusion_matrix_at_thresholds": (
        "tests/test_confusion_at_thresholds.py::"
        "test_equals_scikit_learn_on_random_data_with_ties_and_weights"
    ),
    "calibration_table": (
        "tests/test_thresholds.py::test_calibration_table_is_sklearns_curve_and_its_ece"
    ),
    "label_thresholds": "tests/test_thresholds.py::test_label_thresholds_match_brute_force",
}


def sklearn_metrics() -> Any:
    """scikit-learn's metrics module, imported when a reference needs it."""
    from sklearn import metrics

    return metrics


def close(got: Any, want: Any) -> bool:
    """Equal to 1e-12 relative: None only to None, NaN only to NaN, structures element-wise."""
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, dict):
        return (
            isinstance(got, dict)
            and set(got) == set(want)
            and all(close(got[k], want[k]) for k in want)
        )
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(got) == len(want)
            and all(close(g, w) for g, w in zip(got, want, strict=True))
        )
    if isinstance(want, str) or isinstance(got, str):
        return got == want
    w, g = float(want), float(got)
    if math.isnan(w) or math.isnan(g):
        return math.isnan(w) and math.isnan(g)
    return math.isclose(g, w, rel_tol=1e-12, abs_tol=1e-12)
