"""Expansion: the paper's campaign has the runs of section VI; ids hash the parameters."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.expand import expand, make_specs, resolve_options, run_params
from snficon.campaign.runs import run_id

EXPE = Path(__file__).resolve().parents[2] / "expe"
VARIANTS = ["snficon", "snficon-ng", "snficon-nf", "snficon-ngnf"]


@pytest.fixture(scope="module")
def expansion():
    return expand(read_campaign(EXPE / "paper.toml"))


class TestPaperCampaign:
    """``expe/paper.toml`` against the paper's section VI."""

    def test_counts_match_section_vi(self, expansion):
        # Section VI-B by hand:
        #   base:            6 cases (DAS2 FS1-FS4 and Markovian on AOBA-64, SDSC Blue on
        #                    AOBA-1152) x 6 policies                      =  36
        #   T_M sweep:       5 AOBA-64 cases x 4 SNF-ICON variants x 24 hourly values = 480
        #   alpha sweep:     5 x 4 x 12 values of Fig. 9 (10 ... 20,000)  = 240
        #   cross-platform:  DAS2 FS2 and Markovian on AOBA-64 and Taurus-64, SDSC Blue on
        #                    AOBA-1152 and Taurus-1152 = 6 panels x 6 policies = 36
        #   RL Budiarjo:     DAS2 FS1-FS4 and Markovian on AOBA-64 x 2 trained models = 10
        #   grid points: 36 + 480 + 240 + 36 + 10 = 802.
        # Merged: T_M = 2 h (5 x 4 = 20) and alpha = 5000 (20) are the base runs' Table I
        # defaults, and the 3 AOBA panels x 6 policies (18) are base runs: 802 - 58 = 744.
        assert expansion.listed == 802
        assert len(expansion.plans) == 744

    def test_groups(self, expansion):
        members = Counter(group for plan in expansion.plans for group in plan.groups)
        assert members == {"base": 36, "tm-sweep": 480, "alpha-sweep": 240,
                           "cross-platform": 36, "rl-das2-fs1": 2, "rl-das2-fs2": 2,
                           "rl-das2-fs3": 2, "rl-das2-fs4": 2, "rl-markovian": 2}

    def test_sweeps(self, expansion):
        t_m = sorted({plan.options["t_m"] for plan in expansion.plans
                      if "tm-sweep" in plan.groups})
        assert t_m == [3600.0 * hours for hours in range(1, 25)]
        alpha = sorted({plan.options["alpha"] for plan in expansion.plans
                        if "alpha-sweep" in plan.groups})
        assert alpha == [10, 50, 100, 500, 2500, 5000, 7500, 10000, 12500, 15000, 17500, 20000]
        assert {plan.options["beta"] for plan in expansion.plans
                if "alpha-sweep" in plan.groups} == {1.0}
        assert {plan.policy for plan in expansion.plans if "tm-sweep" in plan.groups} == set(
            VARIANTS)

    def test_cross_platform_cases(self, expansion):
        cases = {(plan.platform.label, plan.workload.label) for plan in expansion.plans
                 if "cross-platform" in plan.groups}
        assert cases == {("aoba-64", "das2-fs2"), ("taurus-64", "das2-fs2"),
                         ("aoba-64", "markovian-3000"), ("taurus-64", "markovian-3000"),
                         ("aoba-1152", "sdsc-blue"), ("taurus-1152", "sdsc-blue")}

    def test_every_input_says_how_to_make_it(self):
        campaign = read_campaign(EXPE / "paper.toml")
        for item in [*campaign.platforms.values(), *campaign.workloads.values()]:
            assert item.make and "snficon" in item.make, item.label


def test_quick_campaign():
    expansion = expand(read_campaign(EXPE / "quick.toml"))
    assert len(expansion.plans) == 12
    assert {plan.workload.path.name for plan in expansion.plans} == {"markovian-3000.json"}


def test_sweep_point_equal_to_a_default_is_the_default_run(write_campaign):
    path = write_campaign("""
[platforms]
p4 = "inputs/p4.xml"
[workloads]
w8 = "inputs/w8.json"
[[group]]
name = "a"
platforms = ["p4"]
workloads = ["w8"]
policies = ["snficon", "fcfsbIpm"]
[[group]]
name = "b"
platforms = ["p4"]
workloads = ["w8"]
policies = ["snficon"]
sweep = { t_m = [7200, 3600], alpha = { start = 10, stop = 30, step = 10 } }
""")
    expansion = expand(read_campaign(path))
    assert expansion.listed == 2 + 6
    assert len(expansion.plans) == 8  # alpha 10-30 are not the default 5000: nothing merged
    first = expansion.plans[0]
    assert first.groups == ("a",) and first.changed == ()
    changed = [dict(plan.changed) for plan in expansion.plans if plan.groups == ("b",)]
    assert {"t_m": 3600.0, "alpha": 20.0} in changed


def test_run_id_hashes_sorted_parameters(tiny_campaign):
    plans = expand(read_campaign(tiny_campaign)).plans
    specs = make_specs(plans, tiny_campaign.parent / "results" / "runs")
    assert len({spec.run_id for spec in specs}) == len(specs)
    spec = specs[0]
    assert spec.run_id == run_id(run_params(plans[0]))
    reordered = dict(reversed(list(spec.params.items())))
    assert run_id(reordered) == spec.run_id
    assert run_id({**spec.params, "jobs": 3}) != spec.run_id
    # The workload's bytes are part of the id: a regenerated, different file is a new run.
    workload = tiny_campaign.parent / "inputs" / "w8.json"
    workload.write_text(workload.read_text() + "\n")
    again = make_specs(expand(read_campaign(tiny_campaign)).plans, tiny_campaign.parent)
    assert again[0].run_id != spec.run_id


def test_resolved_options_fill_the_defaults():
    options = resolve_options("snficon-ng", {"alpha": 10})
    assert options["alpha"] == 10.0 and options["gate"] is False and options["t_m"] == 7200.0
    # IPM's request-end calls (issue 35) changed the baselines' runs on purpose, and so
    # their run ids: a results folder made before holds no run these ids name
    assert resolve_options("fcfsbIpm", {}) == {"easy_plan": "gaps", "request_end_calls": True,
                                               "timeout": 7200.0}
    assert resolve_options("snfIpm", {}) == {"request_end_calls": True, "timeout": 7200.0}
