"""Edge cases of the ranking measures on every engine: empty lists, k, NULLs, one label, errors.

Expected numbers come from Hivemall's own unit tests (BinaryResponsesMeasuresTest),
scikit-learn's documented conventions, or the plain-Python oracle.
"""

from __future__ import annotations

import math
from typing import Any

import pyarrow as pa
import pytest

from tests import oracle_ranking as oracle

#: the Spark cases of these edges run with the long tests (tests/conftest.py): one Spark
#: query per measure and edge, 220-270 test-seconds of the README suite
LONG_ENGINES = ("spark",)


@pytest.fixture
def engine(engine):
    """Each engine, skipping (with the registry's reason) a measure it lacks."""
    return oracle.Available(engine)


RANKED = ("rank_items", "correct_items")
SCORED = ("actual", "scores")  # the truth first, as scikit-learn's (y_true, y_score)
AT_K = sorted(oracle.AT_K)
SCORE_MEASURES = sorted(oracle.SCORED)


def ranked(rows: list[tuple[Any, Any]], item_type: pa.DataType | None = None) -> pa.Table:
    item_type = pa.int64() if item_type is None else item_type
    return pa.table(
        {
            "rank_items": pa.array([r for r, _ in rows], pa.list_(item_type)),
            "correct_items": pa.array([c for _, c in rows], pa.list_(item_type)),
        }
    )


FORMS = oracle.FORMS
score_column, scored = oracle.score_column, oracle.scored


def close(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)


# ------------------------------------------------------------------ Hivemall's unit tests
HIVEMALL_TESTS = [
    # (measure, rank_items, correct_items, k, expected): BinaryResponsesMeasuresTest
    ("ndcg", [3, 2, 1, 6], [1], 2, 0.0),
    ("ndcg", [3, 2, 1, 6], [1], 3, 0.5),
    ("recall_at", [], [], 2, 1.0),
    ("recall_at", [1, 3, 2], [], 2, 0.0),
    ("precision_at", [], [], 2, 1.0),
    ("precision_at", [1, 3, 2], [], 2, 0.0),
    ("mrr", [6, 2, 3, 1], [1, 2, 4], 4, 0.5),
    ("mrr", [6, 2, 3, 1], [1, 2, 4], 1, 0.0),
    ("hitrate", [5, 6], [1, 2, 4], 2, 0.0),
    ("average_precision", [1, 3, 2, 6], [1, 2, 4], 3, (1 + 2 / 3) / 2),
    ("average_precision", [3, 1, 2, 6], [1, 2, 4], 2, 1 / 2),
    ("average_precision", [3, 1, 2, 6], [1, 2, 3], 2, (1 + 1) / 2),
    ("average_precision", [3, 1], [1, 2], 2, 1 / 2),
    ("ranking_auc", [1, 3, 2, 6], [1, 3, 2, 6], 4, 0.5),  # all hits: no (hit, miss) pair
    ("ranking_auc", [1, 3, 2, 6], [7, 8, 9, 10], 4, 0.5),  # no hit
]


@pytest.mark.parametrize(("name", "rank", "truth", "k", "want"), HIVEMALL_TESTS)
def test_hivemall_unit_tests(engine, name, rank, truth, k, want):
    got = engine.aggregate(name, ranked([(rank, truth)]), columns=RANKED, k=k)
    assert close(got, want), f"{engine.name} {name}({rank}, {truth}, {k}) = {got}, want {want}"
    assert close(float(oracle.AT_K[name](rank, truth, k)), want)


def test_hivemall_average_precision_over_strings(engine):
    table = ranked([(list("abcdefghij"), ["a", "x", "c", "x", "e", "f"])], item_type=pa.string())
    want = (1 + 2 / 3 + 3 / 5 + 4 / 6) / 4
    assert close(engine.aggregate("average_precision", table, columns=RANKED, k=10), want)
    want5 = (1 + 2 / 3 + 3 / 5) / 3
    assert close(engine.aggregate("average_precision", table, columns=RANKED, k=5), want5)


# ------------------------------------------------------------------ empty lists, k, NULLs
EMPTY_ROWS = [([], []), ([], [1, 2]), ([1, 2], []), ([3], [1])]


@pytest.mark.parametrize("name", AT_K)
@pytest.mark.parametrize("row", EMPTY_ROWS, ids=str)
@pytest.mark.parametrize("k", [None, 1, 3])
def test_empty_lists_follow_hivemall(engine, name, row, k):
    params = {} if k is None else {"k": k}
    got = engine.aggregate(name, ranked([row]), columns=RANKED, **params)
    assert close(got, oracle.AT_K[name](*row, k))


def test_documented_empty_list_values(engine):
    both_empty = ranked([([], [])])
    want = {
        "precision_at": 1.0,
        "recall_at": 1.0,
        "average_precision": 1.0,
        "hitrate": 0.0,
        "mrr": 0.0,
        "ndcg": 0.0,
        "ranking_auc": 0.5,
    }
    got = {name: engine.aggregate(name, both_empty, columns=RANKED) for name in want}
    assert got == want


@pytest.mark.parametrize("name", [*AT_K, "graded_ndcg", "ndcg_score"])
@pytest.mark.parametrize("k", [0, -1, 2.5])
def test_k_must_be_a_positive_whole_number(engine, name, k):
    if name == "graded_ndcg":
        table = pa.table({"r": pa.array([[1.0]]), "i": pa.array([[1.0]])})
        columns: tuple[str, ...] = ("r", "i")
    elif name == "ndcg_score":
        table, columns = scored([({"a": 0.5}, ["a"])]), SCORED
    else:
        table, columns = ranked([([1, 2], [1])]), RANKED
    with pytest.raises(Exception, match=rf"'k' parameter of {name} must be a whole number > 0"):
        engine.aggregate(name, table, columns=columns, k=k)


@pytest.mark.parametrize("name", AT_K)
def test_k_larger_than_the_list_looks_at_the_whole_list(engine, name):
    table = ranked([([1, 5], [1, 2, 3])])
    whole = engine.aggregate(name, table, columns=RANKED)
    assert close(engine.aggregate(name, table, columns=RANKED, k=10), whole)
    assert close(whole, oracle.AT_K[name]([1, 5], [1, 2, 3], None))


#: a k beyond any list and beyond a 32-bit integer (Spark's array lengths)
HUGE_K = 10**12


@pytest.mark.parametrize("name", [*AT_K, "graded_ndcg", "ndcg_score"])
def test_a_k_beyond_32_bits_looks_at_the_whole_list(engine, name):
    """k = 10**12 is the whole list in every engine (Spark cut its lists at an INT k and
    failed with CAST_OVERFLOW)."""
    if name == "graded_ndcg":
        ranked_grades, ideal = [1.0, 3.0, 0.0], [3.0, 1.0, 2.0]
        table = pa.table({"r": pa.array([ranked_grades]), "i": pa.array([ideal])})
        got = engine.aggregate(name, table, columns=("r", "i"), k=HUGE_K)
        want = oracle.graded_ndcg(ranked_grades, ideal, HUGE_K)
    elif name == "ndcg_score":
        scores, actual = {"a": 0.9, "b": 0.4, "c": 0.6}, ["b", "c"]
        got = engine.aggregate(name, scored([(scores, actual)]), columns=SCORED, k=HUGE_K)
        want = oracle.ndcg_score(scores, actual, HUGE_K)
    else:
        got = engine.aggregate(name, ranked([([1, 5, 3], [1, 2, 3])]), columns=RANKED, k=HUGE_K)
        want = oracle.AT_K[name]([1, 5, 3], [1, 2, 3], HUGE_K)
    assert close(got, want)


def test_precision_divides_by_the_items_looked_at(engine):
    table = ranked([([1], [1, 2])])
    assert engine.aggregate("precision_at", table, columns=RANKED, k=5) == 1.0


@pytest.mark.parametrize("name", AT_K)
def test_null_lists_skip_the_row(engine, name):
    rows = [([1, 3, 2, 6], [1, 2, 4]), ([1], None), (None, [1]), (None, None)]
    got = engine.aggregate(name, ranked(rows), columns=RANKED, k=3)
    assert close(got, oracle.AT_K[name]([1, 3, 2, 6], [1, 2, 4], 3))


@pytest.mark.parametrize("name", [*AT_K, *SCORE_MEASURES])
def test_no_known_rows_give_null(engine, name):
    if name in AT_K:
        table, columns = ranked([(None, [1]), ([1], None)]), RANKED
    else:
        table, columns = scored([(None, ["a"]), ({"a": 0.5}, None)]), SCORED
    assert engine.aggregate(name, table, columns=columns) is None
    assert engine.aggregate(name, table.slice(0, 0), columns=columns) is None


@pytest.mark.parametrize("name", AT_K)
def test_null_items_and_repeats_count_once(engine, name):
    rows = [([None, 1, 1, 3, None, 2, 3, 6], [1, 2, 4, 4, None])]
    got = engine.aggregate(name, ranked(rows), columns=RANKED, k=3)
    assert close(got, oracle.AT_K[name]([1, 3, 2, 6], [1, 2, 4], 3))


@pytest.mark.parametrize("name", AT_K)
def test_one_item(engine, name):
    for row in [([1], [1]), ([1], [2])]:
        got = engine.aggregate(name, ranked([row]), columns=RANKED, k=1)
        assert close(got, oracle.AT_K[name](*row, 1))


@pytest.mark.parametrize("name", ["precision_at", "ndcg", "ranking_auc"])
def test_item_type_mismatch_names_both_types(engine, name):
    table = pa.table(
        {
            "rank_items": pa.array([["a"]], pa.list_(pa.string())),
            "correct_items": pa.array([[1]], pa.list_(pa.int64())),
        }
    )
    with pytest.raises(
        Exception,
        match=r"(?is)(varchar|string|str).*(int|bigint)|(int|bigint).*(varchar|string|str)",
    ):
        engine.aggregate(name, table, columns=RANKED)


def test_column_names_are_quoted(engine):
    evil = ('x"; DROP TABLE t; --', "y'); --")
    table = ranked([([1, 3, 2, 6], [1, 2, 4])]).rename_columns(list(evil))
    assert close(engine.aggregate("precision_at", table, columns=evil, k=2), 0.5)


# ------------------------------------------------------------------ graded nDCG
def test_graded_ndcg_edges(engine):
    cols = ("ranked_relevance", "ideal_relevance")
    rows = [
        ([3.0, None, 1.0], [3.0, 1.0, None]),  # a NULL grade adds nothing, keeps its place
        ([1.0, 2.0], [1.0, 2.0]),  # the ideal grades are sorted
        ([0.0, 0.0], []),  # nothing relevant: 0
        (None, [1.0]),  # skipped
    ]
    table = pa.table(
        {c: pa.array([r[i] for r in rows], pa.list_(pa.float64())) for i, c in enumerate(cols)}
    )
    got = engine.aggregate("graded_ndcg", table, columns=cols)
    want = sum(oracle.graded_ndcg(r, i, None) for r, i in rows[:3]) / 3
    assert close(got, want)
    assert close(
        oracle.graded_ndcg([3.0, None, 1.0], [3.0, 1.0], None),
        (7 + 1 / math.log2(4)) / (7 + 1 / math.log2(3)),
    )


# ------------------------------------------------------------------ label scores
def test_rows_without_true_labels(engine):
    table = scored([({"a": 0.9, "b": 0.1}, [])])
    got = {name: engine.aggregate(name, table, columns=SCORED) for name in SCORE_MEASURES}
    assert got == {
        "coverage_error": 0.0,
        "label_ranking_loss": 0.0,
        "label_ranking_average_precision": 1.0,
        "one_error": 1.0,
        "ndcg_score": 0.0,
    }


def test_rows_whose_labels_are_all_true(engine):
    table = scored([({"a": 0.9, "b": 0.1}, ["a", "b"])])
    assert engine.aggregate("label_ranking_loss", table, columns=SCORED) == 0.0
    assert engine.aggregate("label_ranking_average_precision", table, columns=SCORED) == 1.0
    assert engine.aggregate("coverage_error", table, columns=SCORED) == 2.0


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", SCORE_MEASURES)
def test_unscored_true_labels_rank_last_and_null_scores_are_not_scores(engine, name, form):
    rows = [
        ({"a": 0.9, "b": 0.5, "c": None}, ["c", "b"]),
        ({"a": 0.2}, ["z", "y"]),
        ({}, ["a"]),
        ({}, []),
        ({"a": 0.5, "b": 0.5}, ["b", None, "b"]),
    ]
    got = engine.aggregate(name, scored(rows, form), columns=SCORED)
    want = sum(oracle.SCORED[name](s, a) for s, a in rows) / len(rows)
    assert close(got, want), f"{engine.name} {name}: {got} != {want}"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", SCORE_MEASURES)
def test_null_score_maps_and_label_lists_skip_the_row(engine, name, form):
    rows = [({"a": 0.9, "b": 0.5}, ["b"]), (None, ["a"]), ({"a": 0.1}, None)]
    got = engine.aggregate(name, scored(rows, form), columns=SCORED)
    assert close(got, oracle.SCORED[name]({"a": 0.9, "b": 0.5}, ["b"]))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", SCORE_MEASURES)
def test_a_run_of_null_label_lists_beside_scores_skips_its_rows(engine, name, form):
    """Scored rows whose label lists are NULL, two running: Polars 2.2's streaming engine
    panicked (lst_concat) joining the scored labels to a batch's all-NULL true labels."""
    known = [({"a": 0.9, "b": 0.5}, ["b"]), ({"a": 0.2}, ["a"])]
    rows = [*known, ({"a": 0.1}, None), ({"b": 0.3}, None)]
    got = engine.aggregate(name, scored(rows, form), columns=SCORED)
    want = sum(oracle.SCORED[name](s, a) for s, a in known) / len(known)
    assert close(got, want), f"{engine.name} {name}: {got} != {want}"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    ("scores", "truth", "want"),
    [
        ({"c": -math.inf}, ["a", "d", "c"], 0.0),  # c, the one scored label, is true
        ({"c": -math.inf}, ["a"], 1.0),  # c is not true; a is not scored: no top label
        ({"a": -math.inf, "b": -math.inf}, ["a", "b"], 0.0),
        ({"a": -math.inf, "b": -math.inf}, ["a", "z"], 0.5),
    ],
)
def test_one_error_of_a_top_score_of_minus_infinity(engine, form, scores, truth, want):
    """An unscored true label is no top label, though it ranks as -inf: DuckDB and Spark
    counted it among the true top labels (one_error -2), Polars took -inf for no score (1)."""
    got = engine.aggregate("one_error", scored([(scores, truth)], form), columns=SCORED)
    assert got == want


@pytest.mark.parametrize("name", SCORE_MEASURES)
def test_one_label(engine, name):
    rows = [({"a": 0.3}, ["a"]), ({"a": 0.3}, [])]
    for row in rows:
        got = engine.aggregate(name, scored([row]), columns=SCORED)
        assert close(got, oracle.SCORED[name](*row))


def test_one_error_counts_ties_at_the_top_fractionally(engine):
    table = scored([({"a": 0.9, "b": 0.9, "c": 0.9, "d": 0.1}, ["a", "d"])])
    assert close(engine.aggregate("one_error", table, columns=SCORED), 2 / 3)


@pytest.mark.parametrize("k", [1, 2, 5])
def test_ndcg_score_at_k(engine, k):
    rows = [({"a": 0.9, "b": 0.9, "c": 0.4, "d": 0.1}, ["b", "d"]), ({"a": 0.3, "b": 0.2}, ["b"])]
    got = engine.aggregate("ndcg_score", scored(rows), columns=SCORED, k=k)
    assert close(got, sum(oracle.ndcg_score(s, a, k) for s, a in rows) / 2)


def test_score_label_type_mismatch_names_both_types(engine):
    table = pa.table(
        {
            "scores": pa.array([[("a", 0.5)]], pa.map_(pa.string(), pa.float64())),
            "actual": pa.array([[1]], pa.list_(pa.int64())),
        }
    )
    with pytest.raises(
        Exception,
        match=r"(?is)(varchar|string|str).*(int|bigint)|(int|bigint).*(varchar|string|str)",
    ):
        engine.aggregate("coverage_error", table, columns=SCORED)


def test_integer_labels_and_integer_scores(engine):
    table = pa.table(
        {
            "scores": pa.array([[(1, 3), (2, 1), (3, 2)]], pa.map_(pa.int32(), pa.int64())),
            "actual": pa.array([[2]], pa.list_(pa.int64())),
        }
    )
    assert engine.aggregate("coverage_error", table, columns=SCORED) == 3.0
    assert close(engine.aggregate("label_ranking_average_precision", table, columns=SCORED), 1 / 3)


@pytest.mark.parametrize("name", SCORE_MEASURES)
def test_in_a_struct_list_a_label_keeps_its_first_entry(engine, name):
    rows = [([("a", 0.2), ("b", 0.5), ("a", 0.9), (None, 1.0)], ["a"])]
    got = engine.aggregate(name, scored(rows, "list"), columns=SCORED)
    assert close(got, oracle.SCORED[name]({"a": 0.2, "b": 0.5}, ["a"]))


def test_integer_labels_in_a_struct_list(engine):
    table = pa.table(
        {
            "scores": score_column([[(1, 3.0), (2, 1.0), (3, 2.0)]], "list", key=pa.int64()),
            "actual": pa.array([[2]], pa.list_(pa.int64())),
        }
    )
    assert engine.aggregate("coverage_error", table, columns=SCORED) == 3.0


def test_a_struct_list_is_read_by_its_field_names(engine):
    """Structs (score, label): read by their names, as DuckDB reads them. Polars and Spark
    read the first field as the label: text labels were refused, and integer scores beside
    integer labels swapped silently (a coverage of 1 for 3 here)."""
    entry = pa.struct([("score", pa.int64()), ("label", pa.int64())])
    table = pa.table(
        {
            "scores": pa.array([[(3, 1), (1, 2), (2, 3)]], pa.list_(entry)),
            "actual": pa.array([[2]], pa.list_(pa.int64())),
        }
    )
    assert engine.aggregate("coverage_error", table, columns=SCORED) == 3.0
    text = pa.struct([("score", pa.float64()), ("label", pa.string())])
    rows = [({"a": 0.2, "b": 0.5, "c": 0.9}, ["a"]), ({"a": 0.7, "b": 0.1}, ["a", "b"])]
    table = pa.table(
        {
            "scores": pa.array([[(v, k) for k, v in s.items()] for s, _ in rows], pa.list_(text)),
            "actual": pa.array([a for _, a in rows], pa.list_(pa.string())),
        }
    )
    for name in SCORE_MEASURES:
        want = sum(oracle.SCORED[name](s, a) for s, a in rows) / len(rows)
        assert close(engine.aggregate(name, table, columns=SCORED), want), name


@pytest.mark.parametrize("name", SCORE_MEASURES)
def test_label_ranking_measures_take_the_truth_first(engine, name):
    """scikit-learn's order (y_true, y_score): ``name(actual, scores)``; scores first is refused."""
    rows = [({"a": 0.9, "b": 0.5, "c": 0.1}, ["b"]), ({"a": 0.2, "b": 0.7}, ["a", "b"])]
    table = scored(rows)
    got = engine.aggregate(name, table, columns=("actual", "scores"))
    assert close(got, sum(oracle.SCORED[name](s, a) for s, a in rows) / len(rows))
    with pytest.raises(Exception, match=r"(?i)scores|map|struct"):
        engine.aggregate(name, table, columns=("scores", "actual"))
