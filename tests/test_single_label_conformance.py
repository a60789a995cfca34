"""The lecture's single-label examples on every engine: error, accuracy, kappa, majority class."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tests import oracle_single as O
from tests.conftest import conformance
from tests.test_single_label_tables import close, needs

SLIDES = conformance("slides_single_label.json")
EXAMPLES = ["ten_rows", "animals"]


def table_of(example: str) -> pa.Table:
    data = SLIDES[example]
    return pa.table({"actual": data["actual"], "predicted": data["predicted"]})


def cases() -> list[tuple[str, str, str, tuple[str, ...]]]:
    out = []
    for example in EXAMPLES:
        for key in SLIDES[example]["expected"]:
            if key in ("error_rate", "accuracy"):
                out.append((example, key, key, ("actual", "predicted")))
            elif key == "kappa":
                out += [
                    (example, key, name, ("actual", "predicted"))
                    for name in ("kappa", "cohen_kappa_score")
                ]
            elif key in ("majority_class", "minority_class", "majority_error"):
                out.append((example, key, key, ("actual",)))
    return out


@pytest.mark.parametrize(("example", "key", "name", "columns"), cases(), ids=str)
def test_slides_value(engine, example, key, name, columns):
    needs(engine, name)
    want = SLIDES[example]["expected"][key]
    got = engine.aggregate(name, table_of(example), columns=columns)
    assert got == want if isinstance(want, str) else close(got, want), (name, got, want)


@pytest.mark.parametrize("example", EXAMPLES)
def test_slides_kappa_equals_the_oracle_and_the_weighted_ones_too(engine, example):
    needs(engine, "cohen_kappa_score")
    data = SLIDES[example]
    rows = list(zip(data["actual"], data["predicted"], strict=True))
    assert close(O.kappa(rows), data["expected"]["kappa"])  # the oracle agrees with the slides
    for weights in (None, "linear", "quadratic"):
        got = engine.aggregate("cohen_kappa_score", table_of(example), weights=weights)
        assert close(got, O.kappa(rows, weights)), weights


@pytest.mark.parametrize("example", EXAMPLES)
def test_prevalence_is_the_class_share(engine, example):
    needs(engine, "prevalence")
    data = SLIDES[example]
    for cls, (_, share) in O.distribution(data["actual"]).items():
        got = engine.aggregate("prevalence", table_of(example), columns=("actual",), positive=cls)
        assert close(got, share), cls


@pytest.mark.parametrize("example", EXAMPLES)
def test_class_error_rate_of_each_class(engine, example):
    needs(engine, "class_error_rate")
    data = SLIDES[example]
    rows = list(zip(data["actual"], data["predicted"], strict=True))
    for cls, k in O.per_class(rows).items():
        got = engine.aggregate("class_error_rate", table_of(example), label=cls)
        assert close(got, O.ratio(k["fn"], k["support"], 0, False)), cls


@pytest.mark.first(rank=17)
@pytest.mark.parametrize("example", EXAMPLES)
def test_averaged_scores_balanced_accuracy_and_mcc_match_the_oracle(engine, example):
    needs(engine, "f1_score")
    data = SLIDES[example]
    rows = list(zip(data["actual"], data["predicted"], strict=True))
    table = table_of(example)
    for average in ("micro", "macro", "weighted"):
        for measure in ("precision", "recall"):
            got = engine.aggregate(f"{measure}_score", table, average=average)
            assert close(got, O.averaged(rows, measure, average)), (measure, average)
        got = engine.aggregate("fbeta_score", table, beta=0.5, average=average)
        assert close(got, O.averaged(rows, "fbeta", average, beta=0.5)), average
        got = engine.aggregate("f1_score", table, average=average)
        assert close(got, O.averaged(rows, "fbeta", average)), average
    assert close(engine.aggregate("balanced_accuracy_score", table), O.balanced_accuracy(rows))
    assert close(engine.aggregate("matthews_corrcoef", table), O.mcc(rows))


#: the Spark runs of these cases are long tests (tests/conftest.py reads it): the README's
#: suite keeps to its ten minutes, and `.ci/run` runs them right after it
LONG_ENGINES = ("spark",)
