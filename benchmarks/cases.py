"""Benchmark cases, one line each.

A case is an engine, a name and a body:

- ``duckdb``: an SQL string; ``{f}`` is replaced by the Parquet path. With
  ``mlsql=True`` the connection comes from ``mlsql.connect()`` (the native
  extension's counts where it is built), with ``portable=True`` from
  ``mlsql.register(duckdb.connect())`` (the portable macros), otherwise
  from ``duckdb.connect()``. The result is fetched with ``fetchall()``.
- ``polars``, ``sklearn``, ``spark``, ``mllib``: a callable taking an :class:`Env`
  (the path as ``e.f``, the engine's handles, and ``e.mlsql``, the engine's
  mlsql module when ``mlsql=True``).

Each case runs once per file in ``files`` in its own subprocess (see
``run.py``); its time is the best of ``--repeat`` runs and its ratio is to
``baseline`` (by default the same engine's ``bare scan``) on the same file.
Heavy imports happen inside the worker, never at module level here, so the
peak RSS of a case only counts the engine it uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Data files written by ``generate.py``, by short name.
FILES: tuple[str, ...] = ("strings", "ints", "dirty_strings")
CLEAN: tuple[str, ...] = ("strings", "ints")

#: The module a case with ``mlsql=True`` needs, per engine.
MLSQL_MODULES: dict[str, str] = {
    "duckdb": "mlsql",
    "polars": "mlsql.polars",
    "spark": "mlsql.spark",
}


@dataclass
class Env:
    """What a callable case body receives.

    Attributes
    ----------
    f : str
        Path of the Parquet file.
    con : Any
        DuckDB connection (``duckdb`` cases).
    pl : Any
        The ``polars`` module (``polars`` cases).
    spark : Any
        SparkSession (``spark`` cases).
    F : Any
        ``pyspark.sql.functions`` (``spark`` cases).
    mlsql : Any
        The engine's mlsql module, for cases with ``mlsql=True``.
    """

    f: str = ""
    con: Any = None
    pl: Any = None
    spark: Any = None
    F: Any = None
    mlsql: Any = None


@dataclass(frozen=True)
class Case:
    """One benchmark measure.

    Attributes
    ----------
    engine : str
        ``duckdb``, ``polars``, ``sklearn``, ``spark`` or ``mllib`` (Spark MLlib,
        on a Spark session like ``spark``).
    name : str
        Short name, unique within the engine.
    body : str or callable or None
        SQL with ``{f}`` for DuckDB, else ``body(env)``; None when only the
        engine's setup is timed (``setup_only``).
    files : tuple of str
        Files to run on; empty for a case that reads no file.
    baseline : tuple of (str, str) or None
        ``(engine, name)`` of the case the ratio is taken to, on the same
        file; None means ``(engine, "bare scan")``.
    mlsql : bool
        The case needs mlsql; skipped when mlsql is not importable yet.
    setup_only : bool
        Time the engine setup (e.g. JVM start) instead of a body.
    repeat : int or None
        Runs to take the best of; None uses ``--repeat``.
    portable : bool
        DuckDB: register the portable macros on a plain connection instead of
        ``mlsql.connect()`` (which uses the native extension where built);
        Polars: ``MLSQL_NATIVE=0`` (the portable expressions and plans); Spark:
        ``MLSQL_NATIVE=0`` (Spark SQL's label-set statistics, not mlsql's JVM function).
    cache : str
        DuckDB setup: ``"stored"`` runs ``mlsql.connect()`` once in another
        process first, so the library is stored when the timed one runs;
        ``"empty"`` times it with a new, empty ``MLSQL_CACHE_DIR`` (it builds
        and stores the library); ``""`` leaves the cache as it is.
    """

    engine: str
    name: str
    body: str | Callable[[Env], Any] | None
    files: tuple[str, ...] = FILES
    baseline: tuple[str, str] | None = None
    mlsql: bool = False
    setup_only: bool = False
    repeat: int | None = None
    portable: bool = False
    cache: str = ""

    @property
    def key(self) -> str:
        """Return ``engine:name``, the id used on the worker command line."""
        return f"{self.engine}:{self.name}"

    @property
    def baseline_key(self) -> tuple[str, str]:
        """Return the ``(engine, name)`` the ratio is taken to."""
        return self.baseline or (self.engine, "bare scan")


def _pl_lengths(pl: Any) -> Any:
    """Polars expression: total number of actual and predicted labels."""
    return pl.col("actual").list.len().sum() + pl.col("predicted").list.len().sum()


def _pl_naive_micro_f(pl: Any) -> Any:
    """Polars expression: micro F from list lengths and set_intersection."""
    tp = pl.col("actual").list.set_intersection("predicted").list.len().sum()
    return 2 * tp / _pl_lengths(pl)


def _spark_lengths(e: Env) -> Any:
    """Spark column: total number of actual and predicted labels."""
    return e.F.sum(e.F.size("actual") + e.F.size("predicted"))


def _pl_scored(e: Env) -> Any:
    """The strings file as a binary label (more than two true tags) and a score with about a
    million distinct values (a hash of the true tags): the input of the curve cases."""
    pl = e.pl
    return e.pl.scan_parquet(e.f).select(
        y=pl.col("actual").list.len() > 2, s=(pl.col("actual").hash() % 1_000_000) / 1e6
    )


def _pl_label_scored(e: Env, *keep: str, eager: bool = False) -> Any:
    """The strings file's true tags and a score per predicted tag (its position and a hash of
    the tag): the input of the per-label curve cases. ``keep``: more columns of the file;
    ``eager``: read into memory first (``read_parquet``), a DataFrame."""
    pl = e.pl
    score = (pl.int_range(pl.len()) + 1) / 10 + (pl.element().hash() % 100) / 1000
    source = e.pl.read_parquet(e.f) if eager else e.pl.scan_parquet(e.f)
    return source.select(
        *keep,
        "actual",
        scores=pl.col("predicted").list.eval(pl.struct(label=pl.element(), score=score)),
    )


def _spark_scored(e: Env) -> Any:
    """The same label and score in Spark (Spark's own hash: other scores, as many)."""
    F = e.F
    return e.spark.read.parquet(e.f).select(
        (F.size("actual") > 2).alias("y"), (F.abs(F.hash("actual")) % 1_000_000 / 1e6).alias("s")
    )


def _spark_labels(e: Env) -> Any:
    """The ints file as single labels: each row's first true and first predicted label (every
    row has one; 1,000 classes), as doubles, the type MLlib's evaluators take; both sides of
    the MLlib comparison read these two columns."""
    F = e.F
    return e.spark.read.parquet(e.f).select(
        F.element_at("actual", 1).cast("double").alias("actual"),
        F.element_at("predicted", 1).cast("double").alias("predicted"),
    )


def _spark_evaluate(
    e: Env, df: Any, actual: str, predicted: str, *measures: Any
) -> tuple[float, ...]:
    """``mlsql.spark.evaluate``'s estimates, in the order asked (one row a measure)."""
    return tuple(
        r["estimate"] for r in e.mlsql.evaluate(df, actual, predicted, list(measures)).collect()
    )


def _spark_regression_columns(e: Env) -> tuple[float, ...]:
    """``mse``, ``mae`` and ``mape`` of (y as a number, s) as aggregate Columns in one ``agg``:
    three exact sums over the rows."""
    df = _spark_scored(e).select(e.F.col("y").cast("double").alias("y"), "s")
    m = e.mlsql
    return tuple(df.agg(m.mse("y", "s"), m.mae("y", "s"), m.mape("y", "s")).first())


def _spark_centred_columns(e: Env) -> tuple[float, ...]:
    """``r2``, ``pearson_corr`` and ``explained_variance`` of (y as a number, s) as aggregate
    Columns in one ``agg``: the co-moments of mlsql's Java aggregate, or (portable) each
    group's collected (y, s) pairs."""
    df = _spark_scored(e).select(e.F.col("y").cast("double").alias("y"), "s")
    m = e.mlsql
    return tuple(
        df.agg(m.r2("y", "s"), m.pearson_corr("y", "s"), m.explained_variance("y", "s")).first()
    )


def _spark_weighted_f1_column(e: Env) -> float:
    """``f1_score(average="weighted")`` of :func:`_spark_labels` as an aggregate Column, given
    the DataFrame's Columns (their type known, one form planned): the confusion cells of
    mlsql's Java aggregate, or (portable) the group's collected (actual, predicted) pairs."""
    df = _spark_labels(e)
    return float(df.agg(e.mlsql.f1_score(df.actual, df.predicted, average="weighted")).first()[0])


#: mlsql's weighted F1, MLlib's ``weightedFMeasure`` (F1 per class weighed by its true count)
WEIGHTED_F1 = ("f1_score", {"average": "weighted"})


def binary_2x2() -> tuple[str, ...]:
    """Every binary aggregate of (actual, predicted): the 2x2 cells and their formulas,
    the four kappa tests among them."""
    from mlsql._registry import measures

    return tuple(m.name for m in measures(kind="aggregate", family="binary"))


def mllib_multiclass(e: Env, *metrics: str) -> tuple[float, ...]:
    """Single-label measures with Spark ML's ``MulticlassClassificationEvaluator``, one
    ``evaluate`` (one pass over the data) per metric, as its API asks: the DataFrame form a
    user reaches for first, on :func:`_spark_labels`' columns renamed ``label`` and
    ``prediction``.

    Parameters
    ----------
    e : Env
        Environment with the file path and the Spark session.
    *metrics : str
        ``metricName`` values, e.g. ``"accuracy"``, ``"weightedFMeasure"``.

    Returns
    -------
    tuple of float
        One value per metric.
    """
    from pyspark.ml.evaluation import MulticlassClassificationEvaluator

    F = e.F
    df = _spark_labels(e).select(
        F.col("actual").alias("label"), F.col("predicted").alias("prediction")
    )
    return tuple(MulticlassClassificationEvaluator(metricName=m).evaluate(df) for m in metrics)


def mllib_multiclass_metrics(e: Env) -> tuple[float, float]:
    """Accuracy and weighted F1 with Spark MLlib's RDD ``MulticlassMetrics``: the (prediction,
    label) pairs of :func:`_spark_labels` as an RDD of tuples (through Python, as MLlib's
    Python API takes them), both measures from the one object.

    Parameters
    ----------
    e : Env
        Environment with the file path and the Spark session.

    Returns
    -------
    tuple of float
        Accuracy and ``weightedFMeasure()``.
    """
    from pyspark.mllib.evaluation import MulticlassMetrics

    metrics = MulticlassMetrics(_spark_labels(e).select("predicted", "actual").rdd.map(tuple))
    return float(metrics.accuracy), float(metrics.weightedFMeasure())


def mllib_binary(e: Env, *metrics: str, num_bins: int = 0) -> tuple[float, ...]:
    """Binary measures with Spark ML's ``BinaryClassificationEvaluator`` on
    :func:`_spark_scored`'s label (as double) and score (``rawPrediction``), one ``evaluate``
    per metric.

    Parameters
    ----------
    e : Env
        Environment with the file path and the Spark session.
    *metrics : str
        ``"areaUnderROC"``, ``"areaUnderPR"``.
    num_bins : int
        ``numBins``: 0 is the exact curve (every distinct score, mlsql's ``auc`` and
        ``area_under_pr``); the evaluator's default, 1000, down-samples the sorted scores.

    Returns
    -------
    tuple of float
        One value per metric.
    """
    from pyspark.ml.evaluation import BinaryClassificationEvaluator

    F = e.F
    df = _spark_scored(e).select(
        F.col("y").cast("double").alias("label"), F.col("s").alias("rawPrediction")
    )
    return tuple(
        BinaryClassificationEvaluator(metricName=m, numBins=num_bins).evaluate(df) for m in metrics
    )


def mllib_micro_f1(e: Env) -> float:
    """Micro F1 with Spark MLlib's ``MultilabelMetrics``, the built-in Spark answer.

    MLlib takes an RDD of (predicted, actual) label arrays of doubles, so the
    integer labels are cast to double in the DataFrame first; the RDD then
    goes through Python (pickled rows), as MLlib's Python API requires.

    Parameters
    ----------
    e : Env
        Environment with the file path and the Spark session.

    Returns
    -------
    float
        Micro F1.
    """
    from pyspark.mllib.evaluation import MultilabelMetrics

    F = e.F
    as_double = [F.transform(c, lambda x: x.cast("double")) for c in ("predicted", "actual")]
    pairs = e.spark.read.parquet(e.f).select(*as_double).rdd.map(lambda r: (r[0], r[1]))
    return float(MultilabelMetrics(pairs).microF1Measure)


def sklearn_micro_f1(e: Env) -> float:
    """Micro F1 the scikit-learn way, reading included.

    Parquet is read with pyarrow and turned into Python lists, a
    ``MultiLabelBinarizer(sparse_output=True)`` is fitted on the union of
    actual and predicted labels, and ``f1_score(average="micro")`` scores
    the two sparse indicator matrices.

    Parameters
    ----------
    e : Env
        Environment with the file path.

    Returns
    -------
    float
        Micro F1.
    """
    import pyarrow.parquet as pq
    from sklearn.metrics import f1_score
    from sklearn.preprocessing import MultiLabelBinarizer

    table = pq.read_table(e.f, columns=["actual", "predicted"])
    actual = table.column("actual").to_pylist()
    predicted = table.column("predicted").to_pylist()
    mlb = MultiLabelBinarizer(sparse_output=True).fit(actual + predicted)
    return float(f1_score(mlb.transform(actual), mlb.transform(predicted), average="micro"))


PARQUET = "read_parquet('{f}')"
#: The Parquet source as a query string literal, for table macros taking a source.
PARQUET_QUERY = "'FROM read_parquet(''{f}'')'"
#: the file as two models of one id per row (``compare``): A reads predicted, B drops its first label
PAIRED_QUERY = (
    "'SELECT file_row_number AS id, m.model, actual, CASE m.model WHEN ''A'' THEN predicted "
    "ELSE predicted[2:] END AS predicted FROM read_parquet(''{f}'', file_row_number := true) "
    "CROSS JOIN (VALUES (''A''), (''B'')) m(model)'"
)
#: the file's first quarter as four models of one id per row, the shape of issue 32's data
#: (250k ids x 4 models at --rows 1000000): A reads predicted, B drops its first label, C adds
#: the first true label, D drops its last two labels
FOUR_MODELS = (
    "SELECT file_row_number AS id, m.model, actual, CASE m.model WHEN 'A' THEN predicted "
    "WHEN 'B' THEN predicted[2:] WHEN 'C' THEN list_distinct(predicted || actual[1:1]) "
    "ELSE predicted[:-2] END AS predicted FROM read_parquet('{f}', file_row_number := true) "
    "CROSS JOIN (VALUES ('A'), ('B'), ('C'), ('D')) m(model) "
    "WHERE file_row_number < (SELECT count(*) FROM read_parquet('{f}')) // 4"
)
#: a row weight computed from the file (0.5, 1.5 or 2.5; NULL where actual is NULL), so a
#: weighted case reads the same file as the unweighted one it is compared with
WEIGHT_SQL = "len(actual) % 3 + 0.5"
WEIGHTED_QUERY = f"'SELECT *, {WEIGHT_SQL} AS w FROM read_parquet(''{{f}}'')'"


def _pl_weight(pl: Any) -> Any:
    return pl.col("actual").list.len() % 3 + 0.5


def _pl_classes(e: Any) -> Any:
    """One class per row from the file: each list's length mod 5 (text), and the weight."""
    pl = e.pl
    return e.pl.scan_parquet(e.f).select(
        a=(pl.col("actual").list.len() % 5).cast(pl.String),
        p=(pl.col("predicted").list.len() % 5).cast(pl.String),
        w=_pl_weight(pl),
    )


#: the curve cases' label and score (see ``_pl_scored``), as a query and as a quoted source
SCORED = f"SELECT len(actual) > 2 AS y, (hash(actual) % 1000000) / 1e6 AS s FROM {PARQUET}"
SCORED_QUERY = "'" + SCORED.replace("'", "''") + "'"
#: the per-label curve cases' true tags and scores (see ``_pl_label_scored``)
LABEL_SCORED = (
    "SELECT actual, list_transform(predicted, lambda x, i: struct_pack(label := x, "
    f"score := i / 10 + (hash(x) % 100) / 1000.0)) AS scores FROM {PARQUET}"
)
LABEL_SCORED_QUERY = "'" + LABEL_SCORED.replace("'", "''") + "'"
#: the same tags with a score in [0, 1) per (tag, row's tags): about one distinct score per
#: cell, so an exact per-label table holds every cell (``n_bins`` bounds it)
LABEL_CONTINUOUS = (
    "SELECT actual, list_transform(predicted, lambda x: struct_pack(label := x, "
    f"score := (hash(x, predicted) % 1000003) / 1000003.0)) AS scores FROM {PARQUET}"
)
LABEL_CONTINUOUS_QUERY = "'" + LABEL_CONTINUOUS.replace("'", "''") + "'"

#: slices' benchmark (issue 33): three text candidates of 10 values each, stored in the strings
#: file (``generate.py``), as a user's table holds them
SLICE_COLUMNS = ("c1", "c2", "c3")
SLICED = "SELECT * FROM read_parquet('{f}')"


def _pl_sliced(e: Env) -> Any:
    """The strings file, with its three candidate columns, for Polars."""
    return e.pl.scan_parquet(e.f)


# One line per case: keep them unwrapped.
# fmt: off
CASES: list[Case] = [
    # DuckDB ------------------------------------------------------------------
    # the first mlsql.connect() (register()) of a process, its imports included: no file
    Case("duckdb", "mlsql.connect() library stored", None, files=(), mlsql=True, setup_only=True, repeat=1, cache="stored"),
    Case("duckdb", "mlsql.connect() library built", None, files=(), mlsql=True, setup_only=True, repeat=1, cache="empty"),
    Case("duckdb", "mlsql.register() TEMP macros", None, files=(), mlsql=True, setup_only=True, repeat=1, portable=True),
    Case("duckdb", "bare scan", f"SELECT sum(len(actual) + len(predicted)) FROM {PARQUET}"),
    Case("duckdb", "naive list_intersect micro F", f"SELECT 2 * sum(len(list_intersect(actual, predicted))) / (sum(len(actual)) + sum(len(predicted))) FROM {PARQUET}"),
    Case("duckdb", "mlsql micro_f1", f"SELECT micro_f1(actual, predicted) FROM {PARQUET}", mlsql=True),
    Case("duckdb", "mlsql micro_f1 portable", f"SELECT micro_f1(actual, predicted) FROM {PARQUET}", mlsql=True, portable=True),
    Case("duckdb", "mlsql micro_f1 by model", f"SELECT model, micro_f1(actual, predicted) FROM {PARQUET} GROUP BY model", mlsql=True),
    Case("duckdb", "mlsql multilabel_counts", f"SELECT multilabel_counts(actual, predicted) FROM {PARQUET}", mlsql=True),
    Case("duckdb", "mlsql samples_f1", f"SELECT samples_f1(actual, predicted) FROM {PARQUET}", mlsql=True),
    Case("duckdb", "mlsql samples_f1 portable", f"SELECT samples_f1(actual, predicted) FROM {PARQUET}", mlsql=True, portable=True),
    Case("duckdb", "mlsql multilabel_counts portable", f"SELECT multilabel_counts(actual, predicted) FROM {PARQUET}", mlsql=True, portable=True),
    Case("duckdb", "mlsql label_metrics", f"SELECT * FROM label_metrics({PARQUET_QUERY}, 'actual', 'predicted')", mlsql=True),
    Case("duckdb", "mlsql multilabel_report", f"SELECT * FROM multilabel_report({PARQUET_QUERY}, 'actual', 'predicted')", mlsql=True),
    Case("duckdb", "mlsql label_metrics portable", f"SELECT * FROM label_metrics({PARQUET_QUERY}, 'actual', 'predicted')", mlsql=True, portable=True),
    Case("duckdb", "mlsql multilabel_report portable", f"SELECT * FROM multilabel_report({PARQUET_QUERY}, 'actual', 'predicted')", mlsql=True, portable=True),
    # sample weights: ratio to the unweighted case on the same file
    Case("duckdb", "mlsql micro_f1 weighted", f"SELECT micro_f1(actual, predicted, sample_weight := {WEIGHT_SQL}) FROM {PARQUET}", mlsql=True, baseline=("duckdb", "mlsql micro_f1")),
    Case("duckdb", "mlsql multilabel_report weighted", f"SELECT * FROM multilabel_report({WEIGHTED_QUERY}, 'actual', 'predicted', sample_weight := 'w')", mlsql=True, baseline=("duckdb", "mlsql multilabel_report")),
    # bootstrap: 1,000 Poisson resamples of micro_f1, ratio to micro_f1 alone (issue 14: at most 5x)
    Case("duckdb", "mlsql bootstrap micro_f1 x1000", lambda e: e.mlsql.bootstrap(f"FROM read_parquet('{e.f}')", "actual", "predicted", ["micro_f1"], n_resamples=1000, con=e.con).fetchall(), mlsql=True, baseline=("duckdb", "mlsql micro_f1")),
    # the same in SQL alone: the table macro bootstrap (counter-based Poisson draws in DuckDB)
    Case("duckdb", "mlsql SQL bootstrap micro_f1 x1000", f"SELECT * FROM bootstrap({PARQUET_QUERY}, 'actual', 'predicted', measures := ['micro_f1'], n_resamples := 1000)", mlsql=True, baseline=("duckdb", "mlsql micro_f1")),
    # the paired comparison in SQL alone: each row an id, model A its predictions, model B the
    # same without their first label (twice the rows of the baseline, one join on id)
    # compare of four models (the Python call), micro_f1 and macro_f1 side by side: issue 32's
    # target is the macro average within 10x the micro one
    Case("duckdb", "mlsql compare micro_f1 x1000 4 models", lambda e: e.mlsql.compare(FOUR_MODELS.format(f=e.f), "actual", "predicted", ["micro_f1"], n_resamples=1000, con=e.con).fetchall(), files=("strings",), mlsql=True, repeat=1),
    Case("duckdb", "mlsql compare macro_f1 x1000 4 models", lambda e: e.mlsql.compare(FOUR_MODELS.format(f=e.f), "actual", "predicted", ["macro_f1"], n_resamples=1000, con=e.con).fetchall(), files=("strings",), mlsql=True, repeat=1, baseline=("duckdb", "mlsql compare micro_f1 x1000 4 models")),
    # slices: 3 candidates of 10 values, depth 2 (3 x 10 + 3 x 100 slices), micro_f1, 1,000 resamples; issue 33: within 6x micro_f1 alone
    Case("duckdb", "mlsql slices micro_f1 depth 2 x1000", lambda e: e.mlsql.slices(SLICED.format(f=e.f), "actual", "predicted", list(SLICE_COLUMNS), "micro_f1", depth=2, n_resamples=1000, con=e.con).fetchall(), mlsql=True, baseline=("duckdb", "mlsql micro_f1")),
    Case("duckdb", "mlsql SQL compare micro_f1 x1000", f"SELECT * FROM compare({PAIRED_QUERY}, 'actual', 'predicted', measures := ['micro_f1'], n_resamples := 1000)", mlsql=True, baseline=("duckdb", "mlsql micro_f1")),

    Case("duckdb", "scores bare scan", f"SELECT sum(CAST(y AS INT)), sum(s) FROM ({SCORED})", files=("strings",)),
    Case("duckdb", "mlsql roc_curve", f"SELECT count(*), sum(tpr) FROM roc_curve({SCORED_QUERY}, 'y', 's')", files=("strings",), mlsql=True, baseline=("duckdb", "scores bare scan")),
    Case("duckdb", "mlsql precision_recall_curve", f"SELECT count(*), sum(recall) FROM precision_recall_curve({SCORED_QUERY}, 'y', 's')", files=("strings",), mlsql=True, baseline=("duckdb", "scores bare scan")),
    Case("duckdb", "mlsql score aggregates", f"SELECT brier_score_loss(y, s), logloss(y, s), auc(y, s) FROM ({SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "scores bare scan")),
    Case("duckdb", "mlsql regression aggregates", f"SELECT mse(CAST(y AS DOUBLE), s), mae(CAST(y AS DOUBLE), s), r2(CAST(y AS DOUBLE), s) FROM ({SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "scores bare scan")),
    Case("duckdb", "label scores bare scan", f"SELECT sum(len(actual)), sum(list_sum(list_transform(scores, lambda e: e.score))) FROM ({LABEL_SCORED})", files=("strings",)),
    Case("duckdb", "mlsql roc_curve per label", f"SELECT count(*), sum(tpr) FROM roc_curve({LABEL_SCORED_QUERY}, 'actual', 'scores')", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql precision_recall_curve per label", f"SELECT count(*), sum(recall) FROM precision_recall_curve({LABEL_SCORED_QUERY}, 'actual', 'scores')", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql calibration_table", f"SELECT count(*), sum(count) FROM calibration_table({SCORED_QUERY}, 'y', 's')", files=("strings",), mlsql=True, baseline=("duckdb", "scores bare scan")),
    Case("duckdb", "mlsql label_thresholds", f"SELECT count(*) FROM label_thresholds({LABEL_SCORED_QUERY}, 'actual', 'scores')", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql label_thresholds continuous", f"SELECT count(*) FROM label_thresholds({LABEL_CONTINUOUS_QUERY}, 'actual', 'scores')", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql label_thresholds continuous portable", f"SELECT count(*) FROM label_thresholds({LABEL_CONTINUOUS_QUERY}, 'actual', 'scores')", files=("strings",), mlsql=True, portable=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql label_thresholds continuous n_bins 100", f"SELECT count(*) FROM label_thresholds({LABEL_CONTINUOUS_QUERY}, 'actual', 'scores', n_bins := 100)", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_average_precision micro", f"SELECT multilabel_average_precision(actual, scores, average := 'micro') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_average_precision macro", f"SELECT multilabel_average_precision(actual, scores, average := 'macro') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_roc_auc macro", f"SELECT multilabel_roc_auc(actual, scores, average := 'macro') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_average_precision weighted", f"SELECT multilabel_average_precision(actual, scores, average := 'weighted') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_average_precision samples", f"SELECT multilabel_average_precision(actual, scores, average := 'samples') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_roc_auc micro", f"SELECT multilabel_roc_auc(actual, scores, average := 'micro') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_roc_auc samples", f"SELECT multilabel_roc_auc(actual, scores, average := 'samples') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_average_precision micro weighted", f"SELECT multilabel_average_precision(actual, scores, sample_weight := {WEIGHT_SQL}, average := 'micro') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_roc_auc macro weighted", f"SELECT multilabel_roc_auc(actual, scores, sample_weight := {WEIGHT_SQL}, average := 'macro') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, baseline=("duckdb", "label scores bare scan")),
    # the portable macros (what mlsql.register gives); macro and weighted hold labels x cells
    # (about 220 GB at 1M rows), so only micro and samples have a portable case
    Case("duckdb", "mlsql multilabel_average_precision micro portable", f"SELECT multilabel_average_precision(actual, scores, average := 'micro') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, portable=True, baseline=("duckdb", "label scores bare scan")),
    Case("duckdb", "mlsql multilabel_average_precision samples portable", f"SELECT multilabel_average_precision(actual, scores, average := 'samples') FROM ({LABEL_SCORED})", files=("strings",), mlsql=True, portable=True, baseline=("duckdb", "label scores bare scan")),
    # Polars: streaming scans, then eager read_parquet -------------------------
    Case("polars", "bare scan", lambda e: e.pl.scan_parquet(e.f).select(_pl_lengths(e.pl)).collect(engine="streaming")),
    Case("polars", "naive set_intersection micro F", lambda e: e.pl.scan_parquet(e.f).select(_pl_naive_micro_f(e.pl)).collect(engine="streaming")),
    Case("polars", "mlsql micro_f1", lambda e: e.pl.scan_parquet(e.f).select(e.mlsql.micro_f1("actual", "predicted")).collect(engine="streaming"), mlsql=True),
    Case("polars", "mlsql micro_f1 portable", lambda e: e.pl.scan_parquet(e.f).select(e.mlsql.micro_f1("actual", "predicted")).collect(engine="streaming"), mlsql=True, portable=True),
    Case("polars", "mlsql samples_f1", lambda e: e.pl.scan_parquet(e.f).select(e.mlsql.samples_f1("actual", "predicted")).collect(engine="streaming"), mlsql=True),
    Case("polars", "mlsql label_metrics", lambda e: e.mlsql.label_metrics(e.pl.scan_parquet(e.f), "actual", "predicted").collect(engine="streaming"), mlsql=True),
    Case("polars", "mlsql multilabel_report", lambda e: e.mlsql.multilabel_report(e.pl.scan_parquet(e.f), "actual", "predicted").collect(engine="streaming"), mlsql=True),
    Case("polars", "mlsql label_metrics portable", lambda e: e.mlsql.label_metrics(e.pl.scan_parquet(e.f), "actual", "predicted").collect(engine="streaming"), mlsql=True, portable=True),
    Case("polars", "mlsql multilabel_report portable", lambda e: e.mlsql.multilabel_report(e.pl.scan_parquet(e.f), "actual", "predicted").collect(engine="streaming"), mlsql=True, portable=True),
    Case("polars", "mlsql micro_f1 weighted", lambda e: e.pl.scan_parquet(e.f).select(e.mlsql.micro_f1("actual", "predicted", sample_weight=_pl_weight(e.pl))).collect(engine="streaming"), mlsql=True, baseline=("polars", "mlsql micro_f1")),
    # one class per row; issue 32's slow paths: the weighted class totals sorted the rows at each mention
    Case("polars", "mlsql cohen_kappa_score", lambda e: _pl_classes(e).select(e.mlsql.cohen_kappa_score("a", "p")).collect(), files=("strings",), mlsql=True),
    Case("polars", "mlsql cohen_kappa_score weighted", lambda e: _pl_classes(e).select(e.mlsql.cohen_kappa_score("a", "p", sample_weight="w")).collect(), files=("strings",), mlsql=True, baseline=("polars", "mlsql cohen_kappa_score")),
    Case("polars", "mlsql multilabel_report weighted", lambda e: e.mlsql.multilabel_report(e.pl.scan_parquet(e.f).with_columns(w=_pl_weight(e.pl)), "actual", "predicted", sample_weight="w").collect(engine="streaming"), mlsql=True, baseline=("polars", "mlsql multilabel_report")),
    Case("polars", "mlsql bootstrap micro_f1 x1000", lambda e: e.mlsql.bootstrap(e.pl.scan_parquet(e.f), "actual", "predicted", ["micro_f1"], n_resamples=1000), mlsql=True, baseline=("polars", "mlsql micro_f1")),
    Case("polars", "mlsql slices micro_f1 depth 2 x1000", lambda e: e.mlsql.slices(_pl_sliced(e), "actual", "predicted", list(SLICE_COLUMNS), "micro_f1", depth=2, n_resamples=1000), mlsql=True, baseline=("polars", "mlsql micro_f1")),

    Case("polars", "scores bare scan", lambda e: _pl_scored(e).select(e.pl.col("y").sum(), e.pl.col("s").sum()).collect(engine="streaming"), files=("strings",)),
    Case("polars", "mlsql roc_curve", lambda e: e.mlsql.roc_curve(_pl_scored(e), "y", "s").select(e.pl.len(), e.pl.col("tpr").sum()).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "scores bare scan")),
    Case("polars", "mlsql precision_recall_curve", lambda e: e.mlsql.precision_recall_curve(_pl_scored(e), "y", "s").select(e.pl.len(), e.pl.col("recall").sum()).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "scores bare scan")),
    Case("polars", "mlsql score aggregates", lambda e: _pl_scored(e).select(e.mlsql.brier_score_loss("y", "s"), e.mlsql.logloss("y", "s"), e.mlsql.auc("y", "s")).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "scores bare scan")),
    Case("polars", "mlsql regression aggregates", lambda e: _pl_scored(e).select(*(f(e.pl.col("y").cast(e.pl.Float64), "s") for f in (e.mlsql.mse, e.mlsql.mae, e.mlsql.r2))).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "scores bare scan")),
    Case("polars", "label scores bare scan", lambda e: _pl_label_scored(e).select(e.pl.col("actual").list.len().sum(), e.pl.col("scores").list.eval(e.pl.element().struct.field("score")).list.sum().sum()).collect(engine="streaming"), files=("strings",)),
    Case("polars", "mlsql roc_curve per label", lambda e: e.mlsql.roc_curve(_pl_label_scored(e), "actual", "scores").select(e.pl.len(), e.pl.col("tpr").sum()).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql precision_recall_curve per label", lambda e: e.mlsql.precision_recall_curve(_pl_label_scored(e), "actual", "scores").select(e.pl.len(), e.pl.col("recall").sum()).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql calibration_table", lambda e: e.mlsql.calibration_table(_pl_scored(e), "y", "s").select(e.pl.len(), e.pl.col("count").sum()).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "scores bare scan")),
    Case("polars", "mlsql label_thresholds", lambda e: e.mlsql.label_thresholds(_pl_label_scored(e), "actual", "scores").select(e.pl.len()).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_average_precision micro", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_average_precision("actual", "scores", average="micro")).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_average_precision macro", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_average_precision("actual", "scores", average="macro")).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_roc_auc macro", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_roc_auc("actual", "scores", average="macro")).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_average_precision weighted", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_average_precision("actual", "scores", average="weighted")).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_average_precision samples", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_average_precision("actual", "scores", average="samples")).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_roc_auc micro", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_roc_auc("actual", "scores", average="micro")).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_roc_auc samples", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_roc_auc("actual", "scores", average="samples")).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_average_precision micro weighted", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_average_precision("actual", "scores", average="micro", sample_weight=_pl_weight(e.pl))).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_roc_auc macro weighted", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_roc_auc("actual", "scores", average="macro", sample_weight=_pl_weight(e.pl))).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_average_precision macro by model", lambda e: _pl_label_scored(e, "model").group_by("model").agg(e.mlsql.multilabel_average_precision("actual", "scores", average="macro")).collect(engine="streaming"), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_average_precision macro eager", lambda e: _pl_label_scored(e, eager=True).select(e.mlsql.multilabel_average_precision("actual", "scores", average="macro")), files=("strings",), mlsql=True, baseline=("polars", "label scores bare scan")),
    # the portable expressions (MLSQL_NATIVE=0), beside the native plugin's
    Case("polars", "mlsql multilabel_average_precision micro portable", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_average_precision("actual", "scores", average="micro")).collect(engine="streaming"), files=("strings",), mlsql=True, portable=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "mlsql multilabel_average_precision macro portable", lambda e: _pl_label_scored(e).select(e.mlsql.multilabel_average_precision("actual", "scores", average="macro")).collect(engine="streaming"), files=("strings",), mlsql=True, portable=True, baseline=("polars", "label scores bare scan")),
    Case("polars", "bare scan eager", lambda e: e.pl.read_parquet(e.f).select(_pl_lengths(e.pl)), baseline=("polars", "bare scan eager")),
    Case("polars", "mlsql micro_f1 eager", lambda e: e.pl.read_parquet(e.f).select(e.mlsql.micro_f1("actual", "predicted")), mlsql=True, baseline=("polars", "bare scan eager")),
    # scikit-learn: ratio to mlsql's DuckDB micro_f1 ---------------------------
    Case("sklearn", "MultiLabelBinarizer + f1_score", sklearn_micro_f1, files=CLEAN, baseline=("duckdb", "mlsql micro_f1")),
    # Spark (local[2]) ----------------------------------------------------------
    Case("spark", "JVM start (SparkSession)", None, files=(), setup_only=True, repeat=1),
    Case("spark", "bare scan", lambda e: e.spark.read.parquet(e.f).agg(_spark_lengths(e)).collect()),
    Case("spark", "mlsql micro_f1", lambda e: e.spark.read.parquet(e.f).agg(e.mlsql.micro_f1("actual", "predicted")).collect(), mlsql=True),
    Case("spark", "mlsql micro_f1 portable", lambda e: e.spark.read.parquet(e.f).agg(e.mlsql.micro_f1("actual", "predicted")).collect(), mlsql=True, portable=True),
    Case("spark", "mlsql bootstrap micro_f1 x1000", lambda e: e.mlsql.bootstrap(e.spark.read.parquet(e.f), "actual", "predicted", ["micro_f1"], n_resamples=1000).collect()[0][1:], mlsql=True, baseline=("spark", "mlsql micro_f1")),
    Case("spark", "mlsql multilabel_report", lambda e: e.mlsql.multilabel_report(e.spark.read.parquet(e.f), "actual", "predicted").collect()[0][:5], mlsql=True),
    Case("spark", "mlsql multilabel_report portable", lambda e: e.mlsql.multilabel_report(e.spark.read.parquet(e.f), "actual", "predicted").collect()[0][:5], mlsql=True, portable=True),
    Case("spark", "mlsql multilabel_report weighted", lambda e: e.mlsql.multilabel_report(e.spark.read.parquet(e.f).selectExpr("*", "size(actual) % 3 + 0.5 AS w"), "actual", "predicted", sample_weight="w").collect()[0][:5], mlsql=True, baseline=("spark", "mlsql multilabel_report")),
    Case("spark", "mlsql multilabel_report weighted portable", lambda e: e.mlsql.multilabel_report(e.spark.read.parquet(e.f).selectExpr("*", "size(actual) % 3 + 0.5 AS w"), "actual", "predicted", sample_weight="w").collect()[0][:5], mlsql=True, portable=True, baseline=("spark", "mlsql multilabel_report")),

    Case("spark", "scores bare scan", lambda e: _spark_scored(e).agg(e.F.sum(e.F.col("y").cast("int")), e.F.sum("s")).collect(), files=("strings",)),
    Case("spark", "mlsql roc_curve", lambda e: e.mlsql.roc_curve(_spark_scored(e), "y", "s").agg(e.F.count(e.F.lit(1)), e.F.sum("tpr")).collect(), files=("strings",), mlsql=True, baseline=("spark", "scores bare scan")),
    # MLlib's MultilabelMetrics on the same session: ratio to mlsql's Spark micro_f1; labels must be doubles, so ints only
    Case("mllib", "MultilabelMetrics micro F1", mllib_micro_f1, files=("ints",), baseline=("spark", "mlsql micro_f1")),
    # single labels (the ints file's first true and first predicted label, doubles): mlsql's bounded
    # ms.evaluate and its accuracy Column against their scan; MLlib's evaluators against ms.evaluate
    Case("spark", "labels bare scan", lambda e: _spark_labels(e).agg(e.F.sum("actual"), e.F.sum("predicted")).collect(), files=("ints",)),
    Case("spark", "mlsql evaluate accuracy", lambda e: _spark_evaluate(e, _spark_labels(e), "actual", "predicted", "accuracy"), files=("ints",), mlsql=True, baseline=("spark", "labels bare scan")),
    Case("spark", "mlsql evaluate weighted f1", lambda e: _spark_evaluate(e, _spark_labels(e), "actual", "predicted", WEIGHTED_F1), files=("ints",), mlsql=True, baseline=("spark", "labels bare scan")),
    Case("spark", "mlsql evaluate accuracy + weighted f1", lambda e: _spark_evaluate(e, _spark_labels(e), "actual", "predicted", "accuracy", WEIGHTED_F1), files=("ints",), mlsql=True, baseline=("spark", "labels bare scan")),
    Case("spark", "mlsql accuracy Column", lambda e: _spark_labels(e).agg(e.mlsql.accuracy("actual", "predicted")).collect(), files=("ints",), mlsql=True, baseline=("spark", "labels bare scan")),
    # the class-wise Column: mlsql's Java confusion cells, or (portable) the group's rows collected
    Case("spark", "mlsql weighted f1 Column", lambda e: _spark_weighted_f1_column(e), files=("ints",), mlsql=True, baseline=("spark", "labels bare scan")),
    Case("spark", "mlsql weighted f1 Column portable", lambda e: _spark_weighted_f1_column(e), files=("ints",), mlsql=True, portable=True, baseline=("spark", "labels bare scan")),
    Case("mllib", "MulticlassClassificationEvaluator accuracy", lambda e: mllib_multiclass(e, "accuracy"), files=("ints",), baseline=("spark", "mlsql evaluate accuracy")),
    Case("mllib", "MulticlassClassificationEvaluator weightedFMeasure", lambda e: mllib_multiclass(e, "weightedFMeasure"), files=("ints",), baseline=("spark", "mlsql evaluate weighted f1")),
    Case("mllib", "MulticlassClassificationEvaluator accuracy + weightedFMeasure", lambda e: mllib_multiclass(e, "accuracy", "weightedFMeasure"), files=("ints",), baseline=("spark", "mlsql evaluate accuracy + weighted f1")),
    Case("mllib", "MulticlassMetrics accuracy + weightedFMeasure", mllib_multiclass_metrics, files=("ints",), baseline=("spark", "mlsql evaluate accuracy + weighted f1")),
    # binary (the curve cases' label and score, "scores bare scan"): ms.evaluate's sorted runs
    # against BinaryClassificationEvaluator, exact (numBins 0) and at its default 1000 bins
    Case("spark", "mlsql evaluate auc", lambda e: _spark_evaluate(e, _spark_scored(e), "y", "s", "auc"), files=("strings",), mlsql=True, baseline=("spark", "scores bare scan")),
    Case("spark", "mlsql evaluate area_under_pr", lambda e: _spark_evaluate(e, _spark_scored(e), "y", "s", "area_under_pr"), files=("strings",), mlsql=True, baseline=("spark", "scores bare scan")),
    Case("spark", "mlsql evaluate auc + area_under_pr", lambda e: _spark_evaluate(e, _spark_scored(e), "y", "s", "auc", "area_under_pr"), files=("strings",), mlsql=True, baseline=("spark", "scores bare scan")),
    # the 2x2 measures of (y, s >= 0.5), all at once: the cells once, the formulas in projections
    Case("spark", "mlsql evaluate every binary 2x2 measure", lambda e: _spark_evaluate(e, _spark_scored(e).select("y", (e.F.col("s") >= 0.5).alias("p")), "y", "p", *binary_2x2()), files=("strings",), mlsql=True, baseline=("spark", "scores bare scan")),
    # regression (the same columns, y as a number): grouped passes, the means first, then centred sums
    Case("spark", "mlsql evaluate mse + mae + r2", lambda e: _spark_evaluate(e, _spark_scored(e).select(e.F.col("y").cast("double").alias("y"), "s"), "y", "s", "mse", "mae", "r2"), files=("strings",), mlsql=True, baseline=("spark", "scores bare scan")),
    # the same three sums as aggregate Columns: mlsql's Java exact sum, or (portable) decimal sums
    Case("spark", "mlsql mse + mae + mape Columns", lambda e: _spark_regression_columns(e), files=("strings",), mlsql=True, baseline=("spark", "scores bare scan")),
    Case("spark", "mlsql mse + mae + mape Columns portable", lambda e: _spark_regression_columns(e), files=("strings",), mlsql=True, portable=True, baseline=("spark", "scores bare scan")),
    # the centred measures as Columns: mlsql's Java co-moments, or (portable) the rows collected
    Case("spark", "mlsql r2 + pearson_corr + explained_variance Columns", lambda e: _spark_centred_columns(e), files=("strings",), mlsql=True, baseline=("spark", "scores bare scan")),
    Case("spark", "mlsql r2 + pearson_corr + explained_variance Columns portable", lambda e: _spark_centred_columns(e), files=("strings",), mlsql=True, portable=True, baseline=("spark", "scores bare scan")),
    Case("mllib", "BinaryClassificationEvaluator areaUnderROC", lambda e: mllib_binary(e, "areaUnderROC"), files=("strings",), baseline=("spark", "mlsql evaluate auc")),
    Case("mllib", "BinaryClassificationEvaluator areaUnderPR", lambda e: mllib_binary(e, "areaUnderPR"), files=("strings",), baseline=("spark", "mlsql evaluate area_under_pr")),
    Case("mllib", "BinaryClassificationEvaluator areaUnderROC + areaUnderPR", lambda e: mllib_binary(e, "areaUnderROC", "areaUnderPR"), files=("strings",), baseline=("spark", "mlsql evaluate auc + area_under_pr")),
    Case("mllib", "BinaryClassificationEvaluator areaUnderROC + areaUnderPR numBins 1000", lambda e: mllib_binary(e, "areaUnderROC", "areaUnderPR", num_bins=1000), files=("strings",), baseline=("spark", "mlsql evaluate auc + area_under_pr")),
]
# fmt: on


def find(key: str) -> Case:
    """Return the case whose :attr:`Case.key` is ``key``.

    Parameters
    ----------
    key : str
        ``engine:name``.

    Returns
    -------
    Case
        The case.

    Raises
    ------
    KeyError
        When no case has that key.
    """
    for case in CASES:
        if case.key == key:
            return case
    raise KeyError(key)
