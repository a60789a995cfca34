"""``sample_weight`` on the single-label, binary, rule, regression and score measures, every engine.

Three properties, each in one query per engine:

1. integer weights give the unweighted measure over the rows repeated w times (a weight of 0
   drops the row, a NULL weight makes it unknown), for every weighted measure of these
   families in the registry: a weighted measure with no inputs here fails the test;
2. float weights give scikit-learn's ``sample_weight`` results where scikit-learn has the
   measure;
3. a negative, NaN or infinite weight is an error with the same words in every engine, and a
   weight that is not a number is refused naming ``sample_weight``.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from sklearn import metrics as M

from mlsql import _params as P
from mlsql._registry import measures
from mlsql._sqlexpr import Sql, lit
from tests.test_reliability_inputs import assert_mlsql_error

#: the Spark cases of this file run with the long tests (tests/conftest.py): one Spark
#: query per measure and case, 76 test-seconds of the README suite
LONG_ENGINES = ("spark",)

#: the families weighted here (the list families are weighted in their own tests)
FAMILIES = ("single_label", "binary", "rules", "regression", "scores")
#: each family's input names -> the column of the test table holding them
COLUMNS = {
    "single_label": {"actual": "actual", "predicted": "predicted", "label": "actual"},
    "binary": {"actual": "yb", "predicted": "pb"},
    "rules": {"holds": "yb", "fires": "pb"},
    "regression": {"actual": "ry", "predicted": "rp"},
    "scores": {"actual": "yb", "label": "yb", "predicted": "s", "score": "s", "prob": "s"},
}
#: parameter sets per measure (default: only the defaults)
PARAMS: dict[str, list[dict[str, Any]]] = {
    "prevalence": [{"positive": 1}],
    "class_error_rate": [{"label": 1}],
    "cost_error": [{"costs": {0: {1: 5.0}, 2: {2: 0.5}}}],
    "precision_score": [{}, {"average": "micro"}, {"average": "weighted"}],
    "recall_score": [{}, {"average": "micro"}, {"average": "weighted"}],
    "fbeta_score": [{"beta": 2.0, "average": "weighted"}],
    "f1_score": [{}, {"average": "micro"}, {"average": "weighted"}],
    "cohen_kappa_score": [{}, {"weights": "linear"}, {"weights": "quadratic"}],
    "expected_calibration_error": [{}, {"n_bins": 3}],
    "binary_cost_error": [{"cost_fn": 3.0, "cost_fp": 0.5}],
}
N = 40


def _table(seed: int, weights: list[Any]) -> pa.Table:
    """Every family's columns over N rows (a few NULLs), with the weights ``w``."""
    rng = np.random.default_rng(seed)
    actual = [int(x) for x in rng.integers(0, 4, N)]
    predicted = [int(x) for x in rng.integers(0, 4, N)]
    yb = [int(x) for x in rng.integers(0, 2, N)]
    pb = [int(x) for x in rng.integers(0, 2, N)]
    s = [int(x) / 4 for x in rng.integers(0, 5, N)]  # ties
    ry = [float(x) for x in np.round(rng.normal(size=N), 3)]
    rp = [float(x) for x in np.round(rng.normal(size=N), 3)]
    for column in (actual, yb, ry):  # a few unknown rows
        column[3] = None
    for column in (predicted, pb, s, rp):
        column[7] = None
    return pa.table(
        {
            "actual": actual,
            "predicted": predicted,
            "yb": yb,
            "pb": pb,
            "s": s,
            "ry": ry,
            "rp": rp,
            "w": pa.array(weights, pa.float64()),
        }
    )


def _repeated(table: pa.Table) -> pa.Table:
    """Each row ``w`` times (w = 0 or NULL: not at all), without the weights."""
    rows = table.to_pylist()
    out = [r for r in rows if r["w"] is not None for _ in range(int(r["w"]))]
    columns = [c for c in table.column_names if c != "w"]
    return pa.Table.from_pylist(
        [{c: r[c] for c in columns} for r in out],
        schema=table.schema.remove(table.schema.get_field_index("w")),
    )


def weighted_measures(engine: str, *, tables: bool = False) -> list[Any]:
    """Every weighted aggregate (or, with ``tables``, table) of these families in ``engine``."""
    return [
        m
        for family in FAMILIES
        for m in measures(family=family)
        if m.weighted and m.available_in(engine) and (m.kind == "table") == tables
    ]


#: cost_error's costs as a DuckDB map literal (Polars and Spark take the dict)
DUCKDB_COSTS = Sql("MAP {0: MAP {1: 5.0}, 2: MAP {2: 0.5}}")


#: each measure's family
REGISTRY_FAMILY = {m.name: m.family for m in measures()}


def _calls(engine: str) -> list[tuple[str, tuple[str, ...], dict[str, Any]]]:
    calls = []
    for m in weighted_measures(engine):
        columns = tuple(COLUMNS[m.family][name] for name in m.inputs)  # KeyError: not covered
        for params in PARAMS.get(m.name, [{}]):
            if engine == "duckdb" and "costs" in params:
                params = {**params, "costs": DUCKDB_COSTS}
            calls.append((m.name, columns, params))
    return calls


def _plain(x: Any) -> Any:
    if hasattr(x, "asDict"):
        x = x.asDict()
    return {k: float(v) for k, v in x.items()} if isinstance(x, dict) else x


def _close(got: Any, expected: Any) -> bool:
    got, expected = _plain(got), _plain(expected)
    if isinstance(expected, dict):
        return got.keys() == expected.keys() and all(_close(got[k], expected[k]) for k in got)
    if expected is None or got is None:
        return got is expected
    if math.isnan(expected):
        return math.isnan(got)
    return math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12)


def test_every_weighted_measure_of_these_families_is_covered():
    for engine in ("duckdb", "polars", "spark"):
        names = {name for name, _, _ in _calls(engine)}
        assert names == {m.name for m in weighted_measures(engine)}
        assert {m.name for m in weighted_measures(engine, tables=True)} <= set(TABLES)
    assert "accuracy" in names and "binary_counts" in names and "auc" in names


@pytest.mark.long_cases("duckdb-single_label", "polars-regression")
@pytest.mark.parametrize("family", FAMILIES)
def test_integer_weights_equal_repeated_rows(engine, family):
    """One query per family: Spark's optimizer takes minutes over all of them in one plan."""
    rng = np.random.default_rng(100)
    weights: list[Any] = [float(x) for x in rng.integers(0, 4, N)]
    weights[5] = None  # an unknown row
    table = _table(0, weights)
    calls = [c for c in _calls(engine.name) if REGISTRY_FAMILY[c[0]] == family]
    got = engine.many(table, [(n, c, {**p, "sample_weight": "w"}) for n, c, p in calls])
    expected = engine.many(_repeated(table), calls)
    wrong = [
        (call, g, e) for call, g, e in zip(calls, got, expected, strict=True) if not _close(g, e)
    ]
    assert not wrong


def test_weights_of_one_are_the_unweighted_measure(engine):
    table = _table(2, [1.0] * N)
    calls = [c for c in _calls(engine.name) if c[0] in ONE_PER_FAMILY]
    got = engine.many(table, [(n, c, {**p, "sample_weight": "w"}) for n, c, p in calls])
    expected = engine.many(table, calls)
    assert all(_close(g, e) for g, e in zip(got, expected, strict=True))


#: a measure of each family and kind of statistics, for the checks that need not run them all
ONE_PER_FAMILY = (
    "accuracy",
    "matthews_corrcoef",
    "prevalence",
    "binary_counts",
    "rule_novelty",
    "r2",
    "auc",
    "average_precision_score",
    "expected_calibration_error",
)


#: (mlsql call, scikit-learn function of (y_true, y_pred, sample_weight), columns)
SKLEARN = [
    (("accuracy", {}), M.accuracy_score, ("actual", "predicted")),
    (("balanced_accuracy_score", {}), M.balanced_accuracy_score, ("actual", "predicted")),
    (("cohen_kappa_score", {}), M.cohen_kappa_score, ("actual", "predicted")),
    (
        ("cohen_kappa_score", {"weights": "quadratic"}),
        lambda y, p, sample_weight: M.cohen_kappa_score(
            y, p, weights="quadratic", sample_weight=sample_weight
        ),
        ("actual", "predicted"),
    ),
    (("matthews_corrcoef", {}), M.matthews_corrcoef, ("actual", "predicted")),
    *(
        (
            (name, {"average": average}),
            lambda y, p, sample_weight, f=f, average=average: f(
                y, p, average=average, sample_weight=sample_weight, zero_division=0
            ),
            ("actual", "predicted"),
        )
        for name, f in (
            ("precision_score", M.precision_score),
            ("recall_score", M.recall_score),
            ("f1_score", M.f1_score),
        )
        for average in ("micro", "macro", "weighted")
    ),
    (("binary_precision", {}), M.precision_score, ("yb", "pb")),
    (("binary_recall", {}), M.recall_score, ("yb", "pb")),
    (("binary_f1", {}), M.f1_score, ("yb", "pb")),
    (("binary_accuracy", {}), M.accuracy_score, ("yb", "pb")),
    (("mae", {}), M.mean_absolute_error, ("ry", "rp")),
    (("mse", {}), M.mean_squared_error, ("ry", "rp")),
    (("r2", {}), M.r2_score, ("ry", "rp")),
    (("explained_variance", {}), M.explained_variance_score, ("ry", "rp")),
    (
        ("logloss", {}),
        lambda y, p, sample_weight: M.log_loss(
            y, np.clip(p, 1e-15, 1 - 1e-15), sample_weight=sample_weight, labels=[0, 1]
        ),
        ("yb", "s"),
    ),
    (("brier_score_loss", {}), M.brier_score_loss, ("yb", "s")),
    (("average_precision_score", {}), M.average_precision_score, ("yb", "s")),
    (("auc", {}), M.roc_auc_score, ("yb", "s")),
]


@pytest.mark.parametrize("seed", [0, 1])
def test_float_weights_equal_scikit_learn(engine, seed):
    rng = np.random.default_rng(200 + seed)
    weights = [float(x) for x in rng.random(N) * 3]
    weights[11] = 0.0
    table = _table(seed, weights)
    calls = [
        (name, columns, {**params, "sample_weight": "w"}) for (name, params), _, columns in SKLEARN
    ]
    got = engine.many(table, calls)
    rows = table.to_pylist()
    for ((name, params), reference, columns), value in zip(SKLEARN, got, strict=True):
        known = [r for r in rows if all(r[c] is not None for c in columns)]
        y, p = (np.array([r[c] for r in known]) for c in columns)
        expected = reference(y, p, sample_weight=np.array([r["w"] for r in known]))
        assert math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-12), (name, params)


#: a measure of each family, with its columns
CHECKED = [
    ("accuracy", ("actual", "predicted")),
    ("precision_score", ("actual", "predicted")),
    ("binary_precision", ("yb", "pb")),
    ("rule_novelty", ("yb", "pb")),
    ("mse", ("ry", "rp")),
    ("auc", ("yb", "s")),
    ("average_precision_score", ("yb", "s")),
    ("area_under_pr", ("yb", "s")),
]


@pytest.mark.parametrize(
    ("bad", "got"),
    [
        (-0.5, "a negative number"),
        (float("nan"), "NaN"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
    ],
)
@pytest.mark.parametrize(("measure", "columns"), CHECKED)
def test_bad_weight_is_an_error(engine, measure, columns, bad, got):
    weights = [1.0] * N
    weights[0] = bad
    message = P.sample_weight_message(measure, got)
    with pytest.raises(Exception, match=re.escape(message)) as info:
        engine.many(_table(3, weights), [(measure, columns, {"sample_weight": "w"})])
    assert_mlsql_error(engine, info.value, when_read=True)


def test_a_weight_that_is_not_a_number_is_refused(engine):
    table = _table(4, [1.0] * N).append_column("text", pa.array(["1"] * N))
    with pytest.raises(Exception, match=r"accuracy takes numbers for sample_weight\. Got ") as info:
        if engine.name == "spark":  # Spark checks the types of a DataFrame's Columns, not names
            import mlsql.spark as ms
            from tests.engines.spark_engine import frame

            df = frame(table)
            ms.accuracy(df.actual, df.predicted, sample_weight=df.text)
        else:
            engine.many(table, [("accuracy", ("actual", "predicted"), {"sample_weight": "text"})])
    assert_mlsql_error(engine, info.value)


#: measures whose 'diagnose' value for a perfect prediction is 0 (relative errors), not 1
DIAGNOSED_AS_NO_ERROR = frozenset({"rse", "rrse", "rae"})


def _all_zero_value(name: str, params: dict[str, Any]) -> Any:
    """What known rows of total weight 0 give (README, "Sample weights"; DESIGN.md 1.8).

    A measure with ``zero_division`` is undefined there: its value is the
    ``zero_division`` value, 'diagnose' reading no weight as nothing to get wrong
    (1, or 0 for a relative error); a measure without it is NULL, as over no rows
    (scikit-learn refuses all-zero weights). ``binary_counts`` holds zeros.
    """
    if name == "binary_counts":
        return dict.fromkeys(("tp", "fp", "fn", "tn"), 0.0)
    zd = params.get("zero_division")
    if zd is None:
        return None
    if zd == "diagnose":
        return 0.0 if name in DIAGNOSED_AS_NO_ERROR else 1.0
    return float(zd)


#: every prediction wrong: each share of rows whose part holds no row, with its exact value
ALL_WRONG = [
    ("accuracy", ("actual", "predicted"), {}, 0.0),
    ("error_rate", ("actual", "predicted"), {}, 1.0),
    ("class_error_rate", ("actual", "predicted"), {"label": 1}, 1.0),  # class 1: 2 of 2 missed
    ("prevalence", ("actual",), {"positive": 7}, 0.0),  # no row of class 7
    ("binary_accuracy", ("yb", "pb"), {}, 0.0),
    ("binary_precision", ("yb", "pb"), {}, 0.0),  # tp = 0 < tp + fp
    ("binary_recall", ("yb", "pb"), {}, 0.0),  # tp = 0 < tp + fn
]


@pytest.mark.parametrize("scale", [1.0, 2.5, 1e150, 1e-150])
def test_a_share_whose_part_holds_no_row_is_zero_at_every_weight_scale(engine, scale):
    """Every prediction wrong: the weighted share is 0 (or 1 for its complement), as unweighted,
    never NULL (Spark summed the weights of no row to NULL)."""
    table = pa.table(
        {
            "actual": [0, 1, 2, 1],
            "predicted": [1, 2, 0, 0],
            "yb": [1, 0, 1, 0],
            "pb": [0, 1, 0, 1],
            "w": [scale * x for x in (1.0, 2.5, 1.0, 1.0)],
        }
    )
    calls = [
        (name, columns, {**params, "sample_weight": "w"}) for name, columns, params, _ in ALL_WRONG
    ]
    got = engine.many(table, calls)
    assert got == [expected for *_, expected in ALL_WRONG]


#: weights whose sums round in different ways in different orders (0.1 + 3.0 and 3.0 + 0.1
#: are both 3.1, 0.1 + 0.7 + 3.0 is not 0.7 + 3.0 + 0.1)
ROUNDING_WEIGHTS = [0.1, 3.0, 0.7, 2.2, 0.01, 7.77, 1.5, 0.3]


@pytest.mark.parametrize("seed", range(3))
def test_a_class_holding_every_row_weighs_the_group_exactly(engine, seed):
    """Every prediction one class (or every label one class): that class's total weight is the
    group's weight, so the correlation's denominator is 0 (zero_division's value, as
    scikit-learn's 0), the majority error 0 and the kappa interval [0, 0]. Polars summed a
    class's weights by a scaled grid and the group's plainly: they differed in the last bit,
    which gave a NaN correlation or one of 1e-8, and a kappa standard error of 1e-7.

    Kappa's variance with one predicted class is 0 exactly: with a share a of the weight truly
    x, po = pe = a, and its three terms a^3 (1-a)^2 + a^2 (1-a)^3 - a^2 (1-a)^2 cancel."""
    rng = random.Random(seed)
    n = 9
    table = pa.table(
        {
            "actual": [rng.choice("xy") for _ in range(n - 1)] + ["y"],
            "predicted": ["x"] * n,
            "w": [rng.choice(ROUNDING_WEIGHTS) for _ in range(n)],
        }
    )
    cases = [
        ("matthews_corrcoef", ("actual", "predicted"), {}, 0.0),
        ("matthews_corrcoef", ("actual", "predicted"), {"zero_division": 1}, 1.0),
        ("majority_error", ("predicted",), {}, 0.0),
        ("cohen_kappa_score", ("actual", "predicted"), {}, 0.0),
        ("cohen_kappa_std_error", ("actual", "predicted"), {}, 0.0),
        ("cohen_kappa_low", ("actual", "predicted"), {}, 0.0),
        ("cohen_kappa_high", ("actual", "predicted"), {}, 0.0),
    ]
    calls = [(name, columns, {**given, "sample_weight": "w"}) for name, columns, given, _ in cases]
    got = engine.many(table, calls)
    assert got[:2] == [0.0, 1.0], got  # the denominator exactly 0
    # the others are differences of rounded sums: 0 to a unit in the last place of 1, and
    # the standard error (and interval) a square root of such a difference
    assert all(abs(g) <= 1e-15 for g in got[2:4]), got
    assert all(abs(g) <= 1e-9 for g in got[4:]), got


@pytest.mark.long_cases(
    "duckdb-single_label", "duckdb-regression", "polars-single_label", "polars-regression"
)
@pytest.mark.parametrize("family", FAMILIES)
def test_zero_weights_are_allowed_and_all_zero_weighs_nothing(engine, family):
    """Known rows that all weigh 0: every measure's undefined value, and NULL over no known rows."""
    has_zd = {m.name for m in measures() if any(p.name == "zero_division" for p in m.params)}
    calls = [
        (name, columns, {**params, **({"zero_division": zd} if name in has_zd else {})})
        for name, columns, params in _calls(engine.name)
        if REGISTRY_FAMILY[name] == family
        for zd in ((1, "diagnose") if name in has_zd else (None,))
    ]
    weighted = [(n, c, {**p, "sample_weight": "w"}) for n, c, p in calls]
    got = engine.many(_table(5, [0.0] * N), weighted)
    wrong = [
        (call, g)
        for call, g in zip(calls, got, strict=True)
        if not _close(g, _all_zero_value(call[0], call[2]))
    ]
    assert not wrong
    unknown = engine.many(_table(5, [None] * N), weighted)  # no known row: NULL
    known = [(call[0], x) for call, x in zip(calls, unknown, strict=True) if x is not None]
    assert [name for name, _ in known if name != "binary_counts"] == []


#: the weighted tables: name -> (input columns, parameters)
TABLES: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "class_distribution": (("actual",), {}),
    "confusion_matrix": (("actual", "predicted"), {}),
    "confusion_matrix_wide": (("actual", "predicted"), {}),
    "class_metrics": (("actual", "predicted"), {"beta": 2.0}),
}


def _rows(
    engine: Any, name: str, table: pa.Table, weighted: bool, by: str | None, weight: str = "w"
) -> list[Any]:
    """Table measure ``name`` over ``table`` in ``engine`` (weighted by column ``weight``), as
    rows of floats where numeric."""
    columns, params = TABLES[name]
    given = {**params, **({"sample_weight": weight} if weighted else {}), "by": by}
    if engine.name == "duckdb":
        import mlsql

        engine.con.register("weighted_t", table)
        if name == "confusion_matrix_wide":
            rows = mlsql.confusion_matrix_wide(
                engine.con, "weighted_t", *columns, **given
            ).fetchall()
        else:
            extra = {**params, **({"sample_weight": weight} if weighted else {})}
            args = "".join(f", {k} := {lit(v)}" for k, v in extra.items())
            by_sql = ", \"by\" := ['g']" if by else ""
            inputs = ", ".join(str(lit(c)) for c in columns)
            sql = f"SELECT * FROM {name}('weighted_t', {inputs}{args}{by_sql})"
            rows = engine.con.sql(sql).fetchall()
    elif engine.name == "polars":
        import polars as pl

        import mlsql.polars as mp

        rows = getattr(mp, name)(pl.from_arrow(table), *columns, **given).rows()
    else:
        import mlsql.spark as ms
        from tests.engines.spark_engine import frame

        rows = [tuple(r) for r in getattr(ms, name)(frame(table), *columns, **given).collect()]
    return [tuple(float(v) if isinstance(v, (int, float)) else v for v in r) for r in rows]


@pytest.mark.parametrize("by", [None, "g"])
@pytest.mark.parametrize("name", sorted(TABLES))
def test_weighted_tables_equal_repeated_rows(engine, name, by):
    rng = np.random.default_rng(300)
    weights: list[Any] = [float(x) for x in rng.integers(0, 4, N)]
    weights[5] = None
    table = _table(6, weights).append_column("g", pa.array([i % 2 for i in range(N)]))
    repeated = _repeated(table)
    got = _rows(engine, name, table, True, by)
    expected = _rows(engine, name, repeated, False, by)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        assert all(
            _close(x, y) if isinstance(y, float) else x == y for x, y in zip(g, e, strict=True)
        )


def test_class_distribution_of_a_group_that_weighs_nothing(engine):
    """A group whose known rows all weigh 0: its classes are listed with count 0 and share
    NULL, the share of no weight (not NaN, and no division error under Spark's ANSI mode);
    the other group's shares are its weights over their total (1 and 3 of 4)."""
    table = pa.table(
        {"actual": ["a", "b", "a", "c", None], "w": [0.0, 0.0, 1.0, 3.0, 5.0], "g": [0, 0, 1, 1, 1]}
    )
    got = _rows(engine, "class_distribution", table, True, "g")
    assert got == [
        (0.0, "a", 0.0, None),
        (0.0, "b", 0.0, None),
        (1.0, "a", 1.0, 0.25),
        (1.0, "c", 3.0, 0.75),
    ]


def test_duckdb_unweighted_macros_never_read_a_weight():
    """Each weighted measure is two DuckDB overloads: without ``sample_weight`` the macro is the
    unweighted one, whose body names no weight (an unweighted call runs the plan it ran before)."""
    from mlsql._duckdb.library import macros

    library = macros()
    for m in [*weighted_measures("duckdb"), *weighted_measures("duckdb", tables=True)]:
        overloads = [x for x in library if x.name == m.name]
        plain = [x for x in overloads if not any("sample_weight" in p for p in x.params)]
        weighted = [x for x in overloads if any(p == "sample_weight" for p in x.params)]
        assert plain and weighted, m.name
        assert not any("sample_weight" in x.body for x in plain), m.name


@pytest.mark.parametrize(("measure", "expected"), [("majority_class", 2), ("minority_class", 3)])
def test_extreme_classes_weigh_classes_not_rows(engine, measure, expected):
    """Class 1 has the most rows but little weight; 2 and 4 tie on the largest total weight
    (the smaller wins); 5's rows all weigh 0, so it does not occur; 6's row weighs NULL."""
    labels = [1, 1, 1, 1, 2, 3, 4, 4, 5, 5, 6]
    weights = [0.25, 0.25, 0.25, 0.25, 3.0, 0.5, 1.5, 1.5, 0.0, 0.0, None]
    table = pa.table({"y": labels, "w": pa.array(weights, pa.float64())})
    assert engine.many(table, [(measure, ("y",), {"sample_weight": "w"})]) == [expected]


def _extreme(rows: list[tuple[Any, Any]], most: bool) -> Any:
    """The oracle of majority_class (``most``) and minority_class over (label, weight) rows:
    the class of the largest (smallest) total weight above 0, ties to the smallest class."""
    totals: dict[Any, float] = {}
    for label, w in rows:
        if label is not None and w is not None:
            totals[label] = totals.get(label, 0.0) + w
    occurs = {c: t for c, t in totals.items() if t > 0}
    sign = -1 if most else 1
    return min(occurs, key=lambda c: (sign * occurs[c], c)) if occurs else None


def test_extreme_classes_per_group(engine):
    """majority_class and minority_class in a GROUP BY give each group its own class, weighted
    and not (Polars' sort-then-first gave another group's class, an empty text, or crashed),
    a group without known labels or weighing nothing NULL."""
    rng = random.Random(41)
    n = 300
    groups = [i % 9 for i in range(n)]
    labels = [rng.choice(["a", "b", "c", "d", "e", None]) for _ in range(n)]
    weights = [rng.choice([0.0, 0.5, 1.0, 2.0, None]) for _ in range(n)]
    for i in range(n):
        if groups[i] == 7:
            labels[i] = None  # no known label
        if groups[i] == 8:
            weights[i] = 0.0  # weighs nothing
    table = pa.table({"g": groups, "y": labels, "w": pa.array(weights, pa.float64())})
    calls = [
        (name, ("y",), given)
        for name in ("majority_class", "minority_class")
        for given in ({}, {"sample_weight": "w"})
    ]
    got = engine.many_by(table, calls, "g")
    for g in range(9):
        rows = [(y, w) for y, w, k in zip(labels, weights, groups, strict=True) if k == g]
        unweighted = [(y, 1.0) for y, _ in rows]
        want = [_extreme(unweighted, True), _extreme(rows, True)]
        want += [_extreme(unweighted, False), _extreme(rows, False)]
        assert got[g] == [want[0], want[1], want[2], want[3]], g
    assert got[7] == [None] * 4 and got[8][1] is None and got[8][3] is None


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_weight_named_a_dot_b_is_only_a_name(engine, name):
    """A weight column named ``a.b`` weighs as ``w`` does (Spark read it as field ``b`` of a
    column ``a``: AnalysisException)."""
    weights = [float(i % 3) for i in range(N)]
    table = _table(7, weights).append_column("g", pa.array([i % 2 for i in range(N)]))
    dotted = table.rename_columns(["a.b" if c == "w" else c for c in table.column_names])
    got = _rows(engine, name, dotted, True, "g", weight="a.b")
    assert got == _rows(engine, name, table, True, "g")


def test_duckdb_table_counts_are_bigint():
    """The unweighted tables' counts are BIGINT in DuckDB, as Int64 in Polars and bigint in
    Spark (class_metrics' were HUGEINT: DuckDB sums integers to it); weighted, DOUBLE."""
    import mlsql

    con = mlsql.connect()
    con.execute(
        "CREATE TABLE t AS SELECT * FROM (VALUES ('a', 'a', 1.0), ('a', 'b', 2.0)) v(y, p, w)"
    )
    for weighted in (False, True):
        w = ", sample_weight := 'w'" if weighted else ""
        count = "DOUBLE" if weighted else "BIGINT"
        metrics = con.sql(f"SELECT * FROM class_metrics('t', 'y', 'p'{w})").types[1:6]
        cells = con.sql(f"SELECT * FROM confusion_matrix('t', 'y', 'p'{w})").types[2:]
        shares = con.sql(f"SELECT * FROM class_distribution('t', 'y'{w})").types[1:2]
        assert [str(t) for t in [*metrics, *cells, *shares]] == [count] * 7
