"""Batsim's simulation actors (``actors``): a job's execution ends at its walltime."""

from __future__ import annotations

from pathlib import Path

import pytest
from procset import ProcSet

from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine
from snficon.drivers.transcript import Transcript

from .conftest import TEST_MODEL, read_rows, write_workload
from .schedulers_for_tests import OneShot


def test_walltime_reached_kills_the_job(platform4: Path, tmp_path: Path):
    profiles = {"d100": {"type": "delay", "delay": 100.0}}
    workload = write_workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 2, "profile": "d100", "walltime": 30}], profiles)

    def start(bs, job):
        job.allocation = ProcSet((0, 1))
        bs.execute_jobs([job])

    engine = build_engine(platform4, [workload])
    transcript = Transcript()
    run_in_process(engine, OneShot(start), transcript)
    engine.outputs().write(tmp_path / "out")
    completed = [e for _, m in transcript.entries for e in m["events"]
                 if e["type"] == "JOB_COMPLETED"]
    assert completed[0]["timestamp"] == 30.0
    assert completed[0]["data"]["job_state"] == "COMPLETED_WALLTIME_REACHED"
    row = read_rows(tmp_path / "out_jobs.csv")[0]
    assert (row["final_state"], row["success"], row["execution_time"]) == (
        "COMPLETED_WALLTIME_REACHED", "0", "30.000000")
    # Two idle-powered nodes for 30 s (a delay job draws the idle wattage).
    assert float(row["consumed_energy"]) == pytest.approx(2 * TEST_MODEL.idle_w * 30)
    assert read_rows(tmp_path / "out_schedule.csv")[0]["nb_jobs_killed"] == "1"
