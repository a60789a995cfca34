"""``python -m mlsql.cli``: the same as the ``mlsql`` console script."""

from mlsql.cli import main

if __name__ == "__main__":
    main()
