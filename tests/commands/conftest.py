"""A 4-node platform and a workload of one-node jobs for the failure tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from snficon.platform.generate import NODE_MODELS, render_platform, write_platform

from .schedulers import write_one_node_workload


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    """(platform p4.xml with 4 AOBA nodes, workload w5.json of five one-node jobs)."""
    platform = write_platform(tmp_path / "p4.xml", render_platform(NODE_MODELS["aoba"], 4))
    return platform, write_one_node_workload(tmp_path / "w5.json")
