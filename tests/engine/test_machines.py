"""The machines' shortcuts give what their general numpy forms give."""

from __future__ import annotations

import numpy as np
import pytest

from snficon.engine.machines import Machines, MachineState, all_equal, all_true, all_zero
from snficon.platform.generate import NodeModel, render_platform, write_platform
from snficon.platform.reader import read_platform

#: Wattages that are not integers, so that the order of additions shows in the bits.
ODD_MODEL = NodeModel("odd", busy_w=201.37, idle_w=97.71, sleep_w=9.13,
                      off_s=7.3, off_w=51.9, on_s=31.1, on_w=149.3)


@pytest.fixture
def machines(tmp_path) -> Machines:
    path = write_platform(tmp_path / "p.xml", render_platform(ODD_MODEL, 48))
    return Machines(read_platform(path))


@pytest.mark.parametrize("seed", range(5))
def test_all_equal_is_numpy_all(seed):
    rng = np.random.default_rng(seed)
    for _ in range(500):
        codes = rng.integers(0, len(MachineState), rng.integers(1, 40)).astype(np.int8)
        if rng.random() < 0.5:
            codes[:] = codes[0]
        for code in range(len(MachineState)):
            assert all_equal(codes, code) == bool(np.all(codes == code))


@pytest.mark.parametrize("seed", range(5))
def test_all_zero_is_not_any(seed):
    rng = np.random.default_rng(seed)
    for _ in range(500):
        counts = rng.integers(0, 2, rng.integers(1, 40)) * rng.integers(0, 2, 1)
        assert all_zero(counts) == (not counts.any())


@pytest.mark.parametrize("seed", range(3))
def test_all_true_is_numpy_all(seed):
    rng = np.random.default_rng(seed)
    for _ in range(500):
        flags = rng.random(rng.integers(1, 40)) < rng.choice([0.5, 0.97, 1.0])
        assert all_true(flags) == bool(flags.all())


def _energy_by_numpy(machines: Machines, nodes: np.ndarray, now: float) -> float:
    """The general form of ``energy_of`` (its many-node path)."""
    return float(np.add.reduce(machines.host_energy_j[nodes] + machines.power_w[nodes]
                               * (now - machines.host_energy_time[nodes])))


def test_energy_of_one_node_is_the_general_sum(machines):
    rng = np.random.default_rng(3)
    now = 0.0
    for _ in range(400):
        now += float(rng.exponential(37.3))
        nodes = np.unique(rng.integers(0, 48, rng.integers(1, 6)))
        machines.change_load(now, nodes, +1)
        machines.set_pstate(now, nodes[:1], int(rng.integers(0, 2)))
        if rng.random() < 0.7:
            machines.change_load(now + 0.5, nodes, -1)
        probe = float(now + rng.uniform(0, 100))
        for node in range(48):
            one = np.array([node])
            assert machines.energy_of(one, probe) == _energy_by_numpy(machines, one, probe)


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
