"""A rule's measures in DuckDB: novelty and satisfaction over (holds, fires) or stored counts.

The other rule measures (prel, nrel, sup, sens, spec, tacc, cov) are the
binary ones with actual = holds (R) and predicted = fires (L); see
:mod:`mlsql.measures.rules`.
"""

from __future__ import annotations

from mlsql._duckdb.families.binary import family_macros
from mlsql._duckdb.library import Macro, Qualify
from mlsql._duckdb.ops import SqlOps
from mlsql.measures import rules as R

FILE = "rules.sql"
DESCRIPTION = "A rule's contingency measures: novelty and satisfaction (beside the binary ones)."
ORDER = 22
FAMILIES: tuple[str, ...] = ()  # rendered here


def macros(qualify: Qualify, ops: SqlOps) -> list[Macro]:
    """rule_novelty, rule_satisfaction, their aliases and *_from_counts forms."""
    return family_macros(R.FAMILY, FILE, qualify, ops)
