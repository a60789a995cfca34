"""The DuckDB engine: SQL macros generated from the registry's formulas."""
