"""IPM, the baselines' idle-timeout power manager (SPEC 5).

An idle node whose timer expired is switched off, unless a queued job's plan
uses it and now + T_off + T_on would pass that job's planned start; the next
expiry is a callback. Figures: T_off 10 s, T_on 30 s (so a node switched off
at t is back at t + 40).

The PSAS wakes: a sleeping node a planned job uses is switched on at its
planned start minus T_on, now if that time has come, else by a callback.
There idle power is 100 W and E_on 4500 J; the default timeout is 7200 s.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.core.ipm import (
    expired_idle_nodes,
    idle_timers,
    next_timer_expiry,
    nodes_to_switch_off,
    request_end_calls,
)
from snficon.core.node_choice import StateGroups
from snficon.core.params import IpmParams
from snficon.core.plan import PlannedJob
from snficon.core.policy import decide_snf_ipm

from .conftest import computing, idle, job, sleeping, started, switching_off, table, view
from .test_node_choice import node_strategy

TIMEOUT = IpmParams(timeout=100.0)
DEFAULT = IpmParams()


def timers(nodes, timeout_s: float):
    """The idle timers of a table (:func:`idle_timers` of its groups)."""
    return idle_timers(StateGroups.of(nodes), timeout_s)


def test_expired_idle_nodes_include_the_exact_expiry():
    """now = 100, timeout 100: idle since 0 expired (0 + 100 <= 100); idle since 1 not; a
    computing node has no timer."""
    nodes = table([idle(0.0), idle(1.0), computing(500.0)])
    assert expired_idle_nodes(timers(nodes, 100.0), 100.0).tolist() == [0]


def test_expired_idle_node_is_switched_off_and_the_next_expiry_is_called():
    """Empty queue at 100: node 0 (idle since 0) expired -> off; nodes 1 and 2 expire at
    160 and 120 -> one callback at 120. The node switched off gives no callback."""
    decisions = decide_snf_ipm(view([idle(0.0), idle(60.0), idle(20.0)], now=100.0), TIMEOUT)
    assert decisions.switch_off == [0]
    assert decisions.call_at == [120.0]
    assert decisions.starts == [] and decisions.switch_on == []


def test_expired_node_is_kept_when_switching_it_would_miss_its_planned_start():
    """now 100: the 2-node job j0 waits for node 1 (computing until 120): planned at 120
    on {0, 1}. Off and on again, node 0 would be back at 140 > 120: kept."""
    decisions = decide_snf_ipm(view([idle(0.0), computing(120.0)], [job("j0", 2, 50.0)],
                                    now=100.0), TIMEOUT)
    assert decisions.switch_off == []
    assert decisions.starts == [] and decisions.switch_on == [] and decisions.call_at == []


def test_expired_node_is_switched_off_when_it_would_be_back_in_time():
    """Same, node 1 computing until 200: planned start 200, back at 140 <= 200: off."""
    decisions = decide_snf_ipm(view([idle(0.0), computing(200.0)], [job("j0", 2, 50.0)],
                                    now=100.0), TIMEOUT)
    assert decisions.switch_off == [0]


def test_back_exactly_at_the_planned_start_does_not_pass_it():
    """Planned start 140 = 100 + 10 + 30: the switch-off does not pass it, so the node goes."""
    decisions = decide_snf_ipm(view([idle(0.0), computing(140.0)], [job("j0", 2, 50.0)],
                                    now=100.0), TIMEOUT)
    assert decisions.switch_off == [0]


def test_keep_rule_uses_the_earliest_planned_start_of_the_node():
    """Node 0 is planned at 300 and at 120 (hand-written plan): needed by 120 < 140 -> kept.
    Node 1, planned only at 300, goes."""
    nodes = table([idle(0.0), idle(0.0)])
    plan = [PlannedJob(job("j1", 2, 1.0), 300.0, 301.0, np.array([0, 1])),
            PlannedJob(job("j0", 1, 1.0), 120.0, 121.0, np.array([0]))]
    assert nodes_to_switch_off(nodes, timers(nodes, 100.0), plan, 100.0).tolist() == [1]


def test_starts_come_before_the_timeout():
    """Two expired idle nodes at 100 and a 1-node job: it starts on node 0 (same timers,
    lower id), and only node 1 is switched off."""
    decisions = decide_snf_ipm(view([idle(0.0), idle(0.0)], [job("j0", 1, 50.0)], now=100.0),
                               TIMEOUT)
    assert started(decisions) == {"j0": {0}}
    assert decisions.switch_off == [1]


def test_callback_is_the_earlier_of_the_next_expiry_and_the_next_wake():
    """now 50: j0 needs 3 nodes; node 1 computes until 400, so it is planned at 400 and the
    sleeping node 2 wakes at 370; node 0 expires at 100 -> callback at 100.

    At 100 node 0 expired and would be back at 140 <= 400: off; callback at the wake, 370.
    (Without the request-end calls: with them, 370 = 400 - T_on is asked at 50 too.)
    """
    nodes = [idle(0.0), computing(400.0), sleeping()]
    params = IpmParams(timeout=100.0, request_end_calls=False)
    first = decide_snf_ipm(view(nodes, [job("j0", 3, 10.0)], now=50.0), params)
    assert (first.switch_off, first.switch_on, first.call_at) == ([], [], [100.0])
    second = decide_snf_ipm(view(nodes, [job("j0", 3, 10.0)], now=100.0), params)
    assert (second.switch_off, second.switch_on, second.call_at) == ([0], [], [370.0])
    with_rule = decide_snf_ipm(view(nodes, [job("j0", 3, 10.0)], now=50.0), TIMEOUT)
    assert with_rule.call_at == [100.0, 370.0]


def test_next_timer_expiry_is_in_the_future_only():
    nodes = table([idle(0.0), idle(30.0), computing(10.0)])
    assert next_timer_expiry(timers(nodes, 100.0), 100.0) == 130.0
    assert next_timer_expiry(timers(nodes, 100.0), 130.0) is None


def test_node_that_cannot_sleep_is_never_switched_off():
    """The power model gives a node without sleep state infinite switch times and energies.
    Such a node is never worth switching off (and Batsim could not): expected none."""
    never = {"t_on": math.inf, "t_off": math.inf, "e_on": math.inf, "e_off": math.inf}
    nodes = table([idle(0.0, **never), idle(0.0)])
    assert nodes_to_switch_off(nodes, timers(nodes, 100.0), [], 100.0).tolist() == [1]


@settings(deadline=None, derandomize=True, database=None, max_examples=100)
@given(specs=st.lists(node_strategy, min_size=1, max_size=6),
       queue=st.lists(st.tuples(st.integers(1, 6), st.sampled_from([5.0, 400.0])), max_size=3),
       icon=st.booleans())
def test_the_outcome_release_map_is_the_map_of_the_dispatched_table(specs, queue, icon):
    """The release map a power manager hands on is the map of the table the dispatch
    leaves: requested times for IPM, predicted releases (eq. 56) for SNF-ICON (for either,
    none when no job waits); the plan of no job is empty."""
    from snficon.core.controller import IconPower, active_remaining, predicted_releases
    from snficon.core.dispatch import SnfOrder
    from snficon.core.ipm import IpmPower
    from snficon.core.params import IconParams
    from snficon.core.plan import release_map

    the_view = view(specs, [job(f"j{i}", res, req) for i, (res, req) in enumerate(queue)],
                    now=50.0)
    order = SnfOrder()
    dispatched = order.dispatch(the_view)
    params = IconParams(fallback=False)
    power = IconPower(params, np.full(len(specs), 10.0)) if icon else IpmPower(TIMEOUT)
    memory = power.memory if icon else None
    outcome = power.decide(the_view, dispatched, order)
    if icon:
        active = active_remaining(the_view, dispatched.starts, memory.estimates, params)
        expected = predicted_releases(StateGroups.of(dispatched.nodes), 50.0, active)
    else:
        expected = release_map(StateGroups.of(dispatched.nodes), 50.0)
    if not dispatched.waiting:
        assert outcome.release is None
    else:
        assert outcome.release.tolist() == expected.tolist()
    if not dispatched.waiting:
        assert len(outcome.plan) == 0 and list(outcome.plan) == []


@settings(deadline=None, derandomize=True, database=None, max_examples=150)
@given(specs=st.lists(node_strategy, min_size=1, max_size=8),
       asks=st.lists(st.tuples(st.sampled_from([10.0, 30.0, 50.0]),
                               st.sampled_from([40.0, 50.0, 60.0 + 1e-7, 100.0]),
                               st.sets(st.integers(0, 7), max_size=3)), min_size=1, max_size=5))
def test_idle_timers_give_the_timers_of_the_nodes(specs, asks):
    """The expired idle nodes and the next expiry, read from a table's idle timers,
    against their definitions node by node."""
    from snficon.core.clock import is_due
    from snficon.core.view import NodeState

    nodes = table(specs)
    for timeout, now, leaving in asks:
        leaving = sorted(n for n in leaving if n < len(specs))
        ends = {i: float(nodes.idle_since_s[i]) + timeout for i in range(len(specs))
                if nodes.state[i] == NodeState.IDLE}
        assert expired_idle_nodes(timers(nodes, timeout), now).tolist() == sorted(
            i for i, end in ends.items() if is_due(end, now))
        future = [end for i, end in ends.items() if i not in leaving and not is_due(end, now)]
        assert next_timer_expiry(timers(nodes, timeout), now, leaving) == min(future,
                                                                              default=None)


@settings(deadline=None, derandomize=True, database=None, max_examples=200)
@given(specs=st.lists(st.one_of(
           st.builds(computing, st.sampled_from([10.0, 60.0, 100.0 + 1e-7, 250.0, math.inf])),
           st.builds(sleeping, t_on=st.sampled_from([30.0, 60.0, 60.0 + 1e-7, math.inf])),
           st.builds(idle, st.sampled_from([0.0, 20.0]))), min_size=1, max_size=8),
       asks=st.lists(st.tuples(st.sampled_from([0.0, 40.0, 40.0 + 1e-7, 100.0]),
                               st.sets(st.integers(0, 7), max_size=3)), min_size=1, max_size=4))
def test_request_end_calls_are_every_future_end_minus_every_sleeping_t_on(specs, asks):
    """The request-end calls (SPEC 5, IPM callbacks), read from the state groups, against
    their definition node by node: each finite requested end e of a computing node
    still ahead, less T_on of each node asleep and not woken now, when still ahead;
    each time once, ascending (as Python floats)."""
    from snficon.core.clock import is_future
    from snficon.core.view import NodeState

    nodes = table(specs)
    groups = StateGroups.of(nodes)
    for now, woken in asks:
        woken = sorted(n for n in woken if n < len(specs)
                       and nodes.state[n] == NodeState.SLEEPING)
        ends = [float(nodes.release_req_s[i]) for i in range(len(specs))
                if nodes.state[i] == NodeState.COMPUTING]
        leads = [float(nodes.t_on_s[i]) for i in range(len(specs))
                 if nodes.state[i] == NodeState.SLEEPING and i not in woken]
        expected = sorted({end - lead for end in ends for lead in leads
                           if math.isfinite(end) and is_future(end, now)
                           and is_future(end - lead, now)})
        calls = request_end_calls(groups, now, woken)
        assert calls == expected and all(type(call) is float for call in calls)


# ---------------------------------------------------------------------- wakes (PSAS, SPEC 5)


def test_wake_time_already_reached_switches_on_now():
    """now 0: j0 (2 nodes) with 1 idle node and 2 asleep: planned at 30 on the idle node
    (3000 J) and sleeping node 1 (4500 J, lower id than node 2); wake at 0: switched on
    now. Node 2 stays asleep. Callback: the idle timer of node 0, at 7200."""
    decisions = decide_snf_ipm(view([idle(0.0), sleeping(), sleeping()], [job("j0", 2, 100.0)]),
                               DEFAULT)
    assert decisions.switch_on == [1]
    assert decisions.call_at == [7200.0]


def test_future_wake_time_is_a_callback_then_a_switch_on():
    """Node 0 computes until 200: j0 (2 nodes) is planned at 200; sleeping node 1 wakes at
    170 -> callback at 170. At 170 the same plan gives a wake now: switched on."""
    nodes = [computing(200.0), sleeping()]
    first = decide_snf_ipm(view(nodes, [job("j0", 2, 10.0)], now=0.0), DEFAULT)
    assert (first.switch_on, first.call_at) == ([], [170.0])
    second = decide_snf_ipm(view(nodes, [job("j0", 2, 10.0)], now=170.0), DEFAULT)
    assert (second.switch_on, second.call_at) == ([1], [])


def test_node_switching_off_is_not_switched_on_and_gets_a_callback():
    """Node 1 is asleep at 5: ready at 35; j0 planned at 100 (node 0) -> wake at 70:
    no switch-on now (it is switching off), callback at 70."""
    decisions = decide_snf_ipm(view([computing(100.0), switching_off(5.0)],
                                    [job("j0", 2, 10.0)]), DEFAULT)
    assert (decisions.switch_on, decisions.call_at) == ([], [70.0])


def test_node_reaching_sleep_now_is_woken_by_the_transition_call():
    """now 100, node 1 switching off until 100: ready at 130, j0 planned at 130 on {0, 1},
    wake at 100 = now but the node is not asleep yet: neither switch-on nor callback
    for it (its RESOURCE_STATE_CHANGED calls the scheduler). Once asleep (same time,
    next call) it is switched on."""
    queue = [job("j0", 2, 10.0)]
    before = decide_snf_ipm(view([idle(100.0), switching_off(100.0)], queue, now=100.0),
                            DEFAULT)
    assert (before.switch_on, before.call_at) == ([], [7300.0])
    after = decide_snf_ipm(view([idle(100.0), sleeping()], queue, now=100.0), DEFAULT)
    assert after.switch_on == [1]


def test_wakes_take_the_earliest_planned_use_of_each_node():
    """Eq. 16. Nodes: 0 computing until 200, 1 asleep (T_on 30), 2 computing until 500,
    3 asleep (T_on 60). j0 (2 nodes, 10 s): ready times [200, 30, 500, 60] -> s = 60 on
    {1, 3}, f = 70. j1 (2 nodes): s = 70 on {1, 3} again. Wakes: node 3 min(0, 10) = 0
    -> now; node 1 min(30, 40) = 30 -> callback at 30. The request-end calls add, for
    node 1 still asleep, 200 - 30 = 170 and 500 - 30 = 470."""
    nodes = [computing(200.0), sleeping(), computing(500.0), sleeping(t_on=60.0)]
    queue = [job("j0", 2, 10.0), job("j1", 2, 10.0)]
    plan_only = dataclasses.replace(DEFAULT, request_end_calls=False)
    decisions = decide_snf_ipm(view(nodes, queue), plan_only)
    assert (decisions.switch_on, decisions.call_at) == ([3], [30.0])
    decisions = decide_snf_ipm(view(nodes, queue), DEFAULT)
    assert (decisions.switch_on, decisions.call_at) == ([3], [30.0, 170.0, 470.0])


def test_wake_at_now_plus_t_on_minus_t_on_is_now():
    """now = 1489.0031088499188 (a time of the markovian run on AOBA, T_on = 1200 s): one
    idle node and one asleep; j0 (2 nodes) is planned at now + T_on, so the sleeping
    node's wake time is now: paper IV-C, "if this time has already arrived, the node is
    switched on immediately". Expected: switch-on now, no callback for it."""
    now = 1489.0031088499188
    nodes = [idle(now, t_on=1200.0, e_on=720000.0, p_idle=600.0),
             sleeping(t_on=1200.0, e_on=720000.0, p_idle=600.0)]
    decisions = decide_snf_ipm(view(nodes, [job("j0", 2, 10.0)], now=now), DEFAULT)
    assert decisions.switch_on == [1]
    assert decisions.call_at == [now + 7200.0]
