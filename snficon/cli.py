"""The ``snficon`` command: one subcommand module per job under :mod:`snficon.commands`.

Exit status: 0 success; 1 some runs of a campaign failed; 2 bad input, bad
option or an output that cannot be written (a full disk, an I/O error: one line
naming the file); 3 a protocol violation by the
scheduler; 4 a scheduler that did not answer in time; 5 a deadlock; 6 a
crashed scheduler; 130 after Ctrl-C (SIGINT) and 143 after SIGTERM
(:mod:`snficon.interrupts`).
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback

from snficon import __version__
from snficon.commands import (
    campaign,
    carbon,
    compare,
    demo,
    platform,
    report,
    rl,
    robin,
    run,
    workload,
)
from snficon.errors import OutputError, SnficonError
from snficon.interrupts import describe, exit_code_of, stop_signals_raise

SUBCOMMANDS = (platform, workload, run, compare, campaign, robin, report, demo, carbon, rl)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="snficon",
        description="Energy-aware HPC job scheduling (SNF-ICON) for Batsim.")
    parser.add_argument("--version", action="version", version=f"snficon {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress")
    parser.add_argument("--debug", action="store_true",
                        help="on an error, also print its traceback (a crashed scheduler's "
                             "included)")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    with stop_signals_raise():
        try:
            return int(args.func(args) or 0)
        except SnficonError as exc:
            if args.debug:
                traceback.print_exception(exc, file=sys.stderr)
            print(f"snficon: error: {exc}", file=sys.stderr)
            return exc.exit_code
        except OSError as exc:  # the environment: a full disk, an I/O error
            if args.debug:
                traceback.print_exception(exc, file=sys.stderr)
            where = f"{exc.filename}: " if exc.filename else ""
            print(f"snficon: error: {where}{exc.strerror or exc}", file=sys.stderr)
            return OutputError.exit_code
        except KeyboardInterrupt as stop:
            print(f"snficon: {describe(stop)}", file=sys.stderr)
            return exit_code_of(stop)


if __name__ == "__main__":
    sys.exit(main())
