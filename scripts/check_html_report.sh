#!/bin/sh
# Render mlsql's HTML reports in headless Chromium and check they are self-contained.
#
#   scripts/check_html_report.sh [OUTDIR]      (default: ./report-check)
#
# Writes OUTDIR/blog_tags.html + .png (multi-label, the quick-start example) and
# OUTDIR/animals.html + .png (single-label, with the confusion-matrix heatmap), then
# fails if a page links anything outside itself. Look at the PNGs. Needs Debian's
# `chromium` package (apt-get install -y chromium) and mlsql importable (python -m mlsql.cli).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-report-check}
mkdir -p "$out"
out=$(cd "$out" && pwd)
python=${PYTHON:-python}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
    echo "check_html_report: chromium not found (apt-get install -y chromium)" >&2
    exit 1
fi

cd "$here"
"$python" -m mlsql.cli eval examples/data/blog_tags.parquet --actual actual --predicted predicted \
    --format html --output "$out/blog_tags.html"
"$python" - "$out/animals.parquet" <<'PY'
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
from pathlib import Path
root = Path.cwd()
for candidate in (root.parent / "shared" / "conformance", root / "tests" / "data"):
    if (candidate / "slides_single_label.json").is_file():
        animals = json.loads((candidate / "slides_single_label.json").read_text())["animals"]
        break
else:
    sys.exit("check_html_report: slides_single_label.json not found")
pq.write_table(pa.table({"actual": animals["actual"], "predicted": animals["predicted"]}), sys.argv[1])
PY
"$python" -m mlsql.cli eval "$out/animals.parquet" --actual actual --predicted predicted \
    --format html --output "$out/animals.html"

status=0
for page in blog_tags animals; do
    if grep -Eiq '(src|href)[[:space:]]*=[[:space:]]*["'"'"']?[[:space:]]*(https?:)?//|https?://|<script' "$out/$page.html"; then
        echo "check_html_report: $page.html refers to something outside itself" >&2
        status=1
    fi
    profile=$(mktemp -d)
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$profile" --window-size=900,2200 \
        --screenshot="$out/$page.png" "file://$out/$page.html" >/dev/null 2>&1 || true
    rm -rf "$profile"
    if [ -s "$out/$page.png" ]; then
        echo "$out/$page.png"
    else
        echo "check_html_report: chromium rendered no $page.png" >&2
        status=1
    fi
done
exit $status
