"""Bootstrap intervals and paired comparisons, engine-neutral.

Each engine computes a small statistics table (one GROUP BY over the data);
:mod:`mlsql._resample.run` resamples its tuples with Poisson weights and
evaluates the registry formulas with :class:`mlsql._resample.ops.WeightedOps`;
:mod:`mlsql._resample.measures` says which measures can be resampled so.
"""
