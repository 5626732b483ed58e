"""Lemma 2 (paper Appendix B, eq. 59): phi(d; lam_E) = E[(d - T)^+]
= d - (1 - exp(-lam_E d)) / lam_E, T ~ Exp(lam_E).

Checked against 10^6 seeded exponential samples (5 standard errors) and against the
integral of eq. 61 by scipy quadrature, including rates small enough that the closed form
cancels (the implementation switches to a series there).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from snficon.core.event_horizon import expected_unfinished

CASES = [(1200.0, 1 / 600), (600.0, 1 / 3600), (30.0, 0.1), (4.0, 2.0)]


def tail_integral(d: float, rate: float) -> float:
    """eq. 61: the integral over [0, d] of P(T < v) = 1 - exp(-rate v)."""
    value, _ = integrate.quad(lambda v: -np.expm1(-rate * v), 0.0, d, epsabs=0, epsrel=1e-13)
    return value


class TestExpectedUnfinished:
    @pytest.mark.parametrize(("d", "rate"), CASES)
    def test_monte_carlo(self, d, rate):
        rng = np.random.default_rng(20240602)
        left = np.maximum(d - rng.exponential(1.0 / rate, 10**6), 0.0)
        standard_error = left.std() / np.sqrt(len(left))
        assert abs(left.mean() - expected_unfinished(d, rate)) < 5 * standard_error

    @pytest.mark.parametrize(("d", "rate"), CASES)
    def test_tail_integral(self, d, rate):
        assert expected_unfinished(d, rate) == pytest.approx(tail_integral(d, rate), rel=1e-12)

    @pytest.mark.parametrize("x", [1e-12, 1e-7, 1e-4, 0.999e-3, 1.001e-3, 0.05])
    def test_small_rate_times_d(self, x):
        d = 1200.0
        assert expected_unfinished(d, x / d) == pytest.approx(tail_integral(d, x / d), rel=1e-11)

    def test_limits(self):
        assert expected_unfinished(0.0, 1.0) == 0.0
        assert expected_unfinished(1200.0, 0.0) == 0.0
        assert expected_unfinished(1200.0, 1e9) == pytest.approx(1200.0, rel=1e-9)
        d = np.linspace(0.0, 1200.0, 13)
        phi = expected_unfinished(d, 1 / 600)
        assert np.all(phi <= d) and np.all(np.diff(phi) > 0)
