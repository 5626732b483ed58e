"""``snficon workload checkpoints|pm100`` and ``convert --checkpoint-interval``.

Workloads for the time-limit layer (:mod:`snficon.workload.checkpoints`):
``checkpoints`` draws the time-limits paper's construction from parameters,
``pm100`` converts PM100's job table, and ``convert`` with
``--checkpoint-interval`` makes an SWF or SPARS trace's jobs that reached
their requested time checkpointing jobs. All write ``walltime: -1`` (the
layer enforces the limits) and print a report.
"""

from __future__ import annotations

import argparse
from dataclasses import fields

from snficon.commands.limits import MAX_JOBS, MAX_NODES, check_count
from snficon.fileio import atomic_write_text, check_output_file
from snficon.safe_paths import refuse_output_over_input
from snficon.workload.checkpoints import (
    ARRIVALS,
    CheckpointFields,
    CheckpointJobs,
    CheckpointWorkloadParams,
    annotate_limit_hits,
    checkpoint_document,
    generate_checkpoint_workload,
    summarize_checkpoints,
)
from snficon.workload.convert import read_trace
from snficon.workload.pm100 import PM100_ARRIVALS, Pm100Selection, read_pm100
from snficon.workload.writer import format_workload_json

_DEFAULTS = {f.name: f.default for f in fields(CheckpointWorkloadParams)}
_PM100 = {f.name: f.default for f in fields(Pm100Selection)}


def _write(output: str, jobs: CheckpointJobs, nb_res: int, checkpoint: CheckpointFields,
           cores_by_id: dict[int, int] | None = None) -> list[str]:
    document, report = checkpoint_document(jobs, nb_res, checkpoint, cores_by_id)
    atomic_write_text(output, format_workload_json(document))
    return [*summarize_checkpoints(jobs, checkpoint).lines(),
            f"checkpoint interval {checkpoint.interval_s:g} s, offset {checkpoint.offset_s:g} s",
            f"jobs written: {report.jobs} (nb_res {report.nb_res}), walltime -1",
            f"output: {output}"]


def _generate(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    check_count(args.n_jobs, "--jobs", 1, MAX_JOBS)
    check_count(args.nodes, "--nodes", 1, MAX_NODES)
    params = CheckpointWorkloadParams(**{name: getattr(args, name) for name in _DEFAULTS})
    print(f"checkpoints: seed {params.seed}, {params.n_jobs} jobs on {params.nodes} nodes, "
          f"scale {params.scale:g}x, arrivals {params.arrivals}")
    print("\n".join(_write(args.output, generate_checkpoint_workload(params), params.nodes,
                           params.fields)))
    return 0


def _pm100(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    refuse_output_over_input(args.output, [args.input])
    check_count(args.nodes, "--nodes", 1, MAX_NODES)
    selection = Pm100Selection(
        partition=args.partition or None, qos=args.qos or None, month=args.month or None,
        states=tuple(args.states.split(",")), min_runtime_s=args.min_runtime,
        checkpoint_limit_min=args.checkpoint_limit, scale=args.scale, arrivals=args.arrivals,
        overrun=args.overrun)
    result = read_pm100(args.input, selection)
    checkpoint = CheckpointFields(args.checkpoint_interval, args.checkpoint_offset)
    print("\n".join(result.lines()))
    print("\n".join(_write(args.output, result.jobs, args.nodes, checkpoint, result.cores)))
    return 0


def convert_with_checkpoints(args: argparse.Namespace) -> int:
    """``convert`` with ``--checkpoint-interval``: read the trace, annotate, write."""
    trace = read_trace(args.input, max_jobs=args.jobs, nb_res=args.nb_res,
                       drop_oversized=args.drop_oversized)
    checkpoint = CheckpointFields(args.checkpoint_interval, args.checkpoint_offset,
                                  args.cores_per_node)
    jobs = annotate_limit_hits(trace.jobs, args.checkpoint_share, args.overrun_mean,
                               args.checkpoint_seed)
    print("\n".join(trace.report.lines()))
    print("\n".join(_write(args.output, jobs, trace.nb_res, checkpoint)))
    return 0


def add_checkpoint_convert_options(parser: argparse.ArgumentParser) -> None:
    """The ``convert`` options that annotate the trace with checkpoints."""
    group = parser.add_argument_group(
        "checkpoints (time-limit layer)",
        "with --checkpoint-interval, jobs whose runtime reached their requested time "
        "checkpoint, their true runtime drawn past the limit: reqtime x (1 + X), X "
        "exponential of mean --overrun-mean; walltime is -1 (the layer enforces the limits)")
    group.add_argument("--checkpoint-interval", type=float, metavar="S",
                       help="checkpoint interval of those jobs (s)")
    group.add_argument("--checkpoint-offset", type=float, default=0.0, metavar="S",
                       help="start of the first interval after the job's start (default 0)")
    group.add_argument("--checkpoint-share", type=float, default=1.0, metavar="F",
                       help="share of the limit-reaching jobs that checkpoint (default 1)")
    group.add_argument("--overrun-mean", type=float, default=1.0, metavar="X",
                       help="mean of X (default 1: twice the limit on average)")
    group.add_argument("--checkpoint-seed", type=int, default=0, metavar="N",
                       help="seed of the share and overrun draws (default 0)")
    group.add_argument("--cores-per-node", type=int, default=None, metavar="N",
                       help="cores per node, for core-seconds in the metrics")


def register_checkpoint_actions(actions: argparse._SubParsersAction) -> None:
    """Add ``workload checkpoints`` and ``workload pm100``."""
    gen = actions.add_parser(
        "checkpoints", help="generate a checkpoint workload of the time-limits paper's shape",
        description="Draw jobs with time limits and checkpointing jobs as the time-limits "
                    "paper built them from PM100 (see snficon.workload.checkpoints); the "
                    "defaults give its 773 jobs, 217 hitting their limit, 109 checkpointing.")
    gen.add_argument("--seed", type=int, default=_DEFAULTS["seed"])
    gen.add_argument("--jobs", dest="n_jobs", type=int, default=_DEFAULTS["n_jobs"])
    gen.add_argument("--nodes", type=int, default=_DEFAULTS["nodes"], help="platform size")
    for name, text in (("timeout_share", "share of jobs that hit their limit"),
                       ("checkpoint_share", "share of those that checkpoint"),
                       ("max_limit_share", "share of completing jobs asking for the maximum"),
                       ("runtime_low", "completing runtime >= this x limit"),
                       ("size_p", "geometric size parameter"),
                       ("overrun", "a limit-hitting job would run this x its limit"),
                       ("scale", "durations divided by this"),
                       ("min_runtime_h", "least runtime (h, before scaling)"),
                       ("interval_s", "checkpoint interval (scaled s)"),
                       ("offset_s", "checkpoint offset (scaled s)"),
                       ("mean_interarrival_s", "mean gap with --arrivals poisson (scaled s)")):
        gen.add_argument(f"--{name.replace('_', '-')}", dest=name, type=float,
                         default=_DEFAULTS[name], help=f"{text} (default %(default)s)")
    for name, text in (("max_limit_h", "the maximum limit (h)"), ("size_cap", "largest job"),
                       ("cores_per_node", "cores per node")):
        gen.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int,
                         default=_DEFAULTS[name], help=f"{text} (default %(default)s)")
    gen.add_argument("--arrivals", choices=ARRIVALS, default=_DEFAULTS["arrivals"],
                     help="zero: all released at 0 (the paper); poisson: random arrivals")
    gen.add_argument("-o", "--output", required=True, metavar="FILE")
    gen.set_defaults(func=_generate)

    pm = actions.add_parser(
        "pm100", help="convert PM100's job_table.parquet into a checkpoint workload",
        description="Select and scale PM100 jobs as the time-limits paper did "
                    "(see snficon.workload.pm100).")
    pm.add_argument("input", metavar="job_table.parquet")
    pm.add_argument("--partition", default=_PM100["partition"], help="'' for any")
    pm.add_argument("--qos", default=_PM100["qos"], help="'' for any")
    pm.add_argument("--month", default=_PM100["month"], help="YYYY-MM, '' for any")
    pm.add_argument("--states", default=",".join(_PM100["states"]))
    pm.add_argument("--min-runtime", type=float, default=_PM100["min_runtime_s"], metavar="S")
    pm.add_argument("--checkpoint-limit", type=float, default=_PM100["checkpoint_limit_min"],
                    metavar="MIN", help="TIMEOUT jobs at this limit checkpoint")
    pm.add_argument("--scale", type=float, default=_PM100["scale"])
    pm.add_argument("--overrun", type=float, default=_PM100["overrun"])
    pm.add_argument("--arrivals", choices=PM100_ARRIVALS, default=_PM100["arrivals"])
    pm.add_argument("--checkpoint-interval", type=float, default=420.0, metavar="S")
    pm.add_argument("--checkpoint-offset", type=float, default=0.0, metavar="S")
    pm.add_argument("--nodes", type=int, default=20, help="platform size (nb_res)")
    pm.add_argument("-o", "--output", required=True, metavar="FILE")
    pm.set_defaults(func=_pm100)
