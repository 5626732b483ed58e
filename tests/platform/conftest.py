"""Shared fixtures of the platform tests: the conformance cases and a CLI runner."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import pytest

from snficon.commands import platform as platform_command

REPO = Path(__file__).resolve().parents[2]
CASES = REPO.parent / "shared" / "conformance" / "cases"


@pytest.fixture
def cases() -> Path:
    """The folder of Batsim conformance cases (``../shared`` next to the repository)."""
    if not (CASES / "aoba16.xml").is_file():
        pytest.skip(f"conformance cases not found at ../shared/conformance/cases "
                    f"(looked in {CASES.relative_to(REPO.parent)} beside the repository)")
    return CASES


@pytest.fixture
def run_cli() -> Callable[..., int]:
    """Run ``snficon platform ...`` through the module's own ``register``."""

    def run(*argv: str) -> int:
        parser = argparse.ArgumentParser(prog="snficon")
        platform_command.register(parser.add_subparsers(dest="command", required=True))
        args = parser.parse_args(["platform", *argv])
        return int(args.func(args) or 0)

    return run
