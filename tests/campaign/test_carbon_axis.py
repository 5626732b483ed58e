"""Campaign carbon keys: signals by label, start alignments as a grid axis, carbon metrics."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.errors import CampaignFileError
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.carbon.signal import parse_instant, signal_csv_text
from snficon.carbon.synthetic import DiurnalParams, synthetic_diurnal
from snficon.report import build_report
from snficon.report.data import load_results

HEAD = """\
[platforms]
p4 = "inputs/p4.xml"
[workloads]
w8 = "inputs/w8.json"
[carbon]
syn = "inputs/syn.csv"
"""
GROUP = """\
[[group]]
name = "g"
platforms = ["p4"]
workloads = ["w8"]
policies = ["fcfsbIpm", "snficon"]
"""


@pytest.fixture
def signal_file(tiny_inputs: Path) -> Path:
    """Four days of the synthetic signal from 2023-01-01 (192 half-hours)."""
    path = tiny_inputs / "syn.csv"
    path.write_text(signal_csv_text(synthetic_diurnal(DiurnalParams(days=4, seed=2))))
    return path


def test_offsets_multiply_the_grid_and_are_seeded(write_campaign, signal_file):
    text = HEAD + GROUP + 'carbon = { signal = "syn", offsets = 3, seed = 7 }\n'
    plans = expand(read_campaign(write_campaign(text))).plans
    assert len(plans) == 2 * 3
    specs = make_specs(plans, signal_file.parent / "runs")
    starts = sorted({spec.params["carbon"]["start"] for spec in specs})
    # Fractions of default_rng(7).random(3), sorted, on the 192 half-hours from 2023-01-01.
    expected = [parse_instant("2023-01-01T00:00Z") + int(np.floor(u * 192)) * 1800
                for u in np.sort(np.random.default_rng(7).random(3))]
    assert [parse_instant(s) for s in starts] == expected
    again = make_specs(expand(read_campaign(write_campaign(text))).plans,
                       signal_file.parent / "runs")
    assert [s.run_id for s in again] == [s.run_id for s in specs]
    carbon = specs[0].params["carbon"]
    assert set(carbon) == {"signal", "signal_sha256", "start", "wrap", "fill"}
    assert specs[0].carbon_path == str(signal_file)


def test_runs_without_carbon_keep_their_ids(write_campaign, signal_file):
    plain = make_specs(expand(read_campaign(write_campaign(HEAD + GROUP))).plans, Path("r"))
    assert all("carbon" not in spec.params for spec in plain)
    text = HEAD + GROUP + 'carbon = { signal = "syn", starts = ["2023-01-02T00:00Z"] }\n'
    with_carbon = make_specs(expand(read_campaign(write_campaign(text))).plans, Path("r"))
    assert {s.run_id for s in plain}.isdisjoint({s.run_id for s in with_carbon})


@pytest.mark.parametrize(("extra", "key", "words"), [
    ('carbon = { signal = "nope", offsets = 2 }\n', 'group "g".carbon.signal',
     "unknown signal 'nope'"),
    ('carbon = { signal = "syn" }\n', 'group "g".carbon', "either starts"),
    ('carbon = { signal = "syn", offsets = 0 }\n', 'group "g".carbon.offsets', "integer >= 1"),
    ('carbon = { signal = "syn", starts = ["soon"] }\n', 'group "g".carbon.starts[0]',
     "not an ISO 8601 instant"),
    ('carbon = { signal = "syn", starts = ["2023-01-02"], seed = 3 }\n',
     'group "g".carbon.seed', "seed goes with offsets"),
    ('carbon = { signal = "syn", offsets = 2, wrap = "yes" }\n', 'group "g".carbon.wrap',
     "true or false"),
    ('carbon = "syn"\n', 'group "g".carbon', "expected a table"),
])
def test_bad_carbon_keys_name_key_and_line(write_campaign, extra, key, words):
    with pytest.raises(CampaignFileError) as caught:
        read_campaign(write_campaign(HEAD + GROUP + extra))
    assert caught.value.key == key and caught.value.line == 12 and words in str(caught.value)


def test_bad_signal_table(write_campaign):
    text = HEAD.replace('syn = "inputs/syn.csv"', 'syn = { file = "x.csv", fill = "spline" }')
    with pytest.raises(CampaignFileError, match="unknown gap rule 'spline'"):
        read_campaign(write_campaign(text + GROUP))


def test_start_outside_the_signal_is_refused_before_running(write_campaign, signal_file):
    text = HEAD + GROUP + 'carbon = { signal = "syn", starts = ["2024-06-01T00:00Z"] }\n'
    with pytest.raises(Exception, match="carbon start 2024-06-01T00:00:00Z is outside"):
        make_specs(expand(read_campaign(write_campaign(text))).plans, Path("r"))


def test_missing_signal_is_listed_with_the_inputs(write_campaign, run_cli):
    text = HEAD + GROUP + 'carbon = { signal = "syn", offsets = 2 }\n'
    code, out, _ = run_cli(str(write_campaign(text)), "--dry-run")
    assert code == 0 and "(input missing)" in out
    assert "inputs not on disk (1)" in out and "  syn: " in out
    assert "carbon syn at " in out  # each run's alignment is listed


def test_a_campaign_with_carbon_writes_the_carbon_metrics(write_campaign, signal_file,
                                                          tmp_path):
    text = HEAD + GROUP + 'carbon = { signal = "syn", offsets = 2, seed = 1 }\n'
    results = tmp_path / "results"
    specs = make_specs(expand(read_campaign(write_campaign(text))).plans, results / "runs")
    outcome = run_campaign(specs, results, executor="serial")
    assert outcome.done == 4 and outcome.failed == 0
    with open(results / "results.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    for row, spec in zip(rows, specs, strict=True):
        metrics = json.loads((results / "runs" / spec.run_id / "metrics.json").read_text())
        assert metrics["carbon_start"] == spec.params["carbon"]["start"] == row["carbon_start"]
        assert row["carbon_signal"] == "syn"
        total = metrics["carbon_total_kg"]
        assert total == pytest.approx(metrics["carbon_compute_kg"] + metrics["carbon_wasted_kg"])
        # The synthetic signal stays within [5, 400] gCO2/kWh: emissions within those bounds.
        assert metrics["energy_total"] * 5 / 3.6e9 < total < metrics["energy_total"] * 400 / 3.6e9
    by_start = {}
    for row in rows:
        by_start.setdefault(row["policy"], set()).add(float(row["carbon_total_kg"]))
    assert all(len(values) == 2 for values in by_start.values())  # the alignment matters
    report = build_report(results, tmp_path / "report")
    summary = report.base_table
    assert list(summary.columns[8:11]) == ["carbon (t)", "wasted carbon (t)", "carbon starts"]
    frame = load_results(results)
    for _, row in summary.iterrows():
        runs = frame[frame["label"] == row["policy"]]
        assert row["carbon starts"] == 2
        assert row["carbon (t)"] == pytest.approx(runs["carbon_total_kg"].mean() / 1e3)
    assert "| carbon (t) | wasted carbon (t) | carbon starts |" in report.markdown.read_text()
