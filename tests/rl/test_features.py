"""The Budiarjo observation and the action mask (snficon.rl.features)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from snficon.core.easy_plan import easy_plan
from snficon.core.node_choice import StateGroups
from snficon.core.plan import PlannedJob, release_map
from snficon.core.view import Decisions, NodeState, RunningJob
from snficon.rl.features import (
    ACTIONS,
    KEEP,
    NODE_FEATURES,
    QUEUE_FEATURES,
    SWITCH_OFF,
    SWITCH_ON,
    FeatureScales,
    action_mask,
    decision_nodes,
    observe,
)
from snficon.rl.ledger import NodeHistory, held_nodes, interval_usage
from tests.core.conftest import (
    T_ON_S,
    computing,
    idle,
    job,
    sleeping,
    switching_off,
    switching_on,
    table,
    view,
)
from tests.rl.conftest import power_model

N = {name: i for i, name in enumerate(NODE_FEATURES)}
Q = {name: i for i, name in enumerate(QUEUE_FEATURES)}
HOUR = 3600.0
CAP = math.log1p(86400 / 3600)  # a duration at the cap H


def five_states(now=HOUR):
    """Idle since 0, computing (job started at 0, 4 h requested), switching on (half left),
    switching off, sleeping; the computing node's running-job record is attached."""
    v = view([idle(0), computing(4 * HOUR), switching_on(now + T_ON_S / 2),
              switching_off(now + 5), sleeping()], [job("j1", 2, 2 * HOUR, submit=now - HOUR)],
             now=now)
    return dataclasses.replace(v, running=(RunningJob("r", (1,), 0.0, 4 * HOUR),))


class TestObserve:
    def test_shapes_and_dtypes(self):
        obs = observe(five_states(), [])
        assert obs.nodes.shape == (5, len(NODE_FEATURES)) and obs.nodes.dtype == np.float32
        assert obs.queue.shape == (len(QUEUE_FEATURES),) and obs.queue.dtype == np.float32
        assert obs.mask.shape == (5, len(ACTIONS)) and obs.mask.dtype == bool

    def test_node_features_by_hand(self):
        obs = observe(five_states(), [])
        one_hot = obs.nodes[:, :5]
        # columns: computing, idle, switching on, switching off, sleeping
        assert one_hot.tolist() == [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 1, 0, 0],
                                    [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]]
        nodes = obs.nodes
        assert nodes[0, N["idle_time"]] == pytest.approx(math.log1p(1.0))  # idle 1 h
        assert nodes[1:, N["idle_time"]].tolist() == [0, 0, 0, 0]
        assert nodes[1, N["request_left"]] == pytest.approx(0.75)  # 3 h of 4 h left
        assert nodes[2, N["transition_left"]] == pytest.approx(0.5)
        assert nodes[3, N["transition_left"]] == pytest.approx(0.5)  # 5 s of T_off = 10 s
        # ready: idle now; computing at 4 h (3 h away); switching on in 15 s;
        # switching off: 5 s + T_on; sleeping: T_on
        expected = [0, 3 * HOUR, 15, 5 + T_ON_S, T_ON_S]
        assert nodes[:, N["ready_in"]].tolist() == pytest.approx(
            [math.log1p(s / HOUR) for s in expected], rel=1e-6)
        assert nodes[:, N["planned"]].tolist() == [0] * 5
        assert nodes[:, N["planned_in"]].tolist() == pytest.approx([CAP] * 5)

    def test_overrunning_job(self):
        v = view([computing(HOUR)], now=3 * HOUR)
        v = dataclasses.replace(v, running=(RunningJob("r", (0,), 0.0, HOUR),))
        nodes = observe(v, []).nodes
        assert nodes[0, N["request_left"]] == -1.0  # 2 h past a 1 h request, clipped
        assert nodes[0, N["ready_in"]] == pytest.approx(CAP)  # not plannable: never

    def test_plan_features_from_an_easy_plan(self):
        v = view([computing(HOUR), computing(2 * HOUR), sleeping(), sleeping()],
                 [job("j1", 2, HOUR), job("j2", 4, HOUR)], now=0)
        groups = StateGroups.of(v.nodes)
        plan = easy_plan(groups, release_map(groups, 0.0), list(v.queue), [HOUR, HOUR], 0.0)
        first = {}
        for planned in plan:
            for node in planned.nodes.tolist():
                first.setdefault(node, planned.start)
        obs = observe(v, plan)
        assert obs.nodes[:, N["planned"]].tolist() == [1, 1, 1, 1]
        assert obs.nodes[:, N["planned_in"]].tolist() == pytest.approx(
            [math.log1p(first[i] / HOUR) for i in range(4)], rel=1e-6)
        assert obs.queue[Q["next_start_in"]] == pytest.approx(
            math.log1p(min(p.start for p in plan) / HOUR), rel=1e-6)

    def test_queue_features_by_hand(self):
        v = view([idle(0)] * 4, [job("j1", 2, HOUR, submit=0), job("j2", 6, 3 * HOUR,
                                                                 submit=2 * HOUR)],
                 now=2 * HOUR)
        plan = [PlannedJob(v.queue[0], 5 * HOUR, 6 * HOUR, np.array([0, 1]))]
        q = observe(v, plan).queue
        assert q[Q["queue_length"]] == pytest.approx(math.log1p(2))
        assert q[Q["mean_wait"]] == pytest.approx(math.log1p(1.0))  # waits 2 h and 0 h
        assert q[Q["mean_request"]] == pytest.approx(math.log1p(2.0))
        assert q[Q["queue_demand"]] == pytest.approx(math.log1p(8 / 4))
        assert q[Q["next_start_in"]] == pytest.approx(math.log1p(3.0))
        assert q[Q["recent_arrivals"]] == 0 and q[Q["wasted_share"]] == 0

    def test_empty_queue(self):
        q = observe(view([idle(0)], now=10), []).queue
        assert q.tolist()[:3] == [0, 0, 0] and q[Q["next_start_in"]] == pytest.approx(CAP)

    def test_history_features(self):
        power = power_model(2)
        v = view([idle(0), sleeping()], now=0)
        history = NodeHistory.for_power(power, arrival_window_s=HOUR)
        history.add(interval_usage(held_nodes(v, Decisions(), power), 100.0, power))
        later = dataclasses.replace(v, now=100.0,
                                    arrivals=(job("a", 1, 5, submit=90),
                                              job("b", 1, 5, submit=95)))
        history.note_arrivals(later)
        obs = observe(later, [], history)
        assert obs.nodes[:, N["wasted_share"]].tolist() == pytest.approx([100 / 150, 10 / 150])
        assert obs.nodes[:, N["switching_share"]].tolist() == [0, 0]
        assert obs.queue[Q["wasted_share"]] == pytest.approx(110 / 300)
        assert obs.queue[Q["recent_arrivals"]] == pytest.approx(math.log1p(2))

    def test_random_states_give_finite_bounded_features(self):
        rng = np.random.default_rng(0)
        makers = [lambda t: idle(t - rng.uniform(0, 1e6)), lambda t: computing(
                  t + rng.uniform(-1e5, 1e5)), lambda t: switching_on(t + rng.uniform(0, 30)),
                  lambda t: switching_off(t + rng.uniform(0, 10)), lambda t: sleeping()]
        for _ in range(100):
            now = rng.uniform(0, 1e7)
            nodes = [makers[k](now) for k in rng.integers(0, 5, 8)]
            queue = [job(f"j{i}", int(rng.integers(1, 9)), rng.uniform(0, 1e6),
                         submit=now - rng.uniform(0, 1e6)) for i in range(rng.integers(0, 5))]
            v = view(nodes, queue, now=now)
            durations = [j.req_time_s for j in queue]
            groups = StateGroups.of(v.nodes)
            plan = easy_plan(groups, release_map(groups, now), queue, durations, now)
            obs = observe(v, plan)
            assert np.isfinite(obs.nodes).all() and np.isfinite(obs.queue).all()
            assert obs.nodes.min() >= -1 and obs.nodes.max() <= CAP + 1e-6
            assert obs.queue.min() >= 0 and obs.queue.max() <= max(CAP, math.log1p(40)) + 1e-6

    def test_bad_scales(self):
        with pytest.raises(ValueError, match="time_scale_s must be a positive number"):
            FeatureScales(time_scale_s=0)
        with pytest.raises(ValueError, match="horizon_s"):
            FeatureScales(horizon_s=float("inf"))


class TestActionMask:
    def test_only_sleeping_on_only_idle_off_others_keep(self):
        mask = action_mask(five_states().nodes)
        assert mask[:, KEEP].all()
        assert mask[:, SWITCH_ON].tolist() == [False, False, False, False, True]
        assert mask[:, SWITCH_OFF].tolist() == [True, False, False, False, False]
        assert decision_nodes(mask).tolist() == [True, False, False, False, True]

    def test_a_node_that_cannot_sleep_only_keeps(self):
        nodes = table([idle(0, t_off=float("inf"), t_on=float("inf")), idle(0)])
        assert action_mask(nodes)[:, SWITCH_OFF].tolist() == [False, True]

    def test_mask_follows_the_state_codes(self):
        for state in NodeState:
            nodes = five_states().nodes
            row = action_mask(nodes)[list(nodes.state).index(state)]
            assert row[SWITCH_ON] == (state == NodeState.SLEEPING)
            assert row[SWITCH_OFF] == (state == NodeState.IDLE)
