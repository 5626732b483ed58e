r"""The Markovianity screen (paper, eq. 5-10) against scipy and numpy.

``screen_series`` computes its statistics with plain floats up to
``SMALL_SERIES`` (48) samples and with numpy above; both paths are checked against
independent sources on hypothesis-generated series:

- KS distance (eq. 10): ``scipy.stats.kstest(x, "expon", args=(0, mean))``, the
  two-sided distance to the exponential CDF fitted by its mean, 1 - exp(-x / mean);
- lag-1 autocorrelation (eq. 7-8): ``numpy.corrcoef(x[:-1], x[1:])``, the Pearson
  correlation of the lagged subsequences;
- CV (eq. 5): ``numpy.std(x) / numpy.mean(x)``; the screen divides by n (ddof = 0), the
  choice ``snficon.core.screen`` documents as the authors' code's;
- the window (section IV-A): the samples with ``now - T_M <= t <= now`` by a numpy mask
  over every sample ever appended, the newest ``n_max`` of them.

Each single-rule rejection is checked three ways: the independent statistics put the
window outside that rule's bound and inside the other two, the screen names that rule
alone, and relaxing that rule's bound alone makes the screen accept the window.

Series are drawn on a grid of 1e-3 s so that a non-constant lagged subsequence is never
constant up to rounding (where Pearson's formula is ill-conditioned and two correct
implementations may differ in every digit).
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
    REASON_CV,
    REASON_KS,
    SMALL_SERIES,
    SeriesWindow,
    screen_series,
)

SETTINGS = dict(derandomize=True, database=None, deadline=None)
PARAMS = IconParams()  # Table I: delta_cv 0.45, delta_rho 0.65, kappa_m 1.25, kappa_0 3

MILLIS = st.integers(0, 10**7).map(lambda k: k / 1000.0)  # 0 to 1e4 s, 1e-3 s grid


def series(low: int, high: int) -> st.SearchStrategy:
    return st.lists(MILLIS, min_size=low, max_size=high).map(np.array)


SHORT = series(1, SMALL_SERIES)
LONG = series(SMALL_SERIES + 1, 400)


def check_against_scipy_and_numpy(x: np.ndarray, result=None, params=PARAMS) -> None:
    """The screen's statistics of ``x`` (``result``, else ``screen_series(x)``) against
    scipy's KS distance and numpy's mean, CV and lag-1 correlation."""
    result = screen_series(x, params) if result is None else result
    n = len(x)
    assert result.n == n
    mean = float(np.mean(x))
    assert result.mean == pytest.approx(mean, rel=1e-12)
    if mean == 0.0:
        assert result.cv is None and result.ks is None
    else:
        assert result.cv == pytest.approx(float(np.std(x) / mean), rel=1e-9, abs=1e-12)
        expected_ks = stats.kstest(x, "expon", args=(0.0, mean)).statistic
        assert result.ks == pytest.approx(expected_ks, rel=1e-9, abs=1e-12)
    assert result.ks_limit == pytest.approx(params.kappa_m * params.kappa_0 / math.sqrt(n))
    left, right = x[:-1], x[1:]
    if n >= 3 and np.ptp(left) > 0.0 and np.ptp(right) > 0.0:
        expected_lag1 = float(np.corrcoef(left, right)[0, 1])
        assert result.lag1 == pytest.approx(expected_lag1, rel=1e-7, abs=1e-9)
        lag1_fails = abs(expected_lag1) > params.delta_rho
        near = [abs(abs(expected_lag1) - params.delta_rho)]
    else:
        assert result.lag1 is None  # undefined correlation: the screen reports none
        lag1_fails, near = True, []
    # The verdict (Definition 4) from the independent statistics: every failed rule named.
    expected = {"n<n_min"} if n < params.n_min else set()
    if mean == 0.0:
        expected.add("zero_mean")
    else:
        cv = float(np.std(x) / mean)
        ks_limit = params.kappa_m * params.kappa_0 / math.sqrt(n)
        expected |= {"cv"} if abs(cv - 1.0) > params.delta_cv else set()
        expected |= {"ks"} if expected_ks > ks_limit else set()
        near += [abs(abs(cv - 1.0) - params.delta_cv), abs(expected_ks - ks_limit)]
    expected |= {"lag1"} if lag1_fails else set()
    if min(near, default=1.0) > 1e-9:  # no statistic on a bound up to rounding
        assert set(filter(None, result.reason.split(","))) == expected, (result, expected)
        assert result.accepted == (not expected)


class TestStatistics:
    @settings(max_examples=150, **SETTINGS)
    @given(SHORT)
    def test_short_series_plain_floats(self, x):
        check_against_scipy_and_numpy(x)

    @settings(max_examples=60, **SETTINGS)
    @given(LONG)
    def test_long_series_numpy(self, x):
        check_against_scipy_and_numpy(x)

    @settings(max_examples=60, **SETTINGS)
    @given(st.sampled_from([5, 30, SMALL_SERIES, SMALL_SERIES + 1, 200]),
           st.integers(0, 2**32 - 1))
    def test_exponential_samples(self, n, seed):
        """Continuous exponential samples (no grid): the case the screen is made for."""
        x = np.random.default_rng(seed).exponential(600.0, n)
        check_against_scipy_and_numpy(x)


#: Steps between samples (whole seconds; zero: simultaneous samples) and their values.
STEP = st.one_of(st.just(0), st.integers(0, 60), st.integers(0, 4000))
WINDOW_GAPS = st.lists(st.tuples(STEP, MILLIS), min_size=0, max_size=120)


class TestWindows:
    @settings(max_examples=80, **SETTINGS)
    @given(WINDOW_GAPS, st.sampled_from([600.0, 7200.0, 20000.0]), st.sampled_from([3, 10, 60]),
           st.integers(0, 3000), st.integers(-1, 119), st.booleans())
    def test_window_screen_against_a_mask(self, gaps, t_m, n_max, after, edge, intervals):
        """Samples appended one by one, then screened at a later time (``SeriesWindow``).

        Times advance by whole seconds (zero steps included: simultaneous samples). The
        screen comes ``after`` s after the last sample, or, when sample ``edge`` exists and
        that is later, exactly T_M after it (a sample exactly T_M old counts). With
        ``intervals`` the window records the gaps between events (the arrival series);
        otherwise the drawn values.
        """
        params = IconParams(t_m=t_m, n_max=n_max, n_min=1)
        window = SeriesWindow.empty(params)
        times, values, now, previous = [], [], 0.0, None
        for step, value in gaps:
            now += step
            if intervals:
                window = window.append_interval(now)
                if previous is not None:
                    times.append(now)
                    values.append(now - previous)
                previous = now
            else:
                window = window.append(now, value)
                times.append(now)
                values.append(value)
        now += after
        if 0 <= edge < len(times):
            now = max(now, times[edge] + t_m)
        t, v = np.array(times), np.array(values)
        expected = v[(t >= now - t_m) & (t <= now)][-n_max:] if len(v) else v
        result = window.screen(now, params)
        assert result.n == len(expected)
        if len(expected):
            check_against_scipy_and_numpy(expected, result, params)
        else:
            assert result.mean is None and not result.accepted

    def test_sample_exactly_t_m_old_at_the_newest(self):
        """Samples at 0, 300 and 600 s with T_M = 600 s, screened at 600 s: all three are in
        the closed window [0, 600] (section IV-A), so appending the third keeps the first."""
        params = IconParams(t_m=600.0, n_min=1)
        window = SeriesWindow.empty(params)
        for time, value in ((0.0, 5.0), (300.0, 7.0), (600.0, 9.0)):
            window = window.append(time, value)
        result = window.screen(600.0, params)
        check_against_scipy_and_numpy(np.array([5.0, 7.0, 9.0]), result, params)
        assert window.screen(600.5, params).n == 2


def rule_failures(x: np.ndarray, params: IconParams) -> set[str]:
    """The rules of eq. 6, 9, 10 that ``x`` fails, from numpy and scipy alone."""
    mean = float(np.mean(x))
    failed = set()
    if abs(float(np.std(x)) / mean - 1.0) > params.delta_cv:
        failed.add("cv")
    if abs(float(np.corrcoef(x[:-1], x[1:])[0, 1])) > params.delta_rho:
        failed.add("lag1")
    limit = params.kappa_m * params.kappa_0 / math.sqrt(len(x))
    if stats.kstest(x, "expon", args=(0.0, mean)).statistic > limit:
        failed.add("ks")
    return failed


def assert_rejected_only_by(x: np.ndarray, reason: str, relaxed: IconParams) -> None:
    """Only rule ``reason`` rejects ``x``: by the independent statistics, by the screen's
    reason, and because the screen accepts ``x`` once that rule alone is relaxed."""
    assert len(x) >= PARAMS.n_min
    assert rule_failures(x, PARAMS) == {reason}
    result = screen_series(x, PARAMS)
    assert not result.accepted
    assert result.reason == reason
    assert rule_failures(x, relaxed) == set()
    assert screen_series(x, relaxed).accepted


class TestSingleRuleRejections:
    def test_only_ks_rejects(self):
        r"""Half zeros, half twos, in the pattern 0, 0, 2, 2 repeated (n = 64, numpy path).

        Mean 1 and (dividing by n) variance 1, so CV = 1 exactly: eq. 6 passes. The
        pattern's lagged pairs (0,0), (0,2), (2,2), (2,0) have deviation products +1, -1,
        +1, -1, which cancel: over 64 samples rho_1 = 1/62 = 0.016 (eq. 9 passes). But the
        empirical CDF jumps to 1/2 at 0 where the fitted 1 - e^{-x} is 0, so
        D_n = 0.5 > kappa_m kappa_0 / sqrt(n) = 3.75 / 8 = 0.469 (eq. 10 rejects).
        """
        x = np.array([0.0, 0.0, 2.0, 2.0] * 16)
        result = screen_series(x, PARAMS)
        assert len(x) > SMALL_SERIES
        assert result.cv == pytest.approx(1.0)
        assert result.lag1 == pytest.approx(1 / 62)
        assert result.ks == pytest.approx(0.5)
        assert result.ks_limit == pytest.approx(0.46875)
        assert_rejected_only_by(x, REASON_KS, dataclasses.replace(PARAMS, kappa_0=4.0))

    def test_only_cv_rejects(self):
        r"""1, 2, ..., 20 s in the order 1 + (7 i mod 20) (n = 20, plain path).

        Mean 10.5, standard deviation sqrt((20^2 - 1) / 12) = 5.766 (dividing by n), so
        CV = 0.5492 and |CV - 1| = 0.4508: just above delta_cv = 0.45 (eq. 6 rejects). The
        stride 7 scrambles the order: rho_1 = -0.344, within delta_rho = 0.65 (eq. 9
        passes). The KS distance sits just below 7, where the empirical CDF is 6/20 and
        the fitted 1 - e^{-7/10.5} = 0.487: D_n = 0.187 <= 3.75 / sqrt(20) = 0.839 (eq. 10
        passes). With delta_cv = 0.46 the window is accepted.
        """
        x = 1.0 + np.array([(7 * i) % 20 for i in range(20)], dtype=float)
        result = screen_series(x, PARAMS)
        assert len(x) <= SMALL_SERIES
        # sqrt(399 / 12) / 10.5, and numpy.corrcoef(x[:-1], x[1:]) of this series
        assert result.cv == pytest.approx(math.sqrt(399 / 12) / 10.5)
        assert result.lag1 == pytest.approx(-0.3444475, rel=1e-6)
        assert result.ks == pytest.approx(1.0 - math.exp(-7.0 / 10.5) - 6 / 20)
        assert result.ks_limit == pytest.approx(3.75 / math.sqrt(20))
        assert_rejected_only_by(x, REASON_CV, dataclasses.replace(PARAMS, delta_cv=0.46))
