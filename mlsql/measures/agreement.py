"""Agreement among several raters: Fleiss' kappa.

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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mlsql._formulas import formula
from mlsql._registry import measure

E = Any  # an engine expression
FAMILY = "agreement"

#: the error of rows rated by different numbers of raters (or by fewer than 2), every engine
RATERS_MESSAGE = (
    "{func} needs the same number of ratings on every row, at least 2 (a label per rater, "
    "NULL elements left out)."
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
