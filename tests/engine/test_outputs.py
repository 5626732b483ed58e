"""Streamed outputs and the running job summary give what the in-memory tables gave."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from snficon.engine.outputs import JobRow, OutputTables, output_paths
from snficon.engine.summary import JobSummary

STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED",
          "COMPLETED_FAILED", "REJECTED")


def _rows(seed: int, count: int) -> list[JobRow]:
    draw = random.Random(seed)
    rows = []
    for index in range(count):
        state = draw.choice(STATES)
        sub = draw.uniform(0, 1e6) * 10 ** draw.randint(-6, 3)
        row = JobRow(job_id=str(index), workload_name="w0", profile="p", submission_time=sub,
                     requested_resources=draw.randint(1, 9), requested_time=-1.0,
                     final_state=state)
        if state != "REJECTED":
            row.start = sub + draw.uniform(0, 1e5) * 10 ** draw.randint(-6, 2)
            row.execution_time = draw.uniform(1e-5, 1e5)
            row.allocation = "0-1"
        rows.append(row)
    return rows


def test_running_summary_equals_the_sums_and_maxima_of_the_rows():
    for seed in range(20):
        rows = _rows(seed, random.Random(seed).randint(0, 400))
        summary = JobSummary()
        for row in rows:
            summary.add(row.submission_time, row.start, row.execution_time, row.final_state)
        ran = [row for row in rows if row.start is not None]
        waits = [row.start - row.submission_time for row in ran]
        turns = [row.start + row.execution_time - row.submission_time for row in ran]
        slows = [t / row.execution_time for t, row in zip(turns, ran, strict=True)]
        assert summary.waits.value == sum(waits)
        assert summary.turnarounds.value == sum(turns)
        assert summary.slowdowns.value == sum(slows)
        assert summary.max_wait.value() == max(waits, default=0.0)
        assert summary.max_turnaround.value() == max(turns, default=0.0)
        assert summary.max_slowdown.value() == max(slows, default=0.0)
        assert summary.makespan.value() == max((r.start + r.execution_time for r in ran),
                                               default=0.0)
        assert summary.finished == len(ran)
        assert summary.rejected == len(rows) - len(ran)


def _fill(tables: OutputTables, rows: list[JobRow]) -> None:
    for index, row in enumerate(rows):
        tables.record_job(row)
        tables.record_states(float(index), np.array([index, 0, 1, 2, 3]))
        tables.record_pstate(float(index) / 3, f"{index}-{index + 1}", index % 3)
        tables.record_energy(float(index // 2), 10.0 * index, "s", 95.0)
    tables.schedule = {"x": 1}


def test_streamed_files_are_the_in_memory_render(tmp_path: Path):
    rows = _rows(7, 5000)
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
