"""FCFS/EASY's future plan as the authors' code builds it (``easy_gap_plan``, SPEC 5).

Figures are the defaults of ``conftest``: idle power 100 W, T_on 30 s,
E_on 4500 J. ``easy_plan`` (the head's reservation alone) is the
``easy_plan="head"`` option; the cases below show where the two differ.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from snficon.core.easy_plan import easy_gap_plan, easy_plan
from snficon.core.node_choice import StateGroups
from snficon.core.plan import release_map, sequential_plan, wake_times

from .conftest import computing, idle, job, sleeping, switching_on, table
from .test_node_choice import node_strategy, reference_choice


def plans(nodes, jobs, now=0.0):
    """Both FCFS/EASY plans as {job id: (start, nodes)}."""
    groups = StateGroups.of(nodes)
    release = release_map(groups, now)
    durations = [j.req_time_s for j in jobs]
    return tuple({p.job.job_id: (p.start, p.nodes.tolist()) for p in planner(
        groups, release, jobs, durations, now)} for planner in (easy_gap_plan, easy_plan))


def test_later_job_is_planned_in_a_hole_on_a_node_woken_for_it():
    """The issue's job 567, scaled down. Nodes 0-1 switch on until 20, 2-3 compute until
    200, node 4 is asleep (ready at 30).

    Sequential plan: h (2 nodes) at 20 on {0, 1} until 120; j2 (4 nodes) at 200 on
    {2, 3} (cost 0), node 4 (4500 J) and node 0 (3000 J left of its switch-on + 100 W x
    80 s); j3 (1 node) at 200, behind the barrier. Holes: j2 finds no 4 free nodes before
    200 and keeps its slot; j3 fits at 30 on node 4 (free until j2 takes it at 200), so
    node 4 wakes now. With the head's reservation alone, j3 cannot start before h's 20
    nor end by it: planned at 200, node 4 wakes at 170.
    """
    nodes = table([switching_on(20.0), switching_on(20.0), computing(200.0), computing(200.0),
                   sleeping()])
    jobs = [job("h", 2, 100.0), job("j2", 4, 50.0), job("j3", 1, 10.0)]
    gaps, head = plans(nodes, jobs)
    assert gaps == {"h": (20.0, [0, 1]), "j3": (30.0, [4]), "j2": (200.0, [2, 3, 4, 0])}
    assert head["j3"] == (200.0, [1])
    release = release_map(StateGroups.of(nodes), 0.0)
    plan = easy_gap_plan(StateGroups.of(nodes), release, jobs, [100.0, 50.0, 10.0], 0.0)
    assert [p.job.job_id for p in plan] == ["h", "j2", "j3"]  # FCFS order, head first
    assert wake_times(nodes, plan) == {4: 0.0}


def test_hole_before_the_head_on_its_nodes_only_if_it_ends_in_time():
    """Node 0 computes until 100, node 1 until 50. h (2 nodes) at 100 on {0, 1}; j2 (60 s)
    at 200 (node 1's hole [50, 100) is too short); j3 (10 s) fits that hole at 50, which
    is EASY's condition (it ends by the head's start). Both plans agree here."""
    nodes = table([computing(100.0), computing(50.0)])
    jobs = [job("h", 2, 100.0), job("j2", 1, 60.0), job("j3", 1, 10.0)]
    gaps, head = plans(nodes, jobs)
    assert gaps == head == {"h": (100.0, [0, 1]), "j2": (200.0, [0]), "j3": (50.0, [1])}


def test_job_whose_slot_was_taken_slides_to_the_next_hole():
    """Nodes 0, 1, 3 idle, node 2 asleep (ready at 30).

    Sequential plan: j0 (3 nodes, 70 s) at 0 on {0, 1, 3}; j1 (2 nodes) at 70 on {0, 1};
    j2 (1 node, 50 s) at 70 on node 3 (0 J; node 2 would cost 4500 J); j3 (40 s) at 70 on
    node 2. Holes: j1 keeps its slot; j2 goes early, at 30 on node 2, until 80; j3's slot
    on node 2 is then taken, and it has no hole before 70: it slides to the first hole
    from 70, node 3 (free since j0 ended).
    """
    nodes = table([idle(0.0), idle(0.0), sleeping(), idle(0.0)])
    jobs = [job("j0", 3, 70.0), job("j1", 2, 30.0), job("j2", 1, 50.0), job("j3", 1, 40.0)]
    groups = StateGroups.of(nodes)
    seed = sequential_plan(groups, release_map(groups, 0.0), jobs, [70.0, 30.0, 50.0, 40.0], 0.0)
    assert [(p.start, p.nodes.tolist()) for p in seed] == [
        (0.0, [0, 1, 3]), (70.0, [0, 1]), (70.0, [3]), (70.0, [2])]
    gaps, _ = plans(nodes, jobs)
    assert gaps == {"j0": (0.0, [0, 1, 3]), "j1": (70.0, [0, 1]), "j2": (30.0, [2]),
                    "j3": (70.0, [3])}


def test_planning_stops_where_the_sequential_plan_stops():
    """Node 2 is past its request: j1 (3 nodes) cannot be planned, nor anything after it,
    although j2 would fit; an unplannable head gives an empty plan."""
    nodes = table([idle(0.0), idle(0.0), computing(50.0)])
    jobs = [job("j0", 1, 10.0), job("j1", 3, 10.0), job("j2", 1, 10.0)]
    gaps, _ = plans(nodes, jobs, now=100.0)
    assert list(gaps) == ["j0"]
    assert plans(nodes, jobs[1:], now=100.0)[0] == {}


# ---------------------------------------------------------------------- properties


def reference_gap_plan(nodes, release, jobs, durations, now):
    """The hole-filling plan written with per-node lists of intervals, as an independent
    check: returns [(job id, start, nodes)] in placement order."""
    eps = 1e-9
    seed = sequential_plan(StateGroups.of(nodes), release, jobs, durations, now)
    busy = [[(now, r)] if r > now else [] for r in release.tolist()]
    finishes = {now} | {r for r in release.tolist() if math.isfinite(r)}

    def usable(i, t, length):
        if release[i] > t:
            return None
        end_before = release[i]
        for s, e in busy[i]:
            if s <= t < e or (t < s and (s - t <= eps or s - t + eps < length)):
                return None
            if e <= t:
                end_before = max(end_before, e)
        return end_before

    def hole(count, length, earliest, latest):
        for t in sorted({x for x in finishes if earliest - eps <= x < latest - eps}
                        | {earliest}):
            ends = np.array([usable(i, t, length) for i in range(nodes.size)], dtype=float)
            ends[np.isnan(ends)] = np.inf
            if np.count_nonzero(np.isfinite(ends)) >= count:
                return t, reference_choice(nodes, ends, t, count, now)
        return None

    placed = []
    for k, planned in enumerate(seed):
        length = planned.finish - planned.start
        spot = None
        if k and now + eps < planned.start:
            spot = hole(planned.job.res, length, now, planned.start)
            if spot and not spot[0] + eps < planned.start:
                spot = None
        if spot is None and (k == 0 or all(usable(i, planned.start, length) is not None
                                           for i in planned.nodes.tolist())):
            spot = (planned.start, planned.nodes.tolist())
        if spot is None:
            spot = hole(planned.job.res, length, planned.start, math.inf)
            if spot is None:
                break
        for i in spot[1]:
            busy[i].append((spot[0], spot[0] + length))
        finishes.add(spot[0] + length)
        placed.append((planned.job.job_id, spot[0], sorted(spot[1])))
    return placed


def gap_case(specs, jobs, now):
    """The table of ``specs``, its release map at ``now``, and a queue of ``jobs``
    (nodes, duration) with their durations."""
    nodes = table(specs)
    queue = [job(f"j{i}", res, 1.0) for i, (res, _) in enumerate(jobs)]
    return nodes, release_map(StateGroups.of(nodes), now), queue, [d for _, d in jobs]


@settings(deadline=None, derandomize=True, database=None, max_examples=200)
@given(specs=st.lists(node_strategy, min_size=1, max_size=7),
       jobs=st.lists(st.tuples(st.integers(1, 7), st.sampled_from([5.0, 40.0, 300.0])),
                     max_size=6))
def test_gap_plan_matches_the_reference_and_never_overlaps(specs, jobs):
    """Random tables at now = 50: the plan is the reference's (same order, starts and nodes), a
    node's planned uses never overlap nor start before its release, and the head keeps
    its Definition 6 start."""
    now = 50.0
    nodes, release, queue, durations = gap_case(specs, jobs, now)
    plan = easy_gap_plan(StateGroups.of(nodes), release, queue, durations, now)
    expected = reference_gap_plan(nodes, release, queue, durations, now)
    assert [(p.job.job_id, p.start, sorted(p.nodes.tolist())) for p in plan] == expected
    uses: dict[int, list[tuple[float, float]]] = {}
    for p in plan:
        assert p.start >= now and p.finish == p.start + dict(zip(
            [q.job_id for q in queue], durations, strict=True))[p.job.job_id]
        for i in p.nodes.tolist():
            assert release[i] <= p.start
            uses.setdefault(i, []).append((p.start, p.finish))
    for spans in uses.values():
        spans.sort()
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:], strict=False))
    seed = sequential_plan(StateGroups.of(nodes), release, queue, durations, now)
    if seed:
        first = next(p for p in plan if p.job.job_id == queue[0].job_id)
        assert (first.start, first.nodes.tolist()) == (seed[0].start, seed[0].nodes.tolist())
