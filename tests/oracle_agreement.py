"""statsmodels as the reference for the 2x2 agreement tests, on the table rows = actual.

``statsmodels.stats.contingency_tables.mcnemar(table, exact=False, correction=...)`` and
``statsmodels.stats.inter_rater.cohens_kappa(table)`` on ``[[tp, fn], [fp, tn]]``. Where
statsmodels divides 0 by 0 (or rounds a variance that is exactly 0), the value is the one
mlsql documents, decided here from the counts with exact fractions: NaN where the test is
undefined, 0 for kappa's standard error where its variance is 0 exactly
(tests/test_agreement.py checks those variances are 0 exactly). No table (n = 0) gives
None, as an aggregate over no rows.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

NAN = float("nan")


def _table(tp: float, fp: float, fn: float, tn: float) -> Any:
    import numpy as np

    return np.array([[tp, fn], [fp, tn]], dtype=float)


def mcnemar(tp: float, fp: float, fn: float, tn: float, what: str, correction: float = 1.0) -> Any:
    """McNemar's chi-square ``statistic`` or ``pvalue`` (statsmodels, exact=False)."""
    from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar

    if tp + fp + fn + tn == 0:
        return None
    if fp + fn == 0:
        return NAN  # statsmodels: 0 / 0, or (0 - 1)² / 0 = inf with correction
    if correction in (0, 1):
        result = sm_mcnemar(_table(tp, fp, fn, tn), exact=False, correction=bool(correction))
        return float(getattr(result, what))
    # statsmodels takes only True / False: other corrections from the definition
    from scipy.stats import chi2

    statistic = (abs(fp - fn) - correction) ** 2 / (fp + fn)
    return statistic if what == "statistic" else float(chi2.sf(statistic, 1))


def _one_class_both(tp: float, fp: float, fn: float, tn: float) -> bool:
    return fp + fn == 0 and (tp == 0 or tn == 0)


def _one_class_either(tp: float, fp: float, fn: float, tn: float) -> bool:
    return 0 in (tp + fn, fp + tn, tp + fp, fn + tn)


def _zero_variance(tp: float, fp: float, fn: float, tn: float) -> bool:
    """Perfect agreement, perfect disagreement of balanced classes, or one class on a side."""
    disagree = tp == tn == 0 and fp == fn
    return fp + fn == 0 or disagree or _one_class_either(tp, fp, fn, tn)


def cohens_kappa(tp: float, fp: float, fn: float, tn: float, what: str) -> Any:
    """``std_kappa``, ``z_value``, ``pvalue_two_sided`` or ``pvalue_one_sided`` of
    statsmodels' cohens_kappa."""
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

    if tp + fp + fn + tn == 0:
        return None
    if _one_class_both(tp, fp, fn, tn):
        return NAN  # agree_exp = 1: kappa is 0 / 0
    if what != "std_kappa" and _one_class_either(tp, fp, fn, tn):
        return NAN  # kappa = 0 and std_kappa0 = 0
    if what == "std_kappa" and _zero_variance(tp, fp, fn, tn):
        return 0.0  # var_kappa is 0 exactly (statsmodels rounds it: tiny, or NaN below 0)
    return float(sm_kappa(_table(tp, fp, fn, tn))[what])


def exact_var_kappa(tp: int, fp: int, fn: int, tn: int) -> Fraction:
    """var_kappa of the Fleiss, Cohen and Everitt (1969) formula, in exact fractions."""
    n = tp + fp + fn + tn
    p = {(1, 1): Fraction(tp, n), (1, 0): Fraction(fn, n), (0, 1): Fraction(fp, n)}
    p[0, 0] = Fraction(tn, n)
    row = {i: p[i, 1] + p[i, 0] for i in (0, 1)}
    col = {j: p[1, j] + p[0, j] for j in (0, 1)}
    pe = sum(row[i] * col[i] for i in (0, 1))
    kappa = (p[1, 1] + p[0, 0] - pe) / (1 - pe)
    a = sum(p[i, i] * (1 - (row[i] + col[i]) * (1 - kappa)) ** 2 for i in (0, 1))
    b = (1 - kappa) ** 2 * sum(p[i, j] * (col[i] + row[j]) ** 2 for i, j in ((1, 0), (0, 1)))
    c = (kappa - pe * (1 - kappa)) ** 2
    return (a + b - c) / (1 - pe) ** 2 / n


def close_to_exact_std(value: float, tp: int, fp: int, fn: int, tn: int) -> bool:
    """Whether ``value`` is sqrt(var_kappa) to 1e-12 relative."""
    return math.isclose(value, math.sqrt(exact_var_kappa(tp, fp, fn, tn)), rel_tol=1e-12)


# ------------------------------------------------------------------ k classes
#: what statsmodels' cohens_kappa(table) names each k-class measure's value
KAPPA_RESULTS = {
    "cohen_kappa_std_error": "std_kappa",
    "cohen_kappa_z_value": "z_value",
    "cohen_kappa_p_value": "pvalue_two_sided",
    "cohen_kappa_p_value_one_sided": "pvalue_one_sided",
    "cohen_kappa_low": "kappa_low",
    "cohen_kappa_high": "kappa_upp",
}


#: the measures of the z test (NaN where var_kappa0 is 0)
Z_TESTS = ("cohen_kappa_z_value", "cohen_kappa_p_value", "cohen_kappa_p_value_one_sided")


def confusion(rows: list[tuple[Any, Any]]) -> list[list[int]]:
    """The confusion matrix of known (actual, predicted) rows over the sorted classes
    seen on either side (rows: actual, columns: predicted)."""
    known = [(a, p) for a, p in rows if a is not None and p is not None]
    classes = sorted({a for a, _ in known} | {p for _, p in known})
    at = {c: i for i, c in enumerate(classes)}
    m = [[0] * len(classes) for _ in classes]
    for a, p in known:
        m[at[a]][at[p]] += 1
    return m


def exact_kappa_variance(m: list[list[int]]) -> tuple[Fraction, Fraction]:
    """var_kappa and var_kappa0 of statsmodels' simple kappa, in exact fractions (the
    Fleiss, Cohen and Everitt formula as statsmodels writes it)."""
    k, n = len(m), sum(map(sum, m))
    p = [[Fraction(x, n) for x in row] for row in m]
    r = [sum(row) for row in p]
    c = [sum(p[i][j] for i in range(k)) for j in range(k)]
    pe = sum(r[i] * c[i] for i in range(k))
    kappa = (sum(p[i][i] for i in range(k)) - pe) / (1 - pe)
    a = sum(p[i][i] * (1 - (r[i] + c[i]) * (1 - kappa)) ** 2 for i in range(k))
    b = (1 - kappa) ** 2 * sum(
        p[i][j] * (c[i] + r[j]) ** 2 for i in range(k) for j in range(k) if i != j
    )
    var = (a + b - (kappa - pe * (1 - kappa)) ** 2) / (1 - pe) ** 2 / n
    var0 = (pe + pe**2 - sum(c[i] * r[i] * (c[i] + r[i]) for i in range(k))) / ((1 - pe) ** 2 * n)
    return var, var0


def exact_weighted_kappa_variance(m: list[list[int]], wt: str) -> tuple[Fraction, Fraction]:
    """var_kappa and var_kappa0 of statsmodels' weighted kappa (``cohens_kappa(m, wt=wt)``,
    wt 'linear' or 'quadratic') in exact fractions, as statsmodels writes them: scores 0..k-1,
    disagreement |i - j| / (k - 1) or its square, agreement weights w = 1 - that."""
    k, n = len(m), sum(map(sum, m))
    p = [[Fraction(x, n) for x in row] for row in m]
    r = [sum(row) for row in p]
    c = [sum(p[i][j] for i in range(k)) for j in range(k)]
    power = 1 if wt == "linear" else 2
    w = [[1 - Fraction(abs(i - j), k - 1) ** power for j in range(k)] for i in range(k)]
    e = [[r[i] * c[j] for j in range(k)] for i in range(k)]
    cells = [(i, j) for i in range(k) for j in range(k)]
    kappa = 1 - sum((1 - w[i][j]) * p[i][j] for i, j in cells) / sum(
        (1 - w[i][j]) * e[i][j] for i, j in cells
    )
    w_row = [sum(c[j] * w[i][j] for j in range(k)) for i in range(k)]
    w_col = [sum(r[i] * w[i][j] for i in range(k)) for j in range(k)]
    pe = sum(w[i][j] * e[i][j] for i, j in cells)
    fac = 1 / ((1 - pe) ** 2 * n)
    a = sum(p[i][j] * (w[i][j] - (w_col[j] + w_row[i]) * (1 - kappa)) ** 2 for i, j in cells)
    var = (a - (kappa - pe * (1 - kappa)) ** 2) * fac
    var0 = (sum(e[i][j] * (w[i][j] - (w_col[j] + w_row[i])) ** 2 for i, j in cells) - pe**2) * fac
    return var, var0


def kappa_test(rows: list[tuple[Any, Any]], name: str, weights: str | None = None) -> Any:
    """``name`` (a key of :data:`KAPPA_RESULTS`) of statsmodels' cohens_kappa on the rows'
    confusion matrix; where statsmodels divides 0 by 0 or rounds a variance that is 0
    exactly, the documented value decided from exact fractions: NaN for every test with one
    class on both sides, NaN for z and p where var_kappa0 is 0, a standard error of 0 (and
    an interval of kappa alone) where var_kappa is 0. ``weights`` 'linear' or 'quadratic':
    statsmodels' ``wt``, over the sorted classes seen on either side."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa as sm_kappa

    m = confusion(rows)
    if not m:
        return None
    if len(m) == 1:
        return NAN  # one class on both sides: the expected agreement is 1
    if weights is None:
        var, var0 = exact_kappa_variance(m)
    else:
        var, var0 = exact_weighted_kappa_variance(m, weights)
    if name in Z_TESTS and var0 == 0:
        return NAN  # kappa = 0 and var_kappa0 = 0
    result = sm_kappa(np.array(m, dtype=float), wt=weights)
    if var == 0 and name not in Z_TESTS:
        # statsmodels rounds it: a tiny number, or NaN below 0
        return 0.0 if name == "cohen_kappa_std_error" else float(result["kappa"])
    return float(result[KAPPA_RESULTS[name]])


#: what statsmodels' SquareTable(table).symmetry() names each Bowker measure's value
BOWKER_RESULTS = {"bowker_statistic": "statistic", "bowker_p_value": "pvalue"}


def bowker(rows: list[tuple[Any, Any]], name: str) -> Any:
    """``name`` (a key of :data:`BOWKER_RESULTS`) of statsmodels' Bowker test of symmetry,
    ``SquareTable(table, shift_zeros=False).symmetry()``, on the rows' confusion matrix over
    the classes on either side (statsmodels' default shifts 0 cells to 0.5); None over no
    known rows. One class gives statistic 0 and p-value NaN (statsmodels' chi2.sf(0, 0))."""
    import numpy as np
    from statsmodels.stats.contingency_tables import SquareTable

    m = confusion(rows)
    if not m:
        return None
    result = SquareTable(np.array(m, dtype=float), shift_zeros=False).symmetry(method="bowker")
    return float(getattr(result, BOWKER_RESULTS[name]))


# ------------------------------------------------------------------ several raters
def fleiss(ratings: list[list[Any] | None], weights: list[Any] | None = None) -> Any:
    """statsmodels' ``fleiss_kappa(aggregate_raters(ratings)[0])`` over the known rows (NULL
    elements left out; a row of weight w counts w times), beside the value in exact
    fractions, which decides where statsmodels divides 0 by 0 (every rating of one
    category: NaN). None over no known rows (or known rows of total weight 0)."""
    import numpy as np
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    rows = []
    for i, r in enumerate(ratings):
        w = 1 if weights is None else weights[i]
        if r is None or w is None:
            continue
        rows += [[x for x in r if x is not None]] * int(w)
    if not rows:
        return None
    categories = sorted({x for r in rows for x in r}, key=repr)
    codes = np.array([[categories.index(x) for x in r] for r in rows])
    table, _ = aggregate_raters(codes, n_cat=len(categories))
    total = Fraction(len(rows) * len(rows[0]))
    chance = sum((Fraction(int(t)) / total) ** 2 for t in table.sum(0))
    if chance == 1:
        return NAN
    return float(fleiss_kappa(table))


def exact_fleiss(ratings: list[list[Any]]) -> Fraction:
    """Fleiss' kappa by its definition, (P̄ - P_e) / (1 - P_e), in exact fractions."""
    m = len(ratings[0])
    categories = {x for r in ratings for x in r}
    p_bar = sum(
        Fraction(sum(r.count(c) * (r.count(c) - 1) for c in categories), m * (m - 1))
        for r in ratings
    ) / len(ratings)
    total = len(ratings) * m
    p_e = sum(Fraction(sum(r.count(c) for r in ratings), total) ** 2 for c in categories)
    return (p_bar - p_e) / (1 - p_e)


def cochran(correct: list[list[Any] | None], what: str) -> Any:
    """statsmodels' ``cochrans_q(x)`` ``statistic`` or ``pvalue`` over the complete rows (no
    NULL list, no NULL value), beside Q in exact fractions, which decides where statsmodels
    divides 0 by 0 (every row all 1 or all 0: NaN). None over no complete rows."""
    import numpy as np
    from statsmodels.stats.contingency_tables import cochrans_q

    rows = [[int(x) for x in r] for r in correct if r is not None and None not in r]
    if not rows:
        return None
    k, successes = len(rows[0]), [sum(r) for r in rows]
    if k * sum(successes) == sum(s * s for s in successes):
        return NAN
    return float(getattr(cochrans_q(np.array(rows)), what))


def exact_cochran(rows: list[list[int]]) -> Fraction:
    """Cochran's Q, (k - 1)(k Σ C_j² - T²) / (k T - Σ R_i²), in exact fractions."""
    k = len(rows[0])
    r = [sum(x) for x in rows]
    c = [sum(x[j] for x in rows) for j in range(k)]
    t = sum(r)
    return Fraction((k - 1) * (k * sum(x * x for x in c) - t * t), k * t - sum(x * x for x in r))
