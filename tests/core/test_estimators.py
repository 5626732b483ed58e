"""Tests of snficon/core/estimators.py: the EMA updates of section IV-D, worked by hand.

Every expected number below is computed by hand from eq. 17-19 and 41-46 with the
Table I defaults (lambda0 = 1/3600, rho_A = 0.2, rho_S = rho_R = 0.1, sigma_min = 0.25,
epsilon = 1e-9) unless a test overrides them.
"""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.core.estimators import (
    Estimates,
    arrival_rate,
    median_ratio,
    on_arrival,
    on_completion,
    predicted_duration,
    remaining_time,
    remaining_times,
    request_pmf,
    service_rate,
    sigma_y,
)
from snficon.core.params import IconParams

P = IconParams()


def fitted(m_y: float, sigma: float, nb_nodes: int = 4) -> Estimates:
    """A state whose log-ratio model is N(m_y, sigma^2) (q_Y = m_Y^2 + sigma^2)."""
    return replace(Estimates.initial(nb_nodes, P), m_y=m_y, q_y=m_y * m_y + sigma * sigma,
                   n_ratios=1)


class TestInitial:
    def test_state(self):
        est = Estimates.initial(8, P)
        assert est.m_a == pytest.approx(3600.0)
        assert est.m_s is None and est.m_s_req is None and est.m_y is None
        assert est.weights == ()
        assert (est.n_arrivals, est.n_services, est.n_ratios) == (0, 0, 0)

    def test_rates_before_any_event(self):
        est = Estimates.initial(8, P)
        assert arrival_rate(est, P) == pytest.approx(1.0 / 3600.0)  # lambda0
        assert service_rate(est, P) == 0.0  # eq. 18, neither EMA available
        np.testing.assert_array_equal(request_pmf(est), [1, 0, 0, 0, 0, 0, 0, 0])  # w_1 = 1

    def test_frozen(self):
        with pytest.raises(FrozenInstanceError):
            Estimates.initial(2, P).m_a = 1.0  # type: ignore[misc]

    def test_bad_arguments(self):
        with pytest.raises(ValueError, match="nb_nodes"):
            Estimates.initial(0, P)
        with pytest.raises(ValueError, match="lambda0"):
            Estimates.initial(2, IconParams(lambda0=0.0))


class TestOnArrival:
    def test_first_arrival(self):
        est = on_arrival(Estimates.initial(4, P), None, 3, 100.0, P)
        assert est.m_a == pytest.approx(3600.0)  # no gap yet: m_A unchanged
        assert est.weights == ((3, 1.0),)  # w_{r0} = 1
        assert est.m_s_req == 100.0  # first proxy initialises m_S^req
        assert est.n_arrivals == 1
        assert service_rate(est, P) == pytest.approx(0.01)  # 1 / m_S^req
        np.testing.assert_allclose(request_pmf(est), [0, 0, 1, 0])

    def test_sequence_by_hand(self):
        est = on_arrival(Estimates.initial(4, P), None, 4, 100.0, P)
        est = on_arrival(est, 0.0, 2, 300.0, P)  # a zero gap is kept
        assert est.m_a == pytest.approx(0.8 * 3600.0)  # 2880
        assert arrival_rate(est, P) == pytest.approx(1.0 / 2880.0)
        np.testing.assert_allclose(request_pmf(est), [0, 0.1, 0, 0.9])
        assert est.m_s_req == pytest.approx(0.1 * 300.0 + 0.9 * 100.0)  # 120
        est = on_arrival(est, 100.0, 2, 0.0, P)  # no usable request: m_S^req kept
        assert est.m_a == pytest.approx(0.2 * 100.0 + 0.8 * 2880.0)  # 2324
        np.testing.assert_allclose(request_pmf(est), [0, 0.19, 0, 0.81])
        assert est.m_s_req == pytest.approx(120.0)
        assert est.n_arrivals == 3

    def test_epsilon_floor_of_the_arrival_rate(self):
        params = IconParams(rho_a=1.0)
        est = on_arrival(on_arrival(Estimates.initial(2, params), None, 1, 1.0, params),
                         0.0, 1, 1.0, params)
        assert est.m_a == 0.0
        assert arrival_rate(est, params) == pytest.approx(1e9)  # 1 / epsilon

    def test_pruning_and_renormalisation(self):
        # rho_R = 0.5, tolerance 0.1: w_1 decays 1, .5, .25, .125, .0625 -> pruned.
        params = IconParams(rho_r=0.5, epsilon=0.1)
        est = on_arrival(Estimates.initial(3, params), None, 1, 1.0, params)
        est = on_arrival(est, 1.0, 2, 1.0, params)
        assert est.weights == ((1, 0.5), (2, 0.5))
        for _ in range(2):
            est = on_arrival(est, 1.0, 2, 1.0, params)
        assert est.weights == ((1, 0.125), (2, 0.875))
        est = on_arrival(est, 1.0, 2, 1.0, params)
        # .0625 <= .1 is dropped; the survivor .9375 is renormalised to 1.
        assert est.weights == ((2, 1.0),)
        np.testing.assert_array_equal(request_pmf(est), [0, 1, 0])

    def test_weights_stay_a_distribution(self):
        est = Estimates.initial(16, P)
        rng = np.random.default_rng(5)
        for k, r in enumerate(rng.integers(1, 17, size=400)):
            est = on_arrival(est, None if k == 0 else 1.0, int(r), 1.0, P)
            assert sum(w for _, w in est.weights) == pytest.approx(1.0)
            assert all(w > P.epsilon for _, w in est.weights)
        assert request_pmf(est).sum() == pytest.approx(1.0)

    @pytest.mark.parametrize("gap", [-1.0, math.inf, math.nan])
    def test_bad_gap(self, gap):
        with pytest.raises(ValueError, match="interarrival"):
            on_arrival(Estimates.initial(2, P), gap, 1, 1.0, P)

    @pytest.mark.parametrize("res", [0, 3])
    def test_bad_request(self, res):
        with pytest.raises(ValueError, match=r"res must be in \[1, 2\]"):
            on_arrival(Estimates.initial(2, P), None, res, 1.0, P)


class TestOnCompletion:
    def test_two_completions_by_hand(self):
        est = on_arrival(Estimates.initial(4, P), None, 1, 1000.0, P)
        est = on_completion(est, 50.0, 100.0, P)
        assert est.m_s == 50.0  # the first sample initialises m_S ...
        assert service_rate(est, P) == pytest.approx(1 / 50.0)  # ... which replaces m_S^req
        y1 = math.log(0.5)
        assert (est.m_y, est.q_y) == (pytest.approx(y1), pytest.approx(y1 * y1))
        assert sigma_y(est, P) == 0.25  # variance 0: the floor
        est = on_completion(est, 200.0, 100.0, P)
        assert est.m_s == pytest.approx(0.1 * 200.0 + 0.9 * 50.0)  # 65
        ln2 = math.log(2.0)
        assert est.m_y == pytest.approx(-0.8 * ln2)  # .1 ln 2 + .9 (-ln 2)
        assert est.q_y == pytest.approx(ln2 * ln2)
        assert sigma_y(est, P) == pytest.approx(0.6 * ln2)  # sqrt(1 - .64) ln 2 = .416
        assert median_ratio(est) == pytest.approx(2.0 ** -0.8)  # eq. 44
        assert (est.n_services, est.n_ratios) == (2, 2)

    def test_zero_runtime_is_not_usable(self):
        est = on_arrival(Estimates.initial(2, P), None, 1, 10.0, P)
        assert on_completion(est, 0.0, 10.0, P) is est

    def test_no_request_updates_m_s_only(self):
        est = on_completion(Estimates.initial(2, P), 30.0, -1.0, P)
        assert est.m_s == 30.0 and est.m_y is None
        assert (est.n_services, est.n_ratios) == (1, 0)

    @pytest.mark.parametrize("runtime", [-1.0, math.nan])
    def test_bad_runtime(self, runtime):
        with pytest.raises(ValueError, match="runtime"):
            on_completion(Estimates.initial(2, P), runtime, 1.0, P)


def reference_weights(weights, res, params):
    """Eq. 19's update written out: decay every weight, drop those <= epsilon, add rho_R to
    the new request, renormalise by the sum taken in ascending r (the new size last)."""
    kept = {r: (1.0 - params.rho_r) * w for r, w in weights}
    kept = {r: w for r, w in kept.items() if w > params.epsilon}
    kept[res] = kept.get(res, 0.0) + params.rho_r
    total = sum(kept.values())
    return tuple((r, kept[r] / total) for r in sorted(kept))


@settings(deadline=None, derandomize=True, database=None, max_examples=200)
@given(sizes=st.lists(st.integers(1, 12), min_size=1, max_size=40),
       rho=st.sampled_from([0.05, 0.3, 0.9]), epsilon=st.sampled_from([1e-9, 1e-3, 0.05]))
def test_weights_update_is_the_written_out_rule(sizes, rho, epsilon):
    """The request weights after each arrival are those of the rule written out, bit for bit."""
    params = IconParams(rho_r=rho, epsilon=epsilon)
    est = Estimates.initial(12, params)
    expected = ()
    for res in sizes:
        expected = reference_weights(expected, res, params) if expected else ((res, 1.0),)
        est = on_arrival(est, None, res, 10.0, params)
        assert est.weights == expected


class TestPredictions:
    def test_predicted_duration_is_the_median(self):
        # eq. 46: tau exp(m_Y); with m_Y = log 0.5 a 3600 s request lasts 1800 s.
        assert predicted_duration(fitted(math.log(0.5), 1.0), 3600.0, P) == pytest.approx(1800)

    def test_cold_start(self):
        est = Estimates.initial(2, P)
        assert predicted_duration(est, 3600.0, P) == 3600.0  # eta_med = 1
        np.testing.assert_allclose(
            remaining_times(est, np.full(3, 100.0), np.array([0.0, 30.0, 250.0]), P),
            [100.0, 70.0, 100.0])  # past its request: req again (authors' code)

    def test_no_usable_request(self):
        est = Estimates.initial(2, P)
        assert predicted_duration(est, -1.0, P) == P.h_max
        assert remaining_time(est, -1.0, 600.0, P) == P.h_max - 600.0
        est = on_completion(est, 500.0, -1.0, P)
        assert predicted_duration(est, 0.0, P) == 500.0  # m_S
        assert remaining_time(est, math.nan, 600.0, P) == P.epsilon  # floored

    def test_vector_matches_scalar(self):
        est = fitted(-0.4, 0.7)
        req = np.array([10.0, 3600.0, 3600.0, 1.0, -1.0, 7200.0])
        elapsed = np.array([0.0, 10.0, 1e5, 1e9, 5.0, 7200.0])
        expected = [remaining_time(est, r, e, P) for r, e in zip(req, elapsed, strict=True)]
        np.testing.assert_array_equal(remaining_times(est, req, elapsed, P), expected)

    @settings(deadline=None, derandomize=True, database=None, max_examples=200)
    @given(m_y=st.sampled_from([-2.0, -0.4, 0.0, 0.3]), sigma=st.sampled_from([0.25, 0.7, 2.0]),
           jobs=st.lists(st.tuples(
               st.sampled_from([10.0, 600.0, 3600.0, 1.0, -1.0, math.nan]),
               st.sampled_from([0.0, 1e-3, 5.0, 590.0, 3600.0, 7200.0, 1e5, 1e9, 1e300])),
               min_size=1, max_size=12))
    def test_one_array_is_its_jobs_one_by_one(self, m_y, sigma, jobs):
        """A whole array is computed in one branch when every job falls in it (fresh,
        low zeta, E[D | D > e] close to e) and by masks otherwise: each job's answer is
        the one it gets alone, bit for bit, for every mix of branches."""
        est = fitted(m_y, sigma)
        req = np.array([r for r, _ in jobs])
        elapsed = np.array([e for _, e in jobs])
        expected = [remaining_time(est, r, e, P) for r, e in jobs]
        assert remaining_times(est, req, elapsed, P).tolist() == expected

    def test_empty_and_broadcast(self):
        est = fitted(0.0, 0.5)
        assert remaining_times(est, np.array([]), np.array([]), P).shape == (0,)
        assert remaining_times(est, 100.0, np.array([0.0, 1.0]), P).shape == (2,)

    @pytest.mark.parametrize("elapsed", [-1.0, math.inf, math.nan])
    def test_bad_elapsed(self, elapsed):
        with pytest.raises(ValueError, match="elapsed"):
            remaining_time(fitted(0.0, 0.5), 10.0, elapsed, P)
