"""What Batsim's actors share (``BatsimContext``): machines, jobs, tracers and the protocol writer.

The tracers write the rows of the output files at the moments Batsim's code
does, with the machine counts and energy of that moment; the protocol writer
(``JsonProtocolWriter``) collects the events of the next message in the order
the server appends them.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snficon.engine.jitter import TransitionJitter
from snficon.engine.jobs import EngineJob, JobTable
from snficon.engine.kernel import Kernel
from snficon.engine.machines import Machines
from snficon.engine.outputs import EngineStats, OutputTables
from snficon.engine.requests import ENERGY
from snficon.engine.surf import Surf
from snficon.engine.wire import decoded, encode, six_decimals
from snficon.platform.model import Platform

#: Event types whose data holds doubles (written with six decimals).
_WITH_DOUBLES = frozenset({"SIMULATION_BEGINS", "JOB_KILLED", "ANSWER"})


@dataclass(slots=True)
class Event:
    """One event of a message to the scheduler; ``data`` holds the unrounded values."""

    timestamp: float
    type: str
    data: dict[str, Any]
    #: A job description of ``JOB_SUBMITTED`` (decoded, text), else None.
    job: EngineJob | None = None

    def as_decoded(self, timestamp: float | None = None) -> dict[str, Any]:
        """The event as a scheduler decodes it; ``timestamp``: its six-decimal reading, when
        already known."""
        if timestamp is None:
            timestamp = six_decimals(self.timestamp)
        if self.job is not None:
            data: dict[str, Any] = {"job_id": self.job.full_id, "job": self.job.description}
        elif self.type in _WITH_DOUBLES:
            data = decoded(self.data)
        else:  # strings and integers only: nothing to round
            data = dict(self.data)
        return {"timestamp": timestamp, "type": self.type, "data": data}

    def as_text(self) -> str:
        if self.job is not None:
            data = (f'{{"job_id":{encode(self.job.full_id)},'
                    f'"job":{self.job.description_text}}}')
        else:
            data = encode(self.data)
        return f'{{"timestamp":{self.timestamp:f},"type":"{self.type}","data":{data}}}'


@dataclass
class Switch:
    """One ``SET_RESOURCE_STATE`` in progress (``CurrentSwitches::Switch``)."""

    all_machines: str
    nodes: np.ndarray
    target_pstate: int
    switching: set[int] = field(default_factory=set)


@dataclass
class BatsimContext:
    """The state Batsim's actors share, and the tracers writing the output files."""

    platform: Platform
    energy: bool
    surf: Surf
    kernel: Kernel
    machines: Machines
    tables: OutputTables
    stats: EngineStats
    jobs: JobTable = field(default_factory=lambda: JobTable([]))
    events: list[Event] = field(default_factory=list)
    switches: dict[int, list[Switch]] = field(default_factory=dict)
    energy_first_submission: float = -1.0
    energy_last_completion: float = 0.0
    #: Random transition durations (outside Batsim's model), or None.
    jitter: TransitionJitter | None = None

    @property
    def now(self) -> float:
        return self.surf.now

    # ------------------------------------------------------------------ protocol writer

    def append(self, kind: str, data: dict[str, Any], job: EngineJob | None = None) -> None:
        self.events.append(Event(self.surf.now, kind, data, job))

    # ------------------------------------------------------------------ tracers

    def write_machine_states(self) -> None:
        """``MachineStateTracer::write_machine_states``: a row with the current counts."""
        self.tables.record_states(self.surf.now, self.machines.counts)

    def energy_row(self, kind: str) -> Generator[tuple, Any, float]:
        """``EnergyConsumptionTracer::add_entry``: total energy (a query per host), one row."""
        if not self.energy:
            return -1.0
        yield (ENERGY, self.kernel.all_hosts)
        now = self.surf.now
        energy = self.machines.energy_at(now)
        self.tables.record_energy(now, energy, kind, self.machines.wattmin)
        return energy

    def energy_on(self, nodes: np.ndarray) -> Generator[tuple, Any, float]:
        """``consumed_energy_on_machines``: the energy of ``nodes`` so far (one query each)."""
        if not self.energy:
            return 0.0
        yield (ENERGY, nodes)
        return self.machines.energy_of(nodes, self.surf.now)

    def total_energy(self) -> Generator[tuple, Any, float]:
        """``Machines::total_consumed_energy`` (one query per host); -1 without energy."""
        if not self.energy:
            return -1.0
        yield (ENERGY, self.kernel.all_hosts)
        return self.machines.energy_at(self.surf.now)

    def pstate_row(self, machines_text: str, pstate: int) -> None:
        """``PStateChangeTracer::add_pstate_change``."""
        if self.energy:
            self.tables.record_pstate(self.surf.now, machines_text, pstate)

    # ------------------------------------------------------------------ pstates

    def set_pstate(self, node: int, pstate: int) -> None:
        """``Host::set_pstate`` (an answered simcall): ``on_host_change`` updates the energy."""
        now = self.surf.now
        self.kernel.energy_updated_at[node] = now
        self.machines.set_pstate(now, node, pstate)

    def mark_switch_done(self, node: int, target: int) -> Generator[tuple, Any, Switch | None]:
        """``CurrentSwitches::mark_switch_as_done``: the request ``node`` belonged to, when it
        is now complete (its pstate and energy rows written), else None."""
        requests = self.switches[target]
        for position, request in enumerate(requests):
            if node in request.switching:
                request.switching.discard(node)
                if request.switching:
                    return None
                del requests[position]
                if not requests:
                    del self.switches[target]
                self.pstate_row(request.all_machines, target)
                yield from self.energy_row("p")
                return request
        raise AssertionError(f"machine {node} was not switching to pstate {target}")
