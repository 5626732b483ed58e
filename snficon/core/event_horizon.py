r"""The event horizon of the warm-spare search (paper, eq. 20-25 and 59, Lemmas 1-2).

The spare target is scored over the time H to the next arrival or completion, capped at
H_c: this module holds the rates of those events (eq. 20-23), Lemma 1's expected capped
horizon (eq. 25) and Lemma 2's expected unfinished transition time (eq. 59).
:mod:`snficon.core.spare` scores the candidate targets with them.
"""

from __future__ import annotations

import numpy as np


def capped_horizon(rate, cap):
    r"""Expected event horizon capped at the timeout (paper, Lemma 1, eq. 25).

    .. math:: H = E[\min(T, H_c)] = \frac{1 - e^{-\hat\lambda_E H_c}}{\hat\lambda_E},
              \qquad T \sim \mathrm{Exp}(\hat\lambda_E)

    ``rate`` is the rate of the next arrival or completion (1/s); ``cap`` is H_c (s).
    As rate -> 0 it returns ``cap`` (also at rate = 0). Scalars give a float, computed
    on floats: the same operations in the same order (numpy's expm1), so the same
    double as the array formula, without its per-call cost.
    """
    if isinstance(rate, float | int) and isinstance(cap, float | int):
        rate, cap = float(rate), float(cap)
        x = rate * cap
        return cap * -float(np.expm1(-x)) / x if x > 0.0 else cap
    rate, cap = np.asarray(rate, dtype=float), np.asarray(cap, dtype=float)
    x = rate * cap
    with np.errstate(invalid="ignore", divide="ignore"):
        h = np.where(x > 0.0, cap * (-np.expm1(-x)) / np.where(x > 0.0, x, 1.0), cap)
    return float(h) if h.ndim == 0 else h


def expected_unfinished(d, rate):
    r"""Expected transition time still remaining at the next event (Lemma 2, eq. 59).

    .. math:: \phi(d; \hat\lambda_E) = E\big[(d - T)^+\big]
              = d - \frac{1 - e^{-\hat\lambda_E d}}{\hat\lambda_E},
              \qquad T \sim \mathrm{Exp}(\hat\lambda_E)

    ``d`` >= 0 is the remaining transition time (s). Computed as
    d (x - 1 + e^{-x}) / x with x = rate d (series below 1e-3); rate = 0 gives 0 (no
    event comes), rate -> inf gives d; d <= 0 (or nan) gives 0. Scalars give a float.
    A scalar rate with a scalar or up to :data:`FEW_TIMES` times is computed one float
    at a time (:func:`_unfinished_one`, the same doubles): the spare search asks for a
    handful of times at each decision, where numpy's per-call cost dominates.
    """
    if isinstance(rate, float | int):
        if isinstance(d, float | int):
            return _unfinished_one(float(d), float(rate))
        if isinstance(d, np.ndarray) and d.ndim == 1 and len(d) <= FEW_TIMES:
            rate = float(rate)
            return np.array([_unfinished_one(v, rate) for v in d.astype(float).tolist()])
    d, rate = np.asarray(d, dtype=float), np.asarray(rate, dtype=float)
    x = rate * d
    series = x * (0.5 - x * (1.0 / 6.0 - x * (1.0 / 24.0 - x / 120.0)))
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        closed = (x + np.expm1(-x)) / np.where(x > 0.0, x, 1.0)
        phi = d * np.where(x < 1e-3, series, closed)
    phi = np.where(d > 0.0, phi, 0.0)
    return float(phi) if phi.ndim == 0 else phi


#: Up to this many times, :func:`expected_unfinished` works on floats.
FEW_TIMES = 16


def _unfinished_one(d: float, rate: float) -> float:
    """:func:`expected_unfinished` of one time ``d`` at ``rate``, written on floats: the
    same operations in the same order (numpy's expm1), so the same double."""
    if not d > 0.0:
        return 0.0
    x = rate * d
    if x < 1e-3:
        return d * (x * (0.5 - x * (1.0 / 6.0 - x * (1.0 / 24.0 - x / 120.0))))
    return d * ((x + float(np.expm1(-x))) / (x if x > 0.0 else 1.0))


def completion_rate(remaining_s, mu: float, n_act: int | None = None) -> float:
    r"""Estimated completion-event rate (paper, eq. 20-22).

    .. math:: J_{pred} = \{j : 0 < \hat R_j < \infty\}, \quad
              d_C = \min_{j \in J_{pred}} \hat R_j, \quad
              \hat\lambda_C = \begin{cases} 1/d_C & 0 < d_C < \infty \\
              n_{act}\,\hat\mu & \text{otherwise} \end{cases}

    ``remaining_s``: the predicted remaining runtimes of the active jobs (s, Appendix A);
    ``mu``: the service rate (1/s); ``n_act``: the number of distinct active jobs,
    ``len(remaining_s)`` by default. No active job gives 0.
    """
    remaining = np.asarray(remaining_s, dtype=float).ravel()
    usable = remaining[(remaining > 0.0) & np.isfinite(remaining)]
    if len(usable):
        return 1.0 / float(usable.min())
    n = len(remaining) if n_act is None else n_act
    return n * float(mu)


def event_rates(lam: float, lam_c: float) -> tuple[float, float]:
    r"""Probability that the next event is an arrival, and the next-event rate (eq. 23).

    .. math:: \hat\lambda_E = \hat\lambda + \hat\lambda_C, \qquad
              \pi_A = \begin{cases} \hat\lambda / \hat\lambda_E & \hat\lambda_E > 0 \\
              0 & \hat\lambda_E = 0 \end{cases}

    Returns ``(pi_a, lam_e)``. With lam_e = 0, Lemma 1 gives H = H_c (SPEC 5).
    """
    lam_e = float(lam) + float(lam_c)
    return (float(lam) / lam_e if lam_e > 0.0 else 0.0), lam_e
