"""Which trace records become jobs: the paper's keep/drop rules (SPEC section 4).

Shared by the SWF and SPARS readers. A record is dropped when its runtime or
its processor count is unknown (-1, as the Parallel Workloads Archive marks
it) or otherwise invalid (negative runtime, fewer than one processor,
negative submission time), and, only when asked, when it needs more than
``nb_res`` nodes. A missing
requested time (negative, SWF's -1) is replaced by the runtime and counted.
The first ``skip`` kept records are passed over (a later segment of a trace:
``skip=3000, max_jobs=1000`` gives the paper's RL training jobs 3001-4000),
and the next ``max_jobs`` kept records are the jobs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from snficon.errors import InputError
from snficon.workload.trace import TraceJob

DROP_RUNTIME_UNKNOWN = "runtime unknown (-1)"
DROP_RUNTIME_NEGATIVE = "runtime negative"
DROP_RES_UNKNOWN = "processors unknown (-1)"
DROP_RES_INVALID = "processors < 1"
DROP_SUBTIME_UNKNOWN = "submit time unknown (< 0)"
DROP_LARGER = "larger than nb_res"


@dataclass
class JobSelector:
    """Accumulates kept jobs and drop counts while a reader offers records.

    ``nb_res`` is needed only when ``drop_oversized`` is set. ``where`` names
    a record in error messages (``file:line`` or ``file: job #i``).
    ``skipped`` counts the kept records passed over (at most ``skip``);
    ``last_skipped_subtime`` is the submission time of the last of them.
    """

    source: str
    max_jobs: int | None = None
    nb_res: int | None = None
    drop_oversized: bool = False
    skip: int = 0
    records: int = field(default=0, init=False)
    skipped: int = field(default=0, init=False)
    last_skipped_subtime: float | None = field(default=None, init=False)
    reqtime_missing: int = field(default=0, init=False)
    kept: list[TraceJob] = field(default_factory=list, init=False)
    dropped: Counter[str] = field(default_factory=Counter, init=False)
    _where_by_id: dict[int, str] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.max_jobs is not None and self.max_jobs < 1:
            raise InputError(f"--jobs must be at least 1, got {self.max_jobs}")
        if self.skip < 0:
            raise InputError(f"--skip must be at least 0, got {self.skip}")
        if self.drop_oversized and self.nb_res is None:
            raise InputError(f"{self.source}: dropping jobs larger than the platform "
                             "needs its size (--nb-res N)")

    @property
    def full(self) -> bool:
        """True once ``max_jobs`` jobs are kept."""
        return self.max_jobs is not None and len(self.kept) >= self.max_jobs

    def _drop_reason(self, res: int, subtime: float, runtime: float) -> str | None:
        if runtime == -1:
            return DROP_RUNTIME_UNKNOWN
        if runtime < 0:
            return DROP_RUNTIME_NEGATIVE
        if res == -1:
            return DROP_RES_UNKNOWN
        if res < 1:
            return DROP_RES_INVALID
        if subtime < 0:
            return DROP_SUBTIME_UNKNOWN
        if self.drop_oversized and self.nb_res is not None and res > self.nb_res:
            return DROP_LARGER
        return None

    def offer(self, job_id: int, res: int, subtime: float, runtime: float,
              reqtime: float, where: str) -> bool:
        """Apply the rules to one record; return True when it was kept (not skipped)."""
        self.records += 1
        reason = self._drop_reason(res, subtime, runtime)
        if reason is not None:
            self.dropped[reason] += 1
            return False
        if job_id in self._where_by_id:
            raise InputError(f"{where}: job id {job_id} appears twice "
                             f"(first at {self._where_by_id[job_id]})")
        self._where_by_id[job_id] = where
        if self.skipped < self.skip:
            self.skipped += 1
            self.last_skipped_subtime = subtime
            return False
        if reqtime < 0:
            reqtime = runtime
            self.reqtime_missing += 1
        self.kept.append(TraceJob(id=job_id, res=res, subtime=subtime, runtime=runtime,
                                  reqtime=reqtime))
        return True

    def origin(self) -> float:
        """The submission time the kept jobs' subtimes are made relative to (SPEC 4).

        Without skipping: the earliest kept submission (the first kept job's in a
        sorted trace), so the first job arrives at 0. After skipping: the last
        skipped job's submission, so the segment's first job arrives after its
        real gap, as the paper authors' training segments do (their
        ``DAS2-fs1-3001-4000.json`` is jobs 3001-4000 of the trace rebased on
        job 3000); it is lowered to the earliest kept submission if a kept
        record was submitted before it (an unsorted trace), so no subtime is
        negative.
        """
        earliest = min((job.subtime for job in self.kept), default=0.0)
        if self.last_skipped_subtime is None:
            return earliest
        return min(self.last_skipped_subtime, earliest)
