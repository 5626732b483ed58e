"""A running summary of ``out_jobs.csv`` for the one row of ``out_schedule.csv``.

Batsim computes the schedule's means and maxima from every job at the end
(``JobsTracer::finalize``); keeping every job row until then costs memory per
job. :class:`JobSummary` keeps the sums, maxima and counts instead, updated
as each row is written, with the very floating-point operations of
:func:`snficon.engine.outputs.schedule_summary`'s lists: sums in row order as
Python's ``sum`` adds them (left to right; Neumaier's compensated sum from
Python 3.12 on), maxima as ``max`` keeps them (the first of equal values,
``default`` when empty).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field

#: Python 3.12's ``sum`` of floats compensates rounding errors (Neumaier); 3.11's adds.
_COMPENSATED_SUM = sys.version_info >= (3, 12)

COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
KILLED_STATES = frozenset({"COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"})


@dataclass(slots=True)
class RunningSum:
    """``sum(values)`` of floats, one value at a time (CPython's ``builtin_sum_impl``)."""

    total: float = 0.0
    compensation: float = 0.0
    count: int = 0

    def add(self, value: float) -> None:
        """Add the next value, as ``sum``'s float loop does."""
        self.count += 1
        if self.count == 1 or not _COMPENSATED_SUM:
            self.total = self.total + value  # the int start 0 + the first item, then plain
            return
        total = self.total
        step = total + value
        if abs(total) >= abs(value):
            self.compensation += (total - step) + value
        else:
            self.compensation += (value - step) + total
        self.total = step

    @property
    def value(self) -> float:
        """What ``sum`` returns for the values added so far (0 for none)."""
        if self.compensation and math.isfinite(self.compensation):
            return self.total + self.compensation
        return self.total


@dataclass(slots=True)
class RunningMax:
    """``max(values, default=...)``: the first value no later one exceeds."""

    best: float | None = None

    def add(self, value: float) -> None:
        if self.best is None or value > self.best:
            self.best = value

    def value(self, default: float = 0.0) -> float:
        return default if self.best is None else self.best


@dataclass(slots=True)
class JobSummary:
    """What ``out_schedule.csv`` needs of the job rows, accumulated row by row."""

    waits: RunningSum = field(default_factory=RunningSum)
    turnarounds: RunningSum = field(default_factory=RunningSum)
    slowdowns: RunningSum = field(default_factory=RunningSum)
    max_wait: RunningMax = field(default_factory=RunningMax)
    max_turnaround: RunningMax = field(default_factory=RunningMax)
    max_slowdown: RunningMax = field(default_factory=RunningMax)
    makespan: RunningMax = field(default_factory=RunningMax)
    finished: int = 0
    rejected: int = 0
    success: int = 0
    killed: int = 0

    def add(self, submission_time: float, start: float | None, execution_time: float,
            final_state: str) -> None:
        """Count one row of ``out_jobs.csv`` (``start`` None: a rejected job)."""
        if start is None:
            self.rejected += 1
            return
        self.finished += 1
        wait = start - submission_time
        finish = start + execution_time
        turnaround = finish - submission_time
        slowdown = turnaround / execution_time
        self.waits.add(wait)
        self.turnarounds.add(turnaround)
        self.slowdowns.add(slowdown)
        self.max_wait.add(wait)
        self.max_turnaround.add(turnaround)
        self.max_slowdown.add(slowdown)
        self.makespan.add(finish)
        if final_state == COMPLETED_SUCCESSFULLY:
            self.success += 1
        elif final_state in KILLED_STATES:
            self.killed += 1
