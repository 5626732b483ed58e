"""A job as the engine tracks it from submission to its line of ``out_jobs.csv``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snficon.engine.outputs import JobRow
from snficon.engine.wire import decoded, encode
from snficon.workload.model import JobSpec, Profile

#: Batsim reports this runtime for a job that ran in no simulated time
#: (``execute_job_process``: "Putting epsilon instead").
ZERO_JOB_DURATION_S = 1e-5

NOT_SUBMITTED = "NOT_SUBMITTED"
SUBMITTED = "SUBMITTED"
RUNNING = "RUNNING"
REJECTED = "REJECTED"
COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
COMPLETED_KILLED = "COMPLETED_KILLED"
COMPLETED_FAILED = "COMPLETED_FAILED"
COMPLETE_STATES = frozenset({REJECTED, COMPLETED_SUCCESSFULLY, COMPLETED_WALLTIME_REACHED,
                             COMPLETED_KILLED, COMPLETED_FAILED})


@dataclass(eq=False)
class EngineJob:
    """A job through its life (Batsim's ``Job``): state, allocation, timing, energy."""

    spec: JobSpec
    full_id: str
    workload_name: str
    profile: Profile
    state: str = NOT_SUBMITTED
    nodes: np.ndarray | None = None
    alloc_text: str = ""
    start: float = 0.0
    runtime: float = 0.0
    consumed_energy: float = 0.0
    return_code: int = -1
    kill_requested: bool = False
    #: The execution actor and, for a parallel task, its execution activity.
    actor: Any = None
    ptask: Any = None
    #: ``BatTask::delay_task_start`` / ``delay_task_required`` of a delay profile.
    delay_start: float = -1.0
    delay_required: float = 0.0
    #: The job object of ``JOB_SUBMITTED``: decoded, and Batsim's text.
    description: dict[str, Any] = field(default_factory=dict)
    description_text: str = ""

    def __post_init__(self) -> None:
        raw = dict(self.spec.raw)
        raw["id"] = self.full_id
        self.description = decoded(raw)
        self.description_text = encode(raw)

    @property
    def is_complete(self) -> bool:
        return self.state in COMPLETE_STATES

    def row(self) -> JobRow:
        """Its line of ``out_jobs.csv`` (``JobsTracer::write_job``)."""
        spec = self.spec
        if self.state == REJECTED:
            return JobRow(job_id=spec.id, workload_name=self.workload_name,
                          profile=spec.profile, submission_time=spec.subtime,
                          requested_resources=spec.res, requested_time=spec.walltime,
                          final_state=self.state)
        return JobRow(job_id=spec.id, workload_name=self.workload_name, profile=spec.profile,
                      submission_time=spec.subtime, requested_resources=spec.res,
                      requested_time=spec.walltime, final_state=self.state, start=self.start,
                      execution_time=self.runtime, allocation=self.alloc_text,
                      consumed_energy=self.consumed_energy)
