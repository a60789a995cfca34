"""PostgreSQL: the plain-SQL library ``mlsql sql-path --dialect postgres`` points to."""
