"""Job-by-job comparison of two runs of the same workload (e.g. a port against its reference).

Jobs are matched by id and walked in submission order (A's); a job *differs*
when its start times differ by more than a tolerance or when both logs give
node sets and the sets differ. The first differing job is where two
schedulers' decisions part; everything after it may differ as a consequence.
The per-metric table recomputes SPEC 6's job metrics from each log the same
way (so formats with other conventions still compare like with like) and adds
the wasted energy when both runs provide it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from snficon.analysis.job_logs import JobLog, LoggedJob
from snficon.analysis.metrics import ZERO_RUNTIME_S

#: Default start-time tolerance (s): the logs write times to 1e-6 s or as floats.
START_TOLERANCE_S = 1e-3
#: Batsim's out_jobs.csv writes times to six decimals: finish - start of a zero-flop job
#: (1e-5 s) read back at t ~ 1e6 s is 1e-5 s give or take this much.
PRINTED_PRECISION_S = 1e-6

#: The compared metrics, in the order they are printed, with their units.
METRICS = {
    "jobs": "",
    "mean_wait": "s",
    "max_wait": "s",
    "mean_response": "s",
    "mean_slowdown": "",
    "makespan": "s",
    "energy_wasted": "J",
}


@dataclass(frozen=True)
class JobDifference:
    """A job both runs ran whose start or node set differs."""

    a: LoggedJob
    b: LoggedJob

    @property
    def start_delta(self) -> float:
        """B's start minus A's (s)."""
        return (self.b.start or 0.0) - (self.a.start or 0.0)

    @property
    def nodes_differ(self) -> bool:
        """Whether both logs give node sets and they differ."""
        known = self.a.nodes is not None and self.b.nodes is not None
        return known and self.a.nodes != self.b.nodes


@dataclass(frozen=True)
class MetricDifference:
    """One metric in both runs; ``relative`` = (b - a) / |a| (None when a is 0 or a value is
    missing)."""

    name: str
    a: float | None
    b: float | None

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def relative(self) -> float | None:
        if self.a is None or self.b is None or self.a == 0:
            return None
        return (self.b - self.a) / abs(self.a)


@dataclass(frozen=True)
class Comparison:
    """The outcome of :func:`compare_logs`.

    ``differences`` lists the differing jobs in A's submission order (the
    first is where the runs part); ``only_a``/``only_b`` the ids that ran in
    one run only; ``tolerance_s`` the start-time tolerance used.
    """

    a: JobLog
    b: JobLog
    matched: int
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]
    differences: tuple[JobDifference, ...]
    metrics: tuple[MetricDifference, ...]
    tolerance_s: float = START_TOLERANCE_S

    @property
    def first(self) -> JobDifference | None:
        """The first differing job in submission order, None if none differs."""
        return self.differences[0] if self.differences else None

    @property
    def earliest(self) -> JobDifference | None:
        """The differing job whose earlier start (of the two runs) comes first: where the
        two schedulers' decisions part in time (jobs submitted later may start earlier)."""
        if not self.differences:
            return None
        return min(self.differences, key=lambda d: (min(d.a.start or 0.0, d.b.start or 0.0)))

    @property
    def start_differs(self) -> int:
        """How many matched jobs start at other times."""
        return sum(1 for d in self.differences if abs(d.start_delta) > self.tolerance_s)

    @property
    def nodes_differs(self) -> int:
        """How many matched jobs ran on other node sets."""
        return sum(1 for d in self.differences if d.nodes_differ)

    def worst_relative(self, names: tuple[str, ...] | None = None) -> tuple[str, float] | None:
        """The metric (among ``names``, default all) with the largest |relative| difference."""
        rows = [(m.name, abs(m.relative)) for m in self.metrics
                if m.relative is not None and (names is None or m.name in names)]
        return max(rows, key=lambda row: row[1]) if rows else None


def compare_logs(a: JobLog, b: JobLog, tolerance_s: float = START_TOLERANCE_S) -> Comparison:
    """Compare two job logs job by job (A's submission order) and metric by metric.

    A job that ran in both differs when ``|start_b - start_a| > tolerance_s``
    or its node sets (when both known) differ. ``tolerance_s`` must be >= 0.
    """
    if not tolerance_s >= 0:
        raise ValueError(f"tolerance_s must be >= 0, got {tolerance_s!r}")
    ran_a = {job.job_id: job for job in a.jobs if job.start is not None}
    ran_b = {job.job_id: job for job in b.jobs if job.start is not None}
    differences = []
    for job in a.jobs:
        other = ran_b.get(job.job_id)
        if job.start is None or other is None or other.start is None:
            continue
        pair = JobDifference(job, other)
        if abs(pair.start_delta) > tolerance_s or pair.nodes_differ:
            differences.append(pair)
    metrics_a, metrics_b = job_metrics(a), job_metrics(b)
    metrics = tuple(MetricDifference(name, metrics_a[name], metrics_b[name]) for name in METRICS)
    return Comparison(
        a=a, b=b, matched=len(ran_a.keys() & ran_b.keys()),
        only_a=tuple(job_id for job_id in ran_a if job_id not in ran_b),
        only_b=tuple(job_id for job_id in ran_b if job_id not in ran_a),
        differences=tuple(differences), metrics=metrics, tolerance_s=tolerance_s)


def job_metrics(log: JobLog) -> dict[str, float | None]:
    """SPEC 6 metrics of the jobs that ran: count, mean and max wait, mean response,
    mean slowdown (response / runtime over the jobs with runtime = finish - start >
    0; Batsim's 1e-5 s of a zero-flop job counts as zero, as in SPEC 6 and in
    :mod:`snficon.analysis.metrics`), makespan (last finish), and the log's wasted
    energy."""
    ran = [job for job in log.jobs if job.start is not None and job.finish is not None]
    waits = [job.start - job.submit for job in ran]  # type: ignore[operator]
    responses = [job.finish - job.submit for job in ran]  # type: ignore[operator]
    slowdowns = [(job.finish - job.submit) / (job.finish - job.start)  # type: ignore[operator]
                 for job in ran if job.finish - job.start  # type: ignore[operator]
                 > ZERO_RUNTIME_S + PRINTED_PRECISION_S]
    return {
        "jobs": float(len(ran)),
        "mean_wait": _mean(waits),
        "max_wait": max(waits, default=None),
        "mean_response": _mean(responses),
        "mean_slowdown": _mean(slowdowns),
        "makespan": max((job.finish for job in ran), default=None),  # type: ignore[type-var]
        "energy_wasted": log.energy_wasted,
    }


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None
