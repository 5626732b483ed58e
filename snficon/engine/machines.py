"""Machine states, pstates and energy of the simulated hosts.

The five machine states are Batsim's. Energy is integrated exactly: the total
power is piecewise constant, so the running total advances by power x elapsed
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
        for host in platform.hosts:
            for index, pstate in enumerate(host.pstates):
                self.watt_idle[host.id, index] = pstate.watt_idle
                self.watt_busy[host.id, index] = pstate.watt_busy
                self.speed[host.id, index] = pstate.speed_flops
        self.state = np.full(n, MachineState.IDLE, dtype=np.int8)
        self.pstate = np.array([h.initial_pstate for h in platform.hosts], dtype=np.int64)
        self.since = np.zeros(n)
        self.power_w = np.array([h.pstates[h.initial_pstate].watt_idle for h in platform.hosts])
        self.counts = np.zeros(len(MachineState), dtype=np.int64)
        self.counts[MachineState.IDLE] = n
        self.time_in_state = np.zeros(len(MachineState))
        self._energy_j = 0.0
        self._energy_time = 0.0
        self._power_total_w = float(self.power_w.sum())
        self._wattmin_w = float(self.power_w.sum())

    def energy_at(self, now: float) -> float:
        """Energy consumed by all compute hosts from time 0 to ``now`` (J)."""
        return self._energy_j + self._power_total_w * (now - self._energy_time)

    @property
    def wattmin(self) -> float:
        return self._wattmin_w

    def _advance_energy(self, now: float) -> None:
        self._energy_j = self.energy_at(now)
        self._energy_time = now

    def set_power(self, now: float, nodes: np.ndarray, power_w: np.ndarray | float) -> None:
        """Change the power drawn by ``nodes`` from ``now`` on."""
        self._advance_energy(now)
        new = power_w if isinstance(power_w, np.ndarray) and power_w.shape == nodes.shape \
            else np.broadcast_to(np.asarray(power_w, dtype=float), nodes.shape)
        self._power_total_w += float((new - self.power_w[nodes]).sum())
        self.power_w[nodes] = new

    def idle_power(self, nodes: np.ndarray) -> np.ndarray:
        """Idle wattage of ``nodes`` in their current pstate (W)."""
        return self.watt_idle[nodes, self.pstate[nodes]]

    def busy_power(self, nodes: np.ndarray) -> np.ndarray:
        """Full-load wattage of ``nodes`` in their current pstate (W)."""
        return self.watt_busy[nodes, self.pstate[nodes]]

    def set_pstate(self, nodes: np.ndarray, pstate: int) -> None:
        """Record the pstate of ``nodes`` (its idle wattage enters ``wattmin``)."""
        old = self.watt_idle[nodes, self.pstate[nodes]].sum()
        new = self.watt_idle[nodes, pstate].sum()
        self._wattmin_w += float(new - old)
        self.pstate[nodes] = pstate

    def set_state(self, now: float, nodes: np.ndarray, state: MachineState,
                  leaving: MachineState | None = None) -> None:
        """Move ``nodes`` to ``state``; time spent in the state they leave is accounted.

        ``leaving``: the state every one of ``nodes`` is known to be in (skips a check).
        """
        if leaving is None:
            old = self.state[nodes]
            if (old == old[0]).all():  # the usual case: all leave the same state
                leaving = old[0]
        if leaving is not None:
            self.time_in_state[leaving] += (now - self.since[nodes]).sum()
            self.counts[leaving] -= len(nodes)
        else:
            self.time_in_state += np.bincount(old, weights=now - self.since[nodes],
                                              minlength=len(MachineState))
            self.counts -= np.bincount(old, minlength=len(MachineState))
        self.counts[state] += len(nodes)
        self.state[nodes] = state
        self.since[nodes] = now
