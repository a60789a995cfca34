"""slices() on DuckDB and Polars, against independent references (issue 33, first tranche).

References written here, never the code under test: each slice's rows and
measure from Python sets and exact fractions, the quantile edges from the
definition (SQL's percentile_disc), Benjamini-Hochberg and Holm from their
definitions and from statsmodels' ``multipletests``.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest

import mlsql
from mlsql._errors import MlsqlError
from mlsql._slices.stats import adjusted
from tests.conftest import _engines

LABELS = ["a", "b", "c", "d"]
ENGINES = _engines()
#: the engines whose error checks run in the README's suite (Spark's: a long test)
FAST_ENGINES = [e for e in ENGINES if e != "spark"]
#: Spark runs jobs of seconds each: its cases are long (tests/conftest.py reads this)
LONG_ENGINES = ("spark",)
COLUMNS = [
    "slice",
    "rows",
    "estimate",
    "low",
    "high",
    "difference",
    "diff_low",
    "diff_high",
    "p_value",
    "p_adjusted",
    "significant",
]


def run_slices(engine: str, data: pa.Table, *args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """``slices`` of ``engine`` on ``data``, as dicts by column."""
    if engine == "duckdb":
        out = mlsql.slices(data, *args, **kwargs)
        assert out.columns == COLUMNS
        rows = out.fetchall()
    elif engine == "polars":
        import polars as pl

        import mlsql.polars as mp

        frame = mp.slices(pl.from_arrow(data), *args, **kwargs)
        assert frame.columns == COLUMNS
        rows = frame.rows()
    else:
        import mlsql.spark as ms
        from tests.engines.spark_engine import frame as spark_frame

        result = ms.slices(spark_frame(data), *args, **kwargs)
        assert result.columns == COLUMNS
        rows = [tuple(r) for r in result.collect()]
    return [dict(zip(COLUMNS, r, strict=True)) for r in rows]


def simulate(seed: int, n: int, weak: str | None = None) -> pa.Table:
    """Documents with a language, a source and a length; labels true w.p. 1/2, each flipped
    w.p. 0.1 in the prediction (0.5 in the language ``weak``)."""
    rng = random.Random(seed)
    cols: dict[str, list[Any]] = {
        k: [] for k in ("lang", "source", "length", "w", "actual", "predicted")
    }
    for _ in range(n):
        lang = rng.choice(["de", "en", "fr", None])
        flip = 0.5 if lang == weak else 0.1
        actual = [x for x in LABELS if rng.random() < 0.5]
        cols["lang"].append(lang)
        cols["source"].append(rng.choice(["web", "news"]))
        cols["length"].append(None if rng.random() < 0.05 else rng.randint(1, 120))
        cols["w"].append(rng.choice([0.5, 1.0, 2.0]))
        cols["actual"].append(actual)
        cols["predicted"].append([x for x in LABELS if (x in actual) != (rng.random() < flip)])
    return pa.table(cols)


# ------------------------------------------------------------------ the oracle
def cuts_of(values: list[Any], n_bins: int) -> list[Any]:
    """Bin edges from the definition: the distinct percentile_disc(k / n_bins), k < n_bins,
    then the maximum (the last bin is closed)."""
    known = sorted(v for v in values if v is not None)
    n = len(known)
    lower = [known[max(math.ceil(Fraction(k * n, n_bins)) - 1, 0)] for k in range(n_bins)]
    return [*sorted(set(lower)), known[-1]]


def key_of(value: Any, cuts: list[Any] | None) -> tuple[Any, ...]:
    if value is None or cuts is None:
        return (value,)
    i = max(j for j in range(len(cuts) - 1) if cuts[j] <= value)
    return (cuts[i], cuts[i + 1], i == len(cuts) - 2)


def text_of(name: str, key: tuple[Any, ...]) -> str:
    if key[0] is None:
        return f"{name} is null"
    if len(key) == 1:
        return f"{name} = '{key[0]}'"
    return f"{name} in [{key[0]}, {key[1]}{']' if key[2] else ')'}"


def micro_f1(rows: list[tuple[list, list, float]]) -> Fraction:
    tp = sum(Fraction(w) * len(set(a) & set(p)) for a, p, w in rows)
    sizes = sum(Fraction(w) * (len(set(a)) + len(set(p))) for a, p, w in rows)
    return 2 * tp / sizes


def zero_one_loss(rows: list[tuple[list, list, float]]) -> Fraction:
    wrong = sum(Fraction(w) for a, p, w in rows if set(a) != set(p))
    return wrong / sum(Fraction(w) for _, _, w in rows)


def oracle(
    data: pa.Table,
    candidates: list[str],
    measure: Any,
    *,
    depth: int,
    n_bins: int,
    min_rows: int,
    weight: str | None = None,
) -> dict[str, tuple[int, Fraction, Fraction]]:
    """Per slice: (rows, measure of the slice, measure of the rest of the data)."""
    cols = data.to_pydict()
    n = data.num_rows
    cuts = {
        c: cuts_of(cols[c], n_bins)
        if isinstance(next(v for v in cols[c] if v is not None), int)
        else None
        for c in candidates
    }
    weights = cols[weight] if weight else [1] * n
    keys = {c: [key_of(v, cuts[c]) for v in cols[c]] for c in candidates}
    sets = [(c,) for c in candidates]
    if depth == 2:
        sets += [(a, b) for i, a in enumerate(candidates) for b in candidates[i + 1 :]]
    out = {}
    for group in sets:
        for value in {tuple(keys[c][i] for c in group) for i in range(n)}:
            inside = [
                all(keys[c][i] == v for c, v in zip(group, value, strict=True)) for i in range(n)
            ]
            rows = [(cols["actual"][i], cols["predicted"][i], weights[i]) for i in range(n)]
            part = [r for r, x in zip(rows, inside, strict=True) if x]
            rest = [r for r, x in zip(rows, inside, strict=True) if not x]
            if len(part) >= min_rows:
                text = " and ".join(text_of(c, v) for c, v in zip(group, value, strict=True))
                out[text] = (len(part), measure(part), measure(rest))
    return out


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("name", "reference", "weight"),
    [("micro_f1", micro_f1, None), ("zero_one_loss", zero_one_loss, "w")],
)
def test_estimates_are_the_measure_of_each_slice_and_of_the_rest(
    engine: str, name: str, reference: Any, weight: str | None
) -> None:
    data = simulate(1, 600)
    candidates = ["lang", "source", "length"]
    got = run_slices(
        engine,
        data,
        "actual",
        "predicted",
        candidates,
        name,
        depth=2,
        n_bins=3,
        min_rows=20,
        n_resamples=50,
        sample_weight=weight,
    )
    want = oracle(data, candidates, reference, depth=2, n_bins=3, min_rows=20, weight=weight)
    assert sorted(r["slice"] for r in got) == sorted(want)
    for row in got:
        rows, estimate, rest = want[row["slice"]]
        assert row["rows"] == rows
        assert row["estimate"] == pytest.approx(float(estimate), rel=1e-12)
        assert row["difference"] == pytest.approx(float(estimate - rest), rel=1e-12, abs=1e-15)
        assert row["low"] <= row["estimate"] <= row["high"]
        assert row["diff_low"] <= row["difference"] <= row["diff_high"]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_planted_weak_slice_is_found_and_flagged(engine: str) -> None:
    data = simulate(2, 2000, weak="fr")
    got = run_slices(engine, data, "actual", "predicted", ["source", "lang"], "micro_f1")
    assert got[0]["slice"] == "lang = 'fr'"
    assert got[0]["significant"] and got[0]["diff_high"] < 0
    # the source is independent of the language: no source slice differs from the rest
    assert not any(r["significant"] for r in got if r["slice"].startswith("source"))
    estimates = [r["estimate"] for r in got]
    assert estimates == sorted(estimates)  # from the worst: the lowest F1 first


@pytest.mark.parametrize("engine", ENGINES)
def test_a_loss_is_sorted_from_its_highest(engine: str) -> None:
    data = simulate(3, 1200, weak="de")
    got = run_slices(
        engine, data, "actual", "predicted", ["lang"], "zero_one_loss", n_resamples=200
    )
    assert got[0]["slice"] == "lang = 'de'" and got[0]["significant"]
    estimates = [r["estimate"] for r in got]
    assert estimates == sorted(estimates, reverse=True)


def bh_oracle(p: list[float]) -> list[float]:
    """Benjamini-Hochberg from its definition: min over j with p_j >= p_i of n p_j / rank_j."""
    n = len(p)
    rank = {i: 1 + sum(p[j] < p[i] or (p[j] == p[i] and j < i) for j in range(n)) for i in range(n)}
    return [
        min(1.0, min(n * p[j] / rank[j] for j in range(n) if rank[j] >= rank[i])) for i in range(n)
    ]


def holm_oracle(p: list[float]) -> list[float]:
    """Holm from its definition: max over j with rank_j <= rank_i of (n - rank_j + 1) p_j."""
    n = len(p)
    rank = {i: 1 + sum(p[j] < p[i] or (p[j] == p[i] and j < i) for j in range(n)) for i in range(n)}
    return [
        min(1.0, max((n - rank[j] + 1) * p[j] for j in range(n) if rank[j] <= rank[i]))
        for i in range(n)
    ]


@pytest.mark.parametrize("seed", range(5))
def test_adjustments_follow_their_definitions(seed: int) -> None:
    rng = random.Random(seed)
    p = [rng.choice([rng.random(), rng.random() / 50, 1.0]) for _ in range(rng.randint(1, 30))]
    assert adjusted(p, "bh") == pytest.approx(bh_oracle(p), rel=1e-12)
    assert adjusted(p, "holm") == pytest.approx(holm_oracle(p), rel=1e-12)
    with_none = [None, *p, None]
    assert adjusted(with_none, "bh") == [None, *adjusted(p, "bh"), None]


@pytest.mark.parametrize("seed", range(5))
def test_adjustments_equal_statsmodels(seed: int) -> None:
    from statsmodels.stats.multitest import multipletests

    rng = random.Random(100 + seed)
    p = [rng.random() ** 3 for _ in range(rng.randint(2, 40))]
    for ours, theirs in (("bh", "fdr_bh"), ("holm", "holm")):
        reject, corrected, _, _ = multipletests(p, alpha=0.05, method=theirs)
        assert adjusted(p, ours) == pytest.approx(list(corrected), rel=1e-12)
        assert [q <= 0.05 for q in adjusted(p, ours)] == list(reject)


def test_duckdb_and_polars_give_the_same_table() -> None:
    data = simulate(4, 800, weak="en")
    kwargs: dict[str, Any] = {
        "depth": 2,
        "n_bins": 4,
        "min_rows": 10,
        "n_resamples": 100,
        "sample_weight": "w",
        "adjust": "holm",
        "seed": 7,
    }
    candidates = ["lang", "length", "source"]
    duck = run_slices("duckdb", data, "actual", "predicted", candidates, "samples_f1", **kwargs)
    polar = run_slices("polars", data, "actual", "predicted", candidates, "samples_f1", **kwargs)
    assert duck == polar
    assert len(duck) > 20


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("values", "texts"),
    [
        # -0.0 and 0.0 are one number: Spark's percentile_disc wrote the edge -0.0
        ([1.5, -0.0, 0.0, 2.25], ["c in [0.0, 1.5)", "c in [1.5, 2.25]"]),
        # NaN sorts above every number (as the engines sort it): Polars' max skipped it, and
        # the edges were sorted in Python's arbitrary order of NaN
        ([math.nan, 1.0], ["c in [nan, nan]", "c in [1.0, nan)"]),
    ],
)
def test_a_numeric_candidate_s_edges_are_one_number_each(
    engine: str, values: list[float], texts: list[str]
) -> None:
    """The slices' texts, which also seed their streams, are the same in every engine; each
    slice's estimate is micro F1 of its rows (an exact fraction)."""
    n = 40
    data = pa.table(
        {
            "c": values * (n // len(values)),
            "actual": [["a"], ["a", "b"]] * (n // 2),
            "predicted": [["b"], ["a"]] * (n // 2),
        }
    )
    got = run_slices(
        engine, data, "actual", "predicted", "c", "micro_f1", n_resamples=20, min_rows=3
    )
    assert sorted(r["slice"] for r in got) == sorted(texts)
    rows = [
        (a, p, 1.0)
        for a, p in zip(data["actual"].to_pylist(), data["predicted"].to_pylist(), strict=True)
    ]
    for r in got:
        kept = [
            row for row, v in zip(rows, data["c"].to_pylist(), strict=True)
            if (math.isnan(v) if "[nan, nan]" in r["slice"] else not math.isnan(v) and (v >= 1.5) == ("[1.5" in r["slice"]))
        ]  # fmt: skip
        assert r["rows"] == len(kept)
        assert r["estimate"] == pytest.approx(float(micro_f1(kept)), rel=1e-12)


@pytest.mark.parametrize("engine", ENGINES)
def test_an_empty_column_name_names_no_column(engine: str) -> None:
    """Even where the frame has a column named '' (Spark raised a raw TypeError quoting it;
    DuckDB and Polars' Arrow import rename such a column)."""
    data = pa.table({"": ["de", "en"] * 20, "actual": [["a"]] * 40, "predicted": [["a"]] * 40})
    with pytest.raises(MlsqlError, match="the candidates column '' is not in the source"):
        run_slices(engine, data, "actual", "predicted", "", "micro_f1", n_resamples=5)


@pytest.mark.parametrize("engine", ENGINES)
def test_hostile_column_names_are_only_names(engine: str) -> None:
    hostile = 'x"); DROP TABLE t; --'
    data = simulate(5, 300, weak="de")
    data = data.rename_columns(
        [
            hostile if c == "lang" else "p'q" if c == "predicted" else "*" if c == "length" else c
            for c in data.column_names
        ]
    )
    got = run_slices(engine, data, "actual", "p'q", [hostile, "*"], "micro_f1", n_resamples=50)
    texts = {r["slice"] for r in got}
    assert '"x""); DROP TABLE t; --" = \'de\'' in texts
    assert any(t.startswith('"*" in [') for t in texts)
    plain = run_slices(
        engine,
        simulate(5, 300, weak="de"),
        "actual",
        "predicted",
        ["lang"],
        "micro_f1",
        n_resamples=50,
    )
    [de] = [r for r in plain if r["slice"] == "lang = 'de'"]
    [hostile_de] = [r for r in got if r["slice"].endswith("= 'de'")]
    assert hostile_de["estimate"] == de["estimate"] and hostile_de["rows"] == de["rows"]


#: bad calls of slices and the message each gives
BAD_CALLS: list[tuple[dict[str, Any], str]] = [
    ({"candidates": []}, "The 'candidates' parameter of slices"),
    ({"candidates": ["actual"]}, "The 'candidates' parameter of slices"),
    ({"candidates": ["nope"]}, "nope"),
    ({"depth": 3}, "The 'depth' parameter of slices must be 1 or 2. Got 3 instead."),
    ({"n_bins": 1}, "The 'n_bins' parameter of slices"),
    ({"min_rows": 0}, "The 'min_rows' parameter of slices"),
    ({"adjust": "bonferroni"}, "The 'adjust' parameter of slices must be 'bh'"),
    ({"measure": "ndcg"}, "slices cannot resample ndcg: it resamples aggregate measures"),
    ({"measure": "confusion_matrix"}, "Per-label tables and ranking measures give no"),
    ({"measure": ("macro_f1", {"by": "lang"})}, "drop by from macro_f1"),
    ({"n_resamples": 1}, "The 'n_resamples' parameter of slices"),
    *(
        (
            {"min_weight": bad},
            f"The 'min_weight' parameter of slices must be None or a finite number >= 0. "
            f"Got {bad!r} instead.",
        )
        for bad in (-1, float("nan"), float("inf"), True, "5")
    ),
]


@pytest.mark.parametrize(("kwargs", "message"), BAD_CALLS)
def test_every_engine_gives_the_same_error(kwargs: dict[str, Any], message: str) -> None:
    same_error(FAST_ENGINES, kwargs, message)


@pytest.mark.long
def test_spark_gives_the_same_errors() -> None:
    for kwargs, message in BAD_CALLS:
        same_error(["duckdb", "spark"], kwargs, message)


def same_error(engines: list[str], kwargs: dict[str, Any], message: str) -> None:
    """Each engine of ``engines`` raises one message holding ``message``."""
    data = simulate(6, 40)
    args = {"candidates": ["lang"], "measure": "micro_f1", **kwargs}
    candidates, measure = args.pop("candidates"), args.pop("measure")
    messages = set()
    for engine in engines:
        with pytest.raises(MlsqlError) as err:
            run_slices(engine, data, "actual", "predicted", candidates, measure, **args)
        assert message in str(err.value)
        messages.add(str(err.value))
    assert len(messages) == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_min_rows_leaves_small_slices_out(engine: str) -> None:
    data = simulate(7, 200)
    counts = {v: data.column("lang").to_pylist().count(v) for v in ("de", "en", "fr", None)}
    limit = sorted(counts.values())[1]
    got = run_slices(
        engine, data, "actual", "predicted", ["lang"], "micro_f1", min_rows=limit, n_resamples=20
    )
    assert sorted(r["rows"] for r in got) == sorted(c for c in counts.values() if c >= limit)


@pytest.mark.parametrize("engine", ENGINES)
def test_few_values_whole_data_slices_and_no_rows(engine: str) -> None:
    """A numeric column of two values keeps two bins (the last one [2.25, 2.25]); a slice
    that is all the data has no rest to differ from; no rows give no slices."""
    from decimal import Decimal

    data = pa.table(
        {
            "one": ["x"] * 40,
            "dec": [Decimal("1.50"), Decimal("2.25")] * 20,
            "actual": [["a"]] * 40,
            "predicted": [["a"], ["b"]] * 20,
        }
    )
    got = run_slices(engine, data, "actual", "predicted", ["one", "dec"], "micro_f1", min_rows=1)
    by_text = {r["slice"]: r for r in got}
    assert sorted(by_text) == ["dec in [1.50, 2.25)", "dec in [2.25, 2.25]", "one = 'x'"]
    assert by_text["dec in [1.50, 2.25)"]["estimate"] == 1.0  # every 1.50 row is right
    assert by_text["dec in [2.25, 2.25]"]["difference"] == -1.0
    whole = by_text["one = 'x'"]
    assert whole["estimate"] == 0.5 and whole["difference"] is None and whole["p_value"] is None
    assert not whole["significant"]
    empty = run_slices(engine, data.slice(0, 0), "actual", "predicted", ["one", "dec"], "micro_f1")
    assert empty == []


@pytest.mark.parametrize("engine", ENGINES)
def test_one_label_per_row_measures_are_scikit_learns_per_slice(engine: str) -> None:
    """accuracy and balanced accuracy of each language, weighted, and of the rest: scikit-learn's."""
    from sklearn.metrics import accuracy_score, balanced_accuracy_score

    rng = random.Random(8)
    lang = [rng.choice(["de", "en", None]) for _ in range(500)]
    actual = [rng.choice(["x", "y", "z"]) for _ in range(500)]
    right = {"de": 0.5, "en": 0.9, None: 0.8}
    predicted = [
        a if rng.random() < right[g] else rng.choice(["x", "y", "z"])
        for a, g in zip(actual, lang, strict=True)
    ]
    w = [rng.choice([0.5, 1.0, 3.0]) for _ in range(500)]
    data = pa.table({"lang": lang, "actual": actual, "predicted": predicted, "w": w})
    texts = {"lang = 'de'": "de", "lang = 'en'": "en", "lang is null": None}
    for name, reference in (
        ("accuracy", accuracy_score),
        ("balanced_accuracy_score", balanced_accuracy_score),
    ):
        got = run_slices(
            engine, data, "actual", "predicted", ["lang"], name, sample_weight="w", n_resamples=50
        )
        assert got[0]["slice"] == "lang = 'de'"
        for row in got:
            inside = [g == texts[row["slice"]] for g in lang]
            values = []
            for keep in (inside, [not x for x in inside]):
                pick = [i for i, k in enumerate(keep) if k]
                values.append(
                    reference(
                        [actual[i] for i in pick],
                        [predicted[i] for i in pick],
                        sample_weight=[w[i] for i in pick],
                    )
                )
            assert row["rows"] == sum(inside)
            assert row["estimate"] == pytest.approx(values[0], rel=1e-12)
            assert row["difference"] == pytest.approx(values[0] - values[1], rel=1e-12)


# ------------------------------------------------------------------ every family bootstrap takes
def simulate_numbers(seed: int, n: int) -> pa.Table:
    """Rows with a language and a length; a number y and its prediction (worse for 'de'); a 0/1
    label and a probability score (less informative for 'de'); a weight."""
    rng = random.Random(seed)
    cols: dict[str, list[Any]] = {
        k: [] for k in ("lang", "length", "y", "yhat", "label", "score", "w")
    }
    for _ in range(n):
        lang = rng.choice(["de", "en", "fr"])
        noise = 2.0 if lang == "de" else 0.5
        y = rng.gauss(0.0, 3.0)
        label = int(rng.random() < 0.4)
        signal = 0.1 if lang == "de" else 0.35
        cols["lang"].append(lang)
        cols["length"].append(rng.randint(1, 90))
        cols["y"].append(y)
        cols["yhat"].append(y + rng.gauss(0.0, noise))
        cols["label"].append(label)
        # within [0.01, 0.99]: log loss clips 0 and 1, scikit-learn by another epsilon
        cols["score"].append(
            min(0.99, max(0.01, 0.4 + signal * (2 * label - 1) + rng.gauss(0, 0.2)))
        )
        cols["w"].append(rng.choice([0.5, 1.0, 2.0]))
    return pa.table(cols)


def lang_slices(values: list[Any]) -> dict[str, list[bool]]:
    """Each language's slice text and which rows it holds."""
    out = {f"lang = '{v}'": [x == v for x in values] for v in sorted(set(values) - {None})}
    if None in values:
        out["lang is null"] = [x is None for x in values]
    return out


def check_against(
    got: list[dict[str, Any]], inside_of: dict[str, list[bool]], reference: Any
) -> None:
    """Each slice's estimate is ``reference`` of its rows, the difference that minus the rest's."""
    assert sorted(r["slice"] for r in got if r["slice"] in inside_of) == sorted(inside_of)
    for row in got:
        if row["slice"] not in inside_of:
            continue
        inside = inside_of[row["slice"]]
        part = reference([i for i, x in enumerate(inside) if x])
        rest = reference([i for i, x in enumerate(inside) if not x])
        assert row["rows"] == sum(inside)
        assert row["estimate"] == pytest.approx(part, rel=1e-9, abs=1e-12)
        assert row["difference"] == pytest.approx(part - rest, rel=1e-9, abs=1e-12)
        assert row["low"] <= row["estimate"] <= row["high"]
        assert row["diff_low"] <= row["difference"] <= row["diff_high"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", ["macro_f1", "weighted_recall", "label_accuracy_macro"])
def test_macro_and_weighted_averages_are_each_slices_own(engine: str, name: str) -> None:
    """The per-label averages of each language's rows, weighted, and of the rest: from Python
    sets and exact fractions, over the labels present in those rows (as scikit-learn's
    binarizer fitted on them gives; label accuracy per label: right rows / rows)."""
    data = simulate(9, 400, weak="de")
    cols = data.to_pydict()
    w = cols["w"]

    def reference(pick: list[int]) -> float:
        labels = sorted({x for i in pick for x in (*cols["actual"][i], *cols["predicted"][i])})
        values, supports = [], []
        for x in labels:
            tp = fp = fn = tn = Fraction(0)
            for i in pick:
                a, p, wi = x in cols["actual"][i], x in cols["predicted"][i], Fraction(w[i])
                tp += wi * (a and p)
                fp += wi * (p and not a)
                fn += wi * (a and not p)
                tn += wi * (not a and not p)
            if name == "macro_f1":
                values.append(2 * tp / (2 * tp + fp + fn))
            elif name == "weighted_recall":
                values.append(tp / (tp + fn) if tp + fn else Fraction(0))
                supports.append(tp + fn)
            else:
                values.append((tp + tn) / (tp + fp + fn + tn))
        if supports:
            return float(sum(v * s for v, s in zip(values, supports, strict=True)) / sum(supports))
        return float(sum(values) / len(values))

    got = run_slices(
        engine, data, "actual", "predicted", ["lang"], name, sample_weight="w", n_resamples=60
    )
    check_against(got, lang_slices(cols["lang"]), reference)


@pytest.mark.parametrize("engine", ENGINES)
def test_regression_measures_are_scikit_learns_per_slice(engine: str) -> None:
    from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score

    data = simulate_numbers(10, 600)
    cols = data.to_pydict()
    texts = lang_slices(cols["lang"])
    for name, metric in (
        ("mse", mean_squared_error),
        ("r2", r2_score),
        ("mae", mean_absolute_error),
    ):

        def reference(pick: list[int], metric: Any = metric) -> float:
            return float(
                metric(
                    [cols["y"][i] for i in pick],
                    [cols["yhat"][i] for i in pick],
                    sample_weight=[cols["w"][i] for i in pick],
                )
            )

        got = run_slices(
            engine, data, "y", "yhat", ["lang", "length"], name, sample_weight="w", n_resamples=60
        )
        check_against(got, texts, reference)
        assert got[0]["slice"] == "lang = 'de'"  # the noisiest predictions: the worst


@pytest.mark.parametrize("engine", ENGINES)
def test_score_measures_are_scikit_learns_per_slice(engine: str) -> None:
    from sklearn.metrics import average_precision_score, log_loss, roc_auc_score

    data = simulate_numbers(11, 600)
    cols = data.to_pydict()
    texts = lang_slices(cols["lang"])
    for name, metric in (
        ("auc", roc_auc_score),
        ("average_precision_score", average_precision_score),
        ("logloss", log_loss),
    ):

        def reference(pick: list[int], metric: Any = metric) -> float:
            return float(
                metric(
                    [cols["label"][i] for i in pick],
                    [cols["score"][i] for i in pick],
                    sample_weight=[cols["w"][i] for i in pick],
                )
            )

        got = run_slices(
            engine, data, "label", "score", ["lang"], name, sample_weight="w", n_resamples=60
        )
        check_against(got, texts, reference)
        assert got[0]["slice"] == "lang = 'de'"


@pytest.mark.skipif(len(ENGINES) < 2, reason="compares DuckDB with Polars")
@pytest.mark.parametrize(
    ("actual", "predicted", "measure"),
    [
        ("actual", "predicted", "macro_f1"),
        ("actual", "predicted", ("weighted_fbeta", {"beta": 2.0})),
        ("y", "yhat", "r2"),
        ("y", "yhat", "rae"),
        ("label", "score", "auc"),
        ("label", "score", ("expected_calibration_error", {"n_bins": 5})),
    ],
)
def test_duckdb_and_polars_give_the_same_table_for_every_family(
    actual: str, predicted: str, measure: Any
) -> None:
    data = simulate(12, 300, weak="en")
    numbers = simulate_numbers(12, 300)
    data = data.append_column("lang2", numbers.column("lang"))
    for name in ("y", "yhat", "label", "score"):
        data = data.append_column(name, numbers.column(name))
    kwargs: dict[str, Any] = {
        "depth": 2,
        "n_bins": 3,
        "min_rows": 10,
        "n_resamples": 40,
        "sample_weight": "w",
        "seed": 3,
    }
    candidates = ["lang", "lang2", "length"]
    duck = run_slices("duckdb", data, actual, predicted, candidates, measure, **kwargs)
    polar = run_slices("polars", data, actual, predicted, candidates, measure, **kwargs)
    assert duck == polar
    assert len(duck) > 15


def test_more_tuples_than_the_bound_give_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tuples a call holds are bounded (the regression measures have one per row): past
    the bound, every engine says so in the same words."""
    from mlsql._slices import front

    data = simulate_numbers(13, 100)
    # 100 rows of distinct numbers: 100 tuples in all the data, 100 over lang's slices
    monkeypatch.setattr(front, "MAX_TUPLES", 199)
    messages = set()
    for engine in FAST_ENGINES:  # Spark's: test_spark_bounds_the_tuples_and_checks_numbers
        with pytest.raises(MlsqlError) as err:
            run_slices(engine, data, "y", "yhat", ["lang"], "mse", n_resamples=10, min_rows=1)
        messages.add(str(err.value))
    assert messages == {
        "slices holds the statistic tuples of every slice in memory, at most 199; mse has more "
        "here (its tuples are about one per row: its exact resamples need each row's numbers, "
        "in each grouping set and in all the data). Slice a sample of the rows (the intervals "
        "are then the sample's), or fewer candidates or depth 1."
    }
    monkeypatch.setattr(front, "MAX_TUPLES", 200)
    for engine in FAST_ENGINES:
        got = run_slices(engine, data, "y", "yhat", ["lang"], "mse", n_resamples=10, min_rows=1)
        assert len(got) == 3


@pytest.mark.parametrize(
    ("column", "value", "measure", "message"),
    [
        ("y", math.nan, "mse", "slices takes finite numbers for actual"),
        ("yhat", math.inf, "r2", "slices takes finite numbers for predicted"),
        ("label", 2, "auc", "slices takes boolean or 0/1 values. Got 2 instead."),
        ("score", 1.5, "brier_score_loss", "slices takes probabilities in [0, 1] for predicted"),
    ],
)
@pytest.mark.parametrize("min_rows", [1, 1000])
def test_bad_numbers_give_one_error_even_without_slices(
    column: str, value: Any, measure: str, message: str, min_rows: int
) -> None:
    """The values are checked as bootstrap checks them, in the same words in every engine,
    whether or not a slice has enough rows to be kept."""
    cols = simulate_numbers(14, 60).to_pydict()
    cols[column][5] = value
    actual, predicted = ("y", "yhat") if column in ("y", "yhat") else ("label", "score")
    messages = set()
    for engine in FAST_ENGINES:  # Spark's: test_spark_bounds_the_tuples_and_checks_numbers
        with pytest.raises(MlsqlError) as err:
            run_slices(
                engine,
                pa.table(cols),
                actual,
                predicted,
                ["lang"],
                measure,
                n_resamples=10,
                min_rows=min_rows,
            )
        assert message in str(err.value)
        messages.add(str(err.value))
    assert len(messages) == 1


@pytest.mark.parametrize("engine", ENGINES)
def test_min_weight_leaves_out_slices_of_little_weight(engine: str) -> None:
    """Slices whose summed weight (a plain-Python sum here) is below min_weight are left out,
    at the bound itself kept; without sample_weight a row weighs 1."""
    data = simulate(9, 300)
    langs, w = data.column("lang").to_pylist(), data.column("w").to_pylist()
    weight = {
        v: sum(Fraction(x) for g, x in zip(langs, w, strict=True) if g == v) for v in set(langs)
    }
    count = {v: langs.count(v) for v in set(langs)}
    texts = {v: "lang is null" if v is None else f"lang = '{v}'" for v in set(langs)}
    bound = sorted(weight.values())[1]  # the second smallest weight: one slice goes
    common = {"min_rows": 1, "n_resamples": 20}
    got = run_slices(
        engine,
        data,
        "actual",
        "predicted",
        ["lang"],
        "micro_f1",
        sample_weight="w",
        min_weight=float(bound),
        **common,
    )
    assert sorted(r["slice"] for r in got) == sorted(texts[v] for v in weight if weight[v] >= bound)
    unweighted_bound = sorted(count.values())[2]
    got = run_slices(
        engine,
        data,
        "actual",
        "predicted",
        ["lang"],
        "micro_f1",
        min_weight=unweighted_bound,
        **common,
    )
    assert sorted(r["slice"] for r in got) == sorted(
        texts[v] for v in count if count[v] >= unweighted_bound
    )


@pytest.mark.long
@pytest.mark.skipif("spark" not in ENGINES, reason="pyspark is not installed")
def test_spark_bounds_the_tuples_and_checks_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    """ms.slices collects at most the bound's tuples (one more, to know), in DuckDB's words, and
    refuses a bad number as bootstrap does (long)."""
    from mlsql._slices import front

    data = simulate_numbers(13, 100)
    monkeypatch.setattr(front, "MAX_TUPLES", 199)
    with pytest.raises(MlsqlError) as err:
        run_slices("spark", data, "y", "yhat", ["lang"], "mse", n_resamples=10, min_rows=1)
    with pytest.raises(MlsqlError) as want:
        run_slices("duckdb", data, "y", "yhat", ["lang"], "mse", n_resamples=10, min_rows=1)
    assert str(err.value) == str(want.value)
    monkeypatch.setattr(front, "MAX_TUPLES", 200)
    got = run_slices("spark", data, "y", "yhat", ["lang"], "mse", n_resamples=10, min_rows=1)
    assert got == run_slices(
        "duckdb", data, "y", "yhat", ["lang"], "mse", n_resamples=10, min_rows=1
    )
    cols = data.to_pydict()
    cols["score"][5] = 1.5
    with pytest.raises(MlsqlError) as err:
        run_slices("spark", pa.table(cols), "label", "score", ["lang"], "brier_score_loss")
    assert "slices takes probabilities in [0, 1] for predicted" in str(err.value)


@pytest.mark.long
def test_every_engine_gives_the_same_table() -> None:
    """DuckDB, Polars and Spark: the same slices, rows, estimates and differences, and (the same
    tuples resampled by the same core with the same seed) the same intervals and p-values."""
    data = simulate(10, 900, weak="fr")
    kwargs: dict[str, Any] = {
        "depth": 2,
        "n_bins": 3,
        "min_rows": 15,
        "min_weight": 20.0,
        "n_resamples": 200,
        "sample_weight": "w",
        "seed": 3,
    }
    candidates = ["lang", "length", "source"]
    tables = {
        engine: run_slices(engine, data, "actual", "predicted", candidates, "micro_f1", **kwargs)
        for engine in ENGINES
    }
    want = oracle(data, candidates, micro_f1, depth=2, n_bins=3, min_rows=15, weight="w")
    first = tables[ENGINES[0]]
    assert 20 < len(first) <= len(want)
    for engine, got in tables.items():
        assert got == first, engine
    assert first[0]["slice"].startswith("lang = 'fr'") and first[0]["significant"]


# ------------------------------------------------------------------ the SQL table function
def sql_value(value: Any) -> str:
    """A Python value as a SQL literal (test-local: lists, text, booleans, numbers)."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(sql_value(v) for v in value) + "]"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value)


def sql_slices(con: Any, source: str, actual: str, predicted: str, **kwargs: Any) -> list[tuple]:
    """``FROM slices(...)`` with every argument after the first three by name."""
    named = "".join(f", {k} := {sql_value(v)}" for k, v in kwargs.items())
    args = ", ".join(sql_value(x) for x in (source, actual, predicted))
    relation = con.sql(f"FROM slices({args}{named})")
    assert relation.columns == COLUMNS
    return relation.fetchall()


@pytest.fixture(scope="module")
def sql_con() -> Any:
    return mlsql.connect()


def test_sql_slices_is_the_python_table(sql_con: Any) -> None:
    data = simulate(11, 700, weak="de")
    sql_con.execute("CREATE OR REPLACE TABLE sql_preds AS SELECT * FROM data")
    kwargs: dict[str, Any] = {
        "depth": 2,
        "n_bins": 3,
        "min_rows": 15,
        "min_weight": 20,
        "sample_weight": "w",
        "n_resamples": 100,
        "confidence": 0.9,
        "seed": 5,
        "adjust": "holm",
    }
    candidates = ["lang", "length", "source"]
    got = sql_slices(
        sql_con,
        "sql_preds",
        "actual",
        "predicted",
        candidates=candidates,
        measure="micro_f1",
        **kwargs,
    )
    want = [
        tuple(r.values())
        for r in run_slices("duckdb", data, "actual", "predicted", candidates, "micro_f1", **kwargs)
    ]
    assert got == want and len(got) > 20
    # estimates: the oracle's (not the code under test's)
    oracle_rows = oracle(data, candidates, micro_f1, depth=2, n_bins=3, min_rows=15, weight="w")
    for row in got:
        assert row[2] == pytest.approx(float(oracle_rows[row[0]][1]), rel=1e-12)
    # one name, and a measure's own parameter
    one = sql_slices(
        sql_con,
        "sql_preds",
        "actual",
        "predicted",
        candidates="lang",
        measure="micro_fbeta",
        beta=2,
        n_resamples=50,
    )
    fbeta = run_slices(
        "duckdb",
        data,
        "actual",
        "predicted",
        ["lang"],
        ("micro_fbeta", {"beta": 2}),
        n_resamples=50,
    )
    assert one == [tuple(r.values()) for r in fbeta]


def test_sql_slices_hostile_names_are_only_names(sql_con: Any) -> None:
    hostile = 'x"); DROP TABLE sql_keep; --'
    table = "t'); DROP TABLE sql_keep; --"
    data = simulate(12, 300, weak="de")
    renamed = data.rename_columns(
        [hostile if c == "lang" else "p'q" if c == "predicted" else c for c in data.column_names]
    )
    sql_con.execute("CREATE OR REPLACE TABLE sql_keep AS SELECT 1 AS one")
    sql_con.register("hostile_data", renamed)
    sql_con.execute(f"CREATE OR REPLACE TABLE {quote(table)} AS SELECT * FROM hostile_data")
    sql_con.unregister("hostile_data")
    got = sql_slices(
        sql_con,
        table,
        "actual",
        "p'q",
        candidates=hostile,
        measure="micro_f1",
        sample_weight="w",
        n_resamples=50,
    )
    plain = run_slices(
        "duckdb",
        data,
        "actual",
        "predicted",
        ["lang"],
        "micro_f1",
        sample_weight="w",
        n_resamples=50,
    )
    # the same rows, estimates and differences (the intervals draw from each slice's text)
    assert [(r[1], r[2], r[5]) for r in got] == [
        (r["rows"], r["estimate"], r["difference"]) for r in plain
    ]
    assert '"x""); DROP TABLE sql_keep; --" = \'de\'' in {r[0] for r in got}
    assert sql_con.execute("SELECT one FROM sql_keep").fetchall() == [(1,)]


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (k, m)
        for k, m in BAD_CALLS
        # SQL has no non-finite literal here, nor a (measure, parameters) pair
        if not any(isinstance(v, float) and not math.isfinite(v) for v in k.values())
        and not isinstance(k.get("measure"), tuple)
    ],
)
def test_sql_slices_gives_the_python_error(
    sql_con: Any, kwargs: dict[str, Any], message: str
) -> None:
    import duckdb

    data = simulate(6, 40)
    sql_con.execute("CREATE OR REPLACE TABLE sql_small AS SELECT * FROM data")
    args = {"candidates": ["lang"], "measure": "micro_f1", **kwargs}
    python_args = dict(args)
    candidates, measure = python_args.pop("candidates"), python_args.pop("measure")
    with pytest.raises(MlsqlError) as python_error:
        run_slices("duckdb", data, "actual", "predicted", candidates, measure, **python_args)
    with pytest.raises(duckdb.Error) as sql_error:
        sql_slices(sql_con, "sql_small", "actual", "predicted", **args)
    assert message in str(python_error.value)
    assert str(sql_error.value) == f"Invalid Input Error: {python_error.value}"


def test_sql_slices_of_a_registered_frame_says_what_it_reads(sql_con: Any) -> None:
    """Its cursor does not see the connection's registered frames (nor TEMP tables): the
    error says so and names the Python call that reads them (it said only that the table
    does not exist)."""
    import duckdb

    sql_con.register("sql_registered", simulate(6, 40))
    try:
        with pytest.raises(duckdb.Error, match="not TEMP tables or frames registered"):
            sql_slices(sql_con, "sql_registered", "actual", "predicted", candidates="lang",
                       measure="micro_f1")  # fmt: skip
    finally:
        sql_con.unregister("sql_registered")


@pytest.mark.long
def test_sql_slices_on_a_database_file_writes_nothing_into_it(tmp_path: Any) -> None:
    import duckdb

    path = str(tmp_path / "preds.duckdb")
    data = simulate(13, 200)
    con = mlsql.connect(path)
    con.execute("CREATE TABLE preds AS SELECT * FROM data")
    got = sql_slices(
        con,
        "preds",
        "actual",
        "predicted",
        candidates="source",
        measure="micro_f1",
        n_resamples=20,
        min_rows=1,
    )
    assert got == [
        tuple(r.values())
        for r in run_slices(
            "duckdb",
            data,
            "actual",
            "predicted",
            ["source"],
            "micro_f1",
            n_resamples=20,
            min_rows=1,
        )
    ]
    con.close()
    with duckdb.connect(path) as plain:
        names = plain.execute(
            "SELECT function_name FROM duckdb_functions() WHERE function_name = 'slices'"
        ).fetchall()
    assert names == []


def test_a_slice_and_its_rest_are_one_draw_of_their_grouping_set() -> None:
    """The resamples follow the documented scheme (``mlsql._slices.stats.resample``), by an
    oracle written from the rows: each slice draws Poisson(m) per distinct (tp, |A|, |P|)
    from its own stream, what ``min_rows`` left out from the set's, and the rest is the
    set's draws minus the slice's (the old code drew the rest anew: other numbers)."""
    import numpy as np

    from mlsql._resample.run import stream

    rng = random.Random(5)
    langs, actual, predicted = [], [], []
    for i in range(260):
        langs.append("de" if i % 2 else "en" if i < 250 else "fr")  # fr: 5 rows, left out
        a = set(rng.sample(LABELS, rng.randint(1, 3)))
        p = {x for x in a if rng.random() < 0.7} | set(rng.sample(LABELS, rng.randint(0, 1)))
        actual.append(sorted(a))
        predicted.append(sorted(p))
    data = pa.table({"lang": langs, "actual": actual, "predicted": predicted})
    n_resamples, seed = 60, 3
    got = run_slices(
        "duckdb", data, "actual", "predicted", "lang", "micro_f1",
        n_resamples=n_resamples, confidence=0.9, seed=seed,
    )  # fmt: skip

    def tuples(keep: Any) -> dict[tuple[int, int, int, float], int]:
        out: dict[tuple[int, int, int, float], int] = {}
        for lang, a, p in zip(langs, actual, predicted, strict=True):
            if keep(lang):
                t = (len(set(a) & set(p)), len(set(a)), len(set(p)), 1.0)
                out[t] = out.get(t, 0) + 1
        return out

    def f1(draws: Any, keys: list[tuple[int, int, int, float]]) -> Any:
        stats = np.array([k[:3] for k in keys], dtype=float)
        tp, n_a, n_p = (draws @ stats).T
        return 2 * tp / (n_a + n_p)

    left = tuples(lambda lang: lang == "fr")
    left_keys = sorted(left)
    left_draws = stream(seed, (0, "rest")).poisson(
        [left[k] for k in left_keys], (n_resamples, len(left_keys))
    )
    sides = {}
    for lang in ("de", "en"):
        mine = tuples(lambda x, lang=lang: x == lang)
        keys = sorted(mine)
        text = f"lang = '{lang}'"
        sides[text] = (
            keys,
            stream(seed, (text,)).poisson([mine[k] for k in keys], (n_resamples, len(keys))),
        )
    every = sorted(tuples(lambda _: True))
    total = np.zeros((n_resamples, len(every)))
    spread = [(left_keys, left_draws), *sides.values()]
    for keys, draws in spread:
        total[:, [every.index(k) for k in keys]] += draws
    for row in got:
        keys, draws = sides[row["slice"]]
        value = f1(draws, keys)
        placed = np.zeros_like(total)
        placed[:, [every.index(k) for k in keys]] = draws
        diffs = value - f1(total - placed, every)
        assert [row["low"], row["high"]] == pytest.approx(list(np.quantile(value, [0.05, 0.95])))
        assert [row["diff_low"], row["diff_high"]] == pytest.approx(
            list(np.quantile(diffs, [0.05, 0.95]))
        )
    assert sorted(r["slice"] for r in got) == ["lang = 'de'", "lang = 'en'"]


@pytest.mark.parametrize(
    ("actual", "predicted", "measure"), [("y", "yhat", "mae"), ("label", "score", "auc")]
)
def test_native_and_portable_draws_give_the_same_table(
    monkeypatch: pytest.MonkeyPatch, actual: str, predicted: str, measure: str
) -> None:
    """The per-row measures draw Poisson(1) by the C kernel or by numpy: the same numbers, so
    the same table, intervals included (weights too, where some tuples repeat)."""
    data = simulate_numbers(21, 400)
    cols = data.to_pydict()
    for i in range(100):  # repeated tuples: m > 1
        cols[actual][i], cols[predicted][i] = cols[actual][i % 5], cols[predicted][i % 5]
    data = pa.table(cols)
    kwargs: dict[str, Any] = {"depth": 2, "n_resamples": 200, "sample_weight": "w"}
    native = run_slices("duckdb", data, actual, predicted, ["lang", "length"], measure, **kwargs)
    monkeypatch.setenv("MLSQL_NATIVE", "0")
    portable = run_slices("duckdb", data, actual, predicted, ["lang", "length"], measure, **kwargs)
    assert native == portable
    assert len(native) > 5
