"""The Budiarjo reward (snficon.rl.reward)."""

from __future__ import annotations

import numpy as np
import pytest

from snficon.core.view import Decisions, JobStart
from snficon.rl.reward import (
    RewardWeights,
    StepMeter,
    budiarjo_reward,
    transition_reward,
    waiting_term,
)
from tests.core.conftest import computing, idle, job, sleeping, view
from tests.rl.conftest import P_OFF_W, P_ON_W, P_SLEEP_W, power_model


def hand_case():
    """At t1 = 0: j1 starts on node 3, node 0 is switched off; at t2 = 100, j2 still waits
    and j3 arrived at 40."""
    nodes = [idle(0), sleeping(), computing(500), idle(0)]
    before = view(nodes, [job("j1", 1, 50, submit=-10), job("j2", 2, 50, submit=-5)], now=0)
    after = view(nodes, [job("j2", 2, 50, submit=-5), job("j3", 1, 50, submit=40)], now=100)
    decisions = Decisions(starts=[JobStart("j1", (3,))], switch_off=[0])
    return before, decisions, after


class TestTransitionReward:
    def test_by_hand(self):
        before, decisions, after = hand_case()
        terms = transition_reward(before, decisions, after, power_model(4))
        # decision nodes once j1 started: node 0 (idle) and node 1 (asleep); node 3 computes.
        # node 0: switching off 10 s at 50 W, then asleep 90 s at 10 W; node 1 asleep 100 s.
        energy = ((P_OFF_W * 10 + P_SLEEP_W * 90) / (P_ON_W * 100)
                  + (P_SLEEP_W * 100) / (P_ON_W * 100)) / 2
        # j1 started at t1 (0 of the step), j2 waited all of it, j3 waited 60 of 100 s
        waiting = (0 + 1 + 0.6) / 3
        assert terms.energy == pytest.approx(energy)
        assert terms.waiting == pytest.approx(waiting)
        assert terms.duration_s == 100
        assert terms.reward == pytest.approx(-0.5 * energy - 0.5 * waiting)
        weighted = transition_reward(before, decisions, after, power_model(4),
                                     RewardWeights(energy=2.0, waiting=0.0))
        assert weighted.reward == pytest.approx(-2 * energy)

    def test_last_step_has_the_energy_term_only(self):
        before, decisions, after = hand_case()
        terms = transition_reward(before, decisions, after, power_model(4), done=True)
        assert terms.reward == pytest.approx(-0.5 * terms.energy)

    def test_zero_length_step(self):
        before, decisions, _ = hand_case()
        terms = transition_reward(before, decisions, before, power_model(4))
        assert terms.reward == 0.0

    def test_switching_off_an_unneeded_node_pays(self):
        # an idle node no job needs, for a day: switching it off beats keeping it
        before = view([idle(0), idle(0)], now=0)
        after = view([idle(0), idle(0)], now=86400)
        power = power_model(2)
        keep = transition_reward(before, Decisions(), after, power)
        off = transition_reward(before, Decisions(switch_off=[0, 1]), after, power)
        assert keep.reward == pytest.approx(-0.5 * 100 / 150)
        assert off.reward > keep.reward
        assert off.waiting == keep.waiting == 0

    def test_usage_is_returned_for_the_history(self):
        before, decisions, after = hand_case()
        usage = transition_reward(before, decisions, after, power_model(4)).usage
        assert usage.wasted_j[3] == 0 and usage.switching_s[0] == 10


class TestWaitingTerm:
    def test_the_authors_cases(self):
        inf = np.inf
        submit = np.array([0, 0, 50, 0, 200])
        start = np.array([10, 120, inf, 150, inf])
        # job 0 started before the step [100, 200]: not counted; job 1 started at 120: 20 s;
        # job 2 waits all the step; job 3 starts at 150: 50 s; job 4 arrives at the end: 0 s
        assert waiting_term(submit, start, 100, 200) == pytest.approx((0.2 + 1 + 0.5 + 0) / 4)

    def test_no_job(self):
        assert waiting_term(np.array([]), np.array([]), 0, 10) == 0.0
        assert waiting_term(np.array([5.0]), np.array([np.nan]), 0, 0) == 0.0

    def test_weights_and_formula(self):
        with pytest.raises(ValueError, match="reward weight energy must be a finite number"):
            RewardWeights(energy=-1)
        assert budiarjo_reward(0.2, 0.4, RewardWeights(1.0, 3.0)) == pytest.approx(-1.4)
        assert budiarjo_reward(0.2, 0.4, RewardWeights(1.0, 3.0), done=True) == -0.2


class TestStepMeter:
    def test_one_interval_is_transition_reward(self):
        before, decisions, after = hand_case()
        meter = StepMeter(power_model(4))
        meter.begin(before, decisions)
        terms = meter.finish(after)
        expected = transition_reward(before, decisions, after, power_model(4))
        assert (terms.reward, terms.energy, terms.waiting) == pytest.approx(
            (expected.reward, expected.energy, expected.waiting))
        assert list(terms.usage.wasted_j) == list(expected.usage.wasted_j)

    def test_a_step_over_three_invocations_by_hand(self):
        # t = 0: the agent switches node 0 off; j1 waits (needs 2 nodes, only node 1 idle)
        # t = 40: j2 arrives and starts on node 1; t = 100: node 1's job ends, end of step
        nodes0 = [idle(0), idle(0), sleeping()]
        first = view(nodes0, [job("j1", 2, 50, submit=-20)], now=0)
        middle = view([sleeping(), idle(0), sleeping()],
                      [job("j1", 2, 50, submit=-20), job("j2", 1, 60, submit=40)], now=40)
        last = view([sleeping(), idle(100), sleeping()], [job("j1", 2, 50, submit=-20)],
                    now=100)
        meter = StepMeter(power_model(3))
        meter.begin(first, Decisions(switch_off=[0]))
        meter.add(middle, Decisions(starts=[JobStart("j2", (1,))]))
        terms = meter.finish(last)
        # node 0 (off at 0): 10 s at 50 W then 90 s at 10 W; node 1: idle 40 s, then
        # computing; node 2 asleep 100 s. All three had a choice at t = 0.
        wasted = [P_OFF_W * 10 + P_SLEEP_W * 90, 100 * 40, P_SLEEP_W * 100]
        assert list(terms.usage.wasted_j) == pytest.approx(wasted)
        assert terms.energy == pytest.approx(np.mean(wasted) / (P_ON_W * 100))
        # j1 waited the whole step; j2 from 40 to 40 (started on arrival)
        assert terms.waiting == pytest.approx((1.0 + 0.0) / 2)
        assert terms.duration_s == 100

    def test_begin_first(self):
        with pytest.raises(RuntimeError, match="begin"):
            StepMeter(power_model(1)).add(view([idle(0)]), Decisions())
