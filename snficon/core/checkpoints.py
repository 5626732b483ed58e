r"""Checkpoints of a running job as the time-limit daemon sees them.

The autonomy loop of the time-limits paper (section 4, "Daemon Architecture"):
a checkpointing application writes a timestamp after each checkpoint; the
daemon polls every ``poll_s`` seconds (20 s in the paper), so it learns of a
checkpoint at the first poll at or after it, and predicts the next
checkpoint as the last reported one plus the mean reported interval.

A job started at :math:`s` with checkpoint interval :math:`I` and offset
:math:`o` reaches checkpoint :math:`k \ge 1` at

.. math:: c_k = s + o + k I .

The daemon measures the intervals from the job's start, so after :math:`k`
reports it predicts

.. math:: \hat c_{k+1} = c_k + \frac{c_k - s}{k} = c_{k+1} + \frac{o}{k},

exact when :math:`o = 0` and late by :math:`o/k` otherwise. It acts once,
at the first poll at which the predicted next checkpoint falls after the
job's limit :math:`E`: that checkpoint would be lost, so the job is
cancelled now (after the last checkpoint that fits) or its limit extended
to reach it (:mod:`snficon.core.time_limits`). Polls are at
:math:`m \cdot` ``poll_s``, m = 0, 1, ... (the daemon starts with the
simulation); ``poll_s = 0`` is a daemon that sees each checkpoint at once.
Every comparison of two times goes through :mod:`snficon.core.clock`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from snficon.core.clock import TIME_TOLERANCE_S, future_mask, is_future


@dataclass(frozen=True)
class CheckpointSchedule:
    """A job's fixed-interval checkpoints: ``interval_s`` (> 0) after ``offset_s`` (>= 0)."""

    interval_s: float
    offset_s: float = 0.0

    def time_of(self, start_s: float, k: int) -> float:
        """c_k = start + offset + k x interval, the time of checkpoint k >= 1."""
        return start_s + self.offset_s + k * self.interval_s

    def reached(self, start_s: float, t: float) -> int:
        """How many checkpoints a job started at ``start_s`` has written by ``t`` (c_k <= t)."""
        done = math.floor((t - start_s - self.offset_s + TIME_TOLERANCE_S) / self.interval_s)
        return max(done, 0)


def next_poll(t: float, poll_s: float) -> float:
    """The first poll of the daemon at or after ``t`` (``t`` itself when ``poll_s`` is 0)."""
    if poll_s <= 0:
        return t
    return math.ceil((t - TIME_TOLERANCE_S) / poll_s) * poll_s


def predicted_next(start_s: float, schedule: CheckpointSchedule, k: int) -> float:
    """The daemon's prediction of checkpoint k + 1 after k reports: c_k + (c_k - start) / k."""
    last = schedule.time_of(start_s, k)
    return last + (last - start_s) / k


@dataclass(frozen=True)
class DaemonAction:
    """When the daemon acts on a job: at poll ``time_s``, having seen ``seen`` checkpoints,
    predicting the next at ``predicted_s`` (after the job's limit)."""

    time_s: float
    seen: int
    predicted_s: float


def daemon_action(start_s: float, limit_end_s: float, schedule: CheckpointSchedule,
                  poll_s: float) -> DaemonAction | None:
    """The first poll at which the daemon sees that the next checkpoint will not fit.

    That is the first poll p <= ``limit_end_s`` at which it has seen k >= 1
    checkpoints and predicts checkpoint k + 1 after ``limit_end_s``. None when
    there is no such poll: no checkpoint before the limit (the daemon knows
    no interval), or the poll after the last fitting one comes after the limit
    (the job times out first). At a poll that falls on the limit itself the
    daemon acts (before the limit is enforced).
    """
    fitting = schedule.reached(start_s, limit_end_s)
    if fitting == 0:
        return None
    k = np.arange(1, fitting + 1)
    last = start_s + schedule.offset_s + k * schedule.interval_s
    predicted = last + (last - start_s) / k
    late = future_mask(predicted, limit_end_s)
    candidates = np.flatnonzero(late)
    while len(candidates):
        index = int(candidates[0])
        poll = next_poll(float(last[index]), poll_s)
        if is_future(poll, limit_end_s):
            return None
        seen = min(schedule.reached(start_s, poll), fitting)
        if late[seen - 1]:
            return DaemonAction(time_s=poll, seen=seen, predicted_s=float(predicted[seen - 1]))
        candidates = candidates[candidates >= seen]  # a later report whose next does not fit
    return None
