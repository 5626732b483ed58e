"""The tracker's running-job arrays against a rebuild from its records (snficon.adapter.tracker)."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from snficon.adapter.tracker import ClusterTracker
from snficon.core.view import ClusterView, RunningJob, RunningTable, running_table
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
