"""A small real campaign (7 tiny runs) and its report, built once for the package."""

from __future__ import annotations

from pathlib import Path

import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.platform.generate import render_platform, write_platform
from tests.campaign.conftest import TINY_MODEL, write_tiny_workload

REPO_ROOT = Path(__file__).resolve().parents[2]

#: Base comparison of three policies, an alpha sweep and a T_M sweep of SNF-ICON.
SMALL_CAMPAIGN = """\
name = "small"

[platforms]
p4 = "inputs/p4.xml"

[workloads]
w8 = "inputs/w8.json"

[[group]]
name = "base"
platforms = ["p4"]
workloads = ["w8"]
policies = ["fcfsbIpm", "snfIpm", "snficon"]

[[group]]
name = "alpha"
platforms = ["p4"]
workloads = ["w8"]
policies = ["snficon"]
sweep = { alpha = [10, 20000] }

[[group]]
name = "t_m"
platforms = ["p4"]
workloads = ["w8"]
policies = ["snficon"]
sweep = { t_m = [3600, 14400] }
"""


@pytest.fixture(scope="package")
def small_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A campaign results folder (results.csv and runs/) of 7 runs on 4 nodes."""
    root = tmp_path_factory.mktemp("small")
    inputs = root / "inputs"
    inputs.mkdir()
    write_platform(inputs / "p4.xml", render_platform(TINY_MODEL, 4))
    write_tiny_workload(inputs / "w8.json")
    (root / "small.toml").write_text(SMALL_CAMPAIGN)
    results = root / "results"
    specs = make_specs(expand(read_campaign(root / "small.toml")).plans, results / "runs")
    outcome = run_campaign(specs, results, executor="serial")
    assert outcome.failed == 0 and outcome.done == 7
    return results
