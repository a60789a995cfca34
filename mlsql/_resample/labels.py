"""Per-label multi-label measures, resampled from (actual set, predicted set) tuples, as arrays.

The macro and weighted averages, the F of macro precision and recall, the
label accuracies (micro and macro) and the label-problem rates (clp, mlp, wlp).

Rows with the same set of actual labels and the same set of predicted labels
(and weight) are exchangeable, so the engines group by the pair of label
lists and hand the tuples over as an Arrow table (one list column per list,
never a Python object per label): Polars and Spark group the sorted distinct
lists, DuckDB the lists as the rows hold them (its ``list_sort(list_distinct())``
of every row cost more than the rows it saved). Here, per group:

1. the group's labels are coded by their rank among the group's distinct
   labels (sorted as Python sorts them), each list made its set (NULL elements
   dropped, each label once, ascending: :func:`coded`), and the tuples are put
   in their canonical order (NULL first, then by value, column by column, as
   Python compares the lists), so one seed gives one result whatever order an
   engine returned them in; a tuple handed over in several rows (its lists in
   other orders) is one tuple of their rows summed (:func:`tuple_order`);
2. each side's per-label tp, fp and fn form a sparse (tuples x labels) 0/1
   matrix, kept as its cells in tuple order, from one sort (:func:`side_cells`),
   and each tuple's (tp, |A|, |P|) for the label-set measures of the same call;
3. a batch of resamples' per-label counts are its weights (resamples x tuples)
   times that matrix (:func:`per_label`: a sum of the weights of each label's
   cells), computed once per batch and side for every measure of the call
   (both sides of a compare at once where they read the same draws: :class:`Pair`),
   and the registry's per-label formulas (:mod:`mlsql.measures.label_based`)
   average them over the labels.

The cost is one sort of the cells plus (cells x resamples) additions: the
cells of a tuple number |A ∪ P|.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mlsql._resample import native as NATIVE
from mlsql._resample import numbers as NUM
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
#: resamples whose per-label formulas are evaluated at once (bounds memory at BATCH x labels)
BATCH = 256
#: weights gathered at once in :func:`per_label` (resamples x cells): memory stays bounded
GATHER_CELLS = 1 << 20

Columns = dict[str, Any]


# ------------------------------------------------------------------ the tuples as arrays
@dataclass
class Lists:
    """A column of label lists of one group's tuples: codes of the labels, per tuple."""

    codes: np.ndarray  # the labels' codes, tuple after tuple (list order kept)
    lengths: np.ndarray  # each tuple's number of labels (0 where NULL)
    valid: np.ndarray  # whether the tuple's list is not NULL

    @property
    def owner(self) -> np.ndarray:
        """The tuple of each code."""
        return np.repeat(np.arange(len(self.lengths)), self.lengths)

    def take(self, order: np.ndarray) -> Lists:
        """The tuples in ``order``."""
        starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)
        lengths = self.lengths[order]
        picked = np.repeat(starts[order] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
        index = picked + np.arange(int(lengths.sum()), dtype=np.int64)
        return Lists(self.codes[index], lengths, self.valid[order])


def table_of(rows: Any, width: int) -> pa.Table:
    """``rows`` (an Arrow table, or rows of Python values) as an Arrow table of ``width`` columns."""
    if isinstance(rows, pa.Table):
        return rows
    rows = list(rows)
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in range(width)]
    return pa.table({f"c{i}": pa.array(list(c)) for i, c in enumerate(columns)})


def groups(table: pa.Table, n_key: int, order: Any) -> list[tuple[tuple[Any, ...], np.ndarray]]:
    """(group values, its rows' positions) per group, groups sorted by ``order`` of their values.

    The key columns are coded in Arrow (NULL has a code of its own), so only each group's
    values become Python objects.

    Examples
    --------
    >>> t = pa.table({"k": ["b", None, "b", "a"], "x": [1, 2, 3, 4]})
    >>> [(k, v.tolist()) for k, v in groups(t, 1, lambda v: (v is not None, v))]
    [((None,), [1]), (('a',), [3]), (('b',), [0, 2])]
    """
    if table.num_rows == 0:
        return []
    if n_key == 0:
        return [((), np.arange(table.num_rows))]
    codes, values = [], []
    for i in range(n_key):
        column = table.column(i).combine_chunks()
        if pa.types.is_dictionary(column.type):
            column = column.cast(column.type.value_type)
        encoded = pc.dictionary_encode(column, null_encoding="encode")
        codes.append(np.asarray(encoded.indices, dtype=np.int64))
        values.append(encoded.dictionary.to_pylist())
    # the rows' codes as the digits of one integer (the key columns' order kept): a 1-D unique
    # (``unique(axis=0)`` sorts the rows as structured values, about 20x slower)
    radix = [max(len(v), 1) for v in values]
    if math.prod(radix) < 1 << 63:
        joined = np.zeros(table.num_rows, np.int64)
        for c, r in zip(codes, radix, strict=True):
            joined = joined * r + c
        digits, group = np.unique(joined, return_inverse=True)
        found = np.empty((len(digits), n_key), np.int64)
        for i in range(n_key - 1, -1, -1):
            digits, found[:, i] = np.divmod(digits, radix[i])
    else:
        found, group = np.unique(np.column_stack(codes), axis=0, return_inverse=True)
    rows = np.argsort(group.reshape(-1), kind="stable")
    starts = np.searchsorted(group.reshape(-1)[rows], np.arange(len(found) + 1))
    keyed = [
        (tuple(values[i][c] for i, c in enumerate(codes_)), rows[starts[g] : starts[g + 1]])
        for g, codes_ in enumerate(found.tolist())
    ]
    return sorted(keyed, key=lambda kv: tuple(order(v) for v in kv[0]))


def _list_array(column: Any) -> pa.Array:
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(array.type):
        array = array.cast(array.type.value_type)
    return array


def _values(array: pa.Array) -> pa.Array:
    """The labels of every non-NULL list, in order (dictionary labels decoded)."""
    if pa.types.is_null(array.type):
        return pa.array([], type=pa.null())
    values = array.flatten()
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    return values


def coded(columns: Sequence[Any]) -> tuple[list[Lists], list[Any]]:
    """The list ``columns`` of one group as :class:`Lists` over one code per distinct label,
    and the labels in code order (sorted, as Python sorts them: text by code point).

    Each list becomes its set: NULL elements dropped, each label once, in code order (as
    ``list_sort(list_distinct(...))`` gives it), so an engine may hand the lists over as the
    rows hold them.

    Examples
    --------
    >>> lists, labels = coded([pa.array([["b", "a", "b"], None, ["a", None], []])])
    >>> labels, lists[0].codes.tolist(), lists[0].lengths.tolist(), lists[0].valid.tolist()
    (['a', 'b'], [0, 1, 0], [2, 0, 1, 0], [True, False, True, True])
    """
    arrays = [_list_array(c) for c in columns]
    values = [_values(a) for a in arrays]
    typed = [v for v in values if not pa.types.is_null(v.type) and len(v)]
    if typed:
        every = pc.drop_null(pa.concat_arrays([v.cast(typed[0].type) for v in typed]))
        unique = pc.unique(every)
        labels = unique.take(pc.sort_indices(unique))
    else:
        labels = pa.array([], type=pa.null())
    out = []
    for array, value in zip(arrays, values, strict=True):
        n = len(array)
        if pa.types.is_null(array.type):
            out.append(Lists(np.zeros(0, np.int64), np.zeros(n, np.int64), np.zeros(n, bool)))
            continue
        valid = np.asarray(array.is_valid(), dtype=bool)
        lengths = np.asarray(pc.fill_null(pc.list_value_length(array), 0), dtype=np.int64)
        if len(value) and len(labels):
            codes = pc.fill_null(pc.index_in(value.cast(labels.type), value_set=labels), -1)
            codes_np = np.asarray(codes, dtype=np.int64)
        else:  # no labels, or only NULL elements
            codes_np = np.full(len(value), -1, np.int64)
        out.append(as_sets(Lists(codes_np, lengths, valid), len(labels)))
    return out, labels.to_pylist()


def as_sets(lists: Lists, n_labels: int) -> Lists:
    """``lists`` with each list's codes distinct and ascending, the codes < 0 (NULL
    elements) dropped; lists already so are returned as they are (no sort).

    Examples
    --------
    >>> s = as_sets(Lists(np.array([2, 0, 2, -1, 1]), np.array([3, 0, 2]),
    ...                   np.array([True, False, True])), 3)
    >>> s.codes.tolist(), s.lengths.tolist()
    ([0, 2, 1], [2, 0, 1])
    """
    codes, n = lists.codes, len(lists.lengths)
    owner = lists.owner
    if len(codes) and n_labels:
        key = owner * n_labels + codes
        if codes.min() >= 0 and bool((key[1:] > key[:-1]).all()):
            return lists
    keep = codes >= 0
    key = np.sort(owner[keep] * n_labels + codes[keep], kind="stable") if n_labels else codes[:0]
    key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key
    owner = key // max(n_labels, 1)
    return Lists(key - owner * n_labels, np.bincount(owner, minlength=n), lists.valid)


def _list_keys(lists: Lists) -> list[np.ndarray]:
    """Sort keys (most significant first) that order the tuples by their list as Python
    compares lists: NULL first, then element by element, a list before its extensions."""
    n = len(lists.lengths)
    width = int(lists.lengths.max()) if n else 0
    starts = np.concatenate([[0], np.cumsum(lists.lengths)[:-1]]).astype(np.int64)
    keys = [lists.valid.astype(np.int64)]
    for j in range(width):
        has = lists.lengths > j
        key = np.zeros(n, np.int64)
        key[has] = lists.codes[starts[has] + j] + 1
        keys.append(key)
    return keys


def packed(keys: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Sort keys (most significant first) with the same order and the same ties in fewer
    keys: a key that is one value throughout is left out, and consecutive integer keys >= 0
    are joined as the digits of one integer while it stays below 2^63 (floats stay as
    they are). Sorting by fewer keys is fewer passes of ``lexsort``.

    Examples
    --------
    >>> [k.tolist() for k in packed([np.array([1, 0]), np.array([5, 5]), np.array([2, 3]),
    ...                              np.array([0.5, 0.5]), np.array([0.5, 1.0])])]
    [[6, 3], [0.5, 1.0]]
    """
    out: list[np.ndarray] = []
    size = 0  # the joined key's number of values (0: no key being joined)
    for key in keys:
        if not len(key) or bool((key == key[0]).all()):
            continue
        if key.dtype.kind not in "iu" or key.min() < 0:
            out.append(key)
            size = 0
            continue
        radix = int(key.max()) + 1
        if size and size * radix < 1 << 63:
            out[-1] = out[-1] * radix + key
            size *= radix
        else:
            out.append(key.astype(np.int64))
            size = radix
    return out or [np.zeros(len(keys[0]), np.int64)]


def tuple_order(
    sides: Sequence[tuple[Lists, Lists, np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray]:
    """The canonical order of a group's tuples: by each side's (actual, predicted, weight),
    NULL first, then by value; and where each distinct tuple starts in that order (an engine
    may hand a tuple over more than once, its lists in other orders: its rows are then summed).

    ``sides``: per side (actual, predicted, weight values, weight known).

    Examples
    --------
    >>> lists = Lists(np.array([1, 0, 1]), np.array([1, 1, 1]), np.ones(3, bool))
    >>> one = np.ones(3)
    >>> [x.tolist() for x in tuple_order([(lists, lists, one, one > 0)])]
    [[1, 0, 2], [0, 1]]
    """
    keys: list[np.ndarray] = []
    for actual, predicted, weight, known in sides:
        keys += _list_keys(actual) + _list_keys(predicted)
        keys += [known.astype(np.int64), np.where(known, weight, 0.0)]
    if not keys or not len(keys[0]):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    keys = packed(keys)
    order = np.lexsort(keys[::-1])
    new = np.zeros(len(order), bool)
    new[0] = True
    for key in keys:
        ranked = key[order]
        new[1:] |= ranked[1:] != ranked[:-1]
    return order, np.flatnonzero(new)


# ------------------------------------------------------------------ cells
class Cells:
    """A sparse 0/1 (tuples x labels) matrix, from its cells (``tuples[i]``, ``labels[i]``) in
    any order: label-major (:attr:`tuples`, :attr:`starts`, :attr:`labels`: each label's cells
    in ascending tuples, the portable sums' order) and tuple-major (:attr:`by_tuple`, the
    native kernel's), each sorted when first read.

    Examples
    --------
    >>> c = Cells.of(np.array([2, 0, 1]), np.array([1, 1, 0]))
    >>> c.tuples.tolist(), c.starts.tolist(), c.labels.tolist()
    ([1, 0, 2], [0, 1], [0, 1])
    >>> [a.tolist() for a in c.by_tuple]
    [[0, 1, 2], [1, 0, 1]]
    """

    def __init__(
        self, tuples: np.ndarray, labels: np.ndarray, by_tuple: bool = False, distinct: bool = False
    ) -> None:
        self._cells = (np.asarray(tuples, np.int64), np.asarray(labels, np.int64))
        #: no (tuple, label) cell comes twice (known from how the cells were made): the native
        #: sums may then add whole-number weights as integers
        self.distinct = distinct
        self._by_label: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._by_tuple = self._cells if by_tuple else None

    @classmethod
    def of(cls, tuples: np.ndarray, labels: np.ndarray, distinct: bool = False) -> Cells:
        """The cells (``tuples[i]``, ``labels[i]``), in any order (``distinct``: none twice)."""
        return cls(tuples, labels, distinct=distinct)

    @classmethod
    def in_tuple_order(
        cls, tuples: np.ndarray, labels: np.ndarray, distinct: bool = False
    ) -> Cells:
        """The cells (``tuples[i]``, ``labels[i]``), ``tuples`` ascending (no sort for the kernel)."""
        return cls(tuples, labels, by_tuple=True, distinct=distinct)

    def __len__(self) -> int:
        return len(self._cells[0])

    def _label_major(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._by_label is None:
            t, c = self._cells
            order = np.lexsort((t, c))
            t, c = t[order], c[order]
            starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]]) if len(c) else c[:0]
            self._by_label = (t, starts, c[starts])
        return self._by_label

    @property
    def tuples(self) -> np.ndarray:
        """The cells' tuples, label-major (a label's in ascending tuples)."""
        return self._label_major()[0]

    @property
    def starts(self) -> np.ndarray:
        """Where each label's cells start in :attr:`tuples`."""
        return self._label_major()[1]

    @property
    def labels(self) -> np.ndarray:
        """The labels that have cells, ascending."""
        return self._label_major()[2]

    @property
    def by_tuple(self) -> tuple[np.ndarray, np.ndarray]:
        """The cells' (tuples, labels), tuples ascending (a label's cells in ascending tuples)."""
        if self._by_tuple is None:
            t, c = self._cells
            order = np.argsort(t, kind="stable")
            self._by_tuple = (np.ascontiguousarray(t[order]), np.ascontiguousarray(c[order]))
        return self._by_tuple

    def label_of_cells(self) -> np.ndarray:
        """Each cell's label, label-major."""
        return np.repeat(self.labels, np.diff(np.r_[self.starts, len(self.tuples)]))

    def restricted(self, lookup: np.ndarray) -> Cells:
        """The cells of the labels that ``lookup`` (group code -> position, -1: left out) keeps."""
        t, c = self._cells
        mapped = lookup[c] if len(c) else c
        keep = mapped >= 0
        return Cells.of(t[keep], mapped[keep], self.distinct)


@dataclass
class Side:
    """One side (a model's rows) of a group's tuples: per-label cells and per-tuple counts.

    ``joined``: the cells of tp (labels 0..L-1), fp (L..2L-1), fn (2L..3L-1) and the known
    tuples (3L) side by side, L the group's labels (key None), or the given labels (their key).
    """

    joined: dict[Any, Cells]
    known: np.ndarray  # 1.0 where neither list is NULL
    labels: list[Any]  # the group's labels, in code order
    row_tp: np.ndarray
    row_actual: np.ndarray
    row_predicted: np.ndarray
    given: dict[Any, tuple[Cells, Cells, Cells, int]] = field(default_factory=dict)

    def cells(self, labels: Iterable[Any] | None) -> tuple[Cells, Cells, Cells, int]:
        """(tp, fp, fn cells, number of labels) over the group's labels, or the given ones."""
        key = None if labels is None else tuple(dict.fromkeys(labels))
        if None not in self.given:  # the group's labels: cut out of the joined cells
            n = len(self.labels)
            t, c = self.joined[None]._cells
            tp, fp, fn = (
                Cells.of(t[(lo <= c) & (c < lo + n)], c[(lo <= c) & (c < lo + n)] - lo, True)
                for lo in (0, n, 2 * n)
            )
            self.given[None] = (tp, fp, fn, n)
        if key not in self.given:
            universe = list(key or ())
            index = {label: i for i, label in enumerate(universe)}
            lookup = np.array([index.get(x, -1) for x in self.labels], dtype=np.int64)
            tp, fp, fn, _ = self.given[None]
            restricted = [c.restricted(lookup) for c in (tp, fp, fn)]
            self.given[key] = (restricted[0], restricted[1], restricted[2], len(universe))
        return self.given[key]

    def counts(self, w: np.ndarray, labels: Iterable[Any] | None) -> tuple[np.ndarray, list[Any]]:
        """(each resample's known rows, its per-label tp, fp and fn sums) under weights ``w``.

        One :func:`per_label` over the cells of all four, side by side (tp on labels 0..L-1,
        fp on L..2L-1, fn on 2L..3L-1, the known tuples on 3L): the weights are read once,
        and each sum adds the same cells in the same order as four calls would.
        """
        cells, n_labels = self.joined_cells(labels)
        return split_counts(per_label(w, cells, 3 * n_labels + 1), n_labels)

    def joined_cells(self, labels: Iterable[Any] | None) -> tuple[Cells, int]:
        """(the tp, fp, fn and known cells side by side, the number of labels L)."""
        key = None if labels is None else tuple(dict.fromkeys(labels))
        n_labels = len(self.labels) if key is None else len(key)
        if key not in self.joined:
            tp, fp, fn, _ = self.cells(labels)
            parts = [(c._cells[0], c._cells[1] + i * n_labels) for i, c in enumerate((tp, fp, fn))]
            known = np.flatnonzero(self.known)
            parts.append((known, np.full(len(known), 3 * n_labels, np.int64)))
            t, c = (np.concatenate(p) for p in zip(*parts, strict=True))
            self.joined[key] = Cells.of(t, c, distinct=all(x.distinct for x in (tp, fp, fn)))
        return self.joined[key], n_labels


def split_counts(sums: np.ndarray, n_labels: int) -> tuple[np.ndarray, list[Any]]:
    """(known rows, [tp, fp, fn]) of a side's joined sums (resamples x 3L + 1)."""
    return sums[:, 3 * n_labels], [sums[:, i * n_labels : (i + 1) * n_labels] for i in range(3)]


@dataclass
class Pair:
    """The sides of a compare's group whose tuples all weigh 1: each batch they read the same
    draws, so their sums are made in one kernel pass over the draws.

    Each (tuple, label) that is a cell of either side is one cell of the pair, in the column of
    its pattern (its kind on each side: tp, fp, fn or none; a known tuple's cell: known on
    each side or not), so a label both sides hold, as two models of the same rows mostly do,
    is added once: a compare's models read the same actual lists, and the cells are then
    |A ∪ P1 ∪ P2| per tuple rather than |A ∪ P1| + |A ∪ P2|. Each side's tp, fp, fn and known
    sums are sums of its patterns' columns: whole numbers, exact, so the numbers of a call per
    side. Weights that are not whole numbers are summed per side's cells (the additions in
    the order of a call per side).

    The sums are made for the weights a side asks with: a side that asks with other weights
    gets them made again, so the numbers never depend on the sharing.
    """

    sides: list[Side]
    kept: dict[Any, Any] = field(default_factory=dict)
    joined: dict[Any, tuple[Cells, list[int]]] = field(default_factory=dict)
    patterned: dict[Any, tuple[Cells, int, np.ndarray]] = field(default_factory=dict)

    def counts(
        self, side: Side, w: np.ndarray | NUM.Drawn, labels: Iterable[Any] | None
    ) -> tuple[np.ndarray, list[Any]]:
        """:meth:`Side.counts` of ``side`` (one of :attr:`sides`), made with the others'."""
        key = None if labels is None else tuple(dict.fromkeys(labels))
        if self.kept.get("weights") is not w:
            self.kept = {"weights": w}
        if key not in self.kept:
            whole = isinstance(w, NUM.Drawn) or bool(np.all(np.mod(w, 1.0) == 0.0))
            if whole and len(self.sides) == 2:
                self.kept[key] = self._by_pattern(w, labels, key)
            else:
                self.kept[key] = self._side_by_side(w, labels, key)
        return self.kept[key][next(i for i, s in enumerate(self.sides) if s is side)]

    def _side_by_side(
        self, w: np.ndarray | NUM.Drawn, labels: Iterable[Any] | None, key: Any
    ) -> list[tuple[np.ndarray, list[Any]]]:
        """Each side's cells side by side in one :func:`per_label` (its own columns)."""
        if key not in self.joined:
            parts = [s.joined_cells(labels) for s in self.sides]
            offsets = np.cumsum([0] + [3 * n + 1 for _, n in parts])
            t = np.concatenate([p.by_tuple[0] for p, _ in parts])
            labels_of = [p.by_tuple[1] + o for (p, _), o in zip(parts, offsets[:-1], strict=True)]
            order = np.argsort(t, kind="stable")
            cells = Cells.in_tuple_order(
                t[order], np.concatenate(labels_of)[order], all(p.distinct for p, _ in parts)
            )
            self.joined[key] = (cells, [n for _, n in parts])
        cells, widths = self.joined[key]
        sums = per_label(w, cells, sum(3 * n + 1 for n in widths))
        out, lo = [], 0
        for n in widths:
            out.append(split_counts(sums[:, lo : lo + 3 * n + 1], n))
            lo += 3 * n + 1
        return out

    def _by_pattern(
        self, w: np.ndarray | NUM.Drawn, labels: Iterable[Any] | None, key: Any
    ) -> list[tuple[np.ndarray, list[Any]]]:
        """Both sides' sums from one :func:`per_label` over the pattern cells (whole weights)."""
        if key not in self.patterned:
            self.patterned[key] = pattern_cells([s.joined_cells(labels) for s in self.sides])
        cells, n_labels, patterns = self.patterned[key]
        sums = per_label(w, cells, len(patterns) * (n_labels + 1))
        blocks = sums.reshape(len(sums), len(patterns), n_labels + 1)
        out = []
        for s in range(2):
            kinds = patterns[:, s]
            parts = [blocks[:, kinds == kind].sum(axis=1) for kind in range(3)]
            out.append((parts[0][:, n_labels], [p[:, :n_labels] for p in parts]))
        return out


#: a label's kind on a side in a pair's pattern (tp, fp, fn are 0, 1, 2; a known tuple's cell
#: is 0 on its side)
NO_CELL = 3


def pattern_cells(sides: Sequence[tuple[Cells, int]]) -> tuple[Cells, int, np.ndarray]:
    """The cells of a pair of sides' joined cells (:meth:`Side.joined_cells`, over the same
    L labels) by pattern: (cells, L, the patterns (P x 2: each side's kind, :data:`NO_CELL`
    where it has no cell)). Pattern p's labels are columns p (L + 1) .. p (L + 1) + L - 1, its
    known tuples column p (L + 1) + L. Each (tuple, label) cell of either side is one cell,
    tuples ascending.

    Examples
    --------
    One label; tuple 0: a tp on side one, a fn on side two; tuple 1: a fn on both; both tuples
    known on both sides (column L = 1 of a pattern):

    >>> one = Cells.of(np.array([0, 0, 1, 1]), np.array([0, 3, 2, 3]))
    >>> two = Cells.of(np.array([0, 0, 1, 1]), np.array([2, 3, 2, 3]))
    >>> cells, n, patterns = pattern_cells([(one, 1), (two, 1)])
    >>> patterns.tolist()  # (tp or known, tp or known), (tp, fn), (fn, fn)
    [[0, 0], [0, 2], [2, 2]]
    >>> [a.tolist() for a in cells.by_tuple]
    [[0, 0, 1, 1], [2, 1, 4, 1]]
    """
    (_, n_labels), (_, n_other) = sides
    if n_labels != n_other:
        raise ValueError("pattern cells: the sides have other labels")
    width = n_labels + 1  # a tuple's labels, then its known cell
    keys = []
    for s, (cells, _) in enumerate(sides):
        t, c = cells._cells
        known = c == 3 * n_labels
        kind = np.where(known, 0, c // max(n_labels, 1))
        code = np.where(known, n_labels, c - kind * n_labels)
        keys.append(((t * width + code) << 3) | (s << 2) | kind)
    # each side's cells mostly come in (tuple, label) order (side_cells makes them so): a
    # stable sort merges the runs
    ordered = np.sort(np.concatenate(keys), kind="stable")
    cell = ordered >> 3
    new = np.r_[True, cell[1:] != cell[:-1]] if len(cell) else np.zeros(0, bool)
    slot = np.cumsum(new) - 1
    kinds = np.full((int(new.sum()), 2), NO_CELL, np.int64)
    kinds[slot, (ordered >> 2) & 1] = ordered & 3
    combo = kinds[:, 0] * 4 + kinds[:, 1]
    present = np.flatnonzero(np.bincount(combo, minlength=16))
    column = np.full(16, -1, np.int64)
    column[present] = np.arange(len(present))
    unique = cell[new]
    tuples = unique // width
    columns = column[combo] * width + unique - tuples * width
    patterns = np.column_stack([present // 4, present % 4])
    return Cells.in_tuple_order(tuples, columns, distinct=True), n_labels, patterns


def side_cells(actual: Lists, predicted: Lists, labels: list[Any]) -> Side:
    """The tp, fp and fn cells of tuples with these lists (NULL on either side: no cell).

    One sort of every (tuple, label, side) code and of the known tuples gives the cells in
    tuple order: a label in both lists of a tuple is a tp (its two codes are neighbours),
    one in the actual list alone a fn, in the predicted list alone a fp.
    """
    n, n_labels = len(actual.lengths), len(labels)
    known = actual.valid & predicted.valid
    width = n_labels + 1  # a tuple's labels, then its known cell
    a_owner, p_owner = actual.owner, predicted.owner
    a_keep, p_keep = known[a_owner], known[p_owner]
    keys = np.sort(
        np.concatenate(
            [
                (a_owner[a_keep] * width + actual.codes[a_keep]) * 2,
                (p_owner[p_keep] * width + predicted.codes[p_keep]) * 2 + 1,
                np.flatnonzero(known) * width * 2 + n_labels * 2,
            ]
        ),
        kind="stable",  # three ascending runs (the lists are sets in code order): merged
    )
    cell, from_predicted = keys >> 1, (keys & 1).astype(bool)
    tuples, code = cell // width, cell % width
    same = cell[1:] == cell[:-1]  # the actual code of a tp, then its predicted code
    # (cut to the cells: with no known tuple there is no cell, and no pair to flag)
    tp, second = np.r_[same, False][: len(cell)], np.r_[False, same][: len(cell)]
    label = np.where(
        code == n_labels,
        3 * n_labels,
        code + np.where(tp, 0, np.where(from_predicted, n_labels, 2 * n_labels)),
    )
    row_tp = np.bincount(tuples[tp], minlength=n).astype(float)
    return Side(
        joined={None: Cells.in_tuple_order(tuples[~second], label[~second], distinct=True)},
        known=known.astype(float),
        labels=labels,
        row_tp=row_tp,
        row_actual=actual.lengths.astype(float),
        row_predicted=predicted.lengths.astype(float),
    )


def _native_sums(lib: Any, w: np.ndarray, cells: Cells, n_labels: int) -> np.ndarray:
    """:func:`per_label` by the native kernel: the cells in tuple order (a label's keep theirs)."""
    tuples, labels = cells.by_tuple
    weights = np.ascontiguousarray(w, dtype=np.float64)
    # the kernel indexes by these without checking: every cell must name a column and a label
    if len(tuples) and not (
        weights.ndim == 2
        and 0 <= tuples[0] <= tuples[-1] < weights.shape[1]
        and 0 <= labels.min() <= labels.max() < n_labels
    ):
        raise ValueError("per-label sums: a cell's tuple or label is out of range")
    out = np.empty((len(w), n_labels))
    args = (weights, len(w), weights.shape[1], tuples, labels, len(tuples), out, n_labels)
    # whole-number weights (the draws of an unweighted call) over distinct cells: summed as
    # integers, exactly (-2: a weight is not whole or a sum could pass 2^32; in doubles then)
    status = lib.mlsql_label_sums_whole(*args) if cells.distinct else -2
    if status == -2:
        status = lib.mlsql_label_sums(*args)
    if status:
        raise MemoryError("per-label sums: no memory for a block of sums")
    return out


def _drawn_sums(w: NUM.Drawn, cells: Cells, n_labels: int) -> np.ndarray | None:
    """:func:`per_label` of draws the kernel makes in its tiles (whole numbers over distinct
    cells, summed as integers); None where a sum could pass 2^32 (the caller sums the matrix)."""
    tuples, labels = cells.by_tuple
    if not (
        0 <= tuples[0] <= tuples[-1] < w.shape[1] and 0 <= labels.min() <= labels.max() < n_labels
    ):
        raise ValueError("per-label sums: a cell's tuple or label is out of range")
    return w.label_sums(tuples, labels, n_labels)


def per_label(w: np.ndarray | NUM.Drawn, cells: Cells, n_labels: int) -> np.ndarray:
    """Weights (resamples x tuples) times the 0/1 matrix of ``cells``: (resamples x labels).

    Each label's sum adds its cells' weights one by one, in ascending tuples, to 0:
    natively (:mod:`mlsql._resample.native`) a block of resamples per pass over the
    cells in tuple order, else by ``numpy.add.at`` over a chunk of cells at a time (their
    weights gathered tuple by tuple into one buffer: memory stays bounded, and is
    reused). Both give the same numbers.

    Examples
    --------
    >>> cells = Cells.of(np.array([0, 1, 1]), np.array([1, 0, 1]))  # (tuple, label) cells
    >>> per_label(np.array([[1.0, 2.0], [3.0, 0.0]]), cells, 2)
    array([[2., 3.],
           [0., 3.]])
    """
    n = len(cells)
    if not n or not len(w):
        return np.zeros((len(w), n_labels))
    lib = NATIVE.kernels()
    if isinstance(w, NUM.Drawn):
        if lib is not None and cells.distinct:
            sums = _drawn_sums(w, cells, n_labels)
            if sums is not None:
                return sums
        w = w.dense()
    if lib is not None:
        return _native_sums(lib, w, cells, n_labels)
    by_tuple = np.ascontiguousarray(w.T)
    labels = np.repeat(cells.labels, np.diff(np.r_[cells.starts, n]))
    out = np.zeros((n_labels, len(w)))
    step = max(1, GATHER_CELLS // len(w))
    buffer = np.empty((min(step, n), len(w)))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        gathered = np.take(by_tuple, cells.tuples[lo:hi], axis=0, out=buffer[: hi - lo])
        np.add.at(out, labels[lo:hi], gathered)
    return out.T


# ------------------------------------------------------------------ the measures
def evaluate(
    name: str, params: dict[str, Any], columns: Columns, weights: np.ndarray
) -> np.ma.MaskedArray:
    """``name`` (a macro or weighted average) under each row of ``weights``, in batches.

    ``columns["side"]`` is the tuples' :class:`Side`; the per-label counts of a batch of
    weights are kept for the other measures of the call (``columns["counts"]``).
    """
    labels = params.get("labels")
    side: Side = columns["side"]
    kept = columns.setdefault("counts", {})
    key = None if labels is None else tuple(dict.fromkeys(labels))
    if kept.get("weights") is not weights:
        kept.clear()
        kept["weights"] = weights
    if key not in kept:
        pair: Pair | None = columns.get("pair")
        kept[key] = (side.counts if pair is None else partial(pair.counts, side))(weights, labels)
    n_rows, counts = kept[key]
    out = []
    for start in range(0, len(n_rows), BATCH):
        part = [c[start : start + BATCH] for c in counts]
        out.append(
            _averages(name, params, n_rows[start : start + BATCH], part, given=labels is not None)
        )
    return np.ma.concatenate(out)


def _averages(
    name: str,
    params: dict[str, Any],
    known_rows: np.ndarray,
    counts: list[np.ndarray],
    given: bool,
) -> np.ma.MaskedArray:
    """The average ``name`` of per-label (tp, fp, fn) ``counts`` (batch x labels), the batch's
    resamples weighing ``known_rows`` known rows."""
    n_rows = np.broadcast_to(known_rows[:, None], counts[0].shape)
    # the labels of a resample: those of its weighed rows (or all those given)
    present = np.ones_like(counts[0], bool) if given else (sum(counts) > 0)
    axis = WeightedOps(present)
    zd = params["zero_division"]
    k = LB.LabelCounts(tp=counts[0], fp=counts[1], fn=counts[2], n_rows=n_rows)
    beta = params.get("beta", 1.0)
    of_means = name.endswith("_of_means")
    wanted = ("macro_precision", "macro_recall") if of_means else (name,)
    columns: dict[str, Any] = {"n_rows": n_rows}

    def column(label_column: str) -> Any:  # a per-label column, computed once when read
        if label_column not in columns:
            only = (label_column,)
            columns[label_column] = LB.label_values(axis, k, beta, zd, only)[label_column]
        return columns[label_column]

    aggregates = LB.label_aggregates(axis, column, zd, wanted)
    if of_means:
        beta = 1.0 if name == "macro_f1_of_means" else beta
        p, r = aggregates["macro_precision"], aggregates["macro_recall"]
        value = LB.fbeta_of_means(WeightedOps(1.0), p, r, beta)
    else:
        value = aggregates[name]
    return np.ma.asarray(np.ma.array(value)).reshape(len(known_rows))


# ------------------------------------------------------------------ a statistics table's groups
def _weights(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """(values with NULL as 0, known) of a column of tuple weights."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    known = np.asarray(array.is_valid(), dtype=bool)
    if pa.types.is_null(array.type):
        return np.zeros(len(array)), known
    values = pc.fill_null(array.cast(pa.float64()), 0.0)
    return np.asarray(values, dtype=float), known


def side_columns(side: Side, weight_known: np.ndarray) -> Columns:
    """The columns the measures read of one side: its cells, each tuple's (tp, |A|, |P|)
    (masked where a list is NULL) for the label-set measures, and which weights are known."""
    unknown = side.known == 0
    return {
        "side": side,
        "tp": np.ma.array(side.row_tp, mask=unknown),
        "n_actual": np.ma.array(side.row_actual, mask=unknown),
        "n_predicted": np.ma.array(side.row_predicted, mask=unknown),
        "weight_known": weight_known,
    }


def tuples(
    rows: Any, n_key: int, n_sides: int, order: Any
) -> list[tuple[tuple[Any, ...], list[tuple[Columns, np.ndarray]], np.ndarray]]:
    """Per group, in ``order`` of the group values: (values, per side (columns, tuple
    weights), rows m per tuple), the tuples in their canonical order (:func:`tuple_order`).

    ``rows``: (group values..., per side (actual list, predicted list, weight)..., m), as an
    Arrow table or rows of Python values.
    """
    table = table_of(rows, n_key + 3 * n_sides + 1)
    out = []
    m_all = np.asarray(
        pc.fill_null(table.column(table.num_columns - 1).cast(pa.float64()), 0.0), dtype=float
    )
    for key, index in groups(table, n_key, order):
        picked = pa.array(index)
        lists_of = [
            table.column(n_key + 3 * s + j).take(picked) for s in range(n_sides) for j in (0, 1)
        ]
        lists, labels = coded(lists_of)
        weights = [_weights(table.column(n_key + 3 * s + 2).take(picked)) for s in range(n_sides)]
        sides = [(lists[2 * s], lists[2 * s + 1], *weights[s]) for s in range(n_sides)]
        order, starts = tuple_order(sides)
        ranked = order[starts]
        m = np.add.reduceat(m_all[index][order], starts) if len(order) else m_all[:0]
        group = []
        for actual, predicted, w, known in sides:
            side = side_cells(actual.take(ranked), predicted.take(ranked), labels)
            group.append((side_columns(side, known[ranked]), w[ranked]))
        if n_sides > 1 and all(bool((w == 1).all()) for _, w in group):
            pair = Pair([c["side"] for c, _ in group])  # the sides read the same draws
            for c, _ in group:
                c["pair"] = pair
        out.append((key, group, m))
    return out
