"""Measure declarations by family; importing this package fills the registry."""

from mlsql.measures import multilabel  # noqa: F401
