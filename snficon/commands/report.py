"""``snficon report``: figures and a Markdown/HTML report from a campaign's results."""

from __future__ import annotations

import argparse
from pathlib import Path

from snficon.errors import InputError
from snficon.fileio import check_output_folder


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "report", help="figures and a report (Markdown, HTML) from campaign results",
        description="Read RESULTS/results.csv and RESULTS/runs/ (as written by 'snficon "
                    "campaign') and write DIR/report.md, DIR/report.html (figures inline) "
                    "and DIR/figures/*.png|svg, after the paper's Fig. 3-10: base "
                    "comparison, multi-metric profiles, mode occupancy, waiting-time/energy "
                    "Pareto plot, waiting time by job size (box plots: median, quartiles, "
                    "5th-95th percentiles), T_M and alpha sweeps, cross-platform comparison; "
                    "and a Gantt chart with power states.")
    parser.add_argument("results", metavar="RESULTS", help="campaign results folder")
    parser.add_argument("-o", "--output", metavar="DIR",
                        help="report folder (default: RESULTS/report)")
    parser.add_argument("--gantt-run", metavar="ID",
                        help="run id of the Gantt chart (default: SNF-ICON in the largest case)")
    parser.add_argument("--gantt-hours", type=float, default=72.0, metavar="H",
                        help="time window of the Gantt chart from 0 (default: %(default)s h)")
    parser.set_defaults(func=report)


def report(args: argparse.Namespace) -> int:
    if args.gantt_hours <= 0:
        raise InputError("--gantt-hours must be positive")
    output = check_output_folder(args.output or Path(args.results) / "report")

    from snficon.report import build_report  # heavy (matplotlib): after the checks

    written = build_report(args.results, output, gantt_run=args.gantt_run,
                           gantt_hours=args.gantt_hours)
    print(f"report: {written.markdown}, {written.html}")
    print(f"figures: {len(written.figures)} files in {output / 'figures'}/")
    if written.skipped:
        print(f"not drawn (nothing to draw in the results): {', '.join(written.skipped)}")
    return 0
