r"""The Budiarjo reward of one step: weighted shares of wasted energy and of waiting.

The design of Budiarjo et al. as the paper authors' code has it (SPARS-ICON
``SPARS/Gym/rewards/Budiarjo.py``). For a step from :math:`t_1` to
:math:`t_2`, :math:`\Delta T = t_2 - t_1`:

.. math::

    R = -w_E \, \frac{1}{|M|} \sum_{i \in M}
          \frac{E^{w}_i(t_1, t_2)}{P^{\max}_i \, \Delta T}
        \; - \; w_W \, \frac{1}{|J|} \sum_{j \in J}
          \frac{W_j(t_1, t_2)}{\Delta T}

- :math:`M`: the nodes that had a decision to make at :math:`t_1` (idle
  nodes that may be switched off, sleeping nodes that may be switched on:
  :func:`snficon.rl.features.decision_nodes`); :math:`E^{w}_i` their wasted
  energy over the step (:func:`snficon.rl.ledger.interval_usage`);
  :math:`P^{\max}_i` the node's largest non-computing power, so each term is
  in [0, 1] (1 = idle or switching the whole step).
- :math:`J`: the jobs that arrived by :math:`t_2` and had not started
  before :math:`t_1` (those started at :math:`t_1` count, with no wait);
  :math:`W_j` the time job j waited within the step,
  :math:`\min(s_j, t_2) - \max(a_j, t_1)` for arrival :math:`a_j` and start
  :math:`s_j`. The authors count a job that arrived within the step and is
  still waiting as :math:`\Delta T` (its whole step); here it is the time
  it really waited.
- the weights :math:`w_E, w_W` (the authors' ``weight1``, ``weight2``,
  both 0.5); an empty M or J gives 0 for its term; :math:`\Delta T = 0`
  gives R = 0; the last step of an episode (the simulation ended) has the
  energy term only, as in the authors' code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from snficon.core.view import ClusterView, Decisions
from snficon.platform.model import PowerModel
from snficon.rl.features import action_mask, decision_nodes
from snficon.rl.ledger import (
    IntervalUsage,
    after_starts,
    held_nodes,
    interval_usage,
    max_noncompute_power_w,
)


@dataclass(frozen=True)
class RewardWeights:
    """The weights of the two terms: ``energy`` (w_E) and ``waiting`` (w_W)."""

    energy: float = 0.5
    waiting: float = 0.5

    def __post_init__(self) -> None:
        for name in ("energy", "waiting"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
                raise ValueError(f"reward weight {name} must be a finite number >= 0, "
                                 f"got {value!r}")


@dataclass(frozen=True)
class RewardTerms:
    """One step's reward, its two terms (each in [0, 1]) and what it was computed from."""

    reward: float
    energy: float
    waiting: float
    duration_s: float
    usage: IntervalUsage | None = None


def energy_term(usage: IntervalUsage, decision: np.ndarray, max_power_w: np.ndarray) -> float:
    """Mean over the decision nodes of wasted energy / (P_max x Delta T) (0 if none)."""
    duration = usage.duration_s
    if duration <= 0 or not decision.any():
        return 0.0
    shares = usage.wasted_j[decision] / (max_power_w[decision] * duration)
    return float(shares.mean())


def waiting_term(submit_s: np.ndarray, start_s: np.ndarray, t_from: float, t_to: float) -> float:
    """Mean over the counted jobs of the share of [t_from, t_to] they waited.

    ``submit_s``, ``start_s``: per job, its arrival and start (``nan`` or inf
    if it had not started by ``t_to``). Counted: arrived by ``t_to`` and not
    started before ``t_from``.
    """
    duration = t_to - t_from
    if duration <= 0:
        return 0.0
    submit = np.asarray(submit_s, dtype=np.float64)
    start = np.nan_to_num(np.asarray(start_s, dtype=np.float64), nan=np.inf)
    counted = (submit <= t_to) & (start >= t_from)
    if not counted.any():
        return 0.0
    waited = np.minimum(start[counted], t_to) - np.maximum(submit[counted], t_from)
    return float(np.clip(waited, 0.0, duration).mean() / duration)


def waiting_between(before: ClusterView, after: ClusterView) -> float:
    """:func:`waiting_term` of two consecutive invocations' views (as the scheduler got them).

    No job starts between two invocations, so a job queued at ``before`` and
    gone at ``after`` started at ``before.now``; a job queued at ``after``
    has waited since ``max(submit, before.now)``.
    """
    waiting = {job.job_id: job for job in after.queue}
    jobs = {job.job_id: job for job in before.queue} | waiting
    submit = np.array([job.submit_s for job in jobs.values()])
    start = np.array([np.inf if job_id in waiting else before.now for job_id in jobs])
    return waiting_term(submit, start, before.now, after.now)


def budiarjo_reward(energy: float, waiting: float, weights: RewardWeights,
                    done: bool = False) -> float:
    """R = -w_E energy - w_W waiting; the energy term alone on the last step."""
    if done:
        return -weights.energy * energy
    return -weights.energy * energy - weights.waiting * waiting


def transition_reward(before: ClusterView, decisions: Decisions, after: ClusterView,
                      power: PowerModel, weights: RewardWeights | None = None,
                      done: bool = False) -> RewardTerms:
    """The reward of one step between two consecutive scheduler invocations.

    ``before``: the view the scheduler got at t1; ``decisions``: everything
    decided then (the dispatch order's starts and the power manager's
    switches); ``after``: the view at t2 (the next invocation, or the end of
    the simulation with ``done``). The returned ``usage`` is the step's
    :class:`~snficon.rl.ledger.IntervalUsage` (to add to a history).
    """
    weights = weights or RewardWeights()
    held = held_nodes(before, decisions, power)
    usage = interval_usage(held, after.now, power)
    decision = decision_nodes(action_mask(after_starts(before, decisions.starts).nodes))
    energy = energy_term(usage, decision, max_noncompute_power_w(power))
    waiting = waiting_between(before, after)
    reward = 0.0 if usage.duration_s <= 0 else budiarjo_reward(energy, waiting, weights, done)
    return RewardTerms(reward=reward, energy=energy, waiting=waiting,
                       duration_s=usage.duration_s, usage=usage)


class StepMeter:
    """The reward of a step that spans several scheduler invocations.

    The authors' agent acts every ``rl.dt`` seconds while the scheduler is
    invoked in between (arrivals, completions). Feed every invocation of the
    step, in order: :meth:`begin` with the agent's invocation, :meth:`add`
    with each later one, and :meth:`finish` with the view that ends the step
    (the next agent invocation, or the end of the simulation). Energy is
    summed over the intervals for the nodes that had a choice at the start;
    each job's wait within the step counts from its arrival (or the step's
    start) to its start (or the step's end). With :meth:`begin` then
    :meth:`finish` it is :func:`transition_reward`.
    """

    def __init__(self, power: PowerModel, weights: RewardWeights | None = None) -> None:
        self.power = power
        self.weights = weights or RewardWeights()
        self._max_power_w = max_noncompute_power_w(power)
        self._reset(math.nan)

    def _reset(self, start_s: float) -> None:
        size = len(self.power.p_idle_w)
        self._start_s = start_s
        self._decision = np.zeros(size, dtype=bool)
        self._wasted_j = np.zeros(size)
        self._switching_s = np.zeros(size)
        self._submit: dict[str, float] = {}
        self._started: dict[str, float] = {}
        self._last: tuple[ClusterView, Decisions] | None = None

    def begin(self, view: ClusterView, decisions: Decisions) -> None:
        """The step starts at ``view`` (as the scheduler got it) with ``decisions``."""
        self._reset(view.now)
        self._decision = decision_nodes(action_mask(after_starts(view, decisions.starts).nodes))
        self._record(view, decisions)

    def add(self, view: ClusterView, decisions: Decisions) -> None:
        """A later invocation within the step, and what was decided then."""
        self._close(view.now)
        self._record(view, decisions)

    def finish(self, view: ClusterView, done: bool = False) -> RewardTerms:
        """The step ends at ``view``; ``done``: the simulation ended."""
        self._close(view.now)
        for job in view.queue:
            self._submit.setdefault(job.job_id, job.submit_s)
        usage = IntervalUsage(self._start_s, view.now, self._wasted_j, self._switching_s)
        energy = energy_term(usage, self._decision, self._max_power_w)
        ids = list(self._submit)
        waiting = waiting_term(np.array([self._submit[i] for i in ids]),
                               np.array([self._started.get(i, np.inf) for i in ids]),
                               self._start_s, view.now)
        duration = usage.duration_s
        reward = 0.0 if duration <= 0 else budiarjo_reward(energy, waiting, self.weights, done)
        return RewardTerms(reward=reward, energy=energy, waiting=waiting, duration_s=duration,
                           usage=usage)

    def _record(self, view: ClusterView, decisions: Decisions) -> None:
        for job in view.queue:
            self._submit.setdefault(job.job_id, job.submit_s)
        queued = {job.job_id for job in view.queue}
        for start in decisions.starts:
            if start.job_id in queued:
                self._started.setdefault(start.job_id, view.now)
        self._last = (view, decisions)

    def _close(self, end_s: float) -> None:
        if self._last is None:
            raise RuntimeError("StepMeter: begin() must come first")
        view, decisions = self._last
        usage = interval_usage(held_nodes(view, decisions, self.power), end_s, self.power)
        self._wasted_j = self._wasted_j + usage.wasted_j
        self._switching_s = self._switching_s + usage.switching_s
