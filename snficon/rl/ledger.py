"""What the nodes spend between two invocations, and the running totals the observation reads.

Between two scheduler invocations nothing the scheduler decides changes: jobs
start only at invocations, and every job end and every acknowledged switch is
itself an invocation. So from the view at ``t1`` and the decisions taken
then, each node's state over ``[t1, t2)`` is known: the state it was left in
(:func:`held_nodes`), except that a transition may end inside the interval
(a machine of a switch request finishes before the request is acknowledged
on a heterogeneous platform), after which the node is idle (switched on) or
asleep (switched off). :func:`interval_usage` integrates that: the wasted
energy of each node (energy drawn while not computing, the paper's EW and
SPEC 6's wasted energy) and its time spent switching. :class:`NodeHistory`
keeps the totals since time 0 that the Budiarjo observation carries (the
authors' features f4, f10, f11) and the recent arrivals (f2).

Powers come from the platform's :class:`~snficon.platform.model.PowerModel`
(the core's :class:`~snficon.core.view.NodeTable` has no sleep power).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from snficon.core import view as ns
from snficon.core.parts import Dispatched
from snficon.core.view import ClusterView, Decisions, JobStart, NodeTable, RunningJob
from snficon.platform.model import PowerModel


def after_starts(view: ClusterView, starts: Iterable[JobStart]) -> ClusterView:
    """The view once ``starts`` are applied: their jobs run from ``view.now``, nodes computing.

    This is the cluster as a power manager sees it after the dispatch order
    (the started jobs leave the queue, join the running jobs, and their nodes
    are computing until start + requested time). Starts of jobs not in the
    queue are ignored; a view with no starts is returned as it is.
    """
    queued = {job.job_id: job for job in view.queue}
    starts = [start for start in starts if start.job_id in queued]
    if not starts:
        return view
    table = view.nodes
    state = table.state.copy()
    release = table.release_req_s.copy()
    idle_since = table.idle_since_s.copy()
    running = list(view.running)
    for start in starts:
        job = queued[start.job_id]
        nodes = list(start.nodes)
        state[nodes] = ns.COMPUTING
        release[nodes] = view.now + job.req_time_s
        idle_since[nodes] = np.nan
        running.append(RunningJob(job.job_id, tuple(start.nodes), view.now, job.req_time_s))
    started = {start.job_id for start in starts}
    nodes = dataclasses.replace(table, state=state, release_req_s=release,
                                idle_since_s=idle_since)
    return dataclasses.replace(view, nodes=nodes, running=tuple(running),
                               queue=tuple(j for j in view.queue if j.job_id not in started))


def power_view(view: ClusterView, dispatched: Dispatched) -> ClusterView:
    """What a power manager part sees (``decide(view, dispatched, order)``), as one view:
    the dispatch order's node table and waiting jobs, the started jobs running."""
    started = after_starts(view, dispatched.starts)
    return dataclasses.replace(started, nodes=dispatched.nodes,
                               queue=tuple(dispatched.waiting))


def power_model_of(nodes: NodeTable, p_sleep_w: np.ndarray) -> PowerModel:
    """The power model of a node table and the platform's sleep powers (what a policy part
    is built with): switch powers are E_on / T_on and E_off / T_off; busy power, which
    wasted energy never uses, is unknown (``nan``)."""
    can_sleep = np.isfinite(nodes.t_on_s) & np.isfinite(nodes.t_off_s)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_on = np.where(can_sleep, nodes.e_on_j / nodes.t_on_s, 0.0)
        p_off = np.where(can_sleep, nodes.e_off_j / nodes.t_off_s, 0.0)
    return PowerModel(p_idle_w=np.asarray(nodes.p_idle_w, dtype=float),
                      p_busy_w=np.full(nodes.size, np.nan),
                      p_sleep_w=np.asarray(p_sleep_w, dtype=float),
                      t_off_s=np.asarray(nodes.t_off_s, dtype=float), p_off_w=p_off,
                      t_on_s=np.asarray(nodes.t_on_s, dtype=float), p_on_w=p_on,
                      can_sleep=can_sleep)


@dataclass(frozen=True)
class HeldNodes:
    """The state each node is left in at ``now`` (NodeState codes) and, for a switching
    node, when its transition ends (s; ``nan`` otherwise)."""

    now: float
    state: np.ndarray
    transition_end_s: np.ndarray


def held_nodes(view: ClusterView, decisions: Decisions, power: PowerModel) -> HeldNodes:
    """The nodes' states from ``view.now`` on, once ``decisions`` are applied.

    Started jobs' nodes compute; switched-on nodes switch on for T_on and
    switched-off nodes switch off for T_off (``power``), from ``view.now``.
    """
    nodes = after_starts(view, decisions.starts).nodes
    state = nodes.state.copy()
    end = nodes.transition_end_s.copy()
    for ids, code, duration in ((decisions.switch_on, ns.SWITCHING_ON, power.t_on_s),
                                (decisions.switch_off, ns.SWITCHING_OFF, power.t_off_s)):
        if ids:
            index = np.asarray(ids, dtype=np.int64)
            state[index] = code
            end[index] = view.now + duration[index]
    return HeldNodes(now=view.now, state=state, transition_end_s=end)


@dataclass(frozen=True)
class IntervalUsage:
    """Per node over ``[start_s, end_s)``: wasted energy (J) and time switching (s)."""

    start_s: float
    end_s: float
    wasted_j: np.ndarray
    switching_s: np.ndarray

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


def max_noncompute_power_w(power: PowerModel) -> np.ndarray:
    """Each node's largest power while not computing: max(idle, sleep, switch-on, switch-off) (W).

    The authors' reward divides a node's wasted energy by this power times
    the interval, so a node idle or switching the whole interval counts 1.
    """
    return np.maximum.reduce([power.p_idle_w, power.p_sleep_w, power.p_on_w, power.p_off_w])


def interval_usage(held: HeldNodes, end_s: float, power: PowerModel) -> IntervalUsage:
    r"""Wasted energy and switching time of every node over ``[held.now, end_s)``.

    .. math:: E^{w}_i = \int_{t_1}^{t_2} P_i(t)\,[\text{node } i \text{ not computing}]\,dt

    A computing node wastes nothing; an idle node draws its idle power, a
    sleeping one its sleep power; a node switching on (off) draws the
    switch-on (off) power until its transition ends, then the idle (sleep)
    power.
    """
    start = held.now
    duration = max(end_s - start, 0.0)
    state = held.state
    wasted = np.zeros(len(state))
    switching = np.zeros(len(state))
    wasted[state == ns.IDLE] = power.p_idle_w[state == ns.IDLE] * duration
    wasted[state == ns.SLEEPING] = power.p_sleep_w[state == ns.SLEEPING] * duration
    for code, moving_w, after_w in ((ns.SWITCHING_ON, power.p_on_w, power.p_idle_w),
                                    (ns.SWITCHING_OFF, power.p_off_w, power.p_sleep_w)):
        moving = state == code
        if moving.any():
            left = np.clip(held.transition_end_s[moving] - start, 0.0, duration)
            switching[moving] = left
            wasted[moving] = moving_w[moving] * left + after_w[moving] * (duration - left)
    return IntervalUsage(start_s=start, end_s=start + duration, wasted_j=wasted,
                         switching_s=switching)


@dataclass
class NodeHistory:
    """Running totals since time 0 and the recent arrivals (what the observation remembers).

    ``max_power_w``: each node's largest non-computing power
    (:func:`max_noncompute_power_w`), the scale of the wasted-energy shares.
    ``wasted_j`` and ``switching_s`` per node, summed from the
    :class:`IntervalUsage` of every interval; ``elapsed_s`` the time covered;
    ``arrivals`` the submission times seen in the last ``arrival_window_s``.
    """

    max_power_w: np.ndarray
    arrival_window_s: float = 3600.0
    wasted_j: np.ndarray = field(init=False)
    switching_s: np.ndarray = field(init=False)
    elapsed_s: float = field(default=0.0, init=False)
    arrivals: deque[float] = field(default_factory=deque, init=False)

    def __post_init__(self) -> None:
        self.max_power_w = np.asarray(self.max_power_w, dtype=np.float64)
        self.wasted_j = np.zeros(len(self.max_power_w))
        self.switching_s = np.zeros(len(self.max_power_w))

    @classmethod
    def for_power(cls, power: PowerModel, arrival_window_s: float = 3600.0) -> NodeHistory:
        """An empty history for the nodes of ``power``."""
        return cls(max_noncompute_power_w(power), arrival_window_s)

    def add(self, usage: IntervalUsage) -> None:
        """Account one interval (intervals are added in time order, without overlap)."""
        self.wasted_j += usage.wasted_j
        self.switching_s += usage.switching_s
        self.elapsed_s += usage.duration_s

    def note_arrivals(self, view: ClusterView) -> None:
        """Remember ``view.arrivals`` and forget arrivals older than the window."""
        self.arrivals.extend(job.submit_s for job in view.arrivals)
        horizon = view.now - self.arrival_window_s
        while self.arrivals and self.arrivals[0] <= horizon:
            self.arrivals.popleft()

    def recent_arrivals(self, now: float) -> int:
        """Arrivals in ``(now - window, now]`` (the authors' f2 times the window)."""
        horizon = now - self.arrival_window_s
        return sum(horizon < t <= now for t in self.arrivals)

    def wasted_share(self) -> np.ndarray:
        """Per node: wasted energy / (max non-computing power x elapsed), in [0, 1]."""
        if self.elapsed_s <= 0:
            return np.zeros(len(self.wasted_j))
        return np.clip(self.wasted_j / (self.max_power_w * self.elapsed_s), 0.0, 1.0)

    def total_wasted_share(self) -> float:
        """The cluster's wasted energy / (sum of max non-computing powers x elapsed)."""
        if self.elapsed_s <= 0:
            return 0.0
        return min(float(self.wasted_j.sum() / (self.max_power_w.sum() * self.elapsed_s)), 1.0)

    def switching_share(self) -> np.ndarray:
        """Per node: time spent switching / elapsed, in [0, 1]."""
        if self.elapsed_s <= 0:
            return np.zeros(len(self.switching_s))
        return np.clip(self.switching_s / self.elapsed_s, 0.0, 1.0)
