"""The event horizon of the spare search (paper, eq. 20-25 and 59, Lemmas 1-2).

Hand values are worked out from eq. 25 and 59 in the comments; ``tests/theory`` checks
Lemmas 1 and 2 against Monte Carlo.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from snficon.core.event_horizon import (
    capped_horizon,
    completion_rate,
    event_rates,
    expected_unfinished,
)


class TestCappedHorizon:
    def test_value_and_limits(self):
        # 100 (1 - e^-1) = 63.21205588285577 (eq. 25 with rate 1/100, H_c 100)
        assert capped_horizon(0.01, 100.0) == pytest.approx(63.21205588285577, rel=1e-14)
        assert capped_horizon(0.0, 100.0) == 100.0
        assert capped_horizon(1e-18, 100.0) == pytest.approx(100.0, rel=1e-14)
        assert capped_horizon(2.0, 0.0) == 0.0
        assert capped_horizon(np.array([0.0, 0.01]), 100.0) == pytest.approx([100.0, 63.2120558])


class TestExpectedUnfinished:
    def test_value_and_limits(self):
        # phi(d; 1/d) = d - d (1 - e^-1) = d / e (eq. 59)
        assert expected_unfinished(100.0, 0.01) == pytest.approx(100.0 / math.e, rel=1e-14)
        assert expected_unfinished(0.0, 0.5) == 0.0
        assert expected_unfinished(30.0, 0.0) == 0.0
        assert expected_unfinished(30.0, 1e12) == pytest.approx(30.0, rel=1e-9)
        assert expected_unfinished(np.array([0.0, 100.0]), 0.01) == pytest.approx(
            [0.0, 100.0 / math.e])


#: Times and rates around the branches of eq. 25 and 59 (x = rate d against 0 and 1e-3).
EDGE_TIMES = [0.0, -1.0, 1e-12, 1e-4, 0.5, 0.999, 1.0, 1.001, 10.0, 30.0, 3600.0, 1e9,
              math.inf, math.nan]
EDGE_RATES = [0.0, 1e-15, 1e-6, 1e-3, 1.0 / 3.0, 1.0, 7.0, 1e6, math.inf]


def same_doubles(got, want) -> bool:
    """Equal bit for bit (nan included)."""
    return np.array_equal(np.asarray(got).view(np.uint64), np.asarray(want).view(np.uint64))


class TestScalarsAndArrays:
    """Scalars and up to 16 times are computed on floats: the doubles of the array formula
    (more than 16 times)."""

    @pytest.mark.parametrize("rate", EDGE_RATES)
    def test_expected_unfinished(self, rate):
        many = np.array(EDGE_TIMES * 3)  # more than the float path takes
        with np.errstate(invalid="ignore"):  # inf x 0 in the array formula
            whole = expected_unfinished(many, rate)
        one_by_one = [expected_unfinished(d, rate) for d in EDGE_TIMES]
        assert all(isinstance(phi, float) for phi in one_by_one)
        assert same_doubles(one_by_one, whole[:len(EDGE_TIMES)])
        assert same_doubles(expected_unfinished(np.array(EDGE_TIMES), rate),
                            whole[:len(EDGE_TIMES)])

    @pytest.mark.parametrize("rate", EDGE_RATES)
    def test_capped_horizon(self, rate):
        caps = [c for c in EDGE_TIMES if not c < 0.0]
        with np.errstate(invalid="ignore"):
            whole = capped_horizon(np.asarray(rate), np.array(caps))
        one_by_one = [capped_horizon(rate, cap) for cap in caps]
        assert all(isinstance(h, float) for h in one_by_one)
        assert same_doubles(one_by_one, whole)


class TestCompletionRate:
    def test_nearest_usable_prediction(self):
        # eq. 20-22: 0 and inf are not usable; min of (50, 20) = 20
        assert completion_rate([50.0, 0.0, np.inf, 20.0], mu=0.5) == pytest.approx(1 / 20)

    def test_aggregate_branch(self):
        assert completion_rate([0.0, np.inf], mu=0.01) == pytest.approx(0.02)
        assert completion_rate([0.0], mu=0.01, n_act=3) == pytest.approx(0.03)
        assert completion_rate([], mu=0.01) == 0.0


class TestEventRates:
    def test_rates(self):
        assert event_rates(0.01, 0.03) == pytest.approx((0.25, 0.04))
        assert event_rates(0.0, 0.0) == (0.0, 0.0)
