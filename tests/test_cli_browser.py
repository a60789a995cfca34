"""The HTML report in a real browser: headless Chromium renders it to a PNG.

Marked ``browser``: CI installs Debian's ``chromium`` package. Without it these
tests skip, saying why, as the PostgreSQL tests skip without a server; where
``MLSQL_REQUIRE_SERVERS`` is set (CI) they fail instead. Select or deselect them with
``-m browser`` / ``-m "not browser"``. ``scripts/check_html_report.sh``
renders the same pages to PNGs to look at.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from mlsql.cli import app
from tests.conftest import ROOT, conformance

pytestmark = pytest.mark.browser

EXAMPLE = ROOT / "examples" / "data" / "blog_tags.parquet"
WIDTH, HEIGHT = 900, 2200
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)
#: colours the report draws with (mlsql.report.charts), as RGB
PRECISION, RECALL, F_SCORE = (0x4C, 0x78, 0xA8), (0xF5, 0x85, 0x18), (0x54, 0xA2, 0x4B)
DARKEST_CELL = (0x08, 0x45, 0x94)  # a confusion-matrix cell holding all of its class's rows
#: the forest plot of slices: significantly worse, significantly better, the whole data's line
WORSE, BETTER, OVERALL = (0xE4, 0x57, 0x56), (0x72, 0xB7, 0xB2), (0xB2, 0x79, 0xA2)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    required = bool(os.environ.get("MLSQL_REQUIRE_SERVERS"))
    (pytest.fail if required else pytest.skip)(
        "headless Chromium is needed: apt-get install -y chromium (Debian)"
    )
    raise AssertionError("unreachable")  # pytest.fail and pytest.skip raise


def screenshot(page: Path, png: Path, height: int = HEIGHT) -> np.ndarray:
    """Render ``page`` with a fresh profile, offline, and return its pixels (RGB)."""
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [
                chromium(),
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                f"--window-size={WIDTH},{height}",
                f"--screenshot={png}",
                page.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert png.is_file(), f"chromium wrote no screenshot: {done.stderr[-2000:]}"
    return read_png(png)


def read_png(path: Path) -> np.ndarray:
    """Decode an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) to RGB."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            chunks.append(body)
    assert header is not None
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0, header
    bpp = 3 if color == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(chunks)), dtype=np.uint8)
    rows = raw.reshape(height, 1 + width * bpp)
    out = np.zeros((height, width * bpp), dtype=np.uint8)
    prev = np.zeros(width * bpp, dtype=np.int32)
    for y in range(height):
        kind, line = rows[y, 0], rows[y, 1:].astype(np.int32)
        if kind == 0:
            cur = line
        elif kind == 2:
            cur = (line + prev) % 256
        elif kind == 1:
            cur = (np.cumsum(line.reshape(width, bpp), axis=0) % 256).reshape(-1)
        else:
            cur = np.zeros_like(line)
            for x in range(len(line)):
                a = cur[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                if kind == 3:
                    pred = (a + b) // 2
                else:
                    p = a + b - c
                    pa_, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa_ <= pb and pa_ <= pc else (b if pb <= pc else c)
                cur[x] = (line[x] + pred) % 256
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)[:, :, :3]


def pixels_of(image: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 3) -> int:
    """How many pixels have colour ``rgb`` (within ``tolerance`` per channel)."""
    diff = np.abs(image.astype(np.int32) - np.array(rgb, dtype=np.int32))
    return int(np.all(diff <= tolerance, axis=2).sum())


def write_report(args: list[str], target: Path) -> Path:
    result = CliRunner().invoke(app, [*args, "--format", "html", "--output", str(target)])
    assert result.exit_code == 0, result.stderr
    return target


@pytest.mark.long
def test_multilabel_report_renders(tmp_path: Path) -> None:
    page = write_report(
        ["eval", str(EXAMPLE), "--actual", "actual", "--predicted", "predicted"],
        tmp_path / "blog.html",
    )
    image = screenshot(page, tmp_path / "blog.png")
    assert image.shape == (HEIGHT, WIDTH, 3)
    # the page is not blank, and the bars of all three measures were drawn
    assert (image < 200).any(axis=2).sum() > 5_000
    for colour in (PRECISION, RECALL, F_SCORE):
        assert pixels_of(image, colour) > 300, colour


@pytest.mark.long
def test_single_label_report_draws_the_heatmap(tmp_path: Path) -> None:
    animals = conformance("slides_single_label.json")["animals"]
    data = tmp_path / "animals.parquet"
    pq.write_table(pa.table({"y": animals["actual"], "guess": animals["predicted"]}), data)
    page = write_report(["eval", str(data), "-a", "y", "-p", "guess"], tmp_path / "animals.html")
    image = screenshot(page, tmp_path / "animals.png")
    # anfibios: 2 of 2 rows right, so its diagonal cell has the darkest colour
    assert pixels_of(image, DARKEST_CELL) > 500


def mask_of(image: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 3) -> np.ndarray:
    """Where ``image`` has colour ``rgb``: the (row, column) of each such pixel."""
    diff = np.abs(image.astype(np.int32) - np.array(rgb, dtype=np.int32))
    return np.argwhere(np.all(diff <= tolerance, axis=2))


@pytest.mark.long
def test_weakest_slices_forest_plot(tmp_path: Path) -> None:
    from tests.test_report_slices import documents

    data = tmp_path / "docs.parquet"
    pq.write_table(pa.table(documents(11, 3000)), data)
    page = write_report(
        ["eval", str(data), "-a", "actual", "-p", "predicted", "--slices", "lang,source"],
        tmp_path / "slices.html",
    )
    image = screenshot(page, tmp_path / "slices.png", height=5200)
    worse, better, line = (mask_of(image, c) for c in (WORSE, BETTER, OVERALL))
    # French documents are predicted worse (significantly), German and English ones better
    assert len(worse) > 100 and len(better) > 100, (len(worse), len(better))
    assert len(line) > 100  # the dashed line at the whole data's micro F1
    # below the legend (whose keys show both colours on one line): the worst slice is drawn
    # first, at the top; the line lies between the worse slice and the better ones
    legend = min(worse[:, 0].min(), better[:, 0].min()) + 12
    worse, better = worse[worse[:, 0] > legend], better[better[:, 0] > legend]
    assert worse[:, 0].max() < better[:, 0].min()
    assert np.median(worse[:, 1]) < np.median(line[:, 1]) < np.median(better[:, 1])
