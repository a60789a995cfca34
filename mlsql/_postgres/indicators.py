"""The indicator helpers of the PostgreSQL library, per-row functions as DuckDB's macros:
``labels_from_indicators(indicators, labels)`` (a row's 0/1 or boolean indicators and
their label names to its label list) and ``indicators_from_labels(actual, labels)`` (a
label list to 0/1 per label of a universe, in its order).

As DuckDB's: a NULL indicator makes the row NULL, once every indicator is checked (an
indicator other than 0 or 1 and a count of names unlike the indicators' are errors); a
NULL name is no label; a universe's NULL label gives a NULL indicator, and a universe of the other kind than the list (text against integers) is the
``labels`` parameter's error.
"""

from __future__ import annotations

from mlsql._label_types import UNIVERSE_MESSAGE
from mlsql._postgres.ops import pg_lit
from mlsql.measures import label_based as LB

#: each list type's kind in DuckDB's words, and how a universe of it is shown (Python's repr)
KINDS = {"text[]": "text", "bigint[]": "integer"}
SHOWN = {
    "text[]": "'[' || coalesce((SELECT string_agg(quote_literal(x), ', ') FROM unnest(labels)"
    " AS x), '') || ']'",
    "bigint[]": "'[' || array_to_string(labels, ', ', 'None') || ']'",
}


def _labels_from_indicators(indicators: str, create: str) -> str:
    count_before, count_middle, count_after = LB.INDICATOR_COUNT_MESSAGE.split("{}")
    value_before, value_after = LB.INDICATOR_VALUE_MESSAGE.split("{}")
    picked = "indicators[i]" if indicators == "boolean[]" else "indicators[i] = 1"
    bad = (
        ""
        if indicators == "boolean[]"
        else f"""    ELSIF indicators[i] <> 0 AND indicators[i] <> 1 THEN
      RAISE EXCEPTION USING MESSAGE = {pg_lit(value_before)} || indicators[i]::text
        || {pg_lit(value_after)};
"""
    )
    return f"""-- labels_from_indicators(indicators, labels): the labels whose indicator is 1.
{create} FUNCTION labels_from_indicators(indicators {indicators}, labels anyarray)
RETURNS anyarray
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$
DECLARE
  out labels%TYPE := '{{}}';
  n int := coalesce(cardinality(indicators), 0);
  m int := coalesce(cardinality(labels), 0);
  unknown boolean := false;
BEGIN
  IF indicators IS NULL OR labels IS NULL THEN
    RETURN NULL;
  END IF;
  IF n <> m THEN
    RAISE EXCEPTION USING MESSAGE = {pg_lit(count_before)} || n || {pg_lit(count_middle)}
      || m || {pg_lit(count_after)};
  END IF;
  -- every indicator checked, the row NULL after where one is NULL; a NULL name is no label
  FOR i IN 1..n LOOP
    IF indicators[i] IS NULL THEN
      unknown := true;
{bad}    ELSIF {picked} AND labels[i] IS NOT NULL THEN
      out := out || labels[i];
    END IF;
  END LOOP;
  RETURN CASE WHEN unknown THEN NULL ELSE out END;
END
$f$;"""


def _indicators_from_labels(actual: str, labels: str, create: str) -> str:
    head = (
        f"-- indicators_from_labels(actual, labels): 0/1 per label of the universe.\n"
        f"{create} FUNCTION indicators_from_labels(actual {actual}, labels {labels})\n"
        "RETURNS int[]\n"
    )
    if actual == labels:
        return (
            head + "LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $f$\n"
            "  SELECT CASE WHEN actual IS NULL THEN NULL ELSE ARRAY(\n"
            "    SELECT CASE WHEN u.l IS NULL THEN NULL ELSE coalesce(u.l = ANY(actual), false)::int"
            " END\n    FROM unnest(labels) WITH ORDINALITY AS u(l, i) ORDER BY u.i) END\n$f$;"
        )
    before, after = UNIVERSE_MESSAGE.format(
        func="indicators_from_labels", type=actual, kind=KINDS[actual], labels="\x00"
    ).split("\x00")
    return (
        head + "LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $f$\nBEGIN\n"
        f"  RAISE EXCEPTION USING MESSAGE = {pg_lit(before)} || {SHOWN[labels]}"
        f" || {pg_lit(after)};\nEND\n$f$;"
    )


#: the registry's names of the helpers here
NAMES = ("labels_from_indicators", "indicators_from_labels")


def functions(create: str) -> list[str]:
    """Both helpers over every list type (and their mixes, which fail)."""
    out = [_labels_from_indicators(t, create) for t in ("float8[]", "boolean[]")]
    out += [_indicators_from_labels(a, b, create) for a in KINDS for b in KINDS]
    return out
