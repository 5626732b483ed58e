"""``snficon campaign``: expand a campaign file, list its runs or run them."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import TextIO

from snficon.campaign.cluster import check_slurm_available
from snficon.campaign.cluster_settings import (
    SCALAR_KEYS,
    ClusterSettings,
    flag_of,
    with_overrides,
)
from snficon.campaign.config import Campaign, read_campaign
from snficon.campaign.executors import EXECUTORS
from snficon.campaign.expand import (
    Expansion,
    RunPlan,
    check_inputs,
    expand,
    make_specs,
    missing_inputs,
    run_params,
    shown,
)
from snficon.campaign.make_inputs import make_missing_inputs
from snficon.campaign.results import option_text, parquet_available
from snficon.campaign.runner import (
    CampaignInterrupted,
    CampaignOutcome,
    Progress,
    run_campaign,
    statuses,
)
from snficon.campaign.runs import run_id
from snficon.campaign.size import DEFAULT_MAX_RUNS
from snficon.commands.limits import MAX_WORKERS, check_count
from snficon.errors import InputError
from snficon.fileio import check_output_folder


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "campaign", help="run the simulations a campaign file lists",
        description="Expand a campaign file (TOML: platforms, workloads, groups of policies "
                    "and option sweeps) into runs, and run those not done yet in "
                    "RESULTS/runs/<id>/; then write RESULTS/results.csv.")
    parser.add_argument("file", metavar="FILE", help="campaign file (TOML), e.g. expe/quick.toml")
    parser.add_argument("--dry-run", action="store_true",
                        help="list the runs (one line each) and their count; run nothing")
    parser.add_argument("-o", "--output", metavar="RESULTS",
                        help="results folder (with --dry-run: show each run's status there)")
    parser.add_argument("--executor", choices=EXECUTORS, default="local",
                        help="local: a process pool; dask: Dask distributed; slurm: Dask "
                             "workers as Slurm jobs, as the file's [cluster] table and the "
                             "--cluster-* options say; serial: one by one in this process "
                             "(default: %(default)s)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="parallel runs (default: the number of CPUs)")
    parser.add_argument("--scheduler-address", metavar="ADDR",
                        help="dask: an existing scheduler (e.g. tcp://host:8786) instead of "
                             "a LocalCluster")
    cluster = parser.add_argument_group(
        "slurm executor", "settings of the [cluster] table, given here instead (they win "
        "over the file's); the lists job_extra_directives and job_script_prologue are set "
        "in the file only")
    for key, (kind, metavar, text) in CLUSTER_FLAGS.items():
        cluster.add_argument(flag_of(key), dest=f"cluster_{key}", type=kind, metavar=metavar,
                             help=text)
    parser.add_argument("--reuse-stale", action="store_true",
                        help="keep done runs made by other code or input files (see "
                             "provenance.json in each run folder) instead of running them "
                             "again")
    parser.add_argument("--make-inputs", action="store_true",
                        help="first make each missing input (platform, workload, carbon "
                             "signal) by running its 'make' command from the campaign file, "
                             "in the current folder")
    parser.add_argument("--max-runs", type=int, default=DEFAULT_MAX_RUNS, metavar="N",
                        help="refuse a campaign listing more runs than this, counted before "
                             "any is made (default: %(default)s)")
    parser.add_argument("--robin", metavar="DIR",
                        help="write one robin experiment file per run in DIR (run them from "
                             "the repository root) instead of running the campaign")
    parser.set_defaults(func=campaign)


#: The ``--cluster-KEY`` options: type, metavar, help.
CLUSTER_FLAGS: dict[str, tuple[type, str, str]] = {
    "queue": (str, "NAME", "Slurm partition of the worker jobs (#SBATCH -p)"),
    "account": (str, "NAME", "Slurm account charged (#SBATCH -A)"),
    "cores": (int, "N", "CPUs of one worker job"),
    "memory": (str, "SIZE", "memory of one worker job, e.g. 16GB"),
    "walltime": (str, "TIME", "time limit of one worker job, e.g. 04:00:00 or 1-00:00:00"),
    "processes": (int, "N", "Dask workers (one run each at a time) per job (default: cores)"),
    "minimum_workers": (int, "N", "workers kept even with no run queued (default: 0)"),
    "maximum_workers": (int, "N", "most workers at once (default: one job's processes)"),
    "local_directory": (str, "DIR", "the workers' scratch folder on the compute nodes"),
}


def cluster_settings(args: argparse.Namespace, loaded: Campaign) -> ClusterSettings | None:
    """The ``[cluster]`` table with the ``--cluster-*`` options in place of its values (None
    unless ``--executor slurm``); raises InputError on a bad value or a misplaced option."""
    given = {key: getattr(args, f"cluster_{key}", None) for key in SCALAR_KEYS}
    if args.executor != "slurm":
        named = [flag_of(key) for key, value in given.items() if value is not None]
        if named:
            raise InputError(f"{', '.join(named)}: for --executor slurm, not {args.executor}")
        return None
    if args.workers is not None:
        raise InputError("--workers: with --executor slurm the parallel runs are the "
                         "cluster's workers: give --cluster-maximum-workers N (or "
                         "maximum_workers in the [cluster] table)")
    settings = with_overrides(loaded.cluster, given, loaded.source)
    check_slurm_available()  # before any output: without sbatch no worker could start
    return settings


def campaign(args: argparse.Namespace) -> int:
    check_count(args.max_runs, "--max-runs", 1, 10**12)
    check_count(args.workers, "--workers", 1, MAX_WORKERS)
    loaded = read_campaign(args.file)
    expansion = expand(loaded, args.max_runs)
    if args.dry_run:
        dry_run(expansion, Path(args.output) if args.output else None, sys.stdout)
        return 0
    if args.robin:
        if args.make_inputs:
            make_missing_inputs(loaded, expansion.plans, sys.stderr)
        return robin_files(loaded, expansion, args.robin)
    if not args.output:
        raise InputError("campaign: give the results folder with -o RESULTS (or use --dry-run)")
    results = check_output_folder(args.output)
    cluster = cluster_settings(args, loaded)
    if args.make_inputs:
        make_missing_inputs(loaded, expansion.plans, sys.stderr)
    check_inputs(loaded, expansion.plans)
    specs = make_specs(expansion.plans, results / "runs")
    if args.executor in ("dask", "slurm") and not getattr(args, "verbose", False):
        quiet_dask_logging()
    print(f"campaign {loaded.name}: {len(specs)} runs, results in {results}/")
    line = ProgressLine(sys.stderr)
    started = time.monotonic()
    try:
        outcome = run_campaign(specs, results, executor=args.executor, workers=args.workers,
                               address=args.scheduler_address, on_progress=line,
                               reuse_stale=args.reuse_stale, cluster=cluster)
    except CampaignInterrupted as stop:
        line.close()
        return interrupted(stop.outcome, time.monotonic() - started)
    finally:
        line.close()
    print(f"{outcome.total} runs: {outcome.done} done now, {outcome.skipped} done before, "
          f"{outcome.failed} failed ({duration(time.monotonic() - started)})")
    if outcome.stale:
        what = ("kept (--reuse-stale)" if outcome.reused_stale else
                "run again (--reuse-stale keeps them)")
        reasons = sorted({reason for _, reason in outcome.stale})
        print(f"  {len(outcome.stale)} done runs were stale, {what}: {'; '.join(reasons)}")
    for run, error in outcome.failures:
        print(f"  failed {run}: {error} (see {results / 'runs' / run / 'error.txt'})")
    files = ", ".join(str(path) for path in outcome.files)
    note = "" if parquet_available() else " (no Parquet: pyarrow is not installed)"
    print(f"results: {files}{note}")
    return 1 if outcome.failed else 0


#: Loggers of Dask's scheduler, client, workers and job submission, kept to warnings.
DASK_LOGGERS = ("distributed", "dask_jobqueue")


def quiet_dask_logging() -> None:
    """Keep Dask's log to its warnings (``snficon -v campaign`` keeps its INFO lines): the
    scheduler's and client's INFO lines would flood the terminal around the progress line.

    Dask sets its loggers' levels from its configuration when ``distributed`` is imported,
    so that is done first here; ``DASK_LOGGING__DISTRIBUTED=warning`` (unless the
    environment gives one) says the same to the worker processes this one starts, or that
    Slurm starts with its environment (their job output files).
    """
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
    try:
        import distributed  # noqa: F401  (configures its loggers on import)
    except ImportError:  # the executor says what is missing
        return
    for name in DASK_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


#: Exit status after Ctrl-C (128 + SIGINT), as shells report it; 143 after SIGTERM.
INTERRUPTED_EXIT = 130


def interrupted(outcome: CampaignOutcome, elapsed_s: float) -> int:
    """Say what an interrupted campaign finished and how to resume it; the exit status.

    The status is 128 + the signal: 130 after Ctrl-C (SIGINT), 143 after SIGTERM.
    """
    done = outcome.skipped + outcome.done
    what = "terminated" if outcome.signum == signal.SIGTERM else "interrupted"
    print(f"{what}: {done} of {outcome.total} runs done ({outcome.done} now, "
          f"{outcome.skipped} before), {outcome.failed} failed, the runs in progress stopped "
          f"({duration(elapsed_s)})")
    if outcome.files:
        print(f"results of the runs done: {', '.join(str(path) for path in outcome.files)}")
    print("run the same command again to resume: the runs done are skipped, the others run")
    return 128 + outcome.signum


def robin_files(loaded: Campaign, expansion: Expansion, folder: str) -> int:
    """``--robin DIR``: write the robin files of the runs whose inputs exist.

    Writing files simulates nothing, so missing inputs are a warning: their
    runs get no file (a run's id hashes its input files), the others do.
    """
    from snficon.robin.campaign import write_campaign_robin

    check_output_folder(folder)
    missing = missing_inputs(expansion.plans)
    absent = {item.path for item in missing}
    ready = [plan for plan in expansion.plans
             if plan.platform.path not in absent and plan.workload.path not in absent]
    if missing:
        lines = [f"snficon: warning: {len(missing)} input file(s) of {loaded.source} are not "
                 f"on disk: the {len(expansion.plans) - len(ready)} runs using them get no "
                 "robin file (a run's id hashes its inputs); make them and run this again:"]
        for item in missing:
            lines.append(f"  {item.label}: {shown(item.path)}"
                         + (f"\n    make it with: {item.make}" if item.make else ""))
        print("\n".join(lines), file=sys.stderr)
    files = write_campaign_robin(loaded, ready, folder)
    print(f"campaign {loaded.name}: {len(files)} robin files in {folder}/ "
          f"(index.csv lists them); run one from the repository root with "
          f"`robin FILE.yaml` or `snficon robin FILE.yaml [--engine embedded]`")
    return 0


def dry_run(expansion: Expansion, results: Path | None, out: TextIO) -> None:
    """One line per run (id, [status], policy, platform, workload, changed options, groups)."""
    plans = expansion.plans
    missing = {item.path for item in missing_inputs(plans)}
    digests: dict[Path, str] = {}
    ids = [_plan_id(plan, missing, digests) for plan in plans]
    status: dict[str, str] = {}
    if results is not None:
        known = [plan for plan, run in zip(plans, ids, strict=True) if run]
        status = statuses(make_specs(known, results / "runs"))
    widths = [max((len(text) for text in column), default=0) for column in (
        [plan.policy for plan in plans], [plan.platform.label for plan in plans],
        [_workload(plan) for plan in plans])]
    for plan, run in zip(plans, ids, strict=True):
        cells = [run or "(input missing) "]
        if results is not None:
            cells.append(f"{status.get(run, 'todo') if run else 'todo':<6}")
        cells += [f"{plan.policy:<{widths[0]}}", f"{plan.platform.label:<{widths[1]}}",
                  f"{_workload(plan):<{widths[2]}}"]
        options = " ".join(f"{key}={option_text(value)}" for key, value in plan.changed)
        if plan.carbon is not None:
            options = f"{options}  {plan.carbon.text()}".strip()
        cells.append(f"{options}  [{', '.join(plan.groups)}]" if options
                     else f"[{', '.join(plan.groups)}]")
        out.write("  ".join(cells) + "\n")
    merged = expansion.listed - len(plans)
    out.write(f"{len(plans)} runs" + (f" ({expansion.listed} grid points, {merged} listed "
                                       "twice)" if merged else "") + "\n")
    if missing:
        out.write(f"inputs not on disk ({len(missing)}): the campaign will not start until "
                  "they are made:\n")
        for item in missing_inputs(plans):
            out.write(f"  {item.label}: {shown(item.path)}" + (f"\n    make it with: {item.make}"
                                                          if item.make else "") + "\n")


def _plan_id(plan: RunPlan, missing: set[Path], digests: dict[Path, str]) -> str | None:
    if any(item.path in missing for item in plan.inputs):
        return None
    return run_id(run_params(plan, digests))


def _workload(plan: RunPlan) -> str:
    jobs = plan.workload.jobs
    return plan.workload.label + (f" (first {jobs} jobs)" if jobs else "")


def duration(seconds: float) -> str:
    """``3725`` -> ``1h02m``; ``192`` -> ``3m12s``; ``7.2`` -> ``7s``."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class ProgressLine:
    """Prints campaign progress: rewritten in place on a terminal, a line per change elsewhere."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.width = 0

    def __call__(self, progress: Progress) -> None:
        finished = progress.skipped + progress.done + progress.failed
        left = duration(progress.left_s) if progress.left_s is not None else "?"
        text = (f"[{finished}/{progress.total}] {progress.done} done, {progress.running} "
                f"running, {progress.failed} failed, {progress.queued} queued; "
                f"{duration(progress.elapsed_s)} elapsed, {left} left")
        if self.tty:
            self.stream.write("\r" + text.ljust(self.width))
            self.width = len(text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the line rewritten in place (once; later calls do nothing)."""
        if self.tty and self.width:
            self.stream.write("\n")
            self.stream.flush()
        self.width = 0
