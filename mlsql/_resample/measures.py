"""Which measures can be resampled from a statistics table, and how each is evaluated.

A measure here is a function of statistics pooled over rows, so the rows of a
group can be replaced by their distinct statistic tuples and a count each:

- ``label_sets`` (label lists): a row's (tp, |A|, |P|). Every micro measure,
  the samples averages (a row's value is a function of the tuple), subset
  accuracy, zero-one loss, Hamming loss and Hivemall's ``fmeasure`` over lists.
- ``classes`` (one label per row): a row's (actual, predicted) cell. Accuracy,
  error rate and the class-wise measures (precision, recall, F over classes
  micro/macro/weighted, balanced accuracy, Cohen's kappa, MCC), whose
  statistics are the resampled confusion matrix.

- ``label_lists`` (label lists): a row's sorted distinct actual and predicted
  labels. The macro and weighted averages (:mod:`mlsql._resample.labels`:
  per-label counts as sparse matrix products); a call with one of them gives
  its label-set measures their (tp, |A|, |P|) from the same tuples.

- ``regression`` (numbers) and ``scores`` (a 0/1 label and a score): a
  row's (actual, predicted) as floats. The regression and score aggregates
  (:mod:`mlsql._resample.numbers`), resampled row by row: their values rarely
  repeat, so their cost grows as rows x resamples.
- ``class_scores`` (one label per row and its class probabilities): the numbers
  each engine computes per row (:data:`mlsql._resample.numbers.CLASS_SCORE_STATS`),
  resampled row by row as the score aggregates. ``multiclass_brier_score`` and
  ``multiclass_calibration_error``.

Each is evaluated by its registry formula (:mod:`mlsql.measures`) with
:class:`~mlsql._resample.ops.WeightedOps`. With ``sample_weight`` the checked
weight is one more column of the tuple, and the tuple weighs weight * m (the
estimate) or weight * Poisson(m) (a resample). Per-label tables and ranking
measures are refused with a message that says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlsql import _formulas as F
from mlsql import _label_types as LT
from mlsql import _params as P
from mlsql._errors import MlsqlError
from mlsql._front.build import checked_params
from mlsql._registry import REGISTRY, measures
from mlsql._resample import labels as LL
from mlsql._resample import numbers as NUM
from mlsql._resample.ops import WeightedOps
from mlsql.measures import multilabel as ML
from mlsql.measures import single_label as SL

#: statistic columns of each kind of statistics table, in the order engines give them
STATS = {
    "label_sets": ("tp", "n_actual", "n_predicted"),
    "label_lists": ("actual", "predicted"),
    "classes": ("actual", "predicted"),
    "regression": ("actual", "predicted"),
    "scores": ("actual", "predicted"),
    "class_scores": NUM.CLASS_SCORE_STATS,
}

LABEL_SET_MEASURES = (
    "micro_precision",
    "micro_recall",
    "micro_fbeta",
    "micro_f1",
    "micro_jaccard",
    "samples_precision",
    "samples_recall",
    "samples_fbeta",
    "samples_f1",
    "samples_jaccard",
    "subset_accuracy",
    "zero_one_loss",
    "hamming_loss",
    "fmeasure",
)
#: macro and weighted multi-label averages (the label lists are the tuple)
LB_MEASURES = LL.MEASURES
#: kappa's standard error, z test and interval, and Bowker's test of symmetry, are statistics
#: of the sample's own uncertainty, not estimates to resample
CLASS_MEASURES = (
    "accuracy",
    "error_rate",
    *(m for m in SL.CLASS_MEASURES if m not in (*SL.KAPPA_TESTS, *SL.BOWKER)),
)
#: measures whose per-row outcome is 0 or 1 (McNemar's test applies)
ZERO_ONE = ("subset_accuracy", "zero_one_loss", "accuracy", "error_rate")

BY_MESSAGE = "bootstrap and compare group with their own by argument; drop by from {name}."
UNSUPPORTED_MESSAGE = (
    "{func} cannot resample {name}: it resamples aggregate measures of label lists, of one "
    "label per row, of numbers, of scores and of class probabilities ({allowed}). Per-label "
    "tables and ranking "
    "measures give no single value per group to resample."
)
#: the class measures' labels and kappa's weights matrix: the resampled statistics are the
#: classes seen
OVER_LABELS_MESSAGE = (
    "{func} cannot resample {name} over labels or with a weights matrix: it resamples over "
    "the classes seen (kappa's weights NULL, 'linear' or 'quadratic'). evaluate takes them."
)
MIXED_MESSAGE = (
    "{func} takes measures of one kind of input: label lists ({sets}), one label per row "
    "({classes}), numbers ({numbers}), a 0/1 label and a score ({scores}) or a label and its "
    "class probabilities ({class_scores}). Got {first} and {other}."
)
ENTRY_MESSAGE = (
    "The 'measures' parameter of {func} must be a non-empty list of measure names or "
    "(name, {{parameter: value}}) pairs. Got {got!r} instead."
)

Columns = dict[str, np.ndarray]


@dataclass(frozen=True)
class Chosen:
    """One measure the caller asked for: its output label, statistics kind and evaluation."""

    label: str
    name: str
    stats: str
    evaluate: Callable[[WeightedOps, Columns], Any]
    #: a per-label average's ``labels`` universe (checked against the columns' kind), or None
    universe: list[Any] | None = None

    @property
    def zero_one(self) -> bool:
        """Whether each row's outcome is 0 or 1 (McNemar's exact test applies)."""
        return self.name in ZERO_ONE


def _canonical_names() -> dict[str, str]:
    measures()
    out = {m.name: m.name for m in REGISTRY.values()}
    out.update({a: m.name for m in REGISTRY.values() for a in m.aliases})
    return out


def _entries(given: Any, func: str) -> list[tuple[str, dict[str, Any]]]:
    if isinstance(given, str) or not isinstance(given, Sequence) or not given:
        raise MlsqlError(ENTRY_MESSAGE.format(func=func, got=given))
    out: list[tuple[str, dict[str, Any]]] = []
    for entry in given:
        if isinstance(entry, str):
            out.append((entry, {}))
        elif (
            isinstance(entry, (tuple, list))
            and len(entry) == 2
            and isinstance(entry[0], str)
            and isinstance(entry[1], dict)
        ):
            out.append((entry[0], dict(entry[1])))
        else:
            raise MlsqlError(ENTRY_MESSAGE.format(func=func, got=given))
    return out


def _label(name: str, params: dict[str, Any]) -> str:
    if not params:
        return name
    return f"{name}({', '.join(f'{k}={v!r}' for k, v in sorted(params.items()))})"


def resolve(given: Any, func: str) -> list[Chosen]:
    """The measures of ``given`` (names or (name, params) pairs), checked, of one stats kind.

    Examples
    --------
    >>> [c.label for c in resolve(["micro_f1", ("micro_fbeta", {"beta": 2})], "bootstrap")]
    ['micro_f1', 'micro_fbeta(beta=2)']
    """
    names = _canonical_names()
    allowed = ", ".join(
        (
            *LABEL_SET_MEASURES,
            *LB_MEASURES,
            *CLASS_MEASURES,
            *NUM.REGRESSION_MEASURES,
            *NUM.SCORE_MEASURES,
            *NUM.CLASS_SCORE_MEASURES,
        )
    )
    chosen = []
    for given_name, params in _entries(given, func):
        name = names.get(given_name)
        number_kind = next((k for k, ms in NUM.KINDS.items() if name in ms), None)
        if number_kind is not None and name is not None:
            evaluate = NUM.evaluator(name, checked_params(name, params))
            chosen.append(Chosen(_label(given_name, params), name, number_kind, evaluate))
            continue
        if name in LB_MEASURES:
            checked = checked_params(name, params)
            evaluate = _label_average(name, checked)
            universe = LT.check_universe(checked.get("labels"), name)
            label = _label(given_name, params)
            chosen.append(Chosen(label, name, "label_lists", evaluate, universe))
            continue
        if name not in LABEL_SET_MEASURES and name not in CLASS_MEASURES:
            raise MlsqlError(
                UNSUPPORTED_MESSAGE.format(func=func, name=given_name, allowed=allowed)
            )
        if name == "fmeasure":
            evaluate = _fmeasure(params)
        else:
            checked = checked_params(name, params)
            if checked.get("labels") is not None or isinstance(
                checked.get("weights"), P.GivenMatrix
            ):
                raise MlsqlError(OVER_LABELS_MESSAGE.format(func=func, name=given_name))
            evaluate = _registry_measure(name, checked)
        kind = "label_sets" if name in LABEL_SET_MEASURES else "classes"
        chosen.append(Chosen(_label(given_name, params), name, kind, evaluate))

    def family(c: Chosen) -> str:
        return "label_sets" if c.stats == "label_lists" else c.stats

    other = next((c for c in chosen if family(c) != family(chosen[0])), None)
    if other is not None:
        raise MlsqlError(
            MIXED_MESSAGE.format(
                func=func,
                sets=", ".join((*LABEL_SET_MEASURES, *LB_MEASURES)),
                classes=", ".join(CLASS_MEASURES),
                numbers=", ".join(NUM.REGRESSION_MEASURES),
                scores=", ".join(NUM.SCORE_MEASURES),
                class_scores=", ".join(NUM.CLASS_SCORE_MEASURES),
                first=chosen[0].label,
                other=other.label,
            )
        )
    return chosen


def stats_kind(chosen: Sequence[Chosen]) -> str:
    """The statistics table that serves every measure of ``chosen``.

    Label sets (tp, |A|, |P|) unless a macro or weighted average needs the
    label lists themselves, which also give every label-set measure its tuple.
    """
    kinds = {c.stats for c in chosen}
    return "label_lists" if "label_lists" in kinds else chosen[0].stats


def _label_average(name: str, params: dict[str, Any]) -> Callable[[WeightedOps, Columns], Any]:
    if params.get("by") is not None:
        raise MlsqlError(BY_MESSAGE.format(name=name))

    def evaluate(ops: WeightedOps, columns: Columns) -> Any:
        return LL.evaluate(name, params, columns, ops.weights)

    return evaluate


def _fmeasure(params: dict[str, Any]) -> Callable[[WeightedOps, Columns], Any]:
    unknown = sorted(set(params) - {"options"})
    if unknown:
        raise TypeError(f"fmeasure() got an unexpected keyword argument {unknown[0]!r}")
    opts = P.parse_hivemall_options(params.get("options", ""))
    if opts.average == "binary":
        raise MlsqlError(P.BINARY_ON_ARRAYS_MESSAGE)

    def evaluate(ops: WeightedOps, columns: Columns) -> Any:
        return ML.hivemall_f(ops, row_stats(columns), opts.beta, ML.HIVEMALL_ZERO)

    return evaluate


def _registry_measure(name: str, params: dict[str, Any]) -> Callable[[WeightedOps, Columns], Any]:
    build = REGISTRY[name].build
    assert build is not None  # every resampled measure has a registry formula

    def evaluate(ops: WeightedOps, columns: Columns) -> Any:
        if name in LABEL_SET_MEASURES:
            stats: Any = row_stats(columns)
        elif name in ("accuracy", "error_rate"):
            stats = agreement(ops, columns)
        else:
            stats = class_stats(ops, columns)
        return build(ops, stats, **params)

    return evaluate


# ------------------------------------------------------------------ statistics of the tuples
def row_stats(columns: Columns) -> F.RowStats:
    """The tuples' (tp, |A|, |P|) as the formulas' row statistics (masked = unknown row).

    From the label lists where the table holds them (``label_lists``).
    """
    if "tp" in columns:
        return F.RowStats(columns["tp"], columns["n_actual"], columns["n_predicted"])
    a_col, p_col = columns["actual"], columns["predicted"]
    unknown = np.array([a is None or p is None for a, p in zip(a_col, p_col, strict=True)])
    sets = [(set(a or ()), set(p or ())) for a, p in zip(a_col, p_col, strict=True)]
    tp, n_a, n_p = (
        np.ma.array([float(f(a, p)) for a, p in sets], mask=unknown)
        for f in (lambda a, p: len(a & p), lambda a, p: len(a), lambda a, p: len(p))
    )
    # kept beside the lists: every batch of resamples reads the same tuples
    columns.update(tp=tp, n_actual=n_a, n_predicted=n_p)
    return F.RowStats(tp, n_a, n_p)


def agreement(ops: WeightedOps, columns: Columns) -> SL.Agreement:
    """Known rows and rows right, weighted."""
    same = columns["actual"] == columns["predicted"]  # masked where either side is NULL
    return SL.Agreement(n=ops.count(same), correct=ops.sum(ops.when(same, 1.0, 0.0) + same * 0))


def class_stats(ops: WeightedOps, columns: Columns) -> SL.ClassStats:
    """The weighted confusion counts of every class present, as the class formulas take them.

    Classes are those seen on either side in each resample (a class none of whose rows
    was drawn is not there, as in the engines; one whose rows weigh 0 is); positions are
    over the classes present, sorted.
    """
    a, p = columns["actual"], columns["predicted"]
    known = ~(np.ma.getmaskarray(a) | np.ma.getmaskarray(p))
    a_known, p_known = np.ma.getdata(a)[known], np.ma.getdata(p)[known]
    classes = np.unique(np.concatenate([a_known, p_known]))
    weights = ops.weights * known  # (R, T): only known rows count
    a_code = np.searchsorted(classes, np.ma.getdata(a)[known])
    p_code = np.searchsorted(classes, np.ma.getdata(p)[known])
    w = weights[..., known]
    k = len(classes)
    a_hot, p_hot = np.eye(k)[a_code], np.eye(k)[p_code]
    actual, predicted = w @ a_hot, w @ p_hot
    correct = w @ (a_hot * (a_code == p_code)[:, None])
    # weighted, the classes are those of the rows drawn (draws, or m) whatever their weight,
    # and the known rows' number is given, as the engines' class statistics (and
    # scikit-learn's labels) have them: a class of rows weighing 0 is a class without weight,
    # and rows that all weigh 0 give the measures' undefined value, not NULL
    drawn = ops.rows if isinstance(ops.rows, np.ndarray) else None
    if drawn is None:
        present = (actual + predicted) > 0
        rows = None
    else:
        d = np.broadcast_to(drawn * known, weights.shape)[..., known]
        present = (d @ a_hot + d @ p_hot) > 0
        rows = d.sum(axis=-1)
    position = np.cumsum(present, axis=-1) - 1.0
    axis = WeightedOps(present)
    n = weights.sum(axis=-1)

    def pair_sum(term: Callable[[SL.ClassView, SL.ClassView], Any]) -> Any:
        left = SL.ClassView(position[..., :, None], actual[..., :, None], predicted[..., :, None])
        right = SL.ClassView(position[..., None, :], actual[..., None, :], predicted[..., None, :])
        both = present[..., :, None] & present[..., None, :]
        return np.ma.asarray(np.where(both, np.ma.getdata(term(left, right)), 0.0)).sum(
            axis=(-2, -1)
        )

    def row_pair_sum(term: Callable[[Any, Any], Any]) -> Any:
        i = np.take_along_axis(
            position, np.broadcast_to(a_code, (*position.shape[:-1], len(a_code))), -1
        )
        j = np.take_along_axis(
            position, np.broadcast_to(p_code, (*position.shape[:-1], len(p_code))), -1
        )
        return np.ma.asarray((w * np.ma.getdata(term(i, j))).sum(axis=-1))

    return SL.ClassStats(
        n=n,
        index=np.ma.array(position, mask=~present),
        actual=actual,
        predicted=predicted,
        correct=correct,
        axis=axis,
        pair_sum=pair_sum,
        row_pair_sum=row_pair_sum,
        rows=rows,
    )
