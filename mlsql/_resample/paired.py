"""ranx's comparison tests in ``compare``: paired Student's t and Fisher's randomization.

``compare(..., test='student' | 'fisher')`` computes its ``p_value`` from the
per-id values of a per-row measure (one whose value is the mean of a value per
row: the samples averages, subset accuracy, zero-one and Hamming loss,
accuracy, error rate, and of numbers mse, mae and mape; not rmse, r2 or the
other ratios of sums), as ranx's ``compare(stat_test=...)`` does from its
per-query scores. The estimates and the bootstrap interval stay as they are.

An id's difference d is the model row's value minus the baseline row's; ids
where either value is NULL or NaN (an unknown row, an undefined ratio) are left
out. The ids come as the paired statistics table of ``compare``: distinct
tuples, m ids each, so memory grows with the distinct tuples, never the rows.

- ``student``: t = mean(d) / (sd(d) / sqrt(n)) over the n ids, sd with n - 1,
  two-sided p = I_{df/(df+t²)}(df/2, 1/2) with df = n - 1 (scipy's
  ``ttest_rel``; ranx calls it). NULL with fewer than 2 ids or when every d is 0
  (scipy's NaN); 0 when every d is the same non-zero number. The incomplete beta
  is computed from t²/df (:func:`t_two_sided`): within 4e-13 of scipy's for 1
  to a million degrees of freedom.
- ``fisher``: each of ``n_resamples`` permutations swaps the two rows of each id
  with probability 1/2 (flips the sign of its d); p = the share of permutations
  whose |Σ d*| reaches |Σ d| (ranx's ``fisher_randomization_test``: the share,
  no +1; 1e-12 of Σ|d| is allowed for rounding). A tuple of m ids flips
  2 K - m of them net, K ~ Binomial(m, 1/2): the draws are
  ``stream(seed, (*group values, model, 'fisher')).binomial(m, 0.5, size=(n_resamples,
  tuples))`` over the tuples in their sorted order (:mod:`mlsql._resample.run`),
  so a seed gives the same p-value in every engine. The SQL table macro ``compare``
  cannot reproduce numpy's stream: its K are its own draws, from the hash of (seed,
  permutation, group, model, pair) (:func:`mlsql._duckdb.resample_values.fisher`), so a
  seed gives the same p-value on every run of the macro, not the Python call's. Spark's
  ``compare`` of numbers past its driver's budget tests in the executors from its own
  draws likewise (:mod:`mlsql.spark.resample_tests`): the same p-value on any
  partitioning, the others' within Monte Carlo error.

Both need unweighted rows: a ``sample_weight`` other than 1 (NULL skips the row)
is an error, as ranx has no weights.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from mlsql._errors import MlsqlError
from mlsql._resample import numbers as NUM
from mlsql._resample.measures import Chosen
from mlsql._resample.ops import WeightedOps

#: the values of compare's ``test`` parameter (bootstrap: the paired bootstrap's p-value)
TESTS = ("bootstrap", "student", "fisher")
#: measures that are the mean of a value per row (their per-id values are tested)
PER_ROW_MEASURES = (
    "samples_precision",
    "samples_recall",
    "samples_fbeta",
    "samples_f1",
    "samples_jaccard",
    "subset_accuracy",
    "zero_one_loss",
    "hamming_loss",
    "accuracy",
    "error_rate",
    *NUM.ROW_MEANS,
)
TEST_MESSAGE = (
    "The 'test' parameter of compare must be one of "
    + ", ".join(repr(t) for t in TESTS)
    + ". Got {got} instead."
)
#: the tests the SQL table macro ``compare`` computes too
SQL_TESTS = ("bootstrap", "student", "fisher")
#: what the SQL table macro ``compare`` would say of a test it does not compute (none now:
#: it computes all three, Fisher's from its own draws, hashes of the pairs, not numpy's)
SQL_TEST_MESSAGE = (
    "The SQL table macro compare computes p_value by the paired bootstrap, Student's t test "
    "or Fisher's randomization test (test := 'bootstrap', 'student' or 'fisher'; Fisher's "
    "from the macro's own draws, not the Python call's); test {test} is computed by the "
    "Python compare (mlsql.compare, mlsql.polars.compare, mlsql.spark.compare)."
)
PER_ROW_MESSAGE = (
    "compare's test {test!r} compares the per-id values of a measure that is a mean over "
    "rows ({allowed}). Got {name}."
)
WEIGHT_MESSAGE = (
    "compare's test {test!r} takes unweighted rows, as ranx's does: every sample_weight must "
    "be 1 (NULL skips the row). Got {got!r}."
)


def check_test(test: Any, chosen: Sequence[Chosen]) -> str:
    """``test`` checked, and every measure per-row when it is not the bootstrap's.

    Examples
    --------
    >>> check_test("student", [])
    'student'
    """
    if not isinstance(test, str) or test not in TESTS:
        raise MlsqlError(TEST_MESSAGE.format(got=repr(test)))
    if test != "bootstrap":
        for c in chosen:
            if c.name not in PER_ROW_MEASURES:
                raise MlsqlError(
                    PER_ROW_MESSAGE.format(
                        test=test, allowed=", ".join(PER_ROW_MEASURES), name=c.label
                    )
                )
    return test


def per_row(measure: Chosen, cols: dict[str, Any]) -> np.ndarray:
    """Each tuple's value of ``measure`` as one row alone (NaN where NULL or undefined).

    The measure's own formula, each tuple reduced over a row axis of length 1;
    a regression mean's over each tuple's statistics as one row alone
    (:func:`mlsql._resample.numbers.row_values`).
    """
    if measure.stats in NUM.KINDS:
        return NUM.row_values(measure.name, cols)
    shaped = {
        k: (v.reshape(-1, 1) if isinstance(v, np.ndarray) else v)
        for k, v in cols.items()
        if isinstance(v, np.ndarray)
    }
    with np.errstate(all="ignore"):
        value = np.ma.asarray(measure.evaluate(WeightedOps(np.ones((1, 1))), shaped))
    return np.asarray(np.ma.filled(value.astype(float), np.nan), dtype=float).reshape(-1)


def _check_weights(test: str, weights: Sequence[np.ndarray]) -> None:
    for w in weights:
        odd = w[(w != 1) & (w != 0)]
        if len(odd):
            raise MlsqlError(WEIGHT_MESSAGE.format(test=test, got=float(odd[0])))


def student_p_value(d: np.ndarray, m: np.ndarray) -> float | None:
    """Two-sided paired t test p-value of the differences ``d``, each seen ``m`` times.

    Examples
    --------
    >>> round(student_p_value(np.array([1.0, 2.0, 4.0]), np.array([1.0, 1.0, 1.0])), 12)
    0.118082896312
    """
    n = float(m.sum())
    if n < 2:
        return None
    mean = float((m * d).sum() / n)
    return student_from_moments(n, mean, float((m * (d - mean) ** 2).sum()))


def student_from_moments(n: float, mean: float, squares: float) -> float | None:
    """The two-sided paired t test p-value of n differences of mean ``mean`` whose squared
    distances from it sum to ``squares`` (an engine's aggregates; NULL below 2 ids).

    Examples
    --------
    >>> round(student_from_moments(3.0, 7 / 3, 14 / 3), 12)
    0.118082896312
    """
    if n < 2:
        return None
    var = squares / (n - 1)
    if var == 0:
        return None if mean == 0 else 0.0
    t = mean / math.sqrt(var / n)
    return min(1.0, t_two_sided(t, n - 1))


#: ln Γ(a + 1/2) - ln Γ(a) ~ ln(a) / 2 + Σ c_k / a^(2k + 1): c_k = -2 (1 - 2^-n) B_n / (n (n - 1)),
#: n = 2k + 2 (Bernoulli numbers B_n); the next term is below 2e-18 from a = 25 on
_HALF_GAMMA = (-1 / 8, 1 / 192, -1 / 640, 17 / 14336, -31 / 18432)


def _log_gamma_half_ratio(a: float) -> float:
    """ln(Γ(a + 1/2) / Γ(a)): ``lgamma``'s difference below 25, else its asymptotic series
    (the difference of two lgammas near a ln a loses their digits: 1e-9 at a = 5e5)."""
    if a < 25:
        return math.lgamma(a + 0.5) - math.lgamma(a)
    return 0.5 * math.log(a) + sum(c / a ** (2 * k + 1) for k, c in enumerate(_HALF_GAMMA))


def t_two_sided(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom: I_x(df/2, 1/2) with
    x = df / (df + t²), computed from y = t² / df so that neither x nor 1 - x is rounded
    (ln x = -log1p(y), 1 - x = y / (1 + y)).

    Below the switch point x < (a + 1) / (a + b + 2) (the tail, t² above about 3) it is
    x^a (1 - x)^(b - 1) / (a B(a, b)) 2F1(1, b; a + 1; -1/y) (the hypergeometric form of
    I_x after Pfaff's transformation), whose Stieltjes continued fraction has positive
    terms (:func:`_stieltjes_fraction`): the usual fraction in x cancels there, about
    df-fold near x = 1 (2e-11 at df 1e6). Above it, 1 - I_{1-x}(1/2, df/2) by the usual
    fraction. Within 4e-13 of scipy's ``stats.t.sf`` (relative) for df from 1 to 1e6.

    Examples
    --------
    >>> round(t_two_sided(2.0, 3.0), 12)
    0.139325968559
    """
    a, b = df / 2, 0.5
    y = t * t / df
    if y == 0:
        return 1.0
    if math.isinf(y):
        return 0.0
    x, x1 = 1 / (1 + y), y / (1 + y)
    log_front = _log_gamma_half_ratio(a) - 0.5 * math.log(math.pi) - a * math.log1p(y)
    if x < (a + 1) / (a + b + 2):
        return math.exp(log_front + (b - 1) * math.log(x1)) * _stieltjes_fraction(a, b, 1 / y) / a
    return 1.0 - math.exp(log_front + b * math.log(x1)) * _beta_fraction(b, a, x1) / b


#: pairs of terms of :func:`_stieltjes_fraction` (60 reach 1e-16 over df 1 to 1e6)
STIELTJES_PAIRS = 100


def _stieltjes_fraction(a: float, b: float, w: float) -> float:
    """2F1(1, b; a + 1; -w) for w > 0: Gauss's continued fraction 1 / (1 + g1 w / (1 + g2 w /
    ...)), g_{2i} = i (a + i - b) / ((a + 2i - 1)(a + 2i)), g_{2i+1} = (a + i)(b + i) /
    ((a + 2i)(a + 2i + 1)), all positive: evaluated backwards over a fixed number of terms,
    as the SQL macro does."""
    r = 1.0
    for j in range(2 * STIELTJES_PAIRS, 0, -1):
        i = j // 2
        if j % 2 == 0:
            g = i * (a + i - b) / ((a + j - 1) * (a + j))
        else:
            g = (a + i) * (b + i) / ((a + j - 1) * (a + j))
        r = 1.0 + g * w / r
    return 1.0 / r


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of I_x(a, b) by the modified Lentz method."""
    tiny, eps = 1e-300, 1e-16
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for i in range(1, 10_000):
        m2 = 2 * i
        for num in (
            i * (b - i) * x / ((a + m2 - 1) * (a + m2)),
            -(a + i) * (a + b + i) * x / ((a + m2) * (a + m2 + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def fisher_p_value(
    d: np.ndarray, m: np.ndarray, rng: np.random.Generator, n_permutations: int
) -> float | None:
    """Fisher's randomization test p-value: the share of sign flips with |Σ d*| >= |Σ d|.

    Examples
    --------
    >>> fisher_p_value(np.array([0.0]), np.array([3.0]), np.random.default_rng(0), 10)
    1.0
    """
    if m.sum() == 0:
        return None
    whole = m.astype(np.int64)
    observed = abs(float((m * d).sum()))
    slack = 1e-12 * float((m * np.abs(d)).sum())
    hits = 0
    size = max(1, min(n_permutations, (1 << 22) // max(1, len(m))))
    for start in range(0, n_permutations, size):
        k = rng.binomial(whole, 0.5, size=(min(size, n_permutations - start), len(m)))
        flipped = (2 * k - whole) @ d
        hits += int(np.count_nonzero(np.abs(flipped) >= observed - slack))
    return hits / n_permutations


def p_values(
    groups: Iterable[tuple[tuple[Any, ...], Sequence[tuple[dict[str, Any], np.ndarray]], Any]],
    chosen: Sequence[Chosen],
    test: str,
    n_permutations: int,
    seed: int,
) -> dict[tuple[tuple[Any, ...], str], float | None]:
    """Per (group values and model, measure label): the ``test`` p-value of the paired ids.

    ``groups`` as :func:`mlsql._resample.run.groups` yields them (two sides).
    """
    from mlsql._resample.run import stream

    out: dict[tuple[tuple[Any, ...], str], float | None] = {}
    for key, ((base, w_base), (model, w_model)), m in groups:
        _check_weights(test, (w_base, w_model))
        counted = m * (w_base > 0) * (w_model > 0)
        for measure in chosen:
            d = per_row(measure, model) - per_row(measure, base)
            keep = np.isfinite(d) & (counted > 0)
            if test == "student":
                p = student_p_value(d[keep], counted[keep])
            else:
                rng = stream(seed, (*key, "fisher"))
                p = fisher_p_value(d[keep], counted[keep], rng, n_permutations)
            out[(key, measure.label)] = p
    return out


def replace_p_values(
    rows: list[tuple[Any, ...]], n_by: int, found: dict[tuple[tuple[Any, ...], str], Any]
) -> list[tuple[Any, ...]]:
    """``compare``'s rows with ``p_value`` taken from ``found`` (NULL where a pair has no ids)."""
    position = n_by + 1 + 6  # model, then measure, estimates, difference, low, high
    out = []
    for row in rows:
        key = tuple(row[: n_by + 1])
        p = found.get((key, row[n_by + 1]))
        out.append((*row[:position], p, *row[position + 1 :]))
    return out
