"""A small real campaign (10 tiny runs on two platforms), built once for the package."""

from __future__ import annotations

from pathlib import Path

import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.platform.generate import TAURUS, NodeModel, render_platform, write_platform
from snficon.workload.markovian import MarkovianParams, generate_markovian
from snficon.workload.writer import BatsimOptions, write_batsim_workload
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


#: The paper's Markovian generator, small: 120 jobs on 8 nodes (load 0.5, 30-min runtimes),
#: enough for the SNF-ICON variants and the baselines to give different results.
FAMILY_WORKLOAD = MarkovianParams(seed=7, n_jobs=120, nodes=8, cap=8, load=0.5,
                                  mean_runtime_s=1800.0, mean_reqtime_s=2160.0)

#: The six policies on 8 tiny nodes (Fig. 3-7 with the four SNF-ICON variants), a T_M
#: sweep of the four variants and an alpha sweep of two (Fig. 8-9): 6 + 8 + 4 = 18 runs.
FAMILY_CAMPAIGN = """\
name = "family"

[platforms]
p8 = "inputs/p8.xml"

[workloads]
m120 = "inputs/m120.json"

[[group]]
name = "base"
platforms = ["p8"]
workloads = ["m120"]
policies = ["fcfsbIpm", "snfIpm", "snficon", "snficon-ng", "snficon-nf", "snficon-ngnf"]

[[group]]
name = "t_m"
platforms = ["p8"]
workloads = ["m120"]
policies = ["snficon", "snficon-ng", "snficon-nf", "snficon-ngnf"]
sweep = { t_m = [1800, 14400] }

[[group]]
name = "alpha"
platforms = ["p8"]
workloads = ["m120"]
policies = ["snficon", "snficon-nf"]
sweep = { alpha = [10, 20000] }
"""

#: The tiny node model with a four times slower switch-on: the "other" campaign of the
#: comparison tests runs the same runs (same labels, options) on it.
SLOW_ON_MODEL = NodeModel("tiny-slow-on", busy_w=200, idle_w=100, sleep_w=10,
                          off_s=8, off_w=50, on_s=128, on_w=150)


def run_family_campaign(root: Path, text: str, model: NodeModel = TINY_MODEL,
                        groups: tuple[str, ...] | None = None) -> Path:
    """Run campaign ``text`` on p8 (``model``, 8 nodes) and m120 under ``root``; its results.

    ``groups`` keeps the runs of those groups only.
    """
    inputs = root / "inputs"
    inputs.mkdir(parents=True)
    write_platform(inputs / "p8.xml", render_platform(model, FAMILY_WORKLOAD.nodes))
    write_batsim_workload(inputs / "m120.json", generate_markovian(FAMILY_WORKLOAD),
                          FAMILY_WORKLOAD.nodes, BatsimOptions())
    (root / "campaign.toml").write_text(text)
    results = root / "results"
    plans = expand(read_campaign(root / "campaign.toml")).plans
    if groups is not None:
        plans = [plan for plan in plans if set(plan.groups) & set(groups)]
    specs = make_specs(plans, results / "runs")
    outcome = run_campaign(specs, results, executor="serial")
    assert outcome.failed == 0 and outcome.done == len(specs)
    return results


@pytest.fixture(scope="package")
def family_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Results of :data:`FAMILY_CAMPAIGN` (18 runs on 8 tiny nodes)."""
    return run_family_campaign(tmp_path_factory.mktemp("family"), FAMILY_CAMPAIGN)


@pytest.fixture(scope="package")
def slow_on_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base group of :data:`FAMILY_CAMPAIGN` on :data:`SLOW_ON_MODEL` (6 runs)."""
    return run_family_campaign(tmp_path_factory.mktemp("slow-on"), FAMILY_CAMPAIGN,
                              SLOW_ON_MODEL, groups=("base",))


def relabelled(results: Path, folder: Path, **labels: str) -> Path:
    """A copy of ``results`` whose results.csv renames labels (``platform="aoba-64"``...).

    The run folders are shared through a symbolic link; returns the new folder.
    """
    import pandas as pd

    folder.mkdir(parents=True)
    (folder / "runs").symlink_to(results / "runs")
    rows = pd.read_csv(results / "results.csv", dtype=str, keep_default_na=False)
    for column, label in labels.items():
        rows[column] = label
    rows.to_csv(folder / "results.csv", index=False)
    return folder


def read_results_csv(results: Path):
    """results.csv read plainly (no report code), numbers as floats, keyed by (policy, options)."""
    import pandas as pd

    rows = pd.read_csv(results / "results.csv", keep_default_na=False, dtype=str)
    return {(r["platform"], r["workload"], r["policy"], r["options"]): r
            for _, r in rows.iterrows()}
