"""What each ibis backend is, as mlsql sees it: its name and what it cannot run.

ibis compiles the plan for each backend. What mlsql knows per backend: which need a
fence (:data:`FENCED`), which lack array filters (their label sets take another form,
:data:`mlsql._ibis.stats.WITHOUT_ARRAY_FILTER`), and what a backend's error means
(:func:`failure`). A measure is refused with a message that names the backend and the
reason when its family is not lowered to ibis (:data:`mlsql._ibis.families.LOWERED`).
"""

from __future__ import annotations

from mlsql._errors import MlsqlError
from mlsql._evaluate import front as EV
from mlsql._ibis.families import LOWERED
from mlsql._registry import Measure, measures

#: backends whose planner would inline the per-row statistics into every aggregate that reads
#: them (PostgreSQL pulls a plain subquery up into its parent, so each array subquery ran once
#: per mention): a window function in the projection keeps it a step of its own
FENCED = frozenset({"postgres"})

NOT_LOWERED_MESSAGE = (
    "evaluate on an ibis table ({backend}) does not take {name} yet: {name} is of the "
    "{family} family, and mlsql lowers these families to ibis so far: {families}. "
    "Evaluate it on DuckDB, Polars or Spark (mlsql.evaluate over a DuckDB relation, "
    "mlsql.polars.evaluate, mlsql.spark.evaluate)."
)


NOT_YET_MESSAGE = (
    "evaluate on an ibis table ({backend}) does not take {name} yet: of the {family} family, "
    "mlsql lowers to ibis so far {lowered}, not {name} ({why}). Evaluate it on DuckDB, Polars "
    "or Spark (mlsql.evaluate over a DuckDB relation, mlsql.polars.evaluate, "
    "mlsql.spark.evaluate)."
)


def check(m: Measure, backend: str) -> None:
    """Raise the reason ``backend`` cannot evaluate ``m`` (nothing when it can)."""
    lowering = LOWERED.get(m.family)
    if lowering is not None and m.name in lowering.not_yet:
        taken = [
            x.name
            for x in measures(family=m.family)
            if x.name in EV.allowed() and x.name not in lowering.not_yet
        ]
        raise MlsqlError(
            NOT_YET_MESSAGE.format(
                backend=backend,
                name=m.name,
                family=m.family,
                lowered=", ".join(taken),
                why=lowering.not_yet[m.name],
            )
        )
    if lowering is None:
        raise MlsqlError(
            NOT_LOWERED_MESSAGE.format(
                backend=backend,
                name=m.name,
                family=m.family,
                families=", ".join(sorted(LOWERED)),
            )
        )


DEPTH_MESSAGE = (
    "evaluate on an ibis table (datafusion): DataFusion's SQL parser stopped at its recursion "
    "limit (datafusion.sql_parser.recursion_limit, 50 by default). The normal tail of the "
    "p-values (binary_mcnemar_p_value, binary_kappa_p_value, ...) nests deeper: connect with "
    "ibis.datafusion.connect(SessionContext(SessionConfig().set("
    "'datafusion.sql_parser.recursion_limit', '200'))), or leave them out."
)


def failure(backend: str, error: Exception) -> MlsqlError | None:
    """What a backend's error means for the user, where mlsql knows (None elsewhere)."""
    if backend == "datafusion" and "RecursionLimitExceeded" in str(error):
        return MlsqlError(DEPTH_MESSAGE)
    return None
