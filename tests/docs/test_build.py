"""The documentation builds warning-free (``sphinx-build -W``), as `.ci/run` builds it."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.docs.blocks import DOCS

MISSING = [name for name in ("sphinx", "myst_parser", "furo")
           if importlib.util.find_spec(name) is None]


@pytest.mark.skipif(bool(MISSING), reason=f"the docs group is not installed ({', '.join(MISSING)} "
                                          "missing): uv sync --group docs")
def test_the_site_builds_without_warnings(tmp_path):
    done = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                           "-b", "html", str(DOCS), str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    built = tmp_path / "html"
    for page in ("index", "getting-started", "tutorials/own-part", "concepts/policies", "api"):
        assert (built / f"{page}.html").is_file(), page
    api = (built / "api.html").read_text(encoding="utf-8")
    # the reference is generated from the docstrings
    for name in ("snficon.core.parts.DispatchOrder", "snficon.core.view.ClusterView",
                 "snficon.campaign.runner.run_campaign"):
        assert f'id="{name}"' in api, name
