r"""COAST and its per-job baselines as policy layers: carbon-aware start times, realised.

Feng et al.'s COAST is an advisory layer in front of the scheduler: job
intents are collected in 5-min micro-batches, each flexible job gets a
target start over a 48-h rolling horizon of 30-min slots (the congestion
game of :mod:`snficon.carbon.game`, or a per-job baseline), and the paper
assumes every job starts at its target. Here the layer holds the job until
its target and then hands it to the dispatch order, which may still make it
wait for nodes: the *realised* start.

Three layers, one per method of :class:`~snficon.carbon.coast.Advisor`
(``coast``, ``carbon-greedy``, ``carbon-wait``: carbon plus waiting);
COAST's Observed baseline is the policy without a layer. At each invocation
``admit``:

1. solves the micro-batches that closed (each decided at its close, so the
   targets are exactly the idealised replay's,
   :func:`snficon.carbon.online.plan_trained`);
2. submits the new arrivals: the job model is the workload's ``flexible``,
   ``max_delay`` and ``deadline`` fields (``snficon workload flex``), the
   requested time and nodes x ``coast_busy_w`` x requested time as energy
   estimate; an inflexible job, a job arriving in the training window, and
   one whose latest start (min(arrival + max delay, deadline - request))
   comes before its batch closes go straight through;
3. hides every held job from the order and the power manager until its
   target (a target never lies past the job's latest start: the layer never
   holds a job past its deadline or maximum delay), and shows a job released
   at time t as *submitted* at t (``submit_s`` = t, its arrival rank kept):
   the advisor's target turned into a submission, as a user following the
   advice would do; SNF-ICON's estimators see its arrival then.

``amend`` asks to be called at the next batch close or target start.

**Normalisers** are frozen from a training window, as the paper does, taken
from the run's own past (:class:`~snficon.carbon.online.TrainedAdvisor`):
the first ``coast_train_jobs`` arrivals, not shifted; or given as options
(``coast_norm_carbon_kg`` and ``coast_norm_load`` both > 0). The energy
estimate's busy power cancels in the game (carbon enters as C_j / C-bar,
both proportional to it); it matters only for the kg the advisor reports.

**Forecast** (``coast_forecast_sd`` > 0): the advisor scores candidates on
the signal times max(0, 1 + sd z), z seeded per batch
(:class:`~snficon.carbon.coast.NoisyForecast`); the run is accounted on the
true signal.
"""

from __future__ import annotations

import dataclasses
import heapq
from dataclasses import dataclass

import numpy as np

from snficon.carbon.coast import CoastParams, FlexJob, NoisyForecast
from snficon.carbon.game import Normalisers
from snficon.carbon.mapping import MappedSignal
from snficon.carbon.online import TrainedAdvisor
from snficon.carbon.signal import FILL_RULES
from snficon.core.carbon_signal import NO_SIGNAL, SIGNAL_FIRST, load_signal
from snficon.core.clock import TIME_TOLERANCE_S, is_due
from snficon.core.params import option
from snficon.core.parts import Dispatched, DispatchOrder, PowerOutcome
from snficon.core.view import ClusterView, QueuedJob

#: The layers' names and the advisor method each one runs.
LAYER_METHODS = {"coast": "coast", "carbon-greedy": "carbon-greedy",
                 "carbon-wait": "carbon-waiting"}


@dataclass(frozen=True)
class CarbonLayerParams:
    """Options of the start-time advisor layers (all start with ``coast_``; times in s).

    ``coast_alpha``, ``coast_beta``, ``coast_gamma``: COAST's weights of
    normalised carbon, waiting and congestion (the paper's 4, 1, 5e-4);
    ``coast_psi``: the exponent q of Psi(l) = l^q (convex, >= 1).
    ``coast_batch_s``, ``coast_slot_s``, ``coast_horizon_s``: micro-batch
    window, slot length, rolling horizon. ``coast_train_jobs``: arrivals of
    the training window; ``coast_norm_carbon_kg``, ``coast_norm_load``: the
    normalisers C-bar and L-bar given instead (both > 0; 0: trained);
    ``coast_norm_wait_s``: W-bar. ``coast_busy_w``: one node's busy power of
    the energy estimate (W). ``coast_forecast_sd``, ``coast_forecast_seed``:
    relative noise of the forecast and its seed (0: the true signal).
    ``coast_signal``, ``coast_start``, ``coast_fill``, ``coast_wrap``: the
    carbon signal (:mod:`snficon.core.carbon_signal`; ``none`` and ``first``:
    filled in by ``snficon run --carbon`` or the campaign's carbon axis).
    """

    coast_alpha: float = option(4.0, low=0.0)
    coast_beta: float = option(1.0, low=0.0)
    coast_gamma: float = option(5e-4, low=0.0)
    coast_psi: float = option(2.0, low=1.0)
    coast_batch_s: float = option(300.0, low=0.0, low_open=True)
    coast_slot_s: float = option(1800.0, low=0.0, low_open=True)
    coast_horizon_s: float = option(48 * 3600.0, low=0.0, low_open=True)
    coast_train_jobs: int = option(300, low=1)
    coast_norm_carbon_kg: float = option(0.0, low=0.0)
    coast_norm_load: float = option(0.0, low=0.0)
    coast_norm_wait_s: float = option(3600.0, low=0.0, low_open=True)
    coast_busy_w: float = option(2100.0, low=0.0, low_open=True)
    coast_forecast_sd: float = option(0.0, low=0.0)
    coast_forecast_seed: int = option(0, low=0)
    coast_signal: str = option(NO_SIGNAL)
    coast_start: str = option(SIGNAL_FIRST)
    coast_fill: str = option("linear", choices=FILL_RULES)
    coast_wrap: bool = option(True)

    def advisor_params(self, method: str) -> CoastParams:
        """The advisor's parameters for ``method`` (slots from simulated t = 0)."""
        return CoastParams(method=method, alpha=self.coast_alpha, beta=self.coast_beta,
                           gamma=self.coast_gamma, psi_exponent=self.coast_psi,
                           batch_s=self.coast_batch_s, slot_s=self.coast_slot_s,
                           horizon_s=self.coast_horizon_s)

    def normalisers(self) -> Normalisers | None:
        """The normalisers given as options, or None (trained)."""
        if self.coast_norm_carbon_kg > 0 and self.coast_norm_load > 0:
            return Normalisers(self.coast_norm_carbon_kg, self.coast_norm_wait_s,
                               self.coast_norm_load)
        return None

    def signal(self, who: str) -> MappedSignal:
        """The carbon signal these options name, read and mapped (InputError without one)."""
        return load_signal(who, "coast_", self.coast_signal, self.coast_start, self.coast_fill,
                           self.coast_wrap)


def trained_advisor(params: CarbonLayerParams, method: str,
                    intensity: MappedSignal) -> TrainedAdvisor:
    """The advisor a layer runs (and the idealised replay of the same run)."""
    forecast = (NoisyForecast(intensity, params.coast_forecast_sd, params.coast_forecast_seed)
                if params.coast_forecast_sd > 0 else None)
    return TrainedAdvisor(params.advisor_params(method), intensity, params.coast_train_jobs,
                          params.coast_norm_wait_s, params.normalisers(), forecast)


def flex_job(job: QueuedJob, busy_w: float) -> FlexJob:
    """A queued job as COAST models it (its workload fields; InputError naming a bad one)."""
    return FlexJob.from_fields(job.job_id, job.submit_s, job.res, job.req_time_s, job.extra,
                               busy_w)


class CarbonLayer:
    """A start-time advisor as a policy part (:class:`~snficon.core.parts.Layer`).

    ``releases`` maps each job the layer held to the time it let it go (for
    checks: never after the job's latest start).
    """

    def __init__(self, params: CarbonLayerParams, method: str, intensity: MappedSignal) -> None:
        self.params = params
        self.advisor = trained_advisor(params, method, intensity)
        self.held: dict[str, QueuedJob] = {}
        self.shown: dict[str, QueuedJob] = {}  # released, waiting: as the parts see them
        self.releases: dict[str, float] = {}
        self._due: list[tuple[float, str]] = []  # (target, job id) of held jobs with a target

    # ------------------------------------------------------------------ before the order

    def admit(self, view: ClusterView) -> ClusterView:
        """Solve closed batches, submit arrivals, hide held jobs, release those due."""
        now = view.now
        self._solve_closed(now)
        for job in view.arrivals:
            target = self.advisor.submit(flex_job(job, self.params.coast_busy_w), now)
            if target is None:
                self.held[job.job_id] = job
        self._solve_closed(now)  # a batch closing within the tolerance of now
        released = []
        while self._due and is_due(self._due[0][0], now):
            _, job_id = heapq.heappop(self._due)
            job = dataclasses.replace(self.held.pop(job_id), submit_s=now)
            self.shown[job_id] = job
            self.releases[job_id] = now
            released.append(job)
        if not self.held and not self.shown:
            return view
        queue = tuple(self.shown.get(job.job_id, job) for job in view.queue
                      if job.job_id not in self.held)
        arrivals = tuple(job for job in view.arrivals if job.job_id not in self.held
                         and job.job_id not in self.shown) + tuple(released)
        return dataclasses.replace(view, queue=queue, arrivals=arrivals)

    def _solve_closed(self, now: float) -> None:
        """Decide every batch closed by ``now`` (within the tolerance), at its close."""
        for batch in self.advisor.due_batches(now + TIME_TOLERANCE_S):
            result = self.advisor.solve_batch(batch, self.advisor.batch_close(batch))
            for job_id, target in zip(result.job_ids, result.targets, strict=True):
                heapq.heappush(self._due, (target, job_id))

    # ------------------------------------------------------------------ after the power manager

    def amend(self, view: ClusterView, dispatched: Dispatched, outcome: PowerOutcome,
              order: DispatchOrder) -> None:
        """Forget started jobs; ask to be called at the next batch close or target."""
        decisions = outcome.decisions
        for start in decisions.starts:
            self.advisor.forget(start.job_id)
            self.shown.pop(start.job_id, None)
        upcoming = self.advisor.next_event_time(view.now + TIME_TOLERANCE_S)
        if upcoming is not None:
            decisions.call_at.append(upcoming)


def build_carbon_layer(name: str):
    """The parts table's builder of layer ``name`` (a key of :data:`LAYER_METHODS`)."""
    method = LAYER_METHODS[name]

    def build(params: CarbonLayerParams, p_sleep_w: np.ndarray) -> CarbonLayer:
        return CarbonLayer(params, method, params.signal(f"layer {name}"))

    return build
