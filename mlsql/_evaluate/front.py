"""What every engine's ``evaluate`` shares: the measures it takes, the checks and messages.

An engine reads its frame's column names, calls :func:`request`, and computes
each :class:`Item` with its own aggregate of that name; every message comes
from here, so the engines (and the SQL table macro, which builds the same
messages in SQL) agree word for word.
"""

from __future__ import annotations

import inspect
import textwrap
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._front.build import checked_params
from mlsql._front.tables import check_by_names, check_columns
from mlsql._registry import REGISTRY, Measure, measures
from mlsql.measures import label_based as LB

if TYPE_CHECKING:
    from mlsql._front.engine import Engine

FUNC = "evaluate"
#: the result columns after the ``by`` columns
COLUMNS = ("measure", "estimate")
#: the inputs that hold the prediction when a measure takes it first (Hivemall's order)
PREDICTION_FIRST = frozenset({"predicted", "score", "rank_items", "ranked_relevance"})
#: aggregates that give no number per group, and why
NOT_NUMBERS = {
    "majority_class": "it gives a class, not a number",
    "minority_class": "it gives a class, not a number",
    "cost_map": "it builds a cost table from three columns, not a measure of predictions",
    "bpref": "it takes a third column, the judged non-relevant items: call it on its own",
}
#: the per-label averages of label lists (table functions that give one number per group):
#: ``evaluate`` takes them as ``bootstrap`` does, computed from per (group, label) counts
LABEL_MEASURES = (
    *(f"{avg}_{r}" for avg in ("macro", "weighted") for r in LB.RATIOS),
    "macro_f1_of_means",
    "macro_fbeta_of_means",
    "label_accuracy_micro",
    "label_accuracy_macro",
    "clp",
    "mlp",
    "wlp",
)
#: the parameters ``evaluate`` takes itself, never inside a measure's
OWN_PARAMS = ("sample_weight", "by")

#: the families of measures of two label lists (the label averages: macro_f1, ...), whose
#: types every engine checks before the query, whatever else it computes (beside a
#: single-label measure's lists, a wrong type made a raw GROUP BY error in DuckDB and an
#: analyzer error in Spark). Hivemall's fmeasure takes lists too, and 1/0/-1 or booleans:
#: its own check says which, in DuckDB's macro; Spark checks it as lists where both are.
LABEL_LISTS = ("multilabel", "label_based")

UNKNOWN_MESSAGE = (
    "{func}: there is no measure {name!r}.{hint} It takes the aggregate measures: {allowed}."
)
HINT = " Did you mean {close!r}?"
REFUSED_MESSAGE = (
    "{func} takes aggregate measures, one number per group: {name} is not one ({why}). "
    "It takes: {allowed}."
)
KIND_REASONS = {
    "table": "a table function: call it on its own",
    "counts": "a struct of counts, not a number",
    "from_counts": "it reads stored counts, not predictions",
    "row": "a value per row",
    "set": "a list per row",
}
OWN_PARAM_MESSAGE = "{func} takes {param} itself: drop {param} from {name}'s parameters."
UNWEIGHTED_MESSAGE = "{func}: {name} takes no sample_weight ({why})."
#: the largest edit distance of a suggestion
CLOSE = 3


@dataclass(frozen=True)
class Item:
    """One measure asked for: its output label, registry name, parameters, input roles."""

    label: str
    name: str
    params: dict[str, Any] = field(hash=False)
    #: ``actual``/``predicted`` in the order the measure takes its inputs
    roles: tuple[str, ...]

    @property
    def measure(self) -> Measure:
        """The registry's measure."""
        return REGISTRY[self.name]


@dataclass(frozen=True)
class Request:
    """A checked ``evaluate`` call: the group columns and the measures, in order."""

    by: list[str]
    items: list[Item]
    sample_weight: str | None


#: the internal column names of the frame engines' plans (Polars, Spark): the roles, the checked
#: weight, the measures' order, and group k's column (:func:`group_column`)
ROLES = {"actual": "__mlsql_a", "predicted": "__mlsql_p"}
WEIGHT, ORDER = "__mlsql_w", "__mlsql_i"


def group_column(k: int) -> str:
    """The internal name of the ``k``-th ``by`` column.

    Examples
    --------
    >>> group_column(0)
    '__mlsql_g0'
    """
    return f"__mlsql_g{k}"


def allowed() -> list[str]:
    """The registry names ``evaluate`` takes, in the registry's order (aliases not listed).

    Examples
    --------
    >>> names = allowed()
    >>> "micro_f1" in names, "macro_f1" in names, "majority_class" in names
    (True, True, False)
    """
    return [
        m.name
        for m in measures()
        if (m.kind == "aggregate" and m.name not in NOT_NUMBERS) or m.name in LABEL_MEASURES
    ]


def _names() -> dict[str, str]:
    """Every name and alias of a registry measure -> its registry name."""
    measures()
    out = {m.name: m.name for m in REGISTRY.values()}
    out.update({a: m.name for m in REGISTRY.values() for a in m.aliases})
    return out


def distance(a: str, b: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions), as DuckDB's ``levenshtein``.

    Examples
    --------
    >>> distance("micro_f2", "micro_f1"), distance("acuracy", "accuracy")
    (1, 1)
    """
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def closest(name: str, names: Sequence[str]) -> str | None:
    """The name of ``names`` nearest ``name`` (fewest edits, then alphabetical), if within
    :data:`CLOSE` edits.

    Examples
    --------
    >>> closest("micro_f2", allowed()), closest("zzzzzzzzzz", allowed())
    ('micro_f1', None)
    """
    best = min(sorted(names), key=lambda n: distance(name, n))
    return best if distance(name, best) <= CLOSE else None


def unknown_message(name: str, func: str = FUNC) -> str:
    """The error of a measure name that is no measure of mlsql's.

    Examples
    --------
    >>> unknown_message("micro_f2")[:66]
    "evaluate: there is no measure 'micro_f2'. Did you mean 'micro_f1'?"
    """
    close = closest(name, allowed())
    hint = HINT.format(close=close) if close is not None else ""
    return UNKNOWN_MESSAGE.format(func=func, name=name, hint=hint, allowed=", ".join(allowed()))


def _refused(name: str, why: str, func: str) -> MlsqlError:
    return MlsqlError(
        REFUSED_MESSAGE.format(func=func, name=name, why=why, allowed=", ".join(allowed()))
    )


def roles(m: Measure) -> tuple[str, ...]:
    """``actual``/``predicted`` in the order ``m`` takes its inputs (the truth first, except
    Hivemall's order); a measure of one column takes ``actual``.

    Examples
    --------
    >>> _ = measures()
    >>> roles(REGISTRY["micro_f1"]), roles(REGISTRY["hivemall_auc"]), roles(REGISTRY["prevalence"])
    (('actual', 'predicted'), ('predicted', 'actual'), ('actual',))
    """
    if len(m.inputs) == 1:
        return ("actual",)
    if m.inputs[0] in PREDICTION_FIRST:
        return ("predicted", "actual")
    return ("actual", "predicted")


def items(given: Any, weighted: bool, func: str = FUNC) -> list[Item]:
    """The measures of ``given`` (names or ``(name, {param: value})`` pairs), checked.

    Examples
    --------
    >>> [i.label for i in items(["micro_f1", ("micro_fbeta", {"beta": 2})], False)]
    ['micro_f1', 'micro_fbeta(beta=2)']
    """
    from mlsql._resample.measures import _entries, _label

    names = _names()
    out = []
    for given_name, params in _entries(given, func):
        name = names.get(given_name)
        if name is None:
            raise MlsqlError(unknown_message(given_name, func))
        m = REGISTRY[name]
        if m.kind != "aggregate" and name not in LABEL_MEASURES:
            raise _refused(given_name, KIND_REASONS[m.kind], func)
        if name in NOT_NUMBERS:
            raise _refused(given_name, NOT_NUMBERS[name], func)
        for own in OWN_PARAMS:
            if own in params:
                raise MlsqlError(OWN_PARAM_MESSAGE.format(func=func, param=own, name=given_name))
        if weighted and not m.weighted:
            why = m.unweighted or "Hivemall's measure is unweighted"
            raise MlsqlError(UNWEIGHTED_MESSAGE.format(func=func, name=given_name, why=why))
        if name != "fmeasure":  # fmeasure checks its option string when it runs
            checked_params(m, params)
        if name in LABEL_MEASURES:  # a list of one kind, as every engine takes it
            LT.check_universe(params.get("labels"), given_name)
        out.append(Item(_label(given_name, params), name, params, roles(m)))
    return out


def request(
    columns: Collection[str],
    actual: Any,
    predicted: Any,
    measures: Any,
    by: Any,
    sample_weight: Any,
    func: str = FUNC,
) -> Request:
    """Check every argument of ``evaluate`` against the frame's ``columns``."""
    groups = P.check_by(by, func)
    chosen = items(measures, sample_weight is not None, func)
    named: list[tuple[str, Any]] = [("actual", actual)]
    if any(len(i.roles) == 2 for i in chosen):
        named.append(("predicted", predicted))
    if sample_weight is not None:
        named.append(("sample_weight", sample_weight))
    check_columns(func, columns, [*named, *(("by", b) for b in groups)])
    check_by_names(func, groups, COLUMNS)
    return Request(groups, chosen, sample_weight)


@dataclass(frozen=True)
class LabelReport:
    """The per-label measures of a call that share one ``multilabel_report``: its
    parameters (``beta`` None for the F1 columns) and (position, item) of each measure,
    whose value is the report's column of the measure's name."""

    labels: Any
    beta: Any
    zero_division: Any
    items: list[tuple[int, Item]]


def label_reports(chosen: Sequence[Item]) -> list[LabelReport]:
    """The per-label measures of ``chosen`` (:data:`LABEL_MEASURES`), one report per set of
    parameters: the two-level plan (per group x label counts, then the registry's per-label
    formulas averaged) runs once for all the measures of one report.

    Examples
    --------
    >>> chosen = items(["macro_f1", "micro_f1", ("macro_fbeta", {"beta": 2}), "clp"], False)
    >>> [(r.beta, [i for i, _ in r.items]) for r in label_reports(chosen)]
    [(None, [0, 3]), (2, [2])]
    """
    out: dict[str, LabelReport] = {}
    for i, item in enumerate(chosen):
        if item.name not in LABEL_MEASURES:
            continue
        params = item.params
        beta = params.get("beta", P.BETA.default) if "fbeta" in item.name else None
        labels, zd = params.get("labels"), params.get("zero_division", P.ZERO_DIVISION.default)
        key = repr((labels, beta, zd))
        out.setdefault(key, LabelReport(labels, beta, zd, [])).items.append((i, item))
    return list(out.values())


def inputs(item: Item, names: Mapping[str, Any]) -> list[Any]:
    """The item's inputs, in its order, from ``names`` (role -> the engine's column)."""
    return [names[r] for r in item.roles]


# ---------------------------------------------------------------- docstrings
SUMMARY = "Measures per group, one row per group and measure, from one pass over the data."
#: the ``Parameters`` entries after the frame, in every engine (DuckDB's too)
PARAMETERS = """\
actual, predicted : str
    The columns of the truth and of the prediction (labels, label lists,
    numbers or scores, as each measure takes them; a measure of one column,
    such as prevalence, reads ``actual``).
measures : sequence
    Measure names or ``(name, {parameter: value})`` pairs: any aggregate
    measure of mlsql (the reference lists them), of any family, even
    several families at once when the columns suit them all, and the
    per-label averages of label lists (macro_*, weighted_*,
    label_accuracy_micro/macro, clp, mlp, wlp).
by : str or sequence of str, optional
    Grouping columns (not named ``measure`` or ``estimate``).
sample_weight : str, optional
    A column of row weights (finite numbers >= 0; a NULL weight skips the row)."""
#: the ``Returns`` text (``{head}``: the engine's words before the ``by`` columns,
#: ``{double}``: its name of the estimate's type)
RETURNS = (
    "{head} ``by`` columns, measure (the name as given, with its parameters) and estimate "
    "({double}), one row per group and measure, ordered by group (nulls first), then the "
    "measures as given."
)


def docstring(engine: Engine, method: str = "", notes: str = "") -> str:
    """The numpydoc docstring of a DataFrame engine's ``evaluate``, in ``engine``'s words
    (:attr:`~mlsql._front.engine.Engine.words`: the frame's parameter and type, which is the
    result's, and the estimate's type), its example the engine-neutral one
    (:data:`mlsql._front.examples.FRAMES`) as the engine writes it.

    ``method`` (a sentence after the one that says the result is DuckDB's) and ``notes``
    (the engine's ``Notes`` section, if any) are the engine's own.

    Examples
    --------
    >>> from mlsql.polars._engine import POLARS
    >>> docstring(POLARS).splitlines()[2:7]
    ["The result and the method are those of DuckDB's ``mlsql.evaluate``.", '', 'Parameters', '----------', 'frame : polars.DataFrame or polars.LazyFrame']
    """
    from mlsql._front.example_outputs import OUTPUTS
    from mlsql._front.examples import FRAMES

    words = engine.words
    head = f"The kind of ``{words['frame_param']}``: the" if words["lazy"] else "The"
    returns = textwrap.fill(RETURNS.format(head=head, double=words["double"]), 72)
    said = " ".join(["The result and the method are those of DuckDB's ``mlsql.evaluate``.", method])
    statements = engine.frame_example("evaluate", FRAMES["evaluate"])
    output = OUTPUTS.get("evaluate", "<no output written: run python -m mlsql._stubs>")
    lines = [
        SUMMARY,
        "",
        *textwrap.wrap(said, 84),
        "",
        "Parameters",
        "----------",
        f"{words['frame_param']} : {words['frame']}",
        "    The predictions.",
        *PARAMETERS.splitlines(),
        "",
        "Returns",
        "-------",
        words["frame"],
        *(f"    {line}" for line in returns.splitlines()),
    ]
    if notes:
        lines += ["", "Notes", "-----", *inspect.cleandoc(notes).splitlines()]
    lines += ["", "Examples", "--------", *(f">>> {s}" for s in statements), output]
    return "\n".join(lines)


F = TypeVar("F", bound=Callable[..., Any])


def documented(engine: Engine, method: str = "", notes: str = "") -> Callable[[F], F]:
    """Give the decorated ``evaluate`` its docstring (:func:`docstring`)."""

    def document(fn: F) -> F:
        fn.__doc__ = docstring(engine, method, notes)
        return fn

    return document
