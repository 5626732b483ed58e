"""Fixtures for the workload tests: the shared paper data and the CLI entry point."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

# ../shared beside the repository root (tests/workload/conftest.py -> parents[2]).
SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
PAPER_INPUTS = SHARED / "data" / "paper-inputs"
TRACES = SHARED / "data" / "traces"


def shared_file(path: Path) -> Path:
    """``path`` if it exists, else skip the test saying what is missing."""
    if not path.is_file():
        pytest.skip(f"shared data not available: {path.resolve()} "
                    "(the read-only ../shared folder beside the repository)")
    return path


@pytest.fixture
def paper_markovian() -> Path:
    return shared_file(PAPER_INPUTS / "generated-markovian-3000.json")


@pytest.fixture
def paper_das2_fs1() -> Path:
    return shared_file(PAPER_INPUTS / "DAS2-fs1-0-3000.json")


@pytest.fixture
def das2_fs1_swf() -> Path:
    return shared_file(TRACES / "DAS2-fs1-2003-1.swf.gz")


@pytest.fixture
def cli_main() -> Callable[[list[str]], int]:
    """``snficon.cli.main``; skipped while a subcommand module it imports is missing."""
    try:
        from snficon.cli import main
    except ImportError as exc:
        pytest.skip(f"snficon.cli cannot be imported yet: {exc}")
    return main
