"""``snficon workload ...``: generate, convert and check Batsim workloads (SPEC section 4).

``markovian`` draws the paper's generated workload, ``convert`` turns an SWF
trace or a SPARS JSON file into Batsim JSON, ``curriculum`` writes the RL
baseline's simple/real/complex training workloads from one segment, ``flex``
adds COAST's flexibility fields to a workload's jobs, ``check`` loads a Batsim
workload and prints a one-line summary. Reports go to stdout.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

from snficon.commands.limits import MAX_JOBS, MAX_NODES, check_count
from snficon.commands.workload_checkpoints import (
    add_checkpoint_convert_options,
    convert_with_checkpoints,
    register_checkpoint_actions,
)
from snficon.errors import InputError
from snficon.fileio import atomic_write_text, check_output_file, check_output_folder
from snficon.safe_paths import refuse_output_over_input
from snficon.workload.convert import convert_trace
from snficon.workload.curriculum import DEFAULT_SEED, STAGES, write_curriculum
from snficon.workload.flex import FlexParams, assign_flexibility, parse_duration
from snficon.workload.markovian import RES_MEANS, MarkovianParams, generate_markovian
from snficon.workload.reader import read_workload
from snficon.workload.summary import summarize
from snficon.workload.writer import (
    PROFILE_KINDS,
    WALLTIME_MODES,
    BatsimOptions,
    write_batsim_workload,
)

_DEFAULTS = {f.name: f.default for f in fields(MarkovianParams)}


def _add_output_options(parser: argparse.ArgumentParser, output: bool = True) -> None:
    if output:
        parser.add_argument("-o", "--output", required=True, metavar="FILE",
                            help="Batsim JSON workload to write")
    parser.add_argument("--walltime", choices=WALLTIME_MODES, default=WALLTIME_MODES[0],
                        help="paper: walltime -1, jobs run past their request (default); "
                             "kill: walltime = reqtime, Batsim kills overrunning jobs")
    parser.add_argument("--profile", choices=PROFILE_KINDS, default=PROFILE_KINDS[0],
                        help="job profile type (default %(default)s: cpu = runtime x 1e9)")
    parser.add_argument("--min-runtime", type=float, default=None, metavar="S",
                        help="raise zero runtimes to S seconds (required with --profile delay)")


def _options(args: argparse.Namespace) -> BatsimOptions:
    return BatsimOptions(walltime=args.walltime, profile=args.profile,
                         min_runtime_s=args.min_runtime)


def _markovian(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    check_count(args.jobs, "--jobs", 1, MAX_JOBS)
    check_count(args.nodes, "--nodes", 1, MAX_NODES)
    check_count(args.cap, "--cap", 1, MAX_NODES)
    params = MarkovianParams(seed=args.seed, n_jobs=args.jobs, load=args.load, nodes=args.nodes,
                             mean_runtime_s=args.mean_runtime, mean_reqtime_s=args.mean_reqtime,
                             p=args.p, cap=args.cap, res_mean=args.res_mean)
    options = _options(args)
    report = write_batsim_workload(args.output, generate_markovian(params), params.nodes, options)
    print(f"markovian: seed {params.seed}, load {params.load:g}, mean interarrival "
          f"{params.mean_interarrival_s:.10g} s ({params.res_mean} mean res "
          f"{params.mean_res:.15g})")
    print("\n".join(report.lines()))
    print(f"output: {args.output}")
    return 0


def _convert(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    refuse_output_over_input(args.output, [args.input])
    if args.checkpoint_interval is not None:
        return convert_with_checkpoints(args)
    report = convert_trace(args.input, args.output, max_jobs=args.jobs, nb_res=args.nb_res,
                           drop_oversized=args.drop_oversized, options=_options(args),
                           skip=args.skip)
    print("\n".join(report.lines()))
    return 0


def _curriculum(args: argparse.Namespace) -> int:
    check_output_folder(args.output)
    for stage in STAGES:
        refuse_output_over_input(Path(args.output) / f"{stage}.json", [args.segment])
    report = write_curriculum(args.segment, args.output, seed=args.seed, options=_options(args))
    print("\n".join(report.lines()))
    return 0


def _flex(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    refuse_output_over_input(args.output, [args.input])
    params = FlexParams(share=args.share, max_delay_s=parse_duration(args.max_delay),
                        min_delay_s=(parse_duration(args.min_delay)
                                     if args.min_delay is not None else None),
                        deadline_factor=args.deadline_factor, seed=args.seed)
    try:
        document = json.loads(Path(args.input).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{args.input}: workload file not found") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{args.input}: cannot read the workload: {exc}") from None
    result, report = assign_flexibility(document, params, args.input)
    atomic_write_text(args.output, json.dumps(result, indent=1) + "\n")
    print(f"flex: share {params.share:g}, seed {params.seed}")
    print("\n".join(report.lines()))
    print(f"output: {args.output}")
    return 0


def _check(args: argparse.Namespace) -> int:
    print(summarize(read_workload(args.file)).line())
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``workload markovian|convert|curriculum|flex|check`` to ``snficon`` (cli.py)."""
    parser = commands.add_parser("workload", help="generate, convert or check Batsim workloads")
    parser.set_defaults(func=lambda args: parser.print_help())
    sub = parser.add_subparsers(dest="workload_command", metavar="ACTION")

    gen = sub.add_parser("markovian", help="generate the paper's Markovian workload",
                         description="Draw the paper's Markovian workload (SPEC section 4); "
                                     "the defaults regenerate markovian-3000.")
    gen.add_argument("--seed", type=int, default=_DEFAULTS["seed"])
    gen.add_argument("--jobs", type=int, default=_DEFAULTS["n_jobs"], help="number of jobs")
    gen.add_argument("--load", type=float, default=_DEFAULTS["load"], help="offered load")
    gen.add_argument("--nodes", type=int, default=_DEFAULTS["nodes"],
                     help="platform size (also nb_res)")
    gen.add_argument("--mean-runtime", type=float, default=_DEFAULTS["mean_runtime_s"],
                     metavar="S")
    gen.add_argument("--mean-reqtime", type=float, default=_DEFAULTS["mean_reqtime_s"],
                     metavar="S")
    gen.add_argument("--p", type=float, default=_DEFAULTS["p"],
                     help="geometric job-size parameter")
    gen.add_argument("--cap", type=int, default=_DEFAULTS["cap"], help="largest job size")
    gen.add_argument("--res-mean", choices=RES_MEANS, default=_DEFAULTS["res_mean"],
                     help="mean job size for the arrival rate: capped (SPEC formula, "
                          "default) or truncated (the paper file's exact value)")
    _add_output_options(gen)
    gen.set_defaults(func=_markovian)

    conv = sub.add_parser("convert", help="convert an SWF trace or SPARS JSON to Batsim JSON",
                          description="Convert INPUT (.swf, .swf.gz or SPARS .json) as the "
                                      "paper does (SPEC section 4) and print a report.")
    conv.add_argument("input", metavar="INPUT")
    conv.add_argument("--jobs", type=int, default=None, metavar="K",
                      help="keep the first K kept jobs (default: all)")
    conv.add_argument("--skip", type=int, default=0, metavar="K",
                      help="pass over the first K kept jobs first (--skip 3000 --jobs 1000: "
                           "jobs 3001-4000, the paper's RL training segment); subtimes are "
                           "then relative to the last skipped job's submission")
    conv.add_argument("--nb-res", type=int, default=None, metavar="N",
                      help="platform size (default: SWF header MaxProcs/MaxNodes, or the "
                           "SPARS file's nb_res)")
    conv.add_argument("--drop-oversized", action="store_true",
                      help="drop jobs larger than nb_res (default: keep them)")
    _add_output_options(conv)
    add_checkpoint_convert_options(conv)
    conv.set_defaults(func=_convert)

    cur = sub.add_parser("curriculum", help="write the RL curriculum of a training segment",
                         description="From SEGMENT (a Batsim JSON workload, e.g. written by "
                                     "'convert --skip 3000 --jobs 1000'), write DIR/simple.json "
                                     "(exponential arrivals and runtimes with the segment's "
                                     "means), DIR/real.json (the segment), DIR/complex.json "
                                     "(arrivals and runtimes from kernel density estimates of "
                                     "the segment's) and DIR/curriculum.json (the stages in "
                                     "training order: simple, real, complex).")
    cur.add_argument("segment", metavar="SEGMENT")
    cur.add_argument("-o", "--output", required=True, metavar="DIR",
                     help="folder to write the three workloads and curriculum.json into")
    cur.add_argument("--seed", type=int, default=DEFAULT_SEED,
                     help="seed of the simple and complex draws (default %(default)s, the "
                          "paper authors')")
    _add_output_options(cur, output=False)
    cur.set_defaults(func=_curriculum)

    flex = sub.add_parser(
        "flex", help="give jobs COAST's flexibility fields (flexible, max_delay, deadline)",
        description="Mark a seeded share of the jobs flexible, with a maximum delay and a "
                    "deadline (subtime + max delay + factor x requested time), where the "
                    "trace lacks them (snficon.workload.flex).")
    flex.add_argument("input", metavar="INPUT", help="Batsim JSON workload")
    flex.add_argument("-o", "--output", required=True, metavar="FILE")
    flex.add_argument("--share", type=float, default=0.5,
                      help="share of flexible jobs (default %(default)s)")
    flex.add_argument("--max-delay", default="24h", metavar="DURATION",
                      help="maximum delay of a flexible job (default %(default)s; s, m, h, d)")
    flex.add_argument("--min-delay", default=None, metavar="DURATION",
                      help="draw each delay uniformly in [min, max] instead")
    flex.add_argument("--deadline-factor", type=float, default=1.0, metavar="F",
                      help="deadline = subtime + max delay + F x requested time "
                           "(default %(default)s)")
    flex.add_argument("--seed", type=int, default=0)
    flex.set_defaults(func=_flex)
    register_checkpoint_actions(sub)

    check = sub.add_parser("check", help="validate a Batsim JSON workload")
    check.add_argument("file", metavar="FILE")
    check.set_defaults(func=_check)
