"""The baselines' dispatch orders: SNF dispatch, FCFS + EASY backfilling (SPEC 5).

The PSAS wakes are in ``test_ipm``.

Figures: idle power 100 W, T_on 30 s, E_on 4500 J, T_off 10 s (``conftest``).
The default timeout is 7200 s; a test giving another says so.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.core.dispatch import EasyOrder, dispatch_fcfs_easy, dispatch_snf
from snficon.core.ipm import IpmPower, request_end_calls
from snficon.core.node_choice import StateGroups
from snficon.core.order import fcfs_order, snf_order
from snficon.core.params import EasyParams, IpmParams
from snficon.core.plan import release_map, sequential_plan
from snficon.core.policy import Policy, decide_fcfs_easy_ipm, decide_snf_ipm
from snficon.core.view import NodeState
from snficon.errors import InputError
from snficon.part_registry import compose

from .conftest import (
    computing,
    idle,
    job,
    sleeping,
    started,
    switching_off,
    switching_on,
    table,
    view,
)

DEFAULT = IpmParams()


def ids(jobs):
    return [j.job_id for j in jobs]


# ---------------------------------------------------------------------- SNF dispatch


def test_snf_starts_in_key_order_and_stops_at_the_first_misfit():
    """3 idle nodes (idle since 0, 10, 5). SNF order: j3 (1 node), j2 (2 nodes, 50 s),
    j1 (2 nodes, 100 s), j0 (4 nodes). j3 takes node 1 (longest remaining timer),
    j2 takes nodes 2 and 0; j1 does not fit -> the scan stops; j0 (larger) waits too.
    The waiting jobs stay in SNF order."""
    queue = [job("j0", 4, 10.0), job("j1", 2, 100.0), job("j2", 2, 50.0), job("j3", 1, 1000.0)]
    dispatch = dispatch_snf(view([idle(0.0), idle(10.0), idle(5.0)], queue, now=20.0))
    waiting = dispatch.waiting
    assert started(dispatch) == {"j3": {1}, "j2": {0, 2}}
    assert [s.job_id for s in dispatch.starts] == ["j3", "j2"]
    assert ids(waiting) == ["j1", "j0"]


def test_snf_ties_go_to_the_shorter_request_then_the_earlier_arrival():
    """2 idle nodes, three 2-node jobs: j0 asks 100 s, j1 and j2 50 s -> j1 starts."""
    queue = [job("j0", 2, 100.0), job("j2", 2, 50.0), job("j1", 2, 50.0)]
    dispatch = dispatch_snf(view([idle(), idle()], queue))
    waiting = dispatch.waiting
    assert started(dispatch) == {"j1": {0, 1}}
    assert ids(waiting) == ["j2", "j0"]


def test_snf_does_not_start_on_nodes_still_switching_on():
    """1 idle node and 1 switching on (idle at 5): the 2-node job waits, planned at 5;
    no wake (the node is already coming), callback only for the idle timer."""
    decisions = decide_snf_ipm(view([idle(), switching_on(5.0)], [job("j0", 2, 10.0)]), DEFAULT)
    assert decisions.starts == [] and decisions.switch_on == []
    assert decisions.call_at == [7200.0]


# ---------------------------------------------------------------------- EASY


EASY_NODES = [idle(0.0), idle(5.0), idle(8.0), computing(100.0), computing(100.0),
              computing(300.0)]


def test_easy_reserves_the_head_and_backfills_by_both_conditions():
    """now 10. Head h (4 nodes) does not fit on the 3 idle nodes.

    Reservation: releases [10, 10, 10, 100, 100, 300] -> planned start 100;
    nodes ready by 100: 3 and 4 cost 0, idle ones 100 W x 90 s each, latest
    idle first -> reserved {3, 4, 2, 1}; node 0 is outside.
    a (1 node, ends 510 > 100): outside the reservation -> node 0.
    b (1 node, ends 510): no idle node outside the reservation left -> waits.
    d (1 node, ends 101 > 100): reserved nodes 1, 2 are idle but it would
    end after the head's start -> refused.
    c (2 nodes, ends 90 <= 100): may use reserved nodes -> {1, 2}.
    """
    queue = [job("h", 4, 50.0, submit=0.0, order=0), job("a", 1, 500.0, submit=1.0, order=1),
             job("b", 1, 500.0, submit=2.0, order=2), job("d", 1, 91.0, submit=3.0, order=3),
             job("c", 2, 80.0, submit=4.0, order=4)]
    the_view = view(EASY_NODES, queue, now=10.0)
    dispatch = dispatch_fcfs_easy(the_view)
    waiting = dispatch.waiting
    assert started(dispatch) == {"a": {0}, "c": {1, 2}}
    assert ids(waiting) == ["h", "b", "d"]
    # The backfilled jobs do not delay the head: still planned at 100.
    after = dispatch.nodes
    groups = StateGroups.of(after)
    plan = sequential_plan(groups, release_map(groups, 10.0), waiting[:1], [50.0], 10.0)
    assert plan[0].start == 100.0


def test_easy_backfill_may_end_exactly_at_the_head_start_but_not_after():
    """now 0: head h (2 nodes) needs node 1 (computing until 100): planned at 100 on
    {0, 1}. x (1 node, 100 s) ends at 100, not after: starts on node 0. y (100.5 s)
    would end after 100: refused, although node 0 is idle."""
    nodes = [idle(0.0), computing(100.0)]
    h = job("h", 2, 10.0, submit=0.0, order=0)
    dispatch = dispatch_fcfs_easy(view(nodes, [h, job("x", 1, 100.0, submit=1.0, order=1)]))
    assert started(dispatch) == {"x": {0}}
    dispatch = dispatch_fcfs_easy(
        view(nodes, [h, job("y", 1, 100.5, submit=1.0, order=1)]))
    waiting = dispatch.waiting
    assert started(dispatch) == {} and ids(waiting) == ["h", "y"]


def test_fcfs_heads_that_fit_start_in_arrival_order():
    """3 idle nodes, node 3 computing until 50. j0 (1 node) starts on node 0. Head j1
    (3 nodes): releases [60, 0, 0, 50] -> planned at 50 on {3, 1, 2} (node 0 is busy
    until 60). j2 (1 node, 1000 s) would end after 50 and no idle node is outside the
    reservation: it waits. SNF would start j0 and j2 (the two 1-node jobs)."""
    nodes = [idle(0.0), idle(0.0), idle(0.0), computing(50.0)]
    queue = [job("j0", 1, 60.0, submit=0.0), job("j1", 3, 10.0, submit=1.0),
             job("j2", 1, 1000.0, submit=2.0)]
    dispatch = dispatch_fcfs_easy(view(nodes, queue))
    waiting = dispatch.waiting
    assert started(dispatch) == {"j0": {0}}
    assert ids(waiting) == ["j1", "j2"]
    snf = dispatch_snf(view(nodes, queue))
    assert set(started(snf)) == {"j0", "j2"}


def test_easy_backfills_on_a_node_the_head_waits_to_wake():
    """Head h (2 nodes): idle node 0 and sleeping node 1 -> planned at 30 on {0, 1}.
    x (1 node, 20 s) ends at 20 <= 30 -> backfilled on node 0. The plan of h is
    still 30 and node 1 must wake at 30 - 30 = 0: switched on now."""
    queue = [job("h", 2, 100.0, submit=0.0, order=0), job("x", 1, 20.0, submit=1.0, order=1)]
    decisions = decide_fcfs_easy_ipm(view([idle(0.0), sleeping()], queue), DEFAULT)
    assert started(decisions) == {"x": {0}}
    assert decisions.switch_on == [1]
    assert decisions.switch_off == [] and decisions.call_at == []


def test_easy_plan_wakes_a_sleeping_node_for_a_backfill_ahead_of_the_head():
    """Nodes 0-1 compute until 1000, node 2 asleep (T_on 30 s). Head h (3 nodes) is planned
    at 1000 on {0, 1, 2}: node 2's wake is due at 970, a callback. x (1 node, 5000 s)
    cannot end by 1000, but the reservation holds every node: it waits behind h. With a
    fourth node asleep outside the reservation, x is planned ahead of h at now + 30 and
    that node is woken now (EASY in the plan, as the authors' FCFS/B)."""
    queue = [job("h", 3, 100.0, submit=0.0, order=0), job("x", 1, 5000.0, submit=1.0, order=1)]
    three = [computing(1000.0), computing(1000.0), sleeping()]
    blocked = decide_fcfs_easy_ipm(view(three, queue), DEFAULT)
    assert (blocked.switch_on, blocked.call_at) == ([], [970.0])
    four = decide_fcfs_easy_ipm(view([*three, sleeping()], queue), DEFAULT)
    assert four.switch_on == [3]
    assert four.call_at == [970.0]


def test_easy_backfill_takes_nodes_outside_the_reservation_first():
    """Nodes 0 (idle since 0) and 1 (idle since 5) idle, 2-3 compute until 100. Head h
    (3 nodes) is planned at 100 on {2, 3} (0 J) and node 1 (100 W x 100 s, the latest
    idle); node 0 is outside. x (50 s) ends by 100, so reserved node 1 would be allowed,
    and its longer idle timer would rank it first; but a node outside the reservation
    is free, and the authors' code takes it: node 0."""
    nodes = [idle(0.0), idle(5.0), computing(100.0), computing(100.0)]
    queue = [job("h", 3, 10.0, submit=0.0, order=0), job("x", 1, 50.0, submit=1.0, order=1)]
    dispatch = dispatch_fcfs_easy(view(nodes, queue))
    assert started(dispatch) == {"x": {0}}
    assert ids(dispatch.waiting) == ["h"]


def test_easy_passes_repeat_while_they_start_jobs():
    """Nodes 0-1 idle since 0, 2-3 compute until 100. Head h (3 nodes) is planned at 100
    on {2, 3} (0 J) and node 0 (100 W x 100 s; tie with node 1, lower id).

    Pass 1: x (50 s) takes node 1, outside the reservation; y (1000 s) finds no node
    outside it and would end after 100: it waits. Pass 2: h's reservation is made again
    with node 1 released at 50 (5000 J < 10000 J for idle node 0): {2, 3, 1}, so node 0
    is outside and y starts there. h is still planned at 100."""
    nodes = [idle(0.0), idle(0.0), computing(100.0), computing(100.0)]
    queue = [job("h", 3, 10.0, submit=0.0, order=0), job("x", 1, 50.0, submit=1.0, order=1),
             job("y", 1, 1000.0, submit=2.0, order=2)]
    dispatch = dispatch_fcfs_easy(view(nodes, queue))
    assert started(dispatch) == {"x": {1}, "y": {0}}
    assert ids(dispatch.waiting) == ["h"]
    after = dispatch.nodes
    groups = StateGroups.of(after)
    plan = sequential_plan(groups, release_map(groups, 0.0), dispatch.waiting, [10.0], 0.0)
    assert (plan[0].start, sorted(plan[0].nodes.tolist())) == (100.0, [1, 2, 3])


def test_no_backfilling_when_the_head_cannot_be_planned():
    """now 100: node 1 computes past its request (ends at 50 by it): never plannable, so
    h (2 nodes) has no planned start. x (1 node, 10 s) fits on idle node 0, but with no
    known start for h any backfill could delay it: nothing starts, nothing is planned."""
    nodes = [idle(100.0), computing(50.0)]
    queue = [job("h", 2, 10.0, submit=0.0, order=0), job("x", 1, 10.0, submit=1.0, order=1)]
    dispatch = dispatch_fcfs_easy(view(nodes, queue, now=100.0))
    assert started(dispatch) == {} and ids(dispatch.waiting) == ["h", "x"]
    decisions = decide_fcfs_easy_ipm(view(nodes, queue, now=100.0), DEFAULT)
    assert decisions.starts == [] and decisions.switch_on == []


def test_easy_plan_option_picks_the_future_plan():
    """The case of test_easy_plan's first test as a decision (no idle node: nothing starts).
    Default "gaps": j3 is planned at 30 on sleeping node 4, woken now. "head": j3 is
    planned at 200, node 4's wake is a callback at 170."""
    nodes = [switching_on(20.0), switching_on(20.0), computing(200.0), computing(200.0),
             sleeping()]
    queue = [job("h", 2, 100.0, submit=0.0), job("j2", 4, 50.0, submit=1.0),
             job("j3", 1, 10.0, submit=2.0)]
    gaps = decide_fcfs_easy_ipm(view(nodes, queue), DEFAULT)
    assert (gaps.starts, gaps.switch_on, gaps.call_at) == ([], [4], [])
    head = Policy(EasyOrder(EasyParams(easy_plan="head")), IpmPower(DEFAULT))(view(nodes, queue))
    assert (head.starts, head.switch_on, head.call_at) == ([], [], [170.0])
    with pytest.raises(InputError, match="'easy_plan': 'conservative' is not one of gaps, head"):
        compose("fcfs-easy", "ipm", options={"easy_plan": "conservative"})
    assert compose("fcfs-easy", "ipm", options={"easy_plan": "head"}).params[
        "fcfs-easy"] == EasyParams(easy_plan="head")


# ---------------------------------------------------------------------- properties

node_strategy = st.one_of(
    st.builds(idle, st.sampled_from([0.0, 20.0, 40.0])),
    st.builds(computing, st.sampled_from([10.0, 60.0, 100.0, 250.0])),
    st.builds(sleeping, t_on=st.sampled_from([30.0, 60.0])),
    st.builds(switching_off, st.sampled_from([45.0, 80.0])),
    st.builds(switching_on, st.sampled_from([45.0, 90.0])),
)
queue_strategy = st.lists(
    st.tuples(st.integers(1, 6), st.sampled_from([5.0, 40.0, 300.0]),
              st.sampled_from([0.0, 1.0, 2.0])), max_size=7)
PROPERTY = settings(deadline=None, derandomize=True, database=None, max_examples=120)


def make_view(specs, jobs, now=40.0):
    queue = [job(f"j{i}", res, req, submit=sub) for i, (res, req, sub) in enumerate(jobs)]
    return view(specs, queue, now=now)


def check_decisions(the_view, decisions, timeout, dispatched):
    """What any baseline decision must respect, whatever the state (``dispatched``: the
    order's dispatch of the view, whose table the request-end calls are asked on)."""
    nodes, now = the_view.nodes, the_view.now
    used = [n for s in decisions.starts for n in s.nodes]
    assert len(used) == len(set(used))
    assert all(nodes.state[n] == NodeState.IDLE for n in used)
    assert all(nodes.state[n] == NodeState.SLEEPING for n in decisions.switch_on)
    for n in decisions.switch_off:
        assert nodes.state[n] == NodeState.IDLE and n not in used
        assert nodes.idle_since_s[n] + timeout <= now
    # one call for the plan or a timer, plus the request-end calls (SPEC 5, IPM callbacks)
    extra = request_end_calls(dispatched.groups, now, decisions.switch_on)
    assert all(t > now for t in decisions.call_at)
    assert len([t for t in decisions.call_at if t not in extra]) <= 1
    waiting = len(the_view.queue) - len(decisions.starts)
    if decisions.switch_on:
        assert waiting > 0  # the baselines wake nodes only for queued jobs


@PROPERTY
@given(specs=st.lists(node_strategy, min_size=1, max_size=7), jobs=queue_strategy,
       timeout=st.sampled_from([10.0, 30.0, 7200.0]))
def test_snf_decisions_properties(specs, jobs, timeout):
    """SNF: starts are an SNF prefix, no waiting job fits on the idle nodes left."""
    the_view = make_view(specs, jobs)
    decisions = decide_snf_ipm(the_view, IpmParams(timeout=timeout))
    check_decisions(the_view, decisions, timeout, dispatch_snf(the_view))
    ordered = snf_order(the_view.queue)
    assert [s.job_id for s in decisions.starts] == ids(ordered[:len(decisions.starts)])
    free = np.count_nonzero(the_view.nodes.state == NodeState.IDLE) - sum(
        len(s.nodes) for s in decisions.starts)
    assert all(j.res > free for j in ordered[len(decisions.starts):])


@PROPERTY
@given(specs=st.lists(node_strategy, min_size=1, max_size=7), jobs=queue_strategy,
       timeout=st.sampled_from([10.0, 30.0, 7200.0]))
def test_easy_decisions_properties(specs, jobs, timeout):
    """FCFS/EASY: the FCFS heads that fit start; the head left does not fit; backfilling
    never delays the head's planned start (compared with a queue cut after the head)."""
    the_view = make_view(specs, jobs)
    decisions = decide_fcfs_easy_ipm(the_view, IpmParams(timeout=timeout))
    check_decisions(the_view, decisions, timeout, dispatch_fcfs_easy(the_view))
    dispatch = dispatch_fcfs_easy(the_view)
    waiting = dispatch.waiting
    assert started(dispatch) == started(decisions)
    if not waiting:
        return
    ordered = fcfs_order(the_view.queue)
    cut = ordered.index(waiting[0]) + 1
    assert all(j not in waiting for j in ordered[:cut - 1])
    free = np.count_nonzero(dispatch.nodes.state == NodeState.IDLE)
    assert waiting[0].res > free
    alone = dispatch_fcfs_easy(
        view(the_view.nodes, ordered[:cut], now=the_view.now))
    alone_waiting = alone.waiting
    assert alone_waiting == [waiting[0]]

    def head_start(dispatched):
        nodes = dispatched.nodes
        groups = StateGroups.of(nodes)
        plan = sequential_plan(groups, release_map(groups, the_view.now), [waiting[0]],
                               [waiting[0].req_time_s], the_view.now)
        return plan[0].start if plan else math.inf

    assert head_start(dispatch) <= head_start(alone)


def test_table_after_starts_marks_started_nodes_computing():
    """The table the plan sees: started nodes computing until now + request, no timer."""
    the_view = view([idle(0.0), idle(5.0)], [job("j0", 1, 60.0)], now=10.0)
    dispatch = dispatch_snf(the_view)
    after = dispatch.nodes
    assert after.state.tolist() == [NodeState.IDLE, NodeState.COMPUTING]
    assert after.release_req_s[1] == 70.0 and math.isnan(after.idle_since_s[1])
    assert after.idle_since_s[0] == 0.0
    assert the_view.nodes.state.tolist() == [NodeState.IDLE, NodeState.IDLE]
    assert table([idle()]).state.flags.writeable is False


def test_backfill_counts_the_idle_nodes_outside_the_reservation_again_after_a_start():
    """A start refused for want of idle nodes outside an exclusion is refused without
    choosing; after a start the count outside the same exclusion is taken again."""
    from snficon.core.dispatch import Dispatch

    nodes = [idle(0.0), idle(0.0), idle(0.0), computing(500.0)]
    dispatch = Dispatch(view(nodes, now=10.0))
    reserved = np.array([0, 1])
    assert not dispatch.start(job("j1", 2, 5.0), exclude=reserved)  # only node 2 outside
    assert dispatch.start(job("j2", 1, 5.0), exclude=reserved)
    assert started(dispatch) == {"j2": {2}}
    assert not dispatch.start(job("j3", 1, 5.0), exclude=reserved)  # none left outside
    assert dispatch.start(job("j4", 2, 5.0))
    assert not dispatch.start(job("j5", 1, 5.0))
    assert started(dispatch) == {"j2": {2}, "j4": {0, 1}}


@settings(deadline=None, derandomize=True, database=None, max_examples=200)
@given(specs=st.lists(st.one_of(
           st.builds(idle, st.sampled_from([0.0, 3.0, 7.0]), p_idle=st.sampled_from([50.0, 100.0])),
           st.builds(computing, st.sampled_from([20.0, 60.0])),
           st.builds(sleeping), st.builds(switching_on, st.sampled_from([15.0])),
           st.builds(switching_off, st.sampled_from([15.0]))), min_size=1, max_size=10),
       starts=st.lists(st.tuples(st.integers(1, 4), st.sets(st.integers(0, 9), max_size=4)),
                       max_size=6))
def test_starts_take_the_nodes_chosen_from_scratch(specs, starts):
    """A start takes the first still-idle nodes of one order found per invocation: the
    nodes :func:`choose_nodes` picks from scratch among the idle ones left (outside the
    exclusion). The table left behind, and its state groups found from the view's, are
    those of a table built from the final states."""
    from snficon.core.dispatch import Dispatch
    from snficon.core.node_choice import choose_nodes

    now = 10.0
    the_view = view(specs, now=now)
    dispatch = Dispatch(the_view)
    state = the_view.nodes.state.copy()
    for k, (res, excluded) in enumerate(starts):
        exclude = np.array(sorted(n for n in excluded if n < len(specs)), dtype=np.int64)
        release = np.where(state == NodeState.IDLE, now, np.inf)
        expected = choose_nodes(StateGroups.of(the_view.nodes), release, now, res, now, exclude)
        took = dispatch.start(job(f"j{k}", res, 30.0), exclude=exclude if len(exclude) else None)
        assert took == (len(expected) == res)
        if took:
            assert list(dispatch.starts[-1].nodes) == expected.tolist()
            state[expected] = NodeState.COMPUTING
        assert dispatch.table().nodes.state.tolist() == state.tolist()
    kept = dispatch.table()
    after = kept.nodes
    assert after.state.tolist() == state.tolist()
    fresh = StateGroups.of(after)
    for name in ("computing", "idle", "switching_on", "switching_off", "sleeping", "awake",
                 "asleep"):
        assert getattr(kept, name).tolist() == getattr(fresh, name).tolist(), name
        assert not getattr(kept, name).flags.writeable, name
    assert kept.counts == fresh.counts


@PROPERTY
@given(specs=st.lists(node_strategy, min_size=1, max_size=8), jobs=queue_strategy)
def test_the_dispatched_groups_are_the_groups_of_the_table_left(specs, jobs):
    """Each order hands on the groups of the table its starts leave (found from the view's,
    pass after pass for EASY): those built from that table's states."""
    the_view = make_view(specs, jobs)
    for dispatch in (dispatch_snf, dispatch_fcfs_easy):
        dispatched = dispatch(the_view)
        kept, fresh = dispatched.groups, StateGroups.of(dispatched.nodes)
        assert kept.nodes is dispatched.nodes
        assert kept.counts == fresh.counts
        for name in ("computing", "idle", "switching_on", "switching_off", "sleeping",
                     "awake", "asleep"):
            assert getattr(kept, name).tolist() == getattr(fresh, name).tolist(), name
        started = [n for start in dispatched.starts for n in start.nodes]
        assert all(dispatched.nodes.state[n] == NodeState.COMPUTING for n in started)


@PROPERTY
@given(specs=st.lists(node_strategy, min_size=1, max_size=8), jobs=queue_strategy)
def test_the_dispatched_release_map_is_that_of_the_table_left(specs, jobs):
    """The release map of requested times a dispatch hands on (EASY's, made for its last
    reservation; made on demand for SNF) is the map of the table its starts leave, at
    the invocation's time, and nobody can change it."""
    the_view = make_view(specs, jobs)
    for dispatch in (dispatch_snf, dispatch_fcfs_easy):
        dispatched = dispatch(the_view)
        release = dispatched.requested_release(the_view.now)
        fresh = release_map(StateGroups.of(dispatched.nodes), the_view.now)
        np.testing.assert_array_equal(release, fresh)
        assert not release.flags.writeable
    easy = dispatch_fcfs_easy(the_view)
    assert (easy.release is not None) == bool(easy.waiting)
