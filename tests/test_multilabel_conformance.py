"""Conformance: every micro, samples, subset, Hamming and counts figure, on every engine."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from tests.conftest import conformance
from tests.engines import label_table

#: Spark's cases are long as a whole (tests/conftest.py reads this): CI's long tests run
#: them; the README's suite, at 10 min 20 s with them, stays under ten minutes
LONG_ENGINES = ("spark",)

FILES = ["hivemall_blog_tags.json", "mldr_example.json", "gatto_51.json"]
REL = 1e-12


def close(got: Any, want: float) -> bool:
    return got is not None and math.isclose(got, want, rel_tol=REL, abs_tol=REL)


def measure_for(key: str) -> tuple[str, dict[str, Any]] | None:
    """Map a conformance key to (mlsql name, params); None for keys of other issues."""
    m = re.fullmatch(
        r"(micro|samples)\.(precision|recall|jaccard|f1|f2|f0\.5)(?:\[zd=(\d)\])?", key
    )
    if m:
        average, measure, zd = m.groups()
        params: dict[str, Any] = {} if zd is None else {"zero_division": int(zd)}
        if measure in ("f2", "f0.5"):
            return f"{average}_fbeta", {"beta": float(measure[1:]), **params}
        return f"{average}_{measure}", params
    if key in ("subset_accuracy", "zero_one_loss"):
        return key, {}
    return None


def cases() -> list[tuple[str, str, str, dict[str, Any], float]]:
    out = []
    for file in FILES:
        data = conformance(file)
        for key, want in data["expected"].items():
            found = measure_for(key)
            if found:
                out.append((file, key, *found, want))
        for key, want in data.get("expected_mldr_diagnose", {}).items():
            found = measure_for(key)
            if found:
                out.append(
                    (file, key + "[diagnose]", found[0], {"zero_division": "diagnose"}, want)
                )
        for key, want in data.get("expected_mldr_ignore", {}).items():
            found = measure_for(key)
            if found:
                out.append((file, key + "[ignore]", found[0], {"zero_division": "ignore"}, want))
    return out


def rows_of(file: str) -> list[tuple[Any, Any]]:
    return [(r["actual"], r["predicted"]) for r in conformance(file)["rows"]]


@pytest.mark.parametrize(("file", "key", "name", "params", "want"), cases(), ids=lambda v: str(v))
def test_conformance_value(engine, file, key, name, params, want):
    got = engine.aggregate(name, label_table(rows_of(file)), **params)
    assert close(got, want), f"{engine.name} {name}{params} on {file}: {got} != {want} ({key})"


@pytest.mark.parametrize("file", FILES)
def test_hamming_loss_and_counts(engine, file):
    data = conformance(file)
    expected = data["expected"]
    table = label_table(rows_of(file))
    got = engine.aggregate("hamming_loss", table, n_labels=expected["n_labels"])
    assert close(got, expected["hamming_loss"])
    counts = engine.counts(table)
    assert (counts["n_rows"], counts["tp"], counts["fp"], counts["fn"]) == (
        expected["n_rows"],
        expected["micro.tp"],
        expected["micro.fp"],
        expected["micro.fn"],
    )


def test_hivemall_published_fmeasure(engine):
    data = conformance("hivemall_blog_tags.json")
    table = label_table(rows_of("hivemall_blog_tags.json"))
    published = data["published"]
    assert close(engine.aggregate("fmeasure", table), published["fmeasure(actual, predicted)"])
    got = engine.aggregate("fmeasure", table, options="-beta 2.")
    assert close(got, published["fmeasure(actual, predicted, '-beta 2.')"])
