"""A job as the engine tracks it from submission to its line of ``out_jobs.csv``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from snficon.engine.machines import Machines
from snficon.engine.outputs import JobRow
from snficon.workload.model import PROFILE_DELAY, JobSpec, Profile

#: Batsim runs a zero-flop job in no simulated time but reports this duration.
ZERO_JOB_DURATION_S = 1e-5

@dataclass
class EngineJob:
    """A job as the engine tracks it through its life."""

    spec: JobSpec
    full_id: str
    workload_name: str
    profile: Profile
    state: str = "SUBMITTED"
    nodes: np.ndarray | None = None
    alloc_text: str = ""
    start: float = 0.0
    power_w: float = 0.0

    def row(self, final_state: str, **done: Any) -> JobRow:
        """Its line of ``out_jobs.csv`` (``done``: start, execution time... of a job that ran)."""
        spec = self.spec
        return JobRow(job_id=spec.id, workload_name=self.workload_name, profile=spec.profile,
                      submission_time=spec.subtime, requested_resources=spec.res,
                      requested_time=spec.walltime, final_state=final_state, **done)

    def duration_on(self, machines: Machines, nodes: np.ndarray) -> float:
        """How long the job's profile runs on ``nodes`` (s): its delay, or cpu / the slowest
        node's speed for ``parallel_homogeneous`` (com = 0)."""
        if self.profile.type == PROFILE_DELAY:
            return self.profile.delay_s
        speed = float(machines.speed[nodes, machines.pstate[nodes]].min())
        return self.profile.cpu_flops / speed
