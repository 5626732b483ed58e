"""The spare optimiser against the brute-force reference of ``spare_reference.py``.

On hypothesis-generated states both must give the same candidate range, the same H_c, H,
lambda_E, pi_A and K, the same J, W and E of every candidate (up to rounding: the
optimiser updates d-bar incrementally and sums energies in another order), the same x*
and, for it, the same woken, switched-off and kept nodes. When two candidates are tied
up to rounding, either may be chosen: the test then only asks that the optimiser's x* is
one of the tied ones and compares the node sets of the x it chose.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import snficon.core.spare as spare
from snficon.core.params import IconParams
from snficon.core.spare import SpareCosts, choose_spare_target
from tests.core.conftest import idle, sleeping, table
from tests.reference.spare_reference import ReferenceResult, Role, reference_spare_target
from tests.reference.states import SpareState, large_spare_states, spare_states

RTOL = 1e-9
SETTINGS = dict(derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def close(a: float, b: float, scale: float) -> bool:
    """Equal up to rounding: relative 1e-9 of the larger, or of ``scale`` near zero."""
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=RTOL * scale)


def run_both(state: SpareState):
    costs = SpareCosts.of(state.nodes, state.p_sleep_w, state.params)
    result = choose_spare_target(state.nodes, costs, state.now, state.lam, state.lam_c,
                                 state.pmf, state.params, exclude=state.exclude)
    reference = reference_spare_target(state.nodes, state.p_sleep_w, state.now, state.lam,
                                       state.lam_c, list(state.pmf), state.params,
                                       exclude=state.exclude)
    return result, reference


def tied(reference: ReferenceResult, x: int, y: int) -> bool:
    """Candidates x and y have the same (J, W, E) up to rounding."""
    a, b = reference.candidate(x), reference.candidate(y)
    scale_e = max(abs(c.e) for c in reference.candidates) + 1.0
    scale_w = max(abs(c.w) for c in reference.candidates) + 1.0
    scale_j = max(abs(c.j) for c in reference.candidates) + 1.0
    return close(a.j, b.j, scale_j) and close(a.w, b.w, scale_w) and close(a.e, b.e, scale_e)


def assert_agree(state: SpareState) -> ReferenceResult:
    """Compare everything (x* may differ within a rounding tie); returns the reference."""
    result, reference = run_both(state)
    assert result.candidates.tolist() == list(range(reference.x_min, reference.x_max + 1))
    assert result.k == reference.k
    assert close(result.h_cap, reference.h_cap, 1.0), (result.h_cap, reference.h_cap)
    assert close(result.horizon, reference.horizon, 1.0), (result.horizon, reference.horizon)
    assert close(result.lam_e, reference.lam_e, 1e-12)
    assert close(result.pi_a, reference.pi_a, 1.0)
    ref_w = [c.w for c in reference.candidates]
    ref_e = [c.e for c in reference.candidates]
    ref_j = [c.j for c in reference.candidates]
    scale_w, scale_e = max(ref_w) + 1.0, max(ref_e) + 1.0
    scale_j = max(ref_j) + 1.0
    for x, w, e, j, rw, re, rj in zip(result.candidates, result.w_values, result.e_values,
                                      result.j_values, ref_w, ref_e, ref_j, strict=True):
        assert close(w, rw, scale_w), f"W({x}): optimiser {w!r}, reference {rw!r}"
        assert close(e, re, scale_e), f"E({x}): optimiser {e!r}, reference {re!r}"
        assert close(j, rj, scale_j), f"J({x}): optimiser {j!r}, reference {rj!r}"
    if result.x != reference.x:
        assert tied(reference, result.x, reference.x), (
            f"x*: optimiser {result.x}, reference {reference.x}")
    chosen = reference.candidate(result.x)
    assert result.wake == chosen.nodes_with(Role.WOKEN)
    assert result.switch_off == chosen.nodes_with(Role.SWITCHED_OFF)
    assert result.keep == chosen.nodes_with(Role.KEPT)
    assert close(result.w, chosen.w, scale_w) and close(result.e, chosen.e, scale_e)
    assert close(result.j, chosen.j, scale_j)
    return reference


def wide_crossings(reference: ReferenceResult) -> list[int]:
    """For each step x -> x + 1 whose one changed node moves its delay down from a to b past
    more than 64 other delays (b < d < a, counted in candidate x): how many it passes.

    These are the steps the optimiser must sum with numpy (``crossing_change``)."""
    sizes = []
    for before, after in itertools.pairwise(reference.candidates):
        ids = [i for i, role in enumerate(before.roles) if role != Role.COMPUTING]
        changed = [n for n, i in enumerate(ids) if before.roles[i] != after.roles[i]]
        assert len(changed) == 1, (before.x, changed)
        a, b = before.delays[changed[0]], after.delays[changed[0]]
        passed = sum(1 for d in before.delays if b < d < a)
        if b < a and passed > 64:
            sizes.append(passed)
    return sizes


def spied_agreement(state: SpareState) -> list[int]:
    """:func:`assert_agree` with the optimiser's numpy crossing sum wrapped; asserts that it
    ran exactly at the steps :func:`wide_crossings` names, and returns their sizes."""
    calls = []
    real = spare.crossing_change

    def spy(q, lo, hi, b, between, a):
        calls.append(hi - lo)
        return real(q, lo, hi, b, between, a)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(spare, "crossing_change", spy)
        reference = assert_agree(state)
    assert calls == wide_crossings(reference)
    return calls


class TestAgainstReference:
    @settings(max_examples=200, **SETTINGS)
    @given(spare_states())
    def test_small_states(self, state):
        assert_agree(state)

    def test_large_states_take_the_vectorised_branch(self):
        """Hundreds of nodes: the numpy crossing sum runs exactly where more than 64
        delays lie between a moved node's old and new delay, in most examples."""
        calls = []

        @settings(max_examples=10, **SETTINGS)
        @given(large_spare_states())
        def check(state):
            calls.append(len(spied_agreement(state)))

        check()
        assert sum(1 for n in calls if n > 0) >= len(calls) // 2, calls


class TestHandMadeStates:
    def test_by_hand(self):
        r"""Idle node 0 (timer running), sleeping node 1; T_on 30 s, E_on 4500 J (P_on 150 W),
        P_idle 100 W, P_sleep 5 W; lambda = 0.01, lambda_C = 0, pmf p_2 = 1, at t = 7200.

        Node 0 idled 100 s ago: its timer ends in 7100 s, so H_c = min(86400, 7100) and
        H = (1 - e^{-71}) / 0.01 = 100 s (e^{-71} is below rounding); pi_A = 1. Node 0 is
        in I_f, so x_min = 1, x_max = x_real = 2.

        - x = 1: node 1 asleep, delays (0, 30): W = d_(2) = 30; E = 100 H + 5 H = 10500;
          J = 5000 x 30 + 10500 = 160500.
        - x = 2: node 1 woken, delay phi(30) = 30 - (1 - e^{-0.3}) / 0.01
          = 4.0818220681718; E = 100 H + (150 x 30 + 100 x 70) = 21500;
          J = 5000 x 4.0818220681718 + 21500 = 41909.110340859.

        So x* = 2 and node 1 is woken.
        """
        state = SpareState(nodes=table([idle(7100.0), sleeping()]), p_sleep_w=np.full(2, 5.0),
                           now=7200.0, lam=0.01, lam_c=0.0, pmf=np.array([0.0, 1.0]),
                           params=IconParams(), exclude=())
        result, reference = run_both(state)
        phi = 30.0 - (1.0 - math.exp(-0.3)) / 0.01
        for answer_w, answer_e, answer_j in ((result.w_values, result.e_values, result.j_values),
                                             ([c.w for c in reference.candidates],
                                              [c.e for c in reference.candidates],
                                              [c.j for c in reference.candidates])):
            assert list(answer_w) == pytest.approx([30.0, phi], rel=1e-12)
            assert list(answer_e) == pytest.approx([10500.0, 21500.0], rel=1e-12)
            assert list(answer_j) == pytest.approx([160500.0, 41909.110340859], rel=1e-12)
        assert result.x == reference.x == 2
        assert result.wake == (1,) and result.keep == (0,) and result.switch_off == ()

    @pytest.mark.parametrize("respect_timeout", [False, True])
    def test_ties_break_by_id(self, respect_timeout):
        """Equal idle powers and equal wake costs: the lower ids are kept and woken first.

        Nodes 0-3 idle (timers running), 4-7 asleep, all with the same figures; S_min = S_max
        = 3 leaves one candidate. Without ``respect_timeout`` the idle nodes are optional:
        0, 1, 2 are kept and 3 switched off. With it all four stay warm (x = 4 > S_max).
        """
        nodes = table([idle(7000.0)] * 4 + [sleeping()] * 4)
        for s_min in (3, 6):
            params = IconParams(s_min=s_min, s_max=s_min, respect_timeout=respect_timeout)
            state = SpareState(nodes=nodes, p_sleep_w=np.full(8, 5.0), now=7200.0,
                               lam=0.01, lam_c=0.0, pmf=np.array([1.0]), params=params,
                               exclude=())
            assert_agree(state)
            result, _ = run_both(state)
            warm = max(s_min, 4) if respect_timeout else s_min
            assert result.x == warm
            assert result.keep == tuple(range(min(warm, 4)))
            assert result.wake == tuple(range(4, 4 + max(warm - 4, 0)))

    def test_exact_tie_takes_the_smallest_target(self):
        r"""Every candidate costs the same, so eq. 39's last key, x itself, decides.

        lambda = lambda_C = 0: pi_A = 0, so W(x) = 0 (eq. 35), and H = H_c = H_max = 100 s
        (the idle node's timer ends 7100 s later). Every power is 10 W (idle, sleep,
        P_on = 300 J / 30 s, P_off = 100 J / 10 s), so every node uses 10 x 100 = 1000 J
        whatever its role, each term exact in binary: E(x) = 3000 J and J(x) = 3000 for
        x = 0..3 (S_min = 0, the idle node optional). x* = 0: node 0 switched off, none woken.
        """
        figures = dict(p_idle=10.0, t_on=30.0, e_on=300.0, t_off=10.0, e_off=100.0)
        state = SpareState(nodes=table([idle(100.0, **figures), sleeping(**figures),
                                        sleeping(**figures)]),
                           p_sleep_w=np.full(3, 10.0), now=200.0, lam=0.0, lam_c=0.0,
                           pmf=np.array([0.5, 0.5]),
                           params=IconParams(s_min=0, h_max=100.0, respect_timeout=False),
                           exclude=())
        assert_agree(state)
        result, reference = run_both(state)
        assert list(result.candidates) == [0, 1, 2, 3]
        assert list(result.e_values) == [3000.0] * 4 and list(result.w_values) == [0.0] * 4
        assert result.x == reference.x == 0
        assert result.switch_off == (0,) and result.wake == () and result.keep == ()
