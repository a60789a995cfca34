"""One verdict per input on every engine path (issue 35).

The catalogue of ``tests/verdicts.py`` (drawn from the registry: every aggregate measure, on
tables of its inputs' kind with NULL lists, empty lists, duplicates, NULL elements, all-right and
all-wrong predictions, columns of the wrong type; every weight kind; extreme values of every
declared parameter) runs on DuckDB through ``mlsql.connect()`` and through ``mlsql.register()``
on a plain connection, on Polars eager and streaming, and on Spark. Every case must get one
verdict: the same value within 1e-12 relative, or the same mlsql message (read out of each
engine's wrapper). The README's suite runs a deterministic sample; the long test runs it all.

Cases that still differ are listed below with the item of the issue that fixes them: the test
fails when a listed case agrees (delete it from the list) or an unlisted one differs.
"""

from __future__ import annotations

import os

from mlsql._registry import measures
from tests import verdicts as V

# ------------------------------------------------------------------ known differences
#: issue 35's known differences, each being fixed in a branch of its own
SPARK_WEIGHTED_ACCURACY = "Spark weighted accuracy NULL when all wrong"
POLARS_N_LABELS_WRAPS = "Polars hamming_loss n_labels=2**63-1 wraps"
DUCKDB_ACCURACY_OF_LISTS = "DuckDB accuracy over two list columns returns 1.0"
ECE_N_BINS = "ECE n_bins=1000 crashes Polars/Spark"
SPARK_WEIGHT_TYPES = "Spark accepts text/boolean sample_weight"
SPARK_K_OVERFLOW = "Spark ranking k=10**12 CAST_OVERFLOW"
DUCKDB_WEIGHT_WITHOUT_K = "DuckDB ranking measures with sample_weight but no k fail to bind"
TEXT_FOR_LIST = "text column where a list belongs has different messages"

#: case id -> the issue item that fixes it (delete an entry once its fix is merged)
KNOWN_DIFFERENCES: dict[str, str] = {}

#: differences this catalogue found that are not on the issue's list and are not fixed here
#: (case id -> what differs); reported with the branch
NEW_DIFFERENCES: dict[str, str] = {}

#: the sample of the README's suite: every SAMPLE_STRIDE-th case of the catalogue
SAMPLE_STRIDE = 97

ENGINE_PATHS = {
    "duckdb": ("duckdb_connect", "duckdb_register"),
    "polars": ("polars_eager", "polars_streaming"),
    "spark": ("spark",),
}


def _paths() -> tuple[str, ...]:
    """The engine paths of this run (``MLSQL_TEST_ENGINES`` narrows a local run)."""
    chosen = os.environ.get("MLSQL_TEST_ENGINES")
    names = [e for e in ENGINE_PATHS if not chosen or e in chosen.split(",")]
    return tuple(p for e in names for p in ENGINE_PATHS[e])


def _check(chosen: list[V.Case]) -> None:
    paths = _paths()
    results = V.run_catalogue(chosen, paths)
    found = V.differences(results)
    listed = {**KNOWN_DIFFERENCES, **NEW_DIFFERENCES}
    ids = {c.id for c in chosen}
    unlisted = {k: v for k, v in found.items() if k not in listed}
    assert not unlisted, f"{len(unlisted)} cases differ:\n" + "\n".join(
        f"{k}: {v}" for k, v in list(unlisted.items())[:30]
    )
    if paths == V.PATHS:  # every path ran: each listed case in this run must still differ
        agree = sorted(k for k in listed if k in ids and k not in found)
        assert not agree, "these listed cases now agree; delete them from the lists:\n" + "\n".join(
            agree
        )


def test_the_catalogue_covers_every_aggregate_and_parameter() -> None:
    """Every aggregate of the registry is in the catalogue (or left out with a reason), on
    every table of its kind, and every declared parameter gets its extreme values."""
    all_cases = V.cases()
    named = {c.measure for c in all_cases}
    aggregates = {m.name for m in measures() if m.kind == "aggregate"}
    assert aggregates - named == set(V.LEFT_OUT)
    tried = {(c.measure, k) for c in all_cases for k, _ in c.params}
    declared = {(m.name, p.name) for m in V.catalogue_measures() for p in m.params if p.constraint}
    assert declared <= tried
    weighted = {(c.measure, c.weight) for c in all_cases}
    assert {
        (m.name, w) for m in V.catalogue_measures() if m.weighted for w in V.WEIGHTS
    } <= weighted
    assert len({c.id for c in all_cases}) == len(all_cases)


def test_listed_differences_are_cases_of_the_catalogue() -> None:
    ids = {c.id for c in V.cases()}
    listed = {**KNOWN_DIFFERENCES, **NEW_DIFFERENCES}
    assert not set(listed) - ids
    items = {v for k, v in globals().items() if k.isupper() and isinstance(v, str)}
    assert set(KNOWN_DIFFERENCES.values()) <= items


def test_messages_are_read_out_of_each_engines_wrapper() -> None:
    """DuckDB's and Spark's wrappers around mlsql's text; an engine's own error stays foreign."""
    from mlsql._errors import MlsqlError

    class InvalidInputException(Exception):
        pass

    class PySparkRuntimeError(Exception):
        pass

    text = "The 'beta' parameter of micro_fbeta must be a finite number > 0. Got 0 instead."
    assert V.verdict_of(MlsqlError(text)) == V.Verdict(error=text)
    assert V.verdict_of(InvalidInputException("Invalid Input Error: " + text)) == V.Verdict(
        error=text
    )
    spark = f"[USER_RAISED_EXCEPTION] {text} SQLSTATE: P0001\n== DataFrame ==\n..."
    assert V.verdict_of(PySparkRuntimeError(spark)) == V.Verdict(error=text)
    assert V.verdict_of(ValueError("Binder Error: no")).foreign
    assert not V.same(V.Verdict(error="x", foreign=True), V.Verdict(error="x", foreign=True))
    assert V.same(V.Verdict(value=0.1 + 0.2), V.Verdict(value=0.3))
    assert not V.same(V.Verdict(value=1.0), V.Verdict(value=1.0 + 1e-11))
    assert not V.same(V.Verdict(value=None), V.Verdict(value=0.0))
    assert V.same(V.Verdict(value=float("nan")), V.Verdict(value=float("nan")))


def test_a_sample_of_the_catalogue_has_one_verdict_per_case() -> None:
    """Every SAMPLE_STRIDE-th case, every engine path of the run."""
    _check(V.sample(V.cases(), SAMPLE_STRIDE))


def test_the_whole_catalogue_has_one_verdict_per_case() -> None:
    """Every case (long: tests/long.py)."""
    _check(V.cases())


def test_listed_crashes_still_abort_the_process() -> None:
    """Each case of ``V.CRASHES`` still kills a child process on its paths (long: one child
    per case and path); delete a case from the list once it gives a verdict there."""
    paths = set(_paths())
    survived = [
        f"{case} on {path}"
        for case, crashing in V.CRASHES.items()
        for path in crashing
        if path in paths and not V.aborts(case, path)
    ]
    assert not survived, "these no longer abort; delete them from CRASHES:\n" + "\n".join(survived)
