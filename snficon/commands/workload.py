"""``snficon workload ...``: generate and convert workloads (SPEC section 4)."""

from __future__ import annotations

import argparse


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("workload", help="generate or convert Batsim workloads")
    parser.set_defaults(func=lambda args: parser.print_help())
