"""The reference pages' "peers" column: every measure has an entry, and every Python peer it
names exists in the installed library (a renamed or misspelt peer fails here)."""

from __future__ import annotations

import importlib

import pytest

import mlsql.measures  # noqa: F401  (registers every measure)
from mlsql._docs import peers as PE
from mlsql._docs import reference as RF
from mlsql._registry import REGISTRY


def resolve(path: str) -> object:
    """Import the longest module prefix of ``path`` and read the rest as attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            found = getattr(found, attr)
        return found
    raise ImportError(path)


def test_every_measure_has_an_entry_and_every_entry_a_measure():
    missing = [
        name for name in REGISTRY if not name.endswith("_from_counts") and name not in PE.PEERS
    ]
    stale = [name for name in PE.PEERS if name not in REGISTRY]
    assert (missing, stale) == ([], [])
    for name in REGISTRY:
        PE.peers_of(name)  # a *_from_counts function has its measure's entry


LIBRARIES = {
    "scikit-learn": "sklearn",
    "statsmodels": "statsmodels",
    "SciPy": "scipy",
    "Spark MLlib": "pyspark",
}
CHECKED = sorted(
    {p for found in PE.PEERS.values() for p in found if p.path is not None},
    key=lambda p: p.path or "",
)


def test_python_peers_name_their_library_and_only_known_ones():
    assert CHECKED, "no peer has a path"
    assert {p.library for p in CHECKED} <= set(LIBRARIES)


@pytest.mark.parametrize("peer", CHECKED, ids=lambda p: p.path)
def test_the_named_peer_exists(peer):
    pytest.importorskip(LIBRARIES[peer.library])
    assert peer.path is not None
    assert callable(resolve(peer.path)) or isinstance(resolve(peer.path), property)


def test_the_pages_show_the_peers():
    page = RF.index_page()
    assert "| function | aliases | family | kind | peers |" in page
    assert "Spark MLlib `MultilabelMetrics.microF1Measure`" in page
