"""Agreement among several raters: Fleiss' kappa and Cochran's Q.

``fleiss_kappa(ratings)``: ``ratings`` is one list per row (a subject), each rater's
label of it (text, integers or booleans), every row rated by the same number m >= 2 of
raters. It is statsmodels' ``statsmodels.stats.inter_rater.fleiss_kappa(table)`` of the
subjects x categories table of counts n_ij (the raters who put subject i in category j;
``aggregate_raters(ratings)`` builds that table).

With N rows, m raters and M = N m ratings, T_j = Σ_i n_ij the ratings of category j
and S = Σ_i Σ_j n_ij², the mean agreement per subject is P̄ = (S - M) / (M (m - 1)) and
the agreement expected by chance P_e = Σ_j (T_j / M)², so

    kappa = (P̄ - P_e) / (1 - P_e) = (M (S - M) - (m - 1) Σ_j T_j²) / ((m - 1)(M² - Σ_j T_j²)),

written in counts: exact for whole counts, nothing cancels but the two terms of the
numerator. The sufficient statistics are N, m, S and the category totals T_j: memory
grows with the categories (DuckDB: the distinct sorted rows, a histogram, as many as the
raters' multisets of categories), never with the rows in DuckDB; Polars and Spark count
the group's ratings per category from its rows.

``cochrans_q_statistic(correct)`` and ``cochrans_q_p_value(correct)``: ``correct`` is one
list per row of k >= 2 models' outcomes there (booleans or 0/1: whether each model was
right), the same k on every row. They are statsmodels'
``statsmodels.stats.contingency_tables.cochrans_q(x)`` statistic and pvalue of the n x k
array: with R_i the row's successes, C_j model j's and T = Σ R_i,

    Q = (k - 1)(k Σ_j C_j² - T²) / (k T - Σ_i R_i²),

and the p-value P(X > Q) for X chi-square with k - 1 degrees of freedom
(:func:`mlsql.measures.contingency.chi2_upper_tail`). The sufficient statistics are k, T,
Σ R_i² and the column sums C_j: DuckDB holds a histogram of the distinct rows (at most 2^k),
Polars and Spark sum the group's outcomes per column from its rows.

Notes
-----
- A list is the raters' labels, not a set: a label given by two raters counts twice.
  NULL elements are not labels (a rater who gave none): the row then has fewer raters.
- Every known row must hold the same number of labels, at least 2 (statsmodels assumes
  it: its table's row sums are the raters); otherwise every engine fails the query with
  "fleiss_kappa needs the same number of ratings on every row, at least 2 (a label per
  rater, NULL elements left out)."
- A NULL list is an unknown row and is skipped; over no known rows the result is NULL.
- NaN where statsmodels divides 0 by 0: every rating in one category (P_e = 1).
- ``sample_weight`` counts as repeated rows: N, S and the T_j are sums of weights.
- Cochran's Q: a row whose list is NULL or holds a NULL is unknown and skipped (a model
  without an outcome there); every known row must hold the same number k >= 2 of values,
  otherwise the query fails with "cochrans_q_statistic needs the same number of values on
  every row, at least 2 (a boolean or 0/1 value per model)."; a value other than a boolean,
  0 or 1 is an error. NaN where statsmodels divides 0 by 0: every row all right or all
  wrong (k T = Σ R_i²). statsmodels counts as a success the largest value of the whole
  array, so where every value is 0 it counts the zeros: Q is NaN there too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsql._formulas import formula
from mlsql._registry import measure
from mlsql.measures import contingency as C

E = Any  # an engine expression
FAMILY = "agreement"

#: the error of rows rated by different numbers of raters (or by fewer than 2), every engine
RATERS_MESSAGE = (
    "{func} needs the same number of ratings on every row, at least 2 (a label per rater, "
    "NULL elements left out)."
)
#: the error of rows of different numbers of models' outcomes (or of fewer than 2)
MODELS_MESSAGE = (
    "{func} needs the same number of values on every row, at least 2 (a boolean or 0/1 "
    "value per model)."
)
#: the error of a ``correct`` input that is no list of booleans or 0/1 values
FLAGS_MESSAGE = (
    "{func} takes a list of boolean or 0/1 values per row for {name}. Got {name} {type}."
)


@dataclass(frozen=True)
class RatingStats:
    """A group's ratings: ``n`` known rows (with ``sample_weight`` their total weight,
    ``rows`` their number), ``raters`` per row (m), ``squares`` = Σ_i Σ_j n_ij² and
    ``total_squares`` = Σ_j T_j², T_j the ratings of category j (weighted sums)."""

    n: E
    raters: E
    squares: E
    total_squares: E
    rows: E = None


@formula
def fleiss_kappa(ops: Any, n: E, raters: E, squares: E, total_squares: E) -> E:
    """(M (S - M) - (m - 1) Σ_j T_j²) / ((m - 1)(M² - Σ_j T_j²)), M = N m: Fleiss' kappa,
    (P̄ - P_e) / (1 - P_e), in counts; NaN where every rating is of one category."""
    total = n * raters
    chance = total * total - total_squares
    value = (total * (squares - total) - (raters - 1) * total_squares) / ((raters - 1) * chance)
    return ops.when(chance == 0, ops.nan(), value)


def _fleiss_kappa(ops: Any, s: RatingStats) -> E:
    value = fleiss_kappa(ops, s.n, s.raters, s.squares, s.total_squares)
    if s.rows is not None:  # weighted: known rows that all weigh 0 are no rows either
        value = ops.when(s.n == 0, None, value)
    return ops.when((s.n if s.rows is None else s.rows) == 0, None, value)


measure(
    "fleiss_kappa",
    "aggregate",
    FAMILY,
    "Fleiss' kappa of m >= 2 raters per row, ratings one list per row (a label per rater): "
    "statsmodels' fleiss_kappa of the subjects x categories counts.",
    inputs=("ratings",),
)(_fleiss_kappa)


@dataclass(frozen=True)
class OutcomeStats:
    """A group's outcomes: ``n`` known rows (with ``sample_weight`` their total weight,
    ``rows`` their number), ``k`` values per row, ``total`` T = Σ_i R_i, ``row_squares``
    Σ_i R_i² and ``column_squares`` Σ_j C_j² (R_i: row i's successes, C_j: column j's;
    weighted sums)."""

    n: E
    k: E
    total: E
    row_squares: E
    column_squares: E
    rows: E = None


@formula
def cochrans_q(ops: Any, k: E, total: E, row_squares: E, column_squares: E) -> E:
    """(k - 1)(k Σ_j C_j² - T²) / (k T - Σ_i R_i²): Cochran's Q; NaN where every row is all
    successes or all failures (k T = Σ_i R_i²)."""
    den = k * total - row_squares
    return ops.when(den == 0, ops.nan(), (k - 1) * (k * column_squares - total * total) / den)


def _known(ops: Any, s: Any, value: E) -> E:
    """``value``, NULL over no known rows (or known rows of total weight 0)."""
    if s.rows is not None:
        value = ops.when(s.n == 0, None, value)
    return ops.when((s.n if s.rows is None else s.rows) == 0, None, value)


def _cochrans_q(ops: Any, s: OutcomeStats) -> E:
    return _known(ops, s, cochrans_q(ops, s.k, s.total, s.row_squares, s.column_squares))


def _cochrans_q_p_value(ops: Any, s: OutcomeStats) -> E:
    q = cochrans_q(ops, s.k, s.total, s.row_squares, s.column_squares)
    return _known(ops, s, C.chi2_upper_tail(ops, q, s.k - 1))


OUTCOMES = ("correct",)
measure(
    "cochrans_q_statistic",
    "aggregate",
    FAMILY,
    "Cochran's Q of k >= 2 models' 0/1 outcomes per row (correct: one list per row): "
    "statsmodels' cochrans_q statistic.",
    inputs=OUTCOMES,
)(_cochrans_q)
measure(
    "cochrans_q_p_value",
    "aggregate",
    FAMILY,
    "P(X > Q), X chi-square with k - 1 degrees of freedom, of Cochran's Q (correct: one list "
    "of k 0/1 outcomes per row): statsmodels' cochrans_q pvalue.",
    inputs=OUTCOMES,
)(_cochrans_q_p_value)
