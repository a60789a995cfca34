"""The macro and weighted averages' resample (mlsql._resample.labels) against plain Python.

References written here, never the code under test: the tuples' canonical order is
Python's sort of the rows (NULL first, lists compared as lists); the per-label counts
and the macro F1 of each resample are sums over Python sets with the Poisson draws
given explicitly (the group's documented stream, ``run.stream``, drawn by
``numbers.draw`` in the tuples' sorted order).
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import mlsql
from mlsql._resample import labels as LL
from mlsql._resample import numbers as NUM
from mlsql._resample import run
from tests.conftest import _engines
from tests.test_bootstrap import run_engine

LABELS = ["a", "b", "c", "d", "e", "é", "B"]


def random_rows(rng: random.Random, n: int) -> list[tuple[Any, Any]]:
    """(actual, predicted) label lists: some NULL, some empty, long and short, shared prefixes."""
    rows = []
    for _ in range(n):
        a = sorted({x for x in LABELS if rng.random() < 0.35})
        p = sorted({x for x in LABELS if (x in a) != (rng.random() < 0.25)})
        rows.append((None if rng.random() < 0.05 else a, None if rng.random() < 0.05 else p))
    return rows


def python_key(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple((v is not None, v) for v in row)


def test_tuple_order_is_pythons_sort_of_the_rows() -> None:
    rng = random.Random(1)
    rows = list({(tuple(a or ()) if a is not None else None, tuple(p or ()) if p is not None else None, w) for (a, p), w in zip(random_rows(rng, 400), [rng.choice([None, 0.5, 1.0, 2.0]) for _ in range(400)], strict=True)})  # fmt: skip
    rows = [(None if a is None else list(a), None if p is None else list(p), w) for a, p, w in rows]
    rng.shuffle(rows)
    table = pa.table({"a": [r[0] for r in rows], "p": [r[1] for r in rows], "w": [r[2] for r in rows]})  # fmt: skip
    (actual, predicted), _ = LL.coded([table.column("a"), table.column("p")])
    w = table.column("w").to_pylist()
    weights = np.array([0.0 if x is None else x for x in w])
    known = np.array([x is not None for x in w])
    order, starts = LL.tuple_order([(actual, predicted, weights, known)])
    assert [rows[i] for i in order] == sorted(rows, key=python_key)
    assert starts.tolist() == list(range(len(rows)))  # the rows are distinct


def messy(rng: random.Random, labels: Any) -> Any:
    """``labels`` (a list, or None) as a row may hold it: shuffled, some labels twice, NULLs."""
    if labels is None:
        return None
    out = list(labels) + [x for x in labels if rng.random() < 0.3]
    out += [None] * (rng.random() < 0.2)
    rng.shuffle(out)
    return out


def test_coded_lists_are_the_rows_sets() -> None:
    """Lists as rows hold them (any order, repeats, NULL elements, NULL and empty lists)
    become their sets in ascending label order, as Python's ``sorted(set(x) - {None})``."""
    rng = random.Random(7)
    rows = [messy(rng, a) for a, _ in random_rows(rng, 300)] + [[None, None], []]
    (lists,), labels = LL.coded([pa.array(rows)])
    assert labels == sorted({x for r in rows if r is not None for x in r} - {None})
    ends = np.cumsum(lists.lengths)
    got = [
        [labels[c] for c in lists.codes[end - n : end]] if ok else None
        for end, n, ok in zip(ends, lists.lengths, lists.valid, strict=True)
    ]
    assert got == [None if r is None else sorted(set(r) - {None}) for r in rows]


def test_a_tuple_handed_over_in_pieces_is_the_tuple_of_their_rows() -> None:
    """An engine may hand a tuple's lists over as the rows hold them, the same set in several
    rows of the statistics table: the result is that of the table of sets with their rows
    summed (one tuple, one Poisson(m) draw), for bootstrap and compare alike."""
    rng = random.Random(8)
    sets = [(*r, 1.0) for r in random_rows(rng, 80)]
    pieces = [(messy(rng, a), messy(rng, p), w, 1) for a, p, w in sets for _ in range(rng.choice([1, 1, 2, 3]))]  # fmt: skip
    rng.shuffle(pieces)
    counted = Counter((python_tuple(a), python_tuple(p)) for a, p, _, _ in pieces)
    grouped = [(None if a is None else list(a), None if p is None else list(p), 1.0, m) for (a, p), m in counted.items()]  # fmt: skip
    chosen = mlsql._resample.measures.resolve(["macro_f1", "weighted_recall", "micro_f1"], "bootstrap")  # fmt: skip

    def table(rows: list[tuple[Any, ...]]) -> pa.Table:
        return pa.table({f"c{i}": [r[i] for r in rows] for i in range(len(rows[0]))})

    expected = run.bootstrap(table(grouped), 0, chosen, 60, 0.9, 3)
    assert run.bootstrap(table(pieces), 0, chosen, 60, 0.9, 3) == expected
    # compare: (model, the baseline's lists and weight, the model's, m); the model drops a label
    paired = [("B", a, p, w, a, (p or [])[1:] if p is not None else None, w, m) for a, p, w, m in pieces]  # fmt: skip
    merged = Counter((python_tuple(r[1]), python_tuple(r[2]), python_tuple(r[5])) for r in paired)
    grouped_pairs = [("B", listed(a), listed(p), 1.0, listed(a), listed(q), 1.0, m) for (a, p, q), m in merged.items()]  # fmt: skip
    assert run.compare(table(paired), 0, chosen, 60, 0.9, 3) == run.compare(
        table(grouped_pairs), 0, chosen, 60, 0.9, 3
    )


@pytest.mark.long_cases("spark")
@pytest.mark.parametrize("engine", _engines())
def test_rows_lists_as_held_give_the_sets_result(engine: str) -> None:
    """The rows' lists shuffled, with repeated labels and NULL elements: compare and
    bootstrap give exactly what they give on each row's sorted set (DuckDB hands the lists
    over as the rows hold them; the resample makes them sets)."""
    rng = random.Random(9)
    rows = random_rows(rng, 150)
    other = [(a, p if rng.random() < 0.6 else (p or [])[1:]) for a, p in rows]
    n = len(rows)

    def data(lists: Any) -> pa.Table:
        return pa.table(
            {
                "id": list(range(n)) * 2,
                "model": ["A"] * n + ["B"] * n,
                "actual": [lists(r[0]) for r in rows] * 2,
                "predicted": [lists(r[1]) for r in rows] + [lists(r[1]) for r in other],
            }
        )

    def both(table: pa.Table) -> list[Any]:
        measures = ["macro_f1", "weighted_jaccard", "micro_f1"]
        return [
            run_engine(engine, f, table, "actual", "predicted", measures, n_resamples=80, seed=4)
            for f in ("compare", "bootstrap")
        ]

    assert both(data(lambda x: messy(rng, x))) == both(data(lambda x: x))


def python_tuple(labels: Any) -> Any:
    """A list's set as a sorted tuple (NULL elements dropped), None for a NULL list."""
    return None if labels is None else tuple(sorted(set(labels) - {None}))


def listed(labels: Any) -> Any:
    return None if labels is None else list(labels)


def per_label_oracle(
    tuples: list[tuple[Any, Any]], weights: np.ndarray, labels: list[str]
) -> dict[str, np.ndarray]:
    """tp, fp, fn per resample and label: sums of the weights of the tuples holding the label."""
    out = {k: np.zeros((len(weights), len(labels))) for k in ("tp", "fp", "fn")}
    for t, (a, p) in enumerate(tuples):
        if a is None or p is None:
            continue
        for j, label in enumerate(labels):
            inside = (label in a, label in p)
            kind = {(True, True): "tp", (False, True): "fp", (True, False): "fn"}.get(inside)
            if kind:
                out[kind][:, j] += weights[:, t]
    return out


@pytest.mark.parametrize("gather", [1 << 20, 7])  # one chunk of cells, and labels split over chunks
def test_per_label_counts_equal_sums_over_python_sets(
    gather: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LL, "GATHER_CELLS", gather)
    rng = random.Random(2)
    rows = list(Counter((tuple(a) if a is not None else None, tuple(p) if p is not None else None) for a, p in random_rows(rng, 300)))  # fmt: skip
    rng.shuffle(rows)
    data = [(None if a is None else list(a), None if p is None else list(p), 1.0, 1) for a, p in rows]  # fmt: skip
    ((_, [(columns, _w)], _m),) = LL.tuples(data, 0, 1, run._order)
    ordered = sorted(rows, key=python_key)
    weights = np.random.default_rng(3).poisson(1.0, (5, len(ordered))).astype(float)
    side = columns["side"]
    labels = sorted({x for a, p in ordered for x in (*(a or ()), *(p or ()))})
    assert side.labels == labels
    want = per_label_oracle(ordered, weights, labels)
    tp, fp, fn, n = side.cells(None)
    for kind, cells in (("tp", tp), ("fp", fp), ("fn", fn)):
        assert np.array_equal(LL.per_label(weights * side.known, cells, n), want[kind]), kind
    given = ["z", "c", "a", "c"]  # a label that never occurs, and a repeat
    tp, fp, fn, n = side.cells(given)
    want = per_label_oracle(ordered, weights, ["z", "c", "a"])
    for kind, cells in (("tp", tp), ("fp", fp), ("fn", fn)):
        assert np.array_equal(LL.per_label(weights * side.known, cells, n), want[kind]), kind
    tps = [None if a is None or p is None else len(set(a) & set(p)) for a, p in ordered]
    assert columns["tp"].tolist() == tps


def macro_f1(tuples: list[tuple[Any, Any]], weights: np.ndarray) -> np.ndarray:
    """Macro F1 (labels of the resample's weighed rows; all defined) per row of ``weights``."""
    labels = sorted({x for a, p in tuples if a is not None and p is not None for x in (*a, *p)})
    k = per_label_oracle(tuples, weights, labels)
    present = (k["tp"] + k["fp"] + k["fn"]) > 0
    with np.errstate(invalid="ignore"):
        f1 = np.where(present, 2 * k["tp"] / (2 * k["tp"] + k["fp"] + k["fn"]), 0.0)
    return f1.sum(axis=1) / present.sum(axis=1)


def interval(values: np.ndarray, confidence: float) -> tuple[float, float, float]:
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return float(low), float(high), float(np.std(values, ddof=1))


@pytest.mark.parametrize("engine", _engines())
def test_bootstrap_macro_f1_is_the_oracle_under_the_groups_stream(engine: str) -> None:
    rng = random.Random(4)
    rows = random_rows(rng, 250) + [(["a"], ["a"])] * 30  # a tuple of many rows: Poisson(m)
    rng.shuffle(rows)
    data = pa.table({"actual": [r[0] for r in rows], "predicted": [r[1] for r in rows]})
    got = run_engine(engine, "bootstrap", data, "actual", "predicted", ["macro_f1", "micro_f1"], n_resamples=300, seed=9)  # fmt: skip
    counted = Counter(
        (None if a is None else tuple(sorted(set(a))), None if p is None else tuple(sorted(set(p))))
        for a, p in rows
    )
    ordered = sorted(counted, key=python_key)
    m = np.array([counted[t] for t in ordered], dtype=float)
    draws = NUM.draw(run.stream(9, ()), m, 300)
    assert got[0][0] == "macro_f1"
    assert got[0][1] == pytest.approx(macro_f1(ordered, m[None, :])[0], rel=1e-12)
    assert got[0][2:] == pytest.approx(interval(macro_f1(ordered, draws), 0.95), rel=1e-12)


@pytest.mark.parametrize("engine", _engines())
def test_compare_macro_f1_is_the_oracle_under_the_models_stream(engine: str) -> None:
    rng = random.Random(5)
    rows = random_rows(rng, 200)
    other = [(a, p if rng.random() < 0.6 else (p or [])[1:]) for a, p in rows]
    n = len(rows)
    data = pa.table(
        {
            "id": list(range(n)) * 2,
            "model": ["A"] * n + ["B"] * n,
            "actual": [r[0] for r in rows] * 2,
            "predicted": [r[1] for r in rows] + [r[1] for r in other],
        }
    )
    (got,) = run_engine(engine, "compare", data, "actual", "predicted", ["macro_f1"], n_resamples=300, seed=2)  # fmt: skip

    def listed(x: Any) -> Any:
        return None if x is None else tuple(sorted(set(x)))

    pairs = Counter(
        (listed(a), listed(p), 1.0, listed(a), listed(q), 1.0)
        for (a, p), (_, q) in zip(rows, other, strict=True)
    )
    ordered = sorted(pairs, key=python_key)
    m = np.array([pairs[t] for t in ordered], dtype=float)
    draws = NUM.draw(run.stream(2, ("B",)), m, 300)
    base = [(t[0], t[1]) for t in ordered]
    model = [(t[3], t[4]) for t in ordered]
    b_est, x_est = macro_f1(base, m[None, :])[0], macro_f1(model, m[None, :])[0]
    assert got[:2] == ("B", "macro_f1")
    assert got[2:5] == pytest.approx((b_est, x_est, x_est - b_est), rel=1e-12)
    low, high, _ = interval(macro_f1(model, draws) - macro_f1(base, draws), 0.95)
    assert got[5:7] == pytest.approx((low, high), rel=1e-12)


def test_the_rows_order_and_arrow_or_rows_give_one_result() -> None:
    rng = random.Random(6)
    rows = [(*r, 1.0, 1) for r in random_rows(rng, 120)]
    chosen = mlsql._resample.measures.resolve(["macro_f1", "weighted_jaccard"], "bootstrap")
    first = run.bootstrap(rows, 0, chosen, 50, 0.9, 1)
    shuffled = rows[::-1]
    arrow = pa.table({f"c{i}": [r[i] for r in shuffled] for i in range(4)})
    assert run.bootstrap(arrow, 0, chosen, 50, 0.9, 1) == first


def test_groups_are_pythons_grouping_of_the_key_values() -> None:
    """Several key columns, NULL keys, a dictionary column: the groups and their rows are
    those of a Python dict over the rows' key tuples, sorted NULL first."""
    rng = random.Random(3)
    keys = [
        (rng.choice([None, "x", "y", "é"]), rng.choice([None, 1, 2]), rng.choice(["p", "q"]))
        for _ in range(300)
    ]
    table = pa.table(
        {
            "k0": [k[0] for k in keys],
            "k1": pa.array([k[1] for k in keys], pa.int64()),
            "k2": pa.array([k[2] for k in keys]).dictionary_encode(),
            "x": list(range(len(keys))),
        }
    )
    expected: dict[tuple[Any, ...], list[int]] = {}
    for i, key in enumerate(keys):
        expected.setdefault(key, []).append(i)

    def order(v: Any) -> tuple[bool, Any]:
        return (v is not None, v)

    ordered = sorted(expected.items(), key=lambda kv: tuple(order(v) for v in kv[0]))
    got = [(k, v.tolist()) for k, v in LL.groups(table, 3, order)]
    assert got == ordered
