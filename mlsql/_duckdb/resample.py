"""``bootstrap`` and ``compare`` on DuckDB: the statistics table in SQL, the resample in Python.

The one pass over the data is a DuckDB ``GROUP BY`` of each row's statistics
(tp, |A|, |P| from mlsql's macros, native where built; or the (actual,
predicted) cell); its few rows go to :mod:`mlsql._resample.run`.

The Python call draws with numpy, from the same streams as Polars and Spark,
and resamples every measure family; label lists (the macro and weighted
averages) come back as an Arrow table, never a Python object per label. The
SQL table macros ``bootstrap`` and ``compare``
(:mod:`mlsql._duckdb.families.resample`) draw in DuckDB alone, from a
counter-based ``hash`` stream, for the same kinds (other streams, so other
intervals within Monte Carlo error; the same estimates).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import duckdb

from mlsql import _label_types as LT
from mlsql._duckdb.label_tables import source_text
from mlsql._duckdb.threads import in_this_thread
from mlsql._front.docs import shared_entries
from mlsql._resample import front, run
from mlsql._resample.numbers import CLASS_SCORE_STATS
from mlsql._sqlexpr import lit, quote_ident

_INTEGER = re.compile(r"U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?")


def _kind(type_name: str) -> tuple[bool, str]:
    """(is a list, label kind) of a DuckDB type."""
    match = re.fullmatch(r"(.*)\[\d*\]", type_name)
    element = match.group(1) if match else type_name
    if element == '"NULL"' or element == "NULL":
        kind = LT.NULL
    elif _INTEGER.fullmatch(element):
        kind = LT.INTEGER
    elif element == "VARCHAR" or element.startswith("ENUM("):
        kind = LT.TEXT
    else:
        kind = element
    return match is not None, kind


def _has_macros(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether mlsql's macros are on ``con`` (a probe, not a catalog scan)."""
    try:
        con.execute("SELECT _mlsql_tp(['a'], ['a'])").fetchall()
    except duckdb.Error:
        return False
    return True


def _ensure_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Register mlsql's macros on ``con`` unless they are there."""
    if not _has_macros(con):
        from mlsql._duckdb.register import register

        register(con)


@contextmanager
def _source(data: Any, con: duckdb.DuckDBPyConnection | None, func: str) -> Iterator[Any]:
    """(connection, FROM clause, parameters, columns, types) of ``data``."""
    own = getattr(data, "_con", None) if isinstance(data, duckdb.DuckDBPyRelation) else None
    if con is None and own is not None and _has_macros(own):
        con = own  # a relation of an mlsql connection is read where it lives, not copied
    elif con is not None and own is not None and own is not con:
        data = data.to_arrow_table()  # a relation of another connection: copied to ``con``
    if con is None:
        from mlsql._duckdb.register import connect

        con = connect()
        if isinstance(data, duckdb.DuckDBPyRelation):  # from another connection: copy it
            data = data.to_arrow_table()
    _ensure_macros(con)
    if isinstance(data, os.PathLike):
        data = os.fspath(data)
    with source_text(con, data, func) as src:
        clause, params = src.from_clause()
        probe = src.probe(con, func)
        yield con, clause, params, list(probe.columns), [str(t) for t in probe.types]


def _number_kind(kind: str) -> str:
    """The engines' kind of a DuckDB scalar type name as :func:`front.check_numbers` reads it."""
    if kind in ("DOUBLE", "FLOAT", "REAL"):
        return "float"
    if kind.startswith("DECIMAL"):
        return "decimal"
    return "boolean" if kind == "BOOLEAN" else kind


def _stats_sql(
    stats: str, actual: str, predicted: str, sets: bool = True, func: str = "bootstrap"
) -> list[str]:
    """Each row's statistics; label lists as sorted sets, or as the rows hold them where not
    ``sets`` (:func:`mlsql._resample.labels.coded` makes them sets: DuckDB's
    ``list_sort(list_distinct())`` costs more than the GROUP BY it saves rows of)."""
    a, p = quote_ident(actual), quote_ident(predicted)
    if stats == "class_scores":  # each row's numbers (NULL where a side is), checked as read
        row = f"_mlsql_class_score_row({a}, {p}, {lit(func)})"
        return [f"({row}).{name}" for name in CLASS_SCORE_STATS]
    if stats in ("regression", "scores"):  # both sides NULL where one is; -0.0 as 0.0
        known = f"{a} IS NOT NULL AND {p} IS NOT NULL"
        return [f"CASE WHEN {known} THEN CAST({x} AS DOUBLE) + 0.0 END" for x in (a, p)]
    if stats == "label_sets":
        return [
            f"_mlsql_tp({a}, {p})",
            f"_mlsql_n_actual({a}, {p})",
            f"_mlsql_n_predicted({a}, {p})",
        ]
    if stats == "label_lists" and sets:  # as sorted lists (NULL elements dropped)
        return [f"list_sort(list_distinct({a}))", f"list_sort(list_distinct({p}))"]
    return [a, p]


def _fetch(relation: duckdb.DuckDBPyRelation, req: front.Request) -> Any:
    """The statistics table: an Arrow table of label lists (no Python object per label),
    else rows."""
    if req.stats != "label_lists":
        return relation.fetchall()
    to_arrow = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
    return to_arrow()


def _weight_sql(sample_weight: str | None, func: str) -> str:
    """A row's weight, checked as the weighted measures check it (1 when unweighted)."""
    if sample_weight is None:
        return "1.0::DOUBLE"
    return f"_mlsql_weight({quote_ident(sample_weight)}, {lit(func)})"


def _check(
    req: front.Request, columns: list[str], types: list[str], actual: str, predicted: str
) -> None:
    shown = [types[columns.index(actual)], types[columns.index(predicted)]]
    kinds = [_kind(t) for t in shown]
    if front.is_numbers(req):
        front.check_numbers(
            req,
            ["actual", "predicted"],
            [k[0] for k in kinds],
            [_number_kind(k[1]) for k in kinds],
            shown,
        )
        return
    front.check_labels(
        req, ["actual", "predicted"], [k[0] for k in kinds], [k[1] for k in kinds], shown
    )


@shared_entries("draws", front.draws("str"))
def bootstrap(
    data: Any,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    *,
    by: str | Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    sample_weight: str | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> duckdb.DuckDBPyRelation:
    """Bootstrap intervals of measures, one row per group and measure.

    Parameters
    ----------
    data : str, os.PathLike, DuckDBPyRelation or DataFrame
        A table or view name, a query, a Parquet, CSV or JSON path (read on
        ``con``), a relation, or an Arrow table, Polars or pandas DataFrame. Or an
        ibis table expression: its statistics table is computed in its own
        database and the result is an ibis memtable (docs/guides/ibis.md; the
        label-set, single-label, regression and score measures so far).
    actual, predicted : str
        The columns of true and predicted labels: label lists for the
        multi-label measures, one label per row for the single-label ones;
        numbers for the regression measures; a boolean or 0/1 label and a
        score (a probability for brier_score_loss and expected_calibration_error)
        for the score measures.
    measures : sequence
        Measure names, or ``(name, {parameter: value})`` pairs (``("micro_fbeta",
        {"beta": 2})``, ``("hamming_loss", {"n_labels": 20})``). Resampled: every
        micro measure, the samples averages, subset_accuracy, zero_one_loss,
        hamming_loss, fmeasure, the macro_* and weighted_* averages
        (precision, recall, fbeta, f1, jaccard), macro_f1_of_means,
        macro_fbeta_of_means, label_accuracy_micro, label_accuracy_macro, clp,
        mlp and wlp over label lists; accuracy, error_rate,
        precision_score, recall_score, fbeta_score, f1_score,
        balanced_accuracy_score, cohen_kappa_score and matthews_corrcoef over
        one label per row; mse, rmse, mae, mape, rse, rrse, rae, pearson_corr,
        r2 and explained_variance over numbers; logloss, auc,
        average_precision_score, area_under_pr, brier_score_loss and
        expected_calibration_error over a label and a score;
        multiclass_brier_score and multiclass_calibration_error over a label
        and its class probabilities (a MAP or a list of {label, score}
        structs). Measures of one kind of input per call.
    <draws>
    con : duckdb.DuckDBPyConnection, optional
        The connection that reads ``data`` (a fresh ``mlsql.connect()`` if
        None; a relation from another connection is then copied).

    Returns
    -------
    duckdb.DuckDBPyRelation
        Columns: the ``by`` columns, measure, estimate (the measure on the data),
        low and high (the percentile interval), std_error (standard deviation of
        the resampled values), ordered by group (NULL first) and measure as given.

    Notes
    -----
    A Poisson bootstrap: each row gets an independent Poisson(1) weight per
    resample; a resample's measure is the measure of the rows repeated by
    their weights. Rows with the same statistics (tp, |A|, |P|; or the
    (actual, predicted) cell) are exchangeable and the sum of m Poisson(1)
    weights is Poisson(m), so mlsql draws one Poisson(m) weight per distinct
    tuple: exact, at a cost independent of the number of rows. The regression
    and score measures' values rarely repeat: each row draws its own weight,
    so their cost grows as rows x resamples (at a million rows, 1,000
    resamples took 40 s to 2 min; memory stays bounded, a batch of resamples
    at a time). Resamples where the measure is undefined (NULL or NaN) are left out of the interval. The
    interval is the percentile interval (no BCa). Each group's random stream
    is ``PCG64(SeedSequence([seed, *key]))``, ``key`` from the SHA-256 of the
    group's values: the GROUP BY runs in DuckDB, the draws in numpy. The macro
    and weighted averages' tuples are the rows' label sets, about one per row:
    their cost grows as (labels of a row) x rows x resamples, summed per label
    in numpy. The SQL table macro ``bootstrap`` draws in DuckDB itself (other
    streams; docs/guides/uncertainty.md).

    Examples
    --------
    >>> import mlsql, pyarrow as pa
    >>> preds = pa.table({"actual": [["a", "b"], ["b"], ["a"]] * 20,
    ...                   "predicted": [["a"], ["b"], ["b"]] * 20})
    >>> out = mlsql.bootstrap(preds, "actual", "predicted", ["micro_f1"], n_resamples=200)
    >>> out.columns
    ['measure', 'estimate', 'low', 'high', 'std_error']
    >>> out.fetchall()[0][:2]
    ('micro_f1', 0.5714285714285714)
    """
    given = con = in_this_thread(con)
    with _source(data, con, "bootstrap") as (con, clause, params, columns, types):
        req = front.request(
            "bootstrap",
            columns,
            front.with_weight({"actual": actual, "predicted": predicted}, sample_weight),
            by,
            measures,
            n_resamples,
            confidence,
            seed,
        )
        _check(req, columns, types, actual, predicted)
        groups = [quote_ident(b) for b in req.by]
        stats = [
            *_stats_sql(req.stats, actual, predicted, sets=False, func=req.func),
            _weight_sql(sample_weight, req.func),
        ]
        select = ", ".join([*groups, *stats, "count(*)"])
        rows = _fetch(con.sql(f"SELECT {select} {clause} GROUP BY ALL", params=params), req)
    out = run.bootstrap(rows, len(req.by), req.chosen, req.n_resamples, req.confidence, req.seed)
    return _relation(given, [*req.by, *front.BOOTSTRAP_COLUMNS], out, len(req.by))


def compare(
    data: Any,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    *,
    model: str = "model",
    id: str = "id",
    baseline: Any = "A",
    by: str | Sequence[str] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    sample_weight: str | None = None,
    drop_unpaired: bool = False,
    test: str = "bootstrap",
    con: duckdb.DuckDBPyConnection | None = None,
) -> duckdb.DuckDBPyRelation:
    """Paired comparison of every model with the baseline: difference, interval, p-values.

    Parameters
    ----------
    data, actual, predicted, measures, by, n_resamples, confidence, seed, sample_weight, con
        As in :func:`bootstrap`; ``data`` holds one row per (model, id).
    model : str, default 'model'
        The column naming each row's model.
    id : str, default 'id'
        The column pairing rows across models (unique within a model and group).
    baseline : default 'A'
        The model value every other model is compared with.
    drop_unpaired : bool, default False
        Leave out rows whose id has no row of the other model; by default they
        are an error that says how many there are.
    test : {'bootstrap', 'student', 'fisher'}, default 'bootstrap'
        How ``p_value`` is computed: the paired bootstrap's, or ranx's paired
        Student's t test or Fisher's randomization test (``n_resamples``
        permutations drawn from ``seed``) over the per-id values of a measure
        that is a mean over rows (the samples averages, subset_accuracy,
        zero_one_loss, hamming_loss, accuracy, error_rate; of numbers mse, mae
        and mape, not the ratios rmse, r2, ...), unweighted.

    Returns
    -------
    duckdb.DuckDBPyRelation
        Columns: the ``by`` columns, model, measure, baseline_estimate, estimate,
        difference (model - baseline), low and high (percentile interval of the
        difference), p_value (two-sided paired bootstrap), mcnemar_p_value
        (McNemar's exact test, for per-row 0/1 outcomes: subset_accuracy,
        zero_one_loss, accuracy, error_rate; NULL for other measures, and where
        weights are not whole numbers equal for both rows of an id: weights
        count as repeated rows).

    Notes
    -----
    Both models of an id get the same Poisson weight in each resample (the
    statistics tuple is the pair of both rows' statistics). The bootstrap
    p-value is min(1, 2 min((1 + #{d* <= 0}) / (B + 1), (1 + #{d* >= 0}) /
    (B + 1))) over the B resampled differences d*: it is below 1 - confidence
    exactly when the percentile interval leaves 0 out (up to the +1 terms);
    identical models give 1. McNemar's exact test: b ids right for the
    baseline only, c for the model only, p = min(1, 2 P(X <= min(b, c))) with
    X ~ Binomial(b + c, 1/2). The SQL table macro ``compare`` gives the same
    columns, estimates and McNemar p-values in DuckDB alone, for the label-set
    measures (docs/guides/uncertainty.md), and ``test := 'student'``'s p-values;
    its ``test := 'fisher'`` draws are its own (a seed repeats the macro's
    p-value, not this call's).

    ``test='student'`` is scipy's ``ttest_rel`` of the per-id values (ranx's
    ``stat_test='student'``); ``test='fisher'`` is ranx's randomization test,
    p = the share of the ``n_resamples`` random swaps of each id's two rows
    whose |mean difference| reaches the observed one (no +1, as ranx). Ids
    with an undefined value on either side are left out; the interval stays
    the bootstrap's. The draws and the other details are those of
    :mod:`mlsql._resample.paired`.

    Examples
    --------
    >>> import mlsql, pyarrow as pa
    >>> rows = pa.table({"id": [1, 2, 3, 1, 2, 3], "model": ["A"] * 3 + ["B"] * 3,
    ...                  "actual": ["x", "y", "x"] * 2, "predicted": ["x", "x", "x", "x", "y", "x"]})
    >>> out = mlsql.compare(rows, "actual", "predicted", ["accuracy"], n_resamples=200)
    >>> out.fetchall()[0][:5]
    ('B', 'accuracy', 0.6666666666666666, 1.0, 0.33333333333333337)
    >>> mlsql.compare(rows, "actual", "predicted", ["accuracy"], test="fisher").fetchall()[0][7]
    1.0
    """
    given = con = in_this_thread(con)
    with _source(data, con, "compare") as (con, clause, params, columns, types):
        req = front.request(
            "compare",
            columns,
            front.with_weight(
                {"actual": actual, "predicted": predicted, "model": model, "id": id},
                sample_weight,
            ),
            by,
            measures,
            n_resamples,
            confidence,
            seed,
            test,
        )
        _check(req, columns, types, actual, predicted)
        groups = [quote_ident(b) for b in req.by]
        exprs = [
            *_stats_sql(req.stats, actual, predicted, sets=False, func=req.func),
            _weight_sql(sample_weight, req.func),
        ]
        names = [f"__mlsql_s{i}" for i in range(len(exprs))]
        stats = [f"{e} AS {n}" for e, n in zip(exprs, names, strict=True)]
        keyed = ", ".join(
            [
                *groups,
                f"{quote_ident(model)} AS __mlsql_model",
                f"{quote_ident(id)} AS __mlsql_id",
                *stats,
            ]
        )
        rows_sql = f"SELECT {keyed} {clause}"
        totals = dict(
            con.sql(
                f"SELECT __mlsql_model, count(*) FROM ({rows_sql}) GROUP BY ALL", params=params
            ).fetchall()
        )
        keys = ", ".join([*groups, "__mlsql_model", "__mlsql_id"])
        repeated = con.sql(
            f"SELECT count(*) - count(DISTINCT ({keys})) FROM ({rows_sql})", params=params
        ).fetchall()[0][0]
        same_group = "".join(f" AND m.{g} IS NOT DISTINCT FROM b.{g}" for g in groups)
        select = ", ".join(
            [
                *(f"m.{g}" for g in groups),
                "m.__mlsql_model",
                *(f"b.{n}" for n in names),
                *(f"m.{n}" for n in names),
                "count(*)",
            ]
        )
        # NOT MATERIALIZED: each side reads the rows with its filter pushed down (the model
        # rows of the baseline alone), rather than a stored copy of every row's lists
        # (0.9 against 1.3 CPU s for 4 models x 250k rows of label lists)
        paired_sql = (
            f"WITH s AS NOT MATERIALIZED ({rows_sql}) SELECT {select} FROM s AS m JOIN s AS b "
            f"ON m.__mlsql_id = b.__mlsql_id{same_group} AND b.__mlsql_model = ? "
            f"WHERE m.__mlsql_model <> ? GROUP BY ALL"
        )
        if baseline in totals:
            rows = _fetch(con.sql(paired_sql, params=[*params, baseline, baseline]), req)
        else:
            rows = []
    out = front.compared(req, model, id, baseline, totals, rows, repeated, drop_unpaired)
    return _relation(given, [*req.by, *front.COMPARE_COLUMNS], out, len(req.by))


def _relation(
    con: duckdb.DuckDBPyConnection | None,
    names: list[str],
    rows: list[tuple[Any, ...]],
    n_by: int,
) -> duckdb.DuckDBPyRelation:
    """The result rows as a relation (typed from the values; empty results keep the columns),
    on ``con``, or on DuckDB's default connection where the call made its own: DuckDB 1.x
    closes a connection with its last Python reference, and its relations with it."""
    import pyarrow as pa

    columns: list[Any] = list(zip(*rows, strict=True)) if rows else [[] for _ in names]
    arrays = {}
    for i, name in enumerate(names):
        values = list(columns[i])
        if i >= n_by and name not in ("model", "measure"):
            arrays[name] = pa.array(values, type=pa.float64())
        elif i >= n_by and name == "measure":
            arrays[name] = pa.array(values, type=pa.string())
        else:
            arrays[name] = pa.array(values) if values else pa.array([], type=pa.null())
    if con is None:
        return duckdb.from_arrow(pa.table(arrays))
    return con.from_arrow(pa.table(arrays))
