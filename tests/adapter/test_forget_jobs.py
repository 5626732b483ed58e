"""The adapter removes from pybatsim's job table the jobs no later event names."""

from __future__ import annotations

import pytest

from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine
from snficon.platform.generate import render_platform, write_platform
from snficon.registry import load_scheduler
from tests.engine.conftest import TEST_MODEL, write_workload


@pytest.fixture
def platform4(tmp_path):
    return write_platform(tmp_path / "p4.xml", render_platform(TEST_MODEL, 4))


@pytest.mark.parametrize("layers", [[], ["time-limits"]])
def test_completed_killed_and_rejected_jobs_are_forgotten(tmp_path, platform4, layers):
    jobs = [{"id": f"j{k}", "subtime": 10 * k, "res": 1 + k % 2, "profile": "long",
             "reqtime": 300} for k in range(6)]
    jobs.append({"id": "big", "subtime": 5, "res": 9, "profile": "long"})  # rejected
    workload = write_workload(tmp_path / "w.json", jobs, {"long": {"type": "delay",
                                                                   "delay": 900}})
    engine = build_engine(platform4, [workload])
    seen: list[int] = []
    scheduler = load_scheduler("fcfsbIpm", {"platform": str(platform4), "layers": layers})
    submission = scheduler.onJobSubmission

    def count(job):
        submission(job)
        seen.append(len(scheduler.bs.jobs))
    scheduler.onJobSubmission = count
    run_in_process(engine, scheduler)
    assert len(seen) == 7 and max(seen) >= 2
    assert scheduler.bs.jobs == {}
    assert engine.outputs().summary.rejected == 1
    killed = engine.outputs().summary.killed
    assert killed == (6 if layers else 0)
