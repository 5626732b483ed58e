"""Small platforms and workloads made on the fly for engine tests."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from snficon.engine.outputs import JobRow
from snficon.platform.generate import NodeModel, render_platform, write_platform

#: Power figures chosen so that every state has a distinct power (W, s).
TEST_MODEL = NodeModel("test", busy_w=200, idle_w=100, sleep_w=10,
                       off_s=8, off_w=50, on_s=32, on_w=150)


@pytest.fixture
def platform4(tmp_path: Path) -> Path:
    """A 4-node platform with sleep and switch pstates."""
    return write_platform(tmp_path / "p4.xml", render_platform(TEST_MODEL, 4))


def write_workload(path: Path, jobs: list[dict], profiles: dict | None = None) -> Path:
    """A Batsim workload whose jobs default to a 10 s delay profile ``d10``."""
    profiles = profiles or {"d10": {"type": "delay", "delay": 10.0}}
    for job in jobs:
        job.setdefault("profile", "d10")
        job.setdefault("walltime", -1)
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    return path


def read_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV output file, as dicts of text."""
    with open(path) as handle:
        return list(csv.DictReader(handle))


STATES = ("COMPLETED_SUCCESSFULLY", "COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED",
          "COMPLETED_FAILED", "REJECTED")


def random_job_rows(seed: int, count: int) -> list[JobRow]:
    """``count`` random rows of ``out_jobs.csv`` (rejected ones without a start)."""
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
