"""A policy composes its parts (``policy``): layers admit, the order dispatches, the power
manager decides, the layers amend, each in its turn.

The parts here are tiny hand-made ones that record what they see, so that the order of
the calls and what each call is given can be read off directly.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from snficon.core.dispatch import SnfOrder
from snficon.core.ipm import IpmPower
from snficon.core.node_choice import StateGroups
from snficon.core.params import IpmParams
from snficon.core.parts import Dispatched, PowerOutcome
from snficon.core.policy import Policy, decide_fcfs_easy_ipm, decide_snf_ipm
from snficon.core.view import Decisions, JobStart

from .conftest import computing, idle, job, started, view


def ids(jobs):
    return [j.job_id for j in jobs]


class HoldLayer:
    """Holds one queued job back from the order; amends by asking a callback at ``call``."""

    def __init__(self, name, log, hold=None, call=None):
        self.name, self.log, self.hold, self.call = name, log, hold, call

    def admit(self, the_view):
        self.log.append((self.name, "admit", ids(the_view.queue)))
        if self.hold is None:
            return the_view
        return dataclasses.replace(
            the_view, queue=tuple(j for j in the_view.queue if j.job_id != self.hold))

    def amend(self, the_view, dispatched, outcome, order):
        self.log.append((self.name, "amend", ids(the_view.queue), list(outcome.decisions.call_at)))
        self.seen = (dispatched, outcome, order)
        if self.call is not None:
            outcome.decisions.call_at.append(self.call)


class FirstOnNodeZero:
    """Starts the first queued job on node 0; the rest waits, in queue order."""

    def __init__(self, log):
        self.log = log

    def dispatch(self, the_view):
        self.log.append(("order", "dispatch", ids(the_view.queue)))
        queue = list(the_view.queue)
        starts = [JobStart(queue[0].job_id, (0,))] if queue else []
        return Dispatched(starts=starts, groups=StateGroups.of(the_view.nodes),
                          waiting=queue[1:])

    def plan(self, groups, release, jobs, durations, now):
        return []


class CallAt:
    """Decides nothing but one callback, at ``at``."""

    def __init__(self, log, at):
        self.log, self.at = log, at

    def decide(self, the_view, dispatched, order):
        self.log.append(("power", "decide", ids(the_view.queue), ids(dispatched.waiting)))
        self.seen = (dispatched, order)
        decisions = Decisions(starts=list(dispatched.starts), call_at=[self.at])
        return PowerOutcome(decisions=decisions, plan=[],
                            release=np.full(the_view.nodes.size, np.inf), durations=[])


QUEUE = [job("j0", 1, 10.0), job("j1", 1, 10.0), job("j2", 1, 10.0)]


def test_layers_admit_in_order_then_order_power_then_layers_amend_in_order():
    """L1 holds j0 back, L2 holds j1: L2 admits what L1 left ([j1, j2]), the order sees
    [j2] and starts it; the power manager sees the view and the dispatch; then L1 and
    L2 amend the outcome in turn, L2 seeing L1's callback (60) after the power's (50)."""
    log = []
    first, second = HoldLayer("L1", log, hold="j0", call=60.0), HoldLayer("L2", log, hold="j1")
    order, power = FirstOnNodeZero(log), CallAt(log, 50.0)
    decisions = Policy(order, power, (first, second))(view([idle(), idle()], QUEUE))
    assert log == [
        ("L1", "admit", ["j0", "j1", "j2"]),
        ("L2", "admit", ["j1", "j2"]),
        ("order", "dispatch", ["j2"]),
        ("power", "decide", ["j2"], []),
        ("L1", "amend", ["j2"], [50.0]),
        ("L2", "amend", ["j2"], [50.0, 60.0]),
    ]
    assert started(decisions) == {"j2": {0}}
    assert decisions.call_at == [50.0, 60.0]


def test_the_power_manager_and_the_layers_get_the_dispatch_and_the_order():
    """One dispatch per invocation: the power manager and every layer's amend are given
    that very Dispatched and the policy's order; the layers get the power's outcome and
    the policy answers with its decisions."""
    log = []
    layer = HoldLayer("L", log)
    order, power = FirstOnNodeZero(log), CallAt(log, 5.0)
    decisions = Policy(order, power, (layer,))(view([idle()], QUEUE[:2]))
    dispatched, outcome, amended_order = layer.seen
    assert power.seen[0] is dispatched and power.seen[1] is order and amended_order is order
    assert outcome.decisions is decisions
    assert ids(dispatched.waiting) == ["j1"] and started(dispatched) == {"j0": {0}}


def test_no_layer_is_order_then_power():
    log = []
    decisions = Policy(FirstOnNodeZero(log), CallAt(log, 7.0))(view([idle()], QUEUE[:1]))
    assert log == [("order", "dispatch", ["j0"]), ("power", "decide", ["j0"], [])]
    assert (started(decisions), decisions.call_at) == ({"j0": {0}}, [7.0])


def test_the_baseline_shortcuts_are_their_policies_with_default_parameters():
    """One idle node (since 0), node 1 computing until 40, queue j0 (2 nodes), j1 (1 node,
    20 s). SNF starts j1 (the smaller) on node 0: nothing idle, the plan of j0 is at
    max(40, 0 + 20) = 40, no node asleep: no wake, no timer, so no callback.
    FCFS/EASY reserves 40 for j0 on {0, 1}; j1 ends at 20 <= 40 and is backfilled."""
    the_view = view([idle(0.0), computing(40.0)], [job("j0", 2, 10.0), job("j1", 1, 20.0)])
    snf = decide_snf_ipm(the_view)
    assert snf == Policy(SnfOrder(), IpmPower(IpmParams()))(the_view)
    assert (started(snf), snf.switch_on, snf.switch_off, snf.call_at) == ({"j1": {0}}, [], [], [])
    easy = decide_fcfs_easy_ipm(the_view)
    assert (started(easy), easy.call_at) == ({"j1": {0}}, [])
