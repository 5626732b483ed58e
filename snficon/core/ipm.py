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

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from snficon.core import view as ns
from snficon.core.clock import due_mask, future_mask, is_due, is_future
from snficon.core.diagnostics import Diagnostics
from snficon.core.node_choice import StateGroups
from snficon.core.params import IpmParams
from snficon.core.parts import Dispatched, DispatchOrder, PowerOutcome
from snficon.core.plan import Plan, PlannedJob, decisive_wake_times, empty_plan
from snficon.core.view import ClusterView, Decisions, NodeTable


@dataclass(frozen=True)
class IdleTimers:
    """The idle nodes of one table (ascending ids, read-only) and when their idle timers
    expire (``timeout_s`` after they became idle): built once per invocation
    (:func:`idle_timers`), read by the switch-offs and the next callback."""

    ids: np.ndarray
    ends: np.ndarray
    nb_nodes: int


def idle_timers(groups: StateGroups, timeout_s: float) -> IdleTimers:
    """The :class:`IdleTimers` of the table of ``groups`` for an idle timeout ``timeout_s``."""
    ids = groups.idle.nonzero()[0]
    ends = groups.nodes.idle_since_s[ids] + timeout_s
    ids.setflags(write=False)
    ends.setflags(write=False)
    return IdleTimers(ids=ids, ends=ends, nb_nodes=len(groups.idle))


def expired_idle_nodes(timers: IdleTimers, now: float) -> np.ndarray:
    """Idle nodes whose idle timer expired at ``now``: I_e(t)."""
    return timers.ids[due_mask(timers.ends, now)]


def nodes_to_switch_off(nodes: NodeTable, timers: IdleTimers, plan: Sequence[PlannedJob],
                        now: float) -> np.ndarray:
    """Expired idle nodes (``timers``: the idle timers of ``nodes``) that IPM switches
    off now.

    A node is kept when a queued job's plan uses it and switching it off and
    on again (``now + T_off + T_on``) would pass that job's planned start.
    A monotone :class:`~snficon.core.plan.Plan` is read only until every expired
    node has its first (earliest) use or a job starts once all of them would be back.
    """
    expired = expired_idle_nodes(timers, now)
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


def next_timer_expiry(timers: IdleTimers, now: float,
                      leaving: Sequence[int] = ()) -> float | None:
    """The earliest future idle-timer expiry, when IPM must be called back.

    ``leaving``: idle nodes being switched off now, whose timers no longer count.
    """
    ids, ends = timers.ids, timers.ends
    if not len(ids):
        return None
    if len(leaving):
        gone = np.zeros(timers.nb_nodes, dtype=bool)
        gone[list(leaving)] = True
        ends = ends[~gone[ids]]
    future = ends[future_mask(ends, now)]
    return float(np.minimum.reduce(future)) if len(future) else None


def plan_wakes(groups: StateGroups, plan: Sequence[PlannedJob], now: float,
               decisions: Decisions) -> set[float]:
    """Switch on the sleeping nodes whose wake time came (eq. 15-16); return future
    wake times, among them the earliest, when the scheduler must be called back
    (:func:`~snficon.core.plan.decisive_wake_times`: a monotone plan is read only as
    far as it decides)."""
    calls: set[float] = set()
    state = groups.nodes.state
    for node, when in decisive_wake_times(groups, plan, now).items():
        if is_due(when, now):
            if state[node] == ns.SLEEPING:
                decisions.switch_on.append(node)
        else:
            calls.add(when)
    return calls


def request_end_calls(groups: StateGroups, now: float, woken: Sequence[int]) -> list[float]:
    r"""The calls the authors' code asks while a node sleeps (SPEC 5, IPM callbacks).

    For every node still asleep after this invocation's wakes (``woken``) and every
    running job whose requested end :math:`e` is ahead: a call at :math:`e - T_{on}`,
    when a node woken then would be ready as the job's request runs out. The job may
    end before, or run past its request, whose nodes then become never free (the
    release map): the call re-plans then, and the plan may wake nodes for the jobs
    behind. Every such call is asked (not just the earliest): one asked for a job
    that ends early still comes, as in the authors' code.
    """
    if not groups.counts[ns.SLEEPING] or not groups.counts[ns.COMPUTING]:
        return []
    nodes = groups.nodes
    asleep = groups.sleeping
    if len(woken):
        asleep = asleep.copy()
        asleep[list(woken)] = False
    # Python sets of the few distinct values: numpy's unique and outer difference cost
    # more than the arithmetic on a table of tens of nodes, invocation after invocation.
    leads = set(nodes.t_on_s[asleep].tolist())
    if not leads:
        return []
    ends = [end for end in set(nodes.release_req_s[groups.computing].tolist())
            if math.isfinite(end) and is_future(end, now)]
    return sorted({end - lead for end in ends for lead in leads
                   if is_future(end - lead, now)})


def finish_calls(timers: IdleTimers, now: float, decisions: Decisions,
                 calls: set[float], extra: Sequence[float] = ()) -> None:
    """Ask to be called at the earliest of ``calls`` and the next idle-timer expiry
    of the nodes that stay idle after this invocation's switch-offs, and at every
    time of ``extra`` (:func:`request_end_calls`)."""
    expiry = next_timer_expiry(timers, now, decisions.switch_off)
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
    groups, now = dispatched.groups, view.now
    nodes, waiting = groups.nodes, dispatched.waiting
    durations = [job.req_time_s for job in waiting]
    release: np.ndarray | None = None
    plan: Sequence[PlannedJob] = empty_plan()  # no job waits: nothing to plan, no map needed
    if waiting:
        release = dispatched.requested_release(now)
        plan = order.plan(groups, release, waiting, durations, now)
    timers = idle_timers(groups, params.timeout)
    decisions = Decisions(starts=list(dispatched.starts))
    calls = plan_wakes(groups, plan, now, decisions)
    decisions.switch_off = nodes_to_switch_off(nodes, timers, plan, now).tolist()
    extra = (request_end_calls(groups, now, decisions.switch_on)
             if params.request_end_calls else [])
    finish_calls(timers, now, decisions, calls, extra)
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
