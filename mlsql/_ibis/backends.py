"""What each ibis backend is, as mlsql sees it: its name and what it cannot run.

mlsql writes nothing per backend: ibis compiles the plan. A measure is refused
with a message that names the backend and the reason when its family is not
lowered to ibis (:data:`mlsql._ibis.families.LOWERED`) or the backend lacks
what the family needs (:data:`NEEDS`, :data:`LACKS`).
"""

from __future__ import annotations

from typing import Any

from mlsql._errors import MlsqlError
from mlsql._ibis.families import LOWERED
from mlsql._registry import Measure

#: what a family needs of a backend, in words
NEEDS = {"multilabel": "array filters"}
#: backends that lack a need: ibis 12 compiles no array filter for DataFusion
LACKS = {"datafusion": frozenset({"array filters"})}

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
LACKS_MESSAGE = (
    "evaluate on an ibis table ({backend}) cannot take {name}: its family ({family}) needs "
    "{need}, which the {backend} backend does not have."
)


def name(table: Any) -> str:
    """The name of the backend a table expression runs on (ibis' default for a memtable)."""
    try:
        return str(table.get_backend().name)
    except Exception:  # an unbound table: ibis picks its default backend when it runs
        return "ibis' default backend"


def check(m: Measure, backend: str) -> None:
    """Raise the reason ``backend`` cannot evaluate ``m`` (nothing when it can)."""
    if m.family not in LOWERED:
        raise MlsqlError(
            NOT_LOWERED_MESSAGE.format(
                backend=backend,
                name=m.name,
                family=m.family,
                families=", ".join(sorted(LOWERED)),
            )
        )
    need = NEEDS.get(m.family)
    if need is not None and need in LACKS.get(backend, frozenset()):
        raise MlsqlError(
            LACKS_MESSAGE.format(backend=backend, name=m.name, family=m.family, need=need)
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
