"""``snficon compare``: two runs of one workload, job by job and metric by metric."""

from __future__ import annotations

import argparse
import json

from snficon.analysis.compare import METRICS, START_TOLERANCE_S, Comparison, JobDifference
from snficon.analysis.job_logs import LoggedJob
from snficon.errors import InputError
from snficon.fileio import atomic_write_text, check_output_file
from snficon.manifest import accept_run_folder
from snficon.safe_paths import refuse_output_over_input

#: Exit status when a metric differs by more than --fail-above.
EXIT_ABOVE = 1


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "compare", help="compare two runs job by job (first differing job, metric differences)",
        description="Read two runs' job logs (a run folder or the file: Batsim's out_jobs.csv, "
                    "or SPARS's raw_job_log.csv), match jobs by id, print the first job in "
                    "submission order whose start time or node set differs, how many differ, "
                    "and each metric in both runs (jobs, mean/max wait, mean response, mean "
                    "slowdown, makespan, wasted energy when both runs have it). Exit status "
                    f"{EXIT_ABOVE} when --fail-above is given and a metric differs by more.")
    parser.add_argument("run_a", metavar="RUN_A", help="reference run (folder or job log)")
    parser.add_argument("run_b", metavar="RUN_B", help="compared run (folder or job log)")
    parser.add_argument("--tolerance", type=float, default=START_TOLERANCE_S, metavar="S",
                        help="start times this close are equal (default: %(default)s s)")
    parser.add_argument("--fail-above", type=float, metavar="PCT",
                        help=f"exit {EXIT_ABOVE} if a metric's relative difference exceeds PCT %%")
    parser.add_argument("--metric", action="append", choices=sorted(METRICS), dest="metrics",
                        help="metric that --fail-above checks (repeatable; default: all)")
    parser.add_argument("--show", type=int, default=1, metavar="N",
                        help="print the first N differing jobs (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", help="also write the comparison as JSON")
    add_run_check_options(parser)
    parser.set_defaults(func=compare)


def add_run_check_options(parser: argparse.ArgumentParser) -> None:
    """``--foreign`` and ``--allow-incomplete``: what a reader of run folders accepts
    beyond complete snficon runs (:func:`snficon.manifest.accept_run_folder`)."""
    parser.add_argument("--foreign", action="store_true",
                        help="also read outputs without manifest.json, made by another "
                             "program (the real Batsim, SPARS): read as they are")
    parser.add_argument("--allow-incomplete", action="store_true",
                        help="also read a run that did not finish (out_INCOMPLETE.txt) or "
                             "whose files changed since (manifest mismatch); said in the "
                             "output")


def compare(args: argparse.Namespace) -> int:
    from snficon.analysis.compare import compare_logs
    from snficon.analysis.job_logs import read_job_log

    if not args.tolerance >= 0:
        raise InputError(f"--tolerance must be >= 0, got {args.tolerance}")
    if args.fail_above is not None and not args.fail_above >= 0:
        raise InputError(f"--fail-above must be >= 0, got {args.fail_above}")
    if args.show < 0:
        raise InputError(f"--show must be >= 0, got {args.show}")
    if args.json:
        check_output_file(args.json)
        refuse_output_over_input(args.json, [args.run_a, args.run_b], option="--json")
    notes = [note for note in (accept_run_folder(run, allow_incomplete=args.allow_incomplete,
                                                 foreign=args.foreign)
                               for run in (args.run_a, args.run_b)) if note]
    result = compare_logs(read_job_log(args.run_a), read_job_log(args.run_b), args.tolerance)
    for line in [*(f"NOTE: {note}" for note in notes), *summary_lines(result, args.show)]:
        print(line)
    if args.json:
        record = {**as_record(result), **({"notes": notes} if notes else {})}
        atomic_write_text(args.json, json.dumps(record, indent=2, sort_keys=True,
                                                allow_nan=False) + "\n")
    if args.fail_above is None:
        return 0
    names = tuple(args.metrics) if args.metrics else None
    worst = result.worst_relative(names)
    if worst is not None and 100 * worst[1] > args.fail_above:
        print(f"FAIL: {worst[0]} differs by {100 * worst[1]:.3f} % (> {args.fail_above:g} %)")
        return EXIT_ABOVE
    print(f"OK: every checked metric within {args.fail_above:g} %")
    return 0


def summary_lines(result: Comparison, show: int) -> list[str]:
    """The printed report: the two logs, the job counts, the first differing jobs, metrics."""
    lines = [f"A: {result.a.source} ({result.a.kind}, {len(result.a.jobs)} jobs)",
             f"B: {result.b.source} ({result.b.kind}, {len(result.b.jobs)} jobs)",
             f"jobs run in both: {result.matched}; only in A: {len(result.only_a)}; "
             f"only in B: {len(result.only_b)}",
             f"differing jobs: {len(result.differences)} (start differs: "
             f"{result.start_differs}, node set differs: {result.nodes_differs}; "
             f"tolerance {result.tolerance_s:g} s)"]
    for rank, pair in enumerate(result.differences[:show], start=1):
        lines.extend(_job_lines(f"differing job #{rank}" if rank > 1 else
                                "first differing job", pair))
    earliest = result.earliest
    if show and earliest is not None and earliest is not result.first:
        lines.extend(_job_lines("earliest differing start", earliest))
    lines.append(f"{'metric':<15}{'A':>16}{'B':>16}{'B - A':>16}{'rel.':>10}")
    for metric in result.metrics:
        unit = METRICS[metric.name]
        rel = "" if metric.relative is None else f"{100 * metric.relative:+.3f} %"
        lines.append(f"{metric.name + (f' ({unit})' if unit else ''):<15}"
                     f"{_number(metric.a):>16}{_number(metric.b):>16}"
                     f"{_number(metric.delta):>16}{rel:>10}")
    return lines


def _job_lines(title: str, pair: JobDifference) -> list[str]:
    from snficon.intervals import format_resources

    def nodes(job: LoggedJob) -> str:
        return "?" if job.nodes is None else format_resources(job.nodes)

    return [f"{title}: {pair.a.job_id} (submitted {pair.a.submit:g} s, {pair.a.res} nodes)",
            f"  A: start {pair.a.start:.6g}  finish {pair.a.finish:.6g}  nodes {nodes(pair.a)}",
            f"  B: start {pair.b.start:.6g}  finish {pair.b.finish:.6g}  nodes {nodes(pair.b)}",
            f"  start B - A: {pair.start_delta:+g} s; node sets "
            f"{'differ' if pair.nodes_differ else 'equal or unknown'}"]


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.6g}" if abs(value) < 1e6 else f"{value:.6e}"


def as_record(result: Comparison) -> dict:
    """The comparison as plain JSON data (the --json file)."""
    return {
        "a": result.a.source, "b": result.b.source, "matched": result.matched,
        "only_a": list(result.only_a), "only_b": list(result.only_b),
        "differing_jobs": len(result.differences), "start_differs": result.start_differs,
        "nodes_differs": result.nodes_differs, "tolerance_s": result.tolerance_s,
        "first": _job_record(result.first), "earliest": _job_record(result.earliest),
        "metrics": {m.name: {"a": m.a, "b": m.b, "delta": m.delta, "relative": m.relative}
                    for m in result.metrics},
    }


def _job_record(pair: JobDifference | None) -> dict | None:
    if pair is None:
        return None
    return {"job_id": pair.a.job_id, "submit": pair.a.submit, "res": pair.a.res,
            "start_a": pair.a.start, "start_b": pair.b.start,
            "nodes_a": None if pair.a.nodes is None else sorted(pair.a.nodes),
            "nodes_b": None if pair.b.nodes is None else sorted(pair.b.nodes)}
