"""PSAS planning: the release map, the sequential plan (Definition 6) and wake times.

The sequential future plan is the paper's Definition 6 (eq. 13-16) with the
release map and node-choice cost fixed by SPEC section 5 (the node choice:
:mod:`snficon.core.node_choice`). It is shared by the baselines (releases from
requested times) and by SNF-ICON (predicted releases). FCFS/EASY's plans are in
:mod:`snficon.core.easy_plan`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from snficon.core import view as ns
from snficon.core.clock import TIME_TOLERANCE_S, unexpired_mask
from snficon.core.node_choice import NodeChoice, StateGroups
from snficon.core.view import NodeTable, QueuedJob


def release_map(groups: StateGroups, now: float) -> np.ndarray:
    """Earliest time each node can start a job (SPEC 5, PSAS release map).

    Idle: now. Computing: its job's start + requested time, or never (inf)
    once the job is past its request. Sleeping: now + T_on. Switching off:
    end of the switch-off + T_on. Switching on: end of the switch-on.
    ``groups``: the table's :class:`~snficon.core.node_choice.StateGroups`.
    Returns a new (writable) map.
    """
    nodes = groups.nodes
    release = np.where(groups.idle, float(now), np.inf)
    present = groups.counts
    if present[ns.COMPUTING]:
        computing = groups.computing
        ends = nodes.release_req_s[computing]
        # past its request, or no request known (nan): never
        release[computing] = np.where(unexpired_mask(ends, now), ends, np.inf)
    if present[ns.SLEEPING]:
        sleeping = groups.sleeping
        release[sleeping] = now + nodes.t_on_s[sleeping]
    if present[ns.SWITCHING_OFF]:
        off = groups.switching_off
        release[off] = np.maximum(nodes.transition_end_s[off], now) + nodes.t_on_s[off]
    if present[ns.SWITCHING_ON]:
        on = groups.switching_on
        release[on] = np.maximum(nodes.transition_end_s[on], now)
    return release


@dataclass(frozen=True)
class PlannedJob:
    """One job of the sequential plan: planned start s_j, finish f_j, nodes B_j (eq. 13-15)."""

    job: QueuedJob
    start: float
    finish: float
    nodes: np.ndarray


def sequential_plan(groups: StateGroups, release: np.ndarray, jobs: Sequence[QueuedJob],
                    durations: Sequence[float], now: float) -> Plan:
    r"""Plan the queue one job at a time (paper, Definition 6).

    .. math:: s_{j_k} = \max\{b_k, \hat t^{rel}_{(r_{j_k}),k}\}, \quad
              f_{j_k} = s_{j_k} + \hat D_{j_k}, \quad b_{k+1} = s_{j_k}

    ``groups``: the table's :class:`~snficon.core.node_choice.StateGroups`;
    ``release`` is the release map (it is not modified); ``durations`` the
    planned duration of each job (requested time for the baselines, eq. 46
    for SNF-ICON). Planning stops at the first job that cannot get enough
    plannable nodes. The plan is a monotone :class:`Plan`: each job is planned
    when first read, so a reader that stops early does not plan the rest of the queue.
    """
    return Plan.of(_sequential_jobs, groups, release, jobs, durations, now, monotone=True)


def _sequential_jobs(groups: StateGroups, now: float, release: np.ndarray,
                     jobs: Sequence[QueuedJob], durations: Sequence[float],
                     ) -> Iterator[PlannedJob]:
    """:func:`plan_in_sequence` on the node-choice keys at ``now``, made when the plan's
    first job is read (a plan no reader reads chooses no node)."""
    yield from plan_in_sequence(NodeChoice.of(groups, now), release, jobs, durations)


def plan_in_sequence(choice: NodeChoice, release: np.ndarray, jobs: Sequence[QueuedJob],
                     durations: Sequence[float]) -> Iterator[PlannedJob]:
    """The jobs of :func:`sequential_plan` one at a time, the nodes chosen on ``choice``
    (the table's node-choice keys at the plan's ``now``); ``release`` (a map the caller
    gives away) is updated as they are planned."""
    barrier = choice.now
    # The k-th smallest finite release is the k-th smallest release (inf and nan sort
    # last); a planned job's nodes were finite and stay so unless its finish is not.
    finite = int(np.count_nonzero(np.isfinite(release)))
    for job, duration in zip(jobs, durations, strict=True):
        res = job.res
        if res > finite:
            return
        ordered = release.copy()
        ordered.partition(res - 1)
        start = max(barrier, float(ordered[res - 1]))
        chosen = choice.choose(release, start, res)
        finish = start + duration
        release[chosen] = finish
        if not math.isfinite(finish):
            finite -= len(chosen)
        yield PlannedJob(job=job, start=start, finish=finish, nodes=chosen)
        barrier = start


#: Durations up to this (s), and finite releases up to this, cannot overflow a planned
#: finish: :func:`planned_count` counts the plan without making it.
SAFE_TIME_S = 1e300


def planned_count(release: np.ndarray, jobs: Sequence[QueuedJob],
                  durations: Sequence[float], now: float) -> int | None:
    """How many jobs :func:`sequential_plan` places, without planning them (None when
    that cannot be known so).

    Planning stops at the first job needing more nodes than have a finite release
    (Definition 6); a planned job's nodes stay finite when its finish is, which is
    certain when every duration is in [0, :data:`SAFE_TIME_S`] and so are ``now`` and
    every finite release (a start is at most a release or an earlier finish, so no sum
    overflows). So the count is the number of jobs before the first with ``r_j`` > the
    number of finite releases.
    """
    if len(jobs) != len(durations) or len(jobs) > 10**6 or not abs(now) <= SAFE_TIME_S:
        return None
    finite = int(np.count_nonzero(np.abs(release) <= SAFE_TIME_S))
    if finite + int(np.count_nonzero(release == math.inf)) != len(release):
        return None  # a release is nan, -inf or too large to sum safely
    if not all(0.0 <= duration <= SAFE_TIME_S for duration in durations):
        return None
    for k, job in enumerate(jobs):
        if job.res > finite:
            return k
    return len(jobs)


class Plan(Sequence[PlannedJob]):
    """A future plan whose jobs are made when first read (a read-only sequence).

    ``monotone``: the planned starts never decrease along the plan (the
    sequential plan of Definition 6: s_{k+1} >= b_{k+1} = s_k), so a reader that
    needs only the jobs starting before some time may stop at the first one
    starting later (:func:`decisive_wake_times`, the IPM keep rule).
    ``length``: the number of planned jobs when it is known without planning
    (:func:`planned_count`), else None (``len`` then makes the whole plan).
    A plan compares equal to a list of the same jobs. Every plan function returns one.

    The one speed trick of the plans, kept for its measured gain: planning each queue
    whole costs 35 % more CPU on das2-fs1 under FCFS/EASY+IPM, 14 % under SNF+IPM
    (``benchmarks/paper_speed.py --repeat 2 --cases markovian das2-fs1``, a whole plan
    made in the constructor against this one).
    """

    def __init__(self, jobs: Iterator[PlannedJob], *, monotone: bool,
                 length: int | None = None) -> None:
        self._source: Iterator[PlannedJob] | None = jobs
        self._made: list[PlannedJob] = []
        self._length = length
        self.monotone = monotone

    @classmethod
    def of(cls, make: Callable[..., Iterator[PlannedJob]], groups: StateGroups,
           release: np.ndarray, jobs: Sequence[QueuedJob], durations: Sequence[float],
           now: float, *, monotone: bool) -> Plan:
        """The plan ``make(groups, now, release, jobs, durations)`` yields, made as it is
        read, on copies of the caller's map and lists (the caller may change them after
        this call); its length known beforehand when :func:`planned_count` can tell."""
        if not jobs:
            return empty_plan()
        jobs, durations = list(jobs), list(durations)
        release = release.copy()
        return cls(make(groups, now, release, jobs, durations), monotone=monotone,
                   length=planned_count(release, jobs, durations, now))

    def _make(self, count: int | None) -> None:
        """Make the jobs up to ``count`` (None: all)."""
        source, made = self._source, self._made
        if source is None:
            return
        for planned in source:
            made.append(planned)
            if count is not None and len(made) >= count:
                return
        self._source = None

    def __iter__(self) -> Iterator[PlannedJob]:
        made = self._made
        k = 0
        while True:
            if k < len(made):
                yield made[k]
                k += 1
            elif self._source is None:
                return
            else:
                self._make(k + 1)

    def __len__(self) -> int:
        if self._length is None:
            self._make(None)
            self._length = len(self._made)
        return self._length

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice) or index < 0:
            self._make(None)
        else:
            self._make(index + 1)
        return self._made[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Plan | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Plan({list(self)!r})"


def empty_plan() -> Plan:
    """The plan of no job (any order's)."""
    return Plan(iter(()), monotone=True, length=0)


def wake_times(nodes: NodeTable, plan: Sequence[PlannedJob]) -> dict[int, float]:
    r"""Wake time of every sleeping node the plan uses (eq. 15-16).

    .. math:: t^{\uparrow}_i = \min_{j : i \in B_j} (s_j - L^{\uparrow}_i)

    Nodes switching off are included: they are woken once asleep.
    """
    if not plan:
        return {}
    ids = np.concatenate([planned.nodes for planned in plan])
    starts = np.concatenate([np.full(len(p.nodes), p.start) for p in plan])
    state = nodes.state[ids]
    asleep = (state == ns.SLEEPING) | (state == ns.SWITCHING_OFF)
    if not asleep.any():
        return {}
    ids, starts = ids[asleep], starts[asleep]
    earliest = np.full(nodes.size, np.inf)
    np.minimum.at(earliest, ids, starts - nodes.t_on_s[ids])
    woken = np.unique(ids)
    return dict(zip(woken.tolist(), earliest[woken].tolist(), strict=True))


def decisive_wake_times(groups: StateGroups, plan: Sequence[PlannedJob],
                        now: float) -> dict[int, float]:
    r"""The wake times of eq. 15-16 (:func:`wake_times`) that decide an invocation at
    ``now``: every one that is due, and the earliest future one.

    A monotone :class:`Plan` is read only while a later job could add either:
    its nodes' first use is their earliest (so their wake time is final), and
    once a job starts at s with :math:`s - \max_i L^{\uparrow}_i` in the future
    and no earlier than the earliest future wake time found, no later job can
    add a due wake nor an earlier one. Other plans give :func:`wake_times`.
    ``groups``: the table's :class:`~snficon.core.node_choice.StateGroups`.
    """
    nodes = groups.nodes
    if not (groups.counts[ns.SLEEPING] or groups.counts[ns.SWITCHING_OFF]) or not plan:
        return {}
    asleep = groups.asleep
    if not (isinstance(plan, Plan) and plan.monotone):
        return wake_times(nodes, plan)
    t_on = nodes.t_on_s
    unseen = asleep.copy()  # the asleep nodes no job read so far uses
    left = groups.counts[ns.SLEEPING] + groups.counts[ns.SWITCHING_OFF]
    latest_on = float(t_on[asleep].max())
    soon = now + TIME_TOLERANCE_S  # is_future(when, now) is when > soon
    woken: list[np.ndarray] = []
    times: list[np.ndarray] = []
    earliest_future = math.inf
    for planned in plan:
        start = planned.start
        bound = start - latest_on
        if bound > soon and bound >= earliest_future:
            break
        ids = planned.nodes
        first = ids[unseen[ids]]  # this job's nodes are distinct: each is first used here
        if len(first):
            unseen[first] = False
            left -= len(first)
            when = start - t_on[first]
            woken.append(first)
            times.append(when)
            future = when[when > soon]
            if len(future):
                earliest_future = min(earliest_future, float(future.min()))
        if not left:
            break
    if not woken:
        return {}
    ids = np.concatenate(woken) if len(woken) > 1 else woken[0]
    when = np.concatenate(times) if len(times) > 1 else times[0]
    order = np.argsort(ids, kind="stable")
    return dict(zip(ids[order].tolist(), when[order].tolist(), strict=True))
