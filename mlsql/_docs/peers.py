"""The peer functions each mlsql function matches: the reference pages' "peers" column.

One entry per registry measure (a ``*_from_counts`` function shares its
measure's entry): the functions of scikit-learn, statsmodels, SciPy, Spark
MLlib, torchmetrics, ranx, trec_eval and Hivemall that give the same number
on the same data, within the conventions the function's notes state (for
example, a peer that raises an error or gives NaN where mlsql applies
``zero_division``). An empty entry means no peer has the function: mlsql's
own, or a lecture's measure. ``tests/test_peers.py`` checks that every
measure has an entry and that every importable peer (``path``) exists.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Peer:
    """One peer function: its library, the call as written in the docs, and, for a Python
    library, the dotted path the call is found at (checked by the tests)."""

    library: str
    call: str
    path: str | None = None

    def markdown(self) -> str:
        """The peer as a table cell's text.

        Examples
        --------
        >>> Peer("scikit-learn", "f1_score(average='micro')", "sklearn.metrics.f1_score").markdown()
        "scikit-learn `f1_score(average='micro')`"
        """
        return f"{self.library} `{self.call}`"


def sk(call: str, module: str = "sklearn.metrics") -> Peer:
    """A scikit-learn function of ``module``, ``call`` its name and the arguments it takes."""
    return Peer("scikit-learn", call, f"{module}.{call.split('(')[0]}")


def mllib(cls: str, member: str) -> Peer:
    """A member of a Spark MLlib evaluation class (``pyspark.mllib.evaluation``)."""
    return Peer("Spark MLlib", f"{cls}.{member}", f"pyspark.mllib.evaluation.{cls}.{member}")


def sm(call: str, path: str) -> Peer:
    """A statsmodels function at ``path``, written as ``call``."""
    return Peer("statsmodels", call, path)


def hivemall(name: str) -> Peer:
    """A Hivemall UDF of the same number (Hivemall's argument order)."""
    return Peer("Hivemall", name)


def ranx(metric: str) -> Peer:
    """A ranx metric name (``ranx.evaluate(qrels, run, metric)``)."""
    return Peer("ranx", metric)


def tm(cls: str) -> Peer:
    """A torchmetrics class (``torchmetrics.classification``)."""
    return Peer("torchmetrics", cls)


_NONE: tuple[Peer, ...] = ()


def _averaged(score: str, average: str, multilabel: str | None = None) -> tuple[Peer, ...]:
    out = [sk(f"{score}(average='{average}')")]
    if multilabel:
        out.append(tm(f"{multilabel}(average='{average}')"))
    return tuple(out)


PEERS: dict[str, tuple[Peer, ...]] = {
    # binary: 0/1 columns
    "binary_precision": (sk("precision_score"), tm("BinaryPrecision")),
    "binary_recall": (sk("recall_score"), tm("BinaryRecall")),
    "binary_specificity": (sk("recall_score(pos_label=0)"), tm("BinarySpecificity")),
    "binary_negative_predictive_value": (sk("precision_score(pos_label=0)"),),
    "binary_support": _NONE,
    "binary_accuracy": (sk("accuracy_score"), tm("BinaryAccuracy")),
    "binary_coverage": _NONE,
    "binary_error_rate": (sk("zero_one_loss"),),
    "binary_fbeta": (sk("fbeta_score"), tm("BinaryFBetaScore")),
    "binary_f1": (sk("f1_score"), tm("BinaryF1Score")),
    "binary_f_alpha": (sk("fbeta_score(beta=sqrt(alpha))"),),
    "binary_kappa": (
        sk("cohen_kappa_score"),
        sm("cohens_kappa(table).kappa", "statsmodels.stats.inter_rater.cohens_kappa"),
    ),
    "binary_kappa_std_error": (
        sm("cohens_kappa(table).std_kappa", "statsmodels.stats.inter_rater.cohens_kappa"),
    ),
    "binary_kappa_z_value": (
        sm("cohens_kappa(table).z_value", "statsmodels.stats.inter_rater.cohens_kappa"),
    ),
    "binary_kappa_p_value": (
        sm(
            "cohens_kappa(table).pvalue_two_sided",
            "statsmodels.stats.inter_rater.cohens_kappa",
        ),
    ),
    "binary_kappa_p_value_one_sided": (
        sm(
            "cohens_kappa(table).pvalue_one_sided",
            "statsmodels.stats.inter_rater.cohens_kappa",
        ),
    ),
    "binary_mcnemar_statistic": (
        sm(
            "mcnemar(table, exact=False).statistic",
            "statsmodels.stats.contingency_tables.mcnemar",
        ),
    ),
    "binary_mcnemar_p_value": (
        sm("mcnemar(table, exact=False).pvalue", "statsmodels.stats.contingency_tables.mcnemar"),
    ),
    "binary_false_negative_rate": _NONE,
    "binary_false_positive_rate": _NONE,
    "binary_cost_error": _NONE,
    "binary_counts": (sk("confusion_matrix(...).ravel()"),),
    # curves
    "precision_recall_curve": (sk("precision_recall_curve"),),
    "roc_curve": (sk("roc_curve(drop_intermediate=False)"),),
    "det_curve": (sk("det_curve"),),
    "confusion_matrix_at_thresholds": (sk("confusion_matrix_at_thresholds"),),
    # per-label tables and their averages
    "label_metrics": (
        sk("precision_recall_fscore_support(average=None)"),
        sk("multilabel_confusion_matrix"),
    ),
    "multilabel_report": (sk("classification_report"),),
    "macro_precision": _averaged("precision_score", "macro", "MultilabelPrecision"),
    "macro_recall": _averaged("recall_score", "macro", "MultilabelRecall"),
    "macro_f1": _averaged("f1_score", "macro", "MultilabelF1Score"),
    "macro_fbeta": _averaged("fbeta_score", "macro", "MultilabelFBetaScore"),
    "macro_jaccard": _averaged("jaccard_score", "macro", "MultilabelJaccardIndex"),
    "macro_f1_of_means": _NONE,
    "macro_fbeta_of_means": _NONE,
    "weighted_precision": _averaged("precision_score", "weighted", "MultilabelPrecision"),
    "weighted_recall": _averaged("recall_score", "weighted", "MultilabelRecall"),
    "weighted_f1": _averaged("f1_score", "weighted", "MultilabelF1Score"),
    "weighted_fbeta": _averaged("fbeta_score", "weighted", "MultilabelFBetaScore"),
    "weighted_jaccard": _averaged("jaccard_score", "weighted", "MultilabelJaccardIndex"),
    "label_accuracy_macro": (tm("MultilabelAccuracy(average='macro')"),),
    "label_accuracy_micro": (tm("MultilabelAccuracy(average='micro')"),),
    "clp": _NONE,
    "mlp": _NONE,
    "wlp": _NONE,
    "labels_from_indicators": (
        sk("MultiLabelBinarizer.inverse_transform", "sklearn.preprocessing"),
    ),
    "indicators_from_labels": (sk("MultiLabelBinarizer.transform", "sklearn.preprocessing"),),
    # label scores
    "multilabel_average_precision": (sk("average_precision_score"),),
    "multilabel_roc_auc": (sk("roc_auc_score"),),
    "multilabel_brier_score": (sk("brier_score_loss(per label column, averaged)"),),
    # multi-label sets
    "set_intersection": _NONE,
    "set_difference": _NONE,
    "set_union": _NONE,
    "set_symmetric_difference": _NONE,
    "true_positives": _NONE,
    "false_positives": _NONE,
    "false_negatives": _NONE,
    "true_negatives": (sk("multilabel_confusion_matrix(samplewise=True)[:, 0, 0]"),),
    "set_jaccard": _NONE,
    "row_precision": _NONE,
    "row_recall": _NONE,
    "row_fbeta": _NONE,
    "micro_precision": (
        *_averaged("precision_score", "micro", "MultilabelPrecision"),
        mllib("MultilabelMetrics", "microPrecision"),
    ),
    "micro_recall": (
        *_averaged("recall_score", "micro", "MultilabelRecall"),
        mllib("MultilabelMetrics", "microRecall"),
    ),
    "micro_fbeta": _averaged("fbeta_score", "micro", "MultilabelFBetaScore"),
    "micro_f1": (
        *_averaged("f1_score", "micro", "MultilabelF1Score"),
        mllib("MultilabelMetrics", "microF1Measure"),
    ),
    "micro_jaccard": _averaged("jaccard_score", "micro", "MultilabelJaccardIndex"),
    "samples_precision": (
        sk("precision_score(average='samples')"),
        mllib("MultilabelMetrics", "precision"),
    ),
    "samples_recall": (sk("recall_score(average='samples')"), mllib("MultilabelMetrics", "recall")),
    "samples_fbeta": (sk("fbeta_score(average='samples')"),),
    "samples_f1": (sk("f1_score(average='samples')"), mllib("MultilabelMetrics", "f1Measure")),
    "samples_jaccard": (
        sk("jaccard_score(average='samples')"),
        mllib("MultilabelMetrics", "accuracy"),
    ),
    "subset_accuracy": (
        sk("accuracy_score"),
        mllib("MultilabelMetrics", "subsetAccuracy"),
        tm("MultilabelExactMatch"),
    ),
    "zero_one_loss": (sk("zero_one_loss"),),
    "hamming_loss": (
        sk("hamming_loss"),
        mllib("MultilabelMetrics", "hammingLoss"),
        tm("MultilabelHammingDistance(average='micro')"),
    ),
    "multilabel_counts": _NONE,
    "merge_counts": _NONE,
    # Hivemall's fmeasure
    "fmeasure": (hivemall("fmeasure"),),
    # ranking
    "precision_at": (hivemall("precision_at"),),
    "recall_at": (hivemall("recall_at"),),
    "average_precision": (hivemall("average_precision"),),
    "hitrate": (hivemall("hitrate"),),
    "mrr": (hivemall("mrr"),),
    "ndcg": (hivemall("ndcg"),),
    "ranking_auc": (hivemall("auc"),),
    "graded_ndcg": (hivemall("ndcg"),),
    "hits": (ranx("hits@k"),),
    "map_score": (ranx("map@k"), Peer("trec_eval", "map")),
    "r_precision": (ranx("r-precision"), Peer("trec_eval", "Rprec")),
    "f1_at": (ranx("f1@k"),),
    "dcg": (ranx("dcg@k"),),
    "rbp": (ranx("rbp.p"),),
    "bpref": (ranx("bpref"), Peer("trec_eval", "bpref")),
    "coverage_error": (sk("coverage_error"),),
    "label_ranking_loss": (sk("label_ranking_loss"),),
    "label_ranking_average_precision": (sk("label_ranking_average_precision_score"),),
    "one_error": _NONE,
    "ndcg_score": (sk("ndcg_score"),),
    "top_k": _NONE,
    "above_threshold": _NONE,
    "top_k_above": _NONE,
    # regression
    "mse": (
        sk("mean_squared_error"),
        mllib("RegressionMetrics", "meanSquaredError"),
        hivemall("mse"),
    ),
    "rmse": (
        sk("root_mean_squared_error"),
        mllib("RegressionMetrics", "rootMeanSquaredError"),
        hivemall("rmse"),
    ),
    "mae": (
        sk("mean_absolute_error"),
        mllib("RegressionMetrics", "meanAbsoluteError"),
        hivemall("mae"),
    ),
    "mape": (sk("mean_absolute_percentage_error"),),
    "rse": _NONE,
    "rrse": _NONE,
    "rae": _NONE,
    "pearson_corr": (Peer("SciPy", "pearsonr", "scipy.stats.pearsonr"),),
    "r2": (sk("r2_score"), mllib("RegressionMetrics", "r2")),
    "explained_variance": (sk("explained_variance_score"),),
    "hivemall_r2": (hivemall("r2"),),
    # rules
    "rule_novelty": _NONE,
    "rule_satisfaction": _NONE,
    # scores
    "logloss": (sk("log_loss"), hivemall("logloss")),
    "hivemall_logloss": (hivemall("logloss"),),
    "auc": (
        sk("roc_auc_score"),
        mllib("BinaryClassificationMetrics", "areaUnderROC"),
        tm("BinaryAUROC"),
    ),
    "hivemall_auc": (hivemall("auc"),),
    "average_precision_score": (sk("average_precision_score"), tm("BinaryAveragePrecision")),
    "area_under_pr": (mllib("BinaryClassificationMetrics", "areaUnderPR"),),
    "binned_auc": (tm("BinaryAUROC(thresholds=N)"),),
    "binned_average_precision_score": (tm("BinaryAveragePrecision(thresholds=N)"),),
    "brier_score_loss": (sk("brier_score_loss"),),
    "expected_calibration_error": (tm("BinaryCalibrationError(norm='l1')"),),
    # class scores
    "multiclass_brier_score": (sk("brier_score_loss(labels=...)"),),
    "multiclass_calibration_error": (tm("MulticlassCalibrationError(num_classes, norm='l1')"),),
    # single label
    "class_distribution": _NONE,
    "majority_class": _NONE,
    "minority_class": _NONE,
    "majority_error": _NONE,
    "prevalence": _NONE,
    "accuracy": (sk("accuracy_score"), mllib("MulticlassMetrics", "accuracy")),
    "error_rate": (sk("zero_one_loss"),),
    "precision_score": (sk("precision_score(average=...)"),),
    "recall_score": (sk("recall_score(average=...)"),),
    "fbeta_score": (sk("fbeta_score(average=...)"),),
    "f1_score": (sk("f1_score(average=...)"),),
    "balanced_accuracy_score": (sk("balanced_accuracy_score"),),
    "cohen_kappa_score": (
        sk("cohen_kappa_score(weights=..., labels=...)"),
        sm("cohens_kappa(table, weights=W).kappa", "statsmodels.stats.inter_rater.cohens_kappa"),
    ),
    "cohen_kappa_std_error": (
        sm(
            "cohens_kappa(table, wt=... or weights=W).std_kappa",
            "statsmodels.stats.inter_rater.cohens_kappa",
        ),
    ),
    "cohen_kappa_z_value": (
        sm(
            "cohens_kappa(table, wt=... or weights=W).z_value",
            "statsmodels.stats.inter_rater.cohens_kappa",
        ),
    ),
    "cohen_kappa_p_value": (
        sm(
            "cohens_kappa(table, wt=... or weights=W).pvalue_two_sided",
            "statsmodels.stats.inter_rater.cohens_kappa",
        ),
    ),
    "bowker_statistic": (
        sm(
            "SquareTable(table, shift_zeros=False).symmetry().statistic",
            "statsmodels.stats.contingency_tables.SquareTable.symmetry",
        ),
    ),
    "bowker_p_value": (
        sm(
            "SquareTable(table, shift_zeros=False).symmetry().pvalue",
            "statsmodels.stats.contingency_tables.SquareTable.symmetry",
        ),
    ),
    "cochrans_q_statistic": (
        sm("cochrans_q(x).statistic", "statsmodels.stats.contingency_tables.cochrans_q"),
    ),
    "cochrans_q_p_value": (
        sm("cochrans_q(x).pvalue", "statsmodels.stats.contingency_tables.cochrans_q"),
    ),
    "fleiss_kappa": (
        sm(
            "fleiss_kappa(aggregate_raters(ratings)[0])",
            "statsmodels.stats.inter_rater.fleiss_kappa",
        ),
    ),
    "cohen_kappa_p_value_one_sided": (
        sm(
            "cohens_kappa(table, wt=... or weights=W).pvalue_one_sided",
            "statsmodels.stats.inter_rater.cohens_kappa",
        ),
    ),
    "cohen_kappa_low": (
        sm(
            "cohens_kappa(table, wt=... or weights=W).kappa_low",
            "statsmodels.stats.inter_rater.cohens_kappa",
        ),
    ),
    "cohen_kappa_high": (
        sm(
            "cohens_kappa(table, wt=... or weights=W).kappa_upp",
            "statsmodels.stats.inter_rater.cohens_kappa",
        ),
    ),
    "matthews_corrcoef": (sk("matthews_corrcoef"),),
    "class_error_rate": _NONE,
    "cost_error": _NONE,
    "cost_map": _NONE,
    "confusion_matrix": (sk("confusion_matrix"), mllib("MulticlassMetrics", "confusionMatrix")),
    "confusion_matrix_wide": (sk("confusion_matrix"),),
    "class_metrics": (sk("precision_recall_fscore_support(average=None)"),),
    # calibration and thresholds
    "calibration_table": (sk("calibration_curve(strategy=...)", "sklearn.calibration"),),
    "label_thresholds": _NONE,
}

FROM_COUNTS = "_from_counts"


def peers_of(name: str) -> tuple[Peer, ...]:
    """The peers of the measure ``name`` (a ``*_from_counts`` function: its measure's).

    Examples
    --------
    >>> [p.markdown() for p in peers_of("micro_f1_from_counts")][-1]
    'Spark MLlib `MultilabelMetrics.microF1Measure`'
    """
    if name.endswith(FROM_COUNTS) and name not in PEERS:
        name = name[: -len(FROM_COUNTS)]
    return PEERS[name]


def cell_text(name: str) -> str:
    """The "peers" cell of ``name``: its peers joined, or a dash."""
    found = peers_of(name)
    return "; ".join(p.markdown() for p in found) if found else "–"
