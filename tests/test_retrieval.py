"""ranx's retrieval measures on every engine: ranx's own test values, its conventions, edges.

The literal values are those of ranx's unit tests (github.com/AmenRa/ranx, tests/unit/ranx:
``metrics_test.py``, ``metrics/rank_biased_precision_test.py``, ``metrics/f1_test.py``),
with ranx's document ids as items; where ranx's test compares two of its own functions,
the expected value is the exact fraction from the definition. The random-data checks
against the plain-Python oracle (tests/oracle_ranking.py) run in tests/test_every_measure.py.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest

from tests import oracle_ranking as oracle

#: the Spark cases run with the long tests (tests/conftest.py), as tests/test_ranking_edges.py's
LONG_ENGINES = ("spark",)

RETRIEVED = ("correct_items", "rank_items")  # the truth first, as ranx's (qrels, run)
AT_K = sorted(oracle.RETRIEVAL_AT_K)
WHOLE_LIST = {"r_precision": oracle.r_precision, "rbp": oracle.rbp}
ALL = [*AT_K, *sorted(WHOLE_LIST)]


@pytest.fixture
def engine(engine):
    """Each engine, skipping (with the registry's reason) a measure it lacks."""
    return oracle.Available(engine)


def retrieved(rows: list[tuple[Any, Any]], item_type: pa.DataType | None = None) -> pa.Table:
    """A table of (correct_items, rank_items) rows."""
    item_type = pa.int64() if item_type is None else item_type
    return pa.table(
        {
            "correct_items": pa.array([t for t, _ in rows], pa.list_(item_type)),
            "rank_items": pa.array([r for _, r in rows], pa.list_(item_type)),
        }
    )


def close(got: Any, want: Any) -> bool:
    if want is None or got is None:
        return want is None and got is None
    return math.isclose(float(got), float(want), rel_tol=1e-12, abs_tol=1e-12)


def expected(name: str, truth: Any, rank: Any, **params: Any) -> Any:
    if name in WHOLE_LIST:
        return WHOLE_LIST[name](truth, rank, *params.values())
    return oracle.RETRIEVAL_AT_K[name](truth, rank, params.get("k"))


# ------------------------------------------------------------------ ranx's unit tests
def test_ranx_hits(engine):
    """metrics_test.py::test_hits: the mean of hits@5 over two queries is 2.5."""
    rows = [([1, 4, 5, 6], [1, 2, 3, 4, 5, 7]), ([1, 4, 6], [1, 2, 4, 3, 5, 7])]
    assert engine.aggregate("hits", retrieved(rows), columns=RETRIEVED, k=5) == 2.5


def test_ranx_r_precision(engine):
    """metrics_test.py::test_r_precision_single (2/3) and test_r_precision ((2/3 + 1/2) / 2)."""
    rank = [2, 4, 3, 1, 5, 6, 7]
    one = engine.aggregate("r_precision", retrieved([([1, 2, 3], rank)]), columns=RETRIEVED)
    assert close(one, Fraction(2, 3))
    two = retrieved([([1, 2, 3], rank), ([1, 2], rank)])
    got = engine.aggregate("r_precision", two, columns=RETRIEVED)
    assert close(got, (Fraction(2, 3) + Fraction(1, 2)) / 2)


#: rank_biased_precision_test.py: d1..d20 ranked in order, d1, d2, d6, d11, d17 relevant
RBP_RUN = list(range(1, 21))
RBP_TRUTH = [1, 2, 6, 11, 17]


@pytest.mark.parametrize(("p", "ranx_value"), [(0.5, 0.7661), (0.8, 0.4526), (0.95, 0.1881)])
def test_ranx_rank_biased_precision(engine, p, ranx_value):
    got = engine.aggregate("rbp", retrieved([(RBP_TRUTH, RBP_RUN)]), columns=RETRIEVED, p=p)
    assert round(got, 4) == ranx_value  # ranx's test rounds to 4 places
    assert close(got, (1 - p) * sum(p ** (d - 1) for d in RBP_TRUTH))


def test_rbp_default_persistence_is_0_8(engine):
    table = retrieved([(RBP_TRUTH, RBP_RUN)])
    assert close(
        engine.aggregate("rbp", table, columns=RETRIEVED),
        0.2 * sum(0.8 ** (d - 1) for d in RBP_TRUTH),
    )


#: f1_test.py's queries with the judged relevant documents as the truth (d<n> as n)
F1_ROWS = [
    ([2, 5], [1, 2, 3, 4]),
    ([2, 5], [1, 2, 3, 4, 5, 6]),
    ([2, 5, 7], [1, 2, 3, 4, 5, 6, 7, 8]),
    ([2, 4, 6, 9], [1, 12, 3, 14, 16, 7, 8]),
]
#: 2PR / (P + R) of ranx's precision and recall: 2 hits / (|run| + |relevant|); q4 is ranx's 0.0
F1_WANT = [Fraction(1, 3), Fraction(1, 2), Fraction(6, 11), Fraction(0)]


@pytest.mark.parametrize(("row", "want"), list(zip(F1_ROWS, F1_WANT, strict=True)), ids=str)
def test_ranx_f1(engine, row, want):
    assert close(engine.aggregate("f1_at", retrieved([row]), columns=RETRIEVED), want)


#: metrics_test.py::test_average_precision's three queries (k = 7, the whole run)
MAP_RUN = [4, 5, 6, 2, 1, 7, 3]
MAP_ROWS = [([1, 2, 3], MAP_RUN), ([4, 5, 6, 7], MAP_RUN), ([8, 9], MAP_RUN)]


def test_ranx_map_divides_by_all_relevant_documents(engine):
    # hits at 4, 5, 7 of 3 relevant; at 1, 2, 3, 6 of 4; none of 2
    per_query = [
        (Fraction(1, 4) + Fraction(2, 5) + Fraction(3, 7)) / 3,
        (1 + 1 + 1 + Fraction(4, 6)) / 4,
        Fraction(0),
    ]
    got = engine.aggregate("map_score", retrieved(MAP_ROWS), columns=RETRIEVED, k=7)
    assert close(got, sum(per_query) / 3)


def test_ranx_dcg_with_binary_relevance(engine):
    """metrics_test.py::test_dcg_jarvelin's runs with every judged document at grade 1."""
    truth = [2, 4, 5, 10]
    rows = [(truth, [1, 2, 3, 4, 5]), (truth, [10, 5, 2, 4, 3]), (truth, [1, 3, 6, 7, 8])]
    want = [
        1 / math.log2(3) + 1 / math.log2(5) + 1 / math.log2(6),
        1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5),
        0.0,
    ]
    for row, value in zip(rows, want, strict=True):
        assert close(engine.aggregate("dcg", retrieved([row]), columns=RETRIEVED, k=10), value)


# ------------------------------------------------------------------ conventions
def test_map_score_and_average_precision_differ_only_in_the_divisor(engine):
    """map_score divides by the true items (ranx), average_precision by the hits (Hivemall)."""
    table = retrieved([([1, 2], [3, 1])])
    assert close(engine.aggregate("map_score", table, columns=RETRIEVED), Fraction(1, 4))
    hivemall = table.select(["rank_items", "correct_items"])
    got = engine.aggregate("average_precision", hivemall, columns=("rank_items", "correct_items"))
    assert close(got, Fraction(1, 2))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("row", [([], []), ([], [1, 2]), ([1, 2], []), ([3], [1])], ids=str)
def test_no_true_item_or_no_hit_scores_0(engine, name, row):
    assert engine.aggregate(name, retrieved([row]), columns=RETRIEVED) == 0.0


@pytest.mark.parametrize("name", AT_K)
def test_k_larger_than_the_list_looks_at_the_whole_list(engine, name):
    table = retrieved([([1, 2, 3], [1, 5])])
    whole = engine.aggregate(name, table, columns=RETRIEVED)
    assert close(engine.aggregate(name, table, columns=RETRIEVED, k=10), whole)
    assert close(whole, expected(name, [1, 2, 3], [1, 5]))


def test_f1_at_counts_the_items_looked_at_where_ranx_counts_k(engine):
    """One hit of one true item in a list of 1 at k = 5: 2·1 / (1 + 1) = 1 (ranx: 2·1 / (5 + 1))."""
    table = retrieved([([1], [1])])
    assert engine.aggregate("f1_at", table, columns=RETRIEVED, k=5) == 1.0


def test_r_precision_divides_by_the_true_items_where_the_list_is_shorter(engine):
    table = retrieved([([1, 2, 3, 4], [1, 2])])
    assert close(engine.aggregate("r_precision", table, columns=RETRIEVED), Fraction(1, 2))


@pytest.mark.parametrize("name", ALL)
def test_null_lists_skip_the_row_and_no_rows_give_null(engine, name):
    rows = [([1, 2, 4], [1, 3, 2, 6]), ([1], None), (None, [1]), (None, None)]
    got = engine.aggregate(name, retrieved(rows), columns=RETRIEVED)
    assert close(got, expected(name, [1, 2, 4], [1, 3, 2, 6]))
    unknown = retrieved([([1], None)])
    assert engine.aggregate(name, unknown, columns=RETRIEVED) is None
    assert engine.aggregate(name, unknown.slice(0, 0), columns=RETRIEVED) is None


@pytest.mark.parametrize("name", ALL)
def test_null_items_and_repeats_count_once(engine, name):
    rows = [([1, 2, 4, 4, None], [None, 1, 1, 3, None, 2, 3, 6])]
    got = engine.aggregate(name, retrieved(rows), columns=RETRIEVED)
    assert close(got, expected(name, [1, 2, 4], [1, 3, 2, 6]))


@pytest.mark.parametrize("name", ALL)
def test_text_items(engine, name):
    rows = [(["a", "c"], ["c", "b", "a"])]
    got = engine.aggregate(name, retrieved(rows, pa.string()), columns=RETRIEVED)
    assert close(got, expected(name, ["a", "c"], ["c", "b", "a"]))


@pytest.mark.parametrize("p", [0, 1, -0.5, 1.5, float("nan")])
def test_persistence_must_lie_between_0_and_1(engine, p):
    table = retrieved([([1], [1])])
    with pytest.raises(
        Exception, match=r"'p' parameter of rbp must be a finite number > 0 and < 1"
    ):
        engine.aggregate("rbp", table, columns=RETRIEVED, p=p)


@pytest.mark.parametrize("name", AT_K)
def test_k_must_be_a_positive_whole_number(engine, name):
    table = retrieved([([1], [1, 2])])
    with pytest.raises(Exception, match=rf"'k' parameter of {name} must be a whole number > 0"):
        engine.aggregate(name, table, columns=RETRIEVED, k=0)


def test_sample_weight_weighs_the_rows(engine):
    rows = [([1], [1, 2]), ([2], [1, 2])]  # map_score 1 and 1/2
    table = retrieved(rows).append_column("w", pa.array([3.0, 1.0]))
    got = engine.aggregate("map_score", table, columns=RETRIEVED, sample_weight="w")
    assert close(got, (3 * 1 + 1 * Fraction(1, 2)) / 4)


# ------------------------------------------------------------------ ranx itself
#: mlsql's measure and parameters -> ranx's metric name
RANX_METRICS = {
    ("hits", 3): "hits@3",
    ("map_score", None): "map",
    ("map_score", 3): "map@3",
    ("r_precision", None): "r-precision",
    ("f1_at", 3): "f1@3",
    ("f1_at", None): "f1",
    ("dcg", 3): "dcg@3",
    ("dcg", None): "dcg",
}
RANX_RBP = {0.5: "rbp.5", 0.8: "rbp.80", 0.95: "rbp.95"}


def random_queries(seed: int, n: int = 40) -> list[tuple[list[int], list[int]]]:
    """(relevant, run) per query as ranx takes them: at least one relevant document and a run
    of at least 3 distinct documents (ranx's precision divides by k, mlsql's by the list)."""
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        docs = rng.sample(range(1, 13), rng.randint(3, 9))
        relevant = rng.sample(range(1, 13), rng.randint(1, 5))
        out.append((relevant, docs))
    return out


@pytest.mark.long
@pytest.mark.rotating  # (random queries: each CI run takes some of the seeds and engines)
@pytest.mark.parametrize("seed", range(3))
def test_ranx_itself_on_random_queries(engine, seed):
    """Per-query scores from ranx (``return_mean=False``), averaged, against each engine.

    Long: ranx compiles its metrics with numba on first use (47 s in a fresh environment).
    """
    ranx = pytest.importorskip(
        "ranx", reason="ranx is not installed (.ci/run installs it for the long tests)"
    )
    rows = random_queries(seed)
    qrels = ranx.Qrels({f"q{i}": {f"d{d}": 1 for d in rel} for i, (rel, _) in enumerate(rows)})
    run = ranx.Run(
        {
            f"q{i}": {f"d{d}": float(len(r) - j) for j, d in enumerate(r)}
            for i, (_, r) in enumerate(rows)
        }
    )
    table = retrieved(rows)
    cases = [
        (name, {} if k is None else {"k": k}, metric) for (name, k), metric in RANX_METRICS.items()
    ]
    cases += [("rbp", {"p": p}, metric) for p, metric in RANX_RBP.items()]
    for name, params, metric in cases:
        scores = ranx.evaluate(qrels, run, metric, return_mean=False)
        want = sum(float(s) for s in scores) / len(rows)
        got = engine.aggregate(name, table, columns=RETRIEVED, **params)
        assert math.isclose(got, want, rel_tol=1e-12), (name, params, metric, got, want)


# ------------------------------------------------------------------ bpref
JUDGED = ("correct_items", "rank_items", "nonrelevant_items")


def judged(rows: list[tuple[Any, Any, Any]], item_type: pa.DataType | None = None) -> pa.Table:
    """A table of (correct_items, rank_items, nonrelevant_items) rows."""
    item_type = pa.int64() if item_type is None else item_type
    return pa.table(
        {
            name: pa.array([row[i] for row in rows], pa.list_(item_type))
            for i, name in enumerate(JUDGED)
        }
    )


#: bpref_test.py's queries: (relevant, run in ranked order, judged non-relevant), d<n> as n
BPREF_ROWS = [
    ([2, 5], [1, 2, 3, 4], [1, 4]),
    ([2, 5], [1, 2, 3, 4, 5, 6], [1, 6]),
    ([2, 5, 7], [1, 2, 3, 4, 5, 6, 7, 8], [1, 6, 8]),
    ([2, 4, 6, 9], [1, 2, 3, 4, 6, 7, 8], [1, 3, 7, 8]),
]
#: bpref_test.py's expected values, as exact fractions
BPREF_WANT = [
    Fraction(1, 2) * (1 - Fraction(1, 2)),
    Fraction(1, 2) * ((1 - Fraction(1, 2)) + (1 - Fraction(1, 2))),
    Fraction(1, 3) * ((1 - Fraction(1, 3)) + (1 - Fraction(1, 3)) + (1 - Fraction(2, 3))),
    Fraction(1, 4) * ((1 - Fraction(1, 4)) + (1 - Fraction(2, 4)) + (1 - Fraction(2, 4))),
]


@pytest.mark.parametrize(("row", "want"), list(zip(BPREF_ROWS, BPREF_WANT, strict=True)), ids=str)
def test_ranx_bpref(engine, row, want):
    assert oracle.bpref(*row) == want  # the oracle agrees with ranx's test too
    assert close(engine.aggregate("bpref", judged([row]), columns=JUDGED), want)


def test_ranx_bpref_mean_over_queries(engine):
    got = engine.aggregate("bpref", judged(BPREF_ROWS), columns=JUDGED)
    assert close(got, sum(BPREF_WANT) / 4)


@pytest.mark.parametrize(
    ("row", "want"),
    [
        # R = 1 < N = 3: two judged non-relevant items above the hit, min(2, R) / min(R, N) = 1
        (([1], [2, 3, 1], [2, 3, 4]), Fraction(0)),
        # N = 1 < R = 3: one above the 2nd and 3rd hits, 1 / min(R, N) each; 4 is ranked but
        # unjudged, 2 is never ranked
        (([1, 2, 3, 5], [1, 6, 4, 3, 5], [4]), Fraction(1, 4) * (1 + 0 + 0)),
        # unjudged items (6, 7) do not count above a hit
        (([1, 2], [6, 7, 1, 3, 2], [3, 4]), Fraction(1, 2) * (1 + (1 - Fraction(1, 2)))),
        # no judged non-relevant item: each relevant item ranked adds 1 (trec_eval; ranx 0 / 0)
        (([1, 2, 3], [4, 1, 2], []), Fraction(2, 3)),
        # an item in both judged lists is relevant, so N counts 4 only
        (([1, 2], [4, 2, 1], [1, 4]), Fraction(1, 2) * (2 * (1 - Fraction(1, 1)))),
        # no relevant item, no ranked item, no hit: 0
        (([], [1, 2], [1]), Fraction(0)),
        (([1], [], [2]), Fraction(0)),
        (([1], [2, 3], [2]), Fraction(0)),
    ],
    ids=str,
)
def test_bpref_conventions(engine, row, want):
    assert oracle.bpref(*row) == want
    assert close(engine.aggregate("bpref", judged([row]), columns=JUDGED), want)


def test_bpref_null_lists_skip_the_row_and_no_rows_give_null(engine):
    known = ([1, 2, 4], [1, 3, 2, 6, 5], [3, 6])
    rows = [known, (None, [1], [2]), ([1], None, [2]), ([1], [1], None)]
    got = engine.aggregate("bpref", judged(rows), columns=JUDGED)
    assert close(got, oracle.bpref(*known))
    for unknown in rows[1:]:
        table = judged([unknown])
        assert engine.aggregate("bpref", table, columns=JUDGED) is None
    assert engine.aggregate("bpref", judged([known]).slice(0, 0), columns=JUDGED) is None


def test_bpref_null_items_and_repeats_count_once(engine):
    rows = [([1, 2, 4, 4, None], [None, 3, 3, 1, None, 6, 2, 1], [6, None, 3, 3])]
    got = engine.aggregate("bpref", judged(rows), columns=JUDGED)
    want = oracle.bpref([1, 2, 4], [3, 1, 6, 2], [6, 3])
    assert want == Fraction(1, 3) * ((1 - Fraction(1, 2)) + (1 - Fraction(2, 2)))
    assert close(got, want)


def test_bpref_text_items(engine):
    rows = [(["a", "c"], ["x", "c", "b", "a"], ["b", "x"])]
    got = engine.aggregate("bpref", judged(rows, pa.string()), columns=JUDGED)
    assert close(got, Fraction(1, 2) * ((1 - Fraction(1, 2)) + 0))


def test_bpref_sample_weight_weighs_the_rows(engine):
    rows = [([1], [1, 2], [2]), ([1], [2, 1], [2])]  # 1 and 0
    table = judged(rows).append_column("w", pa.array([3.0, 1.0]))
    got = engine.aggregate("bpref", table, columns=JUDGED, sample_weight="w")
    assert close(got, Fraction(3, 4))


def test_bpref_judged_items_of_another_kind_are_an_error(engine):
    table = pa.table(
        {
            "correct_items": pa.array([[1]], pa.list_(pa.int64())),
            "rank_items": pa.array([[1]], pa.list_(pa.int64())),
            "nonrelevant_items": pa.array([["a"]], pa.list_(pa.string())),
        }
    )
    with pytest.raises(
        Exception,
        match=r"bpref needs correct_items and nonrelevant_items of the same label type",
    ):
        engine.aggregate("bpref", table, columns=JUDGED)


def random_judged_queries(seed: int, n: int = 40) -> list[tuple[list[int], list[int], list[int]]]:
    """(relevant, run, judged non-relevant) per query: at least one relevant and one judged
    non-relevant document (ranx divides 0 by 0 without one), disjoint judgements, and runs
    with unjudged documents."""
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        docs = rng.sample(range(1, 16), rng.randint(1, 10))
        judged_docs = rng.sample(range(1, 16), rng.randint(2, 10))
        cut = rng.randint(1, len(judged_docs) - 1)
        out.append((judged_docs[:cut], docs, judged_docs[cut:]))
    return out


@pytest.mark.long
@pytest.mark.rotating  # (random queries: each CI run takes some of the seeds and engines)
@pytest.mark.parametrize("seed", range(3))
def test_ranx_bpref_itself_on_random_queries(engine, seed):
    """ranx's per-query bpref (qrels at grade 1 and 0, ``return_mean=False``), averaged, against
    each engine; and ranx's NaN where a query has no judged non-relevant document, where mlsql
    follows trec_eval. Long as the test above (numba compiles ranx's metrics)."""
    ranx = pytest.importorskip(
        "ranx", reason="ranx is not installed (.ci/run installs it for the long tests)"
    )
    rows = random_judged_queries(seed)
    qrels = ranx.Qrels(
        {
            f"q{i:03}": {**{f"d{d}": 0 for d in nonrel}, **{f"d{d}": 1 for d in rel}}
            for i, (rel, _, nonrel) in enumerate(rows)
        }
    )
    run = ranx.Run(
        {
            f"q{i:03}": {f"d{d}": float(len(r) - j) for j, d in enumerate(r)}
            for i, (_, r, _) in enumerate(rows)
        }
    )
    scores = ranx.evaluate(qrels, run, "bpref", return_mean=False)  # in query id order
    for row, score in zip(rows, scores, strict=True):
        assert math.isclose(float(score), float(oracle.bpref(*row)), rel_tol=1e-12, abs_tol=1e-15)
    want = sum(float(s) for s in scores) / len(rows)
    got = engine.aggregate("bpref", judged(rows), columns=JUDGED)
    assert math.isclose(got, want, rel_tol=1e-12), (got, want)
    # no judged non-relevant document: ranx 0 / 0, mlsql trec_eval's recall
    lone = ranx.evaluate(
        ranx.Qrels({"q": {"d1": 1, "d2": 1}}), ranx.Run({"q": {"d1": 2.0, "d3": 1.0}}), "bpref"
    )
    assert math.isnan(lone)
    got = engine.aggregate("bpref", judged([([1, 2], [1, 3], [])]), columns=JUDGED)
    assert close(got, Fraction(1, 2))
