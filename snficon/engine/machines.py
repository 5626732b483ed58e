"""Machine states, pstates and energy of the simulated hosts.

The five machine states are Batsim's. Energy is integrated exactly: the total
power is piecewise constant, so the running total advances by power x elapsed
time at every change. ``wattmin`` (a column of ``out_consumed_energy.csv``) is
the sum over hosts of the idle wattage of their current pstate.

Pstate switches (``SET_RESOURCE_STATE``) are checked, started and ended here
too: as in Batsim (``pstate.cpp``, one actor per machine), each machine goes
through the virtual transition pstate of its sleep state for its own
transition time; the request is acknowledged when its last machine is done.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass
class SwitchRequest:
    """One ``SET_RESOURCE_STATE``: acknowledged when its last machine has switched.

    ``waiting`` counts the machines of the request still in transition.
    """

    alloc_text: str
    target_pstate: int
    sleeping: bool
    waiting: int


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

    # ------------------------------------------------------------------ pstate switches

    def switch_problem(self, nodes: np.ndarray, target: int) -> str | None:
        """Why ``nodes`` cannot be sent to pstate ``target`` now (None: they can).

        Only idle or sleeping machines switch; the target must be a resting
        pstate the host has; a sleeping machine cannot be sent to sleep again.
        """
        hosts = self.platform.hosts
        for node in nodes.tolist():
            state = MachineState(int(self.state[node]))
            if state not in (MachineState.IDLE, MachineState.SLEEPING):
                return f"machine {node} is {state.label} and cannot be switched"
            host = hosts[node]
            if not 0 <= target < len(host.pstates) or target in host.virtual_pstates:
                return f"machine {node} has no pstate {target} to rest in"
            if state == MachineState.SLEEPING and target in host.sleep_pstates:
                return f"machine {node} is already asleep (pstate {int(self.pstate[node])})"
        return None

    def begin_switch(self, now: float, nodes: np.ndarray, target: int, alloc_text: str
                     ) -> tuple[SwitchRequest | None, list[tuple[float, np.ndarray]]]:
        """Start switching ``nodes`` (checked by :meth:`switch_problem`) to pstate ``target``.

        Idle machines sent to another computation pstate change at once; the
        others enter the virtual transition pstate of their sleep state and draw
        its wattage. Returns the request (None when no machine has a transition
        to make) and, by ascending transition time, the groups of machines that
        end together: ``(duration_s, nodes)``.
        """
        hosts = self.platform.hosts
        to_sleep = target in hosts[int(nodes[0])].sleep_pstates
        moving = nodes[self.state[nodes] == MachineState.SLEEPING] if not to_sleep else nodes
        immediate = np.setdiff1d(nodes, moving)
        if len(immediate):
            self.set_pstate(immediate, target)
            self.set_power(now, immediate, self.watt_idle[immediate, target])
        if not len(moving):
            return None, []
        virtual_of = {}
        for node in moving.tolist():
            resting = target if to_sleep else int(self.pstate[node])
            sleep_state = hosts[node].sleep_state(resting)
            virtual_of[node] = sleep_state.switch_off if to_sleep else sleep_state.switch_on
        for virtual in sorted(set(virtual_of.values())):
            same = np.array([node for node, v in virtual_of.items() if v == virtual])
            self.set_pstate(same, virtual)
            self.set_power(now, same, self.watt_busy[same, virtual])
        self.set_state(now, moving, MachineState.SWITCHING_OFF if to_sleep
                       else MachineState.SWITCHING_ON)
        request = SwitchRequest(alloc_text=alloc_text, target_pstate=target,
                                sleeping=to_sleep, waiting=len(moving))
        ends: dict[float, list[int]] = {}
        for node, virtual in virtual_of.items():
            ends.setdefault(hosts[node].transition_seconds(virtual), []).append(node)
        return request, [(float(duration), np.array(group, dtype=np.int64))
                         for duration, group in sorted(ends.items())]

    def end_switch(self, now: float, request: SwitchRequest, nodes: np.ndarray) -> bool:
        """Machines ``nodes`` of ``request`` reach its target pstate; True when it is done."""
        target = request.target_pstate
        self.set_pstate(nodes, target)
        self.set_power(now, nodes, self.watt_idle[nodes, target])
        self.set_state(now, nodes, MachineState.SLEEPING if request.sleeping
                       else MachineState.IDLE)
        request.waiting -= len(nodes)
        return request.waiting == 0
