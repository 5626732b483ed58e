"""Warm-spare target selection (paper IV-F to IV-H, eq. 26-39; SPEC 5 "Spare target").

Figures are the defaults of ``conftest`` unless a node says otherwise: idle power 100 W,
T_on 30 s for E_on 4500 J (150 W), T_off 10 s for E_off 500 J (50 W); sleep power 10 W
(``P_SLEEP``). Hand values below are worked out from eq. 25, 34-37 and 59 in the comments.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from snficon.core.event_horizon import (
    expected_unfinished,
)
from snficon.core.params import IconParams
from snficon.core.spare import SpareCosts, choose_spare_target

from .conftest import computing, idle, sleeping, switching_off, switching_on, table

P_SLEEP = 10.0


def choose(nodes, *, now=0.0, lam=0.0, lam_c=0.0, pmf=(1.0,), exclude=(), **options):
    """choose_spare_target on a hand-made node list, sleep power ``P_SLEEP`` everywhere."""
    nodes, params = table(nodes), IconParams(**options)
    return choose_spare_target(nodes, SpareCosts.of(nodes, np.full(nodes.size, P_SLEEP), params),
                               now, lam, lam_c, np.asarray(pmf, dtype=float), params,
                               exclude=exclude)


class TestChooseSpareTarget:
    def test_no_arrivals_prepare_the_fewest_spares(self):
        """lam = 0: pi_A = 0, W = 0 and waking only costs energy -> x_min = |I_f| = 2."""
        nodes = [idle(0.0), idle(0.0)] + [sleeping()] * 4 + [computing(500.0)]
        result = choose(nodes, lam=0.0, lam_c=0.01, pmf=[0, 0, 1])
        assert result.x == 2 and result.wake == () and result.keep == (0, 1)
        assert result.pi_a == 0.0 and result.w == 0.0
        assert result.candidates.tolist() == [2, 3, 4, 5, 6]
        assert np.all(np.diff(result.e_values) > 0)

    def test_no_event_rate_takes_the_capped_horizon(self):
        """lam_E = 0 (SPEC 5): H = H_c = min(H_max, 7200 - 100) and pi_A = 0."""
        result = choose([idle(0.0), sleeping()], now=100.0)
        assert result.lam_e == 0.0 and result.pi_a == 0.0
        assert result.h_cap == 7100.0 and result.horizon == 7100.0

    def test_large_alpha_covers_the_likely_request_sizes(self):
        """Requests of 1, 2 or 4 nodes: with alpha huge, wake 4 (a 5th lowers no d_(r))."""
        result = choose([sleeping()] * 8, lam=1 / 600, pmf=[0.5, 0.3, 0, 0.2], alpha=1e9)
        assert result.x == 4 and result.wake == (0, 1, 2, 3)
        assert result.w == pytest.approx(expected_unfinished(30.0, 1 / 600))

    def test_wake_order_is_alpha_t_on_plus_beta_e_on_then_id(self):
        """Keys alpha T_on + beta E_on order nodes 1 (10 s), 3 (20 s), 0, 2 (30 s, by id)."""
        nodes = [sleeping(t_on=t, e_on=150.0 * t) for t in (30.0, 10.0, 30.0, 20.0)]
        result = choose(nodes, lam=1 / 600, pmf=[0, 1], alpha=1e9)
        assert result.x == 2 and result.wake == (1, 3)

    def test_hand_computed_delays_and_energy(self):
        """U (15 s left), D (4 s left), S; lam_E = 0.1, pi_A = 1, r = 3, H_c = H_max.

        d_(3) = T_on + phi(4) = 34 - 10 (1 - e^-0.4) for both x = 1, 2 (eq. 33-35, 59).
        H = 10 (1 - e^-8640) = 10; E(1) = 150*10 + (50*4 + 10*6) + 10*10 = 1860 and
        E(2) = 1860 - 100 + 150*10 = 3260 (eq. 36-37) -> x* = 1 on E.
        """
        nodes = [switching_on(15.0), switching_off(4.0), sleeping()]
        result = choose(nodes, lam=0.1, pmf=[0, 0, 1])
        d3 = 34.0 - 10.0 * (1.0 - math.exp(-0.4))
        assert result.horizon == pytest.approx(10.0)
        assert result.w_values == pytest.approx([d3, d3])
        assert result.e_values == pytest.approx([1860.0, 3260.0])
        assert result.x == 1 and result.wake == ()

    def test_exact_tie_goes_to_the_smaller_target(self):
        """All powers 100 W: waking changes no energy; lam = 0: W = 0 -> J, W, E tie."""
        flat = dict(e_on=3000.0, e_off=1000.0)
        nodes = [idle(0.0, **flat)] + [sleeping(**flat)] * 3
        nodes = table(nodes)
        costs = SpareCosts.of(nodes, np.full(4, 100.0), IconParams())
        result = choose_spare_target(nodes, costs, 0.0, 0.0, 0.0, np.array([0, 0, 0, 1.0]),
                                     IconParams())
        assert result.candidates.tolist() == [1, 2, 3, 4]
        assert len(set(result.j_values.tolist())) == 1
        assert len(set(result.e_values.tolist())) == 1
        assert result.x == 1

    def test_j_tie_goes_to_the_lower_waiting(self):
        """alpha = beta = 0: J ties; only x = 4 readies all 4 requested nodes (lowest W)."""
        result = choose([sleeping()] * 4, lam=1 / 600, pmf=[0, 0, 0, 1], alpha=0.0, beta=0.0)
        assert np.all(result.j_values == 0.0)
        assert result.x == 4 and result.w == result.w_values.min()
        assert result.e == result.e_values.max()

    def test_j_and_w_tie_goes_to_the_lower_energy(self):
        """J and W tie (alpha = beta = 0, lam = 0); H = H_max = 5 s: a switch-off (200 W)
        costs more than idling (100 W) -> keep every optional idle node, x = 3 not 1."""
        nodes = [idle(0.0, e_off=2000.0)] * 3
        result = choose(nodes, alpha=0.0, beta=0.0, h_max=5.0, respect_timeout=False)
        assert result.horizon == 5.0 and np.all(result.w_values == 0.0)
        assert result.candidates.tolist() == [1, 2, 3]
        assert result.x == 3 and result.keep == (0, 1, 2) and result.switch_off == ()

    def test_unexpired_idle_nodes_stay_warm_with_respect_timeout(self):
        """Timeout 100 s at t = 1000: nodes 0, 1 (idle since 950, 980) are kept; node 2
        (since 900) expired and is switched off. H_c = 950 + 100 - 1000 = 50."""
        nodes = [idle(950.0), idle(980.0), idle(900.0), sleeping()]
        result = choose(nodes, now=1000.0, timeout=100.0)
        assert result.keep == (0, 1) and result.switch_off == (2,) and result.wake == ()
        assert result.x == 2 and result.h_cap == 50.0

    def test_without_respect_timeout_optional_idle_nodes_follow_keep_order(self):
        """Nodes 0, 1 optional; keep order: lowest idle power first (node 1, 80 W).
        lam = 0 and a switch-off is cheaper than idling -> x = S_min = 1."""
        nodes = [idle(950.0, p_idle=120.0), idle(980.0, p_idle=80.0), idle(900.0), sleeping()]
        result = choose(nodes, now=1000.0, timeout=100.0, respect_timeout=False)
        assert result.x == 1 and result.keep == (1,) and result.switch_off == (0, 2)

    def test_s_max_below_the_forced_warm_count_is_exceeded(self):
        """Four unexpired idle nodes must stay warm although S_max = 2 (eq. 31)."""
        nodes = [idle(0.0)] * 4 + [sleeping()] * 2
        result = choose(nodes, lam=1.0, pmf=[0, 0, 0, 0, 0, 1], alpha=1e9, s_max=2)
        assert result.candidates.tolist() == [4]
        assert result.x == 4 and result.keep == (0, 1, 2, 3) and result.wake == ()

    def test_s_min_above_the_usable_nodes_takes_them_all(self):
        result = choose([idle(0.0), sleeping(), sleeping(), computing(50.0)], s_min=10)
        assert result.candidates.tolist() == [3] and result.wake == (1, 2)

    def test_all_nodes_computing(self):
        result = choose([computing(50.0)] * 3, lam=1.0)
        assert (result.x, result.k, result.w, result.e) == (0, 0, 0.0, 0.0)

    def test_excluded_nodes_count_as_computing(self):
        result = choose([idle(0.0), idle(0.0), sleeping()], exclude=[1])
        assert result.k == 2 and result.keep == (0,) and 1 not in result.switch_off

    def test_negative_pmf_is_refused(self):
        with pytest.raises(ValueError, match="pmf"):
            choose([idle(0.0)], pmf=[-0.1, 1.1])
