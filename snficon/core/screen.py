r"""The recent-window Markovianity screen (paper, section IV-A, eq. 5-11, Definition 4).

Two series are screened at every invocation: interarrival intervals (timestamped by the
later arrival; simultaneous arrivals give zero gaps, kept) and completed-job execution
times (timestamped by the completion). A series is accepted when at least ``n_min`` of its
samples lie in the last ``t_m`` seconds and it passes the CV, lag-1 and KS rules; A(t)
combines the two series (eq. 11).

Points the paper leaves open, fixed as the authors' code (SPARS-ICON, ``snf_icon.py``):

- the window is closed, ``now - t_m <= t <= now``, and keeps the newest ``n_max``;
- eq. 5 divides by n (``np.std`` with ``ddof=0``), not n - 1;
- an undefined statistic fails its rule: zero mean (CV and KS), a constant lagged
  subsequence or fewer than 3 samples (lag-1; the authors' code sets rho_1 = 1 there).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field

import numpy as np

from snficon.core.params import IconParams

#: Rejection reasons, in the order they are listed in :attr:`ScreenResult.reason`.
REASON_FEW = "n<n_min"
REASON_ZERO_MEAN = "zero_mean"
REASON_CV = "cv"
REASON_LAG1 = "lag1"
REASON_KS = "ks"


@dataclass(frozen=True)
class ScreenResult:
    """One series' screen: the decision-log columns ``arrival_*`` / ``service_*`` (SPEC 7).

    ``n`` samples, their ``mean``, ``cv`` (eq. 5), ``lag1`` (eq. 8), ``ks`` distance and
    ``ks_limit`` (eq. 10), ``accepted``; a statistic that cannot be computed is None.
    ``reason`` lists the failed rules, comma-separated ("" when accepted).
    """

    n: int
    mean: float | None
    cv: float | None
    lag1: float | None
    ks: float | None
    ks_limit: float | None
    accepted: bool
    reason: str = ""


def _samples(values: np.ndarray, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(array)) or np.any(array < 0.0):
        raise ValueError(f"{what} must be finite and >= 0, got {array[~(array >= 0)][:3]}...")
    return array


def recent_window(times: np.ndarray, values: np.ndarray, now: float,
                  params: IconParams) -> np.ndarray:
    r"""The samples of the last T_M seconds, the newest ``n_max`` of them (section IV-A).

    .. math:: \{\xi_i : t - T_M \le t_i \le t\}, \quad n \le n_{max}

    ``times`` (s, non-decreasing) timestamp ``values``; both bounds are inclusive (a
    sample exactly T_M old still counts, as in the authors' code); a sample after ``now``
    is left out. In a burst of more than ``n_max`` samples the oldest are dropped.
    Returns the retained values in time order (a new array).
    """
    times = np.asarray(times, dtype=float)
    values = np.asarray(values, dtype=float)
    if times.shape != values.shape:
        raise ValueError(f"times {times.shape} and values {values.shape} differ in shape")
    if np.any(np.diff(times) < 0.0):
        raise ValueError("times must be non-decreasing")
    inside = values[(times >= now - params.t_m) & (times <= now)]
    return inside[len(inside) - min(len(inside), params.n_max):].copy()


#: Up to this many samples the statistics are computed with plain floats and correctly
#: rounded sums (``math.fsum``), above it with numpy's pairwise sums. The two round
#: differently and the recorded paper outputs (decision logs) were made with both, so
#: both stay; it is not a speed trick (numpy for every window ran the Markovian SNF-ICON
#: case 8 % faster, with other last digits in its decision log).
SMALL_SERIES = 48


def _statistics_small(x: list[float]) -> tuple[float, float | None, float | None, float | None]:
    """Mean, CV (eq. 5), lag-1 (eq. 8) and KS distance (eq. 10) of a short series, with
    correctly rounded sums (``math.fsum``)."""
    n = len(x)
    mean = math.fsum(x) / n
    if mean <= 0.0:
        return mean, None, _lag1_small(x), None
    cv = math.sqrt(math.fsum([(v - mean) ** 2 for v in x]) / n) / mean
    expm1 = math.expm1
    cdf = [-expm1(-v / mean) for v in sorted(x)]
    # the empirical CDF after and before each order statistic: i / n, i = 1..n and 0..n-1
    after, before = [(i + 1) / n for i in range(n)], [i / n for i in range(n)]
    # the largest step of |F_n - F| (eq. 10); it is > 0 for any n >= 1 and mean > 0
    ks = max(0.0, max(map(operator.sub, after, cdf)), max(map(operator.sub, cdf, before)))
    return mean, cv, _lag1_small(x), ks


def _lag1_small(x: list[float]) -> float | None:
    """The lag-1 autocorrelation rho_1 of eq. 8 (None when undefined) of a short series."""
    left, right = x[:-1], x[1:]
    if len(left) < 2 or min(left) == max(left) or min(right) == max(right):
        return None
    ml, mr = math.fsum(left) / len(left), math.fsum(right) / len(right)
    dl = [v - ml for v in left]
    dr = [v - mr for v in right]
    rho = math.fsum(map(operator.mul, dl, dr)) / math.sqrt(
        math.fsum(map(operator.mul, dl, dl)) * math.fsum(map(operator.mul, dr, dr)))
    return min(1.0, max(-1.0, rho))


def _statistics_large(x: np.ndarray) -> tuple[float, float | None, float | None, float | None]:
    """Mean, CV (eq. 5), lag-1 (eq. 8) and KS distance (eq. 10) of a long series.

    Sums are numpy's (pairwise ``np.add.reduce``, ``np.dot``): the same doubles as
    ``np.mean`` and ``np.std``; KS is the statistic of ``scipy.stats.kstest`` against
    ``expon(scale=mean)``, computed directly.
    """
    n = len(x)
    add = np.add.reduce
    mean_f = add(x) / n
    mean = float(mean_f)
    lag1 = _lag1_large(x, n)
    if mean <= 0.0:
        return mean, None, lag1, None
    deviation = x - mean_f
    cv = math.sqrt(add(deviation * deviation) / n) / mean
    # cdf = -expm1(-x / mean): ranks - cdf = ranks + e, cdf - before = -(e + before)
    e = np.expm1(np.sort(x) / -mean)
    after = np.arange(1, n + 1) / n  # the empirical CDF after and before each sample
    before = after - 1.0 / n
    ks = float(max(np.maximum.reduce(after + e), -np.minimum.reduce(e + before)))
    return mean, cv, lag1, ks


def _lag1_large(x: np.ndarray, n: int) -> float | None:
    """The lag-1 autocorrelation rho_1 of eq. 8 (None when undefined) of ``x`` (n > 2
    samples): a lagged subsequence is constant when no neighbour differs within it."""
    changes = np.flatnonzero(x[1:] != x[:-1])  # i where x[i + 1] != x[i]
    if len(changes) < 2 and (len(changes) == 0 or int(changes[0]) in (0, n - 2)):
        return None  # x^- (no change before n - 2) or x^+ (none after 0) is constant
    add = np.add.reduce
    left, right = x[:-1], x[1:]
    dl, dr = left - add(left) / (n - 1), right - add(right) / (n - 1)
    rho = float(np.dot(dl, dr) / math.sqrt(np.dot(dl, dl) * np.dot(dr, dr)))
    return min(1.0, max(-1.0, rho))


def screen_series(samples: np.ndarray, params: IconParams) -> ScreenResult:
    r"""Screen one series xi_1..xi_n (paper, eq. 5-10, Definition 4).

    .. math::

        \mathrm{CV} = \frac{\sqrt{n^{-1}\sum_{i=1}^n (\xi_i - \bar\xi)^2}}{\bar\xi},
        \quad |\mathrm{CV} - 1| \le \delta_{cv}

        \hat\rho_1 = \frac{\widehat{\mathrm{Cov}}(\xi^-, \xi^+)}{\sigma_{\xi^-}\sigma_{\xi^+}},
        \quad |\hat\rho_1| \le \delta_\rho

        D_n^{KS} = \sup_x |F_n(x) - (1 - e^{-x/\bar\xi})|
        \le \frac{\kappa_m \kappa_0}{\sqrt n}

    with xi^- = (xi_1..xi_{n-1}), xi^+ = (xi_2..xi_n) (eq. 7) and n >= n_min.

    Parameters
    ----------
    samples : values (s) in time order, finite and >= 0 (else ``ValueError``); when more
        than ``n_max``, the newest ``n_max`` are screened.
    params : ``n_min``, ``n_max``, ``delta_cv``, ``delta_rho``, ``kappa_m``, ``kappa_0``.

    Notes
    -----
    Every statistic that can be computed is reported, even when n < n_min. Edge cases:
    n = 0 -> all None; zero mean (only zero gaps) -> ``cv`` and ``ks`` None, rejected
    ``zero_mean``; constant series -> CV = 0 (fails eq. 6), ``lag1`` None; n < 3 or a
    constant lagged subsequence -> ``lag1`` None, which fails eq. 9.
    """
    return _screen_checked(_samples(samples, "screen samples"), params)


def _screen_checked(samples: np.ndarray, params: IconParams) -> ScreenResult:
    """:func:`screen_series` of samples already known finite and >= 0."""
    x = samples[-params.n_max:]
    n = len(x)
    if n == 0:
        return ScreenResult(0, None, None, None, None, None, False, REASON_FEW)
    if n <= SMALL_SERIES:
        mean, cv, lag1, ks = _statistics_small(x.tolist())
    else:
        mean, cv, lag1, ks = _statistics_large(x)
    ks_limit = params.kappa_m * params.kappa_0 / math.sqrt(n)
    failed = []
    if n < params.n_min:
        failed.append(REASON_FEW)
    if mean <= 0.0:
        failed.append(REASON_ZERO_MEAN)
    elif abs(cv - 1.0) > params.delta_cv:
        failed.append(REASON_CV)
    if lag1 is None or abs(lag1) > params.delta_rho:
        failed.append(REASON_LAG1)
    if ks is not None and ks > ks_limit:
        failed.append(REASON_KS)
    return ScreenResult(n, mean, cv, lag1, ks, ks_limit, not failed, ",".join(failed))


def workload_accepted(arrival: ScreenResult, service: ScreenResult,
                      params: IconParams) -> bool:
    r"""A(t), the workload acceptance (paper, eq. 11, Definition 4).

    .. math:: A(t) = A_A(t) \wedge A_S(t) \ \text{(service required)}, \quad
              A(t) = A_A(t) \ \text{(otherwise)}

    With ``require_service_samples`` False the service screen is ignored entirely.
    """
    return arrival.accepted and (service.accepted or not params.require_service_samples)


def _no_samples() -> np.ndarray:
    """An empty read-only float array: the times and values of an empty window."""
    array = np.zeros(0)
    array.setflags(write=False)
    return array


@dataclass(frozen=True)
class RememberedScreen:
    """A window's screen at one time, and the range of times it holds for.

    ``result`` is the screen at every ``now`` whose window bounds select the same samples:
    ``oldest_after < now - t_m <= oldest_upto`` (the same samples are at least ``t_m``
    old) and ``now_from <= now < now_before`` (the same samples are not after ``now``).
    """

    result: ScreenResult
    oldest_after: float
    oldest_upto: float
    now_from: float
    now_before: float

    def holds(self, now: float, t_m: float) -> bool:
        """Whether :attr:`result` is the screen at ``now`` (window length ``t_m``)."""
        return (self.now_from <= now < self.now_before
                and self.oldest_after < now - t_m <= self.oldest_upto)


def _screen_at(times: np.ndarray, values: np.ndarray, now: float,
               params: IconParams) -> RememberedScreen:
    """The screen of the samples of the last ``t_m`` seconds before ``now`` (eq. 5-10),
    with the range of ``now`` over which it holds."""
    low = int(times.searchsorted(now - params.t_m, side="left"))
    high = int(times.searchsorted(now, side="right"))
    result = _screen_checked(values[max(low, high - params.n_max):high], params)
    size = len(times)
    return RememberedScreen(
        result=result,
        oldest_after=float(times[low - 1]) if low else -math.inf,
        oldest_upto=float(times[low]) if low < size else math.inf,
        now_from=float(times[high - 1]) if high else -math.inf,
        now_before=float(times[high]) if high < size else math.inf)


@dataclass(frozen=True, eq=False)
class SeriesWindow:
    """One screened series kept in the controller's memory between invocations.

    ``times`` (s, non-decreasing) and ``values`` (s) are read-only float arrays of equal
    length (made so by :meth:`empty` and :meth:`append`, which build them); ``params``
    bound the window (``n_max`` samples, ``t_m`` seconds) and its screen.
    :meth:`append` returns a new window holding at most ``n_max`` samples, none older
    than ``t_m`` before the newest: all a later window can use. ``last_event_s`` is
    the previous arrival, for :meth:`append_interval`. ``remembered``: the latest
    screen of these samples under ``params`` (set by :meth:`screened`, which returns
    the window that remembers it), answered again while no sample enters or leaves
    the window (None: not screened since the last sample).
    """

    times: np.ndarray = field(default_factory=_no_samples)
    values: np.ndarray = field(default_factory=_no_samples)
    params: IconParams = field(default_factory=IconParams)
    last_event_s: float | None = None
    remembered: RememberedScreen | None = None

    @classmethod
    def empty(cls, params: IconParams) -> SeriesWindow:
        """An empty window bounded by ``params.n_max`` and ``params.t_m``."""
        return cls(params=params)

    def __len__(self) -> int:
        return len(self.values)

    def append(self, time: float, value: float) -> SeriesWindow:
        """A new window with ``value`` (>= 0) timestamped ``time`` (>= the newest time),
        not screened yet."""
        return self._appended(time, value, self.last_event_s)

    def _appended(self, time: float, value: float, last_event_s: float | None) -> SeriesWindow:
        times = self.times
        size = len(times)
        if size and time < times[size - 1]:
            raise ValueError(f"time {time} is before the newest sample {times[-1]}")
        if not (math.isfinite(value) and value >= 0.0):
            raise ValueError(f"a series value must be finite and >= 0, got {value!r}")
        # times are non-decreasing: the samples t_m before the new one are a suffix;
        # of those, the newest n_max (the new one included) stay.
        params = self.params
        first = int(times.searchsorted(time - params.t_m, side="left"))
        first = max(first, size + 1 - params.n_max)
        kept_times = np.empty(size - first + 1)
        kept_values = np.empty(size - first + 1)
        kept_times[:-1] = times[first:]
        kept_values[:-1] = self.values[first:]
        kept_times[-1] = time
        kept_values[-1] = value
        kept_times.setflags(write=False)  # new arrays: frozen here, shared by the window
        kept_values.setflags(write=False)
        return SeriesWindow(kept_times, kept_values, params, last_event_s)

    def append_interval(self, time: float) -> SeriesWindow:
        """Record an event at ``time``: the gap since the previous one (none for the first).

        This builds the arrival series: interarrival intervals timestamped by the later
        arrival; two arrivals at one time give a zero gap, which is kept.
        """
        previous = self.last_event_s
        if previous is None:
            return SeriesWindow(self.times, self.values, self.params, time, self.remembered)
        return self._appended(time, time - previous, time)

    def screen(self, now: float, params: IconParams) -> ScreenResult:
        """Screen the samples of the last ``t_m`` seconds before ``now`` (eq. 5-10):
        the result of :meth:`screened`, without the window that remembers it."""
        return self.screened(now, params)[0]

    def screened(self, now: float, params: IconParams) -> tuple[ScreenResult, SeriesWindow]:
        """The screen at ``now`` (eq. 5-10) and the window to keep in its place.

        The :attr:`remembered` screen answers while it holds at ``now`` under the
        window's own ``params`` (the window itself is returned); otherwise the window's
        times are searched again and the returned window remembers the new screen
        (under other ``params`` than the window's, it is returned as it is).
        """
        remembered = self.remembered
        own = params is self.params or params == self.params
        if own and remembered is not None and remembered.holds(now, params.t_m):
            return remembered.result, self
        screen = _screen_at(self.times, self.values, now, params)
        if not own:
            return screen.result, self
        return screen.result, SeriesWindow(self.times, self.values, self.params,
                                           self.last_event_s, screen)
