"""Flexibility fields for a workload: seeded share, delays, deadlines, kept fields, the command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from snficon.carbon.coast import FlexJob
from snficon.cli import main
from snficon.errors import InputError
from snficon.workload.flex import FlexParams, assign_flexibility, flex_jobs, parse_duration
from snficon.workload.reader import parse_workload
from tests.conftest import REPO_ROOT


def document(n: int = 10) -> dict:
    return {"nb_res": 4, "profiles": {"d": {"type": "delay", "delay": 10.0}},
            "jobs": [{"id": i, "subtime": 100.0 * i, "res": 1, "profile": "d",
                      "walltime": -1, "reqtime": 600.0} for i in range(n)]}


def test_exact_share_seeded_and_fields():
    out, report = assign_flexibility(document(10), FlexParams(share=0.3, max_delay_s=7200,
                                                              seed=4))
    flexible = [job for job in out["jobs"] if job["flexible"]]
    assert len(flexible) == 3 == report.flexible
    chosen = sorted(np.random.default_rng(4).choice(10, size=3, replace=False).tolist())
    assert [job["id"] for job in flexible] == chosen
    for job in flexible:
        assert job["max_delay"] == 7200.0 and job["deadline"] == job["subtime"] + 7200 + 600
    for job in out["jobs"]:
        if not job["flexible"]:
            assert job["max_delay"] == 0.0 and "deadline" not in job
    again, _ = assign_flexibility(document(10), FlexParams(share=0.3, max_delay_s=7200, seed=4))
    assert again == out
    parse_workload(out, "out")  # still a valid workload


def test_uniform_delays_and_deadline_factor():
    out, report = assign_flexibility(document(200), FlexParams(
        share=1.0, max_delay_s=4 * 3600, min_delay_s=3600, deadline_factor=2.0, seed=1))
    delays = np.array([job["max_delay"] for job in out["jobs"]])
    assert delays.min() >= 3600 and delays.max() <= 4 * 3600
    assert report.mean_max_delay_s == pytest.approx(delays.mean())
    rng = np.random.default_rng(1)  # the module's draws: the choice, then the delays
    rng.choice(200, size=200, replace=False)
    assert np.array_equal(delays, rng.uniform(3600, 4 * 3600, 200))
    job = out["jobs"][0]
    assert job["deadline"] == pytest.approx(job["subtime"] + job["max_delay"] + 2 * 600)


def test_jobs_with_their_own_fields_keep_them():
    doc = document(4)
    doc["jobs"][0].update(flexible=True, max_delay=5.0)
    out, report = assign_flexibility(doc, FlexParams(share=0.0))
    assert out["jobs"][0]["max_delay"] == 5.0 and report.kept == 1
    assert doc["jobs"][1].get("flexible") is None  # the input is not changed


def test_the_advisor_reads_the_fields():
    out, _ = assign_flexibility(document(3), FlexParams(share=1.0, max_delay_s=3600))
    raw = out["jobs"][1]
    job = FlexJob.from_fields(str(raw["id"]), raw["subtime"], raw["res"], raw["reqtime"], raw,
                              busy_w=2100.0)
    assert job.flexible and job.max_delay_s == 3600.0 and job.deadline_s == 100 + 3600 + 600
    jobs = flex_jobs(parse_workload(out, "out"), busy_w=2100.0)
    assert jobs[1] == job and jobs[1].energy_kwh == pytest.approx(2100 * 600 / 3.6e6)


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("30m", 1800), ("24h", 86400),
                                               ("1.5d", 129600), ("10s", 10)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("params", [dict(share=1.2), dict(max_delay_s=-1),
                                    dict(min_delay_s=10, max_delay_s=5),
                                    dict(deadline_factor=0)])
def test_bad_parameters(params):
    with pytest.raises(InputError):
        FlexParams(**params)


def test_command(tmp_path: Path, capsys):
    source = REPO_ROOT / "workloads" / "markovian-3000.json"
    target = tmp_path / "flex.json"
    assert main(["workload", "flex", str(source), "-o", str(target), "--share", "0.5",
                 "--max-delay", "24h", "--seed", "1"]) == 0
    out = json.loads(target.read_text())
    assert sum(job["flexible"] for job in out["jobs"]) == 1500
    assert "flexible: 1500 of 3000 drawn" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("{\"jobs\": []")
    assert main(["workload", "flex", str(bad), "-o", str(target)]) == 2
    assert "bad.json: cannot read the workload" in capsys.readouterr().err
