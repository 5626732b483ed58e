"""Shared fixtures: where the read-only shared material lives (``../shared``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine.conftest import platform4  # noqa: F401 (a fixture for every test)

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
#: A plain FCFS pybatsim scheduler file that shares no code with the decision core.
FCFS_SCHEDULER = str(REPO_ROOT / "tests" / "engine" / "fcfs.py")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The shared folder beside the repository; tests needing it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent: conformance recordings and public data are not here")
    return SHARED
