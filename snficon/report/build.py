"""Assemble the report: figures (PNG, SVG, CSV), tables, ``report.md`` and ``report.html``.

Each figure ``NAME`` is written as ``figures/NAME.png``, ``.svg`` and
``.csv`` (the numbers drawn); the report's other tables (summary, the
paper's §VII numbers, the comparison with a second campaign) are written as
``tables/NAME.csv``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from snficon.fileio import atomic_write_bytes, atomic_write_text
from snficon.report import carbon, modes, sweeps, time_limits, tradeoff
from snficon.report import figures as figs
from snficon.report.compare import Comparison, compare_campaigns, compare_figure, side_by_side
from snficon.report.data import J_PER_MWH, S_PER_MIN, base_rows, load_results
from snficon.report.document import (
    Document,
    csv_bytes,
    markdown_table,
    render,
)
from snficon.report.gantt import gantt_figure
from snficon.report.panels import Figure, close
from snficon.report.paper_numbers import quoted_table, section_7a_table
from snficon.report.size_bins import size_bins

__all__ = ["Report", "build_report", "markdown_table"]

LOG = logging.getLogger(__name__)

FIGURES_DIR = "figures"
TABLES_DIR = "tables"

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
    figures: list[Path] = field(default_factory=list)  # PNG, SVG and CSV files
    tables: list[Path] = field(default_factory=list)  # tables/*.csv
    skipped: list[str] = field(default_factory=list)  # figures with nothing to draw
    base_table: pd.DataFrame | None = None
    comparison: Comparison | None = None


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


def _builders(frame: pd.DataFrame, runs_dir: Path
              ) -> list[tuple[str, Callable[[], Figure | None]]]:
    limits = ([("time limits", lambda: time_limits.time_limit_figure(frame))]
              if "tl_policy" in frame else [])  # only campaigns of the time-limit layer
    return [*limits,
        ("base comparison", lambda: figs.base_comparison(frame)),
        ("profiles", lambda: figs.profiles(frame)),
        ("mode occupancy", lambda: modes.mode_occupancy(frame, runs_dir)),
        ("screen diagnostics", lambda: modes.screen_diagnostics(frame, runs_dir)),
        ("Pareto", lambda: tradeoff.pareto(frame)),
        ("job-size bins", lambda: size_bins(frame, runs_dir)),
        ("T_M sweep", lambda: sweeps.sweep_plane(frame, "t_m")),
        ("T_M sweep per metric", lambda: sweeps.sweep_metrics(frame, "t_m")),
        ("alpha sweep", lambda: sweeps.sweep_plane(frame, "alpha")),
        ("alpha sweep per metric", lambda: sweeps.sweep_metrics(frame, "alpha")),
        ("cross-platform comparison", lambda: tradeoff.cross_platform(frame)),
    ] + ([  # drawn (or said to be empty) only for campaigns with a carbon signal
        ("carbon-peak plane", lambda: carbon.carbon_peak_plane(frame)),
        ("gamma sweep", lambda: carbon.gamma_sweep(frame)),
    ] if carbon.has_carbon(frame) else [])


def _name(folder: Path, other: Path | None = None) -> str:
    """A campaign's short name: its folder, with the parent's when both folders share it."""
    if other is not None and folder.resolve().name == other.resolve().name:
        return f"{folder.resolve().parent.name}/{folder.resolve().name}"
    return folder.resolve().name


def build_report(results: str | Path, output: str | Path, *, gantt_run: str | None = None,
                 gantt_hours: float = 72.0, title: str | None = None,
                 compare: str | Path | None = None, figures: bool = True) -> Report:
    """Read the campaign results in ``results`` and write the report into ``output``.

    With ``compare`` (a second results folder), the report also puts the two
    campaigns side by side (:mod:`snficon.report.compare`) and gives the
    second one's column in the tables of the paper's numbers. With
    ``figures=False`` only the tables are written (a quick check).
    """
    results, output = Path(results), Path(output)
    frame = load_results(results)
    runs_dir = results / "runs"
    report = Report(markdown=output / "report.md", html=output / "report.html")
    others: dict[str, pd.DataFrame] = {}
    if compare is not None:
        compare = Path(compare)
        other = load_results(compare)
        name_a, name_b = _name(results, compare), _name(compare, results)
        report.comparison = compare_campaigns(frame, runs_dir, other, compare / "runs",
                                              name_a, name_b)
        others[name_b] = other
    made: list[Figure] = []
    for name, build in _builders(frame, runs_dir) if figures else []:
        figure = build()
        if figure is None:
            report.skipped.append(name)
        else:
            made.append(figure)
    row = _pick_gantt_run(frame, runs_dir, gantt_run) if figures else None
    if row is not None:
        gantt_title = f"{row['case']} - {row['label']} (run {row['id']})"
        fig, table, note = gantt_figure(runs_dir / str(row["id"]), gantt_title,
                                        window_s=gantt_hours * 3600)
        caption = ("Jobs (evalys Gantt chart, one colour per job) on the nodes of one run, "
                   "over the first hours of simulated time, with the nodes' power states "
                   "from out_pstate_changes.csv behind them: switching on, switching off, "
                   "asleep; a node powered on without a job (idle) shows the background "
                   "colour. Time in hours; the table gives node-hours per colour.")
        made.append(Figure("gantt", "Gantt chart with power states", fig, table, caption,
                           [note]))
    elif figures:
        report.skipped.append("Gantt chart")
    if report.comparison is not None and figures:
        figure = compare_figure(report.comparison)
        if figure is not None:
            made.append(figure)

    doc = Document(title or f"Campaign report: {results.name}",
                   f"Results: `{results.name}` ({len(frame)} finished runs, "
                   f"{frame['case'].nunique()} platform/workload cases, "
                   f"{frame['policy'].nunique()} policies). Generated "
                   f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}. Waiting, response "
                   "and maximum times are in minutes, simulated time in hours, energies in "
                   "MWh throughout.")

    def table(name: str, heading: str, rows: pd.DataFrame, lines: list[str],
              show: bool = True) -> None:
        path = atomic_write_bytes(output / TABLES_DIR / f"{name}.csv", csv_bytes(rows))
        report.tables.append(path)
        doc.heading(heading)
        for line in lines:
            doc.paragraph(line)
        if show:
            doc.table(rows, f"{TABLES_DIR}/{name}.csv")
        else:
            doc.paragraph(f"{len(rows)} rows: {TABLES_DIR}/{name}.csv")

    summary = _summary(frame)
    if not summary.empty:
        report.base_table = summary
        table("summary", "Summary (default options)", summary, [])
    _paper_tables(frame, others, table)
    if report.comparison is not None:
        _comparison_section(report.comparison, table)
    for figure in made:
        png, svg = render(figure.figure, "png"), render(figure.figure, "svg")
        close(figure.figure)
        for suffix, data in (("png", png), ("svg", svg), ("csv", csv_bytes(figure.drawn))):
            report.figures.append(atomic_write_bytes(
                output / FIGURES_DIR / f"{figure.name}.{suffix}", data))
        doc.heading(figure.title)
        link = f"{FIGURES_DIR}/{figure.name}"
        doc.figure(figure.title, png, f"{link}.png", f"{link}.svg", f"{link}.csv")
        if figure.caption:
            doc.paragraph(figure.caption, emphasis=True)
        for note in figure.notes:
            doc.paragraph(note)
        doc.table(figure.table)
    generic = [name for name in report.skipped if name not in SKIP_REASONS]
    lines = [SKIP_REASONS[name] for name in report.skipped if name in SKIP_REASONS]
    if generic:
        lines.insert(0, "Not drawn (nothing in the results for them): "
                     + ", ".join(generic) + ".")
    for line in lines:
        doc.paragraph(line)
    atomic_write_text(report.markdown, doc.markdown_text())
    atomic_write_text(report.html, doc.html_text())
    return report


def _paper_tables(frame: pd.DataFrame, others: dict[str, pd.DataFrame], table) -> None:
    """§VII-A's percent changes and §VII's other numbers, when the paper's cases ran."""
    changes = section_7a_table(frame, others)
    if not changes.empty:
        table("section_7a", "The paper's §VII-A numbers", changes, [
            "Percent change of SNF-ICON's mean waiting time and wasted energy against each "
            "baseline at default options, 100 (SNF-ICON - baseline) / baseline (negative: "
            "SNF-ICON lower), as the paper's text quotes them and as this campaign gives "
            "them; difference = this campaign - paper, in percentage points. The paper's "
            "runs draw each switch-on/off duration from Normal(mean, 10 % of mean); "
            "Batsim's, and this engine's by default, are exact."])
    limits = time_limits.time_limit_table(frame)
    if not limits.empty:
        table("time_limits", "Checkpoint-aware time limits (the time-limits paper's Table 1)",
              limits, [
                  "One row per case, scheduler and daemon policy: tail waste (node time after "
                  "the last checkpoint of jobs killed at their limit; core-s where the "
                  "workload gives cores per node), total CPU time, jobs completed / timed out "
                  "(killed at their limit: Batsim reports COMPLETED_KILLED) / cancelled early "
                  "/ extended, checkpoints reached, node-weighted mean wait (wait x nodes / "
                  "sum of nodes), and the change of tail waste, CPU time and weighted wait "
                  "against the Baseline of the same case and scheduler. The paper (Slurm, 20 "
                  "nodes, 773 PM100 jobs): Baseline 875,520 core-s of tail waste; Early "
                  "Cancellation -95.1 % and -1.3 % CPU time; Extension -94.8 %; Hybrid -95 % "
                  "(62 cancelled, 47 extended), weighted wait within 2 % of Baseline."])
    quoted = quoted_table(frame, others)
    if not quoted.empty:
        table("quoted_numbers", "Other numbers of the paper's §VII", quoted, [
            "Absolute values and variant comparisons the paper's text quotes, at default "
            "options; a range is the paper's, or the campaign's over the policies."])


def _comparison_section(comparison: Comparison, table) -> None:
    """Header sentences, the side-by-side table and every metric's differences."""
    worst = comparison.worst()
    lines = [f"{comparison.pairs} runs of {comparison.name_a} paired with the same runs of "
             f"{comparison.name_b} (same platform, workload, policy and changed options); "
             "relative difference = 100 (B - A) / |A| with A = "
             f"{comparison.name_a}, B = {comparison.name_b}."]
    if worst is not None and worst["difference (%)"] == 0:
        lines.append("Every compared metric of every paired run is equal in both campaigns.")
    elif worst is not None:
        lines.append(f"Largest |relative difference|: {abs(worst['difference (%)']):.4g} % "
                     f"({worst['metric']}, {worst['policy']} on {worst['case']}"
                     f"{', ' + worst['options'] if worst['options'] else ''}).")
    for key, (a, b) in comparison.campaign_options.items():
        lines.append(f"Campaign-wide option {key}: {a or 'unset'} in {comparison.name_a}, "
                     f"{b or 'unset'} in {comparison.name_b} (ignored for pairing).")
    for name, columns in comparison.columns_only.items():
        if columns:
            lines.append(f"Columns only in {name}'s results: {', '.join(columns)}.")
    for side, alone in ((comparison.name_a, comparison.only_a),
                        (comparison.name_b, comparison.only_b)):
        if not alone.empty:
            lines.append(f"{len(alone)} runs only in {side}: " + "; ".join(
                f"{r.policy} on {r.case}{' ' + r.options if r.options else ''}"
                for r in alone.head(8).itertuples()) + (" ..." if len(alone) > 8 else ""))
    table("compare", f"Comparison: {comparison.name_a} vs {comparison.name_b}",
          side_by_side(comparison), lines)
    table("compare_all_metrics", "Comparison, every metric of every paired run",
          comparison.long, ["Every metric of metrics.json (the run's wall time excepted), in "
                            "its own unit (s, J, shares in [0, 1])."], show=False)


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
        "mean wait (min)": number("mean_wait", S_PER_MIN),
        "max wait (min)": number("max_wait", S_PER_MIN),
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
