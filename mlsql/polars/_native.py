"""The native Polars plugin: where it is, whether it is used, and its per-row statistics.

mlsql ships a Polars expression plugin written in C (``native/polars_plugin.c``,
compiled into the package's ``_native`` folder at install time). It computes
each row's |A ∩ P|, |A| and |P| in one pass over the Arrow buffers, with the
numbers of the portable expressions of :mod:`mlsql.polars.stats`. Polars'
streaming engine computes a shared subexpression once per use, so each use
reads what it needs from one call: a row formula (samples averages, subset
accuracy, the per-row ratios) the ``set_counts`` struct; sums of the counts
(the micro averages) one ``Int128`` per row holding all three
(``set_counts_packed``, summed once and unpacked); one statistic alone the
function computing just that one (tp reads both lists, |A| and |P| one each).
Integer labels, and text labels of at most 7 bytes, are compared as integer
keys. Two aggregates, one call per group, build tables in C: the per-label
counts of the label tables (:func:`label_table`) and the segment statistics of
``multilabel_average_precision`` and ``multilabel_roc_auc``
(:func:`label_scores`, ``native/label_scores.h``, shared with the DuckDB
extension).

The plugin speaks Polars' plugin interface 0.1 (C, no Rust crates); it loaded
and gave the oracle's counts on Polars 1.20.0 (old streaming engine), 1.44.2
and 2.1.0.

It is used by default when all of these hold, and otherwise the portable
expressions are used, silently:

- the environment variable ``MLSQL_NATIVE`` is not ``0`` (read whenever an
  expression is built, so it can be switched within a process);
- Polars is at least :data:`MIN_POLARS` (the oldest version checked);
- the compiled library is there, exports every function mlsql calls
  (:data:`FUNCTIONS`: a library built from older sources would lack the newer
  ones) and answers a small probe correctly (once per process);
- both lists hold text or integers (other label types stay portable); this is
  decided at plan time, after mlsql's type check.

:func:`polars_native_status` says which path expressions take, and why.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from mlsql._formulas import RowStats
from mlsql._native_switch import ENV as ENV  # the switch, where callers and tests read it
from mlsql._native_switch import FOLDER, status
from mlsql.polars import _lowering as S

#: a path to a plugin library to use instead of the packaged one (tests, sanitizer builds)
PATH_ENV = "MLSQL_POLARS_PLUGIN"
#: the oldest Polars the plugin was checked with (plugin interface 0.1)
MIN_POLARS = (1, 20)
#: the fields of the plugin's ``set_counts`` struct, and the function computing each alone
FIELDS = {"tp": "set_tp", "n_actual": "set_n_actual", "n_predicted": "set_n_predicted"}
#: the three fields in one Int128 per row (``native/polars_plugin.c``, OUT_PACKED): field i
#: times 2**(PACKED_BITS * i), so a micro measure's three sums are one sum of one call
PACKED, PACKED_BITS = "set_counts_packed", 42
#: the per-label table functions: one call per group, and one per streaming batch
LABEL_TABLE, LABEL_TABLE_ROWS = "label_table", "label_table_rows"
#: the label-score aggregate per average: its mode of native/label_scores.h (one pooled segment,
#: one per label, one per kind of row)
LABEL_SCORES = {
    "micro": "label_scores_pool",
    "macro": "label_scores_labels",
    "weighted": "label_scores_labels",
    "samples": "label_scores_rows",
}
#: every plugin function mlsql calls (the probe checks that the library exports them all)
FUNCTIONS = (
    "set_counts",
    *FIELDS.values(),
    PACKED,
    LABEL_TABLE,
    LABEL_TABLE_ROWS,
    *dict.fromkeys(LABEL_SCORES.values()),
)


def polars_version() -> tuple[int, ...]:
    """The running Polars' major and minor version.

    Examples
    --------
    >>> len(polars_version())
    2
    """
    return tuple(int(x) for x in re.findall(r"\d+", pl.__version__)[:2])


@functools.cache
def _packaged() -> Path | None:
    """The library the build put into the package's ``_native`` folder, if any."""
    found = sorted(FOLDER.glob("mlsql_polars_plugin.*")) if FOLDER.is_dir() else []
    return found[0] if found else None


def library_path() -> Path | None:
    """The plugin library to load: ``$MLSQL_POLARS_PLUGIN``, else the packaged one, else None."""
    override = os.environ.get(PATH_ENV)
    return Path(override) if override else _packaged()


def _call(path: Path, function: str, actual: pl.Expr, predicted: pl.Expr) -> pl.Expr:
    from polars.plugins import register_plugin_function

    return register_plugin_function(
        plugin_path=path,
        function_name=function,
        args=[actual, predicted],
        is_elementwise=True,
        use_abs_path=True,
    )


def label_table(actual: pl.Expr, predicted: pl.Expr, *, per_batch: bool = False) -> pl.Expr:
    """Per group (an aggregation), the plugin's per-label table of ``actual`` and ``predicted``.

    One row per group holding a list of structs ``{label, tp, n_actual,
    n_predicted, n}``: each label's counts (``n`` 0), then each kind of known
    row (label NULL, the row's tp, |A|, |P| and ``n`` rows of that kind), then
    the unknown rows if any (label and counts NULL). Integer labels come back
    as Int64 (UInt64 as UInt64), text as String (Binary as Binary); both
    sides must hold the same label type (see :func:`supports_label_table`).

    With ``per_batch``, the function is elementwise instead (the streaming
    engine runs it on each batch of rows, in bounded memory): as many rows
    as the input, the first row of each batch holding that batch's table and
    the others empty lists; the caller adds the tables up.
    """
    from polars.plugins import register_plugin_function

    path = library_path()
    if path is None:
        raise RuntimeError("the native plugin is not available; check enabled() first")
    return register_plugin_function(
        plugin_path=path,
        function_name=LABEL_TABLE_ROWS if per_batch else LABEL_TABLE,
        args=[actual, predicted],
        is_elementwise=per_batch,
        returns_scalar=not per_batch,
        use_abs_path=True,
    )


def supports_label_table(actual: pl.DataType, predicted: pl.DataType) -> bool:
    """Whether :func:`label_table` reads these list types: one text or integer type (or all-NULL).

    Examples
    --------
    >>> supports_label_table(pl.List(pl.Int32), pl.List(pl.Null))
    True
    >>> supports_label_table(pl.List(pl.Int32), pl.List(pl.Int64))
    False
    >>> supports_label_table(pl.List(pl.Null), pl.List(pl.Null))
    False
    """
    if not (isinstance(actual, pl.List) and isinstance(predicted, pl.List)):
        return False
    inners = {actual.inner, predicted.inner} - {pl.Null}
    return supports([actual, predicted]) and len(inners) == 1


def label_scores(
    actual: pl.Expr, entries: pl.Expr, average: str, weight: pl.Expr | None = None
) -> pl.Expr:
    """Per group (an aggregation), the plugin's label-score statistics under ``average``.

    ``actual`` holds each row's true labels, ``entries`` its scores as a list
    of ``{label, score: Float64}`` structs (a label's first entry counts; a
    NULL entry, label or score is no score), ``weight`` (Float64) each row's
    weight. A row counts when no input is NULL and its weight is above 0.
    One row per group holding ``{nu, segs}``: ``nu`` the distinct labels of
    the group's cells, ``segs`` a list of the segments' statistics ``{n_explicit,
    n_positive, n_positive_unscored, precision_sum, u, w, rows}`` (those of
    :class:`mlsql.measures.label_scores.Segment`; see ``native/label_scores.h``):
    one pooled segment under micro, one per label under macro and weighted,
    and under samples one per kind of row (its positives and unscored
    positives) with the means of its rows' statistics, weighted, ``w`` their
    weight and ``rows`` their number. See :func:`supports_label_scores`.
    """
    from polars.plugins import register_plugin_function

    path = library_path()
    if path is None:
        raise RuntimeError("the native plugin is not available; check enabled() first")
    return register_plugin_function(
        plugin_path=path,
        function_name=LABEL_SCORES[average],
        args=[actual, entries] if weight is None else [actual, entries, weight],
        returns_scalar=True,
        use_abs_path=True,
    )


def supports_label_scores(actual: pl.DataType, entries: pl.DataType) -> bool:
    """Whether :func:`label_scores` reads these inputs: a list of labels and a list of
    ``{label, score: Float64}`` structs, the labels text or integers (any widths) on both.

    Examples
    --------
    >>> entry = pl.Struct({"label": pl.Int64, "score": pl.Float64})
    >>> supports_label_scores(pl.List(pl.Int8), pl.List(entry))
    True
    >>> supports_label_scores(pl.List(pl.Float64), pl.List(entry))
    False
    """
    if not (isinstance(actual, pl.List) and isinstance(entries, pl.List)):
        return False
    entry = entries.inner
    if not isinstance(entry, pl.Struct) or len(entry.fields) != 2:
        return False
    label, score = entry.fields
    return score.dtype in (pl.Float64, pl.Null) and supports([actual, pl.List(label.dtype)])


#: rows the probe runs, and what they must give: (tp, n_actual, n_predicted)
_PROBE = (
    ({"a": [["x", "x", None, "y" * 20], None], "p": [["x", "y" * 20, "z"], []]}, None),
    ({"a": [[1, 2, 2], [3]], "p": [[2, 4], None]}, pl.Int64),
)
_PROBE_EXPECTED = [(2, 2, 3), (None, None, None)], [(1, 2, 2), (None, None, None)]


def exported_symbols(functions: tuple[str, ...] = FUNCTIONS) -> tuple[str, ...]:
    """The C symbols a plugin library must export for mlsql to call ``functions``.

    Polars calls ``_polars_plugin_<name>`` and ``_polars_plugin_field_<name>``
    for each function, and the two interface functions for every plugin.

    Examples
    --------
    >>> exported_symbols(("set_tp",))
    ('_polars_plugin_get_version', '_polars_plugin_get_last_error_message', \
'_polars_plugin_set_tp', '_polars_plugin_field_set_tp')
    """
    per_function = (f"_polars_plugin{kind}_{name}" for name in functions for kind in ("", "_field"))
    return ("_polars_plugin_get_version", "_polars_plugin_get_last_error_message", *per_function)


def _missing_symbols(path: Path) -> list[str]:
    """The symbols of :func:`exported_symbols` the library at ``path`` does not export.

    A library built from older sources loads and passes the counting probe,
    then fails on the first call of a newer function: this finds that first.
    """
    import ctypes

    library = ctypes.CDLL(str(path))  # the loader's handle Polars reuses for the same file
    return [name for name in exported_symbols() if not hasattr(library, name)]


@functools.cache
def _probe(path: Path) -> str | None:
    """None if the library at ``path`` exports every function and counts correctly, else why not."""
    try:
        missing = _missing_symbols(path)
        if missing:
            return (
                f"the plugin at {path} lacks {', '.join(missing)} "
                "(built from older sources? rebuild it with native/build_polars.py)"
            )
        for (columns, inner), expected in zip(_PROBE, _PROBE_EXPECTED, strict=True):
            schema = {k: pl.List(inner) for k in columns} if inner is not None else None
            frame = pl.DataFrame(columns, schema=schema)
            counts = _call(path, "set_counts", pl.col("a"), pl.col("p")).alias("c")
            got = frame.select(counts).unnest("c").rows()
            if got != expected:
                return f"the plugin's probe gave {got}, expected {expected}"
            packed = frame.select(_call(path, PACKED, pl.col("a"), pl.col("p"))).to_series()
            if packed.to_list() != [pack(*row) if row[0] is not None else None for row in got]:
                return f"the plugin's packed counts gave {packed.to_list()}, expected {got} packed"
    except Exception as error:  # any failure to load or run means: stay portable
        return f"the plugin did not load: {type(error).__name__}: {error}"
    return None


def polars_native_status() -> dict[str, Any]:
    """Whether mlsql.polars uses its native plugin, and why (not).

    Returns
    -------
    dict
        ``enabled`` (bool: expressions built now use the plugin), ``available``
        (the plugin loads and works, whatever ``MLSQL_NATIVE`` says), ``path``
        (the library, or None), ``polars`` (the running version) and
        ``reason`` (why it is not used, or None).

    Examples
    --------
    >>> sorted(polars_native_status())
    ['available', 'enabled', 'path', 'polars', 'reason']
    """
    path = library_path()
    reason = None
    if polars_version() < MIN_POLARS:
        wanted = ".".join(map(str, MIN_POLARS))
        reason = f"Polars {pl.__version__} is older than {wanted}, the oldest checked"
    elif path is None:
        reason = "the plugin library was not built (no compiler at install time?)"
    elif not path.is_file():
        reason = f"no plugin library at {path}"
    else:
        reason = _probe(path)
    return status(reason, str(path) if path is not None else None, polars=pl.__version__)


def enabled() -> bool:
    """Whether expressions built now use the plugin."""
    return bool(polars_native_status()["enabled"])


#: element types the plugin reads (Polars exports them as Arrow ints, Utf8View, BinaryView)
_INTEGERS = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


def _label_kind(dtype: pl.DataType) -> str | None:
    inner = dtype.inner if isinstance(dtype, pl.List) else dtype
    if inner == pl.Null:
        return "null"
    if inner in _INTEGERS:
        return "integer"
    if inner in (pl.String, pl.Binary):
        return "text"
    return None


def supports(dtypes: list[pl.DataType]) -> bool:
    """Whether the plugin reads lists of these types: text or integers (or all-NULL).

    Examples
    --------
    >>> supports([pl.List(pl.String), pl.List(pl.Null)])
    True
    >>> supports([pl.List(pl.Float64), pl.List(pl.Float64)])
    False
    """
    kinds = [_label_kind(d) for d in dtypes]
    return None not in kinds and len(set(kinds) - {"null"}) <= 1


def row_stats(
    actual: pl.Expr, predicted: pl.Expr, portable: Callable[[pl.Expr, pl.Expr], RowStats]
) -> RowStats:
    """tp, |A| and |P| of each row through the plugin (``portable`` for other label types).

    Each statistic alone is one plugin call; where a formula needs several of
    them in one row, :mod:`mlsql.polars._lowering` takes them from one
    ``set_counts`` call instead (they are marked as fields of it).
    """
    path = library_path()
    if path is None:
        raise RuntimeError("the native plugin is not available; check enabled() first")

    def stat(function: str, fallback: Callable[[RowStats], pl.Expr]) -> pl.Expr:
        def resolved(pairs: list[tuple[pl.Expr, pl.DataType]]) -> pl.Expr:
            (a, a_type), (p, p_type) = pairs
            if supports([a_type, p_type]):
                return _call(path, function, a, p)
            return fallback(portable(a, p))

        return pl.pipe_with_dtype([actual, predicted], resolved)

    counts = stat(
        "set_counts", lambda s: pl.struct(tp=s.tp, n_actual=s.n_actual, n_predicted=s.n_predicted)
    )
    packed = stat(PACKED, lambda s: pack(s.tp, s.n_actual, s.n_predicted))
    S.offer_packed(
        counts,
        S.PackedFields(
            packed,
            tuple(FIELDS),
            PACKED_BITS,
            bound=actual.list.len().cast(pl.Int64) + predicted.list.len().cast(pl.Int64),
        ),
    )
    stats = {
        field: S.share(stat(function, functools.partial(_field, name=field)), counts, field)
        for field, function in FIELDS.items()
    }
    return RowStats(**stats)


def pack(tp: Any, n_actual: Any, n_predicted: Any) -> Any:
    """tp, |A| and |P| in one number as the plugin's ``set_counts_packed`` gives them.

    Works on Python integers and on Polars expressions (as ``Int128``).

    Examples
    --------
    >>> pack(1, 2, 3) == 1 + 2 * 2**42 + 3 * 2**84
    True
    """
    if isinstance(tp, pl.Expr):
        shift = [pl.lit(1 << (PACKED_BITS * i), pl.Int128) for i in (1, 2)]
        fields = [x.cast(pl.Int128) for x in (tp, n_actual, n_predicted)]
        return fields[0] + fields[1] * shift[0] + fields[2] * shift[1]
    return tp + (n_actual << PACKED_BITS) + (n_predicted << (2 * PACKED_BITS))


def _field(s: Any, name: str) -> Any:
    """The field ``name`` of the plugin's per-row statistics ``s``."""
    return getattr(s, name)
