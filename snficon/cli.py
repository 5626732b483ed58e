"""The ``snficon`` command: one subcommand module per job under :mod:`snficon.commands`."""

from __future__ import annotations

import argparse
import logging
import sys

from snficon import __version__
from snficon.commands import campaign, carbon, demo, platform, report, robin, run, workload
from snficon.errors import SnficonError

SUBCOMMANDS = (platform, workload, run, campaign, robin, report, demo, carbon)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="snficon",
        description="Energy-aware HPC job scheduling (SNF-ICON) for Batsim.")
    parser.add_argument("--version", action="version", version=f"snficon {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args.func(args) or 0)
    except SnficonError as exc:
        print(f"snficon: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("snficon: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
