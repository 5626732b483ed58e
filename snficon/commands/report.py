"""``snficon report``: figures and a Markdown/HTML report from a campaign's results."""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from snficon.commands.compare import add_run_check_options
from snficon.errors import InputError
from snficon.fileio import atomic_write_text, check_output_folder
from snficon.manifest import accept_run_folder

#: Exit status when ``--fail-above`` finds a larger difference.
EXIT_DIFFERENT = 1


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "report", help="figures and a report (Markdown, HTML) from campaign results",
        description="Read RESULTS/results.csv and RESULTS/runs/ (as written by 'snficon "
                    "campaign') and write DIR/report.md, DIR/report.html (figures inline), "
                    "DIR/figures/*.png|svg|csv and DIR/tables/*.csv, after the paper's Fig. "
                    "3-10: base comparison, multi-metric profiles, mode occupancy and screen "
                    "diagnostics, waiting-time/energy Pareto plot, waiting time by job size "
                    "(box plots), T_M and alpha sweeps in the waiting-time/energy plane (and "
                    "per metric), cross-platform comparison; a Gantt chart with power "
                    "states; and the paper's §VII numbers beside the campaign's. With "
                    "--compare, a second campaign side by side, run by run.")
    parser.add_argument("results", metavar="RESULTS", help="campaign results folder")
    parser.add_argument("-o", "--output", metavar="DIR",
                        help="report folder (default: RESULTS/report)")
    parser.add_argument("--gantt-run", metavar="ID",
                        help="run id of the Gantt chart (default: SNF-ICON in the largest case)")
    parser.add_argument("--gantt-hours", type=float, default=72.0, metavar="H",
                        help="time window of the Gantt chart from 0 (default: %(default)s h)")
    parser.add_argument("--compare", metavar="OTHER_RESULTS",
                        help="a second results folder (e.g. real Batsim, another code "
                             "version, jittered transitions): pair its runs with RESULTS' "
                             "and give the per-run differences of every metric")
    parser.add_argument("--fail-above", type=float, metavar="PCT",
                        help="with --compare: exit with status 1 when any metric of any "
                             "paired run differs by more than PCT percent")
    parser.add_argument("--no-figures", action="store_true",
                        help="write the tables only (summary, the paper's numbers, the "
                             "comparison): a quick check")
    add_run_check_options(parser)
    parser.set_defaults(func=report)


def check_campaign_runs(results: str | Path, *, allow_incomplete: bool = False,
                        foreign: bool = False) -> list[str]:
    """Check the folder of every done run of ``results/results.csv`` against its manifest
    (:func:`snficon.manifest.accept_run_folder`); the notes of those read anyway."""
    table = Path(results) / "results.csv"
    if not table.is_file():
        return []  # load_results says what is missing
    try:
        with open(table, newline="", encoding="utf-8") as stream:
            rows = list(csv.DictReader(stream))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{table}: cannot read: {exc}") from None
    notes = []
    for row in rows:
        folder = Path(results) / "runs" / str(row.get("id", ""))
        if row.get("status", "done") == "done" and row.get("id") and folder.is_dir():
            note = accept_run_folder(folder, allow_incomplete=allow_incomplete,
                                     foreign=foreign)
            if note:
                notes.append(note)
    return notes


def report(args: argparse.Namespace) -> int:
    if args.gantt_hours <= 0:
        raise InputError("--gantt-hours must be positive")
    if args.fail_above is not None and args.compare is None:
        raise InputError("--fail-above needs --compare OTHER_RESULTS")
    if args.fail_above is not None and not args.fail_above >= 0:
        raise InputError(f"--fail-above must be a percentage >= 0, not {args.fail_above}")
    output = check_output_folder(args.output or Path(args.results) / "report")
    notes = [note for folder in (args.results, args.compare) if folder is not None
             for note in check_campaign_runs(folder, allow_incomplete=args.allow_incomplete,
                                             foreign=args.foreign)]

    from snficon.report import build_report  # heavy (matplotlib): after the checks

    title = (f"Campaign report: {Path(args.results).name} (NOT ONLY complete runs: "
             f"{len(notes)} run folders read anyway, see notes.txt)" if notes else None)
    written = build_report(args.results, output, gantt_run=args.gantt_run,
                           gantt_hours=args.gantt_hours, compare=args.compare,
                           figures=not args.no_figures, title=title)
    if notes:
        atomic_write_text(output / "notes.txt", "".join(f"{note}\n" for note in notes))
        print(f"NOTE: {len(notes)} run folders are not complete snficon runs and were read "
              f"anyway: {output / 'notes.txt'}")
    print(f"report: {written.markdown}, {written.html}")
    print(f"figures: {len(written.figures)} files in {output / 'figures'}/, "
          f"tables: {len(written.tables)} in {output / 'tables'}/")
    if written.skipped:
        print(f"not drawn (nothing to draw in the results): {', '.join(written.skipped)}")
    comparison = written.comparison
    if comparison is None:
        return 0
    worst = comparison.worst()
    print(f"compared: {comparison.pairs} paired runs, {len(comparison.only_a)} only in "
          f"{comparison.name_a}, {len(comparison.only_b)} only in {comparison.name_b}"
          + ("; every metric equal" if worst is not None and worst["difference (%)"] == 0
             else f"; largest |difference| {abs(worst['difference (%)']):.4g} % "
                  f"({worst['metric']}, {worst['policy']} on {worst['case']})"
             if worst is not None else ""))
    if comparison.pairs == 0:
        raise InputError(f"--compare: no run of {args.results} matches a run of "
                         f"{args.compare} (same platform, workload, policy and options)")
    if args.fail_above is not None:
        above = comparison.above(args.fail_above)
        if not above.empty:
            print(f"snficon report: {len(above)} metric values differ by more than "
                  f"{args.fail_above:g} %:", file=sys.stderr)
            for _, row in above.head(20).iterrows():
                print(f"  {row['case']} {row['policy']} {row['options']} {row['metric']}: "
                      f"{row['A']:.6g} -> {row['B']:.6g} ({row['difference (%)']:+.4g} %)",
                      file=sys.stderr)
            return EXIT_DIFFERENT
    return 0
