-- Hivemall's blog-tag example in plain DuckDB, no Python needed.
-- Run from the repository root:   duckdb -c ".read $(mlsql sql-path)/mlsql.sql" -c ".read examples/blog_tags.sql"
-- Prints micro F1 0.6956521739130435 and F2 0.6779661016949152 (Hivemall's published figures).

CREATE OR REPLACE TEMP TABLE blog_tags AS
SELECT * FROM (VALUES
    (['cat', 'bird'], ['cat', 'dog']),
    (['cat', 'dog'], ['cat', 'bird']),
    (['cat'], []::VARCHAR[]),
    (['bird'], ['bird']),
    (['bird', 'cat'], ['bird', 'cat']),
    (['cat', 'dog'], ['cat', 'dog', 'bird']),
    (['dog', 'bird'], ['dog'])
) AS t(actual, predicted);

SELECT
    fmeasure(actual, predicted) AS f1,
    fmeasure(actual, predicted, '-beta 2.') AS f2,
    micro_precision(actual, predicted) AS micro_precision,
    micro_recall(actual, predicted) AS micro_recall,
    samples_f1(actual, predicted) AS samples_f1,
    hamming_loss(actual, predicted, 3) AS hamming_loss,
    subset_accuracy(actual, predicted) AS subset_accuracy
FROM blog_tags;
