"""The C set-count kernel (native/kernel.h) under AddressSanitizer and UBSan, against a Python oracle.

A small C driver reads cases (text or integer label lists) from stdin, copies
every text label into its own exactly-sized allocation (so a read one byte
too far is a sanitizer error), counts each case with one reused scratch
buffer, and prints tp, |A|, |P|. Random cases cover both of the kernel's
methods (pairwise for short lists, the hash table for long ones), duplicates,
empty and embedded-NUL labels, and integers chosen to collide in the hash
table. The DuckDB extension also runs under AddressSanitizer in a
subprocess (libasan preloaded into Python).
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.test_native_duckdb import build_module

ROOT = Path(__file__).resolve().parents[1]
GCC = shutil.which("gcc")
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel.h"

static int hexval(int c) { return c <= '9' ? c - '0' : c - 'a' + 10; }

/* one label: "-" is empty, else hex bytes; stored in its own exact-size allocation */
static mlsql_text read_text(void) {
    char buf[4096];
    if (scanf("%4095s", buf) != 1) exit(3);
    if (strcmp(buf, "-") == 0) return mlsql_text_make(NULL, 0);
    size_t n = strlen(buf) / 2;
    char *p = malloc(n);
    for (size_t i = 0; i < n; i++) p[i] = (char)(hexval(buf[2 * i]) * 16 + hexval(buf[2 * i + 1]));
    return mlsql_text_make(p, n);
}

int main(void) {
    mlsql_scratch s = {0};
    char kind[2];
    size_t na, np;
    while (scanf("%1s %zu %zu", kind, &na, &np) == 3) {
        mlsql_counts c;
        int rc;
        if (kind[0] == 'T') {
            mlsql_text *a = na ? malloc(na * sizeof *a) : NULL, *p = np ? malloc(np * sizeof *p) : NULL;
            for (size_t i = 0; i < na; i++) a[i] = read_text();
            for (size_t i = 0; i < np; i++) p[i] = read_text();
            rc = mlsql_count_text(a, na, p, np, &s, &c);
            for (size_t i = 0; i < na; i++) free((void *)a[i].ptr);
            for (size_t i = 0; i < np; i++) free((void *)p[i].ptr);
            free(a);
            free(p);
        } else if (kind[0] == 'M') { /* labels of at most 12 bytes as two-word keys */
            mlsql_key2 *a = na ? malloc(na * sizeof *a) : NULL, *p = np ? malloc(np * sizeof *p) : NULL;
            for (size_t i = 0; i < na + np; i++) {
                mlsql_text t = read_text();
                char view[12] = {0}; /* as in a string view: the label's bytes, then garbage */
                memset(view, 0xa5, sizeof view);
                if (t.len > 12) return 3;
                if (t.len) memcpy(view, t.ptr, t.len);
                mlsql_key2 k = mlsql_medium_text_key(view, t.len);
                if (i < na) a[i] = k; else p[i - na] = k;
                free((void *)t.ptr);
            }
            rc = mlsql_count_key2(a, na, p, np, &s, &c);
            free(a);
            free(p);
        } else {
            int64_t *a = na ? malloc(na * sizeof *a) : NULL, *p = np ? malloc(np * sizeof *p) : NULL;
            for (size_t i = 0; i < na; i++) if (scanf("%ld", &a[i]) != 1) return 3;
            for (size_t i = 0; i < np; i++) if (scanf("%ld", &p[i]) != 1) return 3;
            rc = mlsql_count_int(a, na, p, np, &s, &c);
            free(a);
            free(p);
        }
        if (rc) return 2;
        printf("%ld %ld %ld\n", (long)c.tp, (long)c.n_actual, (long)c.n_predicted);
    }
    mlsql_scratch_free(&s);
    return 0;
}
"""


def oracle_counts(a: list, p: list) -> tuple[int, int, int]:
    sa, sp = set(a), set(p)
    return len(sa & sp), len(sa), len(sp)


def random_cases(seed: int, n: int) -> list[tuple[str, list, list]]:
    rng = random.Random(seed)
    texts = [b"", b"\0", b"a", b"a\0", b"ab", b"x" * 12, b"x" * 13, b"y" * 40]
    texts += [b"abcdefgh", b"abcdefgh1", b"abcdefgh2", b"abcdefgi"]  # equal 8-byte heads
    texts += [bytes([rng.randrange(256) for _ in range(rng.randrange(20))]) for _ in range(30)]
    # integers that share low bits (a weak hash would pile them into one slot)
    ints = [0, 1, -1, 2**63 - 1, -(2**63)] + [k << 40 for k in range(-20, 20)]
    ints += [rng.randrange(-1000, 1000) for _ in range(40)]
    # labels of at most 12 bytes (two-word keys): equal heads, then differing bytes or lengths
    medium = [t for t in texts if len(t) <= 12] + [b"abcdefgh\0", b"abcdefghijkl", b"abcdefghijkm"]
    cases = []
    for i in range(n):
        kind = "TIM"[i % 3]
        pool = {"T": texts, "I": ints, "M": medium}[kind]
        size = rng.choice([0, 1, 2, 3, 5, 8, 9, 16, 17, 40, 200, 600])
        sub = rng.sample(pool, k=rng.randint(1, len(pool)))
        a = [rng.choice(sub) for _ in range(rng.randint(0, size))]
        p = [rng.choice(sub) for _ in range(rng.randint(0, size))]
        cases.append((kind, a, p))
    return cases


def encode(cases: list[tuple[str, list, list]]) -> str:
    lines = []
    for kind, a, p in cases:
        items = [x.hex() or "-" for x in a + p] if kind in "TM" else [str(x) for x in a + p]
        lines.append(f"{kind} {len(a)} {len(p)} {' '.join(items)}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if GCC is None:
        pytest.skip("the kernel's sanitizer test needs gcc (not found on PATH)")
    folder = tmp_path_factory.mktemp("kernel")
    source = folder / "driver.c"
    source.write_text(DRIVER)
    exe = folder / "driver"
    cmd = [GCC, "-std=c11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", *SANITIZE]
    subprocess.run(
        [*cmd, f"-I{ROOT / 'native'}", str(source), "-o", str(exe)],
        check=True,
        capture_output=True,
        text=True,
    )
    return exe


@pytest.mark.long
@pytest.mark.parametrize("seed", range(4))
def test_kernel_fuzz_under_sanitizers(driver: Path, seed: int) -> None:
    cases = random_cases(seed, 400)
    done = subprocess.run(
        [str(driver)],
        input=encode(cases),
        capture_output=True,
        text=True,
        env={**os.environ, "ASAN_OPTIONS": "detect_leaks=1", "UBSAN_OPTIONS": "halt_on_error=1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    got = [tuple(int(x) for x in line.split()) for line in done.stdout.splitlines()]
    assert got == [oracle_counts(a, p) for _, a, p in cases]


@pytest.mark.long
def test_kernel_every_small_shape(driver: Path) -> None:
    """Every (|A|, |P|) up to 10 x 10 (straight-line code up to 8 a side, loops beyond), lists
    drawn from few labels (duplicates, matches) including equal 8-byte heads."""
    rng = random.Random(11)
    texts = [b"", b"a", b"a\0", b"abcdefgh", b"abcdefgh1", b"abcdefgh2", b"x" * 13]
    ints = [0, 1, -1, 2**63 - 1, -(2**63), 1 << 40]
    cases = []
    for na in range(11):
        for np_ in range(11):
            medium = [t for t in texts if len(t) <= 12] + [b"abcdefghijkl", b"abcdefghijkm"]
            for kind, pool in (("I", ints), ("T", texts), ("M", medium)) * 3:
                sub = rng.sample(pool, k=rng.randint(1, len(pool)))
                a = [rng.choice(sub) for _ in range(na)]
                p = [rng.choice(sub) for _ in range(np_)]
                cases.append((kind, a, p))
    done = subprocess.run(
        [str(driver)], input=encode(cases), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-4000:]
    got = [tuple(int(x) for x in line.split()) for line in done.stdout.splitlines()]
    assert got == [oracle_counts(a, p) for _, a, p in cases]


def test_kernel_edge_cases(driver: Path) -> None:
    cases = [
        ("I", [], []),
        ("I", [5] * 100, []),
        ("I", [], [7] * 100),
        ("I", list(range(1000)), list(range(500, 1500))),
        ("T", [b""] * 30, [b""]),
        ("T", [b"a", b"a\0"], [b"a\0"]),
        ("T", [bytes([i]) for i in range(256)], [bytes([i]) for i in range(0, 256, 3)]),
    ]
    done = subprocess.run(
        [str(driver)], input=encode(cases), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-4000:]
    got = [tuple(int(x) for x in line.split()) for line in done.stdout.splitlines()]
    assert got == [oracle_counts(a, p) for _, a, p in cases]


ASAN_SCRIPT = textwrap.dedent(
    """
    import random, sys
    import duckdb, pyarrow as pa
    from mlsql._duckdb import native as _native
    con = duckdb.connect(config=_native.open_config())
    con.execute(_native.load_sql(sys.argv[1]))
    con.execute("SET threads = 2")
    rng = random.Random(3)
    pool = ["a", "b", "", "x" * 12, "y" * 13, "z" * 40] + [f"l{i}" for i in range(100)]
    def labels(pool):
        r = rng.random()
        if r < 0.05:
            return None
        n = rng.randint(30, 200) if r > 0.97 else rng.randint(0, 6)
        return [rng.choice(pool) if rng.random() > 0.05 else None for _ in range(n)]
    ints = [-(2**63), -1, 0, 1, 2**63 - 1] + list(range(100))
    uints = [0, 1, 2**63, 2**64 - 1] + list(range(100))
    short = ["", "a", "b", "abcdefg"] + [f"s{i}" for i in range(100)]  # counted as integer keys
    medium = ["abcdefgh", "abcdefghijkl"] + [f"label-{i:05d}" for i in range(100)]  # two-word keys
    def full(pool):  # no NULL list or element: a chunk's labels are read once for all its rows
        return [rng.choice(pool) for _ in range(rng.randint(0, 9))]
    tables = [
        pa.table({"a": [full(pool) for _ in range(5000)], "p": [full(pool) for _ in range(5000)]}),
        pa.table({"a": [full(short) for _ in range(5000)], "p": [full(short) for _ in range(5000)]}),
        pa.table({"a": [labels(pool) for _ in range(5000)], "p": [labels(pool) for _ in range(5000)]}),
        pa.table({"a": [labels(short) for _ in range(5000)], "p": [labels(short) for _ in range(5000)]}),
        pa.table({"a": [full(medium) for _ in range(5000)], "p": [full(medium) for _ in range(5000)]}),
        pa.table({"a": [labels(medium) for _ in range(5000)], "p": [labels(medium) for _ in range(5000)]}),
        pa.table({"a": pa.array([labels(ints) for _ in range(5000)], pa.list_(pa.int64())),
                  "p": pa.array([labels(uints) for _ in range(5000)], pa.list_(pa.uint64()))}),
        # integer keys of the whole chunk: widened int16 against int64 in place
        pa.table({"a": pa.array([labels(ints[1:4] + list(range(100))) for _ in range(5000)],
                                pa.list_(pa.int16())),
                  "p": pa.array([labels(ints) for _ in range(5000)], pa.list_(pa.int64()))}),
    ]
    for t in tables:
        for view in (t, t.slice(7)):
            con.register("t", view)
            got = con.execute("SELECT mlsql_native_counts(a, p) FROM t").fetchall()
            want = []
            for a, p in zip(view.column("a").to_pylist(), view.column("p").to_pylist()):
                if a is None or p is None:
                    want.append((None,))
                    continue
                sa, sp = {x for x in a if x is not None}, {x for x in p if x is not None}
                want.append(({"tp": len(sa & sp), "n_actual": len(sa), "n_predicted": len(sp)},))
            assert got == want
            # the per-label aggregate over the same rows, in three groups (states merged)
            table = con.execute(
                "SELECT g, mlsql_native_label_table(CASE WHEN false THEN p ELSE a END, "
                "CASE WHEN false THEN a ELSE p END) FROM (SELECT *, hash(a) % 3 AS g FROM t) "
                "GROUP BY ALL"
            ).fetchall()
            counts, rows = {}, 0
            for _, entries in table:
                for e in entries:
                    if e["label"] is not None:
                        c = counts.setdefault(e["label"], [0, 0, 0])
                        c[0] += e["tp"]; c[1] += e["n_actual"]; c[2] += e["n_predicted"]
                    else:
                        rows += e["n"]
            want_counts = {}
            for a, p in zip(view.column("a").to_pylist(), view.column("p").to_pylist()):
                if a is None or p is None:
                    continue
                sa, sp = {x for x in a if x is not None}, {x for x in p if x is not None}
                for x in sa | sp:
                    c = want_counts.setdefault(x, [0, 0, 0])
                    c[0] += x in sa and x in sp; c[1] += x in sa; c[2] += x in sp
            assert counts == want_counts and rows == view.num_rows
            con.unregister("t")
    con.execute("SELECT mlsql_native_counts([]::INT[], []::INT[])").fetchall()
    con.execute("SELECT mlsql_native_label_table([]::INT[], []::INT[])").fetchall()
    # the label-score aggregate: every mode, text and integer labels, NULL labels, scores and
    # rows, repeated labels, rows of up to 200 labels (a row table past its first 16 slots),
    # five groups on two threads (states merged), each against one group on one thread
    def score_rows(pool, n):
        out = []
        for _ in range(n):
            if rng.random() < 0.03:
                out.append((None, [pool[0]], 1.0))
                continue
            k = rng.randint(30, 200) if rng.random() < 0.02 else rng.randint(0, 8)
            keys = [rng.choice(pool) if rng.random() > 0.05 else None for _ in range(k)]
            vals = [rng.choice([0.1, 0.5, -0.0, 0.0, float("nan"), rng.random(), None])
                    for _ in keys]
            actual = labels(pool)
            out.append((list(zip(keys, vals)), actual, rng.choice([0.0, 0.5, 1.0, 2.0, None])))
        return out
    for pool, t in ((pool, pa.string()), (ints, pa.int64())):
        rows = score_rows(pool, 9000)
        st = pa.table({
            "k": pa.array([None if r[0] is None else [x for x, _ in r[0]] for r in rows], pa.list_(t)),
            "v": pa.array([None if r[0] is None else [y for _, y in r[0]] for r in rows],
                          pa.list_(pa.float64())),
            "a": pa.array([r[1] for r in rows], pa.list_(t)),
            "w": pa.array([r[2] for r in rows], pa.float64()),
            "g": pa.array([i % 5 for i in range(len(rows))], pa.int64()),
        })
        # record batches of 1,000 rows: DuckDB's two threads each scan some, so the states
        # of each group are merged (one batch would be scanned by one thread)
        st = pa.Table.from_batches(st.to_batches(max_chunksize=1000))
        con.register("st", st)
        for mode in (0, 1, 2):
            call = f"mlsql_native_label_scores(a, k, v, w, {mode})"
            con.execute("SET threads = 2")
            parts = con.execute(f"SELECT g, {call} FROM st GROUP BY g").fetchall()
            assert len(parts) == 5 and all(p[1]["nu"] > 0 for p in parts)
            con.execute("SET threads = 1")
            one = con.execute(f"SELECT {call} FROM st").fetchall()[0][0]
            con.execute("SET threads = 2")
            two = con.execute(f"SELECT {call} FROM st").fetchall()[0][0]
            assert one["nu"] == two["nu"] and len(one["segs"]) == len(two["segs"])
            total = lambda r: sum(s["n_explicit"] * s["w"] for s in r["segs"])
            assert abs(total(one) - total(two)) <= 1e-9 * max(1.0, total(one))
        # the cell aggregate (the curve and threshold tables): the same rows on one thread
        # and two, to rounding
        cells = "mlsql_native_label_cells(a, k, v, w, 3)"
        con.execute("SET threads = 2")
        assert len(con.execute(f"SELECT g, {cells} FROM st GROUP BY g").fetchall()) == 5
        con.execute("SET threads = 1")
        one = con.execute(f"SELECT {cells} FROM st").fetchall()[0][0]
        con.execute("SET threads = 2")
        two = con.execute(f"SELECT {cells} FROM st").fetchall()[0][0]
        key = lambda c: (str(c["label"]), repr(c["score"]))
        one, two = sorted(one, key=key), sorted(two, key=key)
        assert [key(c) for c in one] == [key(c) for c in two] and one
        assert all(abs(x["pos"] - y["pos"]) <= 1e-9 * max(1.0, x["pos"]) and x["rows"] == y["rows"]
                   for x, y in zip(one, two))
        con.unregister("st")
    con.execute("SELECT mlsql_native_label_scores([]::INT[], []::INT[], []::DOUBLE[], 1.0, 1)").fetchall()
    con.execute("SELECT mlsql_native_label_cells([]::INT[], []::INT[], []::DOUBLE[], 1.0, 3)").fetchall()
    maps = open("/proc/self/maps").read()
    assert "libasan" in maps, "AddressSanitizer's runtime is not loaded"
    print("ok")
    """
)


def _gcc_file(name: str) -> str | None:
    """The path gcc knows for library ``name``, if it is a file."""
    if GCC is None or not sys.platform.startswith("linux"):
        return None
    found = subprocess.run(
        [GCC, f"-print-file-name={name}"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return found if found and Path(found).is_absolute() and Path(found).exists() else None


def _libasan() -> str | None:
    return _gcc_file("libasan.so")


@pytest.mark.long
@pytest.mark.skipif(_libasan() is None, reason="AddressSanitizer needs gcc's libasan on Linux")
def test_duckdb_extension_under_address_sanitizer(tmp_path: Path) -> None:
    extension = build_module().build(
        tmp_path, cc=GCC, extra_flags=["-fsanitize=address", "-fno-omit-frame-pointer", "-g", "-O1"]
    )
    env = {
        **os.environ,
        # libstdc++ too, so that ASan can intercept the C++ exceptions DuckDB throws inside
        "LD_PRELOAD": " ".join([_libasan() or "", _gcc_file("libstdc++.so") or ""]).strip(),
        "ASAN_OPTIONS": "detect_leaks=0",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", ASAN_SCRIPT, str(extension)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert "AddressSanitizer" not in done.stderr, done.stderr[-4000:]
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-4000:]
