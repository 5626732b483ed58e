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


#: The states as plain ints, to compare int8 arrays with, and read as globals where a
#: member through its class costs 0.25 us (Python 3.11): at every job's start and end.
SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING = map(int, MachineState)


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
        return float((self.host_energy_j[nodes]
                      + self.power_w[nodes] * (now - self.host_energy_time[nodes])).sum())

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
        self._power_total_w += float((new - old).sum())
        self.power_w[nodes] = new

    def _refresh_node_power(self, now: float, node: int) -> None:
        """Integrate the energy of ``node`` (and the total) up to ``now``; it then draws the
        wattage of its current pstate and load: :meth:`_set_power` of one node, on scalars.

        A job's start or end on one node and every pstate change make one call; on the
        scalars of one node it costs 1.8 us, against 5.3 us for :meth:`_set_power` with
        one-node arrays.
        """
        watts = float((self.busy_now if self.loaded[node] > 0 else self.idle_now)[node])
        self._energy_j += self._power_total_w * (now - self._energy_time)
        self._energy_time = now
        old = float(self.power_w[node])
        self.host_energy_j[node] += old * (now - float(self.host_energy_time[node]))
        self.host_energy_time[node] = now
        self._power_total_w += watts - old
        self.power_w[node] = watts

    def change_load(self, now: float, nodes: np.ndarray, delta: int) -> None:
        """An execution with work starts (+1) or stops (-1) on ``nodes``."""
        if len(nodes) == 1:
            node = int(nodes[0])
            self.loaded[node] += delta
            self._refresh_node_power(now, node)
            return
        loaded = self.loaded[nodes] + delta
        self.loaded[nodes] = loaded
        new = np.where(loaded > 0, self.busy_now[nodes], self.idle_now[nodes])
        self._set_power(now, nodes, new)

    def set_pstate(self, now: float, node: int, pstate: int) -> None:
        """``Host::set_pstate`` of ``node``: its speed, wattages and ``wattmin`` follow."""
        idle = float(self.watt_idle[node, pstate])
        self._wattmin_w += idle - float(self.idle_now[node])
        self.pstate[node] = pstate
        self.idle_now[node] = idle
        self.busy_now[node] = self.watt_busy[node, pstate]
        self.speed_now[node] = self.speed[node, pstate]
        self.computes_now[node] = self.computes[node, pstate]
        self._refresh_node_power(now, node)

    def speeds(self, nodes: np.ndarray) -> np.ndarray:
        """Speed of ``nodes`` in their current pstate (flop/s)."""
        return self.speed_now[nodes]

    # ------------------------------------------------------------------ states

    def set_state(self, now: float, nodes: np.ndarray, state: int) -> None:
        """``Machine::update_machine_state`` for ``nodes`` (``state``: a :class:`MachineState`),
        counting the time in the old state."""
        count = len(nodes)
        if count == 1:
            self.set_node_state(now, int(nodes[0]), state)
            return
        old = self.state[nodes]
        first = int(old[0])
        if (old == first).all():  # one state for all (the usual case)
            self.time_in_state[first] += float((now - self.since[nodes]).sum())
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

    def set_node_state(self, now: float, node: int, state: int) -> None:
        """:meth:`set_state` of one node (a switch, a one-node job), on scalars: the same
        arithmetic.

        Every switch and every one-node job makes one call; on scalars it costs 1.2 us,
        against 15 us for the numpy form on a one-node array (about 7 % of the CPU time
        of the DAS2 FS1 case under fcfsbIpm).
        """
        leaving = int(self.state[node])
        self.time_in_state[leaving] += now - float(self.since[node])
        self.counts[leaving] -= 1
        self.counts[state] += 1
        self.state[node] = state
        self.since[node] = now

    def state_of(self, node: int) -> MachineState:
        return MachineState(int(self.state[node]))
