"""What every engine's ``bootstrap`` and ``compare`` share: argument checks, messages, columns.

An engine reads the frame's schema, computes the statistics table (one GROUP
BY) and hands its rows to :mod:`mlsql._resample.run`; everything it checks
and every message it raises comes from here, so the engines agree word for word.
The DataFrame engines' docstrings are written here too (:func:`documented`),
in each engine's type names and with its own example.

The resampling itself (numpy) is imported when a call runs, not with this
module, so importing an engine (``import mlsql.polars``) loads no numpy.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from mlsql import _classification_params as CP
from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._front.tables import check_columns

if TYPE_CHECKING:
    from mlsql._resample.measures import Chosen

F = TypeVar("F", bound=Callable[..., Any])

#: the result columns after the ``by`` columns
BOOTSTRAP_COLUMNS = ("measure", "estimate", "low", "high", "std_error")
COMPARE_COLUMNS = (
    "model",
    "measure",
    "baseline_estimate",
    "estimate",
    "difference",
    "low",
    "high",
    "p_value",
    "mcnemar_p_value",
)
LIST_MESSAGE = (
    "{func} resamples {measure} from label lists: {name} must be a list of labels per row. "
    "Got {name} {type}."
)
SCALAR_MESSAGE = (
    "{func} resamples {measure} from one label per row: {name} must be a label, not a list. "
    "Got {name} {type}."
)
BASELINE_MESSAGE = (
    "compare: the baseline {baseline!r} is not a value of the model column {model!r}. "
    "Its values: {values}."
)
UNPAIRED_MESSAGE = (
    "compare pairs the rows of each model with the baseline's on {id!r}, and {n} rows have no "
    "partner ({details}). Pass drop_unpaired=True to leave them out."
)
BY_OUTPUT_MESSAGE = P.BY_OUTPUT_MESSAGE
DUPLICATE_MESSAGE = (
    "compare pairs rows on {id!r}, which must be unique within each model (and group). "
    "Got {n} repeated rows."
)


@dataclass(frozen=True)
class Request:
    """A checked call: group columns, measures and resampling settings."""

    func: str
    by: list[str]
    chosen: list[Chosen]
    n_resamples: int
    confidence: float
    seed: int
    #: how compare's p_value is computed (:data:`mlsql._resample.paired.TESTS`)
    test: str = "bootstrap"

    @property
    def stats(self) -> str:
        """The kind of statistics table the measures need (:data:`~mlsql._resample.measures.STATS`)."""
        from mlsql._resample.measures import stats_kind

        return stats_kind(self.chosen)


def request(
    func: str,
    columns: Collection[str],
    named: Mapping[str, Any],
    by: Any,
    measures: Any,
    n_resamples: Any,
    confidence: Any,
    seed: Any,
    test: Any = "bootstrap",
) -> Request:
    """Check every argument against the frame's ``columns``; ``named`` maps role -> column.

    ``test``: compare's p-value (:mod:`mlsql._resample.paired`); bootstrap takes none.
    """
    from mlsql._resample import paired, run
    from mlsql._resample.measures import resolve

    groups = P.check_by(by, func)
    chosen = resolve(measures, func)
    run.check_settings(n_resamples, confidence, seed, func)
    check_columns(func, columns, [*named.items(), *(("by", b) for b in groups)])
    outputs = BOOTSTRAP_COLUMNS if func == "bootstrap" else COMPARE_COLUMNS
    for name in groups:
        if name in outputs:
            raise MlsqlError(BY_OUTPUT_MESSAGE.format(func=func, name=name))
    if func == "compare":
        test = paired.check_test(test, chosen)
    return Request(func, groups, chosen, int(n_resamples), float(confidence), int(seed), test)


def with_weight(named: Mapping[str, Any], sample_weight: Any) -> dict[str, Any]:
    """``named`` (role -> column) and, unless None, the ``sample_weight`` column to find.

    Engines that also take an expression for the weight pass None for one.
    """
    if sample_weight is None:
        return dict(named)
    return {**named, "sample_weight": sample_weight}


def check_labels(
    req: Request,
    names: Sequence[str],
    lists: Sequence[bool],
    kinds: Sequence[str],
    shown: Sequence[str],
) -> None:
    """The inputs hold what the measures need: label lists, or one label per row, of one kind.

    ``lists`` says whether each input is a list (an all-NULL input counts as
    either), ``kinds`` are the label kinds of the elements or values
    (:mod:`mlsql._label_types`), ``shown`` the engine's type names.
    """
    want_lists = req.stats != "classes"
    for name, is_list, kind, type_name in zip(names, lists, kinds, shown, strict=True):
        if kind != LT.NULL and is_list != want_lists:
            template = LIST_MESSAGE if want_lists else SCALAR_MESSAGE
            raise MlsqlError(
                template.format(
                    func=req.func, measure=req.chosen[0].label, name=name, type=type_name
                )
            )
    LT.check_labels(req.func, names, kinds, shown)
    typed = [(k, t) for k, t in zip(kinds, shown, strict=True) if k != LT.NULL]
    for c in req.chosen:  # a universe of the columns' kind, as evaluate takes it
        if c.universe is not None and typed:
            LT.check_universe_kind(c.universe, typed[0][0], typed[0][1], c.name)


#: the engines' kinds of a type (``kind`` of :mod:`mlsql.polars._dtypes`, :mod:`mlsql.spark._types`)
#: that hold numbers; a label of the score measures may also be boolean
NUMBER_KINDS = (LT.INTEGER, "float", "decimal")


def is_numbers(req: Request) -> bool:
    """Whether the measures take numbers (regression) or a 0/1 label and a score."""
    from mlsql._resample import numbers as NUM

    return req.stats in NUM.KINDS


def check_numbers(
    req: Request,
    names: Sequence[str],
    lists: Sequence[bool],
    kinds: Sequence[str],
    shown: Sequence[str],
) -> None:
    """The inputs' types fit the measures: numbers, and for scores a boolean or 0/1 label.

    ``lists`` says whether each input is a list (never right here), ``kinds``
    are the engines' kinds of the types (integer, float, decimal, boolean,
    null, or anything else), ``shown`` their type names. The messages are the
    measures' own, naming the call.
    """
    if req.stats == "class_scores":  # the engines' own checks of a label and its scores
        return
    label_name = names[0] if req.stats == "scores" else None
    for name, is_list, kind, type_name in zip(names, lists, kinds, shown, strict=True):
        if kind == LT.NULL and not is_list:
            continue
        if name == label_name:
            if is_list or kind not in (*NUMBER_KINDS, "boolean"):
                raise MlsqlError(CP.binary_type_message(req.func, name, type_name, is_list=is_list))
        elif is_list or kind not in NUMBER_KINDS:
            raise MlsqlError(CP.number_type_message(req.func, name, type_name))


def check_pairs(
    model: str,
    id_column: str,
    baseline: Any,
    totals: Mapping[Any, int],
    paired: Mapping[Any, int],
    repeated: int,
    drop_unpaired: bool,
) -> None:
    """The baseline exists, ids are unique per model, and (unless dropped) every row has a partner.

    ``totals``: rows per model value; ``paired``: per other model, rows paired
    with a baseline row; ``repeated``: rows whose (group, model, id) repeats.
    """
    from mlsql._resample import run

    if baseline not in totals:
        values = ", ".join(repr(v) for v in sorted(totals, key=run._order))
        raise MlsqlError(BASELINE_MESSAGE.format(baseline=baseline, model=model, values=values))
    if repeated:
        raise MlsqlError(DUPLICATE_MESSAGE.format(id=id_column, n=repeated))
    if drop_unpaired:
        return
    details, n = [], 0
    for value in sorted((v for v in totals if v != baseline), key=run._order):
        own = totals[value] - paired.get(value, 0)
        base = totals[baseline] - paired.get(value, 0)
        if own:
            details.append(f"{own} of model {value!r} without a baseline row")
        if base:
            details.append(f"{base} of the baseline without a row of model {value!r}")
        n += own + base
    if n:
        raise MlsqlError(UNPAIRED_MESSAGE.format(id=id_column, n=n, details="; ".join(details)))


def _model_counts(model: Any, m: Any) -> list[tuple[Any, int]]:
    """(model, its ids) of Arrow columns of each tuple's model and number of ids m, the models
    in order of first appearance.

    The models are coded by ``dictionary_encode`` (first appearance, NULL a value of its own)
    and summed by numpy: Arrow's ``group_by`` would import its query engine (and pandas),
    about 0.6 CPU s, for a handful of groups.

    Examples
    --------
    >>> import pyarrow as pa
    >>> _model_counts(pa.array(["B", None, "A", "B"]), pa.array([2, 1, 5, 3]))
    [('B', 5), (None, 1), ('A', 5)]
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    array = model.combine_chunks() if isinstance(model, pa.ChunkedArray) else model
    try:
        if pa.types.is_dictionary(array.type):
            array = array.cast(array.type.value_type)
        encoded = pc.dictionary_encode(array, null_encoding="encode")
    except pa.ArrowNotImplementedError:  # a model type Arrow does not code: row by row
        counts: dict[Any, int] = {}
        for value, n in zip(model.to_pylist(), m.to_pylist(), strict=True):
            counts[value] = counts.get(value, 0) + n
        return list(counts.items())
    codes = np.asarray(encoded.indices, dtype=np.int64)
    ids = np.asarray(pc.fill_null(m, 0), dtype=np.int64)
    sums = np.zeros(len(encoded.dictionary), dtype=np.int64)
    np.add.at(sums, codes, ids)
    return list(zip(encoded.dictionary.to_pylist(), sums.tolist(), strict=True))


def compared(
    req: Request,
    model: str,
    id_column: str,
    baseline: Any,
    totals: Mapping[Any, int],
    paired_rows: Any,
    repeated: int,
    drop_unpaired: bool,
) -> list[tuple[Any, ...]]:
    """The rows of ``compare`` from an engine's paired statistics, once the pairs are checked.

    ``paired_rows``: (groups, model, the baseline row's statistics, the model row's, count)
    per distinct tuple (rows, or an Arrow table); ``totals`` and ``repeated`` as :func:`check_pairs` takes them.
    """
    from mlsql._resample import run

    n_by = len(req.by)
    paired: dict[Any, int] = {}
    pairs: Iterable[tuple[Any, Any]]
    if hasattr(paired_rows, "column"):  # an Arrow table (label lists): m summed per model
        last = paired_rows.num_columns - 1
        pairs = _model_counts(paired_rows.column(n_by), paired_rows.column(last))
    else:
        pairs = ((row[n_by], row[-1]) for row in paired_rows)
    for value, m in pairs:
        paired[value] = paired.get(value, 0) + m
    check_pairs(model, id_column, baseline, totals, paired, repeated, drop_unpaired)
    out = run.compare(paired_rows, n_by, req.chosen, req.n_resamples, req.confidence, req.seed)
    return apply_test(req, paired_rows, out)


def apply_test(req: Request, paired_rows: Any, out: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``compare``'s rows ``out`` with the p-value of ``req.test`` where it is not the
    bootstrap's, from the paired statistics rows :func:`compared` takes."""
    from mlsql._resample import paired, run

    if req.test == "bootstrap":
        return out
    n_by = len(req.by)
    groups = run.groups(paired_rows, n_by + 1, req.chosen, 2, "compare")
    found = paired.p_values(groups, req.chosen, req.test, req.n_resamples, req.seed)
    return paired.replace_p_values(out, n_by, found)


# ---------------------------------------------------------------- docstrings
#: the summary of each DataFrame engine's function
SUMMARIES = {
    "bootstrap": (
        "Bootstrap intervals of measures, one row per group and measure.\n\n"
        "The result and the method are those of DuckDB's ``mlsql.bootstrap``; the same\n"
        "seed gives the same result in DuckDB and Polars, and in Spark where it resamples\n"
        "on the driver (docs/guides/uncertainty.md)."
    ),
    "compare": (
        "Paired comparison of every model with the baseline: difference, interval, p-values.\n\n"
        "The result and the method are those of DuckDB's ``mlsql.compare``."
    ),
}
#: the ``Parameters`` entries both functions take, after the frame (``{weight_type}``:
#: the engine's type of a weight)
PARAMETERS = """\
actual, predicted : str
    The columns of true and predicted labels (label lists, or one label per row).
measures : sequence
    Measure names or ``(name, {{parameter: value}})`` pairs; which measures
    resample is listed at ``mlsql.bootstrap``.
{draws}"""
#: the ``Parameters`` entries of the resampling itself, every engine's ``bootstrap`` and
#: ``compare`` (DuckDB's too; ``{weight_type}``: the engine's type of a weight)
DRAWS = """\
by : str or sequence of str, optional
    Grouping columns; each group is resampled independently.
n_resamples : int, default 1000
    Bootstrap resamples (at least 2).
confidence : float, default 0.95
    Confidence of the interval, strictly between 0 and 1.
seed : int, default 0
    Seed of the random streams: the same seed gives the same result, another
    seed another resample (Spark's executors draw their own streams:
    docs/guides/uncertainty.md).
sample_weight : {weight_type}, optional
    Row weights (finite numbers >= 0; a NULL weight skips the row), as the
    weighted measures take them: the estimate is the weighted measure, and
    each row weighs its weight times its Poisson(1) draw."""


def draws(weight_type: str) -> str:
    """:data:`DRAWS` for an engine whose weight is a ``weight_type``.

    Examples
    --------
    >>> print(draws("str").splitlines()[0])
    by : str or sequence of str, optional
    """
    return DRAWS.format(weight_type=weight_type)


#: the ``Parameters`` entries of ``compare`` alone
COMPARE_PARAMETERS = """\
model, id : str, default 'model', 'id'
    The column naming each row's model, and the one pairing rows across models.
baseline : object, default 'A'
    The model every other model is compared with.
drop_unpaired : bool, default False
    Leave out ids present for one model only (else an error says how many).
test : {'bootstrap', 'student', 'fisher'}, default 'bootstrap'
    How ``p_value`` is computed: the paired bootstrap, or ranx's paired
    Student's t test or Fisher's randomization test (``n_resamples``
    permutations) over the per-id values of a per-row measure (the
    samples averages, subset accuracy, accuracy, ..., mse, mae, mape); as
    at DuckDB's ``mlsql.compare``."""


def docstring(func: str, words: Mapping[str, str], example: str) -> str:
    """The numpydoc docstring of an engine's ``func`` (``bootstrap`` or ``compare``).

    ``words`` are the engine's: ``frame`` names the first parameter, of type
    ``frame_type``; ``weight_type`` is the type of ``sample_weight``,
    ``result_type`` that of the result. ``example`` is the engine's own doctest text.
    """
    columns = BOOTSTRAP_COLUMNS if func == "bootstrap" else COMPARE_COLUMNS
    parameters = [f"{words['frame']} : {words['frame_type']}", "    The predictions."]
    parameters += PARAMETERS.format(draws=draws(words["weight_type"])).splitlines()
    if func == "compare":
        parameters += COMPARE_PARAMETERS.splitlines()
    returned = textwrap.wrap(f"The ``by`` columns, {', '.join(columns)}.", 68)
    lines = [
        *SUMMARIES[func].splitlines(),
        "",
        "Parameters",
        "----------",
        *parameters,
        "",
        "Returns",
        "-------",
        words["result_type"],
        *(f"    {line}" for line in returned),
        "",
        "Examples",
        "--------",
        *inspect.cleandoc(example).splitlines(),
    ]
    return "\n".join(lines)


def documented(words: Mapping[str, str], example: str) -> Callable[[F], F]:
    """Give the decorated ``bootstrap`` or ``compare`` its docstring (:func:`docstring`)."""

    def document(fn: F) -> F:
        fn.__doc__ = docstring(fn.__name__, words, example)
        return fn

    return document
