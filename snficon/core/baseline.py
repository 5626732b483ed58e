"""The baselines: SNF+IPM and FCFS/EASY+IPM (PSAS wake planning, idle timeout).

One invocation: start what fits now (SNF with its early stop, or FCFS heads
plus EASY backfilling), plan the remaining queue with the sequential PSAS
plan (requested times as durations), wake the sleeping nodes the plan needs,
switch off the idle nodes whose timer expired (IPM keep rule), and ask to be
called back at the next wake time or timer expiry. SNF-ICON's fallback mode
is exactly :func:`decide_snf_ipm`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from snficon.core import view as ns
from snficon.core.ipm import nodes_to_switch_off
from snficon.core.order import fcfs_order, snf_order
from snficon.core.params import params_from_options
from snficon.core.plan import (
    PlannedJob,
    choose_nodes,
    easy_plan,
    release_map,
    sequential_plan,
    wake_times,
)
from snficon.core.view import ClusterView, Decisions, JobStart, NodeTable, QueuedJob

DEFAULT_TIMEOUT_S = 7200.0
#: A wake time this close to now is now: (now + T_on) - T_on may land one ulp above it.
TIME_TOLERANCE_S = 1e-6


@dataclass(frozen=True)
class BaselineParams:
    """Options of the baselines (pybatsim ``-o`` keys). ``timeout``: IPM idle timeout (s)."""

    timeout: float = DEFAULT_TIMEOUT_S

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> BaselineParams:
        """Build from ``-o`` JSON; an unknown key is an error listing the known ones."""
        return params_from_options(cls, options)


class Dispatch:
    """Starts decided during one invocation, with the node table they leave behind."""

    def __init__(self, view: ClusterView) -> None:
        self.now = view.now
        self.nodes = view.nodes
        self.starts: list[JobStart] = []
        self._state = view.nodes.state.copy()
        self._release_req = view.nodes.release_req_s.copy()

    def idle(self) -> np.ndarray:
        return np.flatnonzero(self._state == ns.IDLE)

    def start(self, job: QueuedJob, exclude: np.ndarray | None = None) -> bool:
        """Start ``job`` now on idle nodes (not in ``exclude``) if enough are free."""
        idle_release = np.where(self._state == ns.IDLE, self.now, np.inf)
        chosen = choose_nodes(self.nodes, idle_release, self.now, job.res, self.now, exclude)
        if len(chosen) < job.res:
            return False
        self._state[chosen] = ns.COMPUTING
        self._release_req[chosen] = self.now + job.req_time_s
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


def dispatch_snf(view: ClusterView) -> tuple[Dispatch, list[QueuedJob]]:
    """Start queued jobs in SNF order while they fit; stop at the first that does not."""
    dispatch = Dispatch(view)
    queue = snf_order(view.queue)
    started = 0
    for job in queue:
        if not dispatch.start(job):
            break
        started += 1
    return dispatch, queue[started:]


def dispatch_fcfs_easy(view: ClusterView) -> tuple[Dispatch, list[QueuedJob]]:
    """FCFS with EASY backfilling (SPEC 5).

    Start the queue heads that fit; reserve the head's planned start and
    nodes; start a later job now if it fits on idle nodes outside the
    reservation, or on reserved nodes only if it ends (by its request)
    before the head's planned start.
    """
    dispatch = Dispatch(view)
    queue = fcfs_order(view.queue)
    while queue and dispatch.start(queue[0]):
        queue.pop(0)
    if not queue:
        return dispatch, queue
    head = queue[0]
    nodes = dispatch.table()
    reservation = sequential_plan(nodes, release_map(nodes, view.now), [head],
                                  [head.req_time_s], view.now)
    shadow = reservation[0].start if reservation else np.inf
    reserved = reservation[0].nodes if reservation else np.empty(0, dtype=np.int64)
    waiting = [head]
    for job in queue[1:]:
        ends_in_time = view.now + job.req_time_s <= shadow
        if not dispatch.start(job, exclude=None if ends_in_time else reserved):
            waiting.append(job)
    return dispatch, waiting


def plan_wakes(nodes: NodeTable, plan: Sequence[PlannedJob], now: float,
               decisions: Decisions) -> set[float]:
    """Switch on the sleeping nodes whose wake time arrived (eq. 15-16); return the
    future wake times, when the scheduler must be called back."""
    calls: set[float] = set()
    for node, when in sorted(wake_times(nodes, plan).items()):
        if when <= now + TIME_TOLERANCE_S:
            if nodes.state[node] == ns.SLEEPING:
                decisions.switch_on.append(node)
        else:
            calls.add(when)
    return calls


def finish_calls(nodes: NodeTable, now: float, timeout_s: float, decisions: Decisions,
                 calls: set[float]) -> None:
    """Ask to be called at the earliest of ``calls`` and the next idle-timer expiry
    of the nodes that stay idle after this invocation's switch-offs."""
    idle = nodes.state == ns.IDLE
    idle[decisions.switch_off] = False
    timers = nodes.idle_since_s[idle] + timeout_s
    future = timers[timers > now]
    if len(future):
        calls.add(float(future.min()))
    decisions.call_at = [min(calls)] if calls else []


def power_decisions(view: ClusterView, dispatch: Dispatch, plan: Sequence[PlannedJob],
                    timeout_s: float) -> Decisions:
    """Wake-ups for the plan, IPM switch-offs and callbacks, after the starts."""
    nodes, now = dispatch.table(), view.now
    decisions = Decisions(starts=dispatch.starts)
    calls = plan_wakes(nodes, plan, now, decisions)
    decisions.switch_off = nodes_to_switch_off(nodes, plan, now, timeout_s).tolist()
    finish_calls(nodes, now, timeout_s, decisions, calls)
    return decisions


def decide_baseline(view: ClusterView, params: BaselineParams, order: str) -> Decisions:
    """One invocation of SNF+IPM (``order="snf"``) or FCFS/EASY+IPM (``order="fcfs"``)."""
    dispatch, waiting = (dispatch_snf(view) if order == "snf" else dispatch_fcfs_easy(view))
    nodes = dispatch.table()
    planner = sequential_plan if order == "snf" else easy_plan
    plan = planner(nodes, release_map(nodes, view.now), waiting,
                   [job.req_time_s for job in waiting], view.now)
    decisions = power_decisions(view, dispatch, plan, params.timeout)
    decisions.log.update(starts=len(decisions.starts), wakes=len(decisions.switch_on),
                         shutdowns=len(decisions.switch_off))
    return decisions


def decide_snf_ipm(view: ClusterView, params: BaselineParams) -> Decisions:
    """SNF+IPM: smallest-need-first dispatch, PSAS wake planning, idle timeout."""
    return decide_baseline(view, params, "snf")


def decide_fcfs_easy_ipm(view: ClusterView, params: BaselineParams) -> Decisions:
    """FCFS/EASY+IPM: the PSAS+IPM baseline of Prasasta et al."""
    return decide_baseline(view, params, "fcfs")
