"""evalys, the field's analysis library, reads the engine's output files."""

from __future__ import annotations

from pathlib import Path

from evalys.jobset import JobSet

from snficon.drivers.session import simulate_in_process
from tests.conftest import FCFS_SCHEDULER

from .conftest import write_workload


def test_evalys_reads_out_jobs(platform4: Path, tmp_path: Path):
    jobs = [{"id": i, "subtime": 4.0 * i, "res": 1 + i % 2} for i in range(1, 13)]
    jobs.append({"id": 99, "subtime": 1.0, "res": 9})  # rejected: larger than the platform
    workload = write_workload(tmp_path / "w.json", jobs)
    simulate_in_process(platform4, [workload], FCFS_SCHEDULER, {"timeout": 5},
                        export_prefix=tmp_path / "out")
    jobset = JobSet.from_csv(str(tmp_path / "out_jobs.csv"))
    frame = jobset.df
    assert len(frame) == 13
    assert set(frame["jobID"].astype(str)) == {str(j["id"]) for j in jobs}
    finished = frame[frame["success"] == 1]
    assert len(finished) == 12
    assert (finished["finish_time"] >= finished["starting_time"]).all()
    assert jobset.res_bounds.inf == 0 and jobset.res_bounds.sup <= 3
