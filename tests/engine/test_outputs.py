"""Streamed outputs give what the in-memory tables gave; evalys reads them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from evalys.jobset import JobSet

from snficon.drivers.session import simulate_in_process
from snficon.engine.outputs import JobRow, OutputTables, output_paths
from tests.conftest import FCFS_SCHEDULER

from .conftest import random_job_rows, write_workload


def _fill(tables: OutputTables, rows: list[JobRow]) -> None:
    for index, row in enumerate(rows):
        tables.record_job(row)
        tables.record_states(float(index), np.array([index, 0, 1, 2, 3]))
        tables.record_pstate(float(index) / 3, f"{index}-{index + 1}", index % 3)
        tables.record_energy(float(index // 2), 10.0 * index, "s", 95.0)
    tables.schedule = {"x": 1}


def test_streamed_files_are_the_in_memory_render(tmp_path: Path):
    rows = random_job_rows(7, 5000)
    kept = OutputTables(energy_enabled=True)
    kept.record_pstate(0.0, "0-3", 0)
    _fill(kept, rows)
    streamed = OutputTables(energy_enabled=True)
    streamed.record_pstate(0.0, "0-3", 0)
    streamed.stream_to(tmp_path / "out")
    assert not output_paths(tmp_path / "out")["jobs"].exists()  # not before the end
    _fill(streamed, rows)
    import snficon.engine.outputs as outputs
    outputs.SCHEDULE_COLUMNS, saved = ("x",), outputs.SCHEDULE_COLUMNS
    try:
        texts = kept.render()
        streamed.write(tmp_path / "out")
    finally:
        outputs.SCHEDULE_COLUMNS = saved
    for name, path in output_paths(tmp_path / "out").items():
        assert path.read_text() == texts[name], name
    assert not list(tmp_path.glob(".*.tmp"))


# evalys, the field's analysis library, reads the engine's output files.


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
