"""Plans made when read (:class:`~snficon.core.plan.Plan`) and the readers that stop early.

Each shortcut is checked against the from-scratch computation on random tables at
now = 50 (the strategies of ``test_plan``): a lazy plan is the whole plan, its length
known without planning is the length of the plan, and the wake times and IPM
switch-offs read from a prefix are those of the whole plan.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.core.clock import is_due
from snficon.core.easy_plan import easy_gap_plan, lazy_easy_gap_plan
from snficon.core.ipm import nodes_to_switch_off
from snficon.core.plan import (
    Plan,
    decisive_wake_times,
    lazy_sequential_plan,
    planned_count,
    release_map,
    sequential_plan,
    wake_times,
)

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
def test_lazy_plans_are_the_whole_plans(specs, jobs):
    nodes = table(specs)
    release = release_map(nodes, NOW)
    queue, durations = queue_of(jobs)
    for lazy, whole in ((lazy_sequential_plan, sequential_plan),
                        (lazy_easy_gap_plan, easy_gap_plan)):
        expected = whole(nodes, release, queue, durations, NOW)
        plan = lazy(nodes, release, queue, durations, NOW)
        assert len(plan) == len(expected)  # before any job is made
        assert rows(plan) == rows(expected)
        assert plan == list(plan)


@settings(deadline=None, derandomize=True, database=None, max_examples=200)
@given(specs=st.lists(node_strategy, min_size=1, max_size=8), jobs=jobs_strategy)
def test_prefix_readers_decide_as_the_whole_plan(specs, jobs):
    """Due wakes, the earliest future wake and the switch-offs (timeout 10 s: the idle
    nodes of the strategy have expired at 50 s) from a lazy plan read as far as needed."""
    nodes = table(specs)
    release = release_map(nodes, NOW)
    queue, durations = queue_of(jobs)
    whole = sequential_plan(nodes, release, queue, durations, NOW)
    lazy = lazy_sequential_plan(nodes, release, queue, durations, NOW)
    decisive, every = decisive_wake_times(nodes, lazy, NOW), wake_times(nodes, whole)
    assert deciding(decisive) == deciding(every)
    assert list(decisive) == sorted(decisive)  # ascending node ids
    assert all(every[node] == when for node, when in decisive.items())  # each one final
    lazy = lazy_sequential_plan(nodes, release, queue, durations, NOW)
    assert (nodes_to_switch_off(nodes, lazy, NOW, 10.0).tolist()
            == nodes_to_switch_off(nodes, whole, NOW, 10.0).tolist())


def test_wake_readers_stop_once_the_plan_is_decided():
    """Node 1 sleeps; j0 starts at 30 on it (woken now); no later job can wake a node
    sooner, so the 100 jobs behind it are never planned."""
    nodes = table([computing(1000.0), sleeping()])
    queue = [job(f"j{i}", 1, 10.0) for i in range(101)]
    plan = lazy_sequential_plan(nodes, release_map(nodes, 0.0), queue,
                                [10.0] * len(queue), 0.0)
    assert decisive_wake_times(nodes, plan, 0.0) == {1: 0.0}
    assert len(plan._made) == 1
    assert len(plan) == 101 and len(plan._made) == 1  # counted, not planned


def test_a_plan_of_unknown_length_is_made_to_count_it():
    """An infinite duration takes its nodes out for good: the count needs the plan."""
    nodes = table([idle(0.0), idle(0.0)])
    queue = [job("j0", 1, 10.0), job("j1", 2, 10.0)]
    release = release_map(nodes, 0.0)
    assert planned_count(release, queue, [math.inf, 10.0], 0.0) is None
    plan = lazy_sequential_plan(nodes, release, queue, [math.inf, 10.0], 0.0)
    assert len(plan) == 1 == len(sequential_plan(nodes, release, queue, [math.inf, 10.0], 0.0))


def test_plan_is_a_read_only_sequence():
    nodes = table([idle(0.0), idle(0.0)])
    queue = [job("j0", 1, 10.0), job("j1", 2, 10.0), job("j2", 1, 5.0)]
    release = release_map(nodes, 0.0)
    plan = lazy_sequential_plan(nodes, release, queue, [10.0, 10.0, 5.0], 0.0)
    whole = sequential_plan(nodes, release, queue, [10.0, 10.0, 5.0], 0.0)
    assert isinstance(plan, Plan) and plan.monotone
    assert rows([plan[1], plan[-1]]) == rows([whole[1], whole[-1]])
    assert rows(plan[:2]) == rows(whole[:2])
    assert [p.start for p in plan] == [0.0, 10.0, 20.0]
    with pytest.raises(IndexError):
        plan[3]
    release[:] = 99.0  # the caller's map changed after planning: the plan is not
    assert rows(plan) == rows(whole) and bool(plan) and plan != [] and plan == list(plan)
