"""What a policy sees (``view``): read-only node arrays, nodes by state, running jobs as arrays."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from snficon.core.view import (
    ClusterView,
    NodeState,
    NodeTable,
    RunningJob,
    RunningTable,
    running_table,
)

from .conftest import computing, idle, sleeping, switching_off, switching_on, table, view


class TestNodeTable:
    def test_every_array_is_read_only_even_when_built_from_writable_ones(self):
        nodes = table([idle(0.0), computing(50.0)])
        for name in NodeTable.__dataclass_fields__:
            array = getattr(nodes, name)
            assert not array.flags.writeable, name
            with pytest.raises(ValueError, match="read-only"):
                array[0] = 1

    def test_the_table_is_frozen(self):
        nodes = table([idle(0.0)])
        with pytest.raises(dataclasses.FrozenInstanceError):
            nodes.state = np.array([NodeState.SLEEPING])

    def test_in_state_gives_the_ids_of_each_state_ascending(self):
        """Nodes: 0 idle, 1 sleeping, 2 computing, 3 idle, 4 switching on, 5 switching off,
        6 sleeping -> idle [0, 3], sleeping [1, 6], computing [2], on [4], off [5]."""
        nodes = table([idle(0.0), sleeping(), computing(9.0), idle(4.0), switching_on(5.0),
                       switching_off(5.0), sleeping()])
        assert nodes.size == 7
        assert nodes.in_state(NodeState.IDLE).tolist() == [0, 3]
        assert nodes.in_state(NodeState.SLEEPING).tolist() == [1, 6]
        assert nodes.in_state(NodeState.COMPUTING).tolist() == [2]
        assert nodes.in_state(NodeState.SWITCHING_ON).tolist() == [4]
        assert nodes.in_state(NodeState.SWITCHING_OFF).tolist() == [5]

    def test_in_state_of_an_absent_state_is_empty(self):
        assert table([idle(0.0)]).in_state(NodeState.COMPUTING).tolist() == []

    def test_state_codes_are_the_paper_partition_in_order(self):
        """Definition 1's C, I, U, D, S as codes 0..4."""
        assert [int(s) for s in NodeState] == [0, 1, 2, 3, 4]
        assert [s.name for s in NodeState] == ["COMPUTING", "IDLE", "SWITCHING_ON",
                                               "SWITCHING_OFF", "SLEEPING"]


RUNS = (RunningJob("a", (2, 0), start_s=10.0, req_time_s=100.0),
        RunningJob("b", (3,), start_s=20.0, req_time_s=50.0))


class TestRunningTable:
    def test_of_maps_each_node_to_the_index_of_its_job(self):
        """a (index 0) runs on nodes 2 and 0, b (index 1) on node 3; node 1 and node 4
        run nothing: node_job = [0, -1, 0, 1, -1]."""
        runs = RunningTable.of(RUNS, 5)
        assert runs.jobs is RUNS
        assert runs.node_job.tolist() == [0, -1, 0, 1, -1]
        assert runs.start_s.tolist() == [10.0, 20.0]
        assert runs.req_time_s.tolist() == [100.0, 50.0]
        for array in (runs.start_s, runs.req_time_s, runs.node_job):
            assert not array.flags.writeable

    def test_of_no_job_is_empty(self):
        runs = RunningTable.of((), 3)
        assert runs.node_job.tolist() == [-1, -1, -1]
        assert runs.start_s.shape == (0,) and runs.req_time_s.shape == (0,)


class TestRunningTableOfAView:
    NODES = [computing(110.0), idle(0.0), computing(110.0), computing(70.0), idle(0.0)]

    def test_a_hand_made_view_gets_a_table_built_from_its_records(self):
        the_view = dataclasses.replace(view(self.NODES), running=RUNS)
        runs = running_table(the_view)
        assert runs.jobs is RUNS and runs.node_job.tolist() == [0, -1, 0, 1, -1]

    def test_the_builder_table_is_used_when_it_stands_for_the_running_jobs(self):
        kept = RunningTable.of(RUNS, 5)
        the_view = ClusterView(now=0.0, trigger="arrival", nodes=table(self.NODES), queue=(),
                               running=RUNS, running_arrays=kept)
        assert running_table(the_view) is kept

    def test_a_table_of_other_records_is_not_trusted(self):
        """The view's running jobs were replaced (b only): the table kept for a and b is
        ignored and one of b alone is built: node 3 -> 0, the rest -1."""
        kept = RunningTable.of(RUNS, 5)
        the_view = ClusterView(now=0.0, trigger="arrival", nodes=table(self.NODES), queue=(),
                               running=RUNS, running_arrays=kept)
        replaced = dataclasses.replace(the_view, running=RUNS[1:])
        runs = running_table(replaced)
        assert runs is not kept
        assert runs.node_job.tolist() == [-1, -1, -1, 0, -1]
