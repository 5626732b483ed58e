"""A job as the engine tracks it from submission to its line of ``out_jobs.csv``.

:class:`JobTable` is Batsim's ``Workloads`` job lookup (``Workloads::job_at``)
without the cost of a full job per line of the workload: a job's
:class:`EngineJob` (its decoded description and Batsim's text of it) is made
when the workload's submitter reaches it, and reduced to a
:class:`FinishedJob` once the server deletes it (``Server::to_delete``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snficon.engine.outputs import JobRow
from snficon.engine.wire import decoded, encode
from snficon.workload.model import JobSpec, Profile, Workload

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
    #: The job object of ``JOB_SUBMITTED`` as a scheduler decodes it.
    description: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.description = decoded(self._raw_description())

    def _raw_description(self) -> dict[str, Any]:
        """The file's job object with the full id (``JOB_SUBMITTED``'s ``job``)."""
        raw = dict(self.spec.raw)
        raw["id"] = self.full_id
        return raw

    @property
    def description_text(self) -> str:
        """Batsim's text of the job object, made only for a driver that sends text."""
        return encode(self._raw_description())

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


@dataclass(slots=True, eq=False)
class FinishedJob:
    """What remains of a job the server deleted: enough to answer a late ``KILL_JOB``
    (``server_on_kill_jobs`` accepts completed jobs) and protocol checks."""

    full_id: str
    state: str
    kill_requested: bool = False
    ptask: Any = None

    @property
    def is_complete(self) -> bool:
        return True


class JobTable:
    """The jobs of every workload by full id (``w0!12``), made as they are first needed.

    ``workloads`` pairs each workload's name (``w0``) with its loaded workload.
    An id of a job not made yet is known (``in``); looking it up makes the job
    (state ``NOT_SUBMITTED``). :meth:`submission_order` makes each job when
    its submitter reaches it, :meth:`finish` reduces a deleted one.
    """

    def __init__(self, workloads: Sequence[tuple[str, Workload]]) -> None:
        self._workloads = {name: workload for name, workload in workloads}
        self._specs = {name: {spec.id: spec for spec in workload.jobs}
                       for name, workload in workloads}
        self._made: dict[str, EngineJob | FinishedJob] = {}
        self._count = sum(len(specs) for specs in self._specs.values())

    def __len__(self) -> int:
        """Every job of the workloads, made or not."""
        return self._count

    def _spec(self, full_id: str) -> tuple[str, JobSpec] | None:
        name, bang, job_id = full_id.partition("!")
        specs = self._specs.get(name)
        if not bang or specs is None:
            return None
        spec = specs.get(job_id)
        return None if spec is None else (name, spec)

    def __contains__(self, full_id: object) -> bool:
        return isinstance(full_id, str) and (full_id in self._made
                                              or self._spec(full_id) is not None)

    def get(self, full_id: str) -> EngineJob | FinishedJob | None:
        """The job ``full_id`` (made now if it was not yet), None for an unknown id."""
        job = self._made.get(full_id)
        if job is not None:
            return job
        found = self._spec(full_id)
        return None if found is None else self._make(*found)

    def __getitem__(self, full_id: str) -> Any:
        job = self.get(full_id)
        if job is None:
            raise KeyError(full_id)
        return job

    def values(self) -> Iterator[EngineJob | FinishedJob]:
        """The jobs made so far (submitted ones included), in the order they were made."""
        return iter(list(self._made.values()))

    def _make(self, name: str, spec: JobSpec) -> EngineJob:
        full_id = f"{name}!{spec.id}"
        job = EngineJob(spec=spec, full_id=full_id, workload_name=name,
                        profile=self._workloads[name].profiles[spec.profile])
        self._made[full_id] = job
        return job

    def submission_order(self, name: str) -> Iterator[EngineJob]:
        """The jobs of workload ``name`` in Batsim's submission order
        (``job_comparator_subtime_number``: subtime, then id string), each made when
        the iteration reaches it."""
        made = self._made
        for spec in sorted(self._workloads[name].jobs, key=lambda spec: (spec.subtime, spec.id)):
            job = made.get(f"{name}!{spec.id}")
            yield job if isinstance(job, EngineJob) else self._make(name, spec)

    def finish(self, job: EngineJob) -> None:
        """Keep only a :class:`FinishedJob` of a job the server deleted."""
        self._made[job.full_id] = FinishedJob(job.full_id, job.state, job.kill_requested)
