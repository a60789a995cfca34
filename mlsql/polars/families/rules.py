"""A rule's measures in Polars: novelty and satisfaction over (holds, fires) or stored counts.

The other rule measures are the binary ones with actual = holds (R) and
predicted = fires (L); see :mod:`mlsql.measures.rules`.

Examples
--------
>>> import polars as pl
>>> import mlsql.polars as mp
>>> df = pl.DataFrame(
...     {"holds": [True, False, True, False, False], "fires": [True, True, False, False, False]}
... )
>>> round(df.select(mp.nov("holds", "fires")).item(), 12)
0.04
"""

from __future__ import annotations

import sys

from mlsql._front.build import lookup
from mlsql._registry import measures
from mlsql.measures import rules as R
from mlsql.polars.families._classification import params  # noqa: F401  (plug-in hook)
from mlsql.polars.families.binary import function_of

FAMILIES = (R.FAMILY,)


__all__: list[str] = []
for _m in measures(family=R.FAMILY):
    if _m.build is not None and _m.available_in("polars"):
        globals()[_m.name] = function_of(lookup(_m), sys.modules[__name__])
        __all__.append(_m.name)
