"""mlsql's JVM functions for Spark (native/spark/*.java, mlsql/spark/jvm.py).

Where the jar is built (CI: the editable install's build hook, checked by
``mlsql.native_status()`` in ``.ci/run``), label-set Columns call it; each row's
|A ∩ P|, |A| and |P| must equal the plain-Python oracle (tests/oracle.py) on random
lists with NULL lists, NULL labels, repeats, lists long enough for its hash sets, integer
lists of two widths against each other, and a row too large for its packing. The
session setting and ``MLSQL_NATIVE=0`` switch it off, and it registers no name a user
could have taken.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import pytest

pytest.importorskip("pyspark")

from mlsql._native_switch import SPARK_JAR
from tests import oracle
from tests.engines import spark_engine

pytestmark = pytest.mark.skipif(
    not SPARK_JAR.is_file(), reason="mlsql's Spark jar was not built (no JDK at install time)"
)


@pytest.fixture(scope="module")
def spark() -> Any:
    return spark_engine.session()


@contextmanager
def jvm_setting(spark: Any, value: str) -> Iterator[None]:
    """The session's ``spark.mlsql.jvm`` set to ``value`` for the block."""
    spark.conf.set("spark.mlsql.jvm", value)
    try:
        yield
    finally:
        spark.conf.unset("spark.mlsql.jvm")


def _plan(df: Any) -> str:
    return str(df._jdf.queryExecution().analyzed())


def _labels(rng: random.Random, pool: list[Any]) -> list[Any] | None:
    kind = rng.random()
    if kind < 0.08:
        return None
    if kind < 0.15:
        return []
    size = rng.choice([1, 2, 3, 5, 40, 70]) if kind > 0.3 else rng.randint(1, 4)
    return [None if rng.random() < 0.1 else rng.choice(pool) for _ in range(size)]


def _rows(seed: int, pool: list[Any], n: int = 300) -> list[tuple[Any, Any]]:
    rng = random.Random(seed)
    return [(_labels(rng, pool), _labels(rng, pool)) for _ in range(n)]


def _stats(df: Any) -> list[tuple[Any, ...]]:
    from mlsql.spark.stats import row_stats

    s = row_stats(df.actual, df.predicted)
    out = df.select(df.i, s.tp.alias("tp"), s.n_actual.alias("a"), s.n_predicted.alias("p"))
    return sorted(tuple(r) for r in out.collect())


def _expected(rows: list[tuple[Any, Any]]) -> list[tuple[Any, ...]]:
    out = []
    for i, (a, p) in enumerate(rows):
        sa, sp = oracle.as_set(a), oracle.as_set(p)
        if sa is None or sp is None:
            out.append((i, None, None, None))
        else:
            out.append((i, len(sa & sp), len(sa), len(sp)))
    return out


CASES = {
    "strings": (["cat", "dog", "émeu", "x" * 30, "", "Cat"], "string", "string"),
    "ints_against_bigints": (list(range(-3, 60)), "int", "bigint"),
    "tinyints": (list(range(-5, 5)), "tinyint", "tinyint"),
    "smallints_against_ints": (list(range(-40, 40)), "smallint", "int"),
}


#: Spark's settings that make it interpret expressions instead of generating code (the
#: test session's own, tests/engines/spark_engine.py)
INTERPRETED = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
#: Spark's settings that make it generate code for every expression, as a user's session
#: does, inside whole-stage code, with no interpreted fallback
GENERATED = {
    "spark.sql.codegen.wholeStage": "true",
    "spark.sql.codegen.factoryMode": "CODEGEN_ONLY",
}


@contextmanager
def configured(spark: Any, settings: dict[str, str]) -> Iterator[None]:
    """The session's ``settings`` for the block; what the session had (or had not) set is
    restored after it."""
    saved = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, was in saved.items():
            if was is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, was)


@contextmanager
def executed(spark: Any, generated: bool) -> Iterator[None]:
    """The block's queries run as generated code (``generated``) or interpreted; the
    session's settings are restored after it."""
    with configured(spark, GENERATED if generated else INTERPRETED):
        yield


@pytest.mark.parametrize("generated", [True, False], ids=["generated", "interpreted"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_row_counts_equal_the_oracle(spark, case, generated):
    """The expression's generated code (inside Spark's whole-stage code) and its interpreted
    form count as the oracle: lists short enough to compare pairwise and longer ones."""
    pool, actual_type, predicted_type = CASES[case]
    rows = _rows(len(case), pool)
    schema = f"i int, actual array<{actual_type}>, predicted array<{predicted_type}>"
    df = spark.createDataFrame([(i, a, p) for i, (a, p) in enumerate(rows)], schema)
    from mlsql.spark.stats import row_stats

    assert "mlsql_set_counts" in _plan(df.select(row_stats(df.actual, df.predicted).tp))
    with executed(spark, generated):
        got = _stats(df)
    assert got == _expected(rows)


def test_micro_f1_and_hamming_equal_the_oracle_and_spark_sql(spark):
    import mlsql.spark as ms

    rows = _rows(7, ["a", "b", "c", "d", "e"])
    df = spark.createDataFrame(
        [(i, a, p) for i, (a, p) in enumerate(rows)],
        "i int, actual array<string>, predicted array<string>",
    )
    known = oracle.known(rows)
    tp = sum(len(a & p) for a, p in known)
    fp = sum(len(p - a) for a, p in known)
    fn = sum(len(a - p) for a, p in known)
    f1 = Fraction(2 * tp, 2 * tp + fp + fn)
    hamming = Fraction(fp + fn, 5 * len(known))
    columns = [
        ms.micro_f1("actual", "predicted"),
        ms.hamming_loss("actual", "predicted", n_labels=5),
    ]
    with jvm_setting(spark, "true"):
        on = df.agg(*columns)
        assert "mlsql_set_counts" in _plan(on)
        got_on = tuple(on.first())
    with jvm_setting(spark, "false"):
        columns = [
            ms.micro_f1("actual", "predicted"),
            ms.hamming_loss("actual", "predicted", n_labels=5),
        ]
        off = df.agg(*columns)
        assert "mlsql_set_counts" not in _plan(off)
        got_off = tuple(off.first())
    assert got_on == got_off
    assert got_on == pytest.approx((float(f1), float(hamming)), abs=1e-15)


def test_a_row_too_large_for_the_packing_is_counted_by_spark_sql(spark):
    from pyspark.sql import functions as F

    from mlsql.spark.stats import row_stats

    n = (1 << 21) + 5
    df = spark.range(1).select(
        F.sequence(F.lit(1), F.lit(n)).alias("actual"), F.array(F.lit(7), F.lit(n + 1)).alias("p")
    )
    s = row_stats(df.actual, df.p)
    assert "mlsql_set_counts" in _plan(df.select(s.tp))
    assert tuple(df.select(s.tp, s.n_actual, s.n_predicted).first()) == (1, n, 2)


def test_native_off_and_the_session_setting_leave_spark_sql(spark, monkeypatch):
    import mlsql.spark as ms

    df = spark.createDataFrame(
        [(["a"], ["a", "b"])], "actual array<string>, predicted array<string>"
    )
    assert "mlsql_set_counts" in _plan(df.agg(ms.micro_f1("actual", "predicted")))
    with jvm_setting(spark, "False"):
        assert "mlsql_set_counts" not in _plan(df.agg(ms.micro_f1("actual", "predicted")))
    monkeypatch.setenv("MLSQL_NATIVE", "0")
    plan = _plan(df.agg(ms.micro_f1("actual", "predicted")))
    assert "mlsql_set_counts" not in plan
    assert "array_intersect" in plan


def test_no_name_is_registered_and_a_users_function_of_that_name_stays(spark):
    import mlsql.spark as ms

    df = spark.createDataFrame(
        [(["a"], ["a", "b"])], "actual array<string>, predicted array<string>"
    )
    assert df.agg(ms.micro_f1("actual", "predicted")).first()[0] == pytest.approx(2 / 3)
    assert not spark.catalog.functionExists("mlsql_set_counts")
    spark.udf.register("mlsql_set_counts", lambda a, b: 42, "int")
    try:
        scored = df.agg(ms.micro_f1("actual", "predicted"))
        assert "mlsql_set_counts" in _plan(scored)
        assert scored.first()[0] == pytest.approx(2 / 3)
        assert spark.sql("SELECT mlsql_set_counts(1, 2)").first()[0] == 42
    finally:
        spark.sql("DROP TEMPORARY FUNCTION IF EXISTS mlsql_set_counts")


#: lists whose labels Spark compares by other rules than bytes or values, text that does not
#: decode, and other label types, as Spark SQL text: (actual, predicted, (tp, n_actual,
#: n_predicted)) written out from Spark's rules
SPARK_RULES = {
    # UTF8_LCASE: 'A' and 'a' are one label
    "collation": (
        "array('A' COLLATE UTF8_LCASE, 'a' COLLATE UTF8_LCASE, 'b' COLLATE UTF8_LCASE)",
        "array('a' COLLATE UTF8_LCASE)",
        (1, 2, 1),
    ),
    # two invalid UTF-8 bytes: Spark compares them (different), as the expression does; a
    # Java String would decode both to U+FFFD
    "invalid_utf8": ("array(CAST(X'FF' AS STRING))", "array(CAST(X'FE' AS STRING))", (0, 1, 1)),
    "varchar": ("array(CAST('ab' AS VARCHAR(3)), 'c')", "array('ab', 'd')", (1, 2, 2)),
    "void": ("array(NULL)", "array(NULL, NULL)", (0, 0, 0)),
}


@pytest.mark.parametrize("case", sorted(SPARK_RULES))
def test_lists_java_would_compare_otherwise_count_as_in_spark_sql(spark, case):
    from mlsql.spark.stats import row_stats

    actual, predicted, expected = SPARK_RULES[case]
    df = spark.sql(f"SELECT {actual} AS actual, {predicted} AS predicted")
    s = row_stats(df.actual, df.predicted)
    assert tuple(df.select(s.tp, s.n_actual, s.n_predicted).first()) == expected


def test_status_says_the_jar_is_used_unless_switched_off(monkeypatch):
    from mlsql._native_switch import spark_native_status

    assert spark_native_status() == {
        "enabled": True,
        "available": True,
        "path": str(SPARK_JAR),
        "reason": None,
    }
    monkeypatch.setenv("MLSQL_NATIVE", "0")
    status = spark_native_status()
    assert status["available"] and not status["enabled"]
    assert status["reason"] == "MLSQL_NATIVE=0"


# ------------------------------------------------------------------ the per-label aggregate
def _grouped(seed: int, pool: list[Any], types: tuple[str, str]) -> tuple[list[tuple], str]:
    """Random rows in three groups (one of them NULL), as (g, actual, predicted)."""
    rng = random.Random(seed)
    rows = [(rng.choice(["u", "v", None]), *pair) for pair in _rows(seed, pool)]
    return rows, f"g string, actual array<{types[0]}>, predicted array<{types[1]}>"


def _label_table(rows: list[tuple]) -> list[tuple[Any, ...]]:
    """(group, label, tp, fp, fn) of every label a known row of a group holds (the oracle)."""
    out: dict[tuple[Any, Any], list[int]] = {}
    for g, a, p in rows:
        sa, sp = oracle.as_set(a), oracle.as_set(p)
        if sa is None or sp is None:
            continue
        for label in sa | sp:
            c = out.setdefault((g, label), [0, 0, 0])
            c[0] += label in sa and label in sp
            c[1] += label in sp and label not in sa
            c[2] += label in sa and label not in sp
    return sorted(((g, label, *c) for (g, label), c in out.items()), key=repr)


def _counted(spark: Any, df: Any, generated: bool) -> tuple[list[Any], list[Any]]:
    """Both Java paths' counts of ``df`` (columns g, actual, predicted), run as generated
    code or interpreted: each row's (tp, |A|, |P|) from the expression and each (group,
    label, tp, fp, fn) from the aggregate, sorted."""
    import mlsql.spark as ms
    from mlsql.spark.stats import row_stats

    with executed(spark, generated):
        s = row_stats(df.actual, df.predicted)
        stats = df.select(s.tp, s.n_actual, s.n_predicted)
        assert "mlsql_set_counts" in _plan(stats)
        table = ms.label_metrics(df, "actual", "predicted", by="g")
        assert "mlsql_label_counts" in _plan(table)
        assert "mlsql_label_codes" in _plan(table)  # text: counted by code
        got_stats = sorted(map(tuple, stats.collect()), key=repr)
        got_table = sorted(
            (tuple(r) for r in table.select("g", "label", "tp", "fp", "fn").collect()), key=repr
        )
    return got_stats, got_table


def _expected_counts(rows: list[tuple]) -> tuple[list[Any], list[Any]]:
    """The oracle's :func:`_counted` of ``rows`` (g, actual, predicted)."""
    stats = [e[1:] for e in _expected([(a, p) for _, a, p in rows])]
    return sorted(stats, key=repr), _label_table(rows)


@pytest.mark.parametrize("case", sorted(CASES))
def test_label_tables_count_with_the_java_aggregate_as_the_oracle(spark, case):
    import mlsql.spark as ms

    pool, actual_type, predicted_type = CASES[case]
    rows, schema = _grouped(len(case) + 1, pool, (actual_type, predicted_type))
    df = spark.createDataFrame(rows, schema)
    table = ms.label_metrics(df, "actual", "predicted", by="g")
    plan = _plan(table)
    assert "mlsql_label_counts" in plan
    assert "collect_list" not in plan and "collect_set" not in plan
    got = sorted(
        (tuple(r) for r in table.select("g", "label", "tp", "fp", "fn").collect()), key=repr
    )
    assert got == _label_table(rows)

    report = {r.g: r for r in ms.multilabel_report(df, "actual", "predicted", by="g").collect()}
    assert "mlsql_label_counts" in _plan(ms.multilabel_report(df, "actual", "predicted"))
    for g in ("u", "v", None):
        part = [(a, p) for h, a, p in rows if h == g]
        assert report[g].n_rows == len(oracle.known(part))
        assert report[g].samples_f1 == pytest.approx(float(oracle.samples(part, "f1")), abs=1e-12)
        assert report[g].micro_f1 == pytest.approx(float(oracle.micro(part, "f1")), abs=1e-12)
        assert report[g].subset_accuracy == pytest.approx(float(oracle.subset_accuracy(part)))


def test_label_tables_equal_spark_sql_on_any_partitioning(spark):
    """Every column of the tables, with a labels universe and without, equals Spark SQL's form
    (``spark.mlsql.jvm=false``) to the last bit, however the rows are partitioned (one
    partition, and seven whose partial counts merge)."""
    import mlsql.spark as ms

    rows, schema = _grouped(11, ["a", "b", "c", "d", "e", "f"], ("string", "string"))
    df = spark.createDataFrame(rows, schema)

    def tables(frame: Any) -> list[list[tuple[Any, ...]]]:
        calls = [
            ms.multilabel_report(frame, "actual", "predicted", by="g", zero_division="nan"),
            ms.label_metrics(frame, "actual", "predicted", labels=["a", "b", "zebra"], beta=2.0),
            ms.multilabel_report(frame, "actual", "predicted", labels=["f", "a", "q"]),
        ]
        return [[tuple(r) for r in t.collect()] for t in calls]

    with jvm_setting(spark, "false"):
        assert "mlsql_label_counts" not in _plan(ms.label_metrics(df, "actual", "predicted"))
        expected = tables(df)
    for n in (1, 7):  # one partition, and partial counts merged across seven
        got = tables(df.repartition(n))
        assert repr(got) == repr(expected), n  # repr: NaN equals NaN


def test_text_labels_are_compared_by_their_bytes_and_come_back_whole(spark):
    """Two invalid UTF-8 labels are two labels (Java would decode both to U+FFFD), each given
    back with its own bytes (weighted too); strings under a collation stay with Spark SQL
    (collation: 'A' and 'a' are one label)."""
    import mlsql.spark as ms

    df = spark.sql(
        "SELECT array(CAST(X'FF' AS STRING), 'é') AS actual, "
        "array(CAST(X'FE' AS STRING), 'é') AS predicted"
    )
    table = ms.label_metrics(df, "actual", "predicted")
    assert "mlsql_label_counts" in _plan(table)
    got = {
        bytes(r.label): (r.tp, r.fp, r.fn)
        for r in table.selectExpr("CAST(label AS BINARY) AS label", "tp", "fp", "fn").collect()
    }
    assert got == {b"\xff": (0, 0, 1), b"\xfe": (0, 1, 0), "é".encode(): (1, 0, 0)}

    collated = spark.sql(
        "SELECT array('A' COLLATE UTF8_LCASE, 'b' COLLATE UTF8_LCASE) AS actual, "
        "array('a' COLLATE UTF8_LCASE) AS predicted"
    )
    table = ms.label_metrics(collated, "actual", "predicted")
    assert "mlsql_label_counts" not in _plan(table)
    assert sorted((r.label.lower(), r.tp, r.fp, r.fn) for r in table.collect()) == [
        ("a", 1, 0, 0),
        ("b", 0, 0, 1),
    ]

    weighted = df.selectExpr("*", "2.5D AS w")
    table = ms.label_metrics(weighted, "actual", "predicted", sample_weight="w")
    assert "mlsql_label_counts" in _plan(table)
    assert sorted(r.tp for r in table.collect()) == [0.0, 0.0, 2.5]


#: labels that differ in one byte only: at the start, in the middle, at the end, or in
#: length; of 0 to 40 bytes, across the lengths where the reader changes how it packs and
#: hashes them (4, 8, 16)
ALIKE = sorted(
    {
        base[:i] + c + base[i + 1 :]
        for base in ("a" * 7, "b" * 8, "c" * 9, "d" * 15, "e" * 16, "f" * 17, "g" * 40, "i" * 4)
        for i in (0, len(base) // 2, len(base) - 1)
        for c in ("x", "é")
    }
    | {"", "h", "h" * 8, "h" * 9, "é" * 8}
)


@pytest.mark.parametrize("generated", [True, False], ids=["generated", "interpreted"])
def test_labels_alike_but_for_one_byte_count_apart_read_from_parquet(spark, tmp_path, generated):
    """Lists read from a Parquet file (Spark hands them over as its columnar arrays, and as
    its rows' arrays to the aggregate), of labels that share all bytes but one, count as the
    oracle counts them: the row statistics and each label's tp, fp and fn."""
    rows, schema = _grouped(17, ALIKE, ("string", "string"))
    path = str(tmp_path / "alike.parquet")
    spark.createDataFrame(rows, schema).coalesce(1).write.parquet(path)
    assert _counted(spark, spark.read.parquet(path), generated) == _expected_counts(rows)


def test_the_java_aggregate_is_switched_off_as_the_function_is(spark, monkeypatch):
    import mlsql.spark as ms

    df = spark.createDataFrame(
        [(["a"], ["a", "b"])], "actual array<string>, predicted array<string>"
    )
    assert "mlsql_label_counts" in _plan(ms.multilabel_report(df, "actual", "predicted"))
    with jvm_setting(spark, "off"):
        assert "mlsql_label_counts" not in _plan(ms.multilabel_report(df, "actual", "predicted"))
    monkeypatch.setenv("MLSQL_NATIVE", "0")
    plan = _plan(ms.multilabel_report(df, "actual", "predicted"))
    assert "mlsql_label_counts" not in plan and "explode" in plan
    assert not spark.catalog.functionExists("mlsql_label_counts")


def test_row_statistics_too_wide_to_pack_are_counted_alike(spark):
    """The aggregate packs a row's (|A ∩ P|, |A|, |P|) in one key below 2^21 each and keeps a
    triple above: made to pack below 2^2, the triples (rows of 4 or more labels) give the
    oracle's cells too, through Spark's serialized buffers on 1 and 4 partitions."""
    from collections import Counter

    from pyspark.sql import functions as F

    from mlsql.spark import jvm

    rows, schema = _grouped(5, ["a", "b", "c", "d", "e", "f", "g"], ("string", "string"))
    assert any(len(set(a or [])) >= 4 for _, a, _ in rows)  # some rows take the triple keys
    df = spark.createDataFrame(rows, schema).selectExpr("g", "actual AS a", "predicted AS p")
    expected: set[tuple[Any, ...]] = set()
    for g, label, tp, fp, fn in _label_table(rows):
        expected.add((g, label, None, None, None, tp, fn, fp, 0))
    known: dict[Any, Counter] = {}
    for g, a, p in rows:
        sa, sp = oracle.as_set(a), oracle.as_set(p)
        if sa is None or sp is None:
            expected.add((g, None, None, None, None, 0, 0, 0, 0))
            continue
        known.setdefault(g, Counter())[(len(sa & sp), len(sa), len(sp))] += 1
    for g, histogram in known.items():
        expected |= {(g, None, *stats, 0, 0, 0, n) for stats, n in histogram.items()}

    loaded = jvm._loaded(spark)
    assert loaded is not None
    for bits in (2, jvm.BITS):
        counts = loaded.label_counts(spark, F.col("a"), F.col("p"), bits=bits)
        for n in (1, 4):
            counted = df.repartition(n).groupBy("g").agg(counts.alias("c"))
            got = {tuple(r) for r in counted.selectExpr("g", "inline(c.cells)").collect()}
            assert got == expected, (bits, n)
    with pytest.raises(Exception, match="bits must be 1 to 21, not 22"):
        loaded.label_counts(spark, F.col("a"), F.col("p"), bits=22)


@pytest.mark.long  # 18-34 s each: CI's long step runs it (the README's suite stays under 10 min)
def test_weighted_tables_equal_spark_sql_and_exact_sums_on_any_partitioning(spark):
    """Weighted counts are exact sums of the weights in the aggregate as in Spark SQL's form:
    every column of the tables equals that form's to the last bit on 1 and 7 partitions,
    and each label's tp, fp and fn is the exact (Fraction) sum of its rows' weights, each
    kept to 2**-63, made a DOUBLE as its whole part plus its fraction's DOUBLE. Weights of 1e6 or more are summed as DOUBLE in both (chosen here so that any order
    gives the same sum); a NULL weight makes a row unknown."""
    import mlsql.spark as ms

    rows, _ = _grouped(13, ["a", "b", "c", "d", "e"], ("string", "string"))
    rng = random.Random(13)
    weights = [None, 0.0, 0.1, 1 / 3, 2.5, 7e-9, 123456.789, 1.5, 4e6]
    # the DOUBLE sums of 4e6 with others are exact only with weights of few bits: group v
    weighted = [(*r, rng.choice(weights if r[0] == "v" else weights[:-1])) for r in rows]
    weighted = [
        (g, a, p, w if g != "v" or w in (None, 0.0, 2.5, 1.5, 4e6) else 0.5)
        for g, a, p, w in weighted
    ]
    schema = "g string, actual array<string>, predicted array<string>, w double"
    df = spark.createDataFrame(weighted, schema)

    def tables(frame: Any) -> list[list[tuple[Any, ...]]]:
        calls = [
            ms.label_metrics(frame, "actual", "predicted", by="g", sample_weight="w"),
            ms.multilabel_report(frame, "actual", "predicted", by="g", sample_weight="w"),
            ms.label_metrics(
                frame, "actual", "predicted", by="g", sample_weight="w", labels=["a", "z"]
            ),
        ]
        return [sorted((tuple(r) for r in t.collect()), key=repr) for t in calls]

    table = ms.label_metrics(df, "actual", "predicted", by="g", sample_weight="w")
    assert "mlsql_label_counts" in _plan(table)
    with jvm_setting(spark, "false"):
        expected = tables(df)
    for n in (1, 7):
        assert repr(tables(df.repartition(n))) == repr(expected), n

    exact: dict[tuple[Any, Any], list[Fraction]] = {}
    for g, a, p, w in weighted:
        sa, sp = oracle.as_set(a), oracle.as_set(p)
        if sa is None or sp is None or w is None:
            continue
        for label in sa | sp:
            c = exact.setdefault((g, label), [Fraction(0)] * 3)
            # mlsql.spark.exact keeps each weight to the nearest 2**-63 (half to even)
            kept = Fraction(round(Fraction(w) * 2**63), 2**63)
            c[0 if label in sa and label in sp else 1 if label in sp else 2] += kept
    got = {(r.g, r.label): (r.tp, r.fp, r.fn) for r in table.collect()}

    def double(x: Fraction) -> float:  # the whole part, plus the fraction made a DOUBLE
        whole = x.numerator // x.denominator
        return float(whole) + float(x - whole)

    assert got == {k: tuple(map(double, v)) for k, v in exact.items() if sum(v) > 0}


@pytest.mark.parametrize("jvm", ["true", "false"])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_report_holds_no_group_in_one_array(spark, jvm, weighted):
    """``multilabel_report`` sums a group's per-label values in sorted order with a window that
    spills (mlsql.spark.text.GroupAggregates.grouped), not a list of the group's labels in one
    row, which ran a 2 GB driver out of memory at a million labels: no ``collect_list``,
    ``collect_set`` or ``array_agg`` in its optimised plan, in either form; its averages are
    the plain-Python oracle's."""
    import mlsql.spark as ms

    rows, schema = _grouped(5, ["a", "b", "c", "d"], ("string", "string"))
    df = spark.createDataFrame(rows, schema).selectExpr("*", "1.0D AS w")
    weight = {"sample_weight": "w"} if weighted else {}
    with jvm_setting(spark, jvm):
        report = ms.multilabel_report(df, "actual", "predicted", by="g", **weight)
        plan = str(report._jdf.queryExecution().optimizedPlan())
        got = {r.g: r for r in report.collect()}
    assert re.search(r"\b(collect_list|collect_set|array_agg)\(", plan) is None, plan
    for g in ("u", "v", None):
        part = [(a, p) for h, a, p in rows if h == g]
        assert got[g].n_rows == len(oracle.known(part))
        assert got[g].micro_f1 == pytest.approx(float(oracle.micro(part, "f1")), abs=1e-12)
        assert got[g].samples_f1 == pytest.approx(float(oracle.samples(part, "f1")), abs=1e-12)


def _sums(rng: random.Random) -> list[list[float | None]]:
    """Groups of DOUBLEs whose DOUBLE sum depends on the order: cancelling magnitudes, long
    runs of tiny values beside one large one, values past the decimal form's 1e6, NULLs,
    signed zeros and subnormals."""
    magnitudes = [1e-300, 5e-324, 1e-20, 1e-9, 0.1, 1.0, 3.0, 1e6, 1e15, 1e20, 1e300]
    groups: list[list[float | None]] = [
        [1.0] + [1.1e-16] * 3000,
        [1e20, 0.1, -1e20, 0.2],
        [-0.0, -0.0],
        [None, None],
        [1e308, 1e308, -1e308],  # an intermediate sum overflows: the plain DOUBLE sum
        [2.0**53, 1.0, 1.0, -(2.0**53)],
    ]
    for _ in range(40):
        size = rng.choice([1, 2, 7, 60, 400])
        groups.append(
            [
                None
                if rng.random() < 0.05
                else rng.choice([-1, 1]) * rng.choice(magnitudes) * rng.random()
                for _ in range(size)
            ]
        )
    return groups


def test_exact_sums_are_fsum_on_any_partitioning(spark):
    """``exact_sum`` with the jar is Python's ``math.fsum`` of the group's values (the exact
    sum rounded once) to the bit, on 1, 4 and 7 partitions; NULL over no values; a DOUBLE sum
    where an intermediate sum overflows. Without the jar (Spark SQL's decimal form) it is
    within 1e-12 relative of fsum where every value is below 1e6 and the sum is not a
    cancellation."""
    import math

    from pyspark.sql import functions as F

    from mlsql.spark.ops import exact_sum

    groups = _sums(random.Random(29))
    rows = [(g, v) for g, values in enumerate(groups) for v in values]
    df = spark.createDataFrame(rows, "g int, x double")

    def summed(frame: Any) -> dict[int, float | None]:
        out = frame.groupBy("g").agg(exact_sum(F.col("x")).alias("s")).collect()
        return {r.g: r.s for r in out}

    assert "mlsql_exact_sum" in _plan(df.groupBy("g").agg(exact_sum(F.col("x"))))
    for parts in (1, 4, 7):
        got = summed(df.repartition(parts))
        for g, values in enumerate(groups):
            known = [v for v in values if v is not None]
            if not known:
                assert got[g] is None, g
            elif g == 4:
                assert got[g] in (math.inf, 1e308), got[g]
            else:
                want = math.fsum(known)
                assert got[g] == want and math.copysign(1, got[g]) == math.copysign(1, want), (
                    g,
                    got[g],
                    want,
                )
    with jvm_setting(spark, "false"):
        assert "mlsql_exact_sum" not in _plan(df.groupBy("g").agg(exact_sum(F.col("x"))))
        got = summed(df)
    for g, values in enumerate(groups):
        known = [v for v in values if v is not None]
        if known and max(abs(v) for v in known) < 1e6 and g != 1:
            want = math.fsum(known)
            assert abs(got[g] - want) <= 1e-12 * sum(abs(v) for v in known) + 1e-18 * len(known)


def test_exact_sums_of_nan_and_infinities_are_their_double_sums(spark):
    """A NaN, or +inf with -inf, makes the sum NaN; infinities of one sign, that infinity;
    in both forms."""
    import math

    from pyspark.sql import functions as F

    from mlsql.spark.ops import exact_sum

    inf = float("inf")
    groups = [[1.0, float("nan")], [inf, 2.0], [-inf, -inf, 5.0], [inf, -inf], [1e30, 1.0]]
    rows = [(g, v) for g, values in enumerate(groups) for v in values]
    df = spark.createDataFrame(rows, "g int, x double")
    for setting in ("true", "false"):
        with jvm_setting(spark, setting):
            out = df.groupBy("g").agg(exact_sum(F.col("x")).alias("s")).collect()
        got = {r.g: r.s for r in out}
        assert math.isnan(got[0]) and math.isnan(got[3]), setting
        assert (got[1], got[2], got[4]) == (inf, -inf, 1e30 + 1.0), setting


def _moment_groups(rng: random.Random) -> list[list[tuple[float | None, float | None, float]]]:
    """Groups of (y, ŷ, w) where a DOUBLE co-moment cancels: values far from zero (offsets of
    1e12 and 1e15 with a spread of one), tiny spreads, mixed magnitudes, fractional and zero
    weights, NULLs, a single row and rows of no weight."""
    groups: list[list[tuple[float | None, float | None, float]]] = [
        [(1e12 + 1, 1e12 + 2, 1.0), (1e12 + 2, 1e12 + 2, 1.0), (1e12 + 3, 1e12 + 5, 1.0)],
        [(5.0, 4.0, 1.0)],  # one row: every co-moment 0
        [(1.0, 2.0, 0.0), (3.0, 1.0, 0.0)],  # no weight: NULL
        [(None, 1.0, 1.0), (2.0, None, 1.0)],  # no known row: NULL
        [(0.1, 0.1, 1.0)] * 7,  # constant: 0, not a rounding residue
    ]
    for _ in range(30):
        offset = rng.choice([0.0, 1.0, 1e6, 1e12, 1e15, -1e15])
        scale = rng.choice([1e-9, 1e-3, 1.0, 1e3])
        size = rng.choice([2, 5, 40, 300])
        groups.append(
            [
                (
                    None if rng.random() < 0.03 else offset + scale * rng.gauss(0, 1),
                    offset + scale * rng.gauss(0, 1),
                    rng.choice([1.0, 0.5, 0.1, 1 / 3, 0.0, 7.25]),
                )
                for _ in range(size)
            ]
        )
    return groups


def _exact_moments(
    rows: list[tuple[float | None, float | None, float]], weighted: bool
) -> tuple[float, ...] | None:
    """The population co-moments of y, ŷ and the DOUBLE y - ŷ as exact fractions, each rounded
    once (``float`` of a Fraction rounds to nearest); None over no known rows or no weight."""
    known = [(y, p, w if weighted else 1.0) for y, p, w in rows if y is not None and p is not None]
    total = sum(Fraction(w) for _, _, w in known)
    if not known or total == 0:
        return None

    def comoment(a: list[float], b: list[float]) -> float:
        mean_a = (
            sum(Fraction(w) * Fraction(x) for x, (_, _, w) in zip(a, known, strict=True)) / total
        )
        mean_b = (
            sum(Fraction(w) * Fraction(x) for x, (_, _, w) in zip(b, known, strict=True)) / total
        )
        spread = sum(
            Fraction(w) * (Fraction(x) - mean_a) * (Fraction(z) - mean_b)
            for x, z, (_, _, w) in zip(a, b, known, strict=True)
        )
        return float(spread / total)

    ys = [y for y, _, _ in known]
    ps = [p for _, p, _ in known]
    es = [
        y - p for y, p in zip(ys, ps, strict=True)
    ]  # the DOUBLE difference, as every engine rounds it
    return comoment(ys, ys), comoment(ps, ps), comoment(ys, ps), comoment(es, es)


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_co_moments_are_the_exact_fractions_on_any_partitioning(spark, weighted):
    """``co_moment`` with the jar is each exact co-moment rounded once, to the bit, on 1, 4
    and 7 partitions (values 1e15 from zero with a spread of one, where Spark's ``var_pop``
    drifts); NULL over no known row or no weight. ``r2`` and ``pearson_corr`` read them: with
    and without the jar (the rows collected) they equal the exact values to 1e-12, but for
    ``r2`` without the jar where its decimal sum of squared errors cannot be (below)."""
    from pyspark.sql import functions as F

    import mlsql.spark as ms
    from mlsql.spark.jvm import co_moment

    groups = _moment_groups(random.Random(33))
    rows = [(g, y, p, w) for g, group in enumerate(groups) for y, p, w in group]
    df = spark.createDataFrame(rows, "g int, y double, p double, w double")
    weight = F.col("w") if weighted else None
    y, p = F.col("y"), F.col("p")
    known = y.isNotNull() & p.isNotNull()  # as the measures' statistics see the rows
    y, p = F.when(known, y), F.when(known, p)
    moments = [co_moment(y, None, weight), co_moment(p, None, weight), co_moment(y, p, weight)]
    moments.append(co_moment(y - p, None, weight))

    def computed(frame: Any) -> dict[int, tuple[float, ...] | None]:
        out = frame.groupBy("g").agg(*(m.alias(f"m{i}") for i, m in enumerate(moments)))
        rows = {r.g: (r.m0, r.m1, r.m2, r.m3) for r in out.collect()}
        return {g: None if set(m) == {None} else m for g, m in rows.items()}

    assert "mlsql_co_moment" in _plan(df.groupBy("g").agg(co_moment(F.col("y"))))
    for parts in (1, 4, 7):
        got = computed(df.repartition(parts))
        for g, group in enumerate(groups):
            assert got[g] == _exact_moments(group, weighted), (g, parts)

    w = {"sample_weight": "w"} if weighted else {}
    for setting in ("true", "false"):
        with jvm_setting(spark, setting):  # the Columns read the setting when they are built
            measures = [
                ms.r2("y", "p", **w).alias("r2"),
                ms.pearson_corr("y", "p", **w).alias("corr"),
            ]
            agg = df.groupBy("g").agg(*measures)
            assert ("mlsql_co_moment" in _plan(agg)) == (setting == "true")
            out = {r.g: r for r in agg.collect()}
        for g, group in enumerate(groups):
            want = _exact_moments(group, weighted)
            known = [(y, p, w if weighted else 1.0) for y, p, w in group if None not in (y, p)]
            if want is None or want[0] == 0 or want[1] == 0:
                continue  # r2 and pearson_corr's zero_division: tests/test_regression*.py
            total = sum(Fraction(w) for _, _, w in known)
            sse = sum(Fraction(w) * (Fraction(y) - Fraction(p)) ** 2 for y, p, w in known)
            r2 = 1 - sse / total / Fraction(want[0])
            corr = Fraction(want[2]) / (Fraction(want[0]) * Fraction(want[1])) ** 0.5
            assert out[g].corr == pytest.approx(float(corr), rel=1e-12, abs=1e-12), (setting, g)
            if setting == "false" and sse < len(known) * 5e-7:
                # without the jar r2's squared errors are summed in Spark SQL's decimal, within
                # 5e-19 a value (mlsql.spark.jvm): 1e-12 of the sum only from n·5e-7 up; these
                # groups' sums (errors of 1e-9) lose more, a known limit of that form
                continue
            assert out[g].r2 == pytest.approx(float(r2), rel=1e-12, abs=1e-12), (setting, g)


# ------------------------------------------------------------------ confusion cells (ClassCells.java)
#: the single-label measures over one column that read the (label, label) cells
ONE_COLUMN = ("majority_error", "minority_class", "majority_class")
#: each class kind's Spark type and values: text that sorts differently by characters and by
#: UTF-8 bytes (U+FFFF against an emoji), the empty string; integers of both signs
CLASS_POOLS = {
    "text": ("string", ["a", "b", "", "é", "😀", "\uffff", "B", "ab"]),
    "integers": ("int", [-3, 0, 2, 10, 2**31 - 1]),
    "booleans": ("boolean", [True, False]),
    # -0.0 is the class 0.0 and every NaN one class, as Spark groups them
    "numbers": ("double", [0.5, -0.0, 0.0, 2.0, float("nan"), -1e300, 1e-300]),
}
#: the one NaN class of the oracle (Python's NaN equals no NaN, not even itself)
NAN = float("nan")


def _class(value: Any) -> Any:
    """A class as Spark groups it: -0.0 as 0.0, every NaN the one :data:`NAN`."""
    if isinstance(value, float):
        return NAN if value != value else value + 0.0
    return value


def _class_groups(rng: random.Random, pool: list[Any]) -> list[list[tuple[Any, Any, Any]]]:
    """Groups of (actual, predicted, weight): NULL classes and weights, zero and fractional
    weights, a single row, a group of no known row, groups of one class and of many rows."""
    groups: list[list[tuple[Any, Any, Any]]] = [
        [(pool[0], pool[-1], 0.5)],
        [(None, pool[0], 1.0), (pool[0], None, 1.0)],  # no known row
        [(pool[1], pool[1], 0.0), (pool[1], pool[1], 0.0)],  # no weight
    ]
    for _ in range(12):
        size = rng.choice([2, 7, 60, 400])
        groups.append(
            [
                (
                    None if rng.random() < 0.03 else rng.choice(pool),
                    rng.choice(pool),
                    None if rng.random() < 0.03 else rng.choice([1.0, 0.1, 1 / 3, 0.0, 2.5]),
                )
                for _ in range(size)
            ]
        )
    return groups


def _order(value: Any) -> Any:
    """Spark's order of classes: text by its UTF-8 bytes, numbers and booleans by value, NaN
    last."""
    return (
        (False, value.encode())
        if isinstance(value, str)
        else (value is NAN, 0 if value is NAN else value)
    )


def _expected_cells(rows: list[tuple[Any, Any, Any]], weighted: bool) -> tuple[Any, ...]:
    """The aggregate's struct by plain Python: totals as exact fractions, rounded once."""
    known = [
        (_class(a), _class(p), Fraction(w) if weighted else 1)
        for a, p, w in rows
        if a is not None and p is not None and (w is not None or not weighted)
    ]
    classes = sorted({a for a, _, _ in known} | {p for _, p, _ in known}, key=_order)
    at = {c: i for i, c in enumerate(classes)}
    cells: dict[tuple[int, int], Any] = {}
    for a, p, w in known:
        cells[at[a], at[p]] = cells.get((at[a], at[p]), 0) + w
    k = len(classes)

    def out(x: Any) -> Any:
        return float(x) if weighted else x

    def side(hit: Any) -> list[Any]:
        return [out(sum((c for key, c in cells.items() if hit(key, i)), 0)) for i in range(k)]

    return (
        out(sum(cells.values(), 0)),
        len(known),
        side(lambda key, i: key[0] == i),
        side(lambda key, i: key[1] == i),
        side(lambda key, i: key == (i, i)),
        [(i, j, out(c), out(cells.get((j, i), 0))) for (i, j), c in sorted(cells.items())],
    )


@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
@pytest.mark.parametrize("kind", sorted(CLASS_POOLS))
def test_class_cells_are_the_oracles_on_any_partitioning(spark, kind, weighted):
    """``class_cells`` with the jar counts each group's confusion cells as plain Python does
    (classes sorted as Spark sorts them; with weights each total the exact sum of its rows'
    weights rounded once), on 1, 4 and 7 partitions."""
    from pyspark.sql import functions as F

    from mlsql.spark.jvm import class_cells

    spark_type, pool = CLASS_POOLS[kind]
    groups = _class_groups(random.Random(34), pool)
    rows = [(g, a, p, w) for g, group in enumerate(groups) for a, p, w in group]
    df = spark.createDataFrame(rows, f"g int, a {spark_type}, p {spark_type}, w double")
    known = df.a.isNotNull() & df.p.isNotNull()
    counted = class_cells(df.a, df.p, F.when(known, df.w if weighted else F.lit(1.0)), weighted)
    assert counted is not None
    for parts in (1, 4, 7):
        frame = df.repartition(parts)
        out = frame.groupBy("g").agg(counted[0].alias("s"), F.first(counted[1]).alias("applies"))
        got = {r.g: r for r in out.collect()}
        for g, group in enumerate(groups):
            s = got[g].s
            cells = [tuple(c) for c in s.cells]
            assert got[g].applies
            assert (s.n, s.rows, s.actual, s.predicted, s.correct, cells) == _expected_cells(
                group, weighted
            ), (g, parts)


@pytest.mark.long  # 18-34 s each: CI's long step runs it (the README's suite stays under 10 min)
def test_class_measures_by_name_and_by_column_agree_with_the_collected_form(spark):
    """Class-wise measures and ``majority_error`` with the jar, their inputs given as DataFrame
    Columns (one form planned) and as names (both planned, one folded away), plain and
    weighted, equal the rows
    collected (``spark.mlsql.jvm=false``) to 1e-12; text under a collation, which the
    aggregate does not compare, is collected and keeps the collation's classes."""
    import mlsql.spark as ms

    _, pool = CLASS_POOLS["text"]
    groups = _class_groups(random.Random(35), pool)
    rows = [(g, a, p, w) for g, group in enumerate(groups) for a, p, w in group]
    df = spark.createDataFrame(rows, "g int, a string, p string, w double")
    collated = df.selectExpr("g", "a COLLATE UTF8_LCASE AS a", "p COLLATE UTF8_LCASE AS p", "w")
    # a per-class average, one over given labels, a sum over the rows' cells, the cells'
    # mirrors (the registry-driven tests run every class-wise measure on DataFrame Columns,
    # the doctests on names)
    asked = [
        ("f1_score", {"average": "macro"}),
        ("fbeta_score", {"beta": 2.0, "labels": ["a", "é", "zz", ""]}),  # "zz": no row
        ("cohen_kappa_score", {"weights": "quadratic"}),
        ("bowker_statistic", {}),
    ]

    def values(frame: Any, by_name: bool) -> dict[int, tuple[Any, ...]]:
        a, p, w = ("a", "p", "w") if by_name else (frame.a, frame.p, frame.w)
        cols = [ms.FUNCTIONS[n](a, p, **params) for n, params in asked]
        cols += [ms.FUNCTIONS[n](a, p, sample_weight=w, **params) for n, params in asked[:3]]
        cols += [ms.majority_error(a), ms.majority_error(p, sample_weight=w)]  # (label, label)
        out = frame.groupBy("g").agg(*(c.alias(f"c{i}") for i, c in enumerate(cols)))
        return {r.g: tuple(r)[1:] for r in out.collect()}

    def same(got: dict[int, tuple[Any, ...]], want: dict[int, tuple[Any, ...]]) -> None:
        assert got.keys() == want.keys()
        for g, row in want.items():
            for x, y in zip(got[g], row, strict=True):
                assert (x is None) == (y is None), (g, got[g], row)
                assert y is None or x == pytest.approx(y, rel=1e-12, abs=1e-12, nan_ok=True), g

    _, numbers = CLASS_POOLS["numbers"]
    rows = [
        (g, a, p, w)
        for g, grp in enumerate(_class_groups(random.Random(36), numbers))
        for a, p, w in grp
    ]
    floats = spark.createDataFrame(rows, "g int, a double, p double, w double")
    with jvm_setting(spark, "false"):
        collected, collated_collected = values(df, False), values(collated, True)
        floats_collected = values(floats, False)
    assert collected != collated_collected  # 'B' and 'b' are one class under the collation
    same(values(df, False), collected)
    same(values(df, True), collected)
    same(values(collated, True), collated_collected)
    same(values(floats, False), floats_collected)  # -0.0 and 0.0 one class, NaN one class
    named = str(df.agg(ms.f1_score("a", "p"))._jdf.queryExecution().optimizedPlan())
    assert "mlsql_class_cells(cast(a#" in named and "collect_list(null" in named, named
    plan = str(collated.agg(ms.f1_score("a", "p"))._jdf.queryExecution().optimizedPlan())
    assert "mlsql_class_cells(null, null, null, null, null" in plan, plan
    assert "collect_list(CASE WHEN" in plan, plan


@pytest.mark.long  # 18-34 s each: CI's long step runs it (the README's suite stays under 10 min)
def test_every_class_measure_with_the_jar_equals_the_collected_form(spark):
    """Every class-wise measure, ``majority_error``, ``minority_class`` and
    ``majority_class``, with the first parameter set of its
    reference (``tests/references.py``), plain and weighted, on DataFrame Columns: the Java
    cells with the jar equal the collected rows without it to 1e-12, by group (the registry's
    tests run the Java form; this keeps the form without the jar checked on all of them)."""
    import pyarrow as pa

    import mlsql.spark as ms
    from mlsql._front.build import lookup
    from mlsql.spark.families.single_label import CLASS_MEASURES
    from tests.references import REFERENCES

    _, pool = CLASS_POOLS["text"]
    rows = [
        (g, a, p, w)
        for g, grp in enumerate(_class_groups(random.Random(37), pool[:5]))
        for a, p, w in grp
    ]
    df = spark.createDataFrame(rows, "g int, actual string, predicted string, w double")
    table = pa.table({"actual": [r[1] for r in rows], "predicted": [r[2] for r in rows]})

    def values() -> tuple[str, dict[int, tuple[Any, ...]]]:  # built under the setting
        cols = []
        for name in (*CLASS_MEASURES, *ONE_COLUMN):
            m = lookup(name)
            inputs = [df["actual"]] if name in ONE_COLUMN else [df.actual, df.predicted]
            sets = REFERENCES[name].params_for(table)[:1] if name in REFERENCES else ({},)
            for params in sets:
                cols.append(ms.FUNCTIONS[name](*inputs, **params))
                if m.weighted:
                    cols.append(ms.FUNCTIONS[name](*inputs, sample_weight=df.w, **params))
        agg = df.groupBy("g").agg(*(c.alias(f"c{i}") for i, c in enumerate(cols)))
        return _plan(agg), {r.g: tuple(r)[1:] for r in agg.collect()}

    with jvm_setting(spark, "false"):
        plan, collected = values()
    assert "mlsql_class_cells" not in plan and "collect_list" in plan
    plan, counted = values()
    assert "mlsql_class_cells" in plan and "collect_list" not in plan
    assert counted.keys() == collected.keys()
    for g, want in collected.items():
        for i, (x, y) in enumerate(zip(counted[g], want, strict=True)):
            assert (x is None) == (y is None), (g, i)
            if isinstance(y, str):  # a class
                assert x == y, (g, i)
                continue
            assert y is None or x == pytest.approx(y, rel=1e-12, abs=1e-12, nan_ok=True), (g, i)


def test_extreme_classes_of_numbers_read_the_cells_as_spark_groups_them(spark):
    """minority_class, and majority_class with weights, over DOUBLE classes: -0.0 is the class
    0.0 and every NaN one class, sorted last (so 1.0 wins its tie with NaN); a class whose rows
    all weigh 0 does not occur. The same classes with the jar and without it."""
    import mlsql.spark as ms

    z, nan = -0.0, float("nan")
    rows = [(0.0, 1.0), (0.0, 1.0), (z, 1.0), (nan, 2.5), (nan, 2.5), (1.0, 0.0), (1.0, 0.0)]
    rows += [(2.5, 1.0)] * 4
    df = spark.createDataFrame(rows, "y double, w double")

    def got() -> tuple[Any, ...]:
        cols = [
            ms.minority_class(df.y),
            ms.minority_class("y"),
            ms.majority_class(df.y, sample_weight=df.w),
            ms.minority_class(df.y, sample_weight=df.w),
        ]
        return tuple(df.agg(*(c.alias(f"c{i}") for i, c in enumerate(cols))).first())

    with jvm_setting(spark, "false"):
        without = got()
    with_jar = got()
    for values in (with_jar, without):
        assert values[0] == values[1] == 1.0  # counts 0.0: 3, NaN: 2, 1.0: 2, 2.5: 4
        assert math.isnan(values[2])  # weights 0.0: 3, NaN: 5, 1.0: 0 (no class), 2.5: 4
        assert values[3] == 0.0


def _dictionary_rows(seed: int) -> list[tuple[Any, Any]]:
    """Rows for a Parquet file of four row groups (so four pairs of dictionaries), whose
    label pools overlap only in part, and in which the actual and predicted pools differ;
    with NULL lists and labels, repeats, lists long enough for hash sets against empty ones,
    and in the last group more distinct long labels than a small dictionary page holds."""
    rng = random.Random(seed)
    rows: list[tuple[Any, Any]] = []
    for group in range(4):
        shared = [f"s{group}", f"s{group + 1}", "é" * group, "x" * (30 + group)]
        actual_pool = [*shared, f"a{group}", ""]
        predicted_pool = [*shared, f"p{group}", "P" * 12]
        if group == 3:  # beyond the dictionary page: the writer falls back to plain pages
            actual_pool += [f"long-actual-{k:04d}" * 3 for k in range(300)]
            predicted_pool += [f"long-actual-{k:04d}" * 3 for k in range(0, 600, 2)]
        rows += [(_labels(rng, actual_pool), _labels(rng, predicted_pool)) for _ in range(150)]
        long_list = [rng.choice(predicted_pool) for _ in range(70)]
        rows += [([], long_list), (long_list, []), (None, long_list), (long_list, long_list[::-1])]
    return rows


def _group(i: int) -> str | None:
    """The group of row ``i`` of :func:`_dictionary_file`."""
    return ("u", "v", None)[i % 3]


def _dictionary_file(directory: Any, rows: list[tuple[Any, Any]]) -> Any:
    """``rows`` written by pyarrow as Parquet in ``directory``, in row groups of 154 rows and
    dictionary pages of 4 KiB: the columns ``i`` (the row's index), ``g`` (its
    :func:`_group`), ``actual`` and ``predicted``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = directory / "dictionary.parquet"
    data = pa.table(
        {
            "i": list(range(len(rows))),
            "g": [_group(i) for i in range(len(rows))],
            "actual": [a for a, _ in rows],
            "predicted": [p for _, p in rows],
        },
        schema=pa.schema(
            [
                ("i", pa.int32()),
                ("g", pa.string()),
                ("actual", pa.list_(pa.string())),
                ("predicted", pa.list_(pa.string())),
            ]
        ),
    )
    pq.write_table(data, path, row_group_size=154, dictionary_pagesize_limit=4096)
    return path


@pytest.mark.parametrize("generated", [True, False], ids=["generated", "interpreted"])
def test_dictionary_encoded_lists_count_as_the_oracle(spark, tmp_path, generated):
    """Lists of text that Spark's Parquet reader leaves as dictionary ids, which the counter
    reads by number where it can: each row's |A ∩ P|, |A| and |P| equal the oracle's, over
    row groups whose actual and predicted dictionaries differ, and where the writer fell
    back from dictionary to plain pages."""
    import pyarrow.parquet as pq

    rows = _dictionary_rows(29)
    path = _dictionary_file(tmp_path, rows)
    meta = pq.ParquetFile(path).metadata
    encodings = [
        set(meta.row_group(g).column(c).encodings)
        for g in range(meta.num_row_groups)
        for c in (1, 2)
    ]
    assert meta.num_row_groups == 4
    assert all("RLE_DICTIONARY" in e for e in encodings)  # every chunk starts with ids
    assert any("PLAIN" in e and e & {"RLE_DICTIONARY"} for e in encodings[6:])  # a fallback
    with executed(spark, generated):
        df = spark.read.parquet(str(path))
        from mlsql.spark.stats import row_stats

        assert "mlsql_set_counts" in _plan(df.select(row_stats(df.actual, df.predicted).tp))
        got = _stats(df)
    assert got == _expected(rows)
    # the per-label table too, whose aggregate is handed the labels as codes
    grouped = [(_group(i), a, p) for i, (a, p) in enumerate(rows)]
    assert _counted(spark, df, generated) == _expected_counts(grouped)


@pytest.mark.parametrize("generated", [True, False], ids=["generated", "interpreted"])
@pytest.mark.parametrize("source", ["parquet", "shuffled", "local"])
def test_label_codes_number_each_label_once_per_task(spark, tmp_path, source, generated):
    """The codes the per-label aggregate is handed (LabelCodes): each known row's tp, |A| and
    |P|, then one element per distinct label of the oracle's kind (tp, fn, fp), whose code is
    the one the same task gives that label alone; within a task, one code per label and one
    label per code. Read from Parquet (dictionary ids, and a plain fallback) and from rows a
    shuffle made; a projection of a local relation, which Spark evaluates in the driver
    (outside a task), has none, and its rows hand over their lists."""
    from pyspark.sql import functions as F

    from mlsql.spark import jvm

    loaded = jvm._loaded(spark)
    assert loaded is not None
    rows = _dictionary_rows(31)
    if source == "parquet":
        df = spark.read.parquet(str(_dictionary_file(tmp_path, rows)))
    elif source == "shuffled":
        indexed = [(i, _group(i), a, p) for i, (a, p) in enumerate(rows)]
        schema = "i int, g string, actual array<string>, predicted array<string>"
        df = spark.createDataFrame(indexed, schema).repartition(3)
    else:  # an inline table: a local relation
        values = ", ".join(
            f"({i}, {_sql_text(_group(i))}, {_sql_list(a)}, {_sql_list(p)})"
            for i, (a, p) in enumerate(rows)
        )
        df = spark.sql(f"SELECT * FROM VALUES {values} AS t(i, g, actual, predicted)")

    def codes(actual: Any, predicted: Any) -> Any:
        return jvm._catalyst(spark, loaded.label_codes, actual, predicted)

    nothing = F.array().cast("array<string>")
    alone = F.transform(  # each label of the row, coded alone as a false negative
        F.array_union(df.actual, df.predicted),
        lambda x: F.struct(x.alias("label"), codes(F.array(x), nothing).alias("c")),
    )
    with executed(spark, generated):
        got = df.select("i", codes(df.actual, df.predicted).alias("c"), alone.alias("alone"))
        by_row = {r.i: r for r in got.collect()}
    tasks: dict[int, dict[str, int]] = {}
    for i, (a, p) in enumerate(rows):
        sa, sp = oracle.as_set(a), oracle.as_set(p)
        c = by_row[i].c
        if source == "local" or sa is None or sp is None:
            assert c is None, i
            continue
        assert c is not None and c[2:5] == [len(sa & sp), len(sa), len(sp)], i
        task = (c[0] & 0xFFFFFFFF) | (c[1] << 32)
        code_of = tasks.setdefault(task, {})
        for x in by_row[i].alone:
            if x.label is not None:  # coded alone in the row's task: [.., .., 0, 1, 0, code·4 + 1]
                assert x.c[:5] == [c[0], c[1], 0, 1, 0] and x.c[5] & 3 == 1, (i, x)
                assert code_of.setdefault(x.label, x.c[5] >> 2) == x.c[5] >> 2, (i, x)
        label_of = {code: label for label, code in code_of.items()}
        kinds = (sa & sp, sa - sp, sp - sa)  # LabelCodes' TP, FN and FP
        assert sorted((label_of[e >> 2], e & 3) for e in c[5:]) == sorted(
            (label, k) for k, labels in enumerate(kinds) for label in labels
        ), i
    for code_of in tasks.values():  # one label per code
        assert len(set(code_of.values())) == len(code_of)
    assert (source == "local") == (not tasks)
    # the per-label table counts the codes, or the lists where there are none, as the oracle
    grouped = [(_group(i), a, p) for i, (a, p) in enumerate(rows)]
    assert _counted(spark, df, generated) == _expected_counts(grouped)


#: Spark's settings under which a partial aggregate sorts its rows, or spills its buffers and
#: sorts the rest, before it counts them: still in the task that coded them
SORTED = {
    "fallback": {"spark.sql.objectHashAggregate.sortBased.fallbackThreshold": "1"},
    "sort aggregate": {"spark.sql.execution.useObjectHashAggregateExec": "false"},
}


@pytest.mark.parametrize("setting", sorted(SORTED))
def test_codes_count_where_the_aggregate_sorts_its_rows_first(spark, tmp_path, setting):
    """Where Spark's partial aggregate keeps its rows (codes included) in a sorter before it
    counts them, or writes its buffers out and reads them back (the hash map's fallback past
    its threshold of groups, or a sort-based aggregate), the per-label table still equals the
    oracle's."""
    rows = _dictionary_rows(37)
    df = spark.read.parquet(str(_dictionary_file(tmp_path, rows)))
    with configured(spark, SORTED[setting]):
        got = _counted(spark, df, generated=True)
    grouped = [(_group(i), a, p) for i, (a, p) in enumerate(rows)]
    assert got == _expected_counts(grouped)


def _sql_text(text: str | None) -> str:
    """``text`` as a Spark SQL literal (the tests' labels hold no quote)."""
    assert text is None or "'" not in text
    return "CAST(NULL AS STRING)" if text is None else f"'{text}'"


def _sql_list(labels: list[str | None] | None) -> str:
    """``labels`` as a Spark SQL ARRAY<STRING> literal."""
    if labels is None:
        return "CAST(NULL AS ARRAY<STRING>)"
    return f"CAST(array({', '.join(map(_sql_text, labels))}) AS ARRAY<STRING>)"


def test_this_spark_hands_over_dictionary_ids_the_counter_reads(spark):
    """The Spark that mlsql is built and tested against keeps the private fields through
    which the counter reaches dictionary ids (else it compares text by bytes, slower)."""
    from mlsql.spark import jvm

    assert jvm._loaded(spark) is not None
    loader = spark._jsparkSession.sharedState().jarClassLoader()
    counts = spark._jvm.java.lang.Class.forName("mlsql.spark.SetCounts", True, loader)
    method = counts.getMethod(
        "readsDictionaries", spark.sparkContext._gateway.new_array(spark._jvm.java.lang.Class, 0)
    )
    assert method.invoke(
        None, spark.sparkContext._gateway.new_array(spark._jvm.java.lang.Object, 0)
    )


#: pairs of labels of one size whose hashes in the Java reader (LabelSets.hash) are equal,
#: found by a search over numbered labels: 7 and 8 bytes (compared packed in one long), 12
#: and 23 (compared by bytes)
COLLIDING = [
    ("t025963", "t027703"),
    ("tag39434", "tag67073"),
    ("label-092155", "label-140550"),
    ("a-longer-label-00010815", "a-longer-label-00062173"),
]


def _java_hash(spark: Any, label: str) -> int:
    """LabelSets.hash of ``label``'s UTF-8 bytes (a package-private method, reached by
    reflection)."""
    jvm = spark._jvm
    gateway = spark.sparkContext._gateway
    loader = spark._jsparkSession.sharedState().jarClassLoader()
    sets = jvm.java.lang.Class.forName("mlsql.spark.LabelSets", True, loader)
    signature = gateway.new_array(jvm.java.lang.Class, 3)
    signature[0] = jvm.java.lang.Class.forName("java.lang.Object")
    signature[1] = jvm.java.lang.Long.TYPE
    signature[2] = jvm.java.lang.Integer.TYPE
    method = sets.getDeclaredMethod("hash", signature)
    method.setAccessible(True)
    data = label.encode()
    arguments = gateway.new_array(jvm.java.lang.Object, 3)
    arguments[0] = bytearray(data)
    arguments[1] = jvm.java.lang.Long(jvm.org.apache.spark.unsafe.Platform.BYTE_ARRAY_OFFSET)
    arguments[2] = jvm.java.lang.Integer(len(data))
    return int(method.invoke(None, arguments))


@pytest.mark.parametrize("generated", [True, False], ids=["generated", "interpreted"])
def test_labels_of_equal_hash_count_apart(spark, generated):
    """Labels whose hashes are equal are still different labels: each pair's two count
    apart in a row's counts and in the per-label table, in lists compared pairwise and in
    lists long enough for hash maps (where the map compares them on equal hashes)."""
    from mlsql.spark import jvm

    assert jvm._loaded(spark) is not None
    for x, y in COLLIDING:  # else the hash changed: search for new pairs
        assert _java_hash(spark, x) == _java_hash(spark, y), (x, y)
    filler = [f"f{k}" for k in range(40)]
    rows = []
    for x, y in COLLIDING:
        rows += [
            ("short", [x], [y]),
            ("short", [x, y], [y]),
            ("short", [y, x, y], [x, x]),
            ("long", [x, *filler], [y, *filler]),
            ("long", [x, y, *filler], [*filler, y]),
        ]
    df = spark.createDataFrame(
        rows, "g string, actual array<string>, predicted array<string>"
    ).repartition(3)
    assert _counted(spark, df, generated) == _expected_counts(rows)
