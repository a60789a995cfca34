"""mlsql.spark.register(spark): per-row and from-counts functions in plain Spark SQL."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest

from tests import oracle
from tests import oracle_single as O
from tests.engines.spark_engine import session

pytest.importorskip("pyspark")

import mlsql.spark as ms

#: every test here is long: Spark's own tests, where each Spark call plans for a second (with
#: the Spark engine's doctests, a tenth of the README's suite)
pytestmark = pytest.mark.long

ROWS = [
    (["a", "b", "b", None], ["a", "c"]),
    ([], []),
    (None, ["a"]),
    (["c", None], [None, "c", "d"]),
    (["a"], []),
]
PER_ROW = [
    "true_positives",
    "false_positives",
    "false_negatives",
    "set_jaccard",
    "row_precision",
    "row_recall",
    "row_fbeta",
    "set_intersection",
    "set_difference",
    "set_union",
    "set_symmetric_difference",
]
FROM_COUNTS = [
    ("micro_precision_from_counts", "micro_precision", {}),
    ("micro_recall_from_counts", "micro_recall", {}),
    ("micro_fbeta_from_counts", "micro_fbeta", {"beta": 2.0}),
    ("micro_f1_from_counts", "micro_f1", {}),
    ("micro_jaccard_from_counts", "micro_jaccard", {}),
    ("subset_accuracy_from_counts", "subset_accuracy", {}),
    ("zero_one_loss_from_counts", "zero_one_loss", {}),
    ("hamming_loss_from_counts", "hamming_loss", {"n_labels": 5}),
]


def same(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if isinstance(want, list):
        return got == want
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)


def sql_value(value: Any) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, float) and math.isnan(value):
        return "double('NaN')"
    return repr(value)


@pytest.fixture(scope="module")
def spark():
    """The test session with mlsql's SQL functions, registered once (each is a CREATE FUNCTION)."""
    s = session()
    ms.register(s)
    s.createDataFrame(
        ROWS, "actual array<string>, predicted array<string>"
    ).createOrReplaceTempView("preds")
    return s


ZERO_DIVISIONS = [0, 1, float("nan"), "diagnose", "ignore"]


def test_per_row_functions_in_plain_sql(spark):
    """Every zero_division convention as columns of one query (one Spark job, not five)."""

    def call(name: str, zd: Any, case: int) -> tuple[str, dict[str, Any]]:
        params: dict[str, Any] = {}
        if name in ("set_jaccard", "row_precision", "row_recall", "row_fbeta"):
            params["zero_division"] = zd
        if name == "row_fbeta":
            params["beta"] = 0.5
        args = "".join(f", {k} => {sql_value(v)}" for k, v in params.items())
        return f"{name}(actual, predicted{args}) AS {name}_{case}", params

    calls = {
        f"{name}_{case}": (name, *call(name, zd, case))
        for case, zd in enumerate(ZERO_DIVISIONS)
        for name in PER_ROW
    }
    sql = f"SELECT actual, predicted, {', '.join(c for _, c, _ in calls.values())} FROM preds"
    for row in spark.sql(sql).collect():
        for column, (name, _, params) in calls.items():
            want = oracle.per_row(name, row["actual"], row["predicted"], **params)
            assert same(row[column], want), f"{name}{params} on {row}: {row[column]} != {want}"


def test_from_counts_functions_score_stored_counts(spark):
    counts = spark.table("preds").agg(ms.multilabel_counts("actual", "predicted").alias("c"))
    counts.createOrReplaceTempView("stored")
    data = [(a, p) for a, p in ROWS]
    for fn, direct, params in FROM_COUNTS:
        args = "".join(f", {k} => {sql_value(v)}" for k, v in params.items())
        got = spark.sql(f"SELECT {fn}(c{args}) FROM stored").first()[0]
        assert same(got, oracle.aggregate(direct, data, **params)), fn


def counts_sql(tp: int, fp: int, fn: int, n_rows: int = 1, n_exact: int = 0) -> str:
    """A hand-made counts struct, fields in multilabel_counts order."""
    return (
        f"named_struct('n_rows', {n_rows}L, 'tp', {tp}L, 'fp', {fp}L, 'fn', {fn}L, "
        f"'n_actual', {tp + fn}L, 'n_predicted', {tp + fp}L, 'n_exact', {n_exact}L)"
    )


def test_from_counts_takes_hand_made_structs(spark):
    got = spark.sql(
        f"SELECT micro_precision_from_counts({counts_sql(1, 3, 0)}), "
        f"micro_recall_from_counts({counts_sql(1, 0, 3)}), "
        f"subset_accuracy_from_counts({counts_sql(1, 0, 0, n_rows=4, n_exact=1)})"
    ).first()
    assert tuple(got) == (0.25, 0.25, 0.25)


BIG = 2**62
#: stored counts that are weighted (fractions) or near 2^62, with their exact values: the SQL
#: functions' BIGINT parameters truncated the first (precision 2/3 for 2.5 / 4.25, as the
#: Column functions did before) and overflowed in the formulas' sums on the second
STORED = [
    ("binary_precision_from_counts(2.5D, 1.75D, 0.5D, 3.25D)", Fraction(10, 17)),
    (f"binary_kappa_from_counts({BIG}, {BIG}, {BIG}, 1)", O.two_by_two(BIG, BIG, BIG, 1, "kappa")),
    (
        "micro_precision_from_counts(named_struct('n_rows', 4D, 'tp', 2.5D, 'fp', 1.5D, "
        "'fn', 1D, 'n_actual', 3.5D, 'n_predicted', 4D, 'n_exact', 1D))",
        Fraction(5, 8),
    ),
    (
        f"micro_recall_from_counts(named_struct('n_rows', {BIG}L, 'tp', {BIG}L, 'fp', {BIG - 5}L,"
        f" 'fn', {BIG + 7}L, 'n_actual', {BIG}L, 'n_predicted', {BIG}L, 'n_exact', 0L))",
        Fraction(BIG, 2 * BIG + 7),
    ),
]


@pytest.mark.parametrize(("sql", "exact"), STORED, ids=[s.split("(")[0] for s, _ in STORED])
def test_from_counts_functions_take_weighted_and_huge_counts(spark, sql, exact):
    got = spark.sql(f"SELECT {sql}").first()[0]
    assert math.isclose(got, exact, rel_tol=1e-12), (got, float(exact))


def test_from_counts_zero_division_conventions(spark):
    empty = counts_sql(0, 0, 0)
    row = spark.sql(
        f"SELECT micro_f1_from_counts({empty}), micro_f1_from_counts({empty}, zero_division => 1), "
        f"micro_f1_from_counts({empty}, zero_division => 'diagnose'), "
        f"micro_f1_from_counts({empty}, zero_division => 'ignore'), "
        f"micro_f1_from_counts({empty}, zero_division => double('NaN')), "
        f"micro_f1_from_counts({empty}, zero_division => 1.0)"
    ).first()
    assert row[0] == 0.0 and row[1] == 1.0 and row[2] == 1.0 and row[3] is None
    assert math.isnan(row[4]) and row[5] == 1.0


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            f"micro_f1_from_counts({counts_sql(1, 0, 0)}, zero_division => 'warn')",
            "The 'zero_division' parameter of micro_f1_from_counts must be one of 0, 1, nan, "
            "'diagnose', 'ignore'. Got 'warn' instead.",
        ),
        (
            "row_fbeta(array('a'), array('a'), beta => -1)",
            "The 'beta' parameter of row_fbeta must be a finite number > 0. Got -1.0 instead.",
        ),
        (
            "row_fbeta(array('a'), array('a'), beta => double('NaN'))",
            "The 'beta' parameter of row_fbeta must be a finite number > 0. Got nan instead.",
        ),
        (
            f"hamming_loss_from_counts({counts_sql(1, 0, 0)}, 2.5)",
            "The 'n_labels' parameter of hamming_loss_from_counts must be a whole number > 0. "
            "Got 2.5 instead.",
        ),
        (
            "micro_f1_from_counts(named_struct('tp', 1L, 'fp', 0L))",
            'cannot cast "STRUCT<tp: BIGINT NOT NULL, fp: BIGINT NOT NULL>" to "STRUCT<n_rows',
        ),
    ],
)
def test_sql_errors_carry_mlsql_messages(spark, sql, message):
    with pytest.raises(Exception) as info:
        spark.sql(f"SELECT {sql}").collect()
    assert message in str(info.value)


def test_zero_division_checked_even_when_nothing_is_undefined(spark):
    with pytest.raises(Exception, match="'zero_division' parameter of set_jaccard"):
        spark.sql("SELECT set_jaccard(array('a'), array('a'), zero_division => 'bogus')").collect()


def test_integer_labels_and_a_prefix():
    s = session()
    names = ms.register(s, prefix="ml_", label_type="BIGINT")
    assert "ml_set_union" in names and "ml_micro_f1_from_counts" in names
    row = s.sql(
        "SELECT ml_set_union(array(3, 1), array(CAST(2 AS INT), NULL)), "
        "ml_true_positives(array(1, 1, 2), array(1L))"
    ).first()
    assert row[0] == [1, 2, 3] and row[1] == 1
    with pytest.raises(ms.MlsqlError, match="'prefix' parameter of register must be letters"):
        ms.register(s, prefix="x`; DROP")
    with pytest.raises(ms.MlsqlError, match="label_type must be a Spark SQL type"):
        ms.register(s, label_type="STRING>, x INT) RETURN 1; --")


def test_registered_functions_are_the_per_row_and_from_counts_measures(spark):
    from mlsql._registry import measures

    names = set(ms.register(spark))
    want = {
        m.name
        for m in measures()
        if m.kind in ("set", "row", "from_counts")
        and m.available_in("spark")
        and (
            m.family == "multilabel"
            or (m.kind == "from_counts" and m.family in ("binary", "rules"))
        )
    }
    assert want <= names
    assert not any(m.kind == "aggregate" and m.name in names for m in measures())


#: the 2x2 families' stored-counts functions in SQL -> (oracle name, parameters given in SQL)
TWO_BY_TWO = {
    "binary_precision_from_counts": ("prel", {}),
    "binary_negative_predictive_value_from_counts": ("nrel", {}),
    "binary_recall_from_counts": ("sens", {}),
    "binary_specificity_from_counts": ("spec", {}),
    "binary_support_from_counts": ("sup", {}),
    "binary_accuracy_from_counts": ("tacc", {}),
    "binary_coverage_from_counts": ("cov", {}),
    "binary_error_rate_from_counts": ("error_rate", {}),
    "binary_false_negative_rate_from_counts": ("fnr", {}),
    "binary_false_positive_rate_from_counts": ("fpr", {}),
    "binary_kappa_from_counts": ("kappa", {}),
    "binary_f1_from_counts": ("fbeta", {"beta": 1}),
    "binary_fbeta_from_counts": ("fbeta", {"beta": 2}),
    "binary_f_alpha_from_counts": ("f_alpha", {"alpha": 4}),
    "binary_cost_error_from_counts": ("cost_error", {"cost_fn": 5, "cost_fp": 0.5}),
    "rule_novelty_from_counts": ("nov", {}),
    "rule_satisfaction_from_counts": ("sat", {}),
}
CELLS = [(3, 1, 2, 4), (0, 0, 0, 5), (0, 2, 0, 0), (5, 0, 0, 0), (0, 0, 3, 0), (1, 1, 1, 1)]


@pytest.mark.parametrize("zd", ["0", "1", "nan", "diagnose", "ignore"])
def test_two_by_two_from_counts_in_plain_sql_match_the_oracle(spark, zd):
    """Every function on every cell set as columns of one query, per zero_division value.

    A few queries per value: a single query of all five (510 calls) did not finish in
    ten minutes on a loaded machine.
    """
    from mlsql._registry import REGISTRY
    from tests import oracle_single as O
    from tests.test_single_label_tables import close

    zd_value = {"nan": float("nan")}.get(zd, int(zd) if zd in "01" else zd)
    calls, wants = [], []
    for name, (short, params) in TWO_BY_TWO.items():
        takes_zd = any(p.name == "zero_division" for p in REGISTRY[name].params)
        sql_params = {} if name == "binary_f1_from_counts" else params  # F1 takes no beta
        args = [f"{k} => {float(v)}D" for k, v in sql_params.items()]
        if takes_zd:
            args.append(f"zero_division => '{zd}'")
        for tp, fp, fn, tn in CELLS:
            calls.append(f"{name}({tp}, {fp}, {fn}, {tn}{''.join(', ' + a for a in args)})")
            want = O.two_by_two(tp, fp, fn, tn, short, zd_value if takes_zd else 0, **params)
            wants.append((calls[-1], want))
    # in queries of at most 12 calls: Catalyst's plan of many nested CASEs is large (one query
    # of all 102 ran the test driver out of heap under 'ignore', and so did queries of 36 calls
    # after the other long tests had run on the same driver)
    got: list = []
    for start in range(0, len(calls), 12):
        got += list(spark.sql("SELECT " + ", ".join(calls[start : start + 12])).first())
    for value, (call, want) in zip(got, wants, strict=True):
        assert close(value, want), (call, value, want)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            "binary_f_alpha_from_counts(1, 1, 1, 1, alpha => 0.0D)",
            "'alpha' parameter of binary_f_alpha_from_counts must be a finite number > 0",
        ),
        (
            "binary_cost_error_from_counts(1, 1, 1, 1, cost_fn => CAST('NaN' AS DOUBLE))",
            "'cost_fn' parameter of binary_cost_error_from_counts must be a finite number",
        ),
        (
            "binary_fbeta_from_counts(1, 1, 1, 1, beta => -1.0D)",
            "'beta' parameter of binary_fbeta_from_counts must be a finite number > 0",
        ),
        (
            "rule_satisfaction_from_counts(1, 1, 1, 1, zero_division => 'x')",
            "'zero_division' parameter of rule_satisfaction_from_counts must be one of",
        ),
    ],
)
def test_two_by_two_sql_parameters_are_checked(spark, call, message):
    with pytest.raises(Exception, match=message.replace("(", r"\(")):
        spark.sql(f"SELECT {call}").collect()
