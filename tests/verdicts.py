"""The catalogue of bad and edge inputs of ``tests/test_one_verdict.py`` (issue 35), and the
five engine paths that run it.

Cases are drawn from the registry: every aggregate measure of every family, on tables of its
inputs' kind (NULL lists, empty lists, duplicate labels, NULL elements, all-right and all-wrong
predictions, no rows, unknown rows, columns of the wrong type), with weights (none, 1, mixed
magnitudes 1/2.5/1e150/1e-150, NULL, 0, negative, text, boolean) and with extreme values of
each declared parameter (boundaries, huge integers, NaN, infinities, every option). A case's
verdict on an engine is a value or mlsql's error message; :func:`verdict_of` reads the message
out of the engine's wrapper.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

import mlsql._params as P
from mlsql._registry import Measure, Param, measures
from tests.references import REFERENCES

#: engine paths: DuckDB via mlsql.connect() and via mlsql.register() on a plain connection,
#: Polars eager and streaming, Spark
PATHS = ("duckdb_connect", "duckdb_register", "polars_eager", "polars_streaming", "spark")
#: the relative tolerance of "the same value"
REL = 1e-12

# ------------------------------------------------------------------ tables per data kind
L = pa.list_(pa.string())
LI = pa.list_(pa.int64())
LI32 = pa.list_(pa.int32())
SCORES = pa.map_(pa.string(), pa.float64())


def _t(columns: dict[str, tuple[list[Any], pa.DataType]]) -> pa.Table:
    return pa.table({c: pa.array(v, t) for c, (v, t) in columns.items()})


def _label_lists() -> dict[str, pa.Table]:
    mixed_a = [["a", "b"], ["a"], None, [], ["b", "b", None], ["c"]]
    mixed_p = [["a"], ["a", "a", "c"], ["a"], [], [None, "b"], None]
    right = [["a", "b"], ["c"], []]
    wrong_a, wrong_p = [["a"], ["b", "c"], ["a"]], [["b"], ["a"], ["c", "d"]]
    ints_a = [[1, 2], [1], None, [], [2, 2, None]]
    ints_p = [[1], [1, 1, 3], [1], [], [None, 2]]
    return {
        "mixed": _t({"actual": (mixed_a, L), "predicted": (mixed_p, L)}),
        "all_right": _t({"actual": (right, L), "predicted": (right, L)}),
        "all_wrong": _t({"actual": (wrong_a, L), "predicted": (wrong_p, L)}),
        "ints": _t({"actual": (ints_a, LI), "predicted": (ints_p, LI)}),
        "int_widths": _t({"actual": (ints_a, LI32), "predicted": (ints_p, LI)}),
        "null_rows": _t({"actual": ([None, None], L), "predicted": ([["a"], None], L)}),
        "no_rows": _t({"actual": ([], L), "predicted": ([], L)}),
        "text_vs_ints": _t({"actual": (mixed_a[:2], L), "predicted": (ints_p[:2], LI)}),
        "text_column": _t({"actual": (["a", "b"], pa.string()), "predicted": (["a", "c"], pa.string())}),
        "int_column": _t({"actual": ([1, 2], pa.int64()), "predicted": ([1, 3], pa.int64())}),
    }  # fmt: skip


def _classes() -> dict[str, pa.Table]:
    s, i = pa.string(), pa.int64()
    a, p = ["x", "y", None, "x", "z", "y"], ["x", "x", "y", None, "z", "z"]
    return {
        "mixed": _t({"actual": (a, s), "predicted": (p, s), "label": (a, s)}),
        "all_right": _t({"actual": (a[:2], s), "predicted": (a[:2], s), "label": (a[:2], s)}),
        "all_wrong": _t({"actual": (["x", "y"], s), "predicted": (["y", "x"], s), "label": (["x", "y"], s)}),
        "ints": _t({"actual": ([1, 2, None, 1], i), "predicted": ([1, 1, 2, None], i), "label": ([1, 2, None, 1], i)}),
        "one_class": _t({"actual": (["x", "x"], s), "predicted": (["x", "x"], s), "label": (["x", "x"], s)}),
        "null_rows": _t({"actual": ([None, None], s), "predicted": (["x", None], s), "label": ([None, None], s)}),
        "no_rows": _t({"actual": ([], s), "predicted": ([], s), "label": ([], s)}),
        "text_vs_ints": _t({"actual": (["x", "y"], s), "predicted": ([1, 2], i), "label": (["x", "y"], s)}),
        "floats": _t({"actual": ([1.0, 2.5], pa.float64()), "predicted": ([1.0, 1.0], pa.float64()), "label": ([1.0, 2.5], pa.float64())}),
        "booleans": _t({"actual": ([True, False], pa.bool_()), "predicted": ([True, True], pa.bool_()), "label": ([True, False], pa.bool_())}),
        "lists": _t({"actual": ([["x"], ["y"]], L), "predicted": ([["x"], ["x"]], L), "label": ([["x"], ["y"]], L)}),
    }  # fmt: skip


def _binary() -> dict[str, pa.Table]:
    b, i8 = pa.bool_(), pa.int8()
    a, p = [True, False, None, True, False], [True, True, False, None, False]

    def four(x: list[Any], y: list[Any], t: pa.DataType, u: pa.DataType | None = None) -> pa.Table:
        u = u or t
        return _t({"actual": (x, t), "predicted": (y, u), "holds": (x, t), "fires": (y, u)})

    return {
        "mixed": four(a, p, b),
        "all_right": four(a[:2], a[:2], b),
        "all_wrong": four([True, False], [False, True], b),
        "ints": four([1, 0, None, 1], [1, 1, 0, None], i8),
        "int64": four([1, 0, 1], [0, 0, 1], pa.int64()),
        "all_negative": four([False, False], [False, False], b),
        "null_rows": four([None, None], [True, None], b),
        "no_rows": four([], [], b),
        "out_of_range": four([1, 2], [1, 0], pa.int64()),
        "floats": four([1.0, 0.0], [1.0, 1.0], pa.float64()),
        "text": four(["1", "0"], ["1", "1"], pa.string()),
        "lists": four([[True]], [[True]], pa.list_(b)),
    }


def _numbers() -> dict[str, pa.Table]:
    f = pa.float64()
    return {
        "mixed": _t({"actual": ([1.0, 2.5, None, -1.0, 0.0], f), "predicted": ([1.5, 2.5, 1.0, None, 0.25], f)}),
        "all_right": _t({"actual": ([1.0, 2.0], f), "predicted": ([1.0, 2.0], f)}),
        "constant": _t({"actual": ([2.0, 2.0, 2.0], f), "predicted": ([1.0, 2.0, 3.0], f)}),
        "zeros": _t({"actual": ([0.0, 0.0], f), "predicted": ([1.0, 0.0], f)}),
        "ints": _t({"actual": ([1, 2, 3], pa.int64()), "predicted": ([1, 3, 3], pa.int64())}),
        "one_row": _t({"actual": ([1.0], f), "predicted": ([2.0], f)}),
        "nan": _t({"actual": ([1.0, math.nan], f), "predicted": ([1.0, 2.0], f)}),
        "inf": _t({"actual": ([1.0, math.inf], f), "predicted": ([1.0, 2.0], f)}),
        "huge": _t({"actual": ([1e200, -1e200], f), "predicted": ([-1e200, 1e200], f)}),
        "null_rows": _t({"actual": ([None, None], f), "predicted": ([1.0, None], f)}),
        "no_rows": _t({"actual": ([], f), "predicted": ([], f)}),
        "text": _t({"actual": (["1", "2"], pa.string()), "predicted": (["1", "3"], pa.string())}),
        "booleans": _t({"actual": ([True, False], pa.bool_()), "predicted": ([True, True], pa.bool_())}),
    }  # fmt: skip


def _probabilities() -> dict[str, pa.Table]:
    i, f = pa.int64(), pa.float64()

    def cols(y: list[Any], s: list[Any], yt: pa.DataType = i, st: pa.DataType = f) -> pa.Table:
        return _t(
            {
                "actual": (y, yt),
                "predicted": (s, st),
                "label": (y, yt),
                "score": (s, st),
                "prob": (s, st),
            }
        )

    return {
        "mixed": cols([1, 0, None, 1, 0, 1], [0.75, 0.5, 0.5, None, 0.125, 0.5]),
        "all_right": cols([1, 0], [1.0, 0.0]),
        "all_wrong": cols([1, 0], [0.0, 1.0]),
        "one_class": cols([1, 1], [0.5, 0.25]),
        "booleans": cols([True, False, True], [0.5, 0.25, 0.75], pa.bool_()),
        "null_rows": cols([None, None], [0.5, None]),
        "no_rows": cols([], []),
        "outside_0_1": cols([1, 0], [1.5, -0.5]),
        "nan_score": cols([1, 0], [math.nan, 0.5]),
        "label_2": cols([2, 0], [0.5, 0.5]),
        "text": cols(["1", "0"], ["0.5", "0.5"], pa.string(), pa.string()),
        "int_scores": cols([1, 0], [1, 0], i, i),
    }  # fmt: skip


def _ranked() -> dict[str, pa.Table]:
    g = pa.list_(pa.float64())

    def cols(
        r: list[Any], c: list[Any], rr: list[Any], ir: list[Any], t: pa.DataType = LI
    ) -> pa.Table:
        # bpref's judged non-relevant items: a ranked item that is not relevant, if a row has one
        judged = [
            None if x is None or y is None else [i for i in x if i not in y][:1]
            for x, y in zip(r, c, strict=True)
        ]
        return _t(
            {
                "rank_items": (r, t),
                "correct_items": (c, t),
                "nonrelevant_items": (judged, t),
                "ranked_relevance": (rr, g),
                "ideal_relevance": (ir, g),
            }
        )

    return {
        "mixed": cols([[1, 2, 3], [4, 4, None], None, [], [2, 1]], [[2], [4], [1], [1], []],
                      [[1.0, 0.0, 2.0], [0.0], None, [], [3.0, None]], [[2.0, 1.0], [1.0], [1.0], [], [3.0]]),
        "all_right": cols([[1, 2], [3]], [[1, 2], [3]], [[1.0, 1.0], [2.0]], [[1.0, 1.0], [2.0]]),
        "all_wrong": cols([[1, 2], [3]], [[4], [5, 6]], [[0.0, 0.0], [0.0]], [[1.0], [2.0]]),
        "null_rows": cols([None, None], [[1], None], [None, None], [[1.0], None]),
        "no_rows": cols([], [], [], []),
        "text_items": cols([["a", "b"], ["c"]], [["b"], ["c"]], [[1.0], [0.0]], [[1.0], [1.0]], L),
        "text_vs_ints": _t({"rank_items": ([["a"]], L), "correct_items": ([[1]], LI), "nonrelevant_items": ([[2]], LI), "ranked_relevance": ([[1.0]], g), "ideal_relevance": ([[1.0]], g)}),
        "negative_relevance": cols([[1]], [[1]], [[-1.0, 2.0]], [[2.0]]),
        "text_column": _t({"rank_items": (["a"], pa.string()), "correct_items": (["a"], pa.string()), "nonrelevant_items": (["b"], pa.string()), "ranked_relevance": (["1"], pa.string()), "ideal_relevance": (["1"], pa.string())}),
    }  # fmt: skip


def _score_maps() -> dict[str, pa.Table]:
    def cols(s: list[Any], a: list[Any], st: pa.DataType = SCORES, at: pa.DataType = L) -> pa.Table:
        return _t({"scores": (s, st), "actual": (a, at)})

    return {
        "mixed": cols([{"a": 0.5, "b": 0.25}, {"a": None, "c": 1.0}, None, {}, {"b": 0.5}],
                      [["a"], ["c", "c"], ["a"], [], None]),
        "all_right": cols([{"a": 1.0, "b": 0.0}, {"b": 1.0, "a": 0.0}], [["a"], ["b"]]),
        "all_wrong": cols([{"a": 0.0, "b": 1.0}, {"b": 0.0, "a": 1.0}], [["a"], ["b"]]),
        "unscored_truth": cols([{"a": 1.0}], [["z"]]),
        "null_rows": cols([None, None], [["a"], None]),
        "no_rows": cols([], []),
        "nan_score": cols([{"a": math.nan, "b": 0.5}], [["a"]]),
        "int_labels": cols([{"a": 0.5}], [[1]], SCORES, LI),
        "int_scores": cols([{"a": 1, "b": 0}], [["a"]], pa.map_(pa.string(), pa.int64())),
        "text_column": cols([{"a": 0.5}], ["a"], SCORES, pa.string()),
    }  # fmt: skip


def _class_scores() -> dict[str, pa.Table]:
    def cols(s: list[Any], a: list[Any], st: pa.DataType = SCORES, at: Any = None) -> pa.Table:
        return _t({"scores": (s, st), "actual": (a, at or pa.string())})

    return {
        "mixed": cols([{"a": 0.5, "b": 0.25}, {"a": None, "c": 1.0}, None, {}, {"b": 0.5}],
                      ["a", "c", "a", "b", None]),
        "all_right": cols([{"a": 1.0, "b": 0.0}, {"b": 1.0, "a": 0.0}], ["a", "b"]),
        "all_wrong": cols([{"a": 0.0, "b": 1.0}, {"b": 0.0, "a": 1.0}], ["a", "b"]),
        "unscored_truth": cols([{"a": 1.0}], ["z"]),
        "null_rows": cols([None, None], ["a", None]),
        "no_rows": cols([], []),
        "nan_score": cols([{"a": math.nan, "b": 0.5}], ["a"]),
        "above_one": cols([{"a": 1.5}], ["a"]),
        "int_labels": cols([{"a": 0.5}], [1], SCORES, pa.int64()),
    }  # fmt: skip


def _ratings() -> dict[str, pa.Table]:
    def cols(r: list[Any], t: pa.DataType = L) -> pa.Table:
        return _t({"ratings": (r, t)})

    return {
        "mixed": cols([["a", "b", "b"], None, ["a", None, "a", "c"], ["c", "c", "c"], ["b", "a", "b"]]),
        "all_right": cols([["a", "a"], ["b", "b"], ["c", "c"]]),
        "all_wrong": cols([["a", "b"], ["b", "a"], ["c", "a"]]),
        "one_category": cols([["a", "a", "a"], ["a", "a", "a"]]),
        "uneven": cols([["a", "b"], ["a", "b", "b"]]),
        "one_rater": cols([["a"], ["b"]]),
        "null_rows": cols([None, None]),
        "no_rows": cols([]),
        "ints": cols([[1, 2, 2], [2, 2, None, 2], [3, 1, 1]], LI),
        "text_column": cols(["a", "b"], pa.string()),
        "floats": cols([[1.0, 2.0], [1.0, 1.0]], pa.list_(pa.float64())),
        "booleans": cols([[True, False], [True, True]], pa.list_(pa.bool_())),
    }  # fmt: skip


def _outcomes() -> dict[str, pa.Table]:
    def cols(r: list[Any], t: pa.DataType = LI) -> pa.Table:
        return _t({"correct": (r, t)})

    b = pa.list_(pa.bool_())
    return {
        "mixed": cols([[1, 0, 1], None, [1, None, 0], [0, 0, 1], [1, 1, 1], [0, 1, 1]]),
        "all_right": cols([[1, 1], [1, 1], [1, 1]]),
        "all_wrong": cols([[1, 0], [0, 1], [1, 0]]),
        "booleans": cols([[True, False, True], [False, False, True]], b),
        "uneven": cols([[1, 0], [1, 0, 1]]),
        "one_model": cols([[1], [0]]),
        "not_binary": cols([[1, 2], [0, 1]]),
        "null_rows": cols([None, None]),
        "no_rows": cols([]),
        "int_widths": cols([[1, 0], [0, 0], [1, 1]], pa.list_(pa.int32())),
    }  # fmt: skip


DATA: dict[str, Callable[[], dict[str, pa.Table]]] = {
    "label_lists": _label_lists,
    "classes": _classes,
    "binary": _binary,
    "numbers": _numbers,
    "probabilities": _probabilities,
    "ranked": _ranked,
    "score_maps": _score_maps,
    "class_scores": _class_scores,
    "ratings": _ratings,
    "outcomes": _outcomes,
}

#: weights: a column ``w`` added to the table, cycled over its rows (None: no weight given)
WEIGHTS: dict[str, tuple[list[Any], pa.DataType] | None] = {
    "none": None,
    "one": ([1], pa.int64()),
    "mixed": ([1.0, 2.5, 1e150, 1e-150], pa.float64()),
    "null": ([None], pa.float64()),
    "zero": ([0.0], pa.float64()),
    "negative": ([1.0, -1.0], pa.float64()),
    "nan": ([1.0, math.nan], pa.float64()),
    "text": (["1", "2.5"], pa.string()),
    "boolean": ([True, False], pa.bool_()),
}
#: the weights that give a value (the others are errors, tried on the first table only)
VALUE_WEIGHTS = ("one", "mixed", "null", "zero")
#: the tables each weight is tried on (every table is tried without a weight)
WEIGHTED_TABLES = ("mixed", "all_wrong")
#: values of the parameters that have no default, by data kind (tried as given, on every table)
#: (``n_labels`` has no default value: hamming_loss needs the size of the label universe)
REQUIRED = {"positive": "x", "label": "x", "n_labels": 5}

#: the measures of the catalogue: every aggregate with a reference data kind; the others, why not
LEFT_OUT = {
    "cost_error": "takes a cost table or dict, no column kind to vary (tests/test_single_label_*)",
    "cost_map": "Polars has no cost_map (the registry says why)",
}


def catalogue_measures() -> list[Measure]:
    """Every aggregate measure of the registry the catalogue varies (see :data:`LEFT_OUT`)."""
    return [m for m in measures() if m.kind == "aggregate" and m.name not in LEFT_OUT]


def data_kind(m: Measure) -> str:
    return REFERENCES[m.name].data


def extreme_values(p: Param) -> list[Any]:
    """Boundary, huge and non-finite values of ``p``, from its declared constraint."""
    c = p.constraint
    nullable = isinstance(c, P.Nullable)
    inner = c.inner if nullable else c
    out: list[Any] = [None]
    if isinstance(inner, P.Number):
        low = 0.0 if inner.low is None else float(inner.low)
        out += [low, low + 5e-324, low + 1e-300, 1e300, -1e300, 2**63 - 1, math.nan, math.inf]
    elif isinstance(inner, P.Integer):
        low = inner.low
        out += [low - 1, low, low + 1, 2**31, 10**12, 2**53 + 1, 2**63 - 1, 2**63, 1e300, math.nan]
    elif isinstance(inner, P.AutoBoolean):
        out += ["auto", "AUTO", True, False]
    elif isinstance(inner, P.Options):
        out += list(inner.strings) + [s.upper() for s in inner.strings] + list(inner.numbers)
        if inner.nan:
            out += [math.nan, "NaN"]
    return out


@dataclass(frozen=True)
class Case:
    """One call: a measure on a table of its kind, with parameters and a weight."""

    measure: str
    table: str
    params: tuple[tuple[str, Any], ...] = ()
    weight: str = "none"

    @property
    def id(self) -> str:
        params = ",".join(f"{k}={v!r}" for k, v in self.params)
        return f"{self.measure}[{self.table}|{params}|w={self.weight}]"


def cases() -> list[Case]:
    """The whole catalogue, in a fixed order."""
    out: list[Case] = []
    for m in catalogue_measures():
        names = list(DATA[data_kind(m)]())
        base = tuple((p.name, REQUIRED[p.name]) for p in m.params if p.name in REQUIRED)
        out += [Case(m.name, t, base) for t in names]
        for p in m.params:
            if p.constraint is None:
                continue
            given = tuple((k, v) for k, v in base if k != p.name)
            out += [Case(m.name, "mixed", (*given, (p.name, v))) for v in extreme_values(p)]
        if m.weighted:
            for w in WEIGHTS:
                tried = WEIGHTED_TABLES if w in VALUE_WEIGHTS else WEIGHTED_TABLES[:1]
                if w != "none":
                    out += [Case(m.name, t, base, w) for t in tried if t in names]
    return out


def sample(all_cases: list[Case], every: int) -> list[Case]:
    """A deterministic subset: every ``every``-th case, from the start."""
    return all_cases[::every]


# ------------------------------------------------------------------ verdicts
@dataclass(frozen=True)
class Verdict:
    """A value, or an error: mlsql's message, or the engine's own (``foreign``)."""

    value: Any = None
    error: str | None = None
    foreign: bool = False

    def __str__(self) -> str:
        if self.error is None:
            return f"value {self.value!r}"
        return ("foreign error " if self.foreign else "error ") + repr(self.error[:300])


def same_value(a: Any, b: Any) -> bool:
    """Equal within :data:`REL` relative (NaN equals NaN; lists and dicts item by item)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or math.isclose(a, b, rel_tol=REL, abs_tol=0.0)
    return bool(a == b)


def same(a: Verdict, b: Verdict) -> bool:
    if a.error is not None or b.error is not None:
        return a.error == b.error and not a.foreign and not b.foreign
    return same_value(a.value, b.value)


_COLUMN_TYPE = re.compile(r"column's type \([^)]*\)")
_POLARS_CONTEXT = re.compile(r"\n\n(?:This error occurred|Resolved plan until failure)")
_SPARK_RAISED = re.compile(r"\[USER_RAISED_EXCEPTION\] (.*?)(?: SQLSTATE: P0001|\n|$)", re.S)


#: the inputs a type message names (``Got actual VARCHAR[] and predicted BIGINT[].``)
_INPUTS = frozenset(
    {"actual", "predicted", "sample_weight", "scores", "label", "score", "prob", "holds", "fires"}
    | {"rank_items", "correct_items", "ranked_relevance", "ideal_relevance", "ratings"}
    | {"correct"}
)


def normalise(message: str) -> str:
    """mlsql's message with the engine's own type names as ``<type>``: a type message names
    the input's type as its engine spells it (``VARCHAR``, ``String``, ``string``), by design.
    A value message (``Got 2 instead.``) is kept whole."""
    message = _POLARS_CONTEXT.split(message, 1)[0]
    message = _COLUMN_TYPE.sub("column's type (<type>)", message)
    head, got, tail = message.rpartition("Got ")
    if not got or "instead" in tail or not tail.endswith("."):
        return message
    pieces = []
    for piece in tail[:-1].split(" and "):
        name, _, _ = piece.partition(" ")
        pieces.append(f"{name} <type>" if name in _INPUTS else piece)
    return f"{head}Got {' and '.join(pieces)}."


def verdict_of(exc: BaseException) -> Verdict:
    """mlsql's message out of an engine's error (DuckDB's ``Invalid Input Error: `` prefix,
    Spark's ``[USER_RAISED_EXCEPTION] ... SQLSTATE: P0001`` wrapper), or a foreign error."""
    from mlsql._errors import MlsqlError

    if isinstance(exc, MlsqlError):  # Polars appends its plan to an error raised while it runs
        return Verdict(error=normalise(str(exc)))
    text = str(exc)
    name = type(exc).__name__
    if name == "InvalidInputException" and text.startswith("Invalid Input Error: "):
        return Verdict(error=normalise(text.removeprefix("Invalid Input Error: ")))
    found = _SPARK_RAISED.search(text)
    if found:
        return Verdict(error=normalise(found.group(1)))
    return Verdict(error=f"{name}: {text.splitlines()[0] if text else ''}", foreign=True)


# ------------------------------------------------------------------ engine paths
@dataclass
class Runner:
    """Runs batches of cases on one engine path: all the calls on one table in one query; when
    that query fails, each call in a query of its own (Spark: halves, until one call is left)."""

    path: str
    queries: int = 0
    _state: dict[str, Any] = field(default_factory=dict)

    # a call is (measure, input columns, params, weight column or None)
    def run(
        self, table: pa.Table, calls: list[tuple[str, tuple[str, ...], dict[str, Any], str | None]]
    ) -> list[Verdict]:
        out: list[Verdict | None] = [None] * len(calls)
        built: list[tuple[int, Any]] = []
        for i, call in enumerate(calls):
            try:
                built.append((i, self._build(table, call)))
            except Exception as exc:  # mlsql's checks at build time, or the engine's own
                out[i] = verdict_of(exc)
        self._split(table, built, out)
        return [v if v is not None else Verdict(error="not run", foreign=True) for v in out]

    def _split(
        self, table: pa.Table, built: list[tuple[int, Any]], out: list[Verdict | None]
    ) -> None:
        if not built:
            return
        try:
            self.queries += 1
            values = self._query(table, [b for _, b in built])
        except Exception as exc:  # the engine's error: each call alone finds whose it is
            if len(built) == 1:
                out[built[0][0]] = verdict_of(exc)
                return
            # Spark plans a query for about a second whatever its size: halves find the few
            # failing calls in fewer queries; a DuckDB macro costs its binding in every query
            # and Polars little, so there each call runs alone
            parts = [built[: len(built) // 2], built[len(built) // 2 :]]
            for part in parts if self.path == "spark" else [[one] for one in built]:
                self._split(table, part, out)
            return
        for (i, _), v in zip(built, values, strict=True):
            out[i] = Verdict(value=v)

    # ---------------------------------------------------------- per engine
    def _build(
        self, table: pa.Table, call: tuple[str, tuple[str, ...], dict[str, Any], str | None]
    ) -> Any:
        name, cols, params, weight = call
        if self.path.startswith("duckdb"):
            from mlsql._sqlexpr import lit, quote_ident

            args = [quote_ident(c) for c in cols]
            args += [f"{k} := {lit(v)}" for k, v in params.items()]
            if weight is not None:
                args.append(f"sample_weight := {quote_ident(weight)}")
            return f"{name}({', '.join(args)})"
        kw = dict(params)
        if self.path.startswith("polars"):
            import mlsql.polars as mp

            if weight is not None:
                kw["sample_weight"] = weight
            return getattr(mp, name)(*cols, **kw)
        import mlsql.spark as ms

        df = self._spark_frame(table)
        if weight is not None:
            kw["sample_weight"] = df[weight]
        return getattr(ms, name)(*(df[c] for c in cols), **kw)

    def _spark_frame(self, table: pa.Table) -> Any:
        if self._state.get("table") is not table:
            from tests.engines.spark_engine import frame

            self._state["table"], self._state["frame"] = table, frame(table)
        return self._state["frame"]

    def _query(self, table: pa.Table, built: list[Any]) -> list[Any]:
        if self.path.startswith("duckdb"):
            con = self._duckdb()
            items = ", ".join(f"{b} AS c{i}" for i, b in enumerate(built))
            con.register("t", table)
            try:
                return list(con.execute(f"SELECT {items} FROM t").fetchall()[0])
            finally:
                con.unregister("t")
        if self.path.startswith("polars"):
            import polars as pl

            exprs = [b.alias(f"c{i}") for i, b in enumerate(built)]
            df = pl.from_arrow(table)
            assert isinstance(df, pl.DataFrame)
            if self.path == "polars_eager":
                res = df.select(exprs)
            else:
                res = df.lazy().select(exprs).collect(engine="streaming")
            return [res[f"c{i}"].item() for i in range(len(built))]
        from tests.engines.spark_engine import _plain

        df = self._spark_frame(table)
        row = df.agg(*(b.alias(f"c{i}") for i, b in enumerate(built))).collect()[0]
        return [_plain(v) for v in row]

    def _duckdb(self) -> Any:
        if "con" not in self._state:
            import duckdb

            import mlsql

            if self.path == "duckdb_connect":
                con = mlsql.connect()
            else:
                con = duckdb.connect()
                mlsql.register(con)
            # n_bins=2**31 asks for more bins than memory holds: an error, not a machine in swap
            con.execute("SET memory_limit = '2GB'")
            self._state["con"] = con
        return self._state["con"]


def run_catalogue(
    chosen: list[Case],
    paths: tuple[str, ...] = PATHS,
    progress: Callable[[dict[str, dict[str, Verdict]]], None] | None = None,
) -> dict[str, dict[str, Verdict]]:
    """Every case on every path: ``{case id: {path: verdict}}``, one query per table and path
    (more where calls fail)."""
    by_table: dict[tuple[str, str, str], list[Case]] = {}
    measure_of = {m.name: m for m in catalogue_measures()}
    for c in chosen:
        by_table.setdefault((data_kind(measure_of[c.measure]), c.table, c.weight), []).append(c)
    tables = {kind: make() for kind, make in DATA.items()}
    out: dict[str, dict[str, Verdict]] = {c.id: {} for c in chosen}
    for path in paths:
        runner = Runner(path)
        for (kind, tname, weight), group in by_table.items():
            table = tables[kind][tname]
            w = WEIGHTS[weight]
            if w is not None:
                values, wtype = w
                n = table.num_rows
                table = table.append_column(
                    "w", pa.array([values[i % len(values)] for i in range(n)], wtype)
                )
            calls = [
                (
                    c.measure,
                    measure_of[c.measure].inputs,
                    dict(c.params),
                    None if w is None else "w",
                )
                for c in group
            ]
            alive = [i for i, c in enumerate(group) if path not in CRASHES.get(c.id, ())]
            verdicts = runner.run(table, [calls[i] for i in alive])
            for c in group:
                out[c.id][path] = ABORTED
            for i, v in zip(alive, verdicts, strict=True):
                out[group[i].id][path] = v
            if progress is not None:
                progress(out)
    return out


#: the verdict of a case that ends the process (see :data:`CRASHES`)
ABORTED = Verdict(error="the process aborted", foreign=True)

#: cases that abort the whole process on some paths (a Rust allocation failure cannot be
#: caught) or do not end (Spark's n_bins=2**31 ran 400 s): case id -> those paths. The catalogue gives them :data:`ABORTED` there without
#: running them; :func:`aborts` runs one in a child process.
CRASHES: dict[str, tuple[str, ...]] = {}


def aborts(case_id: str, path: str, timeout: float = 300) -> bool:
    """Whether running ``case_id`` on ``path`` kills a child Python process (or runs past
    ``timeout`` seconds)."""
    import subprocess
    import sys

    code = (
        "from tests import verdicts as V\n"
        f"c = next(c for c in V.cases() if c.id == {case_id!r})\n"
        f"V.CRASHES.clear(); V.run_catalogue([c], ({path!r},))\n"
    )
    root = Path(__file__).resolve().parents[1]  # `-c` imports from the working directory
    try:
        done = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            timeout=timeout,
            cwd=root,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return True
    return done.returncode != 0


def differences(results: dict[str, dict[str, Verdict]]) -> dict[str, str]:
    """The cases whose paths disagree: ``{case id: how}``."""
    out = {}
    for cid, by_path in results.items():
        first = next(iter(by_path.values()))
        if not all(same(first, v) for v in by_path.values()):
            out[cid] = "; ".join(f"{p}: {v}" for p, v in by_path.items())
    return out


def tally(results: dict[str, dict[str, Verdict]]) -> dict[str, int]:
    """Counts: same value, same error, differ (of which value in one path, error in another)."""
    counts = {
        "cases": len(results),
        "same value": 0,
        "same error": 0,
        "differ": 0,
        "value vs error": 0,
    }
    for by_path in results.values():
        vs = list(by_path.values())
        if all(same(vs[0], v) for v in vs):
            counts["same error" if vs[0].error is not None else "same value"] += 1
        else:
            counts["differ"] += 1
            if len({v.error is None for v in vs}) == 2:
                counts["value vs error"] += 1
    return counts


def iter_ids(chosen: list[Case]) -> Iterator[str]:
    return (c.id for c in chosen)
