"""A job as the engine tracks it from submission to its line of ``out_jobs.csv``.

:class:`JobTable` is Batsim's ``Workloads`` job lookup (``Workloads::job_at``)
without the cost of a full job per line of the workload: a job's
:class:`EngineJob` (its decoded description and Batsim's text of it) is made
when the workload's submitter reaches it, and forgotten once the server
deletes it (``Server::to_delete``) but for a byte of state, from which a
:class:`FinishedJob` answers later lookups.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snficon.engine.outputs import JobRow
from snficon.engine.wire import decoded, encode
from snficon.workload.model import JobSpec, Profile, Workload
from snficon.workload.packed import JobSource, WorkloadJobs

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


@dataclass(eq=False, slots=True)
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
    #: Its position in its workload (:class:`~snficon.workload.packed.JobSource`).
    index: int = -1

    def __post_init__(self) -> None:
        description = decoded(self.spec.raw)  # a new object: only its id to replace
        description["id"] = self.full_id
        self.description = description

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


#: The complete states a finished job is kept in, by their code (0: not finished).
FINISHED_STATES = (REJECTED, COMPLETED_SUCCESSFULLY, COMPLETED_WALLTIME_REACHED,
                   COMPLETED_KILLED, COMPLETED_FAILED)
_FINISHED_CODE = {state: code for code, state in enumerate(FINISHED_STATES, start=1)}


@dataclass(eq=False)
class FinishedRecords:
    """The finished jobs of one workload, a byte each: the state code and whether a kill
    was asked for, by job position."""

    states: np.ndarray
    kills: np.ndarray

    @classmethod
    def empty(cls, size: int) -> FinishedRecords:
        return cls(np.zeros(size, dtype=np.int8), np.zeros(size, dtype=np.bool_))


@dataclass(slots=True, eq=False)
class FinishedJob:
    """What remains of a job the server deleted: enough to answer a late ``KILL_JOB``
    (``server_on_kill_jobs`` accepts completed jobs) and protocol checks.

    A view on its workload's :class:`FinishedRecords`: a new one at each lookup,
    whose ``kill_requested`` is written through to the records.
    """

    full_id: str
    records: FinishedRecords
    index: int
    ptask: Any = None

    @property
    def state(self) -> str:
        return FINISHED_STATES[int(self.records.states[self.index]) - 1]

    @property
    def kill_requested(self) -> bool:
        return bool(self.records.kills[self.index])

    @kill_requested.setter
    def kill_requested(self, value: bool) -> None:
        self.records.kills[self.index] = value

    @property
    def is_complete(self) -> bool:
        return True


class JobTable:
    """The jobs of every workload by full id (``w0!12``), made as they are first needed.

    ``workloads`` pairs each workload's name (``w0``) with its jobs: a loaded
    :class:`Workload` or any :class:`~snficon.workload.packed.JobSource` (a
    :class:`~snficon.workload.packed.PackedWorkload`). An id of a job not made
    yet is known (``in``); looking it up makes the job (state
    ``NOT_SUBMITTED``). :meth:`submission_order` makes each job when its
    submitter reaches it, :meth:`finish` forgets a deleted one but for a byte
    of :class:`FinishedRecords`, so memory follows the jobs in the system.
    """

    def __init__(self, workloads: Sequence[tuple[str, Workload | JobSource]]) -> None:
        self._sources: dict[str, JobSource] = {
            name: WorkloadJobs(workload) if isinstance(workload, Workload) else workload
            for name, workload in workloads}
        self._finished = {name: FinishedRecords.empty(len(source))
                          for name, source in self._sources.items()}
        self._made: dict[str, EngineJob] = {}
        self._count = sum(len(source) for source in self._sources.values())

    def __len__(self) -> int:
        """Every job of the workloads, made or not."""
        return self._count

    def _position(self, full_id: str) -> tuple[str, int] | None:
        name, bang, job_id = full_id.partition("!")
        source = self._sources.get(name)
        if not bang or source is None:
            return None
        index = source.index_of(job_id)
        return None if index is None else (name, index)

    def source_of(self, job: EngineJob) -> str:
        """The file (or label) of the workload ``job`` comes from."""
        return self._sources[job.workload_name].source

    def __contains__(self, full_id: object) -> bool:
        return isinstance(full_id, str) and (full_id in self._made
                                              or self._position(full_id) is not None)

    def get(self, full_id: str) -> EngineJob | FinishedJob | None:
        """The job ``full_id`` (made now if it was not yet), None for an unknown id."""
        job = self._made.get(full_id)
        if job is not None:
            return job
        found = self._position(full_id)
        if found is None:
            return None
        name, index = found
        records = self._finished[name]
        if records.states[index]:
            return FinishedJob(full_id, records, index)
        return self._make(name, index)

    def __getitem__(self, full_id: str) -> Any:
        job = self.get(full_id)
        if job is None:
            raise KeyError(full_id)
        return job

    def values(self) -> Iterator[EngineJob]:
        """The jobs made and not finished yet, in the order they were made."""
        return iter(list(self._made.values()))

    def _make(self, name: str, index: int) -> EngineJob:
        source = self._sources[name]
        spec = source.spec(index)
        full_id = f"{name}!{spec.id}"
        job = EngineJob(spec=spec, full_id=full_id, workload_name=name,
                        profile=source.profile_of(index), index=index)
        self._made[full_id] = job
        return job

    def submission_order(self, name: str) -> Iterator[EngineJob]:
        """The jobs of workload ``name`` in Batsim's submission order
        (``job_comparator_subtime_number``: subtime, then id string), each made when
        the iteration reaches it."""
        source, made, finished = self._sources[name], self._made, self._finished[name]
        for index in source.submission_order():
            # Made already only when a scheduler named the job before its submission.
            job = None if finished.states[index] else made.get(f"{name}!{source.id_of(index)}")
            yield job if job is not None else self._make(name, index)

    def finish(self, job: EngineJob) -> None:
        """Forget a job the server deleted, but for its :class:`FinishedRecords` byte."""
        del self._made[job.full_id]
        records = self._finished[job.workload_name]
        records.states[job.index] = _FINISHED_CODE[job.state]
        records.kills[job.index] = job.kill_requested
