"""``snficon platform ...``: generate platform files (SPEC section 3)."""

from __future__ import annotations

import argparse


def register(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("platform", help="generate SimGrid/Batsim platform files")
    parser.set_defaults(func=lambda args: parser.print_help())
