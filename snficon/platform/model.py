"""The platform as the engine and the policies see it.

A platform is the list of compute hosts of a SimGrid/Batsim XML file in Batsim's
resource-id order (hosts sorted by name, byte-wise: ``node10`` before ``node2``),
the ``master_host`` left out.
Each host has pstates (speed and wattages) and, when it can sleep, the sleep
pstates of its ``sleep_pstates`` property with their two virtual transition
pstates. :meth:`Platform.power_model` gives the per-node quantities of the
paper (idle, busy and sleep power, switch-off/switch-on durations and powers)
as numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np


@dataclass(frozen=True)
class Pstate:
    """One pstate of a host: speed (flop/s) and wattage at idle and full load (W)."""

    speed_flops: float
    watt_idle: float
    watt_busy: float


@dataclass(frozen=True)
class SleepState:
    """A sleep pstate and the virtual pstates used to reach it and to leave it.

    ``sleep_pstates="1:2:3"`` means: sleep in pstate 1, switch off through
    pstate 2, switch on through pstate 3. A transition executes one flop in its
    virtual pstate, so it lasts 1/speed of that pstate and draws its wattage.
    """

    sleep: int
    switch_off: int
    switch_on: int


@dataclass(frozen=True)
class Host:
    """A compute host: Batsim resource ``id`` (its rank among compute hosts sorted by name)."""

    id: int
    name: str
    pstates: tuple[Pstate, ...]
    initial_pstate: int
    sleep_states: tuple[SleepState, ...]
    properties: dict[str, str] = field(default_factory=dict)

    @cached_property
    def virtual_pstates(self) -> frozenset[int]:
        """Pstates that only exist to time transitions (never a resting state)."""
        return frozenset(p for s in self.sleep_states for p in (s.switch_off, s.switch_on))

    @cached_property
    def sleep_pstates(self) -> frozenset[int]:
        return frozenset(s.sleep for s in self.sleep_states)

    def is_computation_pstate(self, pstate: int) -> bool:
        """True for a pstate in which the host can run jobs."""
        return (
            0 <= pstate < len(self.pstates)
            and pstate not in self.sleep_pstates
            and pstate not in self.virtual_pstates
        )

    def sleep_state(self, sleep_pstate: int) -> SleepState:
        for state in self.sleep_states:
            if state.sleep == sleep_pstate:
                return state
        raise KeyError(sleep_pstate)

    def transition_seconds(self, virtual_pstate: int) -> float:
        """Duration of a switch through ``virtual_pstate``: one flop at its speed."""
        return 1.0 / self.pstates[virtual_pstate].speed_flops


@dataclass(frozen=True)
class PowerModel:
    """Per-node quantities of the paper's power model (section III), one entry per node.

    Powers in W, durations in s. A node that cannot sleep has ``can_sleep``
    False and infinite transition durations.
    """

    p_idle_w: np.ndarray
    p_busy_w: np.ndarray
    p_sleep_w: np.ndarray
    t_off_s: np.ndarray
    p_off_w: np.ndarray
    t_on_s: np.ndarray
    p_on_w: np.ndarray
    can_sleep: np.ndarray

    @property
    def e_off_j(self) -> np.ndarray:
        """Energy of one switch-off (J); infinite for a node that cannot sleep."""
        return _energy(self.t_off_s, self.p_off_w, self.can_sleep)

    @property
    def e_on_j(self) -> np.ndarray:
        """Energy of one switch-on (J); infinite for a node that cannot sleep."""
        return _energy(self.t_on_s, self.p_on_w, self.can_sleep)


def _energy(seconds: np.ndarray, watts: np.ndarray, can_sleep: np.ndarray) -> np.ndarray:
    # inf s x 0 W would be nan: a node that cannot sleep has an infinite switch cost.
    return np.where(can_sleep, np.where(can_sleep, seconds, 0.0) * watts, np.inf)


@dataclass(frozen=True)
class Platform:
    """The compute hosts of a platform file, in resource-id order."""

    source: str
    hosts: tuple[Host, ...]

    @property
    def nb_nodes(self) -> int:
        return len(self.hosts)

    def power_model(self) -> PowerModel:
        """Build the paper's per-node power model from the hosts' first sleep state."""
        n = self.nb_nodes
        arrays = {name: np.zeros(n) for name in (
            "p_idle_w", "p_busy_w", "p_sleep_w", "t_off_s", "p_off_w", "t_on_s", "p_on_w")}
        can_sleep = np.zeros(n, dtype=bool)
        for host in self.hosts:
            compute = host.pstates[host.initial_pstate]
            arrays["p_idle_w"][host.id] = compute.watt_idle
            arrays["p_busy_w"][host.id] = compute.watt_busy
            if host.sleep_states:
                state = host.sleep_states[0]
                can_sleep[host.id] = True
                arrays["p_sleep_w"][host.id] = host.pstates[state.sleep].watt_idle
                arrays["t_off_s"][host.id] = host.transition_seconds(state.switch_off)
                arrays["p_off_w"][host.id] = host.pstates[state.switch_off].watt_busy
                arrays["t_on_s"][host.id] = host.transition_seconds(state.switch_on)
                arrays["p_on_w"][host.id] = host.pstates[state.switch_on].watt_busy
            else:
                arrays["p_sleep_w"][host.id] = compute.watt_idle
                arrays["t_off_s"][host.id] = np.inf
                arrays["t_on_s"][host.id] = np.inf
        return PowerModel(can_sleep=can_sleep, **arrays)
