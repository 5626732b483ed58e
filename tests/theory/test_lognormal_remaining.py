"""Appendix A's runtime model against the log-normal it assumes (eq. 46-51).

Eq. 46 is checked against scipy's log-normal median, eq. 51 against its mean, eq. 50
against Monte Carlo (seeded, 10^6 draws, relative error < 1 %) and, for huge overruns,
against a quadrature of the survival function. Properties (hypothesis) follow from the
model: E[D | D > e] > e gives R > 0; E[D | D > e] is non-decreasing in e; D scales with
tau, so R(c tau, c e) = c R(tau, e); and since the normal Mills ratio is log-convex
(Baricz, J. Math. Anal. Appl. 340, 2008), R is non-decreasing in tau at fixed e.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from scipy.special import log_ndtr

from snficon.core.estimators import (
    Estimates,
    predicted_duration,
    remaining_time,
    remaining_times,
)
from snficon.core.params import IconParams

P = IconParams()
N_DRAWS = 10**6


def fitted(m_y: float, sigma: float) -> Estimates:
    """A state whose log ratio is N(m_y, sigma^2): q_Y = m_Y^2 + sigma^2 (eq. 45)."""
    return replace(Estimates.initial(4, P), m_y=m_y, q_y=m_y * m_y + sigma * sigma,
                   n_ratios=1)


def lognormal(tau: float, m_y: float, sigma: float):
    """log D ~ N(log tau + m_Y, sigma^2) (eq. 47) as a scipy distribution."""
    return stats.lognorm(s=sigma, scale=tau * math.exp(m_y))


def survival_quadrature(tau: float, m_y: float, sigma: float, elapsed: float) -> float:
    """E[D - e | D > e] = int_e^inf S(x) dx / S(e), by quadrature over w = log(x / e).

    The integrand exp(w) S(e e^w) / S(e) is evaluated in log space (log_ndtr) and
    decays like a Gaussian in w, so a finite range suffices.
    """
    zeta = (math.log(elapsed) - math.log(tau) - m_y) / sigma
    log_s0 = log_ndtr(-zeta)

    def integrand(w: float) -> float:
        return math.exp(w + log_ndtr(-(zeta + w / sigma)) - log_s0)

    end = sigma * (abs(zeta) + sigma + 40.0)
    value, _ = integrate.quad(integrand, 0.0, end, epsabs=0.0, epsrel=1e-12, limit=400)
    return elapsed * value


class TestClosedForms:
    @pytest.mark.parametrize(("m_y", "sigma"), [(0.0, 0.25), (-0.7, 0.9), (1.2, 2.0)])
    def test_eq46_is_the_lognormal_median(self, m_y, sigma):
        tau = 5400.0
        assert predicted_duration(fitted(m_y, sigma), tau, P) == pytest.approx(
            lognormal(tau, m_y, sigma).median(), rel=1e-12)

    @pytest.mark.parametrize(("m_y", "sigma"), [(0.0, 0.25), (-0.7, 0.9), (1.2, 2.0)])
    def test_eq51_is_the_lognormal_mean(self, m_y, sigma):
        tau = 5400.0
        mean = lognormal(tau, m_y, sigma).mean()
        est = fitted(m_y, sigma)
        assert remaining_time(est, tau, 0.0, P) == pytest.approx(mean, rel=1e-12)
        # eq. 50 tends to eq. 51 as the elapsed time tends to 0.
        assert remaining_time(est, tau, 1e-9, P) == pytest.approx(mean, rel=1e-6)


class TestMonteCarlo:
    """eq. 50 against 10^6 seeded draws; the standard error is about 0.1 % here."""

    M_Y, SIGMA, TAU = -0.3, 0.6, 3600.0

    @pytest.mark.parametrize("elapsed", [0.0, 600.0, 3600.0])
    def test_rejection_sampling(self, elapsed):
        rng = np.random.default_rng(20240611)
        draws = lognormal(self.TAU, self.M_Y, self.SIGMA).rvs(N_DRAWS, random_state=rng)
        survivors = draws[draws > elapsed]
        assert len(survivors) > 3 * 10**5  # P(D > e) >= 0.3 for these pairs
        expected = float(np.mean(survivors - elapsed))
        got = remaining_time(fitted(self.M_Y, self.SIGMA), self.TAU, elapsed, P)
        assert got == pytest.approx(expected, rel=0.01)

    @pytest.mark.parametrize(("tau", "elapsed"), [(3600.0, 7200.0), (3600.0, 20000.0),
                                                  (60.0, 6000.0), (86400.0, 86400.0)])
    def test_truncated_sampling(self, tau, elapsed):
        # Draw log D given D > e directly: V = (log D - theta) / sigma ~ N(0, 1) on (zeta, inf).
        rng = np.random.default_rng(7)
        theta = math.log(tau) + self.M_Y
        zeta = (math.log(elapsed) - theta) / self.SIGMA
        v = stats.truncnorm(zeta, np.inf).rvs(N_DRAWS, random_state=rng)
        expected = float(np.mean(np.exp(theta + self.SIGMA * v) - elapsed))
        got = remaining_time(fitted(self.M_Y, self.SIGMA), tau, elapsed, P)
        assert got == pytest.approx(expected, rel=0.01)


class TestHugeOverrun:
    @pytest.mark.parametrize("sigma", [0.25, 0.6, 2.0])
    def test_million_times_the_request(self, sigma):
        tau = 3600.0
        elapsed = 1e6 * tau
        got = remaining_time(fitted(0.0, sigma), tau, elapsed, P)
        assert math.isfinite(got) and got > 0.0
        assert got == pytest.approx(survival_quadrature(tau, 0.0, sigma, elapsed), rel=1e-8)

    def test_far_beyond_any_request(self):
        # zeta ~ 2700: the asymptotic branch; R ~ e sigma / zeta (Mills ratio ~ 1/x).
        tau, elapsed, sigma = 1.0, 1e300, 0.25
        got = remaining_time(fitted(0.0, sigma), tau, elapsed, P)
        zeta = math.log(elapsed) / sigma
        assert math.isfinite(got) and got == pytest.approx(elapsed * sigma / zeta, rel=1e-4)

    def test_vectorised_over_all_regimes(self):
        est = fitted(0.2, 0.5)
        elapsed = np.geomspace(1e-6, 1e12, 200)
        got = remaining_times(est, np.full(200, 100.0), elapsed, P)
        assert np.all(np.isfinite(got)) and np.all(got > 0.0)


# Hypothesis: requests 1 s .. ~11 days, elapsed from 0 to 10^6 x request, m_Y, sigma.
taus = st.floats(1.0, 1e6)
log_ratios = st.floats(-12.0, math.log(1e6))
m_ys = st.floats(-3.0, 3.0)
sigmas = st.floats(0.25, 3.0)


class TestProperties:
    @settings(max_examples=200, deadline=None)
    @given(taus, log_ratios, m_ys, sigmas)
    def test_positive_and_finite(self, tau, log_ratio, m_y, sigma):
        got = remaining_time(fitted(m_y, sigma), tau, tau * math.exp(log_ratio), P)
        assert math.isfinite(got) and got > 0.0

    @settings(max_examples=200, deadline=None)
    @given(taus, log_ratios, st.floats(1e-3, 2.0), m_ys, sigmas)
    def test_conditional_total_non_decreasing_in_elapsed(self, tau, log_ratio, step, m_y,
                                                         sigma):
        est = fitted(m_y, sigma)
        e1 = tau * math.exp(log_ratio)
        e2 = e1 * math.exp(step)
        total1 = e1 + remaining_time(est, tau, e1, P)
        total2 = e2 + remaining_time(est, tau, e2, P)
        assert total2 >= total1 * (1.0 - 1e-12)
        assert total1 >= remaining_time(est, tau, 0.0, P) * (1.0 - 1e-12)  # >= E[D]

    @settings(max_examples=200, deadline=None)
    @given(taus, log_ratios, st.floats(1e-3, 2.0), m_ys, sigmas)
    def test_non_decreasing_in_request(self, tau, log_ratio, step, m_y, sigma):
        est = fitted(m_y, sigma)
        elapsed = tau * math.exp(log_ratio)
        longer = tau * math.exp(step)
        assert (remaining_time(est, longer, elapsed, P)
                >= remaining_time(est, tau, elapsed, P) * (1.0 - 1e-12))

    @settings(max_examples=200, deadline=None)
    @given(taus, log_ratios, st.floats(-5.0, 5.0), m_ys, sigmas)
    def test_scale_equivariance(self, tau, log_ratio, log_c, m_y, sigma):
        est = fitted(m_y, sigma)
        elapsed = tau * math.exp(log_ratio)
        c = math.exp(log_c)
        assert remaining_time(est, c * tau, c * elapsed, P) == pytest.approx(
            c * remaining_time(est, tau, elapsed, P), rel=1e-9)
