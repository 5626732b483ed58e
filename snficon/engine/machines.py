"""Machine states, pstates, power and energy of the simulated hosts.

The five machine states are Batsim's (``Machine::update_machine_state``), with
the time spent in each. A host draws the full-load wattage of its pstate while
an execution with work to do runs on it, the idle wattage otherwise (SimGrid's
energy plugin, ``HostEnergy::get_current_watts_value``: a ``delay`` job sleeps
and leaves its hosts idle). Energy is integrated exactly, per host and in
total: power is piecewise constant, so each total advances by power x elapsed
time at every change. ``wattmin`` (a column of ``out_consumed_energy.csv``) is
the sum over hosts of the idle wattage of their current pstate.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from snficon.platform.model import Platform

#: ``ndarray.sum`` without its Python wrapper (``numpy/_core/_methods.py`` calls this very
#: reduction): the same pairwise sums, bit for bit, for less overhead.
_sum = np.add.reduce


class MachineState(IntEnum):
    """Batsim's machine states, in the column order of ``out_machine_states.csv``."""

    SLEEPING = 0
    SWITCHING_ON = 1
    SWITCHING_OFF = 2
    IDLE = 3
    COMPUTING = 4

    @property
    def label(self) -> str:
        return self.name.lower()


#: ``MachineState.IDLE`` as a plain int: numpy compares an array with it without the
#: conversion an enum member costs.
IDLE = int(MachineState.IDLE)
SLEEPING = int(MachineState.SLEEPING)
#: Each state's code as the byte of an int8 array holding it.
_STATE_BYTE = tuple(bytes((int(state),)) for state in MachineState)


def all_equal(codes: np.ndarray, code: int) -> bool:
    """``np.all(codes == code)`` for int8 state codes: their bytes are ``code``'s, repeated
    (no ufunc nor reduction to run on a few values)."""
    return codes.tobytes() == _STATE_BYTE[code] * len(codes)


def all_true(flags: np.ndarray) -> bool:
    """``flags.all()`` for a boolean array: no byte is 0."""
    return flags.tobytes().count(0) == 0


def all_zero(counts: np.ndarray) -> bool:
    """``not counts.any()`` for an integer array: every byte is 0."""
    return counts.tobytes().count(0) == counts.nbytes


class Machines:
    """State, pstate and power of every compute host, with exact energy totals."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        n = platform.nb_nodes
        width = max(len(h.pstates) for h in platform.hosts)
        #: Per node and pstate: idle and full-load wattage (W), speed (flop/s).
        self.watt_idle = np.zeros((n, width))
        self.watt_busy = np.zeros((n, width))
        self.speed = np.ones((n, width))
        #: Per node and pstate: whether jobs can run in it (not a sleep nor a virtual pstate).
        self.computes = np.zeros((n, width), dtype=bool)
        for host in platform.hosts:
            for index, pstate in enumerate(host.pstates):
                self.watt_idle[host.id, index] = pstate.watt_idle
                self.watt_busy[host.id, index] = pstate.watt_busy
                self.speed[host.id, index] = pstate.speed_flops
                self.computes[host.id, index] = host.is_computation_pstate(index)
        self.state = np.full(n, MachineState.IDLE, dtype=np.int8)
        self.pstate = np.array([h.initial_pstate for h in platform.hosts], dtype=np.int64)
        #: The columns of the current pstate of each node (kept by :meth:`set_pstate`), so
        #: that a job's start or end indexes 1-D arrays only.
        every = np.arange(n)
        self.idle_now = self.watt_idle[every, self.pstate]
        self.busy_now = self.watt_busy[every, self.pstate]
        self.speed_now = self.speed[every, self.pstate]
        self.computes_now = self.computes[every, self.pstate]
        self.since = np.zeros(n)
        #: Executions with work to do running on each host (they make it draw full load).
        self.loaded = np.zeros(n, dtype=np.int64)
        self.power_w = self.idle_now.copy()
        self.host_energy_j = np.zeros(n)
        self.host_energy_time = np.zeros(n)
        #: Machines in each state and the time they spent in each (s), by state: lists,
        #: whose items a state change updates faster than an array's.
        self.counts = [0] * len(MachineState)
        self.counts[MachineState.IDLE] = n
        self.time_in_state = [0.0] * len(MachineState)
        self._energy_j = 0.0
        self._energy_time = 0.0
        self._power_total_w = float(self.power_w.sum())
        self._wattmin_w = float(self.power_w.sum())

    # ------------------------------------------------------------------ energy

    def energy_at(self, now: float) -> float:
        """Energy consumed by all compute hosts from time 0 to ``now`` (J)."""
        return self._energy_j + self._power_total_w * (now - self._energy_time)

    def energy_of(self, nodes: np.ndarray, now: float) -> float:
        """Energy consumed by ``nodes`` from time 0 to ``now`` (J)."""
        if len(nodes) == 1:  # the same arithmetic on scalars (the sum of one term is 0 + it)
            node = int(nodes[0])
            return 0.0 + (float(self.host_energy_j[node]) + float(self.power_w[node])
                          * (now - float(self.host_energy_time[node])))
        return float(_sum(self.host_energy_j[nodes]
                          + self.power_w[nodes] * (now - self.host_energy_time[nodes])))

    @property
    def wattmin(self) -> float:
        return self._wattmin_w

    def _set_power(self, now: float, nodes: np.ndarray, new: np.ndarray) -> None:
        """Integrate the energy of ``nodes`` (and the total) up to ``now``, then give them the
        power ``new``: ``old x (now - since)`` per host, as the energy plugin's update."""
        self._energy_j = self._energy_j + self._power_total_w * (now - self._energy_time)
        self._energy_time = now
        old = self.power_w[nodes]
        self.host_energy_j[nodes] += old * (now - self.host_energy_time[nodes])
        self.host_energy_time[nodes] = now
        self._power_total_w += float(_sum(new - old))
        self.power_w[nodes] = new

    def _set_power_one(self, now: float, node: int, value: float) -> None:
        """:meth:`_set_power` of one node: the same arithmetic on scalars."""
        self._energy_j += self._power_total_w * (now - self._energy_time)
        self._energy_time = now
        power_w = self.power_w
        old = float(power_w[node])
        self.host_energy_j[node] += old * (now - float(self.host_energy_time[node]))
        self.host_energy_time[node] = now
        self._power_total_w += value - old
        power_w[node] = value

    def _refresh_one(self, now: float, node: int) -> None:
        """The power of ``node`` after a change of its load or pstate."""
        table = self.busy_now if self.loaded[node] > 0 else self.idle_now
        self._set_power_one(now, node, float(table[node]))

    def change_load(self, now: float, nodes: np.ndarray, delta: int) -> None:
        """An execution with work starts (+1) or stops (-1) on ``nodes``."""
        if len(nodes) == 1:
            node = int(nodes[0])
            self.loaded[node] += delta
            self._refresh_one(now, node)
            return
        loaded = self.loaded[nodes] + delta
        self.loaded[nodes] = loaded
        if delta > 0:  # every node now runs at least this execution
            new = self.busy_now[nodes]
        elif all_zero(loaded):  # none loaded any more (the usual case)
            new = self.idle_now[nodes]
        else:
            new = np.where(loaded > 0, self.busy_now[nodes], self.idle_now[nodes])
        self._set_power(now, nodes, new)

    def set_pstate(self, now: float, nodes: np.ndarray, pstate: int) -> None:
        """``Host::set_pstate`` on ``nodes``: speed, wattages and ``wattmin`` follow."""
        if len(nodes) == 1:
            self.set_pstate_one(now, int(nodes[0]), pstate)
            return
        old = _sum(self.idle_now[nodes])
        new = _sum(self.watt_idle[nodes, pstate])
        self._wattmin_w += float(new - old)
        self._set_columns(nodes, pstate)
        loaded = self.loaded[nodes] > 0
        self._set_power(now, nodes, np.where(loaded, self.busy_now[nodes], self.idle_now[nodes]))

    def set_pstate_one(self, now: float, node: int, pstate: int) -> None:
        """:meth:`set_pstate` of one node (a switch), on scalars."""
        idle = float(self.watt_idle[node, pstate])
        self._wattmin_w += idle - float(self.idle_now[node])
        self.pstate[node] = pstate
        self.idle_now[node] = idle
        self.busy_now[node] = self.watt_busy[node, pstate]
        self.speed_now[node] = self.speed[node, pstate]
        self.computes_now[node] = self.computes[node, pstate]
        self._refresh_one(now, node)

    def _set_columns(self, nodes: np.ndarray, pstate: int) -> None:
        self.pstate[nodes] = pstate
        self.idle_now[nodes] = self.watt_idle[nodes, pstate]
        self.busy_now[nodes] = self.watt_busy[nodes, pstate]
        self.speed_now[nodes] = self.speed[nodes, pstate]
        self.computes_now[nodes] = self.computes[nodes, pstate]

    def speeds(self, nodes: np.ndarray) -> np.ndarray:
        """Speed of ``nodes`` in their current pstate (flop/s)."""
        return self.speed_now[nodes]

    # ------------------------------------------------------------------ states

    def set_state(self, now: float, nodes: np.ndarray, state: MachineState) -> None:
        """``Machine::update_machine_state`` for ``nodes``, counting the time in the old state."""
        state = int(state)  # an int indexes and fills numpy arrays faster than an enum
        count = len(nodes)
        if count == 1:
            self.set_state_one(now, int(nodes[0]), state)
            return
        old = self.state[nodes]
        first = int(old[0])
        if all_equal(old, first):  # one state for all (the usual case)
            self.time_in_state[first] += float(_sum(now - self.since[nodes]))
            self.counts[first] -= count
        else:
            times = np.bincount(old, weights=now - self.since[nodes], minlength=len(MachineState))
            leaving = np.bincount(old, minlength=len(MachineState))
            for code in range(len(MachineState)):
                self.time_in_state[code] += float(times[code])
                self.counts[code] -= int(leaving[code])
        self.counts[state] += count
        self.state[nodes] = state
        self.since[nodes] = now

    def set_state_one(self, now: float, node: int, state: int) -> None:
        """:meth:`set_state` of one node (a switch), on scalars."""
        state = int(state)
        leaving = int(self.state[node])
        self.time_in_state[leaving] += now - float(self.since[node])
        self.counts[leaving] -= 1
        self.counts[state] += 1
        self.state[node] = state
        self.since[node] = now

    def state_of(self, node: int) -> MachineState:
        return MachineState(int(self.state[node]))
