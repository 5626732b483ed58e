"""``snficon-batsim``: the embedded engine as a drop-in for the ``batsim`` binary.

It takes Batsim 4's command line, connects a REQ socket to the scheduler
(``pybatsim NAME`` listens on ``tcp://*:28000`` by default) and writes Batsim's
output files under the ``-e`` prefix. Batsim flags this engine does not
implement are refused with a message naming them, never silently ignored.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from snficon import __version__
from snficon.drivers.session import build_engine
from snficon.drivers.transcript import Transcript
from snficon.drivers.zmq_link import DEFAULT_ENDPOINT, check_endpoint, run_over_zmq
from snficon.errors import OutputError, SnficonError
from snficon.fileio import (
    check_output_file,
    check_output_prefix,
    clear_incomplete,
    mark_incomplete,
)
from snficon.interrupts import describe, exit_code_of, stop_signals_raise

#: Batsim 4 options this engine refuses: flag -> number of values it takes.
UNSUPPORTED_FLAGS: dict[str, int] = {
    "-W": 1, "--workflow": 1, "--WS": 2, "--workflow-start": 2, "--sg-cfg": 1,
    "--sg-log": 1, "-r": 1, "--add-role-to-hosts": 1, "--events": 1, "--enable-redis": 0,
    "--redis-hostname": 1, "--redis-port": 1, "--redis-prefix": 1, "--mmax-workload": 0,
    "--enable-dynamic-jobs": 0, "--acknowledge-dynamic-jobs": 0, "--enable-profile-reuse": 0,
    "--dump-execution-context": 0, "--enable-compute-sharing": 0,
    "--disable-storage-sharing": 0, "--no-sched": 0, "--sched-cfg": 1, "--unittest": 0,
    "--simgrid-version": 0, "--forward-profiles-on-submission": 0, "-k": 0,
    "--ignore-beyond-last-workflow": 0,
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="snficon-batsim",
        description="Batsim 4-compatible simulator (snficon's embedded engine). Connects to a "
                    "scheduler such as `pybatsim NAME` and writes Batsim's output files.")
    parser.add_argument("--version", action="version",
                        version=f"snficon-batsim {__version__} (Batsim 4.2 protocol)")
    parser.add_argument("-p", "--platform", required=True, help="SimGrid platform XML file")
    parser.add_argument("-w", "--workload", action="append", required=True,
                        help="Batsim JSON workload (repeat for several: w0, w1, ...)")
    parser.add_argument("-E", "--energy", action="store_true",
                        help="enable the energy model and the energy output files")
    parser.add_argument("-e", "--export", default="out/",
                        help="output file prefix (default: %(default)s)")
    parser.add_argument("-s", "--socket-endpoint", default=DEFAULT_ENDPOINT,
                        help="scheduler endpoint to connect to (default: %(default)s)")
    parser.add_argument("-m", "--master-host", default="master_host",
                        help="only 'master_host' is supported")
    parser.add_argument("--mmax", type=int, default=0, help="only 0 (no limit) is supported")
    parser.add_argument("-v", "--verbosity", default="information",
                        choices=("quiet", "network-only", "information", "debug"))
    parser.add_argument("-q", "--quiet", action="store_true")
    parser.add_argument("--disable-schedule-tracing", action="store_true",
                        help="accepted: this engine writes no Paje trace anyway")
    parser.add_argument("--disable-machine-state-tracing", action="store_true",
                        help="do not write out_machine_states.csv")
    parser.add_argument("--answer-timeout", type=float, default=600.0, metavar="SECONDS",
                        help="give up when the scheduler does not answer a message within "
                             "this wall-clock time (default: %(default)s)")
    parser.add_argument("--transcript", metavar="FILE",
                        help="also write every protocol message to FILE (JSON lines)")
    parser.add_argument("--transition-jitter", help=argparse.SUPPRESS)
    for flag, nargs in UNSUPPORTED_FLAGS.items():
        if nargs:
            parser.add_argument(flag, nargs=nargs, action="append", help=argparse.SUPPRESS)
        else:
            parser.add_argument(flag, action="store_true", help=argparse.SUPPRESS)
    return parser


def _refuse_unsupported(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    used = [flag for flag in UNSUPPORTED_FLAGS
            if flag.startswith("--") and getattr(args, flag[2:].replace("-", "_"), None)]
    if getattr(args, "W", None):
        used.append("-W")
    if getattr(args, "r", None):
        used.append("-r")
    if getattr(args, "k", None):
        used.append("-k")
    if used:
        parser.error(f"Batsim option(s) {', '.join(sorted(set(used)))} are not supported by "
                     "the embedded engine; run the real batsim for them")
    if args.transition_jitter is not None:
        parser.error("--transition-jitter is not Batsim's model and snficon-batsim stands for "
                     "Batsim: it is refused here (use `snficon run --transition-jitter ...`)")
    if args.master_host != "master_host":
        parser.error("--master-host: only 'master_host' is supported by the embedded engine")
    if args.mmax != 0:
        parser.error("--mmax: only 0 (no limit) is supported by the embedded engine")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _refuse_unsupported(parser, args)
    quiet = args.quiet or args.verbosity == "quiet"
    logging.basicConfig(level=logging.WARNING if quiet else logging.INFO,
                        format="snficon-batsim: %(message)s")
    log = logging.getLogger("snficon.batsim")
    with stop_signals_raise():
        return _simulate(args, log)


def _simulate(args: argparse.Namespace, log: logging.Logger) -> int:
    """Run the simulation; write the outputs (marked unfinished if it stopped early)."""
    engine = None
    transcript = Transcript() if args.transcript else None
    stopped = "an unexpected error (see the traceback)"
    try:
        check_output_prefix(args.export)
        check_endpoint(args.socket_endpoint)
        if args.transcript:
            check_output_file(args.transcript)
        engine = build_engine(args.platform, args.workload, energy=args.energy)
        engine.tables.trace_machine_states = not args.disable_machine_state_tracing
        engine.tables.stream_to(args.export)
        log.info("connecting to the scheduler at %s", args.socket_endpoint)
        run_over_zmq(engine, args.socket_endpoint, answer_timeout_s=args.answer_timeout,
                     transcript=transcript)
        log.info("simulation finished at t=%s", engine.now)
        stopped = ""
        return 0
    except SnficonError as exc:
        stopped = f"{type(exc).__name__}: {exc}"
        print(f"snficon-batsim: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except OSError as exc:  # the environment: a full disk, an I/O error
        stopped = f"{type(exc).__name__}: {exc}"
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"snficon-batsim: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return OutputError.exit_code
    except KeyboardInterrupt as stop:
        stopped = f"{describe(stop)} by a signal"
        print(f"snficon-batsim: {describe(stop)}", file=sys.stderr)
        return exit_code_of(stop)
    finally:
        if engine is not None:
            files = engine.outputs().write(args.export)
            if stopped:
                mark_incomplete(args.export, f"stopped at t={engine.now:g}: {stopped}")
            else:
                clear_incomplete(args.export)
            if transcript is not None:
                transcript.write(args.transcript)
            log.info("wrote %s", ", ".join(str(f) for f in files))


if __name__ == "__main__":
    sys.exit(main())
