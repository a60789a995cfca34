"""mypy passes on the package and on tests/typing/usage.py (what a user's type checker sees).

The configuration is pyproject.toml's ``[tool.mypy]``: every module of the
package is checked except those listed there as not passing yet; the usage
file asserts the types of the public functions (``assert_type``) and marks the
calls that must stay errors. Needs mypy (the ``dev`` extra).
"""

from __future__ import annotations

import pytest

from tests.conftest import ROOT


@pytest.mark.first(rank=13)
@pytest.mark.long
def test_mypy_passes_on_the_package_and_the_typed_usage_file(monkeypatch):
    api = pytest.importorskip("mypy.api")
    monkeypatch.chdir(ROOT)  # the configuration's files are relative to the project
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml")])
    assert status == 0, stdout + stderr
    assert "usage.py" not in stdout
