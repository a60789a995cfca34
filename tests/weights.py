"""Helpers of the sample-weight tests: integer weights, the repeated-rows oracle, the calls.

With integer weights, a weighted measure equals the unweighted measure over the
rows repeated ``w`` times (a row of weight 0 or NULL dropped): that identity
turns every reference of ``tests/references.py`` into a reference of the
weighted measure (:func:`repeated`). ``tests/test_sample_weight.py`` uses it on
the list families; other families' tests import the same helpers.
"""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa

from mlsql._registry import Measure, measures
from mlsql._sqlexpr import Sql, quote_ident

#: the weight column the helpers add
WEIGHT = "w"


def integer_weights(n: int, seed: Any) -> list[int | None]:
    """``n`` weights in 0..3, about one in eight NULL; the first is at least 1, so a table with
    rows keeps one (all-zero weights are a case of their own, not the repeated rows')."""
    rng = random.Random(f"weights-{seed}")
    out: list[int | None] = [None if rng.random() < 0.125 else rng.randint(0, 3) for _ in range(n)]
    if out:
        out[0] = rng.randint(1, 3)
    return out


def with_weights(table: pa.Table, weights: list[Any]) -> pa.Table:
    """``table`` with the weight column :data:`WEIGHT` (float64 unless every weight is an int)."""
    ints = all(w is None or isinstance(w, int) for w in weights)
    return table.append_column(WEIGHT, pa.array(weights, pa.int64() if ints else pa.float64()))


def repeated(table: pa.Table, weights: list[int | None]) -> pa.Table:
    """The oracle's table: each row repeated ``w`` times (weight 0 or NULL: dropped)."""
    rows = [i for i, w in enumerate(weights) if w for _ in range(w)]
    return table.take(pa.array(rows, pa.int64()))


def weight_arg(engine: Any, column: str = WEIGHT) -> Any:
    """The ``sample_weight`` argument naming ``column`` as the engine's adapter passes it: an
    identifier in DuckDB SQL (a string would be a literal), the name in Polars and Spark."""
    return Sql(quote_ident(column)) if engine.name == "duckdb" else column


def weighted_params(engine: Any, m: Measure, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` plus the weight. A ranking measure's ``k`` and fmeasure's ``options`` are
    always given: DuckDB's weighted overloads take them before the weight (``k := NULL``
    for no k, ``options := ''`` for Hivemall's defaults)."""
    out = dict(params)
    if any(p.name == "k" for p in m.params) and m.family == "ranking":
        out.setdefault("k", None)
    if m.name == "fmeasure":
        out.setdefault("options", "")
    return {**out, "sample_weight": weight_arg(engine)}


def weighted_measures(families: tuple[str, ...]) -> list[Measure]:
    """Every registry measure of ``families`` that takes ``sample_weight``."""
    return [m for m in measures() if m.weighted and m.family in families]
