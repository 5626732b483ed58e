"""The running summary of the job rows (``summary``): Python's ``sum`` and ``max``, row by row."""

from __future__ import annotations

import math
import random
import sys

from snficon.engine.summary import JobSummary, RunningMax, RunningSum

from .conftest import random_job_rows


def test_running_summary_equals_the_sums_and_maxima_of_therandom_job_rows():
    for seed in range(20):
        rows = random_job_rows(seed, random.Random(seed).randint(0, 400))
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


def test_summary_of_three_rows_worked_by_hand():
    """a: submitted 0, starts 10, runs 20, succeeds -> wait 10, turnaround 30, slowdown 1.5.
    b: submitted 5, starts 5, runs 10, walltime reached -> wait 0, turnaround 10,
    slowdown 1.0. c: rejected (no start) -> counted, nothing else.
    Sums: waits 10, turnarounds 40, slowdowns 2.5; maxima 10, 30, 1.5; makespan
    max(10 + 20, 5 + 10) = 30; 2 finished, 1 rejected, 1 success, 1 killed."""
    summary = JobSummary()
    summary.add(0.0, 10.0, 20.0, "COMPLETED_SUCCESSFULLY")
    summary.add(5.0, 5.0, 10.0, "COMPLETED_WALLTIME_REACHED")
    summary.add(7.0, None, 0.0, "REJECTED")
    assert (summary.waits.value, summary.turnarounds.value, summary.slowdowns.value) == (
        10.0, 40.0, 2.5)
    assert (summary.max_wait.value(), summary.max_turnaround.value(),
            summary.max_slowdown.value(), summary.makespan.value()) == (10.0, 30.0, 1.5, 30.0)
    assert (summary.finished, summary.rejected, summary.success, summary.killed) == (2, 1, 1, 1)


def test_empty_summary_gives_zero_sums_and_the_default_maxima():
    """No row: sum([]) = 0 and max([], default=d) = d."""
    summary = JobSummary()
    assert summary.waits.value == 0.0 == sum([])
    assert summary.makespan.value() == 0.0 and summary.makespan.value(default=-1.0) == -1.0
    assert (summary.finished, summary.rejected) == (0, 0)


def test_running_sum_adds_as_python_sum():
    """1e16 + 1 + 1 - 1e16: plain left-to-right adds give 0 (each 1 is lost against 1e16,
    whose spacing is 2); Python 3.12's compensated sum gives 2. Either way: sum()'s value."""
    values = [1e16, 1.0, 1.0, -1e16]
    running = RunningSum()
    for value in values:
        running.add(value)
    assert running.value == sum(values)
    assert running.value == (2.0 if sys.version_info >= (3, 12) else 0.0)


def test_running_max_keeps_the_first_of_equal_values():
    """max(0.0, -0.0) is 0.0 and max(-0.0, 0.0) is -0.0: the first of equal values stays."""
    for first, second in ((0.0, -0.0), (-0.0, 0.0)):
        running = RunningMax()
        running.add(first)
        running.add(second)
        assert math.copysign(1.0, running.value()) == math.copysign(1.0, max(first, second))
        assert math.copysign(1.0, running.value()) == math.copysign(1.0, first)
