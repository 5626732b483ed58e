"""Sphinx configuration of the snficon documentation (MyST Markdown pages).

Build: ``uv sync --group docs && uv run sphinx-build -W -b html docs docs/_build/html``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

project = "snficon"
author = "the snficon authors"
copyright = "the snficon authors, MIT licence"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence", "attrs_block"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

html_theme = "furo"
html_title = "snficon"
html_static_path = ["_static"]
html_css_files = ["snficon.css"]
