"""A small real campaign (10 tiny runs on two platforms), built once for the package."""

from __future__ import annotations

from pathlib import Path

import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.platform.generate import TAURUS, render_platform, write_platform
from tests.campaign.conftest import TINY_JOBS, TINY_MODEL, write_tiny_workload

REPO_ROOT = Path(__file__).resolve().parents[2]

#: The tiny workload plus a 4-node job that waits for the first ones and a job after the
#: idle timeout that waits for a wake-up, so that Fig. 7 has nonzero waits beside zero ones.
REPORT_JOBS = sorted([*TINY_JOBS, (20, 4, 100), (20000, 2, 50)])

#: Base comparison of three policies, an alpha sweep and a T_M sweep of SNF-ICON, and the
#: base policies again on a second platform of 4 Taurus nodes (Fig. 10; the p4 runs merge).
SMALL_CAMPAIGN = """\
name = "small"

[platforms]
p4 = "inputs/p4.xml"
t4 = "inputs/t4.xml"

[workloads]
w10 = "inputs/w10.json"

[[group]]
name = "base"
platforms = ["p4"]
workloads = ["w10"]
policies = ["fcfsbIpm", "snfIpm", "snficon"]

[[group]]
name = "alpha"
platforms = ["p4"]
workloads = ["w10"]
policies = ["snficon"]
sweep = { alpha = [10, 20000] }

[[group]]
name = "t_m"
platforms = ["p4"]
workloads = ["w10"]
policies = ["snficon"]
sweep = { t_m = [3600, 14400] }

[[group]]
name = "cross-platform"
cases = [["p4", "w10"], ["t4", "w10"]]
policies = ["fcfsbIpm", "snfIpm", "snficon"]
"""


@pytest.fixture(scope="package")
def small_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A campaign results folder (results.csv and runs/) of 10 runs on 4 nodes (p4 and t4)."""
    root = tmp_path_factory.mktemp("small")
    inputs = root / "inputs"
    inputs.mkdir()
    write_platform(inputs / "p4.xml", render_platform(TINY_MODEL, 4))
    write_platform(inputs / "t4.xml", render_platform(TAURUS, 4))
    write_tiny_workload(inputs / "w10.json", REPORT_JOBS)
    (root / "small.toml").write_text(SMALL_CAMPAIGN)
    results = root / "results"
    specs = make_specs(expand(read_campaign(root / "small.toml")).plans, results / "runs")
    outcome = run_campaign(specs, results, executor="serial")
    assert outcome.failed == 0 and outcome.done == 10
    return results
