"""Plans made when read (:class:`~snficon.core.plan.Plan`) and the readers that stop early.

The readers are checked against the whole plan on random tables at now = 50 (the
strategies of ``test_plan``): the wake times and IPM switch-offs read from a plan as far
as they need are those read from the whole plan (a list), and a plan's length is the
number of jobs it places.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.core.clock import is_due
from snficon.core.easy_plan import easy_gap_plan
from snficon.core.ipm import idle_timers, nodes_to_switch_off
from snficon.core.node_choice import StateGroups
from snficon.core.plan import Plan, decisive_wake_times, release_map, sequential_plan, wake_times

from .conftest import computing, idle, job, sleeping, table
from .test_plan import node_strategy

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
