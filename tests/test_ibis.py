"""``mlsql.evaluate`` over ibis tables, run live in DuckDB, DataFusion and PostgreSQL.

The same cases on every live backend: the conformance numbers (Hivemall, mldr, the R
walkthrough), every lowered measure of the registry against its reference
(tests/references.py) on the random tables, weights as repeated rows, the errors in
every engine's words, and hostile column names. BigQuery and Snowflake are compiled,
not run: their SQL must parse in sqlglot's dialect of each.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import os
import random
import re
import sys
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest

import mlsql
from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._registry import REGISTRY, Measure, measures
from tests.oracle_agreement import KAPPA_RESULTS as KAPPA_TESTS  # each test's statsmodels field
from tests.references import REFERENCES, close, tables
from tests.test_multilabel_conformance import FILES, cases, rows_of

ibis = pytest.importorskip("ibis", reason="ibis is missing: pip install -e '.[ibis]'")

from mlsql._ibis.evaluate import plan  # noqa: E402
from mlsql._ibis.families import LOWERED, lowered  # noqa: E402

#: the measures evaluate takes over ibis: every aggregate of the lowered families (but the
#: measures of a family not lowered yet)
LOWERED_MEASURES = [m for m in measures() if lowered(m) and m.name in EV.allowed()]
BACKENDS = ("duckdb", "datafusion", "postgres")


def columns_of(m: Measure) -> tuple[str, str]:
    """The (actual, predicted) columns evaluate reads for ``m`` in the random tables of its
    reference: the columns named as its inputs where they are (a rule's holds and fires, the
    raters' ratings, ranked and ideal grades), else actual and predicted (a measure of one
    column: that column twice; evaluate reads it once)."""
    roles = EV.roles(m)
    if len(roles) != len(m.inputs):  # a table function's inputs (source, actual, predicted)
        return ("actual", "predicted")
    names = dict(zip(roles, m.inputs, strict=True))
    if set(names.values()) <= set(tables(REFERENCES[m.name].data, range(1))[0].column_names):
        return names["actual"], names.get("predicted", names["actual"])
    return ("actual", "predicted")


#: the numbers of the tables the tests make, in this process
TABLE_NUMBERS = itertools.count(1)


class Live:
    """One live backend: an ibis connection and how a test table gets into it."""

    def __init__(self, name: str, pg_server: Any = None) -> None:
        self.name = name
        if name == "duckdb":
            self.con = ibis.duckdb.connect()
        elif name == "datafusion":
            # the p-values nest deeper than DataFusion's default parser limit (see
            # test_datafusion_s_parser_limit_is_named)
            from datafusion import SessionConfig, SessionContext

            config = SessionConfig().set("datafusion.sql_parser.recursion_limit", "200")
            self.con = ibis.datafusion.connect(SessionContext(config))
        else:
            self.server = pg_server
            self.con = ibis.postgres.connect(
                host=str(pg_server.root), user=pg_server.user, database=pg_server.dbname
            )

    def table(self, data: pa.Table) -> Any:
        """``data`` as a new table of the backend (each call a new name)."""
        # a name no other Live of this process gave (a module's fixture can be made again
        # on a worker, over the session's one server); not t<N>: ibis 12 names its CTEs so,
        # and a CTE shadows a table of that name
        name = f"preds{next(TABLE_NUMBERS)}"
        if self.name == "duckdb":
            self.con.con.register(name, data)
        elif self.name == "datafusion":
            self.con.con.register_record_batches(name, [data.to_batches()])
        else:
            self._postgres(name, data)
        return self.con.table(name)

    def _postgres(self, name: str, data: pa.Table) -> None:
        import psycopg
        from psycopg.types.json import Jsonb

        def pg_type(t: pa.DataType) -> str:
            if pa.types.is_map(t):  # label -> score: a jsonb object (docs/guides/ibis.md)
                return "jsonb"
            if pa.types.is_list(t):
                return pg_type(t.value_type) + "[]"
            if pa.types.is_integer(t) or pa.types.is_null(t):
                return "bigint"
            if pa.types.is_floating(t):
                return "float8"
            if pa.types.is_boolean(t):
                return "boolean"
            return "text"

        cols = [(f.name, pg_type(f.type)) for f in data.schema]
        ident = [psycopg.sql.Identifier(c) for c, _ in cols]
        create = psycopg.sql.SQL("CREATE TABLE {} ({})").format(
            psycopg.sql.Identifier(name),
            psycopg.sql.SQL(", ").join(
                psycopg.sql.SQL("{} " + t).format(i) for i, (_, t) in zip(ident, cols, strict=True)
            ),
        )
        insert = psycopg.sql.SQL("INSERT INTO {} VALUES ({})").format(
            psycopg.sql.Identifier(name),
            psycopg.sql.SQL(", ").join(psycopg.sql.SQL("%s::" + t) for _, t in cols),
        )
        with psycopg.connect(self.server.conninfo, autocommit=True) as c:
            c.execute(create)
            with c.cursor() as cur:
                maps = [pa.types.is_map(f.type) for f in data.schema]
                cur.executemany(
                    insert,
                    [
                        tuple(
                            Jsonb(dict(v)) if is_map and v is not None else v
                            for is_map, v in zip(maps, r.values(), strict=True)
                        )
                        for r in data.to_pylist()
                    ],
                )


@pytest.fixture(scope="module", params=BACKENDS)
def live(request: pytest.FixtureRequest) -> Iterator[Live]:
    """Each live backend in turn (PostgreSQL: the session's server, or a skip saying why)."""
    if request.param == "postgres":
        yield Live("postgres", request.getfixturevalue("pg_server"))
    else:
        yield Live(request.param)


def estimates(out: Any) -> list[Any]:
    """The estimate column of an evaluate result."""
    return out.to_pyarrow()["estimate"].to_pylist()


def label_table(rows: list[tuple[Any, Any]]) -> pa.Table:
    return pa.table(
        {"actual": pa.array([a for a, _ in rows]), "predicted": pa.array([p for _, p in rows])}
    )


# ---------------------------------------------------------------- the conformance numbers
def test_conformance_numbers(live: Live) -> None:
    """Hivemall's blog tags, mldr's example and the R walkthrough: every micro, samples and
    subset figure, under each zero_division the files give, in one evaluate per file."""
    wrong = []
    for file in FILES:
        found = [c for c in cases() if c[0] == file]
        t = live.table(label_table(rows_of(file)))
        got = estimates(
            mlsql.evaluate(t, "actual", "predicted", [(n, p) for _, _, n, p, _ in found])
        )
        wrong += [
            f"{file} {key}: {g} != {want}"
            for (_, key, _, _, want), g in zip(found, got, strict=True)
            if not (g is not None and math.isclose(g, want, rel_tol=1e-12, abs_tol=1e-12))
        ]
    assert len(cases()) > 50
    assert not wrong, "\n".join(wrong)


def test_binary_conformance(live: Live) -> None:
    """Hivemall's binary example (FMeasureUDAFTest): F1 and F2 of the positive class."""
    from tests.conftest import conformance

    data = conformance("hivemall_binary.json")
    rows = data["rows"]
    t = live.table(
        pa.table(
            {"actual": [r["actual"] for r in rows], "predicted": [r["predicted"] for r in rows]}
        )
    )
    got = estimates(
        mlsql.evaluate(t, "actual", "predicted", ["binary_f1", ("binary_fbeta", {"beta": 2})])
    )
    want = data["expected"]
    assert got[0] == pytest.approx(
        want["fmeasure(actual, predicted, '-average binary')"], rel=1e-12
    )
    assert got[1] == pytest.approx(
        want["fmeasure(actual, predicted, '-beta 2. -average binary')"], rel=1e-12
    )
    # Hivemall's own calls, each option string as the file writes it
    options = [re.fullmatch(r"fmeasure\(actual, predicted, '(.*)'\)", k) for k in want]
    assert all(options) and len(options) == 4
    calls = [("fmeasure", {"options": o.group(1)}) for o in options if o]
    got = estimates(mlsql.evaluate(t, "actual", "predicted", calls))
    assert got == pytest.approx(list(want.values()), rel=1e-12)


#: the measure of a conformance file's key
MEASURE = {"kappa": "cohen_kappa_score"}


def test_single_label_conformance(live: Live) -> None:
    """The lecture's ten rows and twenty animals (tests/test_single_label_conformance.py):
    accuracy, error rate and kappa of each, in one evaluate per example."""
    from tests.conftest import conformance

    slides = conformance("slides_single_label.json")
    for example in ("ten_rows", "animals"):
        data = slides[example]
        t = live.table(pa.table({"actual": data["actual"], "predicted": data["predicted"]}))
        keys = [k for k in data["expected"] if MEASURE.get(k, k) in LOWERED_NAMES]
        assert {"accuracy", "error_rate", "kappa"} <= set(keys)
        got = estimates(mlsql.evaluate(t, "actual", "predicted", [MEASURE.get(k, k) for k in keys]))
        assert got == pytest.approx([data["expected"][k] for k in keys], rel=1e-12)


def measures_by_name() -> dict[str, Measure]:
    return {m.name: m for m in LOWERED_MEASURES}


#: the names of the lowered measures
LOWERED_NAMES = frozenset(m.name for m in LOWERED_MEASURES)


# ---------------------------------------------------------------- the registry's measures
@pytest.mark.long
@pytest.mark.rotating  # (one evaluate per random table and family: CI runs some families a run)
@pytest.mark.parametrize("family", sorted(LOWERED))
def test_measures_match_their_reference(live: Live, family: str) -> None:
    """Every aggregate of a lowered family with every parameter set of its reference, on the
    random tables (NULL lists and elements, duplicates, empty lists, text and integer labels,
    NULL and 0/1 flags, all rows unknown), in one evaluate per table."""
    chosen = [m for m in LOWERED_MEASURES if m.family == family and m.name in REFERENCES]
    assert chosen
    together: dict[tuple[str, tuple[str, str]], list[Measure]] = {}
    for m in chosen:  # one evaluate per data kind and columns read
        together.setdefault((REFERENCES[m.name].data, columns_of(m)), []).append(m)
    for (kind, columns), ms in together.items():
        for table in tables(kind, range(3)):
            calls = [(m, p) for m in ms for p in REFERENCES[m.name].params_for(table)]
            t = live.table(table)
            got = estimates(mlsql.evaluate(t, *columns, [(m.name, p) for m, p in calls]))
            wrong = [
                f"{m.name}({p}): got {g!r}, expected {w!r}"
                for (m, p), g in zip(calls, got, strict=True)
                if not close(g, w := REFERENCES[m.name].expected(table, p))
            ]
            assert not wrong, "\n".join(wrong) + f"\non {table.to_pylist()}"


def test_weights_count_as_repeated_rows(live: Live) -> None:
    """Integer weights equal repeating each row; a NULL weight skips the row; groups apart."""
    rows = [(["a", "b"], ["a"]), (["b"], ["b", "c"]), (["c"], []), ([], ["a"]), (["a"], ["a"])]
    weights = [2, 0, 3, 1, None]
    groups = ["x", "y", "x", "y", "x"]
    names = ["micro_f1", "samples_f1", "subset_accuracy", ("hamming_loss", {"n_labels": 3})]
    weighted = live.table(
        pa.table(
            {
                "g": groups,
                "actual": [a for a, _ in rows],
                "predicted": [p for _, p in rows],
                "w": pa.array([None if w is None else float(w) for w in weights], pa.float64()),
            }
        )
    )
    repeated = [
        (g, r) for g, r, w in zip(groups, rows, weights, strict=True) for _ in range(w or 0)
    ]
    plain = live.table(
        pa.table(
            {
                "g": [g for g, _ in repeated],
                "actual": [a for _, (a, _) in repeated],
                "predicted": [p for _, (_, p) in repeated],
            }
        )
    )
    got = mlsql.evaluate(weighted, "actual", "predicted", names, by="g", sample_weight="w")
    want = mlsql.evaluate(plain, "actual", "predicted", names, by="g")
    a, b = got.to_pyarrow().to_pylist(), want.to_pyarrow().to_pylist()
    assert [r["g"] for r in a] == ["x"] * 4 + ["y"] * 4
    assert all(
        x["measure"] == y["measure"] and math.isclose(x["estimate"], y["estimate"], rel_tol=1e-12)
        for x, y in zip(a, b, strict=True)
    )


def test_regression_weights_count_as_repeated_rows(live: Live) -> None:
    """The regression measures' grouped passes (means joined back NULL-safe on the groups,
    rae's shift): integer weights equal repeated rows, a NULL weight or side skips the row."""
    rows = [(1.0, 1.5), (2.0, 2.0), (3.0, 2.0), (4.0, 4.5), (6.0, 5.0), (None, 1.0), (2.5, 2.0)]
    weights = [1, 2, 3, 1, 2, 4, None]
    groups = ["x", "x", None, None, "y", "x", "y"]
    names = ["mse", "mae", "r2", "rae", "pearson_corr", "explained_variance", "mape"]
    weighted = live.table(
        pa.table(
            {
                "g": groups,
                "actual": [a for a, _ in rows],
                "predicted": [p for _, p in rows],
                "w": [None if w is None else float(w) for w in weights],
            }
        )
    )
    kept = [(g, r) for g, r, w in zip(groups, rows, weights, strict=True) for _ in range(w or 0)]
    plain = live.table(
        pa.table(
            {
                "g": [g for g, _ in kept],
                "actual": [a for _, (a, _) in kept],
                "predicted": [p for _, (_, p) in kept],
            }
        )
    )
    got = mlsql.evaluate(weighted, "actual", "predicted", names, by="g", sample_weight="w")
    want = mlsql.evaluate(plain, "actual", "predicted", names, by="g")
    a, b = got.to_pyarrow().to_pylist(), want.to_pyarrow().to_pylist()
    assert [r["g"] for r in a] == [None] * 7 + ["x"] * 7 + ["y"] * 7
    assert [(r["g"], r["measure"]) for r in a] == [(r["g"], r["measure"]) for r in b]
    assert all(
        math.isclose(x["estimate"], y["estimate"], rel_tol=1e-12, abs_tol=1e-15)
        for x, y in zip(a, b, strict=True)
    )


#: the per-label averages, with parameters that reach a universe, beta and zero_division
LABEL_AVERAGES = [
    "macro_f1",
    ("macro_fbeta", {"beta": 2.0}),
    "weighted_recall",
    "macro_f1_of_means",
    ("macro_precision", {"labels": ["a", "c", "q"], "zero_division": 1}),
    ("weighted_jaccard", {"labels": ["b"]}),
    "label_accuracy_micro",
    "label_accuracy_macro",
    "clp",
    "mlp",
    "wlp",
]


@pytest.mark.long_cases("datafusion", "duckdb")  # 8 s a backend: PostgreSQL's stays
def test_label_averages_weights_count_as_repeated_rows(live: Live) -> None:
    """The per-label side table: integer weights equal repeated rows (a label only in rows
    weighing 0 is not in the universe), a NULL weight or list skips the row; the DuckDB
    engine's values."""
    rows = [
        ("x", ["a", "b"], ["a"], 2),
        ("x", ["b"], ["b", "c"], 1),
        ("x", ["c", "c", None], [], 3),
        ("x", ["z"], ["z"], 0),
        ("x", None, ["a"], 1),
        (None, [], ["a"], 1),
        (None, ["a"], ["a", "b"], None),
        (None, ["b"], ["b"], 2),
        ("y", ["q"], ["r"], 0),
    ]
    columns = ("g", "actual", "predicted")
    weighted = pa.table({c: [r[k] for r in rows] for k, c in enumerate(columns)})
    weighted = weighted.append_column(
        "w", pa.array([None if r[3] is None else float(r[3]) for r in rows], pa.float64())
    )
    kept = [r for r in rows for _ in range(r[3] or 0)] + [("y", None, None, 1)]
    plain = pa.table(
        {
            c: pa.array([r[k] for r in kept], weighted.schema.field(c).type)
            for k, c in enumerate(columns)
        }
    )
    got = mlsql.evaluate(
        live.table(weighted), "actual", "predicted", LABEL_AVERAGES, by="g", sample_weight="w"
    )
    want = mlsql.evaluate(live.table(plain), "actual", "predicted", LABEL_AVERAGES, by="g")
    a, b = got.to_pyarrow().to_pylist(), want.to_pyarrow().to_pylist()
    assert [r["g"] for r in a] == [g for g in (None, "x", "y") for _ in LABEL_AVERAGES]
    duck = mlsql.evaluate(plain, "actual", "predicted", LABEL_AVERAGES, by="g").fetchall()
    for x, y, d in zip(a, b, duck, strict=True):
        assert x["measure"] == y["measure"] == d[1]
        for value in (y["estimate"], d[2]):
            assert (x["estimate"] is None) == (value is None), (x, y, d)
            assert value is None or math.isclose(x["estimate"], value, rel_tol=1e-12), (x, d)
    # group x, known rows a,b|a (x2), b|b,c, c|- (x3): F1 of a 1, of b 2/4 (tp 1, fn 2), of c 0
    assert a[len(LABEL_AVERAGES)]["estimate"] == pytest.approx(float(Fraction(1, 2)), rel=1e-15)


# ---------------------------------------------------------------- ranked lists
#: the ranked-list measures lowered to ibis (the label-score rankings are with the label scores)
RANKING = [
    m.name for m in LOWERED_MEASURES if m.family == "ranking" and m.inputs != ("actual", "scores")
]


def _ranked(rows: list[tuple[Any, Any]], **more: Any) -> pa.Table:
    return pa.table(
        {
            **more,
            "correct_items": pa.array([c for c, _ in rows], pa.list_(pa.string())),
            "rank_items": pa.array([r for _, r in rows], pa.list_(pa.string())),
        }
    )


def test_ranking_worked_example_is_exact(live: Live) -> None:
    """Ranked [a, NULL, b, a, c] against {b, c, d} (hits at 2 and 3 once NULLs and repeats are
    dropped), an empty list against {a}, and a NULL list (skipped): hand-computed fractions."""
    t = live.table(
        _ranked([(["b", "c", "d", "c"], ["a", None, "b", "a", "c"]), (["a"], []), (None, ["x"])])
    )
    want = {
        "precision_at": Fraction(2, 3) / 2,
        ("precision_at", 2): Fraction(1, 2) / 2,
        ("precision_at", 10): Fraction(2, 3) / 2,
        "recall_at": Fraction(2, 3) / 2,
        "mrr": Fraction(1, 2) / 2,
        "hits": Fraction(2, 2),
        "hitrate": Fraction(1, 2),
        "average_precision": (Fraction(1, 2) + Fraction(2, 3)) / 2 / 2,
        "map_score": (Fraction(1, 2) + Fraction(2, 3)) / 3 / 2,
        "r_precision": Fraction(2, 3) / 2,
        "f1_at": Fraction(4, 6) / 2,
        ("f1_at", 2): Fraction(2, 2 + 3) / 2,
        # the miss above both hits: 0 of 2 pairs right; the empty list 1/2
        "ranking_auc": (0 + Fraction(1, 2)) / 2,
        "dcg": Fraction(1, 4),  # 1/log2(4) / 2 rows; 1/log2(3) / 2 added below
    }
    calls = [(n, {}) if isinstance(n, str) else (n[0], {"k": n[1]}) for n in want]
    got = estimates(mlsql.evaluate(t, "correct_items", "rank_items", calls))
    expected = [float(v) for v in want.values()]
    expected[list(want).index("dcg")] += 1 / math.log2(3) / 2
    assert got == pytest.approx(expected, rel=1e-12)


def test_ranking_weights_count_as_repeated_rows(live: Live) -> None:
    """Integer weights equal repeating each row, a NULL weight skips the row, groups apart; and
    the weighted values are DuckDB's engine's."""
    rows = [
        (["a", "b"], ["b", "x", "a"]),
        (["c"], ["c"]),
        (["a"], []),
        ([], ["a", "b"]),
        (["b", "d"], ["d", None, "d", "b"]),
        (["a"], ["b"]),
    ]
    weights = [2.0, 0.0, 3.0, 1.0, None, 1.0]
    groups = ["x", "y", "x", "y", "x", "y"]
    # every measure's weight is its row value's (test_measures_match_their_reference: the values)
    calls = [("ndcg", {"k": 1}), ("map_score", {}), ("mrr", {}), ("rbp", {"p": 0.5})]
    data = _ranked(rows, g=groups, w=pa.array(weights, pa.float64()))
    repeated = [
        (g, r) for g, r, w in zip(groups, rows, weights, strict=True) for _ in range(int(w or 0))
    ]
    plain = _ranked([r for _, r in repeated], g=[g for g, _ in repeated])
    columns = ("correct_items", "rank_items")
    got = mlsql.evaluate(live.table(data), *columns, calls, by="g", sample_weight="w")
    want = mlsql.evaluate(live.table(plain), *columns, calls, by="g")
    duck = mlsql.evaluate(
        data, *columns, calls, by="g", sample_weight="w", con=duck_connection()
    ).fetchall()
    a, b = got.to_pyarrow().to_pylist(), want.to_pyarrow().to_pylist()
    assert [r["g"] for r in a] == ["x"] * len(calls) + ["y"] * len(calls)
    for x, y, d in zip(a, b, duck, strict=True):
        assert x["measure"] == y["measure"] == d[1]
        assert x["estimate"] == pytest.approx(y["estimate"], rel=1e-12, abs=1e-15)
        assert x["estimate"] == pytest.approx(d[2], rel=1e-12, abs=1e-15)


#: tables the ranked-list measures refuse (items of two kinds, a column that is no list, float
#: items) and parameters they refuse (k not a whole number > 0)
BAD_RANKED = (
    pa.table({"correct_items": [["a"]], "rank_items": [[1]]}),
    pa.table({"correct_items": [["a"]], "rank_items": ["a"]}),
    pa.table({"correct_items": [[1.0]], "rank_items": [[1.0]]}),
)
BAD_K = (0, 1.5, -1)
GOOD_RANKED = pa.table({"correct_items": [["a"]], "rank_items": [["a"]]})


def _typeless(message: str) -> str:
    """A message with the types it names left out (each engine spells a type its own way)."""
    head, _, got = message.partition(" Got ")
    return head + " Got " + " ".join(w for w in got.split() if w in ("rank_items", "correct_items"))


@functools.cache
def duckdb_ranked_words() -> tuple[list[str], list[str]]:
    """mlsql.evaluate's messages on DuckDB for :data:`BAD_RANKED` and :data:`BAD_K` (computed
    once: DuckDB's connection takes seconds)."""
    con = duck_connection()
    cols = ("correct_items", "rank_items")
    tables_ = [
        _typeless(_message(lambda d=d: mlsql.evaluate(d, *cols, ["ndcg"], con=con).fetchall()))
        for d in BAD_RANKED
    ]
    ks = [
        _message(
            lambda k=k: mlsql.evaluate(
                GOOD_RANKED, *cols, [("precision_at", {"k": k})], con=con
            ).fetchall()
        )
        for k in BAD_K
    ]
    return tables_, ks


def test_ranking_errors_are_the_engines(live: Live) -> None:
    """Items of two kinds, a column that is no list, float items, a bad k: the message DuckDB's
    engine gives for the same table; grades that are no numbers, in its words too."""
    cols = ("correct_items", "rank_items")
    want_tables, want_ks = duckdb_ranked_words()
    for data, want in zip(BAD_RANKED, want_tables, strict=True):
        t = live.table(data)
        assert _typeless(_message(lambda t=t: mlsql.evaluate(t, *cols, ["ndcg"]))) == want
    t = live.table(GOOD_RANKED)
    for k, want in zip(BAD_K, want_ks, strict=True):
        bad = [("precision_at", {"k": k})]
        assert _message(lambda b=bad: mlsql.evaluate(t, *cols, b)) == want
    grades = ("ideal_relevance", "ranked_relevance")
    for bad in (
        pa.table({"ideal_relevance": [[1.0]], "ranked_relevance": [["a"]]}),
        pa.table({"ideal_relevance": [1.0], "ranked_relevance": [[1.0]]}),
    ):
        got = _message(lambda b=bad: mlsql.evaluate(live.table(b), *grades, ["graded_ndcg"]))
        want = _message(
            lambda b=bad: mlsql.evaluate(b, *grades, ["graded_ndcg"], con=duck_connection())
        )
        assert _typeless_words(got) == _typeless_words(want)


def test_a_hostile_label_is_a_label(live: Live) -> None:
    """A label of the ``labels`` universe that is SQL is compared as a value: a label no row
    holds (zero counts, in the average), and the table is left as it was."""
    hostile = "x'); DROP TABLE preds1; --"
    t = live.table(pa.table({"actual": [["a"], ["b"]], "predicted": [["a"], ["a"]]}))
    labels = ["a", hostile]
    out = mlsql.evaluate(
        t, "actual", "predicted", [("macro_precision", {"labels": labels, "zero_division": 1})]
    )
    assert estimates(out) == [0.75]  # precision of a 1/2, of the hostile label 1 (undefined)
    assert t.count().execute() == 2


#: the score measures, with parameters that reach their norms, grids and scales
SCORES = [
    "auc",
    "hivemall_auc",
    "average_precision_score",
    "area_under_pr",
    "logloss",
    "hivemall_logloss",
    "brier_score_loss",
    ("brier_score_loss", {"scale_by_half": False}),
    "expected_calibration_error",
    ("expected_calibration_error", {"n_bins": 3, "norm": "l2"}),
    ("expected_calibration_error", {"n_bins": 4, "norm": "max"}),
    "binned_auc",
    ("binned_auc", {"thresholds": 5}),
    ("binned_average_precision_score", {"thresholds": 3}),
]


def test_scores_weights_count_as_repeated_rows(live: Live) -> None:
    """The scores' window sums (runs of equal scores, bins): integer weights equal repeated
    rows, a NULL weight or side skips the row, a weight of 0 is as absent; groups apart,
    one of them all of one class and one all weighing 0."""
    rows = [
        ("x", 1, 0.9, 2),
        ("x", 0, 0.4, 1),
        ("x", 1, 0.4, 3),
        ("x", 0, 0.1, 2),
        ("x", 1, 1.0, 1),
        ("x", 0, 1.0, 2),
        ("x", 0, 0.75, 0),
        ("x", None, 0.3, 1),
        ("x", 1, 0.2, None),
        (None, 1, 0.5, 1),
        (None, 0, 0.5, 2),
        (None, 1, 0.25, 1),
        ("y", 1, 0.6, 2),
        ("y", 1, 0.3, 1),
        ("z", 0, 0.6, 0),
        ("z", 1, 0.3, 0),
    ]
    columns = ("g", "actual", "predicted", "w")
    weighted = live.table(
        pa.table({c: [r[k] for r in rows] for k, c in enumerate(columns)}).set_column(
            3, "w", pa.array([None if r[3] is None else float(r[3]) for r in rows])
        )
    )
    kept = [r for r in rows for _ in range(r[3] or 0)]
    kept += [("z", None, None, 1)]  # z: its rows weigh 0, as a group of no known row
    plain = live.table(pa.table({c: [r[k] for r in kept] for k, c in enumerate(columns[:3])}))
    got = mlsql.evaluate(weighted, "actual", "predicted", SCORES, by="g", sample_weight="w")
    want = mlsql.evaluate(plain, "actual", "predicted", SCORES, by="g")
    a, b = got.to_pyarrow().to_pylist(), want.to_pyarrow().to_pylist()
    assert [(r["g"], r["measure"]) for r in a] == [(r["g"], r["measure"]) for r in b]
    assert [r["g"] for r in a] == [g for g in (None, "x", "y", "z") for _ in SCORES]
    for x, y in zip(a, b, strict=True):
        if x["g"] == "z" and y["estimate"] is None:  # all weighing 0: NULL, or zero_division
            assert x["estimate"] in (None, 0.0), x
            continue
        assert x["estimate"] is not None, x
        assert math.isclose(x["estimate"], y["estimate"], rel_tol=1e-12, abs_tol=1e-15), (x, y)
    duck = mlsql.evaluate(
        pa.table({c: [r[k] for r in kept] for k, c in enumerate(columns[:3])}),
        "actual",
        "predicted",
        SCORES,
        by="g",
    ).fetchall()
    for x, d in zip(b, duck, strict=True):  # the DuckDB engine's own plan agrees
        assert (x["estimate"] is None) == (d[2] is None), (x, d)
        assert x["estimate"] is None or math.isclose(x["estimate"], d[2], rel_tol=1e-12), (x, d)


#: the single-label measures, with parameters that reach every averaging and zero_division
SINGLE_LABEL = [
    "accuracy",
    "error_rate",
    ("precision_score", {"average": "micro"}),
    "precision_score",
    ("recall_score", {"average": "weighted"}),
    ("f1_score", {"zero_division": "diagnose"}),
    ("fbeta_score", {"beta": 2.0, "average": "weighted", "zero_division": 1}),
    "balanced_accuracy_score",
    "matthews_corrcoef",
]
#: the measures of one label column, and of a class given as a parameter
NAMED = [
    "majority_error",
    ("prevalence", {"positive": "a"}),
    ("class_error_rate", {"label": "a"}),
    ("class_error_rate", {"label": "d", "zero_division": "diagnose"}),
]
#: the measures of class pairs and cells (the p-values' tails, long SQL, are the reference
#: test's: here the sums of weights they read are)
KAPPA = [
    "cohen_kappa_score",
    ("cohen_kappa_score", {"weights": "linear"}),
    "cohen_kappa_std_error",
    ("cohen_kappa_std_error", {"weights": "quadratic"}),
    "bowker_statistic",
]


@pytest.mark.long_cases("datafusion")
def test_single_label_weights_count_as_repeated_rows(live: Live) -> None:
    """The class table's sums of weights: integer weights equal repeated rows, a NULL weight
    or label skips the row, a class seen on one side only counts, a NULL group is a group,
    a group whose rows are all unknown gives NULL, and one whose rows all weigh 0 gives each
    measure's value over no weight (as every engine: README, "Sample weights")."""
    rows = [
        ("x", "a", "a", 2),
        ("x", "b", "a", 1),
        ("x", "c", "c", 3),
        ("x", "a", "d", 1),  # d: predicted only
        ("x", None, "a", 5),
        (None, "b", "b", 1),
        (None, "a", "b", 2),
        (None, "c", "a", None),
        ("y", "a", "b", 4),
        ("y", "b", "b", 1),
        ("z", None, "a", 1),  # every row unknown
        ("z", "a", None, 2),
    ]
    weighted = live.table(
        pa.table(
            {
                "g": [g for g, *_ in rows],
                "actual": [a for _, a, _, _ in rows],
                "predicted": [p for _, _, p, _ in rows],
                "w": pa.array([None if w is None else float(w) for *_, w in rows], pa.float64()),
            }
        )
    )
    kept = [r for r in rows for _ in range(r[3] or 0)]
    plain = live.table(
        pa.table(
            {
                "g": [g for g, *_ in kept],
                "actual": [a for _, a, _, _ in kept],
                "predicted": [p for _, _, p, _ in kept],
            }
        )
    )
    names = SINGLE_LABEL + KAPPA + NAMED
    got = mlsql.evaluate(weighted, "actual", "predicted", names, by="g", sample_weight="w")
    want = mlsql.evaluate(plain, "actual", "predicted", names, by="g")
    a, b = got.to_pyarrow().to_pylist(), want.to_pyarrow().to_pylist()
    k = len(names)
    assert [r["g"] for r in a] == [None] * k + ["x"] * k + ["y"] * k + ["z"] * k
    assert [(r["g"], r["measure"]) for r in a] == [(r["g"], r["measure"]) for r in b]
    assert all(
        math.isclose(x["estimate"], y["estimate"], rel_tol=1e-12, abs_tol=1e-15)
        or math.isnan(x["estimate"]) == math.isnan(y["estimate"]) is True
        for x, y in zip(a[: 3 * k], b, strict=False)
    )
    # the z group: no row known on both sides, one label (weight 2) known alone
    z = [r["estimate"] for r in a[3 * k :]]
    assert z == [r["estimate"] for r in b[3 * k :]]
    assert z == [None] * (k - 4) + [0.0, 1.0, None, None]  # the measures of one column known
    # the x group's exact fractions: M = a:{a:2, d:1}, b:{a:1}, c:{c:3} (n = 7)
    x = {r["measure"]: r["estimate"] for r in a[k : 2 * k]}
    assert x["accuracy"] == pytest.approx(float(Fraction(5, 7)), rel=1e-12)
    assert x["balanced_accuracy_score"] == pytest.approx(float(Fraction(2, 3) / 3 + Fraction(1, 3)))
    # weights all 0 on known rows: the shares NULL, the ratios their zero_division value
    # (0, 'diagnose': 1 where tp + fp + fn = 0, 1), balanced accuracy NULL (no class occurs)
    zero = live.table(pa.table({"actual": ["a", "b"], "predicted": ["a", "a"], "w": [0.0, 0.0]}))
    got0 = estimates(mlsql.evaluate(zero, "actual", "predicted", SINGLE_LABEL, sample_weight="w"))
    assert got0 == [None, None, 0.0, 0.0, 0.0, 1.0, 1.0, None, 0.0]


def test_cost_error_s_exact_fractions(live: Live) -> None:
    """cost_error: a given cost per (actual, predicted), 1 off the diagonal and 0 on it
    otherwise; weighted, a row's cost times its weight over the known rows' weight; costs of
    another label kind and a missing costs in the engines' words."""
    import polars as pl

    import mlsql.polars as mp

    data = pa.table(
        {
            "actual": ["a", "a", "b", "c", "c", None],
            "predicted": ["a", "c", "a", "c", "b", "a"],
            "w": [1.0, 2.0, 0.0, 1.0, None, 4.0],
        }
    )
    t = live.table(data)
    costs = {"costs": {"a": {"c": 5.0, "a": 0.5}, ("b", "a"): 2.0}}
    # rows' costs 0.5, 5, 2, 0, 1 (the default), the NULL row left out
    assert estimates(mlsql.evaluate(t, "actual", "predicted", [("cost_error", costs)])) == [
        pytest.approx(float(Fraction(17, 10)), rel=1e-12)
    ]
    weighted = mlsql.evaluate(t, "actual", "predicted", [("cost_error", costs)], sample_weight="w")
    # 0.5 * 1 + 5 * 2 + 2 * 0 + 0 * 1 over the weight 4 (the NULL weight's row left out)
    assert estimates(weighted) == [pytest.approx(float(Fraction(21, 8)), rel=1e-12)]
    frame = pl.from_arrow(data)
    for bad in ({"costs": {1: {2: 3.0}}}, {}):
        got = _message(lambda b=bad: mlsql.evaluate(t, "actual", "predicted", [("cost_error", b)]))
        polars = _message(
            lambda b=bad: mp.evaluate(frame, "actual", "predicted", [("cost_error", b)])
        ).split("\n")[0]
        assert re.sub(r"\(\w+\)", "(T)", got) == re.sub(r"\(\w+\)", "(T)", polars) or (
            not bad
            and got
            == "cost_error needs the 'costs' parameter (a mapping actual -> {predicted: cost})."
        ), (got, polars)
    got = _message(
        lambda: mlsql.evaluate(t, "actual", "predicted", [("cost_error", {"costs": "x"})])
    )
    assert got.startswith("The 'costs' parameter of cost_error must be a mapping actual ->")


@pytest.mark.long
def test_kappa_over_given_labels(live: Live) -> None:
    """cohen_kappa_score with labels: scikit-learn's (rows of another class left out, the
    labels' order weighed, a label no row has keeping its position), weighted too, by group
    (one group lacking a label another has), and a weights matrix over them (statsmodels'
    1 - Σ w M / (Σ w A P / n), here 1 - 3 / (18 / 5) = 1/6); labels of another kind in the
    engines' words."""
    from sklearn.metrics import cohen_kappa_score

    a = ["a", "a", "a", "b", "b", "c", "a"]
    p = ["a", "a", "b", "b", "a", "a", "c"]
    w = [1.0, 2.0, 1.0, 1.0, 3.0, 1.0, 2.0]
    t = live.table(pa.table({"actual": a, "predicted": p, "w": w}))
    given = [
        {"labels": ["b", "a"]},
        {"labels": ["c", "a", "b"], "weights": "linear"},
        {"labels": ["c", "a", "b"], "weights": "quadratic"},
        {"labels": ["c", "d", "a", "b"], "weights": "linear"},  # d: no row has it
        {"labels": ["d", "b", "c", "a"], "weights": "quadratic"},
    ]
    calls = [("cohen_kappa_score", g) for g in given]
    for weight in (None, "w"):
        got = estimates(mlsql.evaluate(t, "actual", "predicted", calls, sample_weight=weight))
        want = [
            cohen_kappa_score(a, p, **g, sample_weight=None if weight is None else w) for g in given
        ]
        assert got == pytest.approx(want, rel=1e-12)
    # by group: y has no c (nor d), x all three; each group's scikit-learn value
    g = ["x", "y", "x", "y", "x", "x", "y"]
    a2, p2 = [*a, "b", "a"], [*p, "b", "a"]
    g2, w2 = [*g, "y", "y"], [*w, 2.0, 1.0]
    grouped = live.table(pa.table({"g": g2, "actual": a2, "predicted": p2, "w": w2}))
    for weight in (None, "w"):
        out = mlsql.evaluate(grouped, "actual", "predicted", calls, by="g", sample_weight=weight)
        rows = out.to_pyarrow().to_pylist()
        assert [r["g"] for r in rows] == ["x"] * len(given) + ["y"] * len(given)
        want = []
        for group in ("x", "y"):
            at = [k for k, x in enumerate(g2) if x == group]
            for given_ in given:
                want.append(
                    cohen_kappa_score(
                        [a2[k] for k in at],
                        [p2[k] for k in at],
                        **given_,
                        sample_weight=None if weight is None else [w2[k] for k in at],
                    )
                )
        assert [r["estimate"] for r in rows] == pytest.approx(want, rel=1e-12)
    matrix = ("cohen_kappa_score", {"labels": ["b", "a"], "weights": [[0, 2], [1, 0]]})
    assert estimates(mlsql.evaluate(t, "actual", "predicted", [matrix])) == [
        pytest.approx(1 / 6, rel=1e-12)
    ]
    bad = ("cohen_kappa_score", {"labels": [1, 2]})
    got = _message(lambda: mlsql.evaluate(t, "actual", "predicted", [bad]))
    duck = _message(
        lambda: mlsql.evaluate(
            pa.table({"actual": a, "predicted": p}),
            "actual",
            "predicted",
            [bad],
            con=duck_connection(),
        ).fetchall()
    )
    assert re.sub(r"\([\w\[\]]+\)", "(T)", got) == re.sub(r"\([\w\[\]]+\)", "(T)", duck)


#: (group, actual, predicted, weight): e is no label (its rows left out), y has no c
KAPPA_ROWS = [
    ("x", "a", "a", 1.0),
    ("x", "a", "a", 2.0),
    ("x", "a", "b", 1.0),
    ("x", "b", "b", 1.0),
    ("x", "b", "a", 3.0),
    ("x", "c", "c", 1.0),
    ("x", "c", "a", 2.0),
    ("x", "a", "c", 1.0),
    ("x", "e", "a", 1.0),
    ("x", "a", "e", 2.0),
    ("x", "b", "b", 0.5),
    ("x", "c", "b", 1.0),
    ("y", "a", "a", 2.0),
    ("y", "a", "b", 1.0),
    ("y", "b", "b", 1.0),
    ("y", "b", "a", 1.0),
    ("y", "a", "a", 1.0),
    ("y", "b", "b", 3.0),
    ("y", "e", "e", 1.0),
    ("y", "b", "a", 0.5),
]
#: the labels (d: no row has it) and the weightings over them: plain, linear, a matrix
KAPPA_LABELS = ["d", "c", "a", "b"]
KAPPA_GIVEN: list[dict[str, Any]] = [
    {"labels": KAPPA_LABELS},
    {"labels": KAPPA_LABELS, "weights": "linear"},
    {"labels": KAPPA_LABELS, "weights": [[0, 2, 1, 4], [1, 0, 3, 1], [2, 1, 0, 1], [5, 1, 2, 0]]},
]
#: the standard error over each weighting, compared with DuckDB's evaluate
KAPPA_STD_ERRORS = [("cohen_kappa_std_error", g) for g in KAPPA_GIVEN]


def kappa_data() -> pa.Table:
    columns = ("g", "actual", "predicted", "w")
    return pa.table({c: [r[k] for r in KAPPA_ROWS] for k, c in enumerate(columns)})


@functools.cache
def duckdb_kappa_std_errors(by: str | None, weight: str | None) -> tuple[tuple[Any, ...], ...]:
    """DuckDB's evaluate of :data:`KAPPA_STD_ERRORS` on :func:`kappa_data` (computed once:
    its kappa tests over labels take seconds)."""
    out = mlsql.evaluate(
        kappa_data(),
        "actual",
        "predicted",
        KAPPA_STD_ERRORS,
        by=by,
        sample_weight=weight,
        con=duck_connection(),
    )
    return tuple(out.fetchall())


@pytest.mark.long
def test_averages_over_given_labels(live: Live) -> None:
    """precision, recall, F-beta and F1 with labels: scikit-learn's (a class outside the
    labels still counts against the label it meets, a label no row holds is a class without
    rows), every average, weighted too, and by group (one group lacking a label)."""
    from sklearn import metrics

    a = ["a", "a", "a", "b", "b", "c", "a", "x", "b"]
    p = ["a", "a", "b", "b", "a", "a", "c", "a", "x"]
    w = [1.0, 2.0, 1.0, 1.0, 3.0, 1.0, 2.0, 0.5, 1.0]
    g = ["u", "v", "u", "v", "u", "u", "v", "u", "v"]
    t = live.table(pa.table({"g": g, "actual": a, "predicted": p, "w": w}))
    given = [
        ("precision_score", {"labels": ["b", "a", "z"]}),
        ("recall_score", {"labels": ["c", "a"], "average": "weighted"}),
        ("f1_score", {"labels": ["a", "b"], "average": "micro"}),
        ("fbeta_score", {"labels": ["a", "c", "b"], "beta": 2.0}),
    ]

    def want(rows: list[int], weighted: bool) -> list[float]:
        def pick(xs: list[Any]) -> list[Any]:
            return [xs[i] for i in rows]

        return [
            getattr(metrics, n)(
                pick(a), pick(p), **{"average": "macro", "zero_division": 0.0, **q},
                sample_weight=pick(w) if weighted else None,
            )
            for n, q in given
        ]  # fmt: skip

    everything = list(range(len(a)))
    for weight in (None, "w"):
        got = estimates(mlsql.evaluate(t, "actual", "predicted", given, sample_weight=weight))
        assert got == pytest.approx(want(everything, weight is not None), rel=1e-12)
        out = mlsql.evaluate(t, "actual", "predicted", given, by="g", sample_weight=weight)
        for group in ("u", "v"):
            rows = [i for i in everything if g[i] == group]
            found = out.to_pyarrow().filter(pa.compute.equal(out.to_pyarrow()["g"], group))
            got = found["estimate"].to_pylist()
            assert got == pytest.approx(want(rows, weight is not None), rel=1e-12), group
    # boolean classes take boolean labels, and refuse integer ones as the engines do
    flags = live.table(pa.table({"actual": [True, False, True], "predicted": [True, True, False]}))
    got = estimates(
        mlsql.evaluate(flags, "actual", "predicted", [("f1_score", {"labels": [True]})])
    )
    assert got == pytest.approx([0.5], rel=1e-12)
    with pytest.raises(MlsqlError, match=r"columns' type \(boolean\): boolean. Got \[1\] instead"):
        mlsql.evaluate(flags, "actual", "predicted", [("f1_score", {"labels": [1]})])


def test_kappa_labels_are_checked_against_the_type_both_columns_become(live: Live) -> None:
    """An int8 actual beside an int32 predicted: a label 300 is one of the int32 side's
    (scikit-learn's kappa), as in the engines; the front had checked actual's type alone
    and refused it. A label past the type both are read as (ibis reads integer labels as
    int64) is refused naming it."""
    from sklearn.metrics import cohen_kappa_score

    a, p = [1, 2, 3, 1, 2], [1, 3, 3, 2, 2]
    t = live.table(
        pa.table({"actual": pa.array(a, pa.int8()), "predicted": pa.array(p, pa.int32())})
    )
    labels = [1, 2, 300]
    got = estimates(
        mlsql.evaluate(t, "actual", "predicted", [("cohen_kappa_score", {"labels": labels})])
    )
    assert got == pytest.approx([cohen_kappa_score(a, p, labels=labels)], rel=1e-12)
    message = r"holds 9223372036854775808, which the columns' label type \(int64\) cannot hold"
    with pytest.raises(MlsqlError, match=message):
        calls = [("cohen_kappa_score", {"labels": [1, 2**63]})]
        mlsql.evaluate(t, "actual", "predicted", calls)


@pytest.mark.long  # 8-18 s a backend on two cores
def test_kappa_tests_over_given_labels(live: Live) -> None:
    """The kappa tests with labels (one no row has, rows of another class left out), plain,
    linear and a weights matrix over them, counted and weighted, by group (one group lacking
    a label the other has): statsmodels' cohens_kappa on each group's confusion matrix over
    the labels; the standard error, by group and over all rows, DuckDB's evaluate's."""
    import numpy as np
    from statsmodels.stats.inter_rater import cohens_kappa

    t = live.table(kappa_data())
    labels = KAPPA_LABELS

    def statsmodels_tests(group: str, weighted: bool, g: dict[str, Any]) -> list[float]:
        cells = np.zeros((len(labels), len(labels)))
        for key, x, y, w in KAPPA_ROWS:
            if key == group and x in labels and y in labels:
                cells[labels.index(x), labels.index(y)] += w if weighted else 1
        if "weights" not in g:
            result = cohens_kappa(cells)
        elif g["weights"] == "linear":
            result = cohens_kappa(cells, wt="linear")
        else:
            result = cohens_kappa(cells, weights=np.asarray(g["weights"], float))
        return [float(getattr(result, f)) for f in KAPPA_TESTS.values()]

    # weighted: both variances and kappa through the standard error, z and the upper end
    # (ibis plans each kappa test for about a second)
    weighted = ("cohen_kappa_std_error", "cohen_kappa_z_value", "cohen_kappa_high")
    for weight, chosen in ((None, tuple(KAPPA_TESTS)), ("w", weighted)):
        calls = [(name, g) for g in KAPPA_GIVEN for name in chosen]
        out = mlsql.evaluate(t, "actual", "predicted", calls, by="g", sample_weight=weight)
        got = out.to_pyarrow().to_pylist()
        want = [
            x
            for group in ("x", "y")
            for g in KAPPA_GIVEN
            for name, x in zip(
                KAPPA_TESTS, statsmodels_tests(group, weight is not None, g), strict=True
            )
            if name in chosen
        ]
        assert all(math.isfinite(x) for x in want), want
        assert [r["g"] for r in got] == ["x"] * len(calls) + ["y"] * len(calls)
        assert [r["estimate"] for r in got] == pytest.approx(want, rel=1e-9)
        duck = duckdb_kappa_std_errors("g", weight)
        std = [r for r in got if r["measure"].startswith("cohen_kappa_std_error(")]
        assert [(r["g"], r["measure"]) for r in std] == [tuple(r[:2]) for r in duck]
        assert [r["estimate"] for r in std] == pytest.approx([r[-1] for r in duck], rel=1e-12)
        whole = mlsql.evaluate(t, "actual", "predicted", KAPPA_STD_ERRORS, sample_weight=weight)
        duck = duckdb_kappa_std_errors(None, weight)
        assert estimates(whole) == pytest.approx([r[-1] for r in duck], rel=1e-12)


def test_text_is_ordered_by_its_bytes_in_a_database_of_a_language_s_collation(
    pg_server: Any,
) -> None:
    """A PostgreSQL database made with ICU's en-US collation orders 'apple' before 'Cat',
    where every engine orders text by its bytes ('Cat' first): the classes' positions, which
    weighted kappa reads, and the top label of a tie of class scores are every engine's all
    the same. Expected: scikit-learn's kappa; the calibration error by hand."""
    import dataclasses

    import psycopg
    from sklearn.metrics import cohen_kappa_score

    with psycopg.connect(pg_server.conninfo, autocommit=True) as c:
        c.execute("DROP DATABASE IF EXISTS mlsql_en_us")
        c.execute(
            "CREATE DATABASE mlsql_en_us TEMPLATE template0 LOCALE_PROVIDER icu "
            "ICU_LOCALE 'en-US' LOCALE 'C'"
        )
    live = Live("postgres", dataclasses.replace(pg_server, dbname="mlsql_en_us"))
    [(first,)] = live.con.raw_sql("SELECT min(x) FROM (VALUES ('B'), ('a')) v(x)").fetchall()
    assert first == "a"  # the database's own order is not the bytes'
    actual = ["Cat", "apple", "dog", "Zebra", "apple", "Cat", "dog", "_x"]
    predicted = ["apple", "apple", "Zebra", "Zebra", "Cat", "Cat", "dog", "Cat"]
    table = live.table(pa.table({"actual": actual, "predicted": predicted}))
    weights = ("linear", "quadratic")
    out = mlsql.evaluate(
        table, "actual", "predicted", [("cohen_kappa_score", {"weights": w}) for w in weights]
    )
    for got, w in zip(estimates(out), weights, strict=True):
        assert math.isclose(got, cohen_kappa_score(actual, predicted, weights=w), rel_tol=1e-12)
    # a tie at the top: 'B' is the smaller label by bytes, so row 1's top label is wrong
    # (confidence 0.4, accuracy 0) and row 2's right (0.9, 1): (0.4 + 0.1) / 2 over 15 bins
    scores = pa.array(
        [[("B", 0.4), ("a", 0.4), ("c", 0.2)], [("c", 0.9), ("a", 0.1)]],
        pa.map_(pa.string(), pa.float64()),
    )
    scored = live.table(pa.table({"actual": ["a", "c"], "scores": scores}))
    [got] = estimates(mlsql.evaluate(scored, "actual", "scores", ["multiclass_calibration_error"]))
    assert math.isclose(got, 0.25, rel_tol=1e-12)


def test_groups_in_order_with_null_first(live: Live) -> None:
    """One row per group and measure, ordered by group (NULL first), then the measures; the
    exact fractions of each group."""
    t = live.table(
        pa.table(
            {
                "model": ["b", "a", None, "a", "b"],
                "actual": [1, 1, 0, 0, 1],
                "predicted": [1, 0, 0, 1, 0],
            }
        )
    )
    out = mlsql.evaluate(t, "actual", "predicted", ["binary_accuracy", "binary_recall"], by="model")
    rows = [tuple(r.values()) for r in out.to_pyarrow().to_pylist()]
    assert rows == [
        (None, "binary_accuracy", 1.0),
        (None, "binary_recall", 0.0),
        ("a", "binary_accuracy", 0.0),
        ("a", "binary_recall", 0.0),
        ("b", "binary_accuracy", float(Fraction(1, 2))),
        ("b", "binary_recall", float(Fraction(1, 2))),
    ]


# ---------------------------------------------------------------- errors, every engine's words
def _message(call: Any) -> str:
    with pytest.raises(Exception) as info:
        call()
    return str(info.value).removeprefix("Invalid Input Error: ")


@pytest.mark.long_cases("datafusion", "postgres")
def test_errors_are_the_duckdb_engine_s(live: Live) -> None:
    """A value that is no 0/1, a bad weight, labels of two kinds: the message mlsql.evaluate
    on DuckDB gives for the same table."""
    flags = pa.table({"actual": [1, 2, 0], "predicted": [1, 0, 1], "w": [1.0, 1.0, -2.0]})
    t = live.table(flags)
    for args in (
        ("actual", "predicted", ["binary_f1"]),
        ("predicted", "predicted", ["binary_f1"], None, "w"),
    ):
        assert _message(lambda a=args: mlsql.evaluate(t, *a)) == _message(
            lambda a=args: mlsql.evaluate(flags, *a).fetchall()
        )
    numbers = pa.table({"actual": [1.0, float("nan"), 2.0], "predicted": [1.0, 2.0, float("inf")]})
    nt = live.table(numbers)
    for order in (("actual", "predicted"), ("predicted", "actual")):
        assert _message(lambda o=order: mlsql.evaluate(nt, *o, ["mse", "r2"])) == _message(
            lambda o=order: mlsql.evaluate(numbers, *o, ["mse", "r2"]).fetchall()
        )
    for name, scores in (
        ("auc", pa.table({"actual": [1, 2, 0], "predicted": [0.5, 0.2, float("nan")]})),
        ("auc", pa.table({"actual": [1, 0, 0], "predicted": [0.5, float("-inf"), 0.1]})),
        ("brier_score_loss", pa.table({"actual": [1, 0, 0], "predicted": [0.5, 1.5, -0.1]})),
        ("logloss", pa.table({"actual": [1, -1, 0], "predicted": [0.5, 1.5, -0.1]})),
        ("expected_calibration_error", pa.table({"actual": [1, 0], "predicted": [-0.5, 2.0]})),
        # a non-finite score of the binned measures: its bin's cast failed in the database
        ("expected_calibration_error", pa.table({"actual": [1, 0], "predicted": [0.2, math.nan]})),
        ("binned_auc", pa.table({"actual": [1, 0], "predicted": [math.inf, 0.1]})),
    ):
        st = live.table(scores)
        got = _message(lambda t=st, n=name: mlsql.evaluate(t, "actual", "predicted", [n]))
        want = _message(
            lambda t=scores, n=name: mlsql.evaluate(t, "actual", "predicted", [n]).fetchall()
        )
        assert got == want
    lists = label_table([(["a", "b"], ["c"])])

    def typeless(message: str) -> str:  # each engine names the columns' type its own way
        return re.sub(r"the columns' type \([^)]*\)", "the columns' type", message)

    for universe in ([1, 2], ["a", 2], "a"):
        args = ("actual", "predicted", [("macro_f1", {"labels": universe})])
        got = _message(lambda a=args: mlsql.evaluate(live.table(lists), *a))
        want = _message(lambda a=args: mlsql.evaluate(lists, *a).fetchall())
        assert typeless(got) == typeless(want)
    mixed = pa.table({"actual": [["a"]], "predicted": [[1]]})
    m = _message(lambda: mlsql.evaluate(live.table(mixed), "actual", "predicted", ["micro_f1"]))
    assert m.startswith("micro_f1 needs actual and predicted of the same label type")
    n = _message(
        lambda: mlsql.evaluate(
            live.table(label_table([(["a", "b"], ["c"])])),
            "actual",
            "predicted",
            [("hamming_loss", {"n_labels": 2})],
        )
    )
    assert n == _message(
        lambda: mlsql.evaluate(
            label_table([(["a", "b"], ["c"])]),
            "actual",
            "predicted",
            [("hamming_loss", {"n_labels": 2})],
        ).fetchall()
    )


#: single-label inputs of the wrong types, by why
BAD_LABELS = {
    "mixed": pa.table({"actual": ["a", "b"], "predicted": [1, 2]}),
    "a list": pa.table({"actual": ["a", "b"], "predicted": [["a"], ["b"]]}),
    "a flag": pa.table({"actual": [True, False], "predicted": [1, 0]}),
}


@functools.cache
@functools.cache
def duck_connection() -> Any:
    """One mlsql connection for the DuckDB engine's messages and values, opened once per
    process (each takes a second to open)."""
    return mlsql.connect()


@functools.cache
def engines_words(why: str, name: str) -> tuple[str, ...]:
    """The words before "Got" of the message of mlsql.evaluate on Polars and DuckDB for
    :data:`BAD_LABELS`' ``why`` (computed once: DuckDB's connection takes seconds)."""
    import polars as pl

    import mlsql.polars as mp

    data = BAD_LABELS[why]
    polars = _message(lambda: mp.evaluate(pl.from_arrow(data), "actual", "predicted", [name]))
    out = [polars.split(" Got ")[0]]
    if not (why == "a list" and name == "f1_score"):  # DuckDB's class macros bind a list
        con = duck_connection()
        duck = _message(
            lambda: mlsql.evaluate(data, "actual", "predicted", [name], con=con).fetchall()
        )
        out.append(duck.split(" Got ")[0])
    return tuple(out)


#: a class given as a parameter, badly: out of int8's range, of another kind, missing
NAMED_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("class_error_rate", {"label": 1000}),
    ("prevalence", {"positive": "z"}),
    ("class_error_rate", {}),
    ("prevalence", {}),
]


@functools.cache
def named_words(i: int) -> tuple[str, ...]:
    """The message of mlsql.evaluate on Polars and DuckDB (where it checks the call: a
    missing parameter is DuckDB's binder error) for a class given as a parameter, over int8
    labels; computed once."""
    call = NAMED_CALLS[i]
    import polars as pl

    import mlsql.polars as mp

    data = pa.table(
        {"actual": pa.array([1, 2, None], pa.int8()), "predicted": pa.array([1, 1, 2], pa.int8())}
    )
    out = [
        _message(lambda: mp.evaluate(pl.from_arrow(data), "actual", "predicted", [call])).split(
            "\n"
        )[0]
    ]
    if call[1]:
        con = duck_connection()
        out.append(
            _message(
                lambda: mlsql.evaluate(data, "actual", "predicted", [call], con=con).fetchall()
            )
        )
    return tuple(out)


def test_single_label_errors_are_the_engines(live: Live) -> None:
    """Labels of two kinds, a list where one label belongs, another type: the message of
    mlsql.evaluate on Polars and DuckDB, with ibis' names of the types; integer widths mix
    as there."""
    for why, data in BAD_LABELS.items():
        t = live.table(data)
        for name in ("accuracy", "f1_score"):
            got = _message(lambda n=name, t=t: mlsql.evaluate(t, "actual", "predicted", [n]))
            words = got.split(" Got ")[0]
            assert all(w == words for w in engines_words(why, name)), (why, got)
            types = [str(t[c].type()) for c in ("actual", "predicted")]
            if why == "a list":
                assert got.endswith(f"Got predicted {types[1]}.")
            else:
                assert got.endswith(f"Got actual {types[0]} and predicted {types[1]}.")
    # a class given as a parameter: of the first input's type, within its range
    small = pa.table(
        {"actual": pa.array([1, 2, None], pa.int8()), "predicted": pa.array([1, 1, 2], pa.int8())}
    )
    t = live.table(small)
    for i, call in enumerate(NAMED_CALLS):
        if i == 0 and not t.actual.type().is_int8():  # the test's PostgreSQL table: bigint
            continue
        got = _message(lambda c=call: mlsql.evaluate(t, "actual", "predicted", [c]))
        words = re.sub(r"\(\w+\)", "(T)", got)
        assert all(re.sub(r"\(\w+\)", "(T)", w) == words for w in named_words(i)), got
    kinds = {  # integer widths mix; floats and booleans are classes too, as in every engine
        "widths": ([1, 2, None], pa.int8(), [1, 1, 2], pa.int64()),
        "floats": ([0.5, 2.0, None], pa.float64(), [0.5, 0.5, 2.0], pa.float64()),
        "flags": ([True, False, None], pa.bool_(), [True, True, False], pa.bool_()),
    }
    for a, ta, p, tp in kinds.values():
        data = pa.table({"actual": pa.array(a, ta), "predicted": pa.array(p, tp)})
        got = estimates(
            mlsql.evaluate(live.table(data), "actual", "predicted", ["accuracy", "f1_score"])
        )
        assert got == [0.5, pytest.approx(1 / 3, rel=1e-12)]


def test_refusals_name_the_backend_and_the_reason(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A measure of a family not lowered to ibis, and one of a lowered family that is not
    lowered yet (the reason named): every measure is lowered now, so one family is taken
    out and one measure marked not yet here."""
    t = live.table(pa.table({"actual": ["a", "b"], "predicted": ["a", "a"]}))
    with monkeypatch.context() as patched:
        patched.delitem(LOWERED, "class_scores")
        with pytest.raises(
            MlsqlError,
            match=rf"ibis table \({live.name}\) does not take multiclass_brier_score yet: "
            r"multiclass_brier_score is of the class_scores family",
        ):
            mlsql.evaluate(t, "actual", "predicted", ["multiclass_brier_score"])
    ranked = live.table(GOOD_RANKED)
    with monkeypatch.context() as patched:
        patched.setitem(LOWERED["ranking"].not_yet, "coverage_error", "a reason")
        with pytest.raises(
            MlsqlError,
            match=rf"ibis table \({live.name}\) does not take coverage_error yet: of the "
            r"ranking family, mlsql lowers to ibis so far .*precision_at, .*, not "
            r"coverage_error \(a reason\)",
        ):
            mlsql.evaluate(ranked, "correct_items", "rank_items", ["ndcg", "coverage_error"])
    matrix = ("cohen_kappa_score", {"weights": [[0, 1], [1, 0]]})  # a matrix needs labels
    assert _message(lambda: mlsql.evaluate(t, "actual", "predicted", [matrix])) == _message(
        lambda: mlsql.evaluate(
            pa.table({"actual": ["a", "b"], "predicted": ["a", "a"]}),
            "actual",
            "predicted",
            [matrix],
            con=duck_connection(),
        ).fetchall()
    )


def test_datafusion_s_parser_limit_is_named() -> None:
    """On DataFusion's default parser limit, a p-value fails with the setting that lifts it."""
    con = ibis.datafusion.connect()
    con.con.register_record_batches(
        "t", [pa.table({"actual": [1, 0], "predicted": [1, 1]}).to_batches()]
    )
    with pytest.raises(MlsqlError, match=r"datafusion.sql_parser.recursion_limit.*'200'"):
        mlsql.evaluate(con.table("t"), "actual", "predicted", ["binary_kappa_p_value"])
    assert estimates(mlsql.evaluate(con.table("t"), "actual", "predicted", ["binary_f1"])) == [
        float(Fraction(2, 3))
    ]


def test_a_hostile_column_name_is_a_name(live: Live) -> None:
    """Column names that are SQL are quoted as names: nothing runs, nothing is dropped."""
    bad = 'a"; DROP TABLE t1; --'
    group = "g'); SELECT 1; --"
    t = live.table(pa.table({bad: [1, 0, 1], "predicted": [1, 1, 1], group: ["x", "x", "y"]}))
    out = mlsql.evaluate(t, bad, "predicted", ["binary_precision"], by=group).to_pyarrow()
    assert out.column_names == [group, "measure", "estimate"]
    assert out[group].to_pylist() == ["x", "y"]
    assert out["estimate"].to_pylist() == [0.5, 1.0]
    assert t.count().execute() == 3


def test_the_input_table_is_left_as_it_was(live: Live) -> None:
    data = pa.table({"actual": [1, 0], "predicted": [1, 1]})
    t = live.table(data)
    mlsql.evaluate(t, "actual", "predicted", ["binary_f1"])
    assert t.to_pyarrow().to_pylist() == data.to_pylist()


# ---------------------------------------------------------------- compiled, not run
@contextlib.contextmanager
def deep_sql() -> Iterator[None]:
    """Room for sqlglot's recursive parser: the normal tail of the p-values nests about 57
    parentheses deep, more than it takes within Python's default stack limit."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.long
@pytest.mark.parametrize("dialect", ["bigquery", "snowflake", "trino"])
def test_the_plan_compiles_and_parses_in_other_dialects(dialect: str) -> None:
    """The query of every lowered measure, weighted and grouped, compiles to the dialect and
    parses back in sqlglot's dialect of it (these backends are not run here)."""
    import sqlglot

    with deep_sql():
        _compile_and_parse(dialect, sqlglot)


def _compile_and_parse(dialect: str, sqlglot: Any) -> None:
    schema = {
        "g": "string",
        "actual": "array<string>",
        "predicted": "array<string>",
        "w": "float64",
    }
    t = ibis.table(schema, name="preds")
    names = [m.name for m in LOWERED_MEASURES if m.family == "multilabel"]
    params = {"hamming_loss": {"n_labels": 5}}
    p = plan(
        t, "actual", "predicted", [(n, params.get(n, {})) for n in names], by="g", sample_weight="w"
    )
    sql = ibis.to_sql(p.query, dialect=dialect)
    parsed = sqlglot.parse_one(str(sql), read=dialect)
    assert len(parsed.selects) == 1 + len(names) + len(p.checks.items)
    flags = ibis.table({"actual": "boolean", "predicted": "int64"}, name="flags")
    binary = [m.name for m in LOWERED_MEASURES if m.family == "binary"]
    q = plan(flags, "actual", "predicted", binary).query
    assert sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
    numbers = ibis.table({"g": "string", "actual": "float64", "predicted": "int32"}, name="nums")
    regression = [m.name for m in LOWERED_MEASURES if m.family == "regression"]
    q = plan(numbers, "actual", "predicted", regression, by="g").query
    parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
    assert len(parsed.selects) == 1 + len(regression) + 2  # the group, the measures, 2 checks
    q = plan(t, "actual", "predicted", LABEL_AVERAGES, by="g", sample_weight="w").query
    parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
    assert len(parsed.selects) == 1 + len(LABEL_AVERAGES) + 1  # the group, measures, weight
    if dialect != "bigquery":  # BigQuery has no map type: label scores have no column there
        mapped = ibis.table(
            {
                "g": "string",
                "actual": "array<string>",
                "scores": "map<string, float64>",
                "w": "float64",
            },
            name="ls",
        )
        q = plan(mapped, "actual", "scores", LABEL_SCORE_CALLS, by="g", sample_weight="w").query
        parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
        # the group, the measures, 2 checks: the weight, the Brier score's probabilities
        assert len(parsed.selects) == 1 + len(LABEL_SCORE_CALLS) + 2
        classes = ibis.table({**mapped.schema(), "actual": "string"}, name="cs")
        q = plan(classes, "actual", "scores", CLASS_SCORE_CALLS, by="g", sample_weight="w").query
        parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
        # the group, the measures, the weight's check and each measure's of its probabilities
        assert len(parsed.selects) == 1 + 2 * len(CLASS_SCORE_CALLS) + 1
    scored = ibis.table({"g": "string", "actual": "int8", "predicted": "float64"}, name="sc")
    q = plan(scored, "actual", "predicted", SCORES, by="g").query
    parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
    # the group, the measures, 4 checks: the label, a finite score, 'prob' and 'score' in [0, 1]
    assert len(parsed.selects) == 1 + len(SCORES) + 4
    classes = ibis.table(
        {"g": "string", "actual": "string", "predicted": "string", "w": "float64"}, name="cls"
    )
    single = [m.name for m in LOWERED_MEASURES if m.family == "single_label"]
    given = {
        "prevalence": {"positive": "a"},
        "class_error_rate": {"label": "a"},
        "cost_error": {"costs": {"a": {"b": 2.0}}},
    }
    calls = [(n, given.get(n, {})) for n in single]
    q = plan(classes, "actual", "predicted", calls, by="g", sample_weight="w").query
    parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
    assert len(parsed.selects) == 1 + len(single) + 1  # the group, the measures, the weight
    ranked = ibis.table(
        {"g": "string", "truth": "array<int64>", "ranked": "array<int32>", "w": "float64"},
        name="rk",
    )
    calls = [(n, {}) for n in RANKING] + [("ndcg", {"k": 3})]
    q = plan(ranked, "truth", "ranked", calls, by="g", sample_weight="w").query
    parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
    assert len(parsed.selects) == 1 + len(calls) + 1  # the group, the measures, the weight
    graded = ibis.table(
        {"g": "string", "best": "array<int64>", "got": "array<float64>", "w": "float64"},
        name="gr",
    )
    calls = [("graded_ndcg", {}), ("graded_ndcg", {"k": 3})]
    q = plan(graded, "best", "got", calls, by="g", sample_weight="w").query
    parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
    assert len(parsed.selects) == 1 + len(calls) + 1  # the group, the measures, the weight
    rules = ibis.table({"g": "string", "holds": "boolean", "fires": "int8"}, name="rl")
    calls = [(m.name, {}) for m in LOWERED_MEASURES if m.family == "rules"]
    q = plan(rules, "holds", "fires", calls, by="g").query
    parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
    assert len(parsed.selects) == 1 + len(calls) + 2  # the group, the measures, 2 flag checks
    for types in (("array<string>",) * 2, ("int64",) * 2):
        hm = ibis.table({"g": "string", "a": types[0], "p": types[1], "w": "float64"}, name="hm")
        calls = [("fmeasure", {"options": "-beta 2"})]
        q = plan(hm, "a", "p", calls, by="g", sample_weight="w").query
        assert sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
    raters = ibis.table(
        {"g": "string", "ratings": "array<string>", "correct": "array<int8>", "w": "float64"},
        name="ag",
    )
    for column in ("ratings", "correct"):
        calls = [(m.name, {}) for m in LOWERED_MEASURES if m.inputs == (column,)]
        q = plan(raters, column, column, calls, by="g", sample_weight="w").query
        parsed = sqlglot.parse_one(str(ibis.to_sql(q, dialect=dialect)), read=dialect)
        assert len(parsed.selects) >= 1 + len(calls)  # the group, the measures, the checks


# ---------------------------------------------------------------- the guide
def test_the_guide_s_examples_print_what_the_guide_says(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/guides/ibis.md: its Python blocks, run in turn in one namespace, each print the
    text block after it."""
    import re
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "guides" / "ibis.md").read_text()
    blocks = re.findall(r"^```(python|text)\n(.*?)^```", guide, re.S | re.M)
    assert [kind for kind, _ in blocks] == ["python", "text"] * (len(blocks) // 2)
    assert len(blocks) >= 4
    namespace: dict[str, Any] = {}
    for (_, code), (_, text) in zip(blocks[::2], blocks[1::2], strict=True):
        exec(compile(code, "docs/guides/ibis.md", "exec"), namespace)
        assert capsys.readouterr().out == text


# ---------------------------------------------------------------- Snowflake, emulated
@pytest.mark.parametrize("family", ["binary", "regression", "scores"])
def test_snowflake_sql_runs_on_fakesnow(family: str) -> None:
    """The plan compiled to Snowflake's SQL runs on fakesnow (Snowflake emulated on DuckDB)
    and gives each measure's reference value. The label-set family's SQL does not run there:
    fakesnow cannot bind Snowflake's FILTER lambdas in DuckDB (docs/guides/ibis.md)."""
    try:
        import fakesnow
    except ImportError:  # .ci/run installs it apart: it pins an older sqlglot than ibis needs
        why = "fakesnow is missing: .ci/run runs this test in an environment of its own"
        (pytest.fail if os.environ.get("MLSQL_REQUIRE_FAKESNOW") else pytest.skip)(why)
    chosen = [m for m in LOWERED_MEASURES if m.family == family and m.name in REFERENCES]
    kind = {
        "binary": ("BOOLEAN", "BIGINT"),
        "regression": ("DOUBLE", "DOUBLE"),
        "scores": ("BIGINT", "DOUBLE"),
    }[family]
    with fakesnow.patch(), deep_sql():
        import snowflake.connector

        con = snowflake.connector.connect(database="mlsql", schema="tests")
        cur = con.cursor()
        data = {"binary": "binary", "regression": "numbers", "scores": "probabilities"}[family]
        for n, table in enumerate(tables(data, range(2))):
            name = f"preds{n}"
            cur.execute(f"CREATE TABLE {name} (actual {kind[0]}, predicted {kind[1]})")
            rows = table.select(["actual", "predicted"]).to_pylist()
            if rows:
                cur.executemany(
                    f"INSERT INTO {name} VALUES (%s, %s)",
                    [(r["actual"], r["predicted"]) for r in rows],
                )
            types = {
                "binary": ("boolean", "int64"),
                "regression": ("float64", "float64"),
                "scores": ("int64", "float64"),
            }[family]
            t = ibis.table({"actual": types[0], "predicted": types[1]}, name=name)
            calls = [(m, p) for m in chosen for p in REFERENCES[m.name].params_for(table)]
            q = plan(t, "actual", "predicted", [(m.name, p) for m, p in calls])
            cur.execute(str(ibis.to_sql(q.query, dialect="snowflake")))
            row = dict(zip([d.name.lower() for d in cur.description], cur.fetchone(), strict=True))
            got = [row[f"__mlsql_v{i}"] for i in range(len(calls))]
            wrong = [
                f"{m.name}({p}): got {g!r}, expected {w!r}"
                for (m, p), g in zip(calls, got, strict=True)
                if not close(g, w := REFERENCES[m.name].expected(table, p))
            ]
            assert not wrong, "\n".join(wrong) + f"\non {rows}"


# ---------------------------------------------------------------- rules, fmeasure, agreement
def _ratings(rows: list[Any], **more: Any) -> pa.Table:
    return pa.table({**more, "ratings": pa.array(rows, pa.list_(pa.string()))})


def _outcomes(rows: list[Any], **more: Any) -> pa.Table:
    return pa.table({**more, "correct": pa.array(rows, pa.list_(pa.int8()))})


#: per group: raters' ratings (a NULL list skipped, a NULL element not a rating) and models'
#: outcomes (a row holding a NULL skipped), beside each row's weight (NULL: skipped)
RATED = [
    ("x", ["a", "a", "b"], [1, 0, 1], 2.0),
    ("x", ["b", "b", "b"], [1, 1, 1], 1.0),
    ("x", ["a", None, "b", "c"], [0, None, 1], 3.0),
    ("x", None, None, 1.0),
    ("x", ["c", "c", "a"], [0, 0, 1], None),
    (None, ["a", "b", "a"], [1, 0, 0], 1.0),
    (None, ["b", "b", "a"], [0, 1, 1], 2.0),
    (None, ["a", "a", "a"], [1, 1, 0], 0.0),
    ("z", None, [None, 1, 0], 1.0),  # every row unknown
]
AGREEMENT = ["fleiss_kappa", "cochrans_q_statistic", "cochrans_q_p_value"]


def test_agreement_weights_count_as_repeated_rows(live: Live) -> None:
    """Fleiss' kappa and Cochran's Q: integer weights equal repeated rows, NULL weights and
    lists skip the row, a NULL group is a group, a group of unknown rows gives NULL; and the
    weighted values are the DuckDB engine's."""
    g, ratings, outcomes, w = (list(c) for c in zip(*RATED, strict=True))
    kept = [r for r in RATED for _ in range(int(r[3] or 0))]
    for column, make in (("ratings", _ratings), ("correct", _outcomes)):
        names = [m for m in AGREEMENT if REGISTRY[m].inputs == (column,)]
        given = ratings if column == "ratings" else outcomes
        data = make(given, g=g, w=pa.array(w, pa.float64()))
        plain = make([r[1] if column == "ratings" else r[2] for r in kept], g=[r[0] for r in kept])
        got = mlsql.evaluate(live.table(data), column, column, names, by="g", sample_weight="w")
        want = mlsql.evaluate(live.table(plain), column, column, names, by="g")
        duck = mlsql.evaluate(
            data, column, column, names, by="g", sample_weight="w", con=duck_connection()
        ).fetchall()
        a, b = got.to_pyarrow().to_pylist(), want.to_pyarrow().to_pylist()
        k = len(names)
        assert [r["g"] for r in a] == [None] * k + ["x"] * k + ["z"] * k
        assert [r["estimate"] for r in a[2 * k :]] == [None] * k
        for x, y, d in zip(a, b, duck, strict=True):
            assert x["measure"] == d[1]
            for other in (y["estimate"], d[2]):
                assert (x["estimate"] is None) == (other is None), (x, other)
                assert x["estimate"] is None or math.isclose(
                    x["estimate"], other, rel_tol=1e-12, abs_tol=1e-15
                ), (x, other)


def test_fleiss_kappa_in_exact_fractions(live: Live) -> None:
    """Three subjects, three raters: n_ij = [[2, 1], [0, 3], [2, 1]], so M = 9, S = 19 and
    T = (4, 5): kappa = (9 (19 - 9) - 2 (16 + 25)) / (2 (81 - 41)) = 1/10; Cochran's Q of
    outcomes [[1, 1, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 1, 1]]: C = (4, 4, 1), R = (2,
    1, 2, 1, 3), T = 9: Q = 2 (3 · 33 - 81) / (3 · 9 - 19) = 9/2, and its p-value e^(-9/4)
    (chi-square with 2 degrees of freedom)."""
    rated = live.table(_ratings([["a", "a", "b"], ["b", "b", "b"], ["a", "b", "a"]]))
    got = estimates(mlsql.evaluate(rated, "ratings", "ratings", ["fleiss_kappa"]))
    assert got == [pytest.approx(float(Fraction(1, 10)), rel=1e-12)]
    models = live.table(_outcomes([[1, 1, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 1, 1]]))
    got = estimates(mlsql.evaluate(models, "correct", "correct", AGREEMENT[1:]))
    assert got == [pytest.approx(4.5, rel=1e-12), pytest.approx(math.exp(-2.25), rel=1e-12)]


def test_long_chi_square_tails(live: Live) -> None:
    """The chi-square tail's series as long as the data make it: Bowker's test over 24
    classes (276 degrees of freedom, 138 terms) and Cochran's Q of 12 models (11, an odd
    number: erfc and 5 terms), against the oracle (scipy's chi2.sf)."""
    rng = random.Random(29)
    classes = [f"c{i:02d}" for i in range(24)]
    pairs = [(rng.choice(classes), rng.choice(classes)) for _ in range(600)]
    table = label_table(pairs)
    got = estimates(mlsql.evaluate(live.table(table), "actual", "predicted", ["bowker_p_value"]))
    assert close(got[0], REFERENCES["bowker_p_value"].expected(table, {}))
    rows = [[rng.randint(0, 1) for _ in range(12)] for _ in range(40)]
    table = _outcomes(rows)
    got = estimates(mlsql.evaluate(live.table(table), "correct", "correct", AGREEMENT[1:]))
    for name, g in zip(AGREEMENT[1:], got, strict=True):
        assert close(g, REFERENCES[name].expected(table, {})), name


#: tables the agreement measures refuse, the column read: rows of different numbers of raters,
#: one rater, a value that is no 0/1, lists of text outcomes, a column that is no list
BAD_AGREEMENT = [
    (_ratings([["a", "b"], ["a", "b", "b"]]), "ratings", "fleiss_kappa"),
    (_ratings([["a"], ["b"]]), "ratings", "fleiss_kappa"),
    (_outcomes([[1, 0], [2, 1]]), "correct", "cochrans_q_statistic"),
    (_outcomes([[1, 0], [1, 0, 1]]), "correct", "cochrans_q_p_value"),
    (pa.table({"correct": [["1", "0"]]}), "correct", "cochrans_q_statistic"),
    (pa.table({"ratings": ["a"]}), "ratings", "fleiss_kappa"),
]
#: fmeasure's refusals: an int label other than 1, 0, -1; inputs of two kinds; '-average
#: binary' over lists; bad options
BAD_FMEASURE = [
    (pa.table({"actual": [1, 2], "predicted": [1, 1]}), ""),
    (pa.table({"actual": [1, 0], "predicted": [True, False]}), ""),
    (label_table([(["a"], ["a"])]), "-average binary"),
    (pa.table({"actual": [1, 0], "predicted": [1, 1]}), "-beta x"),
    (pa.table({"actual": [1, 0], "predicted": [1, 1]}), "-average macro"),
    (pa.table({"actual": [1, 0], "predicted": [1, 1]}), "-gamma 2"),
]


def _typeless_words(message: str) -> str:
    """A message without its types' spelling (each engine spells a type its own way)."""
    return message.split(" Got ")[0]


def test_agreement_and_fmeasure_errors_are_the_engines(live: Live) -> None:
    """Each refusal in the words mlsql.evaluate on DuckDB gives for the same table (the
    types named apart)."""
    con = duck_connection()
    for data, column, name in BAD_AGREEMENT:
        t = live.table(data)
        got = _message(lambda t=t, c=column, n=name: mlsql.evaluate(t, c, c, [n]))
        want = _message(
            lambda d=data, c=column, n=name: mlsql.evaluate(d, c, c, [n], con=con).fetchall()
        )
        assert _typeless_words(got) == _typeless_words(want)
    for data, options in BAD_FMEASURE:
        t = live.table(data)
        call = [("fmeasure", {"options": options})]
        got = _message(lambda t=t, c=call: mlsql.evaluate(t, "actual", "predicted", c))
        want = _message(
            lambda d=data, c=call: mlsql.evaluate(d, "actual", "predicted", c, con=con).fetchall()
        )
        assert _typeless_words(got) == _typeless_words(want)


def test_fmeasure_and_rules_weights_count_as_repeated_rows(live: Live) -> None:
    """fmeasure over lists, int and boolean labels, and a rule's novelty and satisfaction:
    integer weights equal repeated rows (a NULL weight skips the row), per group."""
    rows = [
        ("x", ["a", "b"], ["a"], 1, -1, True, True, 2.0),
        ("x", ["b"], ["b", "c"], 0, 1, False, True, 1.0),
        ("x", [], ["a"], 1, 1, True, False, 3.0),
        ("y", ["c"], ["c"], -1, -1, False, False, 1.0),
        ("y", ["a"], None, 1, 0, True, None, 2.0),
        ("y", ["a"], ["b"], 0, 0, None, True, None),
    ]
    names = ("g", "la", "lp", "ia", "ip", "holds", "fires", "w")
    columns = {n: [r[i] for r in rows] for i, n in enumerate(names)}
    kept = [r for r in rows for _ in range(int(r[-1] or 0))]
    plain = {n: [r[i] for r in kept] for i, n in enumerate(names[:-1])}
    fm = [("fmeasure", {"options": o}) for o in ("", "-beta 2")]
    calls = [
        (("la", "lp"), fm),
        (("ia", "ip"), [*fm, ("fmeasure", {"options": "-average binary"})]),
        (("holds", "fires"), ["rule_novelty", ("rule_satisfaction", {"zero_division": 1})]),
    ]
    data, repeated = live.table(pa.table(columns)), live.table(pa.table(plain))
    for cols, asked in calls:
        got = mlsql.evaluate(data, *cols, asked, by="g", sample_weight="w")
        want = mlsql.evaluate(repeated, *cols, asked, by="g")
        a, b = got.to_pyarrow().to_pylist(), want.to_pyarrow().to_pylist()
        assert [r["g"] for r in a] == ["x"] * len(asked) + ["y"] * len(asked)
        for x, y in zip(a, b, strict=True):
            assert x["estimate"] == pytest.approx(y["estimate"], rel=1e-12, abs=1e-15), (cols, x)


def test_graded_ndcg_exact_and_weighted(live: Live) -> None:
    """Grades [3, NULL, 2, 0] against the ideal {2, 3, 3, NULL}: DCG@3 = 7 + 3/2 (the NULL
    grade holds place 2) over the ideal 7 + 7/log2(3) + 3/2; a row of ideal grades all 0
    scores 0; then integer weights equal repeated rows, per group, and the DuckDB engine's
    values."""
    rows = [([3.0, None, 2.0, 0.0], [2.0, 3.0, 3.0, None]), ([1.0], [0.0, 0.0]), (None, [1.0])]
    t = pa.table(
        {
            "ranked_relevance": pa.array([r for r, _ in rows], pa.list_(pa.float64())),
            "ideal_relevance": pa.array([i for _, i in rows], pa.list_(pa.float64())),
        }
    )
    grades = ("ideal_relevance", "ranked_relevance")
    got = estimates(mlsql.evaluate(live.table(t), *grades, [("graded_ndcg", {"k": 3})]))
    ideal = 7 + 7 / math.log2(3) + 3 / 2
    assert got == [pytest.approx((7 + 3 / 2) / ideal / 2, rel=1e-12)]
    g, w = ["x", "x", "y", "y"], [2.0, 1.0, 3.0, None]
    data = {
        "g": g,
        "ranked_relevance": [[1.0, 2.0], [0.0, 3.0, 1.0], [2.0], [1.0]],
        "ideal_relevance": [[2.0, 1.0], [3.0, 2.0], [1.0, 2.0], [1.0]],
    }
    weighted = pa.table({**data, "w": pa.array(w, pa.float64())})
    repeated = pa.table(
        {c: [v for v, n in zip(data[c], w, strict=True) for _ in range(int(n or 0))] for c in data}
    )
    calls = [("graded_ndcg", {}), ("graded_ndcg", {"k": 1})]
    a = mlsql.evaluate(live.table(weighted), *grades, calls, by="g", sample_weight="w")
    b = mlsql.evaluate(live.table(repeated), *grades, calls, by="g")
    duck = mlsql.evaluate(
        weighted, *grades, calls, by="g", sample_weight="w", con=duck_connection()
    ).fetchall()
    for x, y, d in zip(a.to_pyarrow().to_pylist(), b.to_pyarrow().to_pylist(), duck, strict=True):
        assert (x["g"], x["measure"]) == (y["g"], y["measure"]) == (d[0], d[1])
        assert x["estimate"] == pytest.approx(y["estimate"], rel=1e-12)
        assert x["estimate"] == pytest.approx(d[2], rel=1e-12)


# ---------------------------------------------------------------- label scores
#: the label-score measures lowered to ibis (each average), and the label-score rankings
LABEL_SCORE_CALLS = [
    (name, {"average": average})
    for name in ("multilabel_average_precision", "multilabel_roc_auc")
    for average in ("micro", "macro", "weighted", "samples")
] + [
    ("multilabel_brier_score", {}),
    ("coverage_error", {}),
    ("label_ranking_loss", {}),
    ("label_ranking_average_precision", {}),
    ("one_error", {}),
    ("ndcg_score", {"k": 2}),
]


#: the class-score measures lowered to ibis, each parameter that changes the plan
CLASS_SCORE_CALLS = [
    ("multiclass_brier_score", {}),
    ("multiclass_brier_score", {"scale_by_half": True}),
    ("multiclass_calibration_error", {}),
    ("multiclass_calibration_error", {"n_bins": 4, "norm": "l2"}),
    ("multiclass_calibration_error", {"n_bins": 3, "norm": "max"}),
]


def _scored_rows(seed: int, n: int, one_label: bool = False) -> pa.Table:
    """Groups of label lists and label -> score maps (ties, unscored true labels, a NULL
    score, NULL rows), and weights (0, fractions, NULL)."""
    rng = random.Random(seed)
    labels = ["a", "b", "c", "d"]
    rows = []
    for _ in range(n):
        chosen = rng.sample(labels, rng.randint(0, 3))
        scores = (
            None
            if rng.random() < 0.1
            else [(x, rng.choice([0.0, 0.25, 0.5, 1.0, None])) for x in chosen]
        )
        actual: Any = None if rng.random() < 0.1 else rng.sample(labels, rng.randint(0, 3))
        if one_label and actual is not None:
            actual = rng.choice(labels)
        w = rng.choice([0.0, 0.5, 1.0, 2.0, 3.0, None])
        rows.append((rng.choice(["x", "y", None]), actual, scores, w))
    g, actual, scores, w = (list(c) for c in zip(*rows, strict=True))
    return pa.table(
        {
            "g": g,
            "actual": pa.array(actual, pa.string() if one_label else pa.list_(pa.string())),
            "scores": pa.array(scores, pa.map_(pa.string(), pa.float64())),
            "w": pa.array(w, pa.float64()),
        }
    )


@pytest.mark.long
@pytest.mark.parametrize("one_label", [False, True], ids=["label_scores", "class_scores"])
def test_label_scores_weights_are_the_duckdb_engine_s(live: Live, one_label: bool) -> None:
    """Label-score precision, ROC AUC, Brier score and rankings, and the class-score Brier
    score and calibration error, grouped (a NULL group too) and weighted (0, fractions,
    NULL): the DuckDB engine's values; with integer weights, the values of the rows
    repeated."""
    calls = CLASS_SCORE_CALLS if one_label else LABEL_SCORE_CALLS
    data = _scored_rows(7, 60, one_label)
    got = mlsql.evaluate(
        live.table(data), "actual", "scores", calls, by="g", sample_weight="w"
    ).to_pyarrow()
    duck = mlsql.evaluate(
        data, "actual", "scores", calls, by="g", sample_weight="w", con=duck_connection()
    ).fetchall()
    assert len(duck) == got.num_rows == 3 * len(calls)
    for x, d in zip(got.to_pylist(), duck, strict=True):
        assert (x["g"], x["measure"]) == d[:2]
        assert (x["estimate"] is None) == (d[2] is None), (x, d)
        assert x["estimate"] is None or math.isclose(x["estimate"], d[2], rel_tol=1e-12), (x, d)
    whole = [r for r in data.to_pylist() if r["w"] in (1.0, 2.0, 3.0)]
    kept = [r for r in whole for _ in range(int(r["w"]))]
    repeated = pa.Table.from_pylist(kept, schema=data.schema).drop_columns(["w"])
    integral = pa.Table.from_pylist(whole, schema=data.schema)
    a = mlsql.evaluate(
        live.table(integral), "actual", "scores", calls, by="g", sample_weight="w"
    ).to_pyarrow()
    b = mlsql.evaluate(live.table(repeated), "actual", "scores", calls, by="g")
    for x, y in zip(a.to_pylist(), b.to_pyarrow().to_pylist(), strict=True):
        assert (x["g"], x["measure"]) == (y["g"], y["measure"])
        assert (x["estimate"] is None) == (y["estimate"] is None), (x, y)
        assert x["estimate"] is None or math.isclose(x["estimate"], y["estimate"], rel_tol=1e-12)


def test_label_scores_errors_are_the_engines(live: Live) -> None:
    """A probability outside [0, 1] or not finite for the Brier score (NaN named first):
    the DuckDB engine's message; scores that are no map: the scores' message; on PostgreSQL
    a jsonb score that is no JSON number is named."""
    cases = [
        (name, scores, got)
        for name in ("multilabel_brier_score", "multiclass_brier_score")
        for scores, got in (
            ([("a", 1.5)], "Got a value above 1."),
            ([("a", -0.5), ("b", float("nan"))], "Got NaN."),
            ([("a", -0.5), ("b", float("inf"))], "Got inf."),
            ([("a", -0.5), ("b", 2.0)], "Got a value below 0."),
        )
    ]
    for name, scores, got in cases:
        one = name == "multiclass_brier_score"
        data = pa.table(
            {
                "actual": pa.array(
                    ["a", "b"] if one else [["a"], ["b"]],
                    pa.string() if one else pa.list_(pa.string()),
                ),
                "scores": pa.array([scores, [("b", 0.5)]], pa.map_(pa.string(), pa.float64())),
            }
        )
        # DuckDB's error, whatever its class
        with pytest.raises(Exception) as duck:
            mlsql.evaluate(data, "actual", "scores", [name], con=duck_connection()).fetchall()
        assert got in str(duck.value)
        if live.name == "postgres" and got in ("Got NaN.", "Got inf."):
            continue  # JSON has no NaN nor infinity: jsonb cannot hold these scores
        with pytest.raises(MlsqlError) as ours:
            mlsql.evaluate(live.table(data), "actual", "scores", [name])
        assert str(ours.value) in str(duck.value)
    if live.name != "postgres":  # a list of composite values takes a type of its own there
        structs = pa.table({"actual": [["a"]], "scores": [[{"label": "a", "score": 0.5}]]})
        with pytest.raises(MlsqlError, match=r"not yet a list of \(label, score\) structs"):
            mlsql.evaluate(live.table(structs), "actual", "scores", ["multilabel_roc_auc"])
    listed = pa.table({"actual": [["a"]], "scores": [[0.5]]})
    with pytest.raises(MlsqlError, match=r"takes scores as a map .* Got scores array<float64>"):
        mlsql.evaluate(live.table(listed), "actual", "scores", ["multilabel_roc_auc"])
    if live.name == "postgres":
        import psycopg

        with psycopg.connect(live.server.conninfo, autocommit=True) as c:
            c.execute("CREATE TABLE scored_text (actual text[], scores jsonb)")
            c.execute("""INSERT INTO scored_text VALUES ('{a}', '{"a": "0.5"}')""")
        with pytest.raises(MlsqlError, match="jsonb holding a score that is no JSON number"):
            mlsql.evaluate(
                live.con.table("scored_text"), "actual", "scores", ["multilabel_roc_auc"]
            )


# ---------------------------------------------------------------- bootstrap
def _bootstrap_tables() -> dict[str, tuple[pa.Table, list[Any]]]:
    """A table of each kind of statistics bootstrap computes over ibis, and its measures:
    groups (a NULL one), NULL values, weights 0, fractions and NULL."""
    rng = random.Random(3)
    labels = ["a", "b", "c"]
    n = 120

    def weights() -> list[Any]:
        return [rng.choice([0.0, 1.0, 2.5, None]) for _ in range(n)]

    def groups() -> list[Any]:
        return [rng.choice(["x", "y", None]) for _ in range(n)]

    return {
        "label sets": (
            pa.table(
                {
                    "g": groups(),
                    "actual": [rng.sample(labels, rng.randint(0, 2)) for _ in range(n)],
                    "predicted": [rng.sample(labels, rng.randint(0, 2)) for _ in range(n)],
                    "w": weights(),
                }
            ),
            ["micro_f1", "samples_jaccard", ("hamming_loss", {"n_labels": 3})],
        ),
        "label lists": (  # NULL and repeated elements; a universe with a label none holds
            pa.table(
                {
                    "g": groups(),
                    "actual": [
                        rng.choice([None, [], ["a", "a"], ["b", None], ["c", "a"], ["a", "b"]])
                        for _ in range(n)
                    ],
                    "predicted": [rng.sample([*labels, None], rng.randint(0, 3)) for _ in range(n)],
                    "w": weights(),
                }
            ),
            [
                "macro_f1",
                ("weighted_recall", {"zero_division": 1}),
                ("macro_precision", {"labels": ["b", "a", "zz"]}),
                "label_accuracy_macro",
            ],
        ),
        "classes": (
            pa.table(
                {
                    "g": groups(),
                    "actual": [rng.choice(labels) for _ in range(n)],
                    "predicted": [rng.choice([*labels, None]) for _ in range(n)],
                    "w": weights(),
                }
            ),
            ["accuracy", ("f1_score", {"average": "macro"}), "cohen_kappa_score"],
        ),
        "numbers": (
            pa.table(
                {
                    "g": groups(),
                    "actual": [rng.random() for _ in range(n)],
                    "predicted": [rng.choice([rng.random(), None]) for _ in range(n)],
                    "w": weights(),
                }
            ),
            ["mse", "r2"],
        ),
        "scores": (
            pa.table(
                {
                    "g": groups(),
                    "actual": [rng.choice([0, 1]) for _ in range(n)],
                    "predicted": [round(rng.random(), 2) for _ in range(n)],
                    "w": weights(),
                }
            ),
            ["auc", "logloss"],
        ),
        # a true class and a map class -> probability per row (jsonb on PostgreSQL): unscored
        # true classes, a NULL score, NULL rows
        "class scores": (
            _scored_rows(11, n, one_label=True).rename_columns(["g", "actual", "predicted", "w"]),
            [
                "multiclass_brier_score",
                ("multiclass_calibration_error", {"n_bins": 4, "norm": "l2"}),
            ],
        ),
    }


@pytest.mark.long  # the README's suite is at its ten minutes; .ci/run runs this after it
@pytest.mark.parametrize(
    "kind", ["label sets", "label lists", "classes", "numbers", "scores", "class scores"]
)
def test_bootstrap_is_the_duckdb_engine_s(live: Live, kind: str) -> None:
    """bootstrap over an ibis table: the statistics table computed in its database, the
    draws every engine's, so the same seed gives the DuckDB engine's estimates and
    intervals, grouped and weighted."""
    data, measures = _bootstrap_tables()[kind]
    t = live.table(data)
    for weight in (None, "w"):
        got = mlsql.bootstrap(
            t, "actual", "predicted", measures, by="g", n_resamples=40, seed=4, sample_weight=weight
        ).to_pyarrow()
        want = mlsql.bootstrap(
            data,
            "actual",
            "predicted",
            measures,
            by="g",
            n_resamples=40,
            seed=4,
            sample_weight=weight,
            con=duck_connection(),
        ).fetchall()
        assert got.column_names == ["g", "measure", "estimate", "low", "high", "std_error"]
        assert [r["g"] for r in got.to_pylist()] == [r[0] for r in want]
        assert len(want) == 3 * len(measures)
        for x, y in zip(got.to_pylist(), want, strict=True):
            assert x["measure"] == y[1]
            for a, b in zip(list(x.values())[2:], y[2:], strict=True):
                assert (a is None) == (b is None), (x, y)
                assert a is None or math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15), (x, y)


def test_bootstrap_refusals_are_the_engines(live: Live) -> None:
    """A negative weight, numbers where labels belong and a class probability above 1: the
    DuckDB engine's messages."""
    data, _ = _bootstrap_tables()["label sets"]
    bad = data.set_column(3, "w", pa.array([-1.0] * data.num_rows))
    with pytest.raises(MlsqlError, match="sample_weight") as ours:
        mlsql.bootstrap(live.table(bad), "actual", "predicted", ["micro_f1"], sample_weight="w")
    with pytest.raises(Exception) as duck:
        mlsql.bootstrap(
            bad, "actual", "predicted", ["micro_f1"], sample_weight="w", con=duck_connection()
        ).fetchall()
    assert str(ours.value) in str(duck.value)
    numbers, _ = _bootstrap_tables()["numbers"]
    # the engines' words, each naming its own type (float64 here, DOUBLE in DuckDB)
    with pytest.raises(
        MlsqlError,
        match=r"^bootstrap resamples micro_f1 from label lists: actual must be a list of "
        r"labels per row\. Got actual float64\.$",
    ):
        mlsql.bootstrap(live.table(numbers), "actual", "predicted", ["micro_f1"])
    scored = pa.table(
        {
            "actual": ["a", "b"],
            "scores": pa.array([[("a", 1.5)], [("b", 0.5)]], pa.map_(pa.string(), pa.float64())),
        }
    )
    with pytest.raises(MlsqlError) as ours:
        mlsql.bootstrap(live.table(scored), "actual", "scores", ["multiclass_brier_score"])
    with pytest.raises(MlsqlError) as duck:
        mlsql.bootstrap(scored, "actual", "scores", ["multiclass_brier_score"])
    assert str(ours.value) == str(duck.value)
    assert "probabilities in [0, 1] for predicted. Got a value above 1." in str(ours.value)


# ---------------------------------------------------------------- compare
@functools.cache
def _paired_table() -> pa.Table:
    """Three models' rows of every id (ids unique within a model): label lists, numbers and
    classes, groups (a NULL one), weights 0, fractions and NULL."""
    rng = random.Random(1)
    rows = []
    for g in ("x", "y", None):
        for i in range(20):
            a = rng.sample(["a", "b", "c"], rng.randint(0, 2))
            for model in ("A", "B", "C"):
                rows.append(
                    {
                        "g": g,
                        "id": f"{g}-{i}",
                        "model": model,
                        "actual": a,
                        "predicted": rng.sample(["a", "b", "c", None], rng.randint(0, 2)),
                        "w": rng.choice([1.0, 2.0, 0.0, None]),
                        "y": float(i),
                        "y_hat": float(i) + rng.random(),
                        "c": rng.choice(["p", "q"]),
                        "c_hat": rng.choice(["p", "q", None]),
                    }
                )
    return pa.Table.from_pylist(rows)


#: (actual, predicted, measures, settings): every kind of statistics, each test
PAIRED = [
    ("actual", "predicted", ["micro_f1", "subset_accuracy"], {}),
    ("actual", "predicted", ["macro_f1"], {"by": "g"}),
    ("actual", "predicted", ["samples_f1"], {"by": "g", "sample_weight": "w"}),
    ("y", "y_hat", ["mse", "mae"], {"test": "student"}),
    ("c", "c_hat", ["accuracy", "error_rate"], {"by": "g", "test": "fisher"}),
    ("c", "c_hat", ["cohen_kappa_score"], {"by": "g", "sample_weight": "w"}),
]


def _rows_equal(got: list[tuple[Any, ...]], want: list[tuple[Any, ...]]) -> bool:
    def same(a: Any, b: Any) -> bool:
        if isinstance(a, float) and isinstance(b, float):
            return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-15) or (
                math.isnan(a) and math.isnan(b)
            )
        return bool(a == b)

    return len(got) == len(want) and all(
        len(x) == len(y) and all(same(a, b) for a, b in zip(x, y, strict=True))
        for x, y in zip(got, want, strict=True)
    )


def test_compare_is_the_duckdb_engine_s(live: Live) -> None:
    """compare over an ibis table: the rows' statistics, the models' counts and the pairs of
    one id computed in the database, the draws and tests every engine's: the DuckDB engine's
    rows (intervals, bootstrap, McNemar, Student's and Fisher's p-values) with the same seed;
    unpaired rows are the same error, or dropped."""
    data = _paired_table()
    table = live.table(data)
    for actual, predicted, chosen, settings in PAIRED:
        kw = {"n_resamples": 60, "seed": 5, **settings}
        got = mlsql.compare(table, actual, predicted, chosen, **kw).to_pyarrow()
        want = mlsql.compare(data, actual, predicted, chosen, con=duck_connection(), **kw)
        assert got.column_names == want.columns
        rows = [tuple(r.values()) for r in got.to_pylist()]
        assert _rows_equal(rows, want.fetchall()), (chosen, settings)
    unpaired = data.slice(0, data.num_rows - 1)
    with pytest.raises(MlsqlError) as ours:
        mlsql.compare(live.table(unpaired), "actual", "predicted", ["micro_f1"], by="g")
    with pytest.raises(MlsqlError) as duck:
        mlsql.compare(unpaired, "actual", "predicted", ["micro_f1"], by="g")
    assert str(ours.value) == str(duck.value) and "1 rows have no partner" in str(ours.value)
    kw = {"by": "g", "drop_unpaired": True, "n_resamples": 40}
    got = mlsql.compare(live.table(unpaired), "actual", "predicted", ["micro_f1"], **kw)
    want = mlsql.compare(unpaired, "actual", "predicted", ["micro_f1"], **kw).fetchall()
    assert _rows_equal([tuple(r.values()) for r in got.to_pyarrow().to_pylist()], want)
    # paired on g: 180 rows, 9 distinct (model, g) keys
    with pytest.raises(MlsqlError, match=r"must be unique within each model .* 171 repeated"):
        mlsql.compare(table, "actual", "predicted", ["micro_f1"], id="g")


def test_compare_of_class_scores_is_the_duckdb_engine_s(live: Live) -> None:
    """compare of the class-score measures over an ibis table: each (model, id) row's numbers
    computed in the database, the pairs of one id joined there: the DuckDB engine's rows."""
    rng = random.Random(9)
    rows = []
    for i in range(40):
        actual = rng.choice(["a", "b", "c", None])
        for model in ("A", "B"):
            chosen = rng.sample(["a", "b", "c"], rng.randint(0, 3))
            scores = [(c, rng.choice([0.0, 0.25, 0.5, 1.0])) for c in chosen]
            w = rng.choice([1.0, 2.0, None])
            rows.append({"id": i, "model": model, "actual": actual, "scores": scores, "w": w})
    data = pa.Table.from_pylist(
        rows,
        schema=pa.schema(
            [
                ("id", pa.int64()),
                ("model", pa.string()),
                ("actual", pa.string()),
                ("scores", pa.map_(pa.string(), pa.float64())),
                ("w", pa.float64()),
            ]
        ),
    )
    chosen = ["multiclass_brier_score", ("multiclass_calibration_error", {"n_bins": 3})]
    for weight in (None, "w"):
        kw = {"n_resamples": 50, "seed": 2, "sample_weight": weight}
        got = mlsql.compare(live.table(data), "actual", "scores", chosen, **kw).to_pyarrow()
        want = mlsql.compare(data, "actual", "scores", chosen, con=duck_connection(), **kw)
        assert got.column_names == want.columns
        rows_got = [tuple(r.values()) for r in got.to_pylist()]
        assert _rows_equal(rows_got, want.fetchall()), weight


def test_compare_takes_hostile_names_as_names(live: Live) -> None:
    """Model, id and label columns named like SQL: names, nothing else (the table is left)."""
    names = {"model": 'm"; DROP TABLE x; --', "id": "i'd", "actual": "a b", "predicted": 'p"q'}
    data = pa.table(
        {
            names["model"]: ["A", "A", "B", "B"],
            names["id"]: [1, 2, 1, 2],
            names["actual"]: [["x"], ["y"], ["x"], ["y"]],
            names["predicted"]: [["x"], [], ["x"], ["y"]],
        }
    )
    table = live.table(data)
    kw = {"model": names["model"], "id": names["id"], "n_resamples": 30}
    got = mlsql.compare(table, names["actual"], names["predicted"], ["micro_f1"], **kw)
    # A: tp 1 of |A| 2, |P| 1 -> 2/3; B: both rows right -> 1
    [row] = got.to_pyarrow().to_pylist()
    assert (row["model"], row["baseline_estimate"], row["estimate"]) == ("B", 2 / 3, 1.0)
    assert table.count().execute() == 4
