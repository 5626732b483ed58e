"""PSAS planning: release map, sequential plan (paper Definition 6), wake times (eq. 15-16).

Figures are the defaults of ``conftest``: idle power 100 W, T_on 30 s,
E_on 4500 J (so 150 W while switching on), T_off 10 s, E_off 500 J (50 W),
unless a node says otherwise. The node choice is tested in ``test_node_choice``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.core.clock import is_due
from snficon.core.easy_plan import easy_gap_plan
from snficon.core.ipm import idle_timers, nodes_to_switch_off
from snficon.core.node_choice import StateGroups
from snficon.core.plan import (
    Plan,
    PlannedJob,
    decisive_wake_times,
    release_map,
    sequential_plan,
    wake_times,
)

from .conftest import (
    computing,
    idle,
    job,
    sleeping,
    switching_off,
    switching_on,
    table,
)
from .test_node_choice import node_strategy, reference_choice

INF = math.inf
NAN = math.nan

# ---------------------------------------------------------------------- release map


def test_release_map_of_every_node_state():
    """SPEC 5 release map at now = 100.

    idle -> now (100); computing -> start + requested time (500); computing
    past its request -> never (inf); computing exactly at its request -> 100;
    sleeping -> now + T_on (130, or 160 with T_on = 60); switching off (asleep
    at 120) -> 120 + 30 = 150; switching on (idle at 115) -> 115.
    """
    nodes = table([idle(40.0), computing(500.0), computing(50.0), computing(100.0),
                   sleeping(), sleeping(t_on=60.0), switching_off(120.0), switching_on(115.0)])
    release = release_map(StateGroups.of(nodes), 100.0)
    assert release.tolist() == [100.0, 500.0, INF, 100.0, 130.0, 160.0, 150.0, 115.0]


def test_release_map_never_goes_before_now():
    """A transition whose end is already reached counts from now: off -> now + T_on, on -> now."""
    nodes = table([switching_off(90.0), switching_on(95.0)])
    assert release_map(StateGroups.of(nodes), 100.0).tolist() == [130.0, 100.0]


def test_release_map_keeps_a_request_that_ends_within_the_clock_tolerance():
    """A job 0.5 us past its request at now = 100 is not over yet (the clock's 1 us
    tolerance): its nodes release at the request. 2 us past, or no request known: never."""
    nodes = table([computing(100.0 - 5e-7), computing(100.0 - 2e-6), computing(NAN)])
    assert release_map(StateGroups.of(nodes), 100.0).tolist() == [100.0 - 5e-7, INF, INF]


def test_release_map_is_a_fresh_array():
    nodes = table([idle(0.0)])
    release = release_map(StateGroups.of(nodes), 5.0)
    release[0] = 42.0  # writeable, and the table is untouched
    assert np.isnan(nodes.release_req_s[0])


# ---------------------------------------------------------------------- sequential plan

def plan_of(nodes, now, specs):
    """Plan jobs given as (res, duration); returns (start, finish, set of nodes) per job."""
    jobs = [job(f"j{i}", res, 1.0) for i, (res, _) in enumerate(specs)]
    groups = StateGroups.of(nodes)
    plan = sequential_plan(groups, release_map(groups, now), jobs, [d for _, d in specs], now)
    return [(p.start, p.finish, set(p.nodes.tolist())) for p in plan]


def test_barrier_keeps_a_later_job_from_being_planned_earlier():
    """Eq. 13 with b_{k+1} = s_k (FCFS-like order: a 2-node job, then a 1-node job).

    j0 (2 nodes, 50 s): releases [0, 100, 100] -> s = 100; cheapest ready
    nodes are 1 and 2 (cost 0, the idle node 0 would cost 10000 J); f = 150.
    j1 (1 node, 10 s): node 0 is free at 0 but the barrier is 100 -> s = 100.
    """
    nodes = table([idle(0.0), computing(100.0), computing(100.0)])
    assert plan_of(nodes, 0.0, [(2, 50.0), (1, 10.0)]) == [
        (100.0, 150.0, {1, 2}), (100.0, 110.0, {0})]


def test_planned_nodes_are_released_at_the_planned_finish():
    """Continuing the plan above: j2 (3 nodes, 5 s) finds node 0 at 110 and nodes
    1, 2 at 150 -> s = 150, f = 155; j3 (1 node) then starts at 155."""
    nodes = table([idle(0.0), computing(100.0), computing(100.0)])
    plan = plan_of(nodes, 0.0, [(2, 50.0), (1, 10.0), (3, 5.0), (1, 1.0)])
    assert plan[2] == (150.0, 155.0, {0, 1, 2})
    assert plan[3][0] == 155.0


def test_plan_uses_the_given_durations_not_the_requests():
    nodes = table([idle(0.0)])
    j = job("j0", 1, 999.0)
    groups = StateGroups.of(nodes)
    plan = sequential_plan(groups, release_map(groups, 0.0), [j], [7.0], 0.0)
    assert (plan[0].start, plan[0].finish) == (0.0, 7.0)


def test_planning_stops_at_the_first_job_without_enough_plannable_nodes():
    """Node 2 is past its request (never plannable): j1 needs 3 nodes, only 2 are
    plannable, so planning stops there and the 1-node j2 is not planned either."""
    nodes = table([idle(0.0), idle(0.0), computing(50.0)])
    release = release_map(StateGroups.of(nodes), 100.0)
    before = release.copy()
    jobs = [job("j0", 1, 10.0), job("j1", 3, 10.0), job("j2", 1, 10.0)]
    plan = sequential_plan(StateGroups.of(nodes), release, jobs, [10.0, 10.0, 10.0], 100.0)
    assert [p.job.job_id for p in plan] == ["j0"]
    assert np.array_equal(release, before)  # the caller's release map is not modified


def test_plan_prefers_idle_to_sleeping_nodes_at_the_same_start():
    """2 nodes, one idle, two asleep: s = 0 + T_on = 30; idle costs 3000 J, each
    sleeping node 4500 J -> nodes 0 and 1 (the lower id of the sleeping pair)."""
    nodes = table([idle(0.0), sleeping(), sleeping()])
    assert plan_of(nodes, 0.0, [(2, 10.0)]) == [(30.0, 40.0, {0, 1})]


# ---------------------------------------------------------------------- plan properties

@settings(deadline=None, derandomize=True, database=None, max_examples=150)
@given(specs=st.lists(node_strategy, min_size=1, max_size=8),
       jobs=st.lists(st.tuples(st.integers(1, 9), st.sampled_from([5.0, 40.0, 300.0])),
                     max_size=6))
def test_sequential_plan_properties(specs, jobs):
    """Random tables at now = 50: Definition 6 holds job by job.

    s_k >= b_k = s_{k-1}; s_k is the earliest such time with r nodes ready
    (fewer than r are ready strictly before it unless s_k is the barrier);
    B_k is the r lowest keys of SPEC 5 among nodes ready by s_k; a node's
    planned uses do not overlap; planning stops only for lack of plannable nodes.
    """
    now = 50.0
    nodes = table(specs)
    release = release_map(StateGroups.of(nodes), now)
    queue = [job(f"j{i}", res, 1.0) for i, (res, _) in enumerate(jobs)]
    plan = sequential_plan(StateGroups.of(nodes), release, queue, [d for _, d in jobs], now)
    current, barrier = release.copy(), now
    for planned, (res, duration) in zip(plan, jobs, strict=False):
        assert planned.start >= barrier
        assert planned.start == barrier or np.count_nonzero(current < planned.start) < res
        assert planned.nodes.tolist() == reference_choice(nodes, current, planned.start, res,
                                                          now)
        assert len(set(planned.nodes.tolist())) == res
        assert np.all(current[planned.nodes] <= planned.start)
        assert planned.finish == planned.start + duration
        current[planned.nodes] = planned.finish
        barrier = planned.start
    if len(plan) < len(jobs):
        assert jobs[len(plan)][0] > np.count_nonzero(np.isfinite(current))


# ---------------------------------------------------------------------- wake times


def test_sleeping_node_wakes_t_on_before_its_planned_start():
    """Node 0 computes until 100, node 1 sleeps: a 2-node job starts at 100, so
    node 1 wakes at 100 - 30 = 70; the computing node needs no wake."""
    nodes = table([computing(100.0), sleeping()])
    groups = StateGroups.of(nodes)
    plan = sequential_plan(groups, release_map(groups, 0.0), [job("j0", 2, 50.0)], [50.0], 0.0)
    assert wake_times(nodes, plan) == {1: 70.0}


def test_wake_time_is_the_earliest_over_the_planned_jobs():
    """Eq. 16 on a hand-written plan: node 1 (T_on 30) is used at 200 and at 100 ->
    min(170, 70) = 70; node 2 switching off (T_on 60) at 100 -> 40; idle node 0 -> none."""
    nodes = table([idle(0.0), sleeping(), switching_off(20.0, t_on=60.0)])
    later = PlannedJob(job("j1", 1, 1.0), 200.0, 201.0, np.array([1]))
    sooner = PlannedJob(job("j0", 3, 1.0), 100.0, 101.0, np.array([0, 1, 2]))
    assert wake_times(nodes, [later, sooner]) == {1: 70.0, 2: 40.0}


def test_node_planned_twice_keeps_its_first_wake():
    """One sleeping node, two 1-node jobs of 10 s: s = 30 then 40; wake min(0, 10) = 0."""
    nodes = table([sleeping()])
    plan = sequential_plan(StateGroups.of(nodes), release_map(StateGroups.of(nodes), 0.0),
                           [job("j0", 1, 10.0), job("j1", 1, 10.0)], [10.0, 10.0], 0.0)
    assert [p.start for p in plan] == [30.0, 40.0]
    assert wake_times(nodes, plan) == {0: pytest.approx(0.0)}


# ---------------------------------------------------------------------- plans read lazily
# A Plan makes its jobs when first read; the readers stop at the decisive prefix. They
# are checked against the whole plan (a list, read to its end) at now = 50.

NOW = 50.0
jobs_strategy = st.lists(st.tuples(st.integers(1, 9), st.sampled_from([5.0, 40.0, 300.0])),
                         max_size=8)


def queue_of(jobs):
    return [job(f"j{i}", res, 1.0) for i, (res, _) in enumerate(jobs)], [d for _, d in jobs]


def rows(plan):
    """A plan as comparable rows (a planned job's nodes are an array)."""
    return [(p.job.job_id, p.start, p.finish, p.nodes.tolist()) for p in plan]


def deciding(wakes: dict[int, float]) -> tuple[list[int], float | None]:
    """What an invocation takes from wake times: the due nodes and the earliest future time."""
    future = [when for when in wakes.values() if not is_due(when, NOW)]
    return sorted(n for n, when in wakes.items() if is_due(when, NOW)), min(future, default=None)


@settings(deadline=None, derandomize=True, database=None, max_examples=200)
@given(specs=st.lists(node_strategy, min_size=1, max_size=8), jobs=jobs_strategy)
def test_a_plan_counted_before_it_is_read_has_the_length_of_its_jobs(specs, jobs):
    groups = StateGroups.of(table(specs))
    release = release_map(groups, NOW)
    queue, durations = queue_of(jobs)
    for make in (sequential_plan, easy_gap_plan):
        counted = len(make(groups, release, queue, durations, NOW))  # before any job is read
        assert counted == len(rows(make(groups, release, queue, durations, NOW)))


@settings(deadline=None, derandomize=True, database=None, max_examples=200)
@given(specs=st.lists(node_strategy, min_size=1, max_size=8), jobs=jobs_strategy)
def test_prefix_readers_decide_as_the_whole_plan(specs, jobs):
    """Due wakes, the earliest future wake and the switch-offs (timeout 10 s: the idle
    nodes of the strategy have expired at 50 s) from a plan read as far as needed, and
    from the whole plan (a list, read to its end)."""
    nodes = table(specs)
    groups = StateGroups.of(nodes)
    release = release_map(groups, NOW)
    queue, durations = queue_of(jobs)
    whole = list(sequential_plan(groups, release, queue, durations, NOW))
    plan = sequential_plan(groups, release, queue, durations, NOW)
    decisive, every = decisive_wake_times(groups, plan, NOW), wake_times(nodes, whole)
    assert deciding(decisive) == deciding(every)
    assert list(decisive) == sorted(decisive)  # ascending node ids
    assert all(every[node] == when for node, when in decisive.items())  # each one final
    timers = idle_timers(groups, 10.0)
    plan = sequential_plan(groups, release, queue, durations, NOW)
    assert (nodes_to_switch_off(nodes, timers, plan, NOW).tolist()
            == nodes_to_switch_off(nodes, timers, whole, NOW).tolist())


def test_wake_readers_stop_once_the_plan_is_decided():
    """Node 1 sleeps; j0 starts at 30 on it (woken now); no later job wakes a node sooner."""
    nodes = table([computing(1000.0), sleeping()])
    groups = StateGroups.of(nodes)
    queue = [job(f"j{i}", 1, 10.0) for i in range(101)]
    plan = sequential_plan(groups, release_map(groups, 0.0), queue, [10.0] * len(queue), 0.0)
    assert decisive_wake_times(groups, plan, 0.0) == {1: 0.0}
    assert len(plan) == 101


def test_an_infinite_duration_takes_its_nodes_out_for_good():
    """j0 holds node 0 for ever: j1 (2 nodes) is never planned."""
    groups = StateGroups.of(table([idle(0.0), idle(0.0)]))
    queue = [job("j0", 1, 10.0), job("j1", 2, 10.0)]
    plan = sequential_plan(groups, release_map(groups, 0.0), queue, [math.inf, 10.0], 0.0)
    assert len(plan) == 1 and plan[0].finish == math.inf


def test_plan_is_a_read_only_sequence():
    groups = StateGroups.of(table([idle(0.0), idle(0.0)]))
    queue = [job("j0", 1, 10.0), job("j1", 2, 10.0), job("j2", 1, 5.0)]
    release = release_map(groups, 0.0)
    plan = sequential_plan(groups, release, queue, [10.0, 10.0, 5.0], 0.0)
    assert isinstance(plan, Plan) and plan.monotone
    assert [p.start for p in plan] == [0.0, 10.0, 20.0]
    assert rows([plan[1], plan[-1]]) == rows(plan[1:])
    with pytest.raises(IndexError):
        plan[3]
    release[:] = 99.0  # the caller's map changed after planning: the plan is not
    assert [p.start for p in plan] == [0.0, 10.0, 20.0]
    assert bool(plan) and plan != [] and plan == list(plan)
