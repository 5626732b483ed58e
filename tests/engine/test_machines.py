"""Machines: energy is power x time, power follows load and pstate, time in each state."""

from __future__ import annotations

import numpy as np
import pytest

from snficon.engine.machines import Machines, MachineState
from snficon.platform.generate import NodeModel, render_platform, write_platform
from snficon.platform.reader import read_platform

#: Wattages that are not integers, so that the order of additions shows in the bits.
ODD_MODEL = NodeModel("odd", busy_w=201.37, idle_w=97.71, sleep_w=9.13,
                      off_s=7.3, off_w=51.9, on_s=31.1, on_w=149.3)


@pytest.fixture
def machines(tmp_path) -> Machines:
    path = write_platform(tmp_path / "p.xml", render_platform(ODD_MODEL, 48))
    return Machines(read_platform(path))


def test_energy_is_power_times_time_by_hand(machines):
    node = np.array([3])
    idle, busy = machines.watt_idle[3, 0], machines.watt_busy[3, 0]
    machines.change_load(10.0, node, +1)
    machines.change_load(30.0, node, -1)
    expected = idle * 10.0 + busy * 20.0 + idle * 5.0
    assert machines.energy_of(node, 35.0) == pytest.approx(expected, rel=1e-15)
    sleeping = int(np.flatnonzero(~machines.computes[3])[0])
    machines.set_pstate(35.0, 3, sleeping)
    expected += machines.watt_idle[3, sleeping] * 100.0
    assert machines.energy_of(node, 135.0) == pytest.approx(expected, rel=1e-15)
    others = 47 * idle * 135.0
    assert machines.energy_at(135.0) == pytest.approx(expected + others, rel=1e-12)


def test_total_energy_is_the_sum_over_nodes_under_random_changes(machines):
    rng = np.random.default_rng(3)
    every, now = np.arange(48), 0.0
    for _ in range(300):
        now += float(rng.exponential(37.3))
        nodes = np.unique(rng.integers(0, 48, rng.integers(1, 6)))
        machines.change_load(now, nodes, +1)
        machines.set_pstate(now, int(nodes[0]), int(rng.integers(0, 2)))
        if rng.random() < 0.7:
            machines.change_load(now + 0.5, nodes, -1)
        probe = float(now + rng.uniform(1, 100))
        assert machines.energy_at(probe) == pytest.approx(machines.energy_of(every, probe),
                                                          rel=1e-9)
        busy = machines.loaded > 0
        assert machines.power_w.tolist() == np.where(busy, machines.busy_now,
                                                     machines.idle_now).tolist()
        assert machines.wattmin == pytest.approx(float(machines.idle_now.sum()), rel=1e-12)


def test_state_times_and_counts_follow_every_change(machines):
    rng = np.random.default_rng(5)
    now, spent = 0.0, np.zeros(len(MachineState))

    def change(nodes: np.ndarray, state: MachineState) -> None:
        old, since = machines.state[nodes].copy(), machines.since[nodes].copy()
        before = list(machines.time_in_state)
        machines.set_state(now, nodes, state)
        if np.all(old == old[0]):  # one sum, in numpy's order
            assert machines.time_in_state[old[0]] == before[old[0]] + float(
                np.add.reduce(now - since))
        np.add.at(spent, old, now - since)
        assert machines.counts == np.bincount(machines.state,
                                              minlength=len(MachineState)).tolist()

    for _ in range(300):
        now += float(rng.exponential(11.0))
        nodes = np.unique(rng.integers(0, 48, rng.integers(1, 12)))
        if rng.random() < 0.5:
            change(nodes, MachineState.IDLE)
        change(nodes, MachineState(int(rng.integers(0, len(MachineState)))))
    assert machines.time_in_state == pytest.approx(spent.tolist())


def test_one_node_state_change_counts_the_time_in_the_old_state(machines):
    machines.set_node_state(4.5, 7, MachineState.SWITCHING_OFF)
    machines.set_node_state(12.0, 7, MachineState.SLEEPING)
    assert machines.state_of(7) is MachineState.SLEEPING
    assert machines.time_in_state[MachineState.IDLE] == 4.5
    assert machines.time_in_state[MachineState.SWITCHING_OFF] == 7.5
    assert machines.counts[MachineState.SLEEPING] == 1
    assert machines.counts[MachineState.IDLE] == 47
