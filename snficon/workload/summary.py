"""One-line summary of a loaded Batsim workload (``snficon workload check``)."""

from __future__ import annotations

from dataclasses import dataclass

from snficon.workload.model import Workload


@dataclass(frozen=True)
class WorkloadSummary:
    """Counts and extents of a workload: ``first_subtime``/``last_subtime`` in s
    (0 when empty), ``max_res`` the largest job, ``larger_than_platform`` the
    jobs needing more than ``nb_res`` nodes (valid input, rejected at run time)."""

    source: str
    jobs: int
    profiles: int
    first_subtime: float
    last_subtime: float
    max_res: int
    nb_res: int | None
    larger_than_platform: int

    def line(self) -> str:
        """``FILE: N jobs, P profiles, subtime A..B s (span S s), max res R, nb_res M``."""
        span = self.last_subtime - self.first_subtime
        text = (f"{self.source}: {self.jobs} jobs, {self.profiles} profiles, "
                f"subtime {self.first_subtime:.10g}..{self.last_subtime:.10g} s "
                f"(span {span:.10g} s), "
                f"max res {self.max_res}, nb_res {self.nb_res if self.nb_res else 'unset'}")
        if self.larger_than_platform:
            text += f", {self.larger_than_platform} jobs larger than nb_res"
        return text


def summarize(workload: Workload) -> WorkloadSummary:
    """Summarize a workload loaded by :func:`snficon.workload.reader.read_workload`."""
    jobs = workload.jobs
    subtimes = [job.subtime for job in jobs] or [0.0]
    nb_res = workload.nb_res
    return WorkloadSummary(
        source=workload.source, jobs=len(jobs), profiles=len(workload.profiles),
        first_subtime=min(subtimes), last_subtime=max(subtimes),
        max_res=max((job.res for job in jobs), default=0), nb_res=nb_res,
        larger_than_platform=sum(job.res > nb_res for job in jobs) if nb_res else 0)
