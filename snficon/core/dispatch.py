"""Dispatch orders: SNF (paper eq. 4, Definition 3) and FCFS with EASY backfilling.

A dispatch order starts the queued jobs that fit now and plans the waiting
ones (:class:`~snficon.core.parts.DispatchOrder`). SNF starts jobs in
smallest-need-first order and stops at the first that does not fit; its plan
is the sequential PSAS plan (Definition 6). FCFS/EASY starts the queue heads
that fit, reserves the head's planned start and backfills later jobs that do
not delay it (SPEC 5), as the authors' code does; its plan is
:func:`~snficon.core.plan.easy_gap_plan` or, with ``easy_plan="head"``,
:func:`~snficon.core.plan.easy_plan`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from snficon.core import view as ns
from snficon.core.order import fcfs_order, snf_order
from snficon.core.params import EasyParams, NoParams
from snficon.core.parts import Dispatched
from snficon.core.plan import (
    NodeChoice,
    Plan,
    easy_plan,
    lazy_easy_gap_plan,
    lazy_sequential_plan,
    release_map,
    sequential_plan,
    state_groups,
)
from snficon.core.view import ClusterView, JobStart, NodeTable, QueuedJob


class Dispatch:
    """Starts decided during one invocation, with the node table they leave behind."""

    def __init__(self, view: ClusterView) -> None:
        self.now = view.now
        self.nodes = view.nodes
        self.starts: list[JobStart] = []
        # the view's (read-only) arrays until the first start copies them
        self._state = view.nodes.state
        self._release_req = view.nodes.release_req_s
        self._choice: NodeChoice | None = None
        self._idle_count = state_groups(view.nodes).counts[ns.IDLE]
        #: (exclude, idle nodes outside it) of the last exclusion asked, until a start
        self._outside: tuple[np.ndarray, int] | None = None

    def idle(self) -> np.ndarray:
        return np.flatnonzero(self._state == ns.IDLE)

    def _free(self, exclude: np.ndarray | None) -> int:
        """How many idle nodes are not in ``exclude``: the most a start can take."""
        if exclude is None or not len(exclude) or not self._idle_count:
            return self._idle_count
        if self._outside is None or self._outside[0] is not exclude:
            allowed = self._state == ns.IDLE
            allowed[exclude] = False
            self._outside = (exclude, int(np.count_nonzero(allowed)))
        return self._outside[1]

    def start(self, job: QueuedJob, exclude: np.ndarray | None = None) -> bool:
        """Start ``job`` now on idle nodes (not in ``exclude``) if enough are free."""
        if self._free(exclude) < job.res:
            return False
        idle = self._state == ns.IDLE
        idle_release = np.where(idle, self.now, np.inf)
        if self._choice is None:  # the keys of the view's nodes: starts only take idle ones
            self._choice = NodeChoice.of(self.nodes, self.now)
        chosen = self._choice.choose(idle_release, self.now, job.res, exclude)
        if len(chosen) < job.res:
            return False
        if not self.starts:
            self._state, self._release_req = self._state.copy(), self._release_req.copy()
        self._state[chosen] = ns.COMPUTING
        self._release_req[chosen] = self.now + job.req_time_s
        self._idle_count -= len(chosen)
        self._outside = None
        self.starts.append(JobStart(job.job_id, tuple(int(n) for n in chosen)))
        return True

    def table(self) -> NodeTable:
        """The node table once the starts are applied (started nodes are computing)."""
        if not self.starts:
            return self.nodes
        idle_since = np.where(self._state == ns.IDLE, self.nodes.idle_since_s, np.nan)
        return dataclasses.replace(self.nodes, state=self._state.copy(),
                                   release_req_s=self._release_req.copy(),
                                   idle_since_s=idle_since)

    def result(self, waiting: list[QueuedJob]) -> Dispatched:
        """The :class:`Dispatched` record of these starts, ``waiting`` left in the queue."""
        return Dispatched(starts=self.starts, nodes=self.table(), waiting=waiting)


def dispatch_snf(view: ClusterView) -> Dispatched:
    """Start queued jobs in SNF order while they fit; stop at the first that does not."""
    dispatch = Dispatch(view)
    queue = snf_order(view.queue)
    started = 0
    for job in queue:
        if not dispatch.start(job):
            break
        started += 1
    return dispatch.result(queue[started:])


def dispatch_fcfs_easy(view: ClusterView) -> Dispatched:
    """FCFS with EASY backfilling (SPEC 5), as the authors' code does it.

    One pass: start the queue heads that fit; reserve the head's planned
    start and nodes (Definition 6); start each later job, in FCFS order,
    now on idle nodes outside the reservation if enough are free, else on
    any idle nodes (reserved ones included) if it ends, by its request, by
    the head's planned start. If the head cannot be planned (a node it
    needs is held by a job past its request, so its start is unknown),
    nothing is backfilled: any backfill could delay it.

    Passes repeat while one starts a job (the authors' simulator calls its
    scheduler again at the same time after its own starts): the head's
    reservation is then made again with the started jobs' releases, so it
    may move onto nodes that a short backfilled job frees before the
    head's start, and leave idle nodes outside it for a longer job. The
    head's planned start never gets later (a backfill either avoids the
    reservation or ends by its start).
    """
    dispatch = Dispatch(view)
    queue = fcfs_order(view.queue)
    while queue:
        before = len(dispatch.starts)
        queue = _easy_pass(view.now, dispatch, queue)
        if len(dispatch.starts) == before:
            break
    return dispatch.result(queue)


def _easy_pass(now: float, dispatch: Dispatch, queue: list[QueuedJob]) -> list[QueuedJob]:
    """One pass of :func:`dispatch_fcfs_easy` over ``queue`` (FCFS order); returns the
    jobs still waiting."""
    while queue and dispatch.start(queue[0]):
        queue = queue[1:]
    if not queue:
        return queue
    head = queue[0]
    nodes = dispatch.table()
    reservation = sequential_plan(nodes, release_map(nodes, now), [head],
                                  [head.req_time_s], now)
    if not reservation:  # the head's start is unknown: backfilling could delay it
        return queue
    shadow, reserved = reservation[0].start, reservation[0].nodes
    waiting = [head]
    for job in queue[1:]:
        if dispatch.start(job, exclude=reserved):
            continue
        if now + job.req_time_s <= shadow and dispatch.start(job):
            continue
        waiting.append(job)
    return waiting


@dataclass(frozen=True)
class SnfOrder:
    """Smallest-need-first (eq. 4) with the sequential PSAS plan (Definition 6)."""

    params: NoParams = NoParams()

    def dispatch(self, view: ClusterView) -> Dispatched:
        return dispatch_snf(view)

    def plan(self, nodes: NodeTable, release: np.ndarray, jobs: Sequence[QueuedJob],
             durations: Sequence[float], now: float) -> Plan:
        """The sequential plan, each job planned when first read (:class:`Plan`)."""
        return lazy_sequential_plan(nodes, release, jobs, durations, now)


def _lazy_easy_plan(nodes: NodeTable, release: np.ndarray, jobs: Sequence[QueuedJob],
                    durations: Sequence[float], now: float) -> Plan:
    """:func:`easy_plan` as a :class:`Plan`, made whole when first read."""
    return Plan(iter(easy_plan(nodes, release, jobs, durations, now)), monotone=False)


#: FCFS/EASY's future plans, by the ``easy_plan`` option (:class:`EasyParams`).
EASY_PLANS = {"gaps": lazy_easy_gap_plan, "head": _lazy_easy_plan}


@dataclass(frozen=True)
class EasyOrder:
    """FCFS with EASY backfilling, planned as ``params.easy_plan`` says: the authors'
    hole-filling plan (:func:`easy_gap_plan`, default) or the head's reservation alone
    (:func:`easy_plan`)."""

    params: EasyParams = EasyParams()

    def dispatch(self, view: ClusterView) -> Dispatched:
        return dispatch_fcfs_easy(view)

    def plan(self, nodes: NodeTable, release: np.ndarray, jobs: Sequence[QueuedJob],
             durations: Sequence[float], now: float) -> Plan:
        return EASY_PLANS[self.params.easy_plan](nodes, release, jobs, durations, now)
