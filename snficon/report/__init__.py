"""Campaign reports: figures (PNG and SVG), a Markdown and an HTML report.

``build_report(RESULTS, DIR)`` reads a campaign's ``results.csv`` and its run
folders (``runs/<id>/``) and writes ``DIR/report.md``, ``DIR/report.html``
(figures inline) and ``DIR/figures/*.png|svg``.
"""

from __future__ import annotations

from snficon.report.build import Report, build_report

__all__ = ["Report", "build_report"]
