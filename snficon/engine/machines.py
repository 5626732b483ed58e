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
        self.since = np.zeros(n)
        #: Executions with work to do running on each host (they make it draw full load).
        self.loaded = np.zeros(n, dtype=np.int64)
        self.power_w = self.watt_idle[np.arange(n), self.pstate].copy()
        self.host_energy_j = np.zeros(n)
        self.host_energy_time = np.zeros(n)
        self.counts = np.zeros(len(MachineState), dtype=np.int64)
        self.counts[MachineState.IDLE] = n
        self.time_in_state = np.zeros(len(MachineState))
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
        return float((self.host_energy_j[nodes]
                      + self.power_w[nodes] * (now - self.host_energy_time[nodes])).sum())

    @property
    def wattmin(self) -> float:
        return self._wattmin_w

    def _set_power(self, now: float, nodes: np.ndarray, new) -> None:
        if len(nodes) == 1:  # a switch: the same arithmetic on scalars, faster
            node = int(nodes[0])
            value = float(new[0])
            self._energy_j += self._power_total_w * (now - self._energy_time)
            self._energy_time = now
            old = float(self.power_w[node])
            self.host_energy_j[node] += old * (now - float(self.host_energy_time[node]))
            self.host_energy_time[node] = now
            self._power_total_w += value - old
            self.power_w[node] = value
            return
        self._energy_j = self.energy_at(now)
        self._energy_time = now
        old = self.power_w[nodes]
        self.host_energy_j[nodes] += old * (now - self.host_energy_time[nodes])
        self.host_energy_time[nodes] = now
        self._power_total_w += float((new - old).sum())
        self.power_w[nodes] = new

    def _refresh_power(self, now: float, nodes: np.ndarray) -> None:
        if len(nodes) == 1:  # a switch: same values without array temporaries
            node = int(nodes[0])
            pstate = int(self.pstate[node])
            table = self.watt_busy if self.loaded[node] > 0 else self.watt_idle
            self._set_power(now, nodes, (float(table[node, pstate]),))
            return
        pstates = self.pstate[nodes]
        new = np.where(self.loaded[nodes] > 0, self.watt_busy[nodes, pstates],
                       self.watt_idle[nodes, pstates])
        self._set_power(now, nodes, new)

    def change_load(self, now: float, nodes: np.ndarray, delta: int) -> None:
        """An execution with work starts (+1) or stops (-1) on ``nodes``."""
        self.loaded[nodes] += delta
        self._refresh_power(now, nodes)

    def set_pstate(self, now: float, nodes: np.ndarray, pstate: int) -> None:
        """``Host::set_pstate`` on ``nodes``: speed, wattages and ``wattmin`` follow."""
        if len(nodes) == 1:
            node = int(nodes[0])
            self._wattmin_w += float(self.watt_idle[node, pstate]
                                     - self.watt_idle[node, self.pstate[node]])
            self.pstate[node] = pstate
            self._refresh_power(now, nodes)
            return
        old = self.watt_idle[nodes, self.pstate[nodes]].sum()
        new = self.watt_idle[nodes, pstate].sum()
        self._wattmin_w += float(new - old)
        self.pstate[nodes] = pstate
        self._refresh_power(now, nodes)

    def speeds(self, nodes: np.ndarray) -> np.ndarray:
        """Speed of ``nodes`` in their current pstate (flop/s)."""
        return self.speed[nodes, self.pstate[nodes]]

    # ------------------------------------------------------------------ states

    def set_state(self, now: float, nodes: np.ndarray, state: MachineState) -> None:
        """``Machine::update_machine_state`` for ``nodes``, counting the time in the old state."""
        if len(nodes) == 1:
            node = int(nodes[0])
            leaving = int(self.state[node])
            self.time_in_state[leaving] += now - float(self.since[node])
            self.counts[leaving] -= 1
            self.counts[state] += 1
            self.state[node] = state
            self.since[node] = now
            return
        old = self.state[nodes]
        first = old[0]
        if (old == first).all():
            self.time_in_state[first] += (now - self.since[nodes]).sum()
            self.counts[first] -= len(nodes)
        else:
            self.time_in_state += np.bincount(old, weights=now - self.since[nodes],
                                              minlength=len(MachineState))
            self.counts -= np.bincount(old, minlength=len(MachineState))
        self.counts[state] += len(nodes)
        self.state[nodes] = state
        self.since[nodes] = now

    def state_of(self, node: int) -> MachineState:
        return MachineState(int(self.state[node]))
