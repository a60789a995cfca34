"""mlsql: evaluate predictions where they live, in DuckDB SQL, Polars and Spark.

Examples
--------
>>> import mlsql
>>> con = mlsql.connect()
>>> con.execute("SELECT micro_f1(['cat', 'bird'], ['cat', 'dog'])").fetchall()[0][0]
0.5
"""

from mlsql._duckdb.register import connect, register
from mlsql._errors import MlsqlError

__version__ = "0.1.0"
__all__ = ["MlsqlError", "__version__", "connect", "register"]
from mlsql import report  # callable: mlsql.report(data, actual, predicted, ...) -> Report
from mlsql.tables import label_metrics, multilabel_report

__all__ += ["label_metrics", "multilabel_report", "report"]
