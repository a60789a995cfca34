"""Slice discovery: where is the model worst? (issue 33)

:mod:`mlsql._slices.front` checks a call and names the slices (readable
``slice`` text, quantile bins of numeric candidates); each engine computes,
in one scan, the statistic tuples of every slice and of all the data;
:mod:`mlsql._slices.stats` turns them into estimates, bootstrap intervals,
differences from the rest of the data, adjusted p-values and the order from
the worst, the same for every engine.
"""
