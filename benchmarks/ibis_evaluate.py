"""``mlsql.evaluate`` over ibis tables against the same call on DuckDB, side by side.

Usage::

    python benchmarks/ibis_evaluate.py --rows 1000000 [--repeats 3]

The rows are benchmarks/generate.py's ``strings.parquet`` (made in a temporary
directory), plus two 0/1 columns for the binary case (``a_flag``: the row's true
labels include ``tag0000``..``tag0009``; ``p_flag``: its predicted ones do). Each
case is one ``evaluate`` by model:

- ``label sets``: micro_f1, samples_f1, subset_accuracy, hamming_loss(n_labels=1000);
- ``label averages``: macro_f1, weighted_f1, label_accuracy_macro (per (group, label)
  counts of the same lists);
- ``binary``: binary_f1, binary_kappa, binary_mcnemar_p_value;
- ``classes`` (one label per row: ``a_class``/``p_class``, ``c`` and the last digit of the
  row's first true/predicted label, ten classes; NULL for an empty list): accuracy, macro
  f1_score, matthews_corrcoef, cohen_kappa_score, cohen_kappa_std_error(quadratic);
- ``scores`` (``a_flag`` against ``score``: half the predicted flag plus a fraction
  in [0, 0.5) from the row's position, about 1,000 distinct scores): auc,
  average_precision_score, logloss, brier_score_loss, expected_calibration_error;
- ``ranking`` (the true labels as ``correct_items``, the predicted list, in its order, as
  ``rank_items``): ndcg, map_score, mrr, precision_at(k=5), recall_at(k=5);
- ``label scores`` (the true labels against ``scores``, a map of the row's predicted labels
  to a score in [0, 1) from the row's and the label's positions, about 1,000 distinct
  scores; PostgreSQL: a jsonb object): multilabel_average_precision (macro),
  multilabel_roc_auc (micro), multilabel_brier_score, label_ranking_average_precision,
  coverage_error;
- ``class scores`` (``a_class`` against ``class_scores``, a map of the row's predicted class
  to 0.7 and the next class to 0.3; empty where the row has none): multiclass_brier_score,
  multiclass_calibration_error.

- ``report``: ``mlsql.report`` by model of the label lists (its ``multilabel_report`` and
  ``label_metrics`` tables, and the rows read and skipped), where the others are one
  ``evaluate``.

``--cases`` picks some of them.

It runs on DuckDB as ``mlsql.evaluate`` reads a Parquet file (``mlsql.connect()``,
the native kernels where built), and through ibis on DuckDB, DataFusion 51 (the
binary case: ibis has no array filter there) and PostgreSQL (Debian's server on a
Unix socket, tests/pg_server.py; the rows loaded with COPY first, not timed).
Figures are CPU seconds of the process that does the work (this one for DuckDB and
DataFusion, the server's backend for PostgreSQL, read from /proc) and wall seconds,
the best of ``--repeats``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import ibis  # noqa: E402

import mlsql  # noqa: E402
from benchmarks.spark_cpu import process_cpu  # noqa: E402

CASES = {
    "label sets": (
        "actual",
        "predicted",
        ["micro_f1", "samples_f1", "subset_accuracy", ("hamming_loss", {"n_labels": 1000})],
    ),
    "label averages": ("actual", "predicted", ["macro_f1", "weighted_f1", "label_accuracy_macro"]),
    "binary": ("a_flag", "p_flag", ["binary_f1", "binary_kappa", "binary_mcnemar_p_value"]),
    "classes": (
        "a_class",
        "p_class",
        [
            "accuracy",
            ("f1_score", {"average": "macro"}),
            "matthews_corrcoef",
            "cohen_kappa_score",
            ("cohen_kappa_std_error", {"weights": "quadratic"}),
        ],
    ),
    "scores": (
        "a_flag",
        "score",
        [
            "auc",
            "average_precision_score",
            "logloss",
            "brier_score_loss",
            "expected_calibration_error",
        ],
    ),
    "ranking": (
        "actual",
        "predicted",
        ["ndcg", "map_score", "mrr", ("precision_at", {"k": 5}), ("recall_at", {"k": 5})],
    ),
    "label scores": (
        "actual",
        "scores",
        [
            ("multilabel_average_precision", {"average": "macro"}),
            ("multilabel_roc_auc", {"average": "micro"}),
            "multilabel_brier_score",
            "label_ranking_average_precision",
            "coverage_error",
        ],
    ),
    "class scores": (
        "a_class",
        "class_scores",
        ["multiclass_brier_score", "multiclass_calibration_error"],
    ),
    # not evaluate's measures: the whole report (main() calls mlsql.report)
    "report": ("actual", "predicted", []),
}
#: the columns of label -> score maps (a jsonb object in PostgreSQL)
MAPS = ("scores", "class_scores")


def data(rows: int, root: Path) -> Path:
    """generate.py's strings.parquet of ``rows`` rows, with the two flags added."""
    subprocess.run(
        [sys.executable, str(HERE / "generate.py"), "--rows", str(rows), "--out", str(root)],
        check=True,
        capture_output=True,
    )
    table = pq.read_table(root / "strings.parquet", columns=["model", "actual", "predicted"])
    top = pa.array([f"tag{i:04d}" for i in range(10)])

    def flag(column: str) -> pa.Array:
        labels = pc.list_flatten(table[column])
        hit = pc.is_in(labels, value_set=top).cast(pa.int64())
        parents = pc.list_parent_indices(table[column])
        hits = pa.table({"row": parents, "hit": hit}).group_by("row").aggregate([("hit", "max")])
        out = [0] * table.num_rows
        for r, h in zip(hits["row"].to_pylist(), hits["hit_max"].to_pylist(), strict=True):
            out[r] = h
        return pa.array(out, pa.int64())

    def first_class(column: str) -> pa.Array:
        first = pc.list_slice(table[column], 0, 1)
        digit = pc.utf8_slice_codeunits(pc.list_flatten(first), -1)
        parents = pc.list_parent_indices(first).to_pylist()
        out: list[str | None] = [None] * table.num_rows
        for r, d in zip(parents, digit.to_pylist(), strict=True):
            out[r] = f"c{d}"
        return pa.array(out, pa.string())

    table = table.append_column("a_flag", flag("actual")).append_column("p_flag", flag("predicted"))
    table = table.append_column("a_class", first_class("actual"))
    table = table.append_column("p_class", first_class("predicted"))
    fraction = pa.array([(i * 7919 % 1000) / 2000 for i in range(table.num_rows)])
    score = pc.add(pc.multiply(table["p_flag"].cast(pa.float64()), 0.5), fraction)
    table = table.append_column("score", score)
    scored = [
        [(label, ((i * 7919 + j * 31) % 1000) / 1000) for j, label in enumerate(labels or [])]
        for i, labels in enumerate(table["predicted"].to_pylist())
    ]
    table = table.append_column("scores", pa.array(scored, pa.map_(pa.string(), pa.float64())))
    classes = [
        [] if c is None else [(c, 0.7), (f"c{(int(c[1:]) + 1) % 10}", 0.3)]
        for c in table["p_class"].to_pylist()
    ]
    table = table.append_column(
        "class_scores", pa.array(classes, pa.map_(pa.string(), pa.float64()))
    )
    path = root / "preds.parquet"
    pq.write_table(table, path, row_group_size=100_000)
    return path


def timed(run: Callable[[], Any], clock: Callable[[], float], repeats: int) -> tuple[float, float]:
    """(CPU s, wall s) of the best of ``repeats`` runs."""
    best: tuple[float, float] | None = None
    for _ in range(repeats):
        c, w = clock(), time.perf_counter()
        run()
        got = (clock() - c, time.perf_counter() - w)
        best = got if best is None or got[1] < best[1] else best
    assert best is not None
    return best


def this_process() -> float:
    t = os.times()
    return t.user + t.system


def load_postgres(server: Any, path: Path) -> None:
    """The rows into table ``preds`` with COPY (text[] lists, bigint flags, jsonb maps)."""
    import psycopg

    table = pq.read_table(path)
    with psycopg.connect(server.conninfo, autocommit=True) as con:
        con.execute(
            "CREATE TABLE preds (model text, actual text[], predicted text[], "
            "a_flag bigint, p_flag bigint, a_class text, p_class text, score float8, "
            "scores jsonb, class_scores jsonb)"
        )
        maps = [name in MAPS for name in table.column_names]
        with con.cursor().copy(
            "COPY preds (model, actual, predicted, a_flag, p_flag, a_class, p_class, score, "
            "scores, class_scores) FROM STDIN"
        ) as copy:
            for batch in table.to_batches(100_000):
                for row in zip(*(c.to_pylist() for c in batch.columns), strict=True):
                    copy.write_row(
                        [
                            json.dumps(dict(v)) if is_map and v is not None else v
                            for is_map, v in zip(maps, row, strict=True)
                        ]
                    )
        con.execute("ANALYZE preds")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    args = parser.parse_args()
    cases = args.cases
    with tempfile.TemporaryDirectory(prefix="mlsql-ibis-bench-") as tmp:
        path = data(args.rows, Path(tmp))
        print(f"{args.rows:,} rows; load average {os.getloadavg()[0]:.1f}", flush=True)
        results: list[tuple[str, str, float, float]] = []

        def run(engine: str, case: str, table: Any, clock: Callable[[], float]) -> None:
            actual, predicted, measures = CASES[case]

            def once() -> None:
                if case == "report":
                    mlsql.report(table, actual, predicted, by="model")
                    return
                out = mlsql.evaluate(table, actual, predicted, measures, by="model")
                (out.fetchall() if hasattr(out, "fetchall") else out.to_pyarrow())

            cpu, wall = timed(once, clock, args.repeats)
            results.append((engine, case, cpu, wall))
            print(f"{engine:<22} {case:<11} {cpu:8.2f} CPU s {wall:8.2f} s", flush=True)

        con = mlsql.connect()
        for case in cases:
            run("duckdb (mlsql)", case, con.read_parquet(str(path)), this_process)
        duck = ibis.duckdb.connect()
        for case in cases:
            run("duckdb (ibis)", case, duck.read_parquet(path), this_process)
        from datafusion import SessionConfig, SessionContext

        config = SessionConfig().set("datafusion.sql_parser.recursion_limit", "200")
        fusion = ibis.datafusion.connect(SessionContext(config))
        for case in cases:
            run("datafusion (ibis)", case, fusion.read_parquet(path), this_process)

        from tests import pg_server

        bin_dir = pg_server.find_bin()
        if bin_dir is None:
            print("postgres: skipped,", pg_server.NO_SERVER)
            return
        server = pg_server.start(bin_dir)
        try:
            load_postgres(server, path)
            pg = ibis.postgres.connect(host=str(server.root), user=server.user, database="postgres")
            backend = pg.raw_sql("SELECT pg_backend_pid()").fetchone()[0]

            def server_clock() -> float:
                return process_cpu(backend) or 0.0

            for case in cases:
                run("postgres (ibis)", case, pg.table("preds"), server_clock)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
