"""Cohen's kappa over k classes: its standard error, z test and confidence interval.

statsmodels' ``statsmodels.stats.inter_rater.cohens_kappa(table)`` on the
confusion matrix (rows ``actual``, columns ``predicted``), written once over
the class axis of :class:`~mlsql.measures.single_label.ClassStats`: A_i and
P_i the rows truly of class i and predicted as it, M_ii the rows right, M_ij
the cells, n the rows.

=============================  ================================================
mlsql                          statsmodels ``cohens_kappa(table, wt=weights)``
=============================  ================================================
cohen_kappa_std_error          std_kappa: sqrt(var_kappa), Fleiss, Cohen and
                               Everitt (1969)
cohen_kappa_z_value            z_value: kappa / sqrt(var_kappa0), the variance
                               under kappa = 0
cohen_kappa_p_value            pvalue_two_sided: 2 P(Z > |z|)
cohen_kappa_p_value_one_sided  pvalue_one_sided: P(Z > z) (norm.sf(z_value))
cohen_kappa_low                kappa_low: kappa - 1.959963984540054 std_kappa
cohen_kappa_high               kappa_upp: kappa + 1.959963984540054 std_kappa
=============================  ================================================

The 2x2 forms (``binary_kappa_*``) are the same statistics of a two-class
table, written over its four cells in :mod:`mlsql.measures.contingency`.

``weights`` NULL (plain kappa), 'linear' or 'quadratic' as ``cohen_kappa_score`` takes it
(:func:`kappa_weight`: |i - j| or (i - j)² over the sorted
classes' positions) gives statsmodels' ``cohens_kappa(table, wt='linear')`` or
``wt='quadratic'``: its weighted var_kappa and var_kappa0 (Fleiss, Cohen and Everitt
1969), on the confusion matrix over the classes seen on either side. statsmodels scores
the table's index 0..k-1 and divides by (k - 1) or (k - 1)²; kappa and both variances are
invariant to that scale, so they equal the positions' weights, and its weighted kappa is
``cohen_kappa_score``'s (scikit-learn's). A table given to statsmodels with a class
absent from both sides (a row and column of zeros) spaces the scores differently: here
such a class does not exist, its neighbours are one position apart.

``weights`` a k x k matrix with ``labels`` (as ``cohen_kappa_score`` takes them, the checks
and messages of :data:`mlsql._params.KAPPA_WEIGHTS` and :data:`~mlsql._params.KAPPA_LABELS`)
gives statsmodels' ``cohens_kappa(table, weights=W)`` on the confusion matrix over the
labels in their order, the rows whose classes are not labels left out: the weighted
variances below with d_ij the matrix's w_ij (``ClassStats.weight_at``). statsmodels
takes a 2-D W as it is (agreement weights 1 - W, not rescaled); kappa and both variances
are invariant to that offset and to W's scale, and every cell counts, the diagonal too.

Notes
-----
NULL over no known rows and over known rows of total weight 0; NaN where statsmodels divides 0 by 0: every row of one
class on both sides (the expected agreement is 1), and for z and its p-value
also where var_kappa0 is 0 (kappa is 0 there too): either side holds one class
only, or no class occurs on both sides. The variances are computed as sums of
counts that are exact for whole counts, so the standard error is 0 exactly
where the variance is (perfect agreement, one class on a side, a disagreement
of constant P_i + A_j): statsmodels rounds it to a tiny number there, or to
NaN below 0. Weighted, the same holds at perfect agreement and with one class on a
side; z is NaN where var_kappa0 is 0 or below. r_i and c_j are sums over the classes
nested in the cell sums (DuckDB, Spark) or differences of a running sum over the k x k
class pairs (Polars), exact for whole counts.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from mlsql import _formulas as F
from mlsql.measures import contingency as C

if TYPE_CHECKING:
    from mlsql.measures.single_label import ClassStats, ClassView

E = Any  # an engine expression

#: the 97.5% quantile of the standard normal (statsmodels' interval: alpha = 0.05, two-sided)
Z_975 = 1.959963984540054
#: the measures this module defines, in their registry order
KAPPA_TESTS = (
    "cohen_kappa_std_error",
    "cohen_kappa_z_value",
    "cohen_kappa_p_value",
    "cohen_kappa_p_value_one_sided",
    "cohen_kappa_low",
    "cohen_kappa_high",
)


def _square(x: E) -> E:
    return x * x


def _terms(ops: Any, s: ClassStats) -> dict[str, E]:
    """The sums the variances need, in counts (sums of weights): n; dis, the rows where the
    sides differ, and chance, Σ_{i != j} A_i P_j, each summed where classes differ (as
    ``cohen_kappa_score`` does, so 1 - agreement does not cancel); D = Σ M_ii;
    T = Σ A_i P_i; U = Σ A_i P_i (A_i + P_i); Sd = Σ M_ii (A_i + P_i) and
    S2 = Σ_ij M_ij (P_i + A_j)²."""

    def off_diagonal(a: ClassView, b: ClassView) -> E:
        return ops.when(a.index == b.index, 0.0, a.actual * b.predicted)

    def y_squared(a: ClassView, b: ClassView) -> E:  # cell (i, j): (P_i + A_j)²
        return _square(a.predicted + b.actual)

    assert s.cell_sum is not None, "the engine gives no cell sums"
    both = s.actual + s.predicted
    return {
        "n": s.n,
        "dis": s.row_pair_sum(lambda i, j: ops.when(i == j, 0.0, 1.0)),
        "chance": s.pair_sum(off_diagonal),
        "d": s.axis.sum(s.correct),
        "t": s.axis.sum(s.actual * s.predicted),
        "u": s.axis.sum(s.actual * s.predicted * both),
        "sd": s.axis.sum(s.correct * both),
        "s2": s.cell_sum(y_squared),
    }


def _variances(t: dict[str, E]) -> tuple[E, E, E]:
    """kappa, var_kappa and var_kappa0 from :func:`_terms` (each bound once).

    statsmodels' var_kappa is Var(X) / ((1 - pe)² n) for X_ij = δ_ij - (1 - kappa) Y_ij / n
    over the cells' shares, Y_ij = P_i + A_j. Written as Var(δ) - 2 q Cov(δ, Y / n) +
    q² Var(Y / n) with q = 1 - kappa, each a difference of sums in counts that is exact for
    whole counts, its variance is 0 exactly where X is constant (perfect agreement, or a
    disagreement whose Y is constant), not a rounding residue:
    var_kappa = (D dis n² - 2 q n (n Sd - 2 D T) + q² (n S2 - 4 T²)) / (chance² n) and
    var_kappa0 = (n² T + T² - n U) / (chance² n).
    """
    n, chance, dis, d, tt = t["n"], t["chance"], t["dis"], t["d"], t["t"]
    kappa = (chance - n * dis) / chance
    q = n * dis / chance
    var_x = d * dis * (n * n) - 2 * q * n * (n * t["sd"] - 2 * d * tt)
    var_x = var_x + _square(q) * (n * t["s2"] - 4 * _square(tt))
    var = var_x / (_square(chance) * n)
    var0 = (n * n * tt + _square(tt) - n * t["u"]) / (_square(chance) * n)
    return kappa, var, var0


def kappa_weight(ops: Any, weights: str, i: E, j: E, s: ClassStats | None = None) -> E:
    """Disagreement weight of classes at positions i and j: 1 off the diagonal (plain
    kappa, ``weights`` "none"), |i - j| or (i - j)², or ("matrix") the given matrix's
    w_ij, read by ``s``'s :attr:`~mlsql.measures.single_label.ClassStats.weight_at`."""
    if weights == "matrix":
        assert s is not None and s.weight_at is not None, "a weights matrix needs labels"
        return s.weight_at(i, j)
    if weights == "none":
        return ops.when(i == j, 0.0, 1.0)
    if weights == "linear":
        return ops.when(i > j, i - j, j - i)
    return (i - j) * (i - j)


def _weighted_terms(ops: Any, s: ClassStats, weights: str) -> dict[str, E]:
    """The sums the weighted variances need, in counts, d_ij the disagreement weight of
    :func:`kappa_weight`, r_i = Σ_l P_l d_il and
    c_j = Σ_l A_l d_lj: n; dis = Σ M_ij d_ij; chance = Σ A_i P_j d_ij; dd = Σ M_ij d_ij²;
    dy = Σ M_ij d_ij (r_i + c_j); yy = Σ M_ij (r_i + c_j)²; ee = Σ A_i P_j d_ij² and
    rc = Σ A_i r_i² + Σ P_j c_j² = Σ M_ij (r_i² + c_j²)."""

    def d(a: ClassView, b: ClassView) -> E:
        return kappa_weight(ops, weights, a.index, b.index, s)

    def row(a: ClassView, b: ClassView) -> E:  # r_i's term (a: class i, b: class l)
        return d(a, b) * b.predicted

    def col(a: ClassView, b: ClassView) -> E:  # c_j's term (a: class l, b: class j)
        return d(a, b) * a.actual

    def margins(term: Any) -> E:
        assert s.margin_cell_sum is not None, "the engine gives no cell sums of margins"
        return s.margin_cell_sum(term, row, col)

    return {
        "n": s.n,
        "dis": s.row_pair_sum(lambda i, j: kappa_weight(ops, weights, i, j, s)),
        "chance": s.pair_sum(lambda a, b: d(a, b) * a.actual * b.predicted),
        "dd": s.row_pair_sum(lambda i, j: _square(kappa_weight(ops, weights, i, j, s))),
        "dy": margins(lambda a, b, r, c: d(a, b) * (r + c)),
        "yy": margins(lambda a, b, r, c: _square(r + c)),
        "ee": s.pair_sum(lambda a, b: _square(d(a, b)) * a.actual * b.predicted),
        # two sums, not one of r² + c²: Polars fuses that sum of products into a kernel
        # that panics on a group_by of no rows (Polars 2.1)
        "rc": margins(lambda a, b, r, c: _square(r)) + margins(lambda a, b, r, c: _square(c)),
    }


def _weighted_variances(t: dict[str, E]) -> tuple[E, E, E]:
    """kappa, var_kappa and var_kappa0 of weighted kappa from :func:`_weighted_terms`.

    statsmodels' weighted var_kappa (Fleiss, Cohen and Everitt 1969, over its agreement
    weights w = 1 - d / max d) is Var(X) / ((1 - pe_w)² n) for
    X_ij = d_ij - (1 - kappa)(r_i + c_j) / n over the cells' shares, and var_kappa0 is
    Var(Y) / ((1 - pe_w)² n) for Y_ij = d_ij - (r_i + c_j) / n over the chance shares
    A_i P_j / n²: both are invariant to the scale of d, so the positions' |i - j| and
    (i - j)² serve as they are, and so does a given matrix, which statsmodels takes as d
    unscaled (w = 1 - d: the constant 1 leaves both variances as they are). In counts, with q = 1 - kappa = n dis / chance:
    var_kappa = (n² dd - 2 q n dy + q² yy - n dis²) / chance² and
    var_kappa0 = (n² ee - n rc + chance²) / (n chance²), each term divided by chance
    before it is multiplied (the sums of whole weights are integers on some engines, and
    n² ee or chance² overflows 64 bits at a million rows). Perfect agreement makes dis, dd
    and q 0, so var_kappa is 0 exactly there.
    """
    n, dis = t["n"], t["dis"]
    inv = 1 / t["chance"]
    q = dis * inv * n
    kappa = 1 - q
    n_inv = n * inv
    var = _square(n_inv) * t["dd"] - 2 * q * n_inv * (t["dy"] * inv)
    var = var + _square(q * inv) * t["yy"] - n * _square(dis * inv)
    var0 = ((t["ee"] * inv) * n - t["rc"] * inv) * inv + 1 / n
    return kappa, var, var0


def terms(ops: Any, s: ClassStats, weights: str = "none") -> dict[str, E]:
    """The sums kappa's variances need under ``weights`` ("none", "linear", "quadratic" or
    "matrix"), by name in :func:`term_names` order: :func:`_terms` or
    :func:`_weighted_terms`. An engine may compute them in one node of its own
    (``ClassStats.bind_kappa_terms``)."""
    return _terms(ops, s) if weights == "none" else _weighted_terms(ops, s, weights)


def term_names(weights: str) -> tuple[str, ...]:
    """The names of :func:`terms` under ``weights``, in order.

    Examples
    --------
    >>> term_names("none")
    ('n', 'dis', 'chance', 'd', 't', 'u', 'sd', 's2')
    >>> term_names("linear")
    ('n', 'dis', 'chance', 'dd', 'dy', 'yy', 'ee', 'rc')
    """
    if weights == "none":
        return ("n", "dis", "chance", "d", "t", "u", "sd", "s2")
    return ("n", "dis", "chance", "dd", "dy", "yy", "ee", "rc")


#: the names of :func:`variances`' values, which an engine's node may bind with the terms
VARIANCES = ("kappa", "var", "var0")


def variances(t: dict[str, E], weights: str = "none") -> tuple[E, E, E]:
    """kappa, var_kappa and var_kappa0 from the bound :func:`terms` under ``weights``.

    Examples
    --------
    The confusion matrix [[2, 0], [1, 1]] (statsmodels' ``cohens_kappa`` gives the same
    kappa, var_kappa and var_kappa0):

    >>> t = dict(n=4, dis=1, chance=8, d=3, t=8, u=36, sd=13, s2=68)
    >>> variances(t)
    (0.5, 0.140625, 0.1875)
    """
    return _variances(t) if weights == "none" else _weighted_variances(t)


def _bound(ops: Any, s: ClassStats, body: Any, weights: str = "none") -> E:
    """``body(kappa, var_kappa, var_kappa0)`` with the sums bound once, NULL over no known
    rows (or known rows of total weight 0) and NaN where every row is of one class on both
    sides; ``weights`` "none" (plain kappa), "linear", "quadratic" or "matrix"."""
    names = term_names(weights)

    def inner(bound: dict[str, E], computed: tuple[E, E, E] | None = None) -> E:
        if computed is not None:  # the engine's node computed the variances with the terms
            value = body(*computed)
        else:
            value = ops.let(variances(bound, weights), body, "kappa_var")
        return ops.when(bound["chance"] == 0, ops.nan(), value)

    if s.bind_kappa_terms is not None:  # the engine's node for the sums
        value = s.bind_kappa_terms(weights, inner)
    else:
        t = terms(ops, s, weights)
        assert tuple(t) == names, "kappa's terms out of term_names' order"
        value = ops.let(
            tuple(t.values()), lambda *v: inner(dict(zip(names, v, strict=True))), "kappa_terms"
        )
    if s.rows is not None:  # weighted: known rows that all weigh 0 are no rows either
        value = ops.when(s.n == 0, None, value)
    return ops.when((s.n if s.rows is None else s.rows) == 0, None, value)


def _one_side(s: ClassStats) -> E:
    """:func:`one_side`, or the engine's expression of it (``ClassStats.one_side``)."""
    return one_side(s) if s.one_side is None else s.one_side


def one_side(s: ClassStats) -> E:
    """Whether ``actual`` or ``predicted`` holds one class only (its total is n)."""
    whole = s.axis.when(s.actual == s.n, 1, 0) + s.axis.when(s.predicted == s.n, 1, 0)
    return s.axis.sum(whole) > 0


def _choose(ops: Any, s: ClassStats, weights: Any, build: Any) -> E:
    """``build(w)`` for the ``weights`` named (each option built only when ``weights`` is
    not known in Python), as ``cohen_kappa_score`` chooses its weights: "matrix" where the
    engine reads a given matrix over the labels (``s.weight_at``)."""
    options: dict[str, Callable[[], E]] = {
        w: partial(build, w) for w in ("none", "linear", "quadratic")
    }
    if s.weight_at is not None:
        options["matrix"] = partial(build, "matrix")
    return F.choose(ops, weights, options)


def _standard_error(ops: Any, one_side: E, var: E) -> E:
    """sqrt(var_kappa), 0 where a side holds one class (``one_side``)."""
    return ops.when(one_side, 0.0, ops.sqrt(ops.when(var < 0, 0.0, var)))


def _std_error(ops: Any, s: ClassStats, weights: str) -> E:
    one_side = _one_side(s)

    def body(kappa: E, var: E, var0: E) -> E:
        return _standard_error(ops, one_side, var)

    return _bound(ops, s, body, weights)


def std_error(ops: Any, s: ClassStats, weights: Any = "none", labels: Any = None) -> E:
    """sqrt(var_kappa) (statsmodels' std_kappa); 0 where either side holds one class."""
    return _choose(ops, s, weights, lambda w: _std_error(ops, s, w))


def _z_value(ops: Any, s: ClassStats, weights: str) -> E:
    def body(kappa: E, var: E, var0: E) -> E:
        return ops.when(var0 <= 0, ops.nan(), kappa / ops.sqrt(ops.when(var0 < 0, 0.0, var0)))

    return ops.when(_one_side(s) & (s.n > 0), ops.nan(), _bound(ops, s, body, weights))


def z_value(ops: Any, s: ClassStats, weights: Any = "none", labels: Any = None) -> E:
    """kappa / sqrt(var_kappa0) (statsmodels' z_value); NaN where var_kappa0 is 0 (and so is
    kappa): a side holds one class, or no class occurs on both sides (Σ A_i P_i = 0)."""
    return _choose(ops, s, weights, lambda w: _z_value(ops, s, w))


def p_value(ops: Any, s: ClassStats, weights: Any = "none", labels: Any = None) -> E:
    """2 P(Z > |z|) = erfc(|z| / sqrt 2) (statsmodels' pvalue_two_sided)."""

    def build(w: str) -> E:
        z = _z_value(ops, s, w)
        return ops.let((z,), lambda z: C.erfc(ops, ops.when(z < 0, -z, z) / 2**0.5), "kappa_z")

    return _choose(ops, s, weights, build)


def p_value_one_sided(ops: Any, s: ClassStats, weights: Any = "none", labels: Any = None) -> E:
    """P(Z > z) (statsmodels' pvalue_one_sided, ``norm.sf(z_value)``): the two-sided tail's
    half, see :func:`mlsql.measures.contingency.normal_upper_tail`."""
    return _choose(ops, s, weights, lambda w: C.normal_upper_tail(ops, _z_value(ops, s, w)))


def interval(ops: Any, s: ClassStats, side: int, weights: Any = "none", labels: Any = None) -> E:
    """kappa + side x 1.959963984540054 x std_kappa (statsmodels' kappa_low, kappa_upp)."""

    one_side = _one_side(s)

    def body(kappa: E, var: E, var0: E) -> E:
        return kappa + side * Z_975 * _standard_error(ops, one_side, var)

    # one bound of the sums for kappa and its standard error (two doubled each engine's plan)
    return _choose(ops, s, weights, lambda w: _bound(ops, s, body, w))
