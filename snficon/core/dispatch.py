"""Dispatch orders: SNF (paper eq. 4, Definition 3) and FCFS with EASY backfilling.

A dispatch order starts the queued jobs that fit now and plans the waiting
ones (:class:`~snficon.core.parts.DispatchOrder`). SNF starts jobs in
smallest-need-first order and stops at the first that does not fit; its plan
is the sequential PSAS plan (Definition 6). FCFS/EASY starts the queue heads
that fit, reserves the head's planned start and backfills later jobs that do
not delay it (SPEC 5), as the authors' code does; its plan is
:func:`~snficon.core.easy_plan.easy_gap_plan` or, with ``easy_plan="head"``,
:func:`~snficon.core.easy_plan.easy_plan`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from snficon.core import view as ns
from snficon.core.easy_plan import easy_gap_plan, easy_plan
from snficon.core.node_choice import NodeChoice, StateGroups, state_groups
from snficon.core.order import fcfs_order, snf_order
from snficon.core.params import EasyParams, NoParams
from snficon.core.parts import Dispatched
from snficon.core.plan import Plan, PlannedJob, plan_in_sequence, release_map, sequential_plan
from snficon.core.view import ClusterView, JobStart, NodeTable, QueuedJob


class Dispatch:
    """Starts decided during one invocation, with the node table they leave behind.

    ``groups``: the view's :class:`StateGroups`, built once for the invocation; the
    node state as the starts so far leave it is kept in ``state`` and ``idle`` (copies
    made at the first start).
    """

    def __init__(self, view: ClusterView) -> None:
        self.now = view.now
        self.nodes = view.nodes
        self.groups = state_groups(view)
        self.starts: list[JobStart] = []
        # the view's (read-only) arrays until the first start copies them
        self._state = view.nodes.state
        self._release_req = view.nodes.release_req_s
        self._idle = self.groups.idle
        self._idle_count = self.groups.counts[ns.IDLE]
        #: the view's idle nodes in the order starts take them (see :func:`idle_order`),
        #: sorted at the first start that fits (many invocations start nothing)
        self._order: np.ndarray | None = None
        #: the nodes started so far, one array per start
        self._started: list[np.ndarray] = []

    def _free(self, exclude: np.ndarray | None) -> int:
        """How many idle nodes are not in ``exclude`` (distinct ids): the most a start
        can take."""
        if exclude is None or not len(exclude):
            return self._idle_count
        return self._idle_count - int(np.count_nonzero(self._idle[exclude]))

    def start(self, job: QueuedJob, exclude: np.ndarray | None = None) -> bool:
        """Start ``job`` now on idle nodes (not in ``exclude``) if enough are free."""
        if self._free(exclude) < job.res:
            return False
        if self._order is None:
            self._order = idle_order(self.groups)
        order = self._order
        if self.starts:
            order = order[self._idle[order]]
        if exclude is not None and len(exclude):
            allowed = np.ones(len(self._state), dtype=bool)
            allowed[exclude] = False
            order = order[allowed[order]]
        chosen = order[:job.res]
        if len(chosen) < job.res:
            return False
        if not self.starts:
            self._state, self._release_req = self._state.copy(), self._release_req.copy()
            self._idle = self._idle.copy()
        self._state[chosen] = ns.COMPUTING
        self._idle[chosen] = False
        self._release_req[chosen] = self.now + job.req_time_s
        self._idle_count -= len(chosen)
        self._started.append(chosen)
        self.starts.append(JobStart(job.job_id, tuple(chosen.tolist())))
        return True

    def table(self) -> StateGroups:
        """The groups of the node table once the starts so far are applied (started nodes
        are computing): a new table, its groups found from the view's
        (:meth:`StateGroups.after_starts`)."""
        if not self.starts:
            return self.groups
        nodes = self.nodes
        idle_since = np.where(self._state == ns.IDLE, nodes.idle_since_s, np.nan)
        after = NodeTable(state=self._state.copy(), idle_since_s=idle_since,
                          transition_end_s=nodes.transition_end_s,
                          release_req_s=self._release_req.copy(), p_idle_w=nodes.p_idle_w,
                          t_on_s=nodes.t_on_s, t_off_s=nodes.t_off_s, e_on_j=nodes.e_on_j,
                          e_off_j=nodes.e_off_j)
        started = self._started[0] if len(self._started) == 1 else np.concatenate(self._started)
        return self.groups.after_starts(after, started)

    def result(self, waiting: list[QueuedJob], groups: StateGroups,
               release: np.ndarray | None = None) -> Dispatched:
        """The :class:`Dispatched` record of these starts, ``waiting`` left in the queue;
        ``groups``: those of the table the starts leave (:meth:`table`); ``release``: its
        release map of requested times, when the order made it (read-only)."""
        return Dispatched(starts=self.starts, groups=groups, waiting=waiting, release=release)


def idle_order(groups: StateGroups) -> np.ndarray:
    """The idle nodes of the table of ``groups`` in the order of
    :func:`~snficon.core.node_choice.choose_nodes` for a start now: every one is
    released now, so its keys (no energy before the start, the idle rank, its timer, its
    id) do not change during the invocation, and the nodes a start takes are the first
    still idle (and not excluded) of this order (sorting a subset by a total order keeps
    their order in the whole)."""
    idle = groups.idle.nonzero()[0]
    # the node choice's keys for a start now: no energy before it, the same rank; then
    # the longest remaining timer (the latest idle_since); the ids ascending break ties
    return idle[np.argsort(-groups.nodes.idle_since_s[idle], kind="stable")]


def no_start(view: ClusterView) -> Dispatched:
    """The dispatch of an empty queue: no start, the view's table and its groups."""
    return Dispatched(starts=[], groups=state_groups(view), waiting=[])


def dispatch_snf(view: ClusterView) -> Dispatched:
    """Start queued jobs in SNF order while they fit; stop at the first that does not."""
    if not view.queue:
        return no_start(view)
    dispatch = Dispatch(view)
    queue = snf_order(view.queue)
    started = 0
    for job in queue:
        if not dispatch.start(job):
            break
        started += 1
    return dispatch.result(queue[started:], dispatch.table())


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
    reservation or ends by its start). A pass that backfilled nothing ends
    them: its reservation was made after its head starts, and the next pass
    would start no head (none fitted, and nothing was released), make the
    same reservation on the same table and fail the same backfills.
    """
    if not view.queue:
        return no_start(view)
    dispatch = Dispatch(view)
    queue, after = _easy_pass(view.now, dispatch, fcfs_order(view.queue))
    while queue and after is None:  # the pass backfilled a job: reserve again
        queue, after = _easy_pass(view.now, dispatch, queue)
    if after is None:
        return dispatch.result(queue, dispatch.table())
    return dispatch.result(queue, *after)


def _easy_pass(now: float, dispatch: Dispatch, queue: list[QueuedJob],
               ) -> tuple[list[QueuedJob], tuple[StateGroups, np.ndarray] | None]:
    """One pass of :func:`dispatch_fcfs_easy` over ``queue`` (FCFS order); returns the
    jobs still waiting, and the groups and release map of requested times of the table
    the pass leaves when it made them for the head's reservation (None when it started
    a job after making them, or made none)."""
    while queue and dispatch.start(queue[0]):
        queue = queue[1:]
    if not queue:
        return queue, None
    head = queue[0]
    groups = dispatch.table()
    release = release_map(groups, now)
    release.setflags(write=False)
    reservation = head_reservation(groups, release, head, now)
    if reservation is None:  # the head's start is unknown: backfilling could delay it
        return queue, (groups, release)
    shadow, reserved = reservation.start, reservation.nodes
    waiting = [head]
    started = len(dispatch.starts)
    for job in queue[1:]:
        if dispatch.start(job, exclude=reserved):
            continue
        if now + job.req_time_s <= shadow and dispatch.start(job):
            continue
        waiting.append(job)
    return waiting, (groups, release) if len(dispatch.starts) == started else None


def head_reservation(groups: StateGroups, release: np.ndarray, head: QueuedJob,
                     now: float) -> PlannedJob | None:
    """The queue head's reservation: its planned start and nodes as the first job of the
    sequential plan (Definition 6) on ``release``, the release map of requested times of
    the table of ``groups`` (SPEC 5; not changed); None when it cannot be planned."""
    planned = plan_in_sequence(NodeChoice.of(groups, now), release.copy(), [head],
                               [head.req_time_s])
    return next(planned, None)


@dataclass(frozen=True)
class SnfOrder:
    """Smallest-need-first (eq. 4) with the sequential PSAS plan (Definition 6)."""

    params: NoParams = NoParams()

    def dispatch(self, view: ClusterView) -> Dispatched:
        return dispatch_snf(view)

    def plan(self, groups: StateGroups, release: np.ndarray, jobs: Sequence[QueuedJob],
             durations: Sequence[float], now: float) -> Plan:
        """The sequential plan (:func:`~snficon.core.plan.sequential_plan`)."""
        return sequential_plan(groups, release, jobs, durations, now)


#: FCFS/EASY's future plans, by the ``easy_plan`` option (:class:`EasyParams`).
EASY_PLANS = {"gaps": easy_gap_plan, "head": easy_plan}


@dataclass(frozen=True)
class EasyOrder:
    """FCFS with EASY backfilling, planned as ``params.easy_plan`` says: the authors'
    hole-filling plan (:func:`~snficon.core.easy_plan.easy_gap_plan`, default) or the
    head's reservation alone (:func:`~snficon.core.easy_plan.easy_plan`)."""

    params: EasyParams = EasyParams()

    def dispatch(self, view: ClusterView) -> Dispatched:
        return dispatch_fcfs_easy(view)

    def plan(self, groups: StateGroups, release: np.ndarray, jobs: Sequence[QueuedJob],
             durations: Sequence[float], now: float) -> Plan:
        return EASY_PLANS[self.params.easy_plan](groups, release, jobs, durations, now)
