"""The tracker's running-job arrays and node-state groups against a rebuild from its records
(snficon.adapter.tracker)."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from snficon.adapter.tracker import ClusterTracker
from snficon.core.node_choice import StateGroups, state_groups
from snficon.core.view import ClusterView, NodeState, RunningJob, RunningTable, running_table
from snficon.platform.model import PowerModel

NB_NODES = 24


def power_model(n: int) -> PowerModel:
    """``n`` identical nodes (the figures play no part here)."""
    def full(value: float) -> np.ndarray:
        return np.full(n, value)

    return PowerModel(p_idle_w=full(100.0), p_busy_w=full(200.0), p_sleep_w=full(10.0),
                      t_off_s=full(10.0), p_off_w=full(50.0), t_on_s=full(30.0),
                      p_on_w=full(150.0), can_sleep=np.ones(n, bool))


def assert_same_table(got: RunningTable, want: RunningTable) -> None:
    assert got.jobs is want.jobs
    np.testing.assert_array_equal(got.start_s, want.start_s)
    np.testing.assert_array_equal(got.req_time_s, want.req_time_s)
    np.testing.assert_array_equal(got.node_job, want.node_job)


def random_history(seed: int, steps: int = 400):
    """Views of a tracker driven by random submissions, starts and completions."""
    rng = random.Random(seed)
    tracker = ClusterTracker(power_model(NB_NODES))
    free = set(range(NB_NODES))
    now, serial = 0.0, 0
    for _ in range(steps):
        now += rng.choice([0.0, 1.0, 7.5])
        if tracker.running and (not free or rng.random() < 0.45):
            job_id = rng.choice(list(tracker.running))
            free.update(tracker.complete(job_id, now).nodes)
        else:
            res = rng.randint(1, min(4, len(free)))
            job_id = f"j{serial}"
            serial += 1
            tracker.submit(job_id, res, rng.choice([60.0, 600.0, 3600.0]), now)
            nodes = tuple(sorted(rng.sample(sorted(free), res)))
            free.difference_update(nodes)
            tracker.start(job_id, nodes, now)
        yield tracker.view(now, "test")


@pytest.mark.parametrize("seed", range(5))
def test_running_arrays_match_a_rebuild(seed: int) -> None:
    """After every start and completion the view's arrays are those of its records."""
    for view in random_history(seed):
        assert view.running_arrays is not None
        assert_same_table(view.running_arrays, RunningTable.of(view.running, NB_NODES))
        assert running_table(view) is view.running_arrays


def test_an_older_view_keeps_its_arrays() -> None:
    """Later starts and completions do not change a view already handed out."""
    views = list(random_history(0, steps=60))
    for view in views:
        assert_same_table(view.running_arrays, RunningTable.of(view.running, NB_NODES))


def test_replaced_running_jobs_are_rebuilt() -> None:
    """A view whose ``running`` was replaced (a layer's) gets arrays of the new records."""
    view: ClusterView = list(random_history(1, steps=30))[-1]
    moved = tuple(dataclasses.replace(run, req_time_s=run.req_time_s + 1.0)
                  for run in view.running)
    replaced = dataclasses.replace(view, running=moved)
    table = running_table(replaced)
    assert table is not view.running_arrays
    np.testing.assert_array_equal(table.req_time_s, view.running_arrays.req_time_s + 1.0)


def test_table_from_records() -> None:
    """Entry i is job i; each node names its job's entry, -1 when it runs none."""
    jobs = (RunningJob("a", (0, 2), 5.0, 100.0), RunningJob("b", (3,), 7.0, 50.0))
    table = RunningTable.of(jobs, 5)
    assert table.start_s.tolist() == [5.0, 7.0]
    assert table.req_time_s.tolist() == [100.0, 50.0]
    assert table.node_job.tolist() == [0, -1, 0, 1, -1]
    assert not table.node_job.flags.writeable


def random_power_history(seed: int, steps: int = 300):
    """Views of a tracker driven by random starts, completions and switches (asked, then
    acknowledged), with calls that change nothing in between."""
    rng = random.Random(seed)
    tracker = ClusterTracker(power_model(NB_NODES))
    now, serial = 0.0, 0
    pending: list[tuple[list[int], bool]] = []
    for _ in range(steps):
        now += rng.choice([0.0, 1.0, 7.5])
        state = tracker.state
        idle = [n for n in range(NB_NODES) if state[n] == NodeState.IDLE]
        asleep = [n for n in range(NB_NODES) if state[n] == NodeState.SLEEPING]
        move = rng.random()
        if move < 0.2 and tracker.running:
            tracker.complete(rng.choice(list(tracker.running)), now)
        elif move < 0.4 and idle:
            res = rng.randint(1, min(3, len(idle)))
            tracker.submit(f"j{serial}", res, 600.0, now)
            tracker.start(f"j{serial}", tuple(sorted(rng.sample(idle, res))), now)
            serial += 1
        elif move < 0.55 and idle:
            nodes = rng.sample(idle, rng.randint(1, len(idle)))
            tracker.switching(nodes, on=False, now=now)
            pending.append((nodes, True))
        elif move < 0.7 and asleep:
            nodes = rng.sample(asleep, rng.randint(1, len(asleep)))
            tracker.switching(nodes, on=True, now=now)
            pending.append((nodes, False))
        elif move < 0.85 and pending:
            nodes, to_sleep = pending.pop(rng.randrange(len(pending)))
            tracker.switched(nodes, asleep=to_sleep, now=now)
        yield tracker.view(now, "test")


@pytest.mark.parametrize("seed", range(4))
def test_state_groups_match_the_nodes(seed: int) -> None:
    """Each view hands on the groups of its own node table (Definition 1), those built
    from its states; a view whose nodes did not change shares the table and its groups."""
    previous: ClusterView | None = None
    shared = 0
    for view in random_power_history(seed):
        groups = state_groups(view)
        assert groups is view.groups and groups.nodes is view.nodes
        fresh = StateGroups.of(view.nodes)
        assert groups.counts == fresh.counts
        for name in ("computing", "idle", "switching_on", "switching_off", "sleeping"):
            assert getattr(groups, name).tolist() == getattr(fresh, name).tolist(), name
        if previous is not None and previous.nodes is view.nodes:
            assert previous.groups is groups
            shared += 1
        previous = view
    assert shared > 0


def test_replaced_nodes_get_their_own_groups() -> None:
    """A view whose ``nodes`` was replaced (by a layer, or by hand) gets the groups of the
    new table, not the tracker's."""
    view = list(random_power_history(2, steps=40))[-1]
    state = view.nodes.state.copy()
    state[:] = NodeState.SLEEPING
    replaced = dataclasses.replace(view, nodes=dataclasses.replace(view.nodes, state=state))
    groups = state_groups(replaced)
    assert groups is not view.groups
    assert groups.counts[NodeState.SLEEPING] == NB_NODES
