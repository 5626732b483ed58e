"""What one invocation computed, as typed records: the decision log's content (SPEC 7).

A policy builds one :class:`Diagnostics` per invocation and never reads it
back; the adapter turns it into a decision-log row with :meth:`Diagnostics.columns`.
Beyond SPEC 7's columns it carries what the paper's section V-A diagnostics
name: why the screen rejected the window, the estimator state (lambda, mu, the
runtime-ratio log-mean and sigma, a summary of the requested-size pmf), how
many queued jobs were planned, and J, W, E of the chosen spare target and of
its two neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass

from snficon.core.screen import ScreenResult


@dataclass(frozen=True)
class EstimatorState:
    """The estimates at one invocation (section IV-D, Appendix A).

    ``lam``, ``mu``: arrival and service rates (1/s, eq. 17-18); ``ratio_mean``,
    ``ratio_sigma``: log-mean m_Y and sigma_Y of actual / requested runtime
    (App. A, eq. 42-45); ``size_mean``: mean requested nodes under the pmf of
    eq. 19; ``size_max``: the largest size with positive weight (None before
    the first arrival, as the two ratio fields before the first usable completion).
    """

    lam: float
    mu: float
    ratio_mean: float | None
    ratio_sigma: float
    size_mean: float | None
    size_max: int | None


@dataclass(frozen=True)
class SpareChoice:
    """The spare-target decision (eq. 23-39): pi_A, H, x* and its costs.

    ``below``/``above``: (J, W, E) of the candidates x* - 1 and x* + 1, None
    where x* is the first or last candidate.
    """

    pi_a: float
    horizon: float
    x: int
    w: float
    e: float
    j: float
    below: tuple[float, float, float] | None
    above: tuple[float, float, float] | None


@dataclass(frozen=True)
class Diagnostics:
    """One invocation's record. Fields that do not apply to a policy are None.

    ``mode`` is SNF-ICON's (:class:`~snficon.core.names.Mode`); ``arrival`` and
    ``service`` the two screens (eq. 5-10); ``screen_reason`` the failed rules
    of a rejected window (``"arrival:cv,ks service:n<n_min"``, "" when accepted);
    ``planned_jobs`` how many waiting jobs the plan placed.
    """

    starts: int
    wakes: int
    shutdowns: int
    kills: int = 0
    mode: str | None = None
    spare_planning_point: bool | None = None
    gate_open: bool | None = None
    arrival: ScreenResult | None = None
    service: ScreenResult | None = None
    screen_reason: str | None = None
    estimates: EstimatorState | None = None
    spare: SpareChoice | None = None
    planned_jobs: int | None = None

    def columns(self) -> dict[str, object]:
        """The decision-log columns (SPEC 7 and the extras above) this record fills."""
        values: dict[str, object] = {
            "mode": self.mode, "spare_planning_point": self.spare_planning_point,
            "gate_open": self.gate_open, "screen_reason": self.screen_reason,
            "planned_jobs": self.planned_jobs, "starts": self.starts, "wakes": self.wakes,
            "shutdowns": self.shutdowns, "kills": self.kills}
        for prefix, screen in (("arrival", self.arrival), ("service", self.service)):
            if screen is not None:
                values.update({f"{prefix}_n": screen.n, f"{prefix}_mean": screen.mean,
                               f"{prefix}_cv": screen.cv, f"{prefix}_lag1": screen.lag1,
                               f"{prefix}_ks": screen.ks, f"{prefix}_ks_limit": screen.ks_limit,
                               f"{prefix}_accepted": screen.accepted})
        if self.estimates is not None:
            est = self.estimates
            values.update(lam=est.lam, mu=est.mu, ratio_mean=est.ratio_mean,
                          ratio_sigma=est.ratio_sigma, size_mean=est.size_mean,
                          size_max=est.size_max)
        if self.spare is not None:
            spare = self.spare
            values.update(pi_a=spare.pi_a, horizon=spare.horizon, target_x=spare.x,
                          target_w=spare.w, target_e=spare.e, target_j=spare.j)
            for side, costs in (("below", spare.below), ("above", spare.above)):
                if costs is not None:
                    values.update({f"target_{side}_j": costs[0], f"target_{side}_w": costs[1],
                                   f"target_{side}_e": costs[2]})
        return values
