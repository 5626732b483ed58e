"""SNF-ICON: the paper's Algorithm 1 as a power manager, one invocation at a time.

:func:`icon_power` takes the view of the cluster after the dispatch order
started what fits, the controller's memory (EMA estimates, screen windows,
the latest arrival) and returns the decisions with the plan behind them, and
the next memory. A rejected screen (A(t) = 0) hands the invocation to IPM
(:func:`~snficon.core.ipm.decide_ipm`, the same code path as the baselines).
Options ``fallback=False`` (NF) force the ICON path, ``gate=False`` (NG) keep
the arrival-recency gate open. The paper's SNF-ICON is this manager under the
SNF order (:func:`decide_icon`); any other dispatch order composes with it.
:class:`IconPower` is the part that keeps the memory between invocations.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from snficon.core import estimators as est
from snficon.core import view as ns
from snficon.core.diagnostics import Diagnostics, EstimatorState, SpareChoice
from snficon.core.dispatch import SnfOrder
from snficon.core.event_horizon import completion_rate
from snficon.core.ipm import (
    decide_ipm,
    finish_calls,
    idle_timers,
    nodes_to_switch_off,
    plan_wakes,
)
from snficon.core.names import PLANNING_TRIGGERS, Mode
from snficon.core.node_choice import StateGroups
from snficon.core.params import IconParams
from snficon.core.parts import Dispatched, DispatchOrder, PowerOutcome
from snficon.core.plan import release_map
from snficon.core.screen import ScreenResult, SeriesWindow, workload_accepted
from snficon.core.spare import (
    EnergyWeight,
    SpareCosts,
    SpareResult,
    choose_spare_target,
)
from snficon.core.view import ClusterView, Decisions, JobStart


@dataclass(frozen=True)
class IconMemory:
    """What SNF-ICON remembers between invocations (Algorithm 1, line 1): the EMAs
    (``estimates``) and the rates and moments derived from them (``state``, eq. 17-19,
    App. A: updated with them), the screen windows, the latest arrival."""

    estimates: est.Estimates
    state: EstimatorState
    arrivals: SeriesWindow
    service: SeriesWindow
    last_arrival_s: float | None = None

    @classmethod
    def initial(cls, nb_nodes: int, params: IconParams) -> IconMemory:
        estimates = est.Estimates.initial(nb_nodes, params)
        return cls(estimates=estimates, state=estimator_state(estimates, params),
                   arrivals=SeriesWindow.empty(params), service=SeriesWindow.empty(params))


def observe(view: ClusterView, memory: IconMemory, params: IconParams) -> IconMemory:
    """Consume the new arrivals and completions: EMAs (eq. 17-19, App. A), the estimator
    state derived from them, and the screen series.

    With neither, the memory itself is returned (it is immutable)."""
    if not view.arrivals and not view.completions:
        return memory
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
    return IconMemory(estimates, estimator_state(estimates, params), arrivals, service, last)


@dataclass(frozen=True)
class ActiveJobs:
    """Every computing job (running, or started now) with its predicted remaining time.

    ``remaining_s``: R_j of each job (Appendix A, eq. 50-51), the running jobs first
    (in ``view.running`` order), then the jobs started now; ``node_job``: for each node,
    the index in ``remaining_s`` of the job computing on it (-1 for none).
    """

    remaining_s: np.ndarray
    node_job: np.ndarray

    def __len__(self) -> int:
        return len(self.remaining_s)


def active_remaining(view: ClusterView, starts: Sequence[JobStart], estimates: est.Estimates,
                     params: IconParams) -> ActiveJobs:
    """Every computing job (running, or in ``starts``: started now) with its predicted
    remaining time.

    Appendix A, eq. 50-51 (a job started now has run 0 s).
    """
    table = ns.running_table(view)
    req, elapsed, node_job = table.req_time_s, view.now - table.start_s, table.node_job
    if starts:
        queued = {job.job_id: job for job in view.queue}
        req = np.concatenate([req, [queued[start.job_id].req_time_s for start in starts]])
        elapsed = np.concatenate([elapsed, np.zeros(len(starts))])
        node_job = node_job.copy()
        for i, start in enumerate(starts, start=len(table.jobs)):
            node_job[list(start.nodes)] = i
    remaining = (est.remaining_times(estimates, req, elapsed, params) if len(req)
                 else np.zeros(0))
    return ActiveJobs(remaining_s=remaining, node_job=node_job)


def predicted_releases(groups: StateGroups, now: float, active: ActiveJobs) -> np.ndarray:
    """The ICON release map: computing nodes free at their job's predicted end (eq. 56);
    ``groups``: the table's :class:`~snficon.core.node_choice.StateGroups`."""
    release = release_map(groups, now)
    if len(active):
        busy = np.flatnonzero(active.node_job >= 0)
        release[busy] = now + active.remaining_s[active.node_job[busy]]
    return release


def screen_reason(arrival: ScreenResult, service: ScreenResult, params: IconParams) -> str:
    """Why A(t) = 0: the failed rules of each series (``"arrival:cv service:n<n_min"``).

    Empty when the window is accepted; the service series is named only when
    eq. 11 requires it.
    """
    parts = [f"arrival:{arrival.reason}"] if not arrival.accepted else []
    if params.require_service_samples and not service.accepted:
        parts.append(f"service:{service.reason}")
    return " ".join(parts)


def estimator_state(estimates: est.Estimates, params: IconParams) -> EstimatorState:
    """The estimates the invocation uses (eq. 17-19, App. A eq. 42-45), for the log."""
    weights = estimates.weights  # (r, w_r) pairs, ascending r, summing to 1 (eq. 19)
    size_mean = None
    if weights:
        sizes, shares = zip(*weights, strict=True)
        # the same sums, term by term in order, without a generator frame per term
        size_mean = sum(map(operator.mul, sizes, shares)) / sum(shares)
    return EstimatorState(
        lam=est.arrival_rate(estimates, params), mu=est.service_rate(estimates, params),
        ratio_mean=estimates.m_y, ratio_sigma=est.sigma_y(estimates, params),
        size_mean=size_mean, size_max=weights[-1][0] if weights else None)


def spare_choice(spare: SpareResult) -> SpareChoice:
    """The log record of a spare-target decision: x*, its costs and its neighbours'."""
    best = int(np.flatnonzero(spare.candidates == spare.x)[0])

    def costs(i: int) -> tuple[float, float, float] | None:
        if not 0 <= i < len(spare.candidates):
            return None
        return float(spare.j_values[i]), float(spare.w_values[i]), float(spare.e_values[i])

    return SpareChoice(pi_a=spare.pi_a, horizon=spare.horizon, x=spare.x, w=spare.w,
                       e=spare.e, j=spare.j, below=costs(best - 1), above=costs(best + 1))


def icon_power(view: ClusterView, dispatched: Dispatched, order: DispatchOrder,
               memory: IconMemory, params: IconParams, costs: SpareCosts,
               energy_weight: EnergyWeight | None = None) -> tuple[PowerOutcome, IconMemory]:
    """One invocation of SNF-ICON's controller after the dispatch (paper, Algorithm 1).

    ``costs``: the platform's constants of the spare search (:class:`SpareCosts`);
    ``energy_weight``: the carbon weight of J(x)'s energy term (None: the paper's J).
    """
    memory = observe(view, memory, params)
    arrival, arrivals = memory.arrivals.screened(view.now, params)
    service, served = memory.service.screened(view.now, params)
    if arrivals is not memory.arrivals or served is not memory.service:
        memory = IconMemory(memory.estimates, memory.state, arrivals, served,
                            memory.last_arrival_s)
    accepted = workload_accepted(arrival, service, params) or not params.fallback
    estimates = memory.estimates
    state = memory.state
    record = {"arrival": arrival, "service": service, "estimates": state,
              "screen_reason": screen_reason(arrival, service, params)}
    if not accepted:
        return decide_ipm(view, dispatched, order, params.ipm, mode=Mode.FALLBACK,
                          **record), memory

    groups, waiting, now = dispatched.groups, dispatched.waiting, view.now
    nodes = groups.nodes
    active = active_remaining(view, dispatched.starts, estimates, params)
    durations = [est.predicted_duration(estimates, job.req_time_s, params) for job in waiting]
    release, plan = None, []  # no job waits: the plan of none is empty, made on no map
    if waiting:
        release = predicted_releases(groups, now, active)
        plan = order.plan(groups, release, waiting, durations, now)
    timers = idle_timers(groups, params.timeout)
    decisions = Decisions(starts=list(dispatched.starts))
    calls = plan_wakes(groups, plan, now, decisions)

    point = not waiting and view.trigger in PLANNING_TRIGGERS
    gate_open = not params.gate or (memory.last_arrival_s is not None
                                    and now - memory.last_arrival_s <= params.t_a_max)
    choice = None
    if point and gate_open:
        lam_c = completion_rate(active.remaining_s, state.mu, len(active))
        spare = choose_spare_target(nodes, costs, now, state.lam, lam_c,
                                    est.request_pmf(estimates), params,
                                    energy_weight=energy_weight, groups=groups)
        decisions.switch_on.extend(n for n in spare.wake if n not in decisions.switch_on)
        decisions.switch_off.extend(spare.switch_off)
        choice = spare_choice(spare)
    elif point and view.completions and params.stale_completion_shutdown:
        released = {n for done in view.completions for n in done.nodes}
        used = {n for p in plan for n in p.nodes.tolist()}
        decisions.switch_off.extend(sorted(
            n for n in released - used
            if nodes.state[n] == ns.IDLE and np.isfinite(nodes.t_off_s[n])))
    if not waiting and choice is None:
        off = nodes_to_switch_off(nodes, timers, plan, now).tolist()
        decisions.switch_off.extend(n for n in off if n not in decisions.switch_off)
    decisions.switch_off.sort()
    finish_calls(timers, now, decisions, calls)
    decisions.diagnostics = Diagnostics(
        starts=len(decisions.starts), wakes=len(decisions.switch_on),
        shutdowns=len(decisions.switch_off), mode=Mode.ICON, spare_planning_point=point,
        gate_open=gate_open, spare=choice, planned_jobs=len(plan), **record)
    return PowerOutcome(decisions=decisions, plan=plan, release=release,
                        durations=durations), memory


def decide_icon(view: ClusterView, memory: IconMemory, params: IconParams,
                p_sleep_w: np.ndarray,
                order: DispatchOrder | None = None) -> tuple[Decisions, IconMemory]:
    """One whole invocation of SNF-ICON (Algorithm 1): dispatch by ``order`` (SNF by
    default), then :func:`icon_power`."""
    order = SnfOrder() if order is None else order
    outcome, memory = icon_power(view, order.dispatch(view), order, memory, params,
                                 SpareCosts.of(view.nodes, p_sleep_w, params))
    return outcome.decisions, memory


class IconPower:
    """SNF-ICON's controller as a power-manager part: holds its memory between invocations.

    The platform's constants of the spare search (:class:`SpareCosts`) are
    built from the first view's node arrays.
    """

    def __init__(self, params: IconParams, p_sleep_w: np.ndarray,
                 energy_weight: EnergyWeight | None = None) -> None:
        self.params = params
        self.energy_weight = energy_weight
        self.p_sleep_w = np.asarray(p_sleep_w, dtype=float)
        self.memory = IconMemory.initial(len(self.p_sleep_w), params)
        self.costs: SpareCosts | None = None

    def decide(self, view: ClusterView, dispatched: Dispatched,
               order: DispatchOrder) -> PowerOutcome:
        if self.costs is None:
            self.costs = SpareCosts.of(view.nodes, self.p_sleep_w, self.params)
        outcome, self.memory = icon_power(view, dispatched, order, self.memory, self.params,
                                          self.costs, self.energy_weight)
        return outcome
