"""IPM: the idle-timeout power manager of the baselines, with PSAS wake planning (SPEC 5).

One invocation, after the dispatch order started what fits: plan the waiting
jobs on the release map of requested times (the order's plan: sequential for
SNF, EASY's for FCFS), wake the sleeping nodes the plan needs when their wake
time (eq. 15-16) has come, switch off the idle nodes whose timer expired
unless the plan needs them back sooner (the keep rule), and ask to be called
back at the next wake time or timer expiry. SNF-ICON's fallback is this
manager with SNF-ICON's timeout.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from snficon.core import view as ns
from snficon.core.clock import due_mask, future_mask, is_due
from snficon.core.diagnostics import Diagnostics
from snficon.core.params import IpmParams
from snficon.core.parts import Dispatched, DispatchOrder, PowerOutcome
from snficon.core.plan import (
    Plan,
    PlannedJob,
    decisive_wake_times,
    empty_plan,
    release_map,
    state_groups,
)
from snficon.core.view import ClusterView, Decisions, NodeTable


def idle_timers(nodes: NodeTable, timeout_s: float) -> tuple[np.ndarray, np.ndarray]:
    """The idle nodes (ascending ids) and when their idle timers expire (``timeout_s``
    after they became idle), read-only; remembered by the (immutable) table for the last
    timeout asked: the expired nodes and the next expiry read them both."""
    cached = nodes.memo.get("idle_timers")
    if cached is not None and cached[0] == timeout_s:
        return cached[1], cached[2]
    ids = state_groups(nodes).idle.nonzero()[0]
    ends = nodes.idle_since_s[ids] + timeout_s
    ids.setflags(write=False)
    ends.setflags(write=False)
    nodes.memo["idle_timers"] = (timeout_s, ids, ends)
    return ids, ends


def expired_idle_nodes(nodes: NodeTable, now: float, timeout_s: float) -> np.ndarray:
    """Idle nodes whose idle timer (``timeout_s`` since they became idle) expired: I_e(t)."""
    ids, ends = idle_timers(nodes, timeout_s)
    return ids[due_mask(ends, now)]


def nodes_to_switch_off(nodes: NodeTable, plan: Sequence[PlannedJob], now: float,
                        timeout_s: float) -> np.ndarray:
    """Expired idle nodes that IPM switches off now.

    A node is kept when a queued job's plan uses it and switching it off and
    on again (``now + T_off + T_on``) would pass that job's planned start.
    A monotone :class:`~snficon.core.plan.Plan` is read only until every expired
    node has its first (earliest) use or a job starts once all of them would be back.
    """
    expired = expired_idle_nodes(nodes, now, timeout_s)
    if not len(expired):
        return expired
    back_at = now + nodes.t_off_s[expired] + nodes.t_on_s[expired]
    needed_by = np.full(nodes.size, np.inf)
    if isinstance(plan, Plan) and plan.monotone:
        last_back = float(np.max(back_at))
        unseen = set(expired.tolist())
        for planned in plan:
            if not unseen or planned.start >= last_back:
                break
            np.minimum.at(needed_by, planned.nodes, planned.start)
            unseen.difference_update(planned.nodes.tolist())
    else:
        for planned in plan:
            np.minimum.at(needed_by, planned.nodes, planned.start)
    return expired[np.isfinite(back_at) & (back_at <= needed_by[expired])]


def next_timer_expiry(nodes: NodeTable, now: float, timeout_s: float,
                      leaving: Sequence[int] = ()) -> float | None:
    """The earliest future idle-timer expiry, when IPM must be called back.

    ``leaving``: idle nodes being switched off now, whose timers no longer count.
    """
    ids, timers = idle_timers(nodes, timeout_s)
    if not len(ids):
        return None
    if len(leaving):
        gone = np.zeros(nodes.size, dtype=bool)
        gone[list(leaving)] = True
        timers = timers[~gone[ids]]
    future = timers[future_mask(timers, now)]
    return float(np.minimum.reduce(future)) if len(future) else None


def plan_wakes(nodes: NodeTable, plan: Sequence[PlannedJob], now: float,
               decisions: Decisions) -> set[float]:
    """Switch on the sleeping nodes whose wake time came (eq. 15-16); return future
    wake times, among them the earliest, when the scheduler must be called back
    (:func:`~snficon.core.plan.decisive_wake_times`: a monotone plan is read only as
    far as it decides)."""
    calls: set[float] = set()
    state = nodes.state
    for node, when in decisive_wake_times(nodes, plan, now).items():
        if is_due(when, now):
            if state[node] == ns.SLEEPING:
                decisions.switch_on.append(node)
        else:
            calls.add(when)
    return calls


def request_end_calls(nodes: NodeTable, now: float, woken: Sequence[int]) -> list[float]:
    r"""The calls the authors' code asks while a node sleeps (SPEC 5, IPM callbacks).

    For every node still asleep after this invocation's wakes (``woken``) and every
    running job whose requested end :math:`e` is ahead: a call at :math:`e - T_{on}`,
    when a node woken then would be ready as the job's request runs out. The job may
    end before, or run past its request, whose nodes then become never free (the
    release map): the call re-plans then, and the plan may wake nodes for the jobs
    behind. Every such call is asked (not just the earliest): one asked for a job
    that ends early still comes, as in the authors' code.
    """
    groups = state_groups(nodes)
    if not groups.counts[ns.SLEEPING] or not groups.counts[ns.COMPUTING]:
        return []
    asleep = groups.sleeping.copy()
    asleep[list(woken)] = False
    if not asleep.any():
        return []
    ends = nodes.release_req_s[groups.computing]
    ends = np.unique(ends[np.isfinite(ends) & future_mask(ends, now)])
    leads = np.unique(nodes.t_on_s[asleep])
    times = (ends[:, None] - leads[None, :]).ravel()
    return sorted(set(times[future_mask(times, now)].tolist()))


def finish_calls(nodes: NodeTable, now: float, timeout_s: float, decisions: Decisions,
                 calls: set[float], extra: Sequence[float] = ()) -> None:
    """Ask to be called at the earliest of ``calls`` and the next idle-timer expiry
    of the nodes that stay idle after this invocation's switch-offs, and at every
    time of ``extra`` (:func:`request_end_calls`)."""
    expiry = next_timer_expiry(nodes, now, timeout_s, decisions.switch_off)
    if expiry is not None:
        calls.add(expiry)
    first = [min(calls)] if calls else []
    decisions.call_at = sorted(set(first).union(extra))


def decide_ipm(view: ClusterView, dispatched: Dispatched, order: DispatchOrder,
               params: IpmParams, **record: Any) -> PowerOutcome:
    """IPM's decisions after the dispatch: PSAS wakes, idle-timeout switch-offs, callbacks.

    The waiting jobs are planned by ``order`` on the release map of requested
    times (SPEC 5), each for its requested time. ``record``: more fields of the
    invocation's :class:`Diagnostics` (SNF-ICON's fallback gives its mode and screens).
    """
    nodes, now = dispatched.nodes, view.now
    waiting = dispatched.waiting
    durations = [job.req_time_s for job in waiting]
    release: np.ndarray | Callable[[], np.ndarray]
    if waiting:
        release = release_map(nodes, now)
        plan = order.plan(nodes, release, waiting, durations, now)
    else:  # nothing to plan (the plan of no job is empty): the map is made if a layer reads it
        release = functools.partial(release_map, nodes, now)
        plan = empty_plan()
    decisions = Decisions(starts=list(dispatched.starts))
    calls = plan_wakes(nodes, plan, now, decisions)
    decisions.switch_off = nodes_to_switch_off(nodes, plan, now, params.timeout).tolist()
    extra = (request_end_calls(nodes, now, decisions.switch_on)
             if params.request_end_calls else [])
    finish_calls(nodes, now, params.timeout, decisions, calls, extra)
    decisions.diagnostics = Diagnostics(starts=len(decisions.starts),
                                        wakes=len(decisions.switch_on),
                                        shutdowns=len(decisions.switch_off),
                                        planned_jobs=len(plan), **record)
    return PowerOutcome(decisions=decisions, plan=plan, release=release, durations=durations)


@dataclass(frozen=True)
class IpmPower:
    """The IPM power manager as a policy part (:func:`decide_ipm`)."""

    params: IpmParams = IpmParams()

    def decide(self, view: ClusterView, dispatched: Dispatched,
               order: DispatchOrder) -> PowerOutcome:
        return decide_ipm(view, dispatched, order, self.params)
