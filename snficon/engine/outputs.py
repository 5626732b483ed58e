"""Batsim 4's five output files, collected during a run and written at its end.

Columns, row order and number formats are Batsim 4.2's (see the recordings in
``conformance/cases/*/out_*.csv``): fixed six decimals (``%f``) in the job,
energy and schedule files, six significant digits (``%g``) for times in the
machine-state and pstate files. Rows are kept in memory as tuples and written
once, each file atomically, so an interrupted run never leaves a half file.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from snficon import __version__
from snficon.engine.machines import MachineState
from snficon.fileio import atomic_write_text

JOB_COLUMNS = (
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,"
    "requested_time,success,final_state,starting_time,execution_time,finish_time,"
    "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata")
SCHEDULE_COLUMNS = (
    "batsim_version", "consumed_joules", "makespan", "max_slowdown", "max_turnaround_time",
    "max_waiting_time", "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
    "nb_computing_machines", "nb_grouped_switches", "nb_jobs", "nb_jobs_finished",
    "nb_jobs_killed", "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches",
    "scheduling_time", "simulation_time", "success_rate", "time_computing", "time_idle",
    "time_sleeping", "time_switching_off", "time_switching_on", "time_unavailable")
#: Columns of ``out_schedule.csv`` that measure wall-clock time, not simulated behaviour.
WALL_CLOCK_COLUMNS = frozenset({"scheduling_time", "simulation_time"})
#: Columns that identify the simulator rather than describe the run.
IDENTITY_COLUMNS = frozenset({"batsim_version"})

OUTPUT_SUFFIXES = ("jobs", "schedule", "machine_states", "pstate_changes", "consumed_energy")


def output_paths(prefix: str | Path) -> dict[str, Path]:
    """Batsim's file names for an export prefix (``-e out/x`` gives ``out/x_jobs.csv``...)."""
    prefix = str(prefix)
    return {name: Path(f"{prefix}_{name}.csv") for name in OUTPUT_SUFFIXES}


def _f(value: float) -> str:
    return f"{value:f}"


def _g(value: float) -> str:
    return f"{value:g}"


@dataclass
class EngineStats:
    """Run-wide counters that end up in ``out_schedule.csv``."""

    grouped_switches: int = 0
    machine_switches: int = 0
    energy_first_submission: float | None = None
    energy_last_completion: float = 0.0
    scheduling_wall_s: float = 0.0
    started_wall_s: float = field(default_factory=time.perf_counter)


@dataclass
class JobRow:
    """One line of ``out_jobs.csv``; ``start`` is None for a rejected job."""

    job_id: str
    workload_name: str
    profile: str
    submission_time: float
    requested_resources: int
    requested_time: float
    final_state: str
    start: float | None = None
    execution_time: float = 0.0
    allocation: str = ""
    consumed_energy: float = 0.0

    def render(self) -> str:
        head = (f"{self.job_id},{self.workload_name},{self.profile},"
                f"{_f(self.submission_time)},{self.requested_resources},"
                f"{_f(self.requested_time)}")
        success = 1 if self.final_state == "COMPLETED_SUCCESSFULLY" else 0
        if self.start is None:
            return f'{head},{success},{self.final_state},,,,,,,,,""'
        finish = self.start + self.execution_time
        waiting = self.start - self.submission_time
        turnaround = finish - self.submission_time
        stretch = turnaround / self.execution_time
        return (f"{head},{success},{self.final_state},{_f(self.start)},"
                f"{_f(self.execution_time)},{_f(finish)},{_f(waiting)},{_f(turnaround)},"
                f"{_f(stretch)},{self.allocation},{_f(self.consumed_energy)},\"\"")


@dataclass
class OutputTables:
    """Everything Batsim writes, accumulated while the simulation runs."""

    energy_enabled: bool
    jobs: list[JobRow] = field(default_factory=list)
    machine_states: list[tuple[float, tuple[int, ...]]] = field(default_factory=list)
    pstate_changes: list[tuple[float, str, int]] = field(default_factory=list)
    energy_rows: list[tuple[float, float, str, float, float | None]] = field(
        default_factory=list)
    schedule: dict[str, object] = field(default_factory=dict)
    _last_energy: tuple[float, float] = (0.0, 0.0)

    def record_states(self, now: float, counts: np.ndarray) -> None:
        """A row of ``out_machine_states.csv``: how many machines are in each state."""
        self.machine_states.append((now, tuple(counts.tolist())))

    def record_energy(self, now: float, energy_j: float, kind: str, wattmin_w: float) -> None:
        """A row of ``out_consumed_energy.csv``; ``epower`` is the mean power since the last
        row (None at the same time as the last row)."""
        last_time, last_energy = self._last_energy
        epower = (energy_j - last_energy) / (now - last_time) if now > last_time else None
        self.energy_rows.append((now, energy_j, kind, wattmin_w, epower))
        self._last_energy = (now, energy_j)

    def render(self) -> dict[str, str]:
        """The text of each output file, keyed by its suffix (``jobs``, ``schedule``...)."""
        texts = {
            "jobs": "\n".join([JOB_COLUMNS, *(row.render() for row in self.jobs)]) + "\n",
            "machine_states": "\n".join(
                ["time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"]
                + [_g(t) + "," + ",".join(str(c) for c in counts)
                   for t, counts in self.machine_states]) + "\n",
            "schedule": ",".join(SCHEDULE_COLUMNS) + "\n"
            + ",".join(_schedule_cell(self.schedule[c]) for c in SCHEDULE_COLUMNS) + "\n",
        }
        if self.energy_enabled:
            texts["pstate_changes"] = "\n".join(
                ["time,machine_id,new_pstate"]
                + [f"{_g(t)},{machines},{pstate}" for t, machines, pstate in self.pstate_changes]
            ) + "\n"
            texts["consumed_energy"] = "\n".join(
                ["time,energy,event_type,wattmin,epower"]
                + [f"{_f(t)},{_f(e)},{kind},{_f(w)},{'NA' if p is None else _f(p)}"
                   for t, e, kind, w, p in self.energy_rows]) + "\n"
        return texts

    def write(self, prefix: str | Path) -> list[Path]:
        """Write every file under Batsim's names for ``prefix``; return their paths."""
        paths = output_paths(prefix)
        return [atomic_write_text(paths[name], text) for name, text in self.render().items()]


def _schedule_cell(value: object) -> str:
    if isinstance(value, float):
        return _f(value)
    return str(value)


def schedule_summary(jobs: list[JobRow], *, nb_jobs: int, nb_machines: int,
                     time_in_state: np.ndarray, stats: EngineStats,
                     energy: bool) -> dict[str, object]:
    """The one row of ``out_schedule.csv``, with Batsim 4.2's definitions.

    As in the recordings: means divide by every job of the workloads (rejected
    ones included), maxima run over the jobs that ran; ``consumed_joules`` is
    the energy from the first submission to the last completion; machine times
    count only the state periods that ended before the simulation did.
    """
    rows = [row for row in jobs if row.start is not None]
    waits = [row.start - row.submission_time for row in rows]
    turnarounds = [row.start + row.execution_time - row.submission_time for row in rows]
    slowdowns = [t / row.execution_time for t, row in zip(turnarounds, rows, strict=True)]
    success = sum(row.final_state == "COMPLETED_SUCCESSFULLY" for row in rows)
    killed = sum(row.final_state in ("COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED")
                 for row in rows)
    first = stats.energy_first_submission or 0.0
    consumed = (stats.energy_last_completion - first) if rows and energy else 0.0

    def mean(values: list[float]) -> float:
        return float(sum(values) / nb_jobs) if nb_jobs else 0.0

    return {
        "batsim_version": f"snficon-{__version__}",
        "consumed_joules": float(consumed),
        "makespan": float(max((r.start + r.execution_time for r in rows), default=0.0)),
        "max_slowdown": float(max(slowdowns, default=0.0)),
        "max_turnaround_time": float(max(turnarounds, default=0.0)),
        "max_waiting_time": float(max(waits, default=0.0)),
        "mean_slowdown": mean(slowdowns),
        "mean_turnaround_time": mean(turnarounds),
        "mean_waiting_time": mean(waits),
        "nb_computing_machines": nb_machines,
        "nb_grouped_switches": stats.grouped_switches,
        "nb_jobs": nb_jobs,
        "nb_jobs_finished": len(rows),
        "nb_jobs_killed": killed,
        "nb_jobs_rejected": sum(row.start is None for row in jobs),
        "nb_jobs_success": success,
        "nb_machine_switches": stats.machine_switches,
        "scheduling_time": float(stats.scheduling_wall_s),
        "simulation_time": float(time.perf_counter() - stats.started_wall_s),
        "success_rate": float(success / nb_jobs) if nb_jobs else 0.0,
        "time_computing": float(time_in_state[MachineState.COMPUTING]),
        "time_idle": float(time_in_state[MachineState.IDLE]),
        "time_sleeping": float(time_in_state[MachineState.SLEEPING]),
        "time_switching_off": float(time_in_state[MachineState.SWITCHING_OFF]),
        "time_switching_on": float(time_in_state[MachineState.SWITCHING_ON]),
        "time_unavailable": 0.0,
    }
