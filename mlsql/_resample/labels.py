"""Per-label multi-label measures, resampled from (actual set, predicted set) tuples.

The macro and weighted averages, the F of macro precision and recall, the
label accuracies (micro and macro) and the label-problem rates (clp, mlp, wlp).

Rows with the same set of actual labels and the same set of predicted labels
(and weight) are exchangeable, so the engines group by the pair of sorted
distinct label lists. Each tuple's per-label tp, fp and fn form a sparse
(tuples x labels) 0/1 matrix, kept as its cells sorted by label; a resample's
per-label counts are its weights (resamples x tuples) times that matrix (a
sum of the weights of each label's cells), and the registry's per-label
formulas (:mod:`mlsql.measures.label_based`) average them over the labels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlsql._resample.ops import WeightedOps
from mlsql.measures import label_based as LB

#: the measures resampled so: macro_* and weighted_* of each ratio, and the other group
#: values of the per-label counts
MEASURES = (
    *(f"{avg}_{r}" for avg in ("macro", "weighted") for r in LB.RATIOS),
    "macro_f1_of_means",
    "macro_fbeta_of_means",
    "label_accuracy_micro",
    "label_accuracy_macro",
    "clp",
    "mlp",
    "wlp",
)
#: resamples evaluated at once (bounds memory at BATCH x labels per count)
BATCH = 256

Columns = dict[str, Any]


def _universe(actual: Sequence[Any], predicted: Sequence[Any], labels: Any) -> list[Any]:
    if labels is not None:
        return list(dict.fromkeys(labels))
    seen: set[Any] = set()
    for row in (*actual, *predicted):
        seen.update(row)
    return sorted(seen)


#: a sparse 0/1 (tuples x labels) matrix: its cells' (tuple, label) indices, sorted by label
Cells = tuple[np.ndarray, np.ndarray]


def indicators(columns: Columns, labels: Any) -> tuple[Cells, Cells, Cells, np.ndarray, int]:
    """(tp, fp, fn cells, known, number of labels) of the tuples.

    A tuple whose actual or predicted list is NULL is unknown (no cell, known 0).
    """
    a_col, p_col = columns["actual"], columns["predicted"]
    known = np.array([a is not None and p is not None for a, p in zip(a_col, p_col, strict=True)])
    actual = [set(a) if k else set() for a, k in zip(a_col, known, strict=True)]
    predicted = [set(p) if k else set() for p, k in zip(p_col, known, strict=True)]
    universe = _universe(actual, predicted, labels)
    index = {label: i for i, label in enumerate(universe)}

    def cells(of: Callable[[set[Any], set[Any]], set[Any]]) -> Cells:
        rows, cols = [], []
        for t, (a, p) in enumerate(zip(actual, predicted, strict=True)):
            for label in of(a, p):
                if label in index:
                    rows.append(t)
                    cols.append(index[label])
        order = np.argsort(np.array(cols, dtype=np.int64), kind="stable")
        return np.array(rows, dtype=np.int64)[order], np.array(cols, dtype=np.int64)[order]

    return (
        cells(lambda a, p: a & p),
        cells(lambda a, p: p - a),
        cells(lambda a, p: a - p),
        known.astype(float),
        len(universe),
    )


def per_label(w: np.ndarray, cells: Cells, n_labels: int) -> np.ndarray:
    """Weights (resamples x tuples) times the 0/1 matrix of ``cells``: (resamples x labels)."""
    rows, cols = cells
    out = np.zeros((len(w), n_labels))
    if len(rows):
        starts = np.flatnonzero(np.r_[True, cols[1:] != cols[:-1]])
        out[:, cols[starts]] = np.add.reduceat(w[:, rows], starts, axis=1)
    return out


def evaluate(
    name: str, params: dict[str, Any], columns: Columns, weights: np.ndarray
) -> np.ma.MaskedArray:
    """``name`` (a macro or weighted average) under each row of ``weights``, in batches."""
    labels = params.get("labels")
    cache = columns.setdefault("label_indicators", {})  # every batch reads the same tuples
    key = None if labels is None else tuple(labels)
    if key not in cache:
        cache[key] = indicators(columns, labels)
    tp, fp, fn, known, n_labels = cache[key]
    out = []
    for start in range(0, len(weights), BATCH):
        w = weights[start : start + BATCH] * known
        counts = [per_label(w, cells, n_labels) for cells in (tp, fp, fn)]
        out.append(_averages(name, params, w, counts, given=labels is not None))
    return np.ma.concatenate(out)


def _averages(
    name: str,
    params: dict[str, Any],
    w: np.ndarray,
    counts: list[np.ndarray],
    given: bool,
) -> np.ma.MaskedArray:
    """The average ``name`` of per-label (tp, fp, fn) ``counts`` (batch x labels) under ``w``."""
    n_rows = np.broadcast_to(w.sum(axis=-1)[:, None], counts[0].shape)
    # the labels of a resample: those of its weighed rows (or all those given)
    present = np.ones_like(counts[0], bool) if given else (sum(counts) > 0)
    axis = WeightedOps(present)
    zd = params["zero_division"]
    k = LB.LabelCounts(tp=counts[0], fp=counts[1], fn=counts[2], n_rows=n_rows)
    values = LB.label_values(axis, k, params.get("beta", 1.0), zd)
    values["n_rows"] = n_rows
    aggregates = LB.label_aggregates(axis, values.__getitem__, zd)
    if name.endswith("_of_means"):
        beta = 1.0 if name == "macro_f1_of_means" else params.get("beta", 1.0)
        p, r = aggregates["macro_precision"], aggregates["macro_recall"]
        value = LB.fbeta_of_means(WeightedOps(1.0), p, r, beta)
    else:
        value = aggregates[name]
    return np.ma.asarray(np.ma.array(value)).reshape(len(w))
