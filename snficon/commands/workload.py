"""``snficon workload ...``: generate, convert and check Batsim workloads (SPEC section 4).

``markovian`` draws the paper's generated workload, ``convert`` turns an SWF
trace or a SPARS JSON file into Batsim JSON, ``check`` loads a Batsim workload
and prints a one-line summary. Reports go to stdout.
"""

from __future__ import annotations

import argparse
from dataclasses import fields

from snficon.commands.workload_checkpoints import (
    add_checkpoint_convert_options,
    convert_with_checkpoints,
    register_checkpoint_actions,
)
from snficon.workload.convert import convert_trace
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


def _add_output_options(parser: argparse.ArgumentParser) -> None:
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
    if args.checkpoint_interval is not None:
        return convert_with_checkpoints(args)
    report = convert_trace(args.input, args.output, max_jobs=args.jobs, nb_res=args.nb_res,
                           drop_oversized=args.drop_oversized, options=_options(args))
    print("\n".join(report.lines()))
    return 0


def _check(args: argparse.Namespace) -> int:
    print(summarize(read_workload(args.file)).line())
    return 0


def register(commands: argparse._SubParsersAction) -> None:
    """Add ``workload markovian|convert|check`` to the ``snficon`` command (called by cli.py)."""
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
    conv.add_argument("--nb-res", type=int, default=None, metavar="N",
                      help="platform size (default: SWF header MaxProcs/MaxNodes, or the "
                           "SPARS file's nb_res)")
    conv.add_argument("--drop-oversized", action="store_true",
                      help="drop jobs larger than nb_res (default: keep them)")
    _add_output_options(conv)
    add_checkpoint_convert_options(conv)
    conv.set_defaults(func=_convert)

    register_checkpoint_actions(sub)

    check = sub.add_parser("check", help="validate a Batsim JSON workload")
    check.add_argument("file", metavar="FILE")
    check.set_defaults(func=_check)
