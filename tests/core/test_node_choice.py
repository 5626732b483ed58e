"""SPEC 5's node choice: state groups (Definition 1), committed energy, the choice's keys.

Figures are the defaults of ``conftest``: idle power 100 W, T_on 30 s,
E_on 4500 J (so 150 W while switching on), T_off 10 s, E_off 500 J (50 W),
unless a node says otherwise.

Node-choice cost (SPEC 5, as the authors' code computes it): the transition
energy still to spend before the node can compute (the rest of a switch-on;
the rest of a switch-off plus E_on; E_on for a sleeping node) plus, for a
node that will be awake, idle power x (s - release). A sleeping node is
woken just in time (at s - T_on), so it has no idle term.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.core.node_choice import StateGroups, choose_nodes, committed_energy
from snficon.core.plan import release_map
from snficon.core.view import NodeState

from .conftest import (
    computing,
    idle,
    sleeping,
    switching_off,
    switching_on,
    table,
)

INF = math.inf

# ---------------------------------------------------------------------- strategies

node_strategy = st.one_of(
    st.builds(idle, st.sampled_from([0.0, 20.0, 50.0]),
              p_idle=st.sampled_from([50.0, 100.0])),
    st.builds(computing, st.sampled_from([10.0, 60.0, 100.0, 250.0])),
    st.builds(sleeping, t_on=st.sampled_from([30.0, 60.0]), e_on=st.sampled_from([0.0, 4500.0])),
    st.builds(switching_off, st.sampled_from([55.0, 80.0])),
    st.builds(switching_on, st.sampled_from([55.0, 90.0])),
)
RANK = {NodeState.IDLE: 0, NodeState.COMPUTING: 1, NodeState.SWITCHING_ON: 2,
        NodeState.SLEEPING: 3, NodeState.SWITCHING_OFF: 3}


def reference_choice(nodes, release, start, count, now):
    """Node choice of SPEC 5 written with Python tuples, as an independent check."""
    keys = []
    for i in range(nodes.size):
        if not release[i] <= start:
            continue
        state = NodeState(int(nodes.state[i]))
        left = max(nodes.transition_end_s[i] - now, 0.0)
        if state == NodeState.SLEEPING:
            cost = nodes.e_on_j[i]
        elif state == NodeState.SWITCHING_OFF:
            cost = nodes.e_off_j[i] / nodes.t_off_s[i] * left + nodes.e_on_j[i]
        else:
            on = nodes.e_on_j[i] / nodes.t_on_s[i] * left if state == NodeState.SWITCHING_ON \
                else 0.0
            cost = on + nodes.p_idle_w[i] * (start - release[i])
        timer = -nodes.idle_since_s[i] if state == NodeState.IDLE else INF
        keys.append((cost, RANK[state], timer, i))
    return [key[-1] for key in sorted(keys)[:count]]



# ---------------------------------------------------------------------- node choice

def choose(nodes, now, start, count, exclude=None):
    groups = StateGroups.of(nodes)
    return choose_nodes(groups, release_map(groups, now), start, count, now,
                        None if exclude is None else np.array(exclude)).tolist()


def test_committed_energy_is_what_is_left_of_each_transition():
    """now 0: switching on until 20 -> 20 s x 150 W = 3000 J; switching off until 5 ->
    5 s x 50 W + E_on = 4750 J; sleeping -> E_on = 4500 J; idle and computing -> 0;
    a switch-on already over -> 0."""
    nodes = table([switching_on(20.0), switching_off(5.0), sleeping(), idle(0.0),
                   computing(9.0), switching_on(-3.0)])
    groups = StateGroups.of(nodes)
    assert committed_energy(groups, 0.0).tolist() == [3000.0, 4750.0, 4500.0, 0.0, 0.0, 0.0]


def test_cost_comes_before_the_state_rank():
    """At s = 50 the idle node costs 100 W x 50 s = 5000 J, the node computing until 50 costs 0."""
    nodes = table([idle(0.0), computing(50.0)])
    assert choose(nodes, 0.0, 50.0, 1) == [1]


def test_sleeping_node_is_chosen_when_its_wake_costs_less_than_idling():
    """At s = 30: idle costs 100 W x 30 s = 3000 J; a sleeping node costs E_on.

    With E_on = 1000 J the sleeping node wins; with the default 4500 J the idle one.
    """
    assert choose(table([idle(0.0), sleeping(e_on=1000.0)]), 0.0, 30.0, 1) == [1]
    assert choose(table([idle(0.0), sleeping()]), 0.0, 30.0, 1) == [0]


def test_sleeping_node_woken_just_in_time_costs_only_its_switch_on():
    """At s = 100 the idle node would idle 100 s (10000 J); the sleeping node, woken at
    70, costs E_on = 4500 J whatever s: it is chosen. At s = 40 idle costs 4000 J < 4500."""
    nodes = table([idle(0.0), sleeping()])
    assert choose(nodes, 0.0, 100.0, 1) == [1]
    assert choose(nodes, 0.0, 40.0, 1) == [0]


def test_transitions_cost_what_is_left_of_them():
    """now 0, s = 20. Computing until 20: 0 J. Idle: 2000 J. Switching on until 20:
    the 20 s left at 150 W = 3000 J. Switching off until 5 (ready at 35, so only at
    s = 40): 5 s left at 50 W + E_on = 4750 J; sleeping: 4500 J.

    At s = 20: computing, idle, switching on. At s = 40 (computing 100 x 20 = 2000,
    idle 4000, sleeping 4500, switching off 4750, switching on 3000 + 100 x 20 =
    5000): computing, idle, sleeping, switching off, switching on.
    """
    nodes = table([switching_on(20.0), idle(0.0), computing(20.0), switching_off(5.0),
                   sleeping()])
    assert choose(nodes, 0.0, 20.0, 5) == [2, 1, 0]
    assert choose(nodes, 0.0, 40.0, 5) == [2, 1, 4, 3, 0]


def test_lower_idle_power_is_cheaper_unless_the_start_is_now():
    """Node 0 (200 W, idle since 50) vs node 1 (100 W, idle since 0), now = 50.

    s = 60: costs 2000 J vs 1000 J -> node 1. s = now: both cost 0, same
    state, so the longer remaining timer (node 0, idle later) wins.
    """
    nodes = table([idle(50.0, p_idle=200.0), idle(0.0)])
    assert choose(nodes, 50.0, 60.0, 1) == [1]
    assert choose(nodes, 50.0, 50.0, 1) == [0]


def test_equal_costs_rank_computing_before_switching_on_before_asleep():
    """s = 30: computing until 20 and switching on until 20 (a free switch-on: E_on 0)
    idle 10 s (1000 J); the sleeping node costs E_on = 1000 J. Order: computing, on,
    asleep."""
    nodes = table([sleeping(e_on=1000.0), switching_on(20.0, e_on=0.0), computing(20.0)])
    assert choose(nodes, 0.0, 30.0, 3) == [2, 1, 0]


def test_full_tie_break_order_when_every_cost_is_zero():
    """Idle power, E_on and E_off 0 make every cost 0 (s = 1000, all nodes ready).

    Then state: idle (latest idle_since first: 5 at 30, then 2 and 7 at 10 by
    id), computing (1, 6), switching on (4, 8), asleep or switching off (0, 3).
    """
    free = {"p_idle": 0.0, "e_on": 0.0, "e_off": 0.0}
    nodes = table([sleeping(**free), computing(100.0, **free), idle(10.0, **free),
                   switching_off(5.0, **free), switching_on(20.0, **free), idle(30.0, **free),
                   computing(50.0, **free), idle(10.0, **free), switching_on(10.0, **free)])
    assert choose(nodes, 40.0, 1000.0, 9) == [5, 2, 7, 1, 6, 4, 8, 0, 3]


def test_only_nodes_ready_by_the_start_and_not_excluded():
    """s = 50: node 1 (computing until 100) is not ready. Sleeping 2 (4500 J) before
    idle 0 (5000 J). Asking 3 returns the 2 there are."""
    nodes = table([idle(0.0), computing(100.0), sleeping()])
    assert choose(nodes, 0.0, 50.0, 3) == [2, 0]
    assert choose(nodes, 0.0, 50.0, 3, exclude=[2]) == [0]


# ---------------------------------------------------------------------- state groups

@settings(deadline=None, derandomize=True, database=None, max_examples=100)
@given(specs=st.lists(node_strategy, min_size=1, max_size=8),
       now=st.sampled_from([50.0, 60.0, 85.0]))
def test_state_groups_and_node_choice_keys_are_their_definitions(specs, now):
    """The state groups (Definition 1) and the node-choice keys of a table, against their
    definitions written out node by node; all read-only."""
    from snficon.core.node_choice import NodeChoice

    nodes = table(specs)
    groups = StateGroups.of(nodes)
    for state in NodeState:
        mask = getattr(groups, state.name.lower())
        assert mask.tolist() == (nodes.state == state).tolist()
        assert groups.counts[state] == int(np.count_nonzero(nodes.state == state))
    asleep = [int(s) in (NodeState.SLEEPING, NodeState.SWITCHING_OFF) for s in nodes.state]
    assert groups.asleep.tolist() == asleep
    assert groups.awake.tolist() == [not a for a in asleep]
    later = [-since if int(s) == NodeState.IDLE else math.inf
             for s, since in zip(nodes.state, nodes.idle_since_s.tolist(), strict=True)]
    choice = NodeChoice.of(groups, now)
    assert choice.later_idle.tolist() == later
    assert choice.rank.tolist() == [{0: 1, 1: 0, 2: 2, 3: 3, 4: 3}[int(s)] for s in nodes.state]
    assert choice.committed_j.tolist() == [reference_committed(node, now) for node in specs]
    for name in ("computing", "idle", "switching_on", "switching_off", "sleeping", "asleep",
                 "awake"):
        assert not getattr(groups, name).flags.writeable, name
    for name in ("committed_j", "rank", "later_idle"):
        assert not getattr(choice, name).flags.writeable, name


def reference_committed(node, now: float) -> float:
    """The transition energy a node must still spend before it can compute (J), from the
    definition of :func:`committed_energy`."""
    if node.state == NodeState.SLEEPING:
        return node.e_on
    if node.state == NodeState.SWITCHING_ON:
        return node.e_on / node.t_on * max(node.transition_end - now, 0.0)
    if node.state == NodeState.SWITCHING_OFF:
        return node.e_off / node.t_off * max(node.transition_end - now, 0.0) + node.e_on
    return 0.0
