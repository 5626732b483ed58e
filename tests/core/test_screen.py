"""The Markovianity screen (paper section IV-A, eq. 5-11, Definition 4).

Defaults are the paper's Table I: T_M 7200 s, n_min 3, n_max 1000, delta_cv 0.45,
delta_rho 0.65, kappa_m 1.25, kappa_0 3.0, so the KS limit is 3.75 / sqrt(n).
Reference statistics are recomputed independently (scipy.stats.variation, pearsonr, and
the KS distance written out from the empirical CDF).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from snficon.core.params import IconParams
from snficon.core.screen import (
    ScreenResult,
    SeriesWindow,
    recent_window,
    screen_series,
    workload_accepted,
)

PARAMS = IconParams()


def ks_reference(x: np.ndarray) -> float:
    """Two-sided KS distance to 1 - exp(-x / mean), from the ECDF steps (Lilliefors 1969)."""
    x = np.sort(x)
    n = len(x)
    fitted = 1.0 - np.exp(-x / x.mean())
    return float(max(np.max(np.arange(1, n + 1) / n - fitted),
                     np.max(fitted - np.arange(n) / n)))


def ar1_exponential(rng: np.random.Generator, n: int, phi: float) -> np.ndarray:
    """x_t = phi x_{t-1} + e_t with e_t ~ Exp(1): positive, lag-1 correlation phi."""
    x = np.empty(n)
    x[0] = 1.0 / (1.0 - phi)
    for t in range(1, n):
        x[t] = phi * x[t - 1] + rng.exponential(1.0)
    return x


def result(accepted: bool) -> ScreenResult:
    return ScreenResult(10, 1.0, 1.0, 0.0, 0.1, 1.0, accepted, "" if accepted else "cv")


class TestScreenSeries:
    def test_statistics_match_an_independent_computation(self):
        x = np.random.default_rng(1).exponential(300.0, 50)
        screen = screen_series(x, PARAMS)
        assert screen.n == 50
        assert screen.mean == pytest.approx(x.mean(), rel=1e-12)
        # eq. 5 divides by n: scipy's variation uses ddof=0 by default.
        assert screen.cv == pytest.approx(stats.variation(x), rel=1e-12)
        assert screen.lag1 == pytest.approx(stats.pearsonr(x[:-1], x[1:]).statistic, rel=1e-10)
        assert screen.ks == pytest.approx(ks_reference(x), rel=1e-12)
        assert screen.ks_limit == pytest.approx(1.25 * 3.0 / math.sqrt(50))

    def test_hand_computed_small_series(self):
        """x = (1, 2, 3, 6): mean 3, population sd sqrt(14/4), CV sqrt(3.5)/3 = 0.6236;
        lag-1 of (1, 2, 3) vs (2, 3, 6): corr = 4 / sqrt(2 * 8.6667) = 0.9608."""
        screen = screen_series(np.array([1.0, 2.0, 3.0, 6.0]), PARAMS)
        assert screen.cv == pytest.approx(math.sqrt(3.5) / 3.0)
        assert screen.lag1 == pytest.approx(4.0 / math.sqrt(2.0 * 26.0 / 3.0))
        assert not screen.accepted and screen.reason == "lag1"

    def test_exponential_samples_are_accepted_in_most_seeds(self):
        # Measured: 200 / 200 seeds accepted (100 %) at n = 200 with Table I thresholds.
        accepted = [screen_series(np.random.default_rng(seed).exponential(600.0, 200),
                                  PARAMS).accepted for seed in range(200)]
        assert sum(accepted) >= 180

    def test_constant_series_is_rejected_by_cv_with_undefined_lag1(self):
        """All at the mean: the ECDF jumps 0 -> 1 where the fit is 1 - e^-1 = 0.632, below
        the n = 20 limit 3.75 / sqrt(20) = 0.839; CV 0 and lag-1 fail."""
        screen = screen_series(np.full(20, 60.0), PARAMS)
        assert screen.cv == 0.0 and screen.lag1 is None
        assert screen.ks == pytest.approx(1.0 - math.exp(-1.0))
        assert not screen.accepted and screen.reason == "cv,lag1"

    def test_zero_mean_series_has_no_cv_nor_ks(self):
        screen = screen_series(np.zeros(10), PARAMS)
        assert screen.mean == 0.0 and screen.cv is None and screen.ks is None
        assert not screen.accepted and screen.reason == "zero_mean,lag1"

    def test_strongly_autocorrelated_series_is_rejected_by_lag1(self):
        x = ar1_exponential(np.random.default_rng(7), 200, 0.95)
        screen = screen_series(x, PARAMS)
        assert screen.lag1 > 0.8
        assert not screen.accepted and "lag1" in screen.reason.split(",")

    def test_below_n_min_is_rejected_but_statistics_are_reported(self):
        screen = screen_series(np.array([10.0, 30.0]), PARAMS)
        assert screen.n == 2 and screen.mean == 20.0 and screen.lag1 is None
        assert not screen.accepted and screen.reason.startswith("n<n_min")

    def test_empty_series(self):
        assert screen_series(np.array([]), PARAMS) == ScreenResult(
            0, None, None, None, None, None, False, "n<n_min")

    def test_only_the_newest_n_max_are_screened(self):
        params = dataclasses.replace(PARAMS, n_max=5)
        x = np.array([1e6, 1e6, 3.0, 1.0, 4.0, 1.0, 5.0])
        assert screen_series(x, params) == screen_series(x[2:], params)

    def test_negative_sample_is_an_error(self):
        with pytest.raises(ValueError, match="finite and >= 0"):
            screen_series(np.array([1.0, -2.0, 3.0]), PARAMS)

    @settings(max_examples=50, deadline=None)
    @given(seed=st.integers(0, 2**32 - 1), scale=st.floats(1e-3, 1e6))
    def test_statistics_are_scale_free(self, seed, scale):
        x = np.random.default_rng(seed).exponential(1.0, 30)
        a, b = screen_series(x, PARAMS), screen_series(x * scale, PARAMS)
        assert b.cv == pytest.approx(a.cv, rel=1e-9)
        assert b.lag1 == pytest.approx(a.lag1, rel=1e-7, abs=1e-9)
        assert b.ks == pytest.approx(a.ks, rel=1e-9)
        assert a.accepted == b.accepted


class TestRecentWindow:
    def test_keeps_samples_within_t_m_bounds_inclusive(self):
        """now = 10000, T_M = 7200: times 2800 (exactly T_M old) and 10000 kept; 2799.9
        and the future 10001 left out."""
        times = np.array([0.0, 2799.9, 2800.0, 5000.0, 10000.0, 10001.0])
        values = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        assert recent_window(times, values, 10000.0, PARAMS).tolist() == [3.0, 4.0, 5.0]

    def test_burst_keeps_the_newest_n_max(self):
        params = dataclasses.replace(PARAMS, n_max=3)
        times = np.array([100.0, 100.0, 100.0, 100.0, 101.0])
        values = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
        assert recent_window(times, values, 200.0, params).tolist() == [3.0, 4.0, 5.0]

    def test_unsorted_times_are_an_error(self):
        with pytest.raises(ValueError, match="non-decreasing"):
            recent_window(np.array([2.0, 1.0]), np.array([1.0, 1.0]), 5.0, PARAMS)


class TestWorkloadAccepted:
    @pytest.mark.parametrize(("arrival", "service", "required", "expected"), [
        (True, True, True, True),
        (True, False, True, False),
        (False, True, True, False),
        (True, False, False, True),
        (False, True, False, False),
    ])
    def test_eq11(self, arrival, service, required, expected):
        params = dataclasses.replace(PARAMS, require_service_samples=required)
        assert workload_accepted(result(arrival), result(service), params) is expected


class TestSeriesWindow:
    def test_append_returns_a_new_window_with_read_only_arrays(self):
        empty = SeriesWindow.empty(PARAMS)
        one = empty.append(5.0, 2.0)
        assert len(empty) == 0 and one.values.tolist() == [2.0]
        with pytest.raises(ValueError):
            one.values[0] = 3.0

    def test_memory_is_bounded_by_n_max_and_t_m(self):
        window = SeriesWindow.empty(dataclasses.replace(PARAMS, n_max=4))
        for t in range(10):
            window = window.append(float(t), 1.0)
        assert window.times.tolist() == [6.0, 7.0, 8.0, 9.0]
        window = window.append(7206.0, 1.0)  # 7206 - 7200 = 6: only t = 6 .. stay
        assert window.times.tolist() == [7.0, 8.0, 9.0, 7206.0] and window.params.n_max == 4
        window = window.append(7208.0, 1.0)
        assert window.times.tolist() == [8.0, 9.0, 7206.0, 7208.0]

    def test_append_interval_builds_the_arrival_series_with_zero_gaps(self):
        window = SeriesWindow.empty(PARAMS)
        for t in (100.0, 160.0, 160.0, 400.0):
            window = window.append_interval(t)
        assert window.times.tolist() == [160.0, 160.0, 400.0]
        assert window.values.tolist() == [60.0, 0.0, 240.0]
        assert window.last_event_s == 400.0

    def test_time_going_back_is_an_error(self):
        window = SeriesWindow.empty(PARAMS).append(10.0, 1.0)
        with pytest.raises(ValueError, match="before the newest"):
            window.append(9.0, 1.0)

    def test_screen_uses_the_recent_window(self):
        rng = np.random.default_rng(3)
        window = SeriesWindow.empty(PARAMS)
        for t in np.cumsum(rng.exponential(60.0, 300)):
            window = window.append_interval(float(t))
        now = float(window.times[-1])
        expected = screen_series(recent_window(window.times, window.values, now, PARAMS),
                                 PARAMS)
        assert window.screen(now, PARAMS) == expected
        assert window.screen(now + 2 * PARAMS.t_m, PARAMS).reason == "n<n_min"

    def test_remembered_screen_is_the_screen_at_every_time(self):
        """One window screened at times that cross its samples' entries and exits (T_M
        after them), in the order an invocation sees them and out of it: the remembered
        result is reused only where the from-scratch screen is the same."""
        params = dataclasses.replace(PARAMS, t_m=100.0, n_max=6)
        window = SeriesWindow.empty(params)
        for t, v in ((10.0, 3.0), (20.0, 1.0), (20.0, 4.0), (35.0, 1.0), (50.0, 5.0),
                     (60.0, 9.0)):
            window = window.append(t, v)
        times = [0.0, 10.0, 19.0, 20.0, 60.0, 61.0, 110.0, 110.5, 120.0, 135.0, 135.0,
                 150.0, 161.0, 300.0, 61.0, 20.0, 5.0, 120.0, 110.0]
        for now in times:
            expected = screen_series(recent_window(window.times, window.values, now,
                                                   params), params)
            result, window = window.screened(now, params)  # kept, as the controller does
            assert result == expected, now


    def test_the_remembered_screen_is_set_by_screened(self):
        """An appended window has no remembered screen; :meth:`screened` returns the
        screen and a window remembering it, which answers while it holds and is the
        window itself then; a rebuilt window without it screens the same."""
        params = dataclasses.replace(PARAMS, t_m=100.0, n_min=2)
        window = SeriesWindow.empty(params)
        assert window.remembered is None
        window = window.append(10.0, 3.0).append(30.0, 5.0)
        assert window.remembered is None
        result, window = window.screened(30.0, params)
        assert result == screen_series(np.array([3.0, 5.0]), params)
        assert window.remembered.result == result
        assert window.remembered.holds(30.0, params.t_m)
        assert window.remembered.holds(110.0, params.t_m)  # t_m old: still in (closed)
        assert not window.remembered.holds(110.5, params.t_m)  # 10 has left
        assert window.screened(110.0, params)[1] is window
        later, moved = window.screened(110.5, params)
        assert moved is not window and moved.remembered.result == later
        other = dataclasses.replace(params, n_min=1)
        assert window.screened(30.0, other)[1] is window  # other params: not remembered
        bare = SeriesWindow(window.times, window.values, params)
        for now in (30.0, 60.0, 110.0, 200.0):
            assert window.screen(now, params) == bare.screen(now, params), now
        first = SeriesWindow.empty(params).append_interval(5.0)
        assert len(first) == 0 and first.remembered is None and first.last_event_s == 5.0


def numpy_statistics(x: np.ndarray) -> tuple[float, float | None, float | None, float | None]:
    """The long-series statistics as numpy's wrappers compute them (the first code)."""
    mean = float(np.mean(x))
    cv = float(np.std(x) / mean) if mean > 0.0 else None
    left, right = x[:-1], x[1:]
    lag1 = None
    if not (np.ptp(left) == 0.0 or np.ptp(right) == 0.0):
        dl, dr = left - left.mean(), right - right.mean()
        lag1 = float(np.clip(np.dot(dl, dr) / math.sqrt(np.dot(dl, dl) * np.dot(dr, dr)),
                             -1.0, 1.0))
    ks = None
    if mean > 0.0:
        cdf = -np.expm1(-np.sort(x) / mean)
        ranks = np.arange(1, len(x) + 1) / len(x)
        ks = float(max(np.max(ranks - cdf), np.max(cdf - (ranks - 1.0 / len(x)))))
    return mean, cv, lag1, ks


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [49, 64, 130, 257, 1000])
def test_long_series_statistics_are_numpys_to_the_bit(seed, n):
    """Above 48 samples the statistics are numpy's (pairwise sums): the same numbers as
    ``np.mean``, ``np.std`` and ``np.dot``, bit for bit (rounded gaps, constant and
    one-change series too)."""
    rng = np.random.default_rng(seed)
    cases = [rng.exponential(300.0, n), np.round(rng.exponential(60.0, n)), np.zeros(n),
             np.full(n, 7.0), np.r_[np.full(n - 1, 7.0), 9.0], np.r_[9.0, np.full(n - 1, 7.0)]]
    for x in cases:
        result = screen_series(x, PARAMS)
        assert (result.mean, result.cv, result.lag1, result.ks) == numpy_statistics(x)
