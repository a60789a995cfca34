"""The score family of the PostgreSQL library on a live server: the losses, the binned areas
and the calibration error.

Every held aggregate with every parameter set of its reference (tests/references.py: the
plain-Python oracle in fractions, scikit-learn's brier_score_loss, torchmetrics' formulas
in fractions) on the random tables of probabilities with NULL rows, all rows unknown and no
rows, with 0/1 and boolean labels; weights as repeated rows; DuckDB's texts for bad labels,
scores and parameters; and the exact ranks left out with their reason.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from mlsql._postgres import scores
from mlsql._postgres.library import included, missing
from mlsql._registry import Measure, measures
from tests.references import REFERENCES
from tests.test_postgres_library import (
    check_references,
    check_same_error,
    check_weights_repeat_rows,
    library_database,
)

psycopg = pytest.importorskip("psycopg")

#: the score aggregates the library holds, by the registry
MEASURES = [m for m in measures(family="scores") if included(m)]
COLUMNS = ("actual", "predicted", "label", "score", "prob")


@pytest.fixture(scope="module")
def pg(pg_server: Any) -> Iterator[Any]:
    yield from library_database(pg_server, "mlsql_scores")


def loader(labels: str) -> Any:
    """A loader of the probability tables as the temporary table t, labels as ``labels``
    (bigint 0/1 or boolean)."""

    def load(con: Any, table: pa.Table, weights: list[Any] | None = None) -> None:
        con.execute("DROP TABLE IF EXISTS t")
        types = {"actual": labels, "label": labels}
        columns = ", ".join(f"{c} {types.get(c, 'float8')}" for c in COLUMNS)
        con.execute(f"CREATE TEMP TABLE t ({columns}, w float8)")
        weights = weights or [1.0] * table.num_rows
        values = [table[c].to_pylist() for c in COLUMNS]
        if labels == "boolean":
            for i, c in enumerate(COLUMNS):
                if c in types:
                    values[i] = [None if v is None else bool(v) for v in values[i]]
        # typed placeholders: a prepared INSERT of the other label type is another statement
        casts = [f"%s::{types.get(c, 'float8')}" for c in COLUMNS] + ["%s::float8"]
        with con.cursor() as cur:
            cur.executemany(
                f"INSERT INTO t VALUES ({', '.join(casts)})",
                list(zip(*values, weights, strict=True)),
            )

    return load


def call(m: Measure, params: dict[str, Any], table: Any = None, weight: str | None = None) -> Any:
    """``m`` called positionally: inputs, sample_weight (1 where only parameters follow),
    then the parameters up to the last one given (text as text, numbers as float8)."""
    args, values = list(m.inputs), []
    last = max((i for i, p in enumerate(m.params) if p.name in params), default=-1)
    if weight is not None or last >= 0:
        args.append(weight or "1")
    for p in m.params[: last + 1]:
        value = params.get(p.name, p.default)
        args.append("%s::text" if isinstance(value, str) else "%s::float8")
        values.append(value)
    return f"{m.name}({', '.join(args)})", values


def test_the_library_holds_the_bounded_score_measures() -> None:
    """The losses, the binned areas and the calibration error; the exact ranks say why not
    and name the binned forms."""
    names = {m.name for m in MEASURES}
    assert names == {
        "logloss",
        "hivemall_logloss",
        "brier_score_loss",
        "binned_auc",
        "binned_average_precision_score",
        "expected_calibration_error",
    }
    gaps = missing()
    for name in scores.LEFT_OUT:
        assert "binned_auc" in gaps[name], gaps[name]
    assert all(m.name in REFERENCES for m in MEASURES)


@pytest.mark.parametrize("labels", ["bigint", "boolean"])
def test_measures_match_their_reference(pg: Any, labels: str) -> None:
    """Every aggregate with every parameter set of its reference on the random tables of
    probabilities, all rows unknown, and no rows; labels 0/1 and boolean."""
    check_references(pg, MEASURES, "probabilities", 8, loader(labels), call)


def test_weights_count_as_repeated_rows(pg: Any) -> None:
    """A whole sample_weight (some 0, some NULL: the row left out) gives the reference's
    value over the rows repeated."""
    check_weights_repeat_rows(pg, MEASURES, "probabilities", loader("bigint"), "pg-scores", call)


def test_the_alias_and_hivemall_s_order(pg: Any) -> None:
    """log_loss is logloss; hivemall_logloss takes (predicted, actual)."""
    pg.execute("DROP TABLE IF EXISTS h")
    pg.execute("CREATE TEMP TABLE h AS SELECT * FROM (VALUES (1, 0.75), (0, 0.5)) v(a, p)")
    got = pg.execute("SELECT logloss(a, p), log_loss(a, p), hivemall_logloss(p, a) FROM h")
    first, *others = got.fetchone()
    assert others == [first, first]
    assert first == pytest.approx(-(0.0 + (-0.2876820724517809) + (-0.6931471805599453)) / 2)


BAD_CALLS = [
    ("logloss(a, s)", "logloss(a, s)", "(2, 0.5)"),
    ("logloss(a, s)", "logloss(a, s)", "(1, 'NaN'::float8)"),
    ("logloss(a, s)", "logloss(a, s)", "('x', 0.5)"),
    ("logloss(a, s)", "logloss(a, s)", "(1, 'x')"),
    ("brier_score_loss(a, s)", "brier_score_loss(a, s)", "(1, 1.5)"),
    ("binned_auc(a, s)", "binned_auc(a, s)", "(1, -0.5)"),
    ("logloss(a, s, -1)", "logloss(a, s, -1)", "(1, 0.5)"),
    (
        "brier_score_loss(a, s, 1, 'often')",
        "brier_score_loss(a, s, scale_by_half := 'often')",
        "(1, 0.5)",
    ),
    (
        "brier_score_loss(a, s, 1, 'true')",
        "brier_score_loss(a, s, scale_by_half := 'true')",
        "(1, 0.5)",
    ),
    (
        "expected_calibration_error(a, s, 1, 0)",
        "expected_calibration_error(a, s, n_bins := 0)",
        "(1, 0.5)",
    ),
    (
        "expected_calibration_error(a, s, 1, 10, 'l3')",
        "expected_calibration_error(a, s, norm := 'l3')",
        "(1, 0.5)",
    ),
    ("binned_auc(a, s, 1, 1)", "binned_auc(a, s, thresholds := 1)", "(1, 0.5)"),
    ("binned_auc(a, s, 1, 2.5)", "binned_auc(a, s, thresholds := 2.5)", "(1, 0.5)"),
    ("binned_auc(a, s, 1, 10.0)", "binned_auc(a, s, thresholds := 10.0)", "(1, 0.5)"),
    (
        "expected_calibration_error(a, s, 1, 10.0)",
        "expected_calibration_error(a, s, n_bins := 10.0)",
        "(1, 0.5)",
    ),
    (
        "binned_average_precision_score(a, s, 1, 10, 'often')",
        "binned_average_precision_score(a, s, zero_division := 'often')",
        "(1, 0.5)",
    ),
]


@pytest.mark.parametrize(("pg_call", "duckdb_call", "row"), BAD_CALLS)
def test_errors_say_what_duckdb_says(
    pg: Any, duck: Any, pg_call: str, duckdb_call: str, row: str
) -> None:
    table = f"(VALUES {row}) v(a, s)"
    duck_table = table.replace("::float8", "::DOUBLE")
    check_same_error(
        pg,
        f"SELECT {pg_call} FROM {table}",
        duck,
        f"SELECT {duckdb_call} FROM {duck_table}",
        {"VARCHAR.": "text."},
    )
