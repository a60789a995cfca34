"""Every measure's formula, written once over sufficient statistics.

The functions here never see an engine. They take an ``ops`` object (the few
primitives an engine supplies: ``when``, ``undefined``, ``sum``, ``mean``,
``count``, ``is_nan``, ``nan``) and statistics that are DuckDB :class:`Sql`
expressions, Polars expressions or Spark Columns, all of which overload
Python's arithmetic. ``zero_division`` is whatever the engine's ``undefined``
understands (a validated :class:`~mlsql._params.ZeroDivision` in Python
engines, a macro parameter in SQL).

Notes
-----
A ratio is undefined when its denominator is zero. Its value then follows
``zero_division`` (DESIGN.md section 1.8): 0 or 1; NaN (left out of
averages); 'diagnose' (1 where tp + fp + fn = 0 for that row or label, else
0, as MULAN and mldr); 'ignore' (NULL, left out of averages, as mldr).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from functools import wraps
from typing import Any, Protocol

E = Any  # an engine expression: Sql, pl.Expr or a Spark Column


class Ops(Protocol):
    """The primitives an engine supplies to the formulas."""

    def when(self, condition: E, then: E, otherwise: E) -> E: ...

    def undefined(self, zero_division: Any, nothing_to_score: E) -> E: ...

    def sum(self, x: E) -> E: ...

    def mean(self, x: E) -> E: ...

    def count(self, x: E) -> E: ...

    def is_nan(self, x: E) -> E: ...

    def nan(self) -> E: ...

    def skips_undefined(self, zero_division: Any) -> bool | None: ...

    def error_if(self, condition: E, value: E, template: str, got: Any) -> E:
        """``value``; the query fails with ``template`` ({} = ``got``) where ``condition``."""
        ...


class Formula(Protocol):
    """A registered formula: callable as the formula, ``raw`` the function it wraps."""

    raw: Callable[..., Any]

    def __call__(self, ops: Any, *args: Any) -> Any: ...


#: every formula by name, for engines that name them (DuckDB emits one macro each)
FORMULAS: dict[str, Formula] = {}


def formula(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Register ``fn`` as a formula; an ``ops`` with ``call_formula`` may name it instead.

    DuckDB's ops answer with a call of the macro ``_mlsql_<name>``, whose body
    is ``fn`` itself, so the SQL library reads as the formulas do.
    """

    @wraps(fn)
    def wrapper(ops: Any, *args: Any) -> Any:
        hook = getattr(ops, "call_formula", None)
        if hook is not None:
            return hook(fn.__name__, args)
        return fn(ops, *args)

    wrapper.raw = fn  # type: ignore[attr-defined]
    FORMULAS[fn.__name__] = wrapper  # type: ignore[assignment]
    return wrapper


def formula_params(name: str) -> list[str]:
    """The flat parameter names of a formula (a Counts argument gives tp, fp, fn)."""
    out: list[str] = []
    for p in list(inspect.signature(FORMULAS[name].raw).parameters.values())[1:]:
        out += ["tp", "fp", "fn"] if str(p.annotation).split(".")[-1] == "Counts" else [p.name]
    return out


def flatten(args: tuple[Any, ...]) -> list[Any]:
    """Formula arguments with each Counts spread into tp, fp, fn."""
    out: list[Any] = []
    for a in args:
        out += [getattr(a, f.name) for f in fields(a)] if isinstance(a, Counts) else [a]
    return out


@dataclass(frozen=True)
class Counts:
    """Confusion counts of one row, one label or a pooled set of them."""

    tp: E
    fp: E
    fn: E

    @property
    def nothing_to_score(self) -> E:
        """True where tp + fp + fn = 0: nothing true and nothing predicted."""
        return (self.tp + self.fp + self.fn) == 0


@dataclass(frozen=True)
class RowStats:
    """Per-row statistics of two label sets: |A ∩ P|, |A| and |P| (distinct, no NULLs).

    ``fp`` and ``fn`` default to |P| - tp and |A| - tp; an engine may give
    expressions of its own for them (DuckDB names its macros).
    """

    tp: E
    n_actual: E
    n_predicted: E
    fp: E = None
    fn: E = None

    @property
    def counts(self) -> Counts:
        """tp, fp = |P| - tp, fn = |A| - tp."""
        fp = self.n_predicted - self.tp if self.fp is None else self.fp
        fn = self.n_actual - self.tp if self.fn is None else self.fn
        return Counts(self.tp, fp, fn)

    @property
    def exact_match(self) -> E:
        """True where A = P as sets."""
        return (self.tp == self.n_actual) & (self.tp == self.n_predicted)


@formula
def ratio(ops: Ops, num: E, den: E, zero_division: Any, nothing_to_score: E) -> E:
    """``num / den``, or the ``zero_division`` value where ``den`` is 0."""
    return ops.when(den == 0, ops.undefined(zero_division, nothing_to_score), num / den)


@formula
def precision(ops: Ops, c: Counts, zero_division: Any) -> E:
    """tp / (tp + fp): undefined when nothing is predicted."""
    return ratio(ops, c.tp, c.tp + c.fp, zero_division, c.nothing_to_score)


@formula
def recall(ops: Ops, c: Counts, zero_division: Any) -> E:
    """tp / (tp + fn): undefined when nothing is true."""
    return ratio(ops, c.tp, c.tp + c.fn, zero_division, c.nothing_to_score)


def fbeta_weights(ops: Ops, beta: Any) -> tuple[E, E, E]:
    """Weights (w, u, v) with F-beta = w tp / (w tp + u fn + v fp), free of overflow.

    With b = beta: (1 + b², b², 1) for b <= 1, and the same divided by b²,
    (1/b² + 1, 1, 1/b²), for b > 1, so no weight exceeds 2 and no b² overflows
    (b >= 1.4e154 gives 1/b² = 0, F = recall, the exact value's limit; a tiny b
    gives b² = 0, F = precision). ``beta`` may be a number (the branch is taken
    here) or an engine expression (the branch is an ``ops.when``).

    Examples
    --------
    >>> fbeta_weights(None, 2.0)
    (1.25, 1.0, 0.25)
    """
    if isinstance(beta, (int, float)):
        if beta > 1:
            r2 = (1 / beta) ** 2
            return 1 + r2, 1.0, r2
        b2 = beta * beta
        return 1 + b2, b2, 1.0
    big, b2, r2 = beta > 1, beta * beta, (1 / beta) * (1 / beta)
    return 1 + ops.when(big, r2, b2), ops.when(big, 1.0, b2), ops.when(big, r2, 1.0)


@formula
def fbeta(ops: Ops, c: Counts, beta: Any, zero_division: Any) -> E:
    """(1 + b²) tp / ((1 + b²) tp + b² fn + fp): undefined only when tp + fp + fn = 0.

    The lecture's F_alpha = (alpha + 1) P R / (alpha P + R) is this with alpha = beta².
    Computed with :func:`fbeta_weights`, so a huge or tiny beta does not overflow.
    """
    w, u, v = fbeta_weights(ops, beta)
    weighted_tp = w * c.tp
    return ratio(
        ops, weighted_tp, weighted_tp + u * c.fn + v * c.fp, zero_division, c.nothing_to_score
    )


@formula
def jaccard(ops: Ops, c: Counts, zero_division: Any) -> E:
    """tp / (tp + fp + fn) = |A ∩ P| / |A ∪ P|: undefined when both sets are empty."""
    return ratio(ops, c.tp, c.tp + c.fp + c.fn, zero_division, c.nothing_to_score)


def pooled(ops: Ops, s: RowStats | Counts) -> Counts:
    """Counts pooled over rows (or labels), the micro average's statistics.

    From :class:`RowStats` it sums |A ∩ P|, |A| and |P| and derives fp and fn
    from the sums, so each row's statistics are computed once.
    """
    if isinstance(s, Counts):
        return Counts(ops.sum(s.tp), ops.sum(s.fp), ops.sum(s.fn))
    tp = ops.sum(s.tp)
    return Counts(tp, ops.sum(s.n_predicted) - tp, ops.sum(s.n_actual) - tp)


@formula
def average(ops: Ops, per_item: E, zero_division: Any) -> E:
    """Mean of per-row or per-label values, leaving undefined ones out where asked.

    Under NaN and 'ignore', undefined values (NaN, NULL) are left out; if
    values exist but all are undefined the mean is NaN (under NaN) or NULL
    (under 'ignore'). With no values at all (zero rows) it is NULL. Weighted
    (:class:`mlsql._weights.WeightedOps`), values whose weights are all 0 give
    the ``zero_division`` value, as a micro average of all-zero weights does.
    """
    if ops.skips_undefined(zero_division) is False:
        out = ops.mean(per_item)
    else:
        kept = ops.when(ops.is_nan(per_item), None, per_item)
        all_nan = (ops.count(per_item) > 0) & (ops.count(kept) == 0)
        out = ops.when(all_nan, ops.nan(), ops.mean(kept))
    # weighted (mlsql._weights): values whose weights are all 0 average to the undefined value
    weightless = getattr(ops, "weightless", None)
    if weightless is None:
        return out
    nothing = weightless(per_item)
    return ops.when(nothing, ops.undefined(zero_division, nothing), out)


@formula
def share(ops: Ops, part: E, whole: E) -> E:
    """``part / whole``, NULL where ``whole`` is 0 (a share of no rows is unknown)."""
    return ops.when(whole == 0, None, part / whole)


def choose(ops: Ops, value: Any, options: dict[str, Callable[[], E]]) -> E:
    """The option named by ``value``: only it built when ``value`` is known (Python), else a CASE.

    Examples
    --------
    >>> choose(None, "macro", {"micro": lambda: 1, "macro": lambda: 2})
    2
    """
    if isinstance(value, str):
        return options[value]()
    items = list(options.items())
    out = items[-1][1]()
    for key, build in reversed(items[:-1]):
        out = ops.when(value == key, build(), out)
    return out


@formula
def hamming_loss(ops: Ops, fp: E, fn: E, n_rows: E, n_labels: E) -> E:
    """(fp + fn) / (rows x labels): the share of label decisions that are wrong.

    Divided by rows, then by labels, in floating point: the integer product
    rows x labels overflows (wraps, in Polars) when ``n_labels`` is near 2**63.
    ``n_labels`` is at least 1, so the product is 0 only when rows is.
    """
    return ops.when(n_rows == 0, None, (fp + fn) / n_rows / n_labels)


@formula
def subset_accuracy(ops: Ops, exact_match: E) -> E:
    """Share of rows whose predicted set equals the true set (unknown rows left out)."""
    return ops.mean(ops.when(exact_match, 1.0, ops.when(~exact_match, 0.0, None)))


@formula
def zero_one_loss(ops: Ops, exact_match: E) -> E:
    """1 - subset accuracy."""
    return 1 - subset_accuracy(ops, exact_match)
