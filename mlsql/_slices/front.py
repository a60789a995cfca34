"""What every engine's ``slices`` shares: argument checks, messages, slice names and bins.

An engine reads the frame's schema, asks :func:`request` to check the call,
computes the quantile edges of the numeric candidates (:func:`bin_positions`
says which values) and, in one scan, the statistic tuples of every
grouping set (:func:`grouping_sets`); :func:`finish` names the slices and
hands them to :mod:`mlsql._slices.stats`. Everything raised comes from here,
so the engines agree word for word.

Numpy is imported when a call runs, not with this module.
"""

from __future__ import annotations

import itertools
import math
import numbers
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mlsql._errors import MlsqlError
from mlsql._sqltext import WRITE_DUCKDB, quote_ident

if TYPE_CHECKING:
    from mlsql._resample.measures import Chosen

#: the result columns, in order
COLUMNS = (
    "slice",
    "rows",
    "estimate",
    "low",
    "high",
    "difference",
    "diff_low",
    "diff_high",
    "p_value",
    "p_adjusted",
    "significant",
)
#: the measures ``slices`` takes: every kind of statistics :func:`mlsql.bootstrap` resamples
#: (:data:`mlsql._resample.measures.STATS`): label lists ((tp, |A|, |P|), or the label sets of
#: the macro and weighted averages), one label per row, numbers, and a 0/1 label and a score
FAMILIES = ("label_sets", "label_lists", "classes", "regression", "scores")
MIN_ROWS = 30
#: the most statistic tuples (rows of the grouping-sets scan, over every grouping set and all
#: the data) a call holds in memory, about 0.5 KB each as Python objects: 1,000,000 is about
#: 500 MB. The label-set and class measures have a few distinct tuples per slice; the macro
#: and weighted averages one per distinct pair of label sets; numbers about one per row: their
#: exact resamples need each row's numbers (a slice's Poisson-weighted sum of errors is no
#: function of a few sums), so they are bounded by sampling the rows, not by summarizing them.
MAX_TUPLES = 1_000_000

CANDIDATES_MESSAGE = (
    "The 'candidates' parameter of slices must be a column name or a non-empty list of "
    "distinct column names other than actual, predicted and sample_weight. Got {got!r} instead."
)
DEPTH_MESSAGE = "The 'depth' parameter of slices must be 1 or 2. Got {got!r} instead."
N_BINS_MESSAGE = (
    "The 'n_bins' parameter of slices must be an integer from 2 to 100. Got {got!r} instead."
)
MIN_ROWS_MESSAGE = (
    "The 'min_rows' parameter of slices must be an integer >= 1. Got {got!r} instead."
)
MIN_WEIGHT_MESSAGE = (
    "The 'min_weight' parameter of slices must be None or a finite number >= 0. "
    "Got {got!r} instead."
)
ADJUST_MESSAGE = (
    "The 'adjust' parameter of slices must be 'bh' (Benjamini-Hochberg) or 'holm'. "
    "Got {got!r} instead."
)
MEASURE_MESSAGE = (
    "slices takes one aggregate measure that bootstrap resamples: of label lists ({sets}), "
    "of one label per row ({classes}), of numbers ({numbers}) or of a 0/1 label and a score "
    "({scores}). Got {got}."
)
TUPLES_MESSAGE = (
    "slices holds the statistic tuples of every slice in memory, at most {most:,}; {measure} "
    "has more here (its tuples are {what}, in each grouping set and in all the data). "
    "Slice a sample of the rows (the intervals are then the sample's), or fewer candidates "
    "or depth 1."
)
#: what a measure's statistic tuples are, by kind (for :data:`TUPLES_MESSAGE`)
TUPLES_WHAT = {
    "label_sets": "the distinct (tp, |A|, |P|, weight)",
    "label_lists": "the distinct pairs of label sets and weight",
    "classes": "the distinct (actual, predicted, weight)",
    "regression": "about one per row: its exact resamples need each row's numbers",
    "scores": "about one per row: its exact resamples need each row's numbers",
}


@dataclass(frozen=True)
class Request:
    """A checked call of ``slices``."""

    candidates: list[str]
    depth: int
    n_bins: int
    min_rows: int
    chosen: Chosen
    n_resamples: int
    confidence: float
    seed: int
    adjust: str
    #: slices whose summed ``sample_weight`` is below it are left out (None: no such bound)
    min_weight: float | None = None

    @property
    def lower_is_better(self) -> bool:
        """Whether the measure is better lower (a loss): then the worst is the highest."""
        from mlsql._registry import REGISTRY

        return REGISTRY[self.chosen.name].lower_is_better

    @property
    def resampling(self) -> Any:
        """The call as ``bootstrap`` checks its inputs (:class:`mlsql._resample.front.Request`):
        every engine reads and checks the statistics of the measure with it."""
        from mlsql._resample import front as resample_front

        return resample_front.Request(
            "slices", [], [self.chosen], self.n_resamples, self.confidence, self.seed
        )

    @property
    def sets(self) -> list[tuple[int, ...]]:
        """The grouping sets: positions of candidates (one each, then pairs at depth 2)."""
        return grouping_sets(len(self.candidates), self.depth)


def _whole(value: Any, low: int, high: int | None = None) -> bool:
    return (
        isinstance(value, numbers.Integral)
        and not isinstance(value, bool)
        and low <= int(value)
        and (high is None or int(value) <= high)
    )


def request(
    columns: Collection[str],
    actual: str,
    predicted: str,
    candidates: Any,
    measure: Any,
    *,
    depth: Any,
    n_bins: Any,
    min_rows: Any,
    sample_weight: str | None,
    n_resamples: Any,
    confidence: Any,
    seed: Any,
    adjust: Any,
    min_weight: Any = None,
) -> Request:
    """Check every argument of ``slices`` against the frame's ``columns``."""
    from mlsql._resample import numbers as NUM
    from mlsql._resample import run
    from mlsql._resample.measures import CLASS_MEASURES, LABEL_SET_MEASURES, LB_MEASURES, resolve

    given = [candidates] if isinstance(candidates, str) else candidates
    roles = {actual, predicted, sample_weight}
    if (
        not isinstance(given, Sequence)
        or not given
        or not all(isinstance(c, str) for c in given)
        or len(set(given)) != len(given)
        or roles & set(given)
    ):
        raise MlsqlError(CANDIDATES_MESSAGE.format(got=candidates))
    if not _whole(depth, 1, 2):
        raise MlsqlError(DEPTH_MESSAGE.format(got=depth))
    if not _whole(n_bins, 2, 100):
        raise MlsqlError(N_BINS_MESSAGE.format(got=n_bins))
    if not _whole(min_rows, 1):
        raise MlsqlError(MIN_ROWS_MESSAGE.format(got=min_rows))
    if min_weight is not None and not (
        isinstance(min_weight, numbers.Real)
        and not isinstance(min_weight, bool)
        and math.isfinite(min_weight)
        and float(min_weight) >= 0
    ):
        raise MlsqlError(MIN_WEIGHT_MESSAGE.format(got=min_weight))
    if adjust not in ("bh", "holm"):
        raise MlsqlError(ADJUST_MESSAGE.format(got=adjust))
    chosen = resolve([measure], "slices")
    if chosen[0].stats not in FAMILIES:
        raise MlsqlError(
            MEASURE_MESSAGE.format(
                sets=", ".join((*LABEL_SET_MEASURES, *LB_MEASURES)),
                classes=", ".join(CLASS_MEASURES),
                numbers=", ".join(NUM.REGRESSION_MEASURES),
                scores=", ".join(NUM.SCORE_MEASURES),
                got=chosen[0].label,
            )
        )
    run.check_settings(n_resamples, confidence, seed, "slices")
    named = [("actual", actual), ("predicted", predicted), *(("candidates", c) for c in given)]
    if sample_weight is not None:
        named.append(("sample_weight", sample_weight))
    from mlsql._front.tables import check_columns  # the registry: with a call, not on connect

    check_columns("slices", columns, named)
    return Request(
        list(given),
        int(depth),
        int(n_bins),
        int(min_rows),
        chosen[0],
        int(n_resamples),
        float(confidence),
        int(seed),
        adjust,
        None if min_weight is None else float(min_weight),
    )


def check_tuples(req: Request, n: int) -> None:
    """Raise :data:`TUPLES_MESSAGE` where the scan gave more than :data:`MAX_TUPLES` rows
    (an engine fetches at most one more, to know)."""
    if n > MAX_TUPLES:
        raise MlsqlError(
            TUPLES_MESSAGE.format(
                most=MAX_TUPLES, measure=req.chosen.label, what=TUPLES_WHAT[req.chosen.stats]
            )
        )


def hashable(value: Any) -> Any:
    """A statistic as a key: a label list (the macro and weighted averages') as a tuple.

    Examples
    --------
    >>> hashable(["a", "b"]), hashable(2.0), hashable(None)
    (('a', 'b'), 2.0, None)
    """
    return tuple(value) if isinstance(value, list) else value


def grouping_sets(n: int, depth: int) -> list[tuple[int, ...]]:
    """The candidates' positions of each grouping set: each alone, then (depth 2) each pair.

    Examples
    --------
    >>> grouping_sets(3, 2)
    [(0,), (1,), (2,), (0, 1), (0, 2), (1, 2)]
    """
    out: list[tuple[int, ...]] = [(i,) for i in range(n)]
    if depth == 2:
        out += list(itertools.combinations(range(n), 2))
    return out


# ---------------------------------------------------------------- bins
def bin_positions(n: int, n_bins: int) -> list[int]:
    """The positions, among the n sorted non-NULL values, of the bins' lower edges.

    Edge k is SQL's ``percentile_disc(k / n_bins)``: the first value whose share
    of the values at or below it reaches k / n_bins, at position
    max(ceil(k n / n_bins) - 1, 0), computed in integers (a float quantile is
    off by one where k n / n_bins is a whole number rounded up), so every
    engine finds the same edges.

    Examples
    --------
    >>> bin_positions(10, 4), bin_positions(6, 6)
    ([0, 2, 4, 7], [0, 0, 1, 2, 3, 4])
    """
    return [max((k * n + n_bins - 1) // n_bins - 1, 0) for k in range(n_bins)]


def edges(lower: Iterable[Any], top: Any) -> list[Any]:
    """The bin edges: the distinct lower edges, sorted, then the largest value (None: no value).

    Bin i is [edge i, edge i + 1), the last one [last lower edge, largest value],
    which may hold one value only.

    Examples
    --------
    >>> edges([1, 1, 4, 9], 20), edges([1, 1, 2, 2], 2)
    ([1, 4, 9, 20], [1, 2, 2])
    >>> edges([float("nan"), -0.0, 0.0, float("nan")], float("nan"))
    [0.0, nan, nan]
    """
    values = sorted({_edge(v) for v in lower if v is not None}, key=_nan_last)
    if top is None or not values:
        return []
    return [*values, _edge(top)]


def _is_nan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _edge(v: Any) -> Any:
    """An edge as every engine writes it: -0.0 as 0.0 (they are one number, which Spark's
    ``percentile_disc`` may return either way), every NaN as one NaN."""
    return math.nan if _is_nan(v) else v + 0.0 if isinstance(v, float) else v


def _nan_last(v: Any) -> tuple[bool, Any]:
    """The edges' order: NaN above every number, as DuckDB, Polars and Spark sort it."""
    return (True, 0.0) if _is_nan(v) else (False, v)


def bin_of(value: Any, cuts: Sequence[Any]) -> int | None:
    """The bin of ``value`` among the edges ``cuts``: i where cuts[i] <= value < cuts[i + 1]
    (the last bin is closed); None for NULL. Engines compute it as a CASE / when chain.

    Examples
    --------
    >>> [bin_of(v, [1, 4, 9, 20]) for v in (1, 3, 4, 19, 20, None)], bin_of(2, [1, 2, 2])
    ([0, 0, 1, 2, 2, None], 1)
    """
    if value is None:
        return None
    i = 0
    while i + 2 < len(cuts) and value >= cuts[i + 1]:
        i += 1
    return i


# ---------------------------------------------------------------- slice text
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def column_text(name: str) -> str:
    r"""A column as the ``slice`` text shows it: plain names bare, others quoted.

    Examples
    --------
    >>> column_text("country"), column_text("my col")
    ('country', '"my col"')
    """
    return name if _PLAIN.fullmatch(name) else quote_ident(name)


def value_text(value: Any) -> str:
    r"""A value as a SQL literal: text quoted, numbers (decimals too) as Python writes them.

    Examples
    --------
    >>> from decimal import Decimal
    >>> value_text("it's"), value_text(2.5), value_text(Decimal("1.50")), value_text(True)
    ("'it''s'", '2.5', '1.50', 'true')
    """
    if isinstance(value, (str, bool)):
        return WRITE_DUCKDB(value)
    if isinstance(value, numbers.Number):
        return str(value)
    return WRITE_DUCKDB(str(value))


def condition(name: str, value: Any, cuts: Sequence[Any] | None) -> str:
    r"""One column's part of a slice's text: ``country = 'de'``, ``length in [10, 40)``.

    ``cuts``: the bin edges of a numeric candidate (``value`` is then its bin).

    Examples
    --------
    >>> condition("country", "de", None), condition("n", 1, [1, 4, 9, 20])
    ("country = 'de'", 'n in [4, 9)')
    >>> condition("n", 2, [1, 4, 9, 20]), condition("country", None, None)
    ('n in [9, 20]', 'country is null')
    """
    column = column_text(name)
    if value is None:
        return f"{column} is null"
    if cuts is None:
        return f"{column} = {value_text(value)}"
    last = value == len(cuts) - 2
    close = "]" if last else ")"
    return f"{column} in [{value_text(cuts[value])}, {value_text(cuts[value + 1])}{close}"


def slice_text(
    req: Request, positions: Sequence[int], values: Sequence[Any], cuts: dict[int, list[Any]]
) -> str:
    """A slice's text: its columns' conditions joined by ``and``."""
    return " and ".join(
        condition(req.candidates[i], v, cuts.get(i)) for i, v in zip(positions, values, strict=True)
    )


# ---------------------------------------------------------------- the table
def finish(
    req: Request,
    rows: Iterable[Sequence[Any]],
    cuts: dict[int, list[Any]],
) -> list[tuple[Any, ...]]:
    """The rows of ``slices`` from an engine's statistics table.

    ``rows``: (set, candidate values..., statistics..., weight, m), one per
    grouping set and distinct tuple; ``set`` is -1 for all the data, else
    the position in :attr:`Request.sets`; the candidate values are those of
    the set's columns (numeric candidates: their bin), None elsewhere.
    """
    from mlsql._slices import stats

    n = len(req.candidates)
    whole: dict[tuple[Any, ...], int] = {}
    found: dict[tuple[int, tuple[Any, ...]], dict[tuple[Any, ...], int]] = {}
    for row in rows:
        index, keys, m = int(row[0]), row[1 : n + 1], int(row[-1])
        tuple_ = tuple(hashable(v) for v in row[n + 1 : -1])
        if index < 0:
            whole[tuple_] = whole.get(tuple_, 0) + m
            continue
        key = tuple(keys[i] for i in req.sets[index])
        tuples = found.setdefault((index, key), {})
        tuples[tuple_] = tuples.get(tuple_, 0) + m
    parts = []
    for (index, key), tuples in found.items():
        n_rows = sum(tuples.values())
        if n_rows >= req.min_rows and (
            req.min_weight is None or weight_of(tuples) >= req.min_weight
        ):
            text = slice_text(req, req.sets[index], key, cuts)
            parts.append(stats.Slice(text, n_rows, tuples, index))
    parts.sort(key=lambda p: p.text)
    return stats.table(
        req.chosen,
        parts,
        whole,
        n_resamples=req.n_resamples,
        confidence=req.confidence,
        seed=req.seed,
        adjust=req.adjust,
        lower_is_better=req.lower_is_better,
    )


def weight_of(tuples: Mapping[tuple[Any, ...], int]) -> float:
    """A slice's summed ``sample_weight`` (1 a row when unweighted; a NULL weight adds 0), from
    its statistic tuples (statistics..., weight) and their rows m, as ``min_weight`` compares it.

    Examples
    --------
    >>> weight_of({(1, 2, 2, 0.5): 4, (0, 1, 1, 2.0): 3, (None, None, None, None): 1})
    8.0
    """
    return math.fsum(t[-1] * m for t, m in tuples.items() if t[-1] is not None)


def arrow_types() -> dict[str, Any]:
    """The Arrow type of each result column (``slice`` text, ``rows`` integer, ``significant``
    boolean, the others floats)."""
    import pyarrow as pa

    special = {"slice": pa.string(), "rows": pa.int64(), "significant": pa.bool_()}
    return {c: special.get(c, pa.float64()) for c in COLUMNS}
