"""Assemble the report: figures (PNG + SVG), ``report.md`` with the tables, ``report.html``."""

from __future__ import annotations

import base64
import html
import io
import logging
import math
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from snficon.fileio import atomic_write_text
from snficon.report import figures as figs
from snficon.report.data import J_PER_MWH, base_rows, load_results
from snficon.report.gantt import close, gantt_figure
from snficon.report.size_bins import size_bins

LOG = logging.getLogger(__name__)

FIGURES_DIR = "figures"

#: The sentence the report gives in place of a figure the results cannot fill, when it
#: needs more than the generic "nothing in the results" (by the builder's name).
SKIP_REASONS = {
    "cross-platform comparison":
        "Cross-platform comparison (Fig. 10) not drawn: no workload in the results was run "
        "on more than one platform (at default options); list a workload under two "
        "platforms in the campaign, as expe/paper.toml's cross-platform group does.",
}


@dataclass
class Report:
    """What :func:`build_report` wrote."""

    markdown: Path
    html: Path
    figures: list[Path] = field(default_factory=list)  # PNG and SVG files
    skipped: list[str] = field(default_factory=list)  # figures with nothing to draw
    base_table: pd.DataFrame | None = None


def atomic_write_bytes(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder, then rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def render(fig, fmt: str) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=110, bbox_inches="tight")
    return buffer.getvalue()


def _cell(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        if value == 0 or 0.01 <= abs(value) < 1e6:
            return f"{value:.3f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:.1f}"
        return f"{value:.3g}"
    return str(value).replace("|", "\\|")


def markdown_table(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table."""
    head = "| " + " | ".join(str(c) for c in table.columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(_cell(v) for v in row) + " |"
            for row in table.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def html_table(table: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
                   for row in table.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _pick_gantt_run(frame: pd.DataFrame, runs_dir: Path, wanted: str | None) -> pd.Series | None:
    if wanted:
        rows = frame[frame["id"].astype(str) == wanted]
        return rows.iloc[0] if not rows.empty else None
    base = base_rows(frame)
    size = base.groupby("case")["policy"].transform("count")
    base = base.assign(_size=size).sort_values("_size", ascending=False, kind="stable")
    for candidates in (base[base["policy"] == "snficon"], base, frame):
        for _, row in candidates.iterrows():
            if (runs_dir / str(row["id"]) / "out_jobs.csv").is_file():
                return row
    return None


def build_report(results: str | Path, output: str | Path, *, gantt_run: str | None = None,
                 gantt_hours: float = 72.0, title: str | None = None) -> Report:
    """Read the campaign results in ``results`` and write the report into ``output``."""
    results, output = Path(results), Path(output)
    frame = load_results(results)
    runs_dir = results / "runs"
    builders: list[tuple[str, Callable[[], figs.Figure | None]]] = [
        ("base comparison", lambda: figs.base_comparison(frame)),
        ("profiles", lambda: figs.profiles(frame)),
        ("mode occupancy", lambda: figs.modes(frame, runs_dir)),
        ("Pareto", lambda: figs.pareto(frame)),
        ("job-size bins", lambda: size_bins(frame, runs_dir)),
        ("T_M sweep", lambda: figs.sweep(frame, "t_m")),
        ("alpha sweep", lambda: figs.sweep(frame, "alpha")),
        ("cross-platform comparison", lambda: figs.cross_platform(frame)),
    ]
    report = Report(markdown=output / "report.md", html=output / "report.html")
    made: list[figs.Figure] = []
    for name, build in builders:
        figure = build()
        if figure is None:
            report.skipped.append(name)
        else:
            made.append(figure)
    row = _pick_gantt_run(frame, runs_dir, gantt_run)
    if row is not None:
        gantt_title = f"{row['case']} - {row['label']} (run {row['id']})"
        fig, table, note = gantt_figure(runs_dir / str(row["id"]), gantt_title,
                                        window_s=gantt_hours * 3600)
        made.append(figs.Figure("gantt", "Gantt chart with power states", fig, table, [note]))
    else:
        report.skipped.append("Gantt chart")

    md = [f"# {title or 'Campaign report: ' + results.name}", "",
          f"Results: `{results.name}` ({len(frame)} finished runs, "
          f"{frame['case'].nunique()} platform/workload cases, "
          f"{frame['policy'].nunique()} policies). Generated "
          f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.", ""]
    html_parts = []
    summary = _summary(frame)
    if not summary.empty:
        report.base_table = summary
        md += ["## Summary (default options)", "", markdown_table(summary), ""]
        html_parts.append("<h2>Summary (default options)</h2>" + html_table(summary))
    for figure in made:
        png = render(figure.figure, "png")
        svg = render(figure.figure, "svg")
        close(figure.figure)
        for suffix, data in (("png", png), ("svg", svg)):
            report.figures.append(atomic_write_bytes(
                output / FIGURES_DIR / f"{figure.name}.{suffix}", data))
        md += [f"## {figure.title}", "",
               f"![{figure.title}]({FIGURES_DIR}/{figure.name}.png) "
               f"([SVG]({FIGURES_DIR}/{figure.name}.svg))", ""]
        md += [*(f"{note}\n" for note in figure.notes)]
        md += [markdown_table(figure.table), ""]
        encoded = base64.b64encode(png).decode("ascii")
        html_parts.append(
            f"<h2>{html.escape(figure.title)}</h2>"
            f"<img alt=\"{html.escape(figure.title)}\" src=\"data:image/png;base64,{encoded}\">"
            + "".join(f"<p>{html.escape(n)}</p>" for n in figure.notes)
            + html_table(figure.table))
    generic = [name for name in report.skipped if name not in SKIP_REASONS]
    lines = [SKIP_REASONS[name] for name in report.skipped if name in SKIP_REASONS]
    if generic:
        lines.insert(0, "Not drawn (nothing in the results for them): "
                     + ", ".join(generic) + ".")
    for line in lines:
        md += [line, ""]
        html_parts.append(f"<p>{html.escape(line)}</p>")
    atomic_write_text(report.markdown, "\n".join(md))
    atomic_write_text(report.html, _html_page(md[0][2:], md[2], html_parts))
    return report


def _summary(frame: pd.DataFrame) -> pd.DataFrame:
    base = base_rows(frame)
    if base.empty:
        return pd.DataFrame()

    def number(column: str, scale: float = 1.0) -> pd.Series:
        if column not in base:
            return pd.Series([float("nan")] * len(base), index=base.index)
        return pd.to_numeric(base[column], errors="coerce") / scale

    table = pd.DataFrame({
        "case": base["case"], "policy": base["label"],
        "mean wait (min)": number("mean_wait", 60), "max wait (h)": number("max_wait", 3600),
        "mean slowdown": number("mean_slowdown"), "utilization": number("utilization"),
        "energy (MWh)": number("energy_total", J_PER_MWH),
        "wasted (MWh)": number("energy_wasted", J_PER_MWH),
        "ICON share (%)": 100 * number("icon_time_share")})
    return _with_carbon(table, frame, base).reset_index(drop=True)


def _with_carbon(table: pd.DataFrame, frame: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """Carbon next to energy when the runs had a signal: the mean over start alignments."""
    if "carbon_total_kg" not in frame:
        return table
    runs = frame[frame["changed"].map(len) == 0].copy()
    for column in ("carbon_total_kg", "carbon_wasted_kg"):
        runs[column] = pd.to_numeric(runs[column], errors="coerce")
    means = runs.groupby(["case", "policy"])[["carbon_total_kg", "carbon_wasted_kg"]]
    counts = runs.groupby(["case", "policy"])["carbon_total_kg"].count()
    keys = list(zip(base["case"], base["policy"], strict=True))
    mean = means.mean()
    position = table.columns.get_loc("wasted (MWh)") + 1
    table.insert(position, "carbon (t)", [mean["carbon_total_kg"].get(k) / 1e3 for k in keys])
    table.insert(position + 1, "wasted carbon (t)",
                 [mean["carbon_wasted_kg"].get(k) / 1e3 for k in keys])
    table.insert(position + 2, "carbon starts", [int(counts.get(k, 0)) for k in keys])
    return table


def _html_page(title: str, intro: str, parts: list[str]) -> str:
    style = ("body{font-family:sans-serif;max-width:1300px;margin:auto;padding:1em}"
             "table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.85em}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
             "img{max-width:100%}")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{style}</style></head><body>"
            f"<h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p>"
            + "\n".join(parts) + "</body></html>\n")
