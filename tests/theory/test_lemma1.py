"""Lemma 1 (paper eq. 25): H = E[min(T, H_c)] = (1 - exp(-lam_E H_c)) / lam_E, T ~ Exp(lam_E).

Checked against 10^6 seeded exponential samples (5 standard errors) and against the
tail integral of eq. 26 by scipy quadrature.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from snficon.core.event_horizon import capped_horizon

CASES = [(1 / 600, 7200.0), (1 / 3600, 1800.0), (0.5, 3.0), (1 / 7200, 7200.0)]


class TestCappedHorizon:
    @pytest.mark.parametrize(("rate", "cap"), CASES)
    def test_monte_carlo(self, rate, cap):
        rng = np.random.default_rng(20240601)
        capped = np.minimum(rng.exponential(1.0 / rate, 10**6), cap)
        standard_error = capped.std() / np.sqrt(len(capped))
        assert abs(capped.mean() - capped_horizon(rate, cap)) < 5 * standard_error

    @pytest.mark.parametrize(("rate", "cap"), CASES)
    def test_tail_integral(self, rate, cap):
        # eq. 26: integral over [0, H_c] of P(T > u) = exp(-rate u)
        value, _ = integrate.quad(lambda u: np.exp(-rate * u), 0.0, cap, epsabs=0, epsrel=1e-13)
        assert capped_horizon(rate, cap) == pytest.approx(value, rel=1e-12)

    def test_small_rates_tend_to_the_cap(self):
        for rate in (1e-9, 1e-14, 1e-300, 0.0):
            assert capped_horizon(rate, 86400.0) == pytest.approx(86400.0, rel=1e-4)
        assert capped_horizon(1e-14, 86400.0) == pytest.approx(86400.0 * (1 - 4.32e-10),
                                                               rel=1e-15)

    def test_bounded_by_the_cap_and_the_mean(self):
        rates = np.geomspace(1e-6, 10.0, 50)
        horizon = capped_horizon(rates, 1000.0)
        assert np.all(horizon <= 1000.0) and np.all(horizon <= 1.0 / rates * (1 + 1e-15))
        assert np.all(np.diff(horizon) < 0)
