"""FCFS/EASY's two future plans, built on the sequential plan (Definition 6).

:func:`easy_gap_plan` (the authors' code: every job moved to the earliest hole
that disturbs no earlier job, on per-node timelines) and :func:`easy_plan` (the
head's reservation alone).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence

import numpy as np

from snficon.core.node_choice import NodeChoice, StateGroups
from snficon.core.plan import Plan, PlannedJob, empty_plan, plan_in_sequence
from snficon.core.view import QueuedJob


def easy_plan(groups: StateGroups, release: np.ndarray, jobs: Sequence[QueuedJob],
              durations: Sequence[float], now: float) -> Plan:
    """The future plan of an FCFS queue with EASY backfilling (head first).

    The head is planned as in :func:`~snficon.core.plan.sequential_plan` and its nodes are
    reserved from its planned start s_h. Each later job, in FCFS order, is
    planned ahead of the head when it can start before s_h on nodes outside
    the reservation, or on reserved nodes if it ends (by its duration) by s_h;
    otherwise it is planned after, with the non-decreasing barrier. Sleeping
    nodes of backfilled jobs are then woken in time for them, as for any
    planned job.
    """
    if not jobs:
        return empty_plan()
    choice = NodeChoice.of(groups, now)
    head = list(plan_in_sequence(choice, release.copy(), jobs[:1], durations[:1]))
    if not head:
        return empty_plan()
    shadow, reserved = head[0].start, head[0].nodes
    free = release.copy()  # releases before the head's reservation
    booked = release.copy()
    booked[reserved] = head[0].finish
    plan = list(head)
    barrier = shadow
    for job, duration in zip(jobs[1:], durations[1:], strict=True):
        outside = free.copy()
        outside[reserved] = np.inf
        start = _kth_release(outside, job.res)
        pool = outside
        if not start < shadow:
            start = _kth_release(free, job.res)
            pool = free
            if not start + duration <= shadow:
                start = None
        if start is not None:
            chosen = choice.choose(pool, start, job.res)
            free[chosen] = booked[chosen] = start + duration
            plan.append(PlannedJob(job=job, start=start, finish=start + duration, nodes=chosen))
            continue
        start = max(barrier, _kth_release(booked, job.res))
        if not np.isfinite(start):
            break
        chosen = choice.choose(booked, start, job.res)
        booked[chosen] = start + duration
        free[chosen] = np.maximum(free[chosen], start + duration)
        plan.append(PlannedJob(job=job, start=start, finish=start + duration, nodes=chosen))
        barrier = start
    return Plan(iter(plan), monotone=False, length=len(plan))


def _kth_release(release: np.ndarray, count: int) -> float:
    """The count-th earliest finite release time (inf when fewer are finite)."""
    finite = release[np.isfinite(release)]
    if count > len(finite):
        return np.inf
    return float(np.partition(finite, count - 1)[count - 1])

#: Times this close are equal in the hole search (the authors' code's epsilon).
GAP_EPS_S = 1e-9
#: Largest (candidate times x busy entries) array of one step of the hole search.
HOLE_BATCH_CELLS = 1 << 18
#: Cells of the first batch of the hole search: a small array costs its call, not its size.
FIRST_BATCH_CELLS = 1 << 12


def easy_gap_plan(groups: StateGroups, release: np.ndarray, jobs: Sequence[QueuedJob],
                  durations: Sequence[float], now: float) -> Plan:
    """The future plan of an FCFS queue with EASY backfilling, as the authors' code builds it.

    First the sequential plan (Definition 6) of the whole queue, head first:
    job k gets (s_k, B_k). Then the jobs are placed again in FCFS order on
    per-node timelines (each node busy until its release, then by the jobs
    placed so far), each one in the earliest hole that leaves every job
    placed before it undisturbed:

    1. the head keeps (s_1, B_1);
    2. a later job k is placed at the earliest candidate time t in
       [now, s_k), on r_k nodes that are free over [t, t + D_k), if there
       is one (it will be backfilled, perhaps on nodes woken for it);
    3. else it keeps (s_k, B_k) if those nodes are still free over
       [s_k, s_k + D_k);
    4. else at the earliest candidate time t >= s_k with a hole; if there
       is none, planning stops.

    Candidate times are ``now``, the finite releases and the planned
    finishes. Node choice in a hole is
    :func:`~snficon.core.node_choice.choose_nodes` with each node's release taken
    as the end of its previous busy interval (so the idle term counts from there).
    This is conservative backfilling applied to the plan that drives PSAS wake-ups;
    the immediate starts stay EASY's.
    The plan lists the jobs in FCFS order, head first (as :func:`easy_plan`:
    a layer that protects only the head reads it first), not by start.

    It is a :class:`Plan` made whole when first read; its length is known without
    planning (:func:`planned_count`): the hole search of step 4 always succeeds once
    every duration is finite and >= 0 (at the latest candidate time every node with a
    finite release is free, since each booking ends by then), so the plan places the
    jobs its sequential seed does. A reader that needs no job (no node asleep, no idle
    timer expired) plans nothing.
    """
    return Plan.of(_gap_jobs, groups, release, jobs, durations, now, monotone=False)


def _gap_jobs(groups: StateGroups, now: float, release: np.ndarray, jobs: list[QueuedJob],
              durations: list[float]) -> Iterator[PlannedJob]:
    """The jobs of :func:`easy_gap_plan`, all planned when the first is read."""
    choice = NodeChoice.of(groups, now)
    seed = list(plan_in_sequence(choice, release.copy(), jobs, durations))
    if not seed:
        return
    timeline = _Timeline(release, now, len(seed))
    head = seed[0]
    timeline.book(head.nodes, head.start, head.finish)
    plan = [head]
    cleared = _Cleared()
    for planned in seed[1:]:
        duration = planned.finish - planned.start
        placed = None
        if now + GAP_EPS_S < planned.start:
            count = planned.job.res
            placed, clear = _first_hole(choice, timeline, count, duration, now,
                                        planned.start, cleared.below(count, duration))
            cleared.add(count, duration, clear)
            if placed is not None and not placed[0] + GAP_EPS_S < planned.start:
                placed = None
        if placed is None and timeline.free_over(planned.nodes, planned.start, planned.finish):
            placed = (planned.start, planned.nodes)
        if placed is None:
            placed, _ = _first_hole(choice, timeline, planned.job.res, duration,
                                    planned.start, np.inf)
            if placed is None:
                break
        start, chosen = placed
        timeline.book(chosen, start, start + duration)
        plan.append(PlannedJob(job=planned.job, start=start, finish=start + duration,
                               nodes=chosen))
    yield from plan


class _Timeline:
    """Busy intervals of every node: [now, release) then the jobs booked so far.

    One row per booked job: its start, end and a 0/1 row over the nodes it holds
    (grown by doubling). A job's nodes share its interval, so a test of a time
    against the bookings is one per job, and the nodes it blocks are a product
    with the rows (exact: small integer counts in float32).
    """

    def __init__(self, release: np.ndarray, now: float, capacity: int = 8) -> None:
        self.release = release
        #: The finite releases, ascending (a list: bisected, never computed on).
        finite = np.sort(release[np.isfinite(release)])
        self.sorted_release: list[float] = finite.tolist()
        # each finite release once (the sorted array without its repeats), and now
        distinct = np.ones(len(finite), dtype=bool)
        distinct[1:] = finite[1:] != finite[:-1]
        times = finite[distinct].tolist()
        at = bisect.bisect_left(times, now)
        if at == len(times) or times[at] != now:
            times.insert(at, float(now))
        self._times: list[float] = times
        capacity = max(capacity, 1)
        self._member = np.zeros((capacity, len(release)), dtype=np.float32)
        self._start = np.empty(capacity)
        self._end = np.empty(capacity)
        self.jobs = 0

    @property
    def start(self) -> np.ndarray:
        return self._start[:self.jobs]

    @property
    def end(self) -> np.ndarray:
        return self._end[:self.jobs]

    @property
    def member(self) -> np.ndarray:
        return self._member[:self.jobs]

    def candidate_times(self) -> list[float]:
        """The finite releases, ``now`` and the finishes booked so far: sorted, each once
        (the timeline's own list: read, do not change)."""
        return self._times

    def book(self, ids: np.ndarray, start: float, end: float) -> None:
        row = self.jobs
        if row == len(self._start):
            grown = 2 * row
            member = np.zeros((grown, self._member.shape[1]), dtype=np.float32)
            member[:row] = self._member
            self._member = member
            self._start = np.concatenate([self._start, np.empty(row)])
            self._end = np.concatenate([self._end, np.empty(row)])
        self._member[row, ids] = 1.0
        self._start[row] = start
        self._end[row] = end
        self.jobs = row + 1
        if math.isfinite(end):
            times = self._times
            at = bisect.bisect_left(times, end)
            if at == len(times) or times[at] != end:
                times.insert(at, end)

    def blocked(self, t: float, duration: float) -> np.ndarray:
        """Mask of the nodes a job of ``duration`` may not use from ``t``: busy at ``t``
        (not yet released, or in a booked interval), or booked again before ``t + duration``."""
        return self.blocked_at(np.array([t]), duration)[0]

    def _clash(self, times: np.ndarray, duration: float) -> np.ndarray:
        """Booked jobs (columns) that block a job of ``duration`` started at each of
        ``times`` (rows)."""
        ahead = self.start[None, :] - times[:, None]
        return np.where(ahead > 0, (ahead <= GAP_EPS_S) | (ahead + GAP_EPS_S < duration),
                        times[:, None] < self.end[None, :])

    def blocked_at(self, times: np.ndarray, duration: float) -> np.ndarray:
        """:meth:`blocked` at each of ``times``: one row per time."""
        mask = self.release[None, :] > times[:, None]
        if self.jobs:
            clash = self._clash(times, duration)
            if clash.any():
                mask |= (clash.astype(np.float32) @ self.member) > 0.0
        return mask

    def previous_end(self, t: float) -> np.ndarray:
        """For each node, the end of its last busy interval that ended by ``t``
        (its release if none; inf if it is not released by ``t``)."""
        prev_end = np.where(self.release <= t, self.release, np.inf)
        ended = self.end <= t
        if ended.any():
            held = self.member[ended] > 0.0
            last = np.where(held, self.end[ended][:, None], -np.inf).max(axis=0)
            np.maximum(prev_end, last, out=prev_end)
        return prev_end

    def free_over(self, ids: np.ndarray, start: float, end: float) -> bool:
        """Whether every node of ``ids`` is free over [start, end)."""
        if (self.release[ids] > start).any():
            return False
        if not self.jobs:
            return True
        # the one row of _clash at ``start``, computed on 1-d arrays (the same operations)
        duration = end - start
        ahead = self.start - start
        clash = np.where(ahead > 0, (ahead <= GAP_EPS_S) | (ahead + GAP_EPS_S < duration),
                         start < self.end)
        rows = clash.nonzero()[0]
        return not (len(rows) and self.member[rows][:, ids].any())


def _first_hole(choice: NodeChoice, timeline: _Timeline, count: int, duration: float,
                earliest: float, latest: float, skip_below: float = -math.inf,
                ) -> tuple[tuple[float, np.ndarray] | None, float]:
    """The earliest candidate time in [earliest, latest) with ``count`` nodes free for
    ``duration`` from then, and the nodes :func:`~snficon.core.node_choice.choose_nodes`
    picks there; and the time below which no candidate time has such a hole (the
    hole's time, or the end of the range searched).

    ``skip_below``: a time below which no candidate has a hole, known beforehand
    (:class:`_Cleared`); those candidates are not tried.
    """
    times = timeline.candidate_times()  # the ones in [earliest, latest) (with the
    # tolerance), and earliest itself, sorted and each once
    upto = latest - GAP_EPS_S
    times = times[bisect.bisect_left(times, earliest - GAP_EPS_S):
                  bisect.bisect_left(times, upto)]
    at = bisect.bisect_left(times, earliest)
    if at == len(times) or times[at] != earliest:
        times.insert(at, earliest)
    # Booked jobs only take nodes away: skip the times with fewer than count released
    # nodes, i.e. before the count-th release (times are sorted).
    if count > len(timeline.sorted_release):
        return None, upto
    times = times[bisect.bisect_left(times, max(timeline.sorted_release[count - 1],
                                                skip_below)):]
    # The times are tried in order, a growing batch at a time (one array operation per
    # batch, of at most HOLE_BATCH_CELLS cells).
    size = len(timeline.release)
    width = size + timeline.jobs
    first, batch = 0, max(4, FIRST_BATCH_CELLS // width)
    while first < len(times):
        chunk = np.array(times[first:first + batch])
        blocked = timeline.blocked_at(chunk, duration)
        fits = np.flatnonzero(size - np.count_nonzero(blocked, axis=1) >= count)
        if len(fits):
            t = float(chunk[fits[0]])
            release = np.where(blocked[fits[0]], np.inf, timeline.previous_end(t))
            return (t, choice.choose(release, t, count)), t
        first += len(chunk)
        batch = max(1, min(4 * batch, HOLE_BATCH_CELLS // width))
    return None, upto


class _Cleared:
    r"""What the hole searches from ``now`` of one plan proved: for a job of ``count``
    nodes and ``duration``, no candidate time below ``clear`` has a hole.

    It holds for any later job needing at least as many nodes for at least as long
    (the bookings only grow, and so do the candidate times). Let t' < clear be such a
    job's hole and t'' the latest candidate time <= t' when the proof was made: no
    release nor booked end lies in (t'', t'], so a node busy at t'' or booked from
    (t'', t'] is busy at t', and a booking after t' that clashes with [t'', t'' + D)
    clashes with [t', t' + D') (D <= D'). Every node free for the later job at t' was
    free at t'' then, so t'' would have been a hole of the first job, below ``clear``.
    """

    def __init__(self) -> None:
        self._clear: dict[tuple[int, float], float] = {}

    def add(self, count: int, duration: float, clear: float) -> None:
        """Record a search from ``now`` for ``count`` nodes and ``duration``."""
        key = (count, duration)
        if clear > self._clear.get(key, -math.inf):
            self._clear[key] = clear

    def below(self, count: int, duration: float) -> float:
        """The time below which a job of ``count`` nodes and ``duration`` has no hole."""
        return max((clear for (c, d), clear in self._clear.items()
                    if c <= count and d <= duration), default=-math.inf)
