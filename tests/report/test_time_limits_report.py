"""The time-limit layer in the report: Table 1 and its figure from a real campaign.

The case is the one of ``tests/adapter/test_time_limit_runs.py`` (its docstring works
the numbers out): four nodes, jobs a, b, c and e checkpoint every 420 s under a 1440-s
limit, d does not. Baseline: a tail of 4 x 180 = 720 node-s; early cancellation and
extension: none; both leave the CPU time and the waits elsewhere than the Baseline.
"""

from __future__ import annotations

import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.report.build import build_report
from snficon.report.data import load_results
from snficon.report.time_limits import time_limit_table
from tests.adapter.test_time_limit_runs import _workload
from tests.engine.conftest import TEST_MODEL

CAMPAIGN = """
name = "tl"
[platforms]
p4 = "p4.xml"
[workloads]
ck = "w.json"
[[group]]
name = "paper"
platforms = ["p4"]
workloads = ["ck"]
policies = ["fcfsbIpm"]
options = { layers = "time-limits" }
sweep = { tl_policy = ["baseline", "early-cancel", "extend", "hybrid"] }
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from snficon.platform.generate import render_platform, write_platform

    root = tmp_path_factory.mktemp("tl")
    write_platform(root / "p4.xml", render_platform(TEST_MODEL, 4))
    _workload(root)
    (root / "c.toml").write_text(CAMPAIGN)
    specs = make_specs(expand(read_campaign(root / "c.toml")).plans, root / "out" / "runs")
    outcome = run_campaign(specs, root / "out", executor="serial")
    assert (outcome.done, outcome.failed) == (4, 0)
    return root / "out"


def test_table_one_rows_and_changes(results):
    table = time_limit_table(load_results(results)).set_index("policy")
    assert list(table.index) == ["Baseline", "Early Cancellation", "Extension", "Hybrid"]
    assert table.loc["Baseline", "tail waste (node-s)"] == pytest.approx(720.0, abs=1e-3)
    assert table.loc["Early Cancellation", "tail waste (node-s)"] == pytest.approx(0, abs=1e-3)
    assert table.loc["Extension", "tail waste (node-s)"] == pytest.approx(0, abs=1e-3)
    assert table.loc["Baseline", "tail waste vs Baseline (%)"] == 0
    assert table.loc["Early Cancellation", "tail waste vs Baseline (%)"] == pytest.approx(-100)
    assert table.loc["Early Cancellation", "early-cancelled"] == 4
    assert table.loc["Extension", "extended"] == 4
    # CPU time: the cancelled jobs end 180 s earlier each, the extended ones 240 s later.
    base = table.loc["Baseline", "CPU time (node-s)"]
    assert table.loc["Early Cancellation", "CPU time (node-s)"] == pytest.approx(base - 720)
    assert table.loc["Extension", "CPU time (node-s)"] == pytest.approx(base + 960)
    change = 100 * -720 / base
    assert table.loc["Early Cancellation", "CPU time vs Baseline (%)"] == pytest.approx(change)


def test_report_has_the_table_and_the_figure(results, tmp_path):
    report = build_report(results, tmp_path / "report")
    assert (tmp_path / "report" / "tables" / "time_limits.csv").is_file()
    assert any(path.name == "time_limits.png" for path in report.figures)
    text = report.markdown.read_text()
    assert "Checkpoint-aware time limits" in text and "time limits" not in report.skipped
