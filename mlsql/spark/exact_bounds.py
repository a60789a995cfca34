"""The bounds of Spark SQL's exact sums, shared by :func:`mlsql.spark.ops.decimal_sum`,
:mod:`mlsql.spark.exact`'s BIGINT parts and the weights of mlsql's Java label counts
(:mod:`mlsql.spark.jvm`).

Examples
--------
>>> 1e14 * EXACT_SUM_BOUND <= 10.0 ** (38 - 18)  # 1e14 values below it fit 20 whole digits
True
"""

#: the type :func:`mlsql.spark.ops.decimal_sum` sums its values in: exact, order-free, to 18
#: decimals
EXACT_SUM_TYPE = "decimal(38,18)"
#: values of this size or more are summed as DOUBLE (1e14 of them fit the decimal's 1e20)
EXACT_SUM_BOUND = 1e6
