"""The carbon figures and the per-method table from a tiny real campaign.

Eight nodes, 40 jobs over two days (half flexible, 24 h), a synthetic diurnal
signal at two start alignments; Observed, Carbon-greedy and COAST at two gamma
values under FCFS/EASY+IPM: 8 runs of well under a second each.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runner import run_campaign
from snficon.cli import main
from snficon.platform.generate import render_platform, write_platform
from snficon.report.build import _builders
from snficon.report.carbon import carbon_peak_plane, gamma_sweep, method_table, paired_rows
from snficon.report.data import load_results
from snficon.report.document import render
from snficon.report.panels import close
from tests.engine.conftest import TEST_MODEL

CAMPAIGN = """\
name = "carbon-tiny"

[platforms]
p8 = "p8.xml"

[workloads]
flex = "flex.json"

[carbon]
syn = "syn.csv"

[[group]]
name = "observed"
platforms = ["p8"]
workloads = ["flex"]
policies = ["fcfsbIpm"]
carbon = { signal = "syn", starts = ["2023-01-02T00:00Z", "2023-01-05T12:00Z"] }

[[group]]
name = "greedy"
platforms = ["p8"]
workloads = ["flex"]
policies = ["fcfsbIpm"]
options = { layers = "carbon-greedy", coast_train_jobs = 6 }
carbon = { signal = "syn", starts = ["2023-01-02T00:00Z", "2023-01-05T12:00Z"] }

[[group]]
name = "coast"
platforms = ["p8"]
workloads = ["flex"]
policies = ["fcfsbIpm"]
options = { layers = "coast", coast_train_jobs = 6 }
sweep = { coast_gamma = [5e-4, 0.5] }
carbon = { signal = "syn", starts = ["2023-01-02T00:00Z", "2023-01-05T12:00Z"] }
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("carbon-campaign")
    write_platform(folder / "p8.xml", render_platform(TEST_MODEL, 8))
    rng = np.random.default_rng(3)
    jobs = []
    for i, submit in enumerate(np.sort(rng.uniform(0, 2 * 86400, 40)).round()):
        req = float(rng.choice([1800, 3600, 7200]))
        flexible = bool(i % 2)
        job = {"id": f"j{i}", "subtime": float(submit), "res": int(rng.integers(1, 5)),
               "profile": f"p{int(req * 0.8)}", "walltime": -1, "reqtime": req,
               "flexible": flexible, "max_delay": 86400.0 if flexible else 0.0}
        if flexible:
            job["deadline"] = float(submit) + 86400.0 + req
        jobs.append(job)
    profiles = {j["profile"]: {"type": "delay", "delay": float(j["profile"][1:])} for j in jobs}
    (folder / "flex.json").write_text(json.dumps({"nb_res": 8, "jobs": jobs,
                                                  "profiles": profiles}))
    assert main(["carbon", "synthetic", "-o", str(folder / "syn.csv"), "--days", "10",
                 "--seed", "2"]) == 0
    (folder / "tiny.toml").write_text(CAMPAIGN)
    campaign = read_campaign(folder / "tiny.toml")
    out = folder / "results"
    specs = make_specs(expand(campaign).plans, out / "runs")
    outcome = run_campaign(specs, out, executor="serial")
    assert outcome.failed == 0 and outcome.done == 8
    return out


def test_every_carbon_run_is_paired_with_its_observed_run(results):
    rows = paired_rows(load_results(results))
    assert len(rows) == 8 and set(rows["method"]) == {"Observed", "Carbon-greedy", "COAST"}
    observed = rows[rows["method"] == "Observed"]
    assert (observed["carbon_change_pct"] == 0).all() and (observed["added_wait_h"] == 0).all()
    # Observed's plan is its arrivals: promised nothing; and a realised job carbon equal to
    # the cluster's compute carbon from Batsim's energy file (TEST_MODEL busy 200 W)
    assert (observed["ideal_added_wait_s"] == 0).all()
    shifted = rows[rows["method"] != "Observed"]
    assert (shifted["held_jobs"] > 0).all() and (shifted["ideal_added_wait_h"] > 0).all()


def test_method_table_and_figures(results):
    frame = load_results(results)
    table = method_table(frame)
    assert list(table["method"]) == ["Observed", "Carbon-greedy", "COAST"]  # default gamma
    assert (table["alignments"] == 2).all()
    plane, sweep = carbon_peak_plane(frame), gamma_sweep(frame)
    assert plane is not None and set(plane.table["method"]) == {"Carbon-greedy", "COAST"}
    assert sweep is not None and sorted(sweep.drawn["gamma"]) == [5e-4, 0.5]
    assert set(sweep.drawn["label"]) == {"FCFS/B+IPM"}
    for figure in (plane, sweep):
        assert render(figure.figure, "png")[:8] == b"\x89PNG\r\n\x1a\n"
        close(figure.figure)
    # registered in the report, for campaigns with a carbon signal only
    names = [name for name, _ in _builders(frame, results / "runs")]
    assert {"carbon-peak plane", "gamma sweep"} <= set(names)
    plain = frame.assign(carbon_total_kg=float("nan"))
    assert not {"carbon-peak plane", "gamma sweep"} & {n for n, _ in _builders(plain, results)}


def test_the_jobs_compute_carbon_is_batsims(results):
    """The advice metrics' job model (nodes x busy power x execution time, the signal over
    the run) against the accounting of Batsim's per-node energy, in every run: the jobs'
    ``delay`` profiles draw the idle power (100 W, as in Batsim), the model 2100 W (the
    layer's default busy power), so the two differ by 100 / 2100 exactly."""
    frame = load_results(results)
    for _, row in frame.iterrows():
        scale = TEST_MODEL.idle_w / 2100.0
        assert row["real_job_carbon_kg"] * scale == pytest.approx(row["carbon_compute_kg"],
                                                                  rel=1e-6)
