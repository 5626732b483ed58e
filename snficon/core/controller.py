"""SNF-ICON: the paper's Algorithm 1, one invocation at a time.

:func:`decide_icon` takes the view of the cluster and the controller's memory
(EMA estimates, screen windows, the latest arrival) and returns the decisions
and the next memory. A rejected screen (A(t) = 0) hands the whole invocation
to the SNF+IPM baseline (:func:`decide_snf_ipm`, the same code path). Options
``fallback=False`` (NF) force the ICON path, ``gate=False`` (NG) keep the
arrival-recency gate open.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snficon.core import estimators as est
from snficon.core import view as ns
from snficon.core.baseline import (
    BaselineParams,
    Dispatch,
    decide_snf_ipm,
    dispatch_snf,
    finish_calls,
    plan_wakes,
)
from snficon.core.ipm import nodes_to_switch_off
from snficon.core.params import IconParams
from snficon.core.plan import release_map, sequential_plan
from snficon.core.screen import ScreenResult, SeriesWindow, workload_accepted
from snficon.core.spare import SpareCosts, choose_spare_target, completion_rate
from snficon.core.view import ClusterView, Decisions, NodeTable, Trigger

MODE_ICON = "icon"
MODE_FALLBACK = "fallback"
#: Invocations at which spare planning may happen (the paper's set E).
PLANNING_TRIGGERS = frozenset({Trigger.INITIAL, Trigger.ARRIVAL, Trigger.COMPLETION})


@dataclass(frozen=True)
class IconMemory:
    """What SNF-ICON remembers between invocations (Algorithm 1, line 1)."""

    estimates: est.Estimates
    arrivals: SeriesWindow
    service: SeriesWindow
    last_arrival_s: float | None = None

    @classmethod
    def initial(cls, nb_nodes: int, params: IconParams) -> IconMemory:
        return cls(estimates=est.Estimates.initial(nb_nodes, params),
                   arrivals=SeriesWindow.empty(params), service=SeriesWindow.empty(params))


def observe(view: ClusterView, memory: IconMemory, params: IconParams) -> IconMemory:
    """Consume the new arrivals and completions: EMAs (eq. 17-19, App. A) and screen series."""
    estimates, arrivals, service = memory.estimates, memory.arrivals, memory.service
    last = memory.last_arrival_s
    for job in sorted(view.arrivals, key=lambda j: (j.submit_s, j.order)):
        gap = None if last is None else max(job.submit_s - last, 0.0)
        estimates = est.on_arrival(estimates, gap, job.res, job.req_time_s, params)
        arrivals = arrivals.append_interval(job.submit_s)
        last = job.submit_s
    for done in view.completions:
        estimates = est.on_completion(estimates, done.runtime_s, done.req_time_s, params)
        service = service.append(done.end_s, done.runtime_s)
    return IconMemory(estimates, arrivals, service, last)


def _screen_log(prefix: str, result: ScreenResult) -> dict[str, object]:
    return {f"{prefix}_n": result.n, f"{prefix}_mean": result.mean, f"{prefix}_cv": result.cv,
            f"{prefix}_lag1": result.lag1, f"{prefix}_ks": result.ks,
            f"{prefix}_ks_limit": result.ks_limit, f"{prefix}_accepted": result.accepted}


def active_remaining(view: ClusterView, dispatch: Dispatch, estimates: est.Estimates,
                     params: IconParams) -> list[tuple[tuple[int, ...], float]]:
    """Every computing job (running or started now) with its predicted remaining time.

    Appendix A, eq. 50-51 (a job started now has run 0 s).
    """
    jobs = [(run.nodes, run.req_time_s, view.now - run.start_s) for run in view.running]
    queued = {job.job_id: job for job in view.queue}
    jobs += [(start.nodes, queued[start.job_id].req_time_s, 0.0) for start in dispatch.starts]
    if not jobs:
        return []
    remaining = est.remaining_times(estimates, np.array([j[1] for j in jobs]),
                                    np.array([j[2] for j in jobs]), params)
    return [(ids, float(left)) for (ids, _, _), left in zip(jobs, remaining, strict=True)]


def predicted_releases(nodes: NodeTable, now: float,
                       active: list[tuple[tuple[int, ...], float]]) -> np.ndarray:
    """The ICON release map: computing nodes free at their job's predicted end (eq. 56)."""
    release = release_map(nodes, now)
    for ids, left in active:
        release[list(ids)] = now + left
    return release


def decide_icon(view: ClusterView, memory: IconMemory, params: IconParams,
                p_sleep_w: np.ndarray | SpareCosts) -> tuple[Decisions, IconMemory]:
    """One invocation of SNF-ICON (paper, Algorithm 1).

    ``p_sleep_w``: the nodes' sleep power (W), or the platform's :class:`SpareCosts`.
    """
    memory = observe(view, memory, params)
    arrival = memory.arrivals.screen(view.now, params)
    service = memory.service.screen(view.now, params)
    accepted = workload_accepted(arrival, service, params) or not params.fallback
    log: dict[str, object] = {**_screen_log("arrival", arrival), **_screen_log("service", service)}
    estimates = memory.estimates
    log["lam"] = est.arrival_rate(estimates, params)
    log["mu"] = est.service_rate(estimates, params)
    if not accepted:
        decisions = decide_snf_ipm(view, BaselineParams(timeout=params.timeout))
        decisions.log.update(log, mode=MODE_FALLBACK)
        return decisions, memory

    dispatch, waiting = dispatch_snf(view)
    nodes = dispatch.table()
    active = active_remaining(view, dispatch, estimates, params)
    release = predicted_releases(nodes, view.now, active)
    durations = [est.predicted_duration(estimates, job.req_time_s, params) for job in waiting]
    plan = sequential_plan(nodes, release, waiting, durations, view.now)
    decisions = Decisions(starts=dispatch.starts)
    calls = plan_wakes(nodes, plan, view.now, decisions)

    point = not waiting and view.trigger in PLANNING_TRIGGERS
    gate_open = not params.gate or (memory.last_arrival_s is not None
                                    and view.now - memory.last_arrival_s <= params.t_a_max)
    log.update(mode=MODE_ICON, spare_planning_point=point, gate_open=gate_open)
    spared = False
    if point and gate_open:
        lam_c = completion_rate(np.array([left for _, left in active]), float(log["mu"]),
                                len(active))
        spare = choose_spare_target(nodes, p_sleep_w, view.now, float(log["lam"]), lam_c,
                                    est.request_pmf(estimates), params)
        decisions.switch_on.extend(n for n in spare.wake if n not in decisions.switch_on)
        decisions.switch_off.extend(spare.switch_off)
        log.update(pi_a=spare.pi_a, horizon=spare.horizon, target_x=spare.x, target_w=spare.w,
                   target_e=spare.e, target_j=spare.j)
        spared = True
    elif point and view.completions and params.stale_completion_shutdown:
        released = {n for done in view.completions for n in done.nodes}
        used = {n for p in plan for n in p.nodes.tolist()}
        decisions.switch_off.extend(sorted(
            n for n in released - used
            if nodes.state[n] == ns.IDLE and np.isfinite(nodes.t_off_s[n])))
    if not waiting and not spared:
        off = nodes_to_switch_off(nodes, plan, view.now, params.timeout).tolist()
        decisions.switch_off.extend(n for n in off if n not in decisions.switch_off)
    decisions.switch_off.sort()
    finish_calls(nodes, view.now, params.timeout, decisions, calls)
    log.update(starts=len(decisions.starts), wakes=len(decisions.switch_on),
               shutdowns=len(decisions.switch_off))
    decisions.log.update(log)
    return decisions, memory
