"""The one registry of measures: it drives registration, documentation and tests.

Each family module under :mod:`mlsql.measures` declares its measures with
:func:`measure`. Engines read the registry to build their functions (DuckDB
macros, Polars expressions, Spark Columns); ``tests/test_registry.py`` fails
when a measure exists in one engine and not another without a stated reason.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

ENGINES = ("duckdb", "polars", "spark")

#: what a measure takes and returns, which decides how an engine builds it
KINDS = {
    "set": "per row: a list (distinct, sorted, no NULLs) from two label lists",
    "row": "per row: a number from two label lists; NULL where either list is NULL",
    "aggregate": "over rows (GROUP BY / group_by().agg / groupBy().agg): one number",
    "counts": "over rows: a struct of counts that can be stored and merged",
    "from_counts": "per row of stored counts: a number",
    "table": "over a table: one row per group (and label)",
}


@dataclass(frozen=True)
class Param:
    """A parameter beyond the inputs, with its default.

    ``constraint`` (a :mod:`mlsql._params` constraint) is what the parameter
    accepts, as data: every engine's check, message, CLI parsing and docstring
    entry come from it. ``doc`` is the docstring's description of the
    parameter; ``key`` names its SQL check when two parameters of one name
    accept different values (``k`` of ``top_k`` may be 0). A parameter without a
    constraint is checked by its family's own code.
    """

    name: str
    default: Any
    constraint: Any = None
    doc: str = ""
    key: str = ""

    @property
    def check_key(self) -> str:
        """The name of this parameter's check (``_mlsql_check_<key>`` in SQL)."""
        return self.key or self.name


@dataclass(frozen=True)
class Measure:
    """One public function of mlsql, as every engine names it."""

    name: str
    kind: str
    family: str
    summary: str
    inputs: tuple[str, ...] = ("actual", "predicted")
    params: tuple[Param, ...] = ()
    build: Callable[..., Any] | None = None
    unavailable: Mapping[str, str] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    #: why this measure takes no ``sample_weight`` although its kind would (empty: it does)
    unweighted: str = ""

    def available_in(self, engine: str) -> bool:
        """Whether ``engine`` (one of :data:`ENGINES`) offers this measure (else
        ``unavailable`` says why). The PostgreSQL library and ibis keep their own lists
        (``mlsql._postgres.library.missing()``): a name outside :data:`ENGINES` is an error,
        not True."""
        if engine not in ENGINES:
            raise ValueError(f"{engine!r} is not one of the registry's engines {ENGINES}")
        return engine not in self.unavailable

    @property
    def weighted(self) -> bool:
        """Whether the measure takes ``sample_weight``: every aggregate, counts struct and
        table, unless ``unweighted`` says why not (per-row functions never take it)."""
        return self.kind in WEIGHTED_KINDS and not self.unweighted

    @property
    def takes_label_lists(self) -> bool:
        """Whether ``actual`` and ``predicted`` are label lists (else one value per row)."""
        return self.family in LIST_FAMILIES

    @property
    def lower_is_better(self) -> bool:
        """Whether a smaller value is the better one (losses and errors), as for
        ``mlsql compare --fail-if-worse``.

        Examples
        --------
        >>> from mlsql._registry import REGISTRY, measures
        >>> _ = measures()
        >>> REGISTRY["hamming_loss"].lower_is_better, REGISTRY["micro_f1"].lower_is_better
        (True, False)
        """
        return self.name in LOWER_IS_BETTER


#: the kinds that take ``sample_weight`` (a weight multiplies a row's contribution)
WEIGHTED_KINDS = frozenset({"aggregate", "counts", "table"})

#: families whose ``actual`` and ``predicted`` inputs are lists of labels
LIST_FAMILIES = frozenset({"multilabel", "hivemall", "label_based"})

#: the aggregates whose smaller value is the better one (losses, errors, distances); every
#: other aggregate is better larger (tests/test_cli_bootstrap.py checks each name is declared)
LOWER_IS_BETTER = frozenset(
    {
        "hamming_loss",
        "zero_one_loss",
        "error_rate",
        "class_error_rate",
        "cost_error",
        "majority_error",
        "binary_error_rate",
        "binary_false_negative_rate",
        "binary_false_positive_rate",
        "binary_cost_error",
        "coverage_error",
        "label_ranking_loss",
        "one_error",
        "mse",
        "rmse",
        "mae",
        "mape",
        "rse",
        "rrse",
        "rae",
        "logloss",
        "hivemall_logloss",
        "brier_score_loss",
        "multiclass_brier_score",
        "multilabel_brier_score",
        "expected_calibration_error",
        "multiclass_calibration_error",
    }
)

REGISTRY: dict[str, Measure] = {}


def measure(
    name: str,
    kind: str,
    family: str,
    summary: str,
    *,
    inputs: tuple[str, ...] = ("actual", "predicted"),
    params: tuple[Param, ...] = (),
    unavailable: Mapping[str, str] | None = None,
    aliases: tuple[str, ...] = (),
    unweighted: str = "",
) -> Callable[[Callable[..., Any] | None], Callable[..., Any] | None]:
    """Declare a measure; decorates its formula (or ``None`` when engine-specific).

    Examples
    --------
    >>> from mlsql._registry import REGISTRY
    >>> import mlsql.measures  # noqa: F401  (fills the registry)
    >>> REGISTRY["micro_f1"].kind
    'aggregate'
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {sorted(KINDS)}")

    def decorate(build: Callable[..., Any] | None) -> Callable[..., Any] | None:
        if name in REGISTRY:
            raise ValueError(f"measure {name!r} is declared twice")
        REGISTRY[name] = Measure(
            name,
            kind,
            family,
            summary,
            inputs,
            params,
            build,
            dict(unavailable or {}),
            aliases,
            unweighted,
        )
        return build

    return decorate


def declare(name: str, kind: str, family: str, summary: str, **kwargs: Any) -> None:
    """Declare a measure whose engines build it themselves (no shared formula)."""
    measure(name, kind, family, summary, **kwargs)(None)


def measures(*, kind: str | None = None, family: str | None = None) -> list[Measure]:
    """The registered measures, optionally of one kind or family, in declaration order."""
    import mlsql.measures  # noqa: F401  (fills the registry)

    return [
        m
        for m in REGISTRY.values()
        if (kind is None or m.kind == kind) and (family is None or m.family == family)
    ]
