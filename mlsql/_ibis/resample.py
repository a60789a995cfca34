"""``mlsql.bootstrap`` and ``mlsql.compare`` over an ibis table: the statistics table in its
own database.

The bootstrap is engine-neutral (:mod:`mlsql._resample.run`): each engine computes, in
one ``GROUP BY``, the distinct statistics tuples of every group with their numbers of
rows, and the resamples are drawn from them. Here ibis computes that table in the
table's database (the per-row statistics of :mod:`mlsql._ibis.stats`: a label-set row's
(tp, |A|, |P|), a single-label row's (actual, predicted), numbers as doubles; for the
macro and weighted label averages each row's two lists as it holds them, made sets by the
draws' code), only the tuples come back, and the draws are those of every engine: the
same seed gives the DuckDB engine's intervals. The weight's check runs first, in a query
of its own. ``compare`` is the same over the distinct pairs of a baseline row's and a
model row's statistics of one id (:func:`compare`).

The tuples of the regression and score measures, and of the label averages, are about one
per row (their values rarely repeat), so what comes back grows with the rows there, as on
DuckDB. The class-score measures' tuple is a row's numbers
(:data:`mlsql._resample.numbers.CLASS_SCORE_STATS`), computed by the class scores' per-row
pass (:func:`mlsql._ibis.class_scores.per_row`) after the probabilities' checks; an unknown
row's numbers are NULL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ibis
import ibis.expr.datatypes as dt
import ibis.expr.types as ir
import pyarrow as pa

from mlsql import _label_types as LT
from mlsql._errors import MlsqlError
from mlsql._ibis import backend_name, stats
from mlsql._ibis.evaluate import checked_weight
from mlsql._ibis.ops import FLOAT, Checks, raise_failed_rows, same, where
from mlsql._resample import front, run

#: the statistics computed as a table of their own (:func:`_class_score_rows`)
RAN = ("class_scores",)
#: the statistics tables not computed over ibis yet
NOT_YET_MESSAGE = (
    "{func} on an ibis table ({backend}) does not take {measure} yet: its statistics "
    "({stats}) are not computed through ibis so far (the label-set, label-average, "
    "single-label, regression, score and class-score measures are). Run {func} on DuckDB, "
    "Polars or Spark."
)


def _number_kind(dtype: dt.DataType) -> str:
    """The engines' kind of a scalar type, as :func:`front.check_numbers` reads it."""
    if dtype.is_floating():
        return "float"
    if dtype.is_decimal():
        return "decimal"
    if dtype.is_boolean():
        return "boolean"
    return stats.kind(dtype)


def _check_types(req: front.Request, table: ir.Table, actual: str, predicted: str) -> None:
    """The inputs' types fit the measures, in the words of every engine."""
    types = [table[actual].type(), table[predicted].type()]
    names = ["actual", "predicted"]
    shown = [str(t) for t in types]
    lists = [t.is_array() for t in types]
    if front.is_numbers(req):
        front.check_numbers(req, names, lists, [_number_kind(t) for t in types], shown)
        return
    kinds = [
        stats.kind(t.value_type)
        if t.is_array()
        else stats.scalar_kind(t)
        if not t.is_null()
        # an all-NULL column is a list or a label, as the measures want it
        else "null"
        for t in types
    ]
    front.check_labels(req, names, lists, kinds, shown)


def _statistics(req: front.Request, a: ir.Column, p: ir.Column) -> list[ir.Value]:
    """Each row's statistics, as :data:`mlsql._resample.measures.STATS` names them."""
    if req.stats == "label_sets":
        s = stats.row_stats(a, p, backend_name(a))
        return [s.tp, s.n_actual, s.n_predicted]
    if req.stats == "classes":
        return [a, p]
    if req.stats == "label_lists":  # the lists as rows hold them (the draws make them sets)
        return [a, p if p.type() == a.type() or p.type().is_null() else p.cast(a.type())]
    known = a.notnull() & p.notnull()  # both sides NULL where one is; -0.0 as 0.0
    return [where(known, x.cast(FLOAT) + 0.0) for x in (a, p)]


def _rows(
    req: front.Request, table: ir.Table, actual: str, predicted: str, sample_weight: str | None
) -> dict[str, ir.Value]:
    """Each row's group columns, statistics and weight (``__mlsql_g<k>``, ``__mlsql_t<k>``,
    ``__mlsql_w``), once the measures are ones computed here, the inputs' types fit them and
    the weight's check has passed (a query of its own)."""
    if req.stats not in ("label_sets", "label_lists", "classes", "regression", "scores", *RAN):
        raise MlsqlError(
            NOT_YET_MESSAGE.format(
                func=req.func,
                backend=backend_name(table[actual]),
                measure=req.chosen[0].label,
                stats=req.stats.replace("_", " "),
            )
        )
    _check_types(req, table, actual, predicted)
    checks = Checks()
    # a cast ibis keeps (PostgreSQL reads a bare 1.0 as a NUMERIC, which comes back a Decimal)
    weight: ir.Value = ibis.literal(1, type="int64").cast(FLOAT)
    if sample_weight is not None:
        weight = checked_weight(req.func, table[sample_weight], checks)
    if checks.items:
        raise_failed_rows(checks, table.select(**checks.projected))
    if req.stats in RAN:  # a table of its own: :func:`_class_score_rows`
        return {
            **{f"__mlsql_g{k}": table[b] for k, b in enumerate(req.by)},
            "__mlsql_w": weight,
        }
    values = _statistics(req, table[actual], table[predicted])
    return {
        **{f"__mlsql_g{k}": table[b] for k, b in enumerate(req.by)},
        **{f"__mlsql_t{k}": v for k, v in enumerate(values)},
        "__mlsql_w": weight,
    }


def _class_score_rows(
    req: front.Request,
    table: ir.Table,
    actual: str,
    predicted: str,
    given: dict[str, ir.Value],
) -> ir.Table:
    """Each row's ``given`` columns (groups, weight, and compare's model and id) and its
    class-score numbers ``__mlsql_t0`` .. (NULL where a side is), once the label and the
    scores' types and the probabilities pass every engine's checks."""
    from mlsql._ibis import class_scores as CSI
    from mlsql._ibis import label_scores as LSI
    from mlsql._resample.numbers import CLASS_SCORE_STATS

    a, scores = table[actual], table[predicted]
    kinds = [stats.kind(a.type()), stats.kind(LSI.score_labels(req.func, scores))]
    LT.check_labels(req.func, ("actual", "predicted"), kinds, [str(a.type()), str(scores.type())])
    known = a.notnull() & scores.notnull()
    rows = table.select(**given, **{CSI.KNOWN: known, CSI.ACTUAL: a, CSI.SCORES: scores})
    keys = list(given)
    per_row = CSI.per_row(rows, keys, False)
    failed = per_row.aggregate(
        code=per_row[CSI.CODE].min(), bad=per_row[CSI.NOT_A_NUMBER].max()
    ).to_pyarrow()
    code, bad = failed["code"][0].as_py(), failed["bad"][0].as_py()
    if bad is not None:
        raise MlsqlError(LSI.JSON_MESSAGE.format(func=req.func))
    if code is not None:
        raise MlsqlError(LSI.check_message(req.func, code, "predicted"))
    numbers = [
        per_row[CSI.LOSS] + per_row[CSI.MISSED],
        per_row[CSI.WIDTH],
        per_row[CSI.CONFIDENCE],
        per_row[CSI.CORRECT],
        per_row[CSI.LOW],
        per_row[CSI.HIGH],
    ]
    assert len(numbers) == len(CLASS_SCORE_STATS)
    named = {f"__mlsql_t{k}": x.cast(FLOAT) for k, x in enumerate(numbers)}
    out = per_row.select(*keys, **named)
    unknown = rows.filter(~rows[CSI.KNOWN]).select(
        *keys, **{name: ibis.null(FLOAT) for name in named}
    )
    return out.union(unknown).select(
        *[k for k in keys if k.startswith("__mlsql_g")],
        *named,
        *[k for k in keys if not k.startswith("__mlsql_g")],
    )


def _statistics_table(req: front.Request, query: ir.Table) -> Any:
    """The statistics table: label lists as Arrow (no Python object per label), the other
    kinds as rows."""
    fetched = query.to_pyarrow()
    if req.stats == "label_lists":
        return fetched
    return [tuple(r.values()) for r in fetched.to_pylist()]


def _result(
    req: front.Request, names: Sequence[str], out: list[tuple[Any, ...]], groups: ir.Table
) -> ir.Table:
    """The result rows as an ibis memtable: the group columns of their type in ``groups``
    (``__mlsql_g<k>``), then ``names``' columns (the model as it came, text, numbers)."""
    arrays = {}
    for i, name in enumerate([*req.by, *names]):
        values = [r[i] for r in out]
        if i < len(req.by):
            arrays[name] = pa.array(values, type=groups.schema()[f"__mlsql_g{i}"].to_pyarrow())
        elif name == "model":
            arrays[name] = pa.array(values)
        elif name == "measure":
            arrays[name] = pa.array(values, type=pa.string())
        else:
            arrays[name] = pa.array(values, type=pa.float64())
    return ibis.memtable(pa.table(arrays))


def bootstrap(
    table: ir.Table,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    by: str | Sequence[str] | None,
    n_resamples: int,
    confidence: float,
    seed: int,
    sample_weight: str | None,
) -> ir.Table:
    """``mlsql.bootstrap`` over the ibis table ``table``: the module's docstring. The result
    is an ibis memtable of the rows every engine gives."""
    named = front.with_weight({"actual": actual, "predicted": predicted}, sample_weight)
    req = front.request(
        "bootstrap", table.columns, named, by, measures, n_resamples, confidence, seed
    )
    columns = _rows(req, table, actual, predicted, sample_weight)
    source = table.select(**columns)
    if req.stats in RAN:
        source = _class_score_rows(req, table, actual, predicted, columns)
    rows = source.group_by(source.columns).aggregate(__mlsql_m=ibis._.count())
    out = run.bootstrap(
        _statistics_table(req, rows),
        len(req.by),
        req.chosen,
        req.n_resamples,
        req.confidence,
        req.seed,
    )
    return _result(req, front.BOOTSTRAP_COLUMNS, out, rows)


def _of_baseline(column: str) -> str:
    """The name of ``column`` (``__mlsql_<name>``) on the baseline's side of the self-join.

    Examples
    --------
    >>> _of_baseline("__mlsql_t0")
    '__mlsql_bt0'
    """
    return "__mlsql_b" + column.removeprefix("__mlsql_")


def compare(
    table: ir.Table,
    actual: str,
    predicted: str,
    measures: Sequence[Any],
    *,
    model: str,
    id: str,
    baseline: Any,
    by: str | Sequence[str] | None,
    n_resamples: int,
    confidence: float,
    seed: int,
    sample_weight: str | None,
    drop_unpaired: bool,
    test: str,
) -> ir.Table:
    """``mlsql.compare`` over the ibis table ``table``: each (model, id) row's statistics,
    the models' row counts and the repeated (group, model, id) keys are computed in the
    database, and the distinct pairs of a baseline row's and a model row's statistics of
    one id (a self-join on the id and the groups, NULL-safe); the pairs come back and the
    draws, tests and checks are every engine's (:func:`mlsql._resample.front.compared`), so
    the same seed gives the DuckDB engine's rows. The result is an ibis memtable."""
    named = front.with_weight(
        {"actual": actual, "predicted": predicted, "model": model, "id": id}, sample_weight
    )
    req = front.request(
        "compare", table.columns, named, by, measures, n_resamples, confidence, seed, test
    )
    columns = _rows(req, table, actual, predicted, sample_weight)
    pair = {"__mlsql_model": table[model], "__mlsql_id": table[id]}
    rows = table.select(**columns, **pair)
    if req.stats in RAN:
        rows = _class_score_rows(req, table, actual, predicted, {**columns, **pair})
    stats = [c for c in rows.columns if c.startswith(("__mlsql_t", "__mlsql_w"))]
    groups = [c for c in rows.columns if c.startswith("__mlsql_g")]
    totals = {
        r["__mlsql_model"]: int(r["n"])
        for r in rows.group_by("__mlsql_model").aggregate(n=ibis._.count()).to_pyarrow().to_pylist()
    }
    keys = [*groups, "__mlsql_model", "__mlsql_id"]
    repeated = int(rows.count().execute()) - int(rows.select(*keys).distinct().count().execute())
    paired: Any = []
    if baseline in totals:
        b = (
            rows.filter(rows["__mlsql_model"] == baseline)
            .drop("__mlsql_model")
            .rename(
                {f"__mlsql_b{c[len('__mlsql_') :]}": c for c in [*groups, "__mlsql_id", *stats]}
            )
        )
        m = rows.filter(rows["__mlsql_model"] != baseline)
        on = [m["__mlsql_id"] == b[_of_baseline("__mlsql_id")]]
        on += [same(m[g], b[_of_baseline(g)]) for g in groups]
        joined = m.join(b, on)
        grouped = [
            *(joined[g] for g in groups),
            joined["__mlsql_model"],
            *(joined[_of_baseline(c)] for c in stats),
            *(joined[c] for c in stats),
        ]
        paired = _statistics_table(
            req, joined.group_by(grouped).aggregate(__mlsql_m=ibis._.count())
        )
    out = front.compared(req, model, id, baseline, totals, paired, repeated, drop_unpaired)
    return _result(req, front.COMPARE_COLUMNS, out, rows)
