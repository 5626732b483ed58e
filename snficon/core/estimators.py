r"""Adaptive estimates of SNF-ICON (paper, section IV-D, eq. 17-19, and Appendix A).

:class:`Estimates` is the frozen EMA state; :func:`on_arrival` and :func:`on_completion`
return updated copies. From it come the arrival and service rates (eq. 17-18), the
requested-node PMF (eq. 19), the predicted duration of a queued job (eq. 46) and the
conditional remaining time of a running job (eq. 50-51) that feeds eq. 20-22 and the
release map (eq. 56: ``now + R``; eq. 57: ``start + D``).

Points the paper leaves open, fixed as the authors' code (SPARS-ICON, ``snf_icon.py``):

- m_S^req, the service proxy used before a usable completion (eq. 18), is updated at every
  arrival whose requested time is positive, with that requested time; the first proxy
  initialises it. m_S, m_Y and q_Y are likewise initialised by their first sample.
- a completion is usable (m_S) when its runtime exceeds ``epsilon``; its log ratio (eq. 41)
  is valid when, moreover, its requested time exceeds ``epsilon``.
- weights (eq. 19): the first arrival sets w_{r0} = 1; later ones decay all weights by
  1 - rho_R, drop those <= ``epsilon``, add rho_R to the new request r', and renormalise
  (the paper's "survivors are renormalized"). With no weight, the PMF is w_1 = 1.
- cold start (no valid log ratio yet): a queued job lasts its request; a running job has
  ``req - elapsed`` left, or ``req`` again once past its request.
- no usable request (``req <= epsilon`` or not finite): the total is m_S, else ``h_max``.
- every predicted time is floored at ``epsilon``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from snficon.core.params import IconParams

#: zeta - sigma above which eq. 50 uses the Mills-ratio asymptotic series.
_Z_ASYMPTOTIC = 100.0
_SQRT1_2 = math.sqrt(0.5)


@dataclass(frozen=True)
class Estimates:
    """The EMA state of section IV-D and Appendix A (times in s).

    ``m_a``: interarrival EMA (eq. 17), 1/lambda0 initially. ``m_s``: EMA of completed
    runtimes (eq. 18), None before the first usable completion. ``m_s_req``: EMA of the
    requested-duration proxies (eq. 18), None before the first positive request.
    ``weights``: the positive w_r of eq. 19 as ``(r, w_r)`` pairs, ascending r, summing to
    1; empty before the first arrival. ``m_y``, ``q_y``: EMAs of Y and Y^2 (eq. 42-43),
    None before the first valid log ratio. Counters: ``n_arrivals``, ``n_services``
    (usable completions), ``n_ratios`` (valid log ratios).
    """

    nb_nodes: int
    m_a: float
    m_s: float | None = None
    m_s_req: float | None = None
    weights: tuple[tuple[int, float], ...] = ()
    m_y: float | None = None
    q_y: float | None = None
    n_arrivals: int = 0
    n_services: int = 0
    n_ratios: int = 0

    @classmethod
    def initial(cls, nb_nodes: int, params: IconParams) -> Estimates:
        r"""The state at t = 0 (section IV-D): nothing observed yet.

        .. math:: m_A = 1 / \lambda_0
        """
        if nb_nodes < 1:
            raise ValueError(f"nb_nodes must be >= 1, got {nb_nodes}")
        if not params.lambda0 > 0.0:
            raise ValueError(f"lambda0 must be > 0, got {params.lambda0}")
        return cls(nb_nodes=nb_nodes, m_a=1.0 / params.lambda0)


def _ema(old: float | None, sample: float, rho: float) -> float:
    return sample if old is None else rho * sample + (1.0 - rho) * old


def on_arrival(est: Estimates, interarrival_s: float | None, res: int, req_time_s: float,
               params: IconParams) -> Estimates:
    r"""A job requesting ``res`` nodes for ``req_time_s`` arrived (eq. 17 and 19).

    .. math::

        m_A^+ = \rho_A \Delta_A + (1 - \rho_A) m_A, \qquad
        w_r^+ = (1 - \rho_R) w_r + \rho_R \mathbb{1}\{r = r'\}

    ``interarrival_s`` is Delta_A (zero gaps are kept), None for the first arrival (m_A
    unchanged). The request also updates m_S^req (eq. 18) when ``req_time_s > 0``.
    Raises ValueError for a negative or non-finite gap or ``res`` outside [1, nb_nodes].
    """
    m_a = est.m_a
    if interarrival_s is not None:
        if not (math.isfinite(interarrival_s) and interarrival_s >= 0.0):
            raise ValueError(f"interarrival must be finite and >= 0, got {interarrival_s}")
        m_a = _ema(m_a, interarrival_s, params.rho_a)
    if not 1 <= res <= est.nb_nodes:
        raise ValueError(f"res must be in [1, {est.nb_nodes}], got {res}")
    if est.weights:
        decay, epsilon = 1.0 - params.rho_r, params.epsilon
        kept = {r: decayed for r, w in est.weights if (decayed := decay * w) > epsilon}
        new = res not in kept
        kept[res] = kept.get(res, 0.0) + params.rho_r
        total = sum(kept.values())  # in the order of the weights, the new size last
        # ascending r: the kept ones already are; a new size goes in its place
        weights = tuple([(r, kept[r] / total) for r in (sorted(kept) if new else kept)])
    else:
        weights = ((res, 1.0),)
    m_s_req = est.m_s_req
    if math.isfinite(req_time_s) and req_time_s > 0.0:
        m_s_req = _ema(m_s_req, req_time_s, params.rho_s)
    # the constructor with every field (dataclasses.replace costs a pass over the fields)
    return Estimates(nb_nodes=est.nb_nodes, m_a=m_a, m_s=est.m_s, m_s_req=m_s_req,
                     weights=weights, m_y=est.m_y, q_y=est.q_y, n_arrivals=est.n_arrivals + 1,
                     n_services=est.n_services, n_ratios=est.n_ratios)


def on_completion(est: Estimates, runtime_s: float, req_time_s: float,
                  params: IconParams) -> Estimates:
    r"""A job ran ``runtime_s`` against a request of ``req_time_s`` (eq. 18, 41-43).

    .. math::

        m_S^+ = \rho_S D + (1 - \rho_S) m_S, \quad
        Y = \log\frac{D}{\tau}, \quad
        m_Y^+ = \rho_S Y + (1 - \rho_S) m_Y, \quad
        q_Y^+ = \rho_S Y^2 + (1 - \rho_S) q_Y

    A runtime <= ``epsilon`` is not usable: the state is returned unchanged. A request
    <= ``epsilon`` (or not finite) updates m_S only. Raises ValueError for a negative or
    non-finite runtime.
    """
    if not (math.isfinite(runtime_s) and runtime_s >= 0.0):
        raise ValueError(f"runtime must be finite and >= 0, got {runtime_s}")
    if runtime_s <= params.epsilon:
        return est
    m_s = _ema(est.m_s, runtime_s, params.rho_s)
    if not (math.isfinite(req_time_s) and req_time_s > params.epsilon):
        return Estimates(nb_nodes=est.nb_nodes, m_a=est.m_a, m_s=m_s, m_s_req=est.m_s_req,
                         weights=est.weights, m_y=est.m_y, q_y=est.q_y,
                         n_arrivals=est.n_arrivals, n_services=est.n_services + 1,
                         n_ratios=est.n_ratios)
    y = math.log(runtime_s) - math.log(req_time_s)
    return Estimates(nb_nodes=est.nb_nodes, m_a=est.m_a, m_s=m_s, m_s_req=est.m_s_req,
                     weights=est.weights, m_y=_ema(est.m_y, y, params.rho_s),
                     q_y=_ema(est.q_y, y * y, params.rho_s), n_arrivals=est.n_arrivals,
                     n_services=est.n_services + 1, n_ratios=est.n_ratios + 1)


def arrival_rate(est: Estimates, params: IconParams) -> float:
    r"""Estimated arrival rate (eq. 17), 1/s.

    .. math:: \hat\lambda(t) = \frac{1}{\max\{\epsilon, m_A\}}
    """
    return 1.0 / max(params.epsilon, est.m_a)


def service_rate(est: Estimates, params: IconParams) -> float:
    r"""Estimated per-job service rate (eq. 18), 1/s.

    .. math::

        \hat\mu(t) = \begin{cases}
            1 / \max\{\epsilon, m_S\} & m_S \text{ available} \\
            1 / \max\{\epsilon, m_S^{req}\} & \text{otherwise} \\
            0 & \text{neither available}
        \end{cases}
    """
    mean = est.m_s if est.m_s is not None else est.m_s_req
    return 0.0 if mean is None else 1.0 / max(params.epsilon, mean)


def request_pmf(est: Estimates) -> np.ndarray:
    r"""Probability that the next job requests r nodes (eq. 19).

    .. math:: \hat p_r(t) = \frac{w_r}{\sum_{k=1}^{N} w_k}

    Returns an array of length N whose entry ``r - 1`` is p_r; before any arrival
    (no weight) it is w_1 = 1.
    """
    pmf = np.zeros(est.nb_nodes)
    if not est.weights:
        pmf[0] = 1.0
        return pmf
    for r, w in est.weights:
        pmf[r - 1] = w
    return pmf / pmf.sum()


def median_ratio(est: Estimates) -> float:
    r"""Estimated median of actual / requested runtime (eq. 44), 1 at cold start.

    .. math:: \hat\eta_{med} = \exp(m_Y)
    """
    return 1.0 if est.m_y is None else math.exp(est.m_y)


def sigma_y(est: Estimates, params: IconParams) -> float:
    r"""Estimated standard deviation of the log ratio (eq. 45).

    .. math:: \hat\sigma_Y = \max\left\{\sigma_{min}, \sqrt{\max\{0, q_Y - m_Y^2\}}\right\}

    At cold start (no log ratio yet) it is ``sigma_min``.
    """
    if est.m_y is None or est.q_y is None:
        return params.sigma_min
    return max(params.sigma_min, math.sqrt(max(0.0, est.q_y - est.m_y * est.m_y)))


def predicted_duration(est: Estimates, req_time_s: float, params: IconParams) -> float:
    r"""Predicted total runtime of a queued job (eq. 46): the log-normal median.

    .. math:: \hat D_j = \tau_j \, \hat\eta_{med} = \tau_j e^{m_Y}

    Without a usable request (``req_time_s <= epsilon``) it is m_S, else ``h_max``.
    """
    if not (math.isfinite(req_time_s) and req_time_s > params.epsilon):
        return max(params.epsilon, est.m_s if est.m_s is not None else params.h_max)
    return max(params.epsilon, req_time_s * median_ratio(est))


def _log_excess(zeta: np.ndarray, sigma: float) -> np.ndarray:
    """L = log(E[D | D > e] / e) for zeta = (log e - theta) / sigma, eq. 50 in log space.

    With Phi-bar(x) = exp(-x^2/2) erfcx(x/sqrt 2) / 2, the Gaussian factors cancel and
    L = log erfcx((zeta - sigma)/sqrt 2) - log erfcx(zeta/sqrt 2): no overflow however
    far the job overran. Low zeta uses log_ndtr directly (erfcx would overflow); very
    high zeta the Mills-ratio series M(x) ~ (1 - x^-2 + 3 x^-4) / x, where the erfcx
    difference would cancel.
    """
    # imported when first needed: scipy.special takes ~0.3 s to import, and only these
    # predictions of SNF-ICON use it (the baselines' runs and the CLI do without)
    from scipy.special import erfcx, log_ndtr

    low = zeta <= sigma
    if np.count_nonzero(low) == low.size:  # the usual case: one branch, no masks
        return 0.5 * sigma * sigma - sigma * zeta + log_ndtr(sigma - zeta) - log_ndtr(-zeta)
    out = np.empty_like(zeta)
    high = zeta - sigma >= _Z_ASYMPTOTIC
    mid = ~(low | high)
    # each branch only when it has elements (an empty one costs its calls, nothing else)
    if np.count_nonzero(low):
        z = zeta[low]
        out[low] = 0.5 * sigma * sigma - sigma * z + log_ndtr(sigma - z) - log_ndtr(-z)
    if np.count_nonzero(high):
        z = zeta[high]
        a = z - sigma
        out[high] = (-np.log1p(-sigma / z) + np.log1p(-1.0 / a**2 + 3.0 / a**4)
                     - np.log1p(-1.0 / z**2 + 3.0 / z**4))
    if np.count_nonzero(mid):
        z = zeta[mid]
        out[mid] = np.log(erfcx((z - sigma) * _SQRT1_2)) - np.log(erfcx(z * _SQRT1_2))
    return out


def _lognormal_excess(theta: np.ndarray, sigma: float, elapsed: np.ndarray) -> np.ndarray:
    """E[D - e | D > e] for log D ~ N(theta, sigma^2); eq. 51 where e = 0."""
    fresh = elapsed == 0.0
    n_fresh = np.count_nonzero(fresh)
    if not n_fresh:
        return _excess_after(theta, sigma, elapsed)
    if n_fresh == fresh.size:
        return np.exp(theta + 0.5 * sigma * sigma)
    out = np.empty_like(theta)
    out[fresh] = np.exp(theta[fresh] + 0.5 * sigma * sigma)
    out[~fresh] = _excess_after(theta[~fresh], sigma, elapsed[~fresh])
    return out


def _excess_after(theta: np.ndarray, sigma: float, e: np.ndarray) -> np.ndarray:
    """E[D - e | D > e] for log D ~ N(theta, sigma^2) and e > 0 (eq. 50): e (exp(L) - 1)
    with L = log(E[D | D > e] / e); by expm1 while L <= 1 (E[D | D > e] close to e),
    else exp(log e + L) - e (inf beyond the float range)."""
    log_e = np.log(e)
    big = _log_excess((log_e - theta) / sigma, sigma)
    with np.errstate(over="ignore"):
        return np.where(big <= 1.0, e * np.expm1(big), np.exp(log_e + big) - e)


def remaining_times(est: Estimates, req: np.ndarray, elapsed: np.ndarray,
                    params: IconParams) -> np.ndarray:
    r"""Predicted remaining runtimes of running jobs (eq. 47-51), vectorised.

    .. math::

        \hat R_j(t) = \exp\left(\theta_j + \frac{\hat\sigma_Y^2}{2}\right)
            \frac{\bar\Phi(\zeta_j - \hat\sigma_Y)}{\bar\Phi(\zeta_j)} - e_j, \quad
        \theta_j = \log\tau_j + m_Y, \quad
        \zeta_j = \frac{\log e_j - \theta_j}{\hat\sigma_Y}

    and, for e_j = 0, :math:`\exp(\theta_j + \hat\sigma_Y^2/2)` (eq. 51). ``req`` holds
    the requests tau_j, ``elapsed`` the runtimes e_j so far (s, broadcast together). The
    ratio is evaluated in log space, so a job 10^6 times past its request gets a finite,
    positive answer (it grows like e_j sigma / zeta_j); only a result beyond the float
    range is ``inf`` (excluded from J_pred, eq. 20). Cold start and jobs without a usable
    request follow the module notes. Raises ValueError for a negative or non-finite
    elapsed time.
    """
    req_a, e = np.asarray(req, dtype=float), np.asarray(elapsed, dtype=float)
    if req_a.shape != e.shape:
        req_a, e = np.broadcast_arrays(req_a, e)
    if not _all_within(e, 0.0, np.inf, low_open=False):
        raise ValueError(f"elapsed times must be finite and >= 0, got {e[~(e >= 0)][:3]}...")
    if _all_within(req_a, params.epsilon, np.inf):  # every request usable: no masks
        return np.maximum(_usable_remaining(est, req_a, e, params), params.epsilon)
    out = np.empty(req_a.shape)
    usable = np.isfinite(req_a) & (req_a > params.epsilon)
    total = est.m_s if est.m_s is not None else params.h_max
    out[~usable] = total - e[~usable]
    out[usable] = _usable_remaining(est, req_a[usable], e[usable], params)
    return np.maximum(out, params.epsilon)


def _all_within(values: np.ndarray, low: float, high: float, low_open: bool = True) -> bool:
    """Every element is above ``low`` (or at it, unless ``low_open``) and below ``high``
    (nan is not); true of no element."""
    if not values.size:
        return True
    least = np.minimum.reduce(values, axis=None)  # values.min() without its wrapper
    return bool((least > low if low_open else least >= low)
                and np.maximum.reduce(values, axis=None) < high)


def _usable_remaining(est: Estimates, tau: np.ndarray, x: np.ndarray,
                      params: IconParams) -> np.ndarray:
    """R_j of jobs with usable requests ``tau`` that have run ``x`` (before the epsilon
    floor): eq. 50-51, or at cold start ``tau - x`` (``tau`` once past the request)."""
    if est.m_y is None:
        return np.where(x < tau, tau - x, tau)
    return _lognormal_excess(np.log(tau) + est.m_y, sigma_y(est, params), x)


def remaining_time(est: Estimates, req_time_s: float, elapsed_s: float,
                   params: IconParams) -> float:
    r"""Predicted remaining runtime of one running job (eq. 50-51).

    .. math::

        \hat R_j(t) = E[D_j - e_j \mid D_j > e_j]
        = e^{\theta_j + \hat\sigma_Y^2/2}
          \frac{\bar\Phi(\zeta_j - \hat\sigma_Y)}{\bar\Phi(\zeta_j)} - e_j

    See :func:`remaining_times`.
    """
    return float(remaining_times(est, np.array([req_time_s]), np.array([elapsed_s]),
                                 params)[0])
