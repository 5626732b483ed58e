"""Batsim 4's five output files, collected during a run and written at its end.

Columns, row order and number formats are Batsim 4.2's (see the recordings in
``conformance/cases/*/out_*.csv``): fixed six decimals (``%f``) in the job,
energy and schedule files, six significant digits (``%g``) for times in the
machine-state and pstate files. Rows are kept in memory as tuples and written
at the end, or (:meth:`OutputTables.stream_to`) written as they come to
temporary files renamed into place at the end; either way each file appears
atomically, so an interrupted run never leaves a half file under its name.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from snficon import __version__
from snficon.engine.machines import MachineState
from snficon.engine.summary import JobSummary
from snficon.fileio import AtomicTextStream, atomic_write_text

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


@dataclass(slots=True)
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


#: Rows rendered before they are written to a streamed file.
STREAM_FLUSH_ROWS = 2048

_MACHINE_STATES_HEADER = "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing"
_PSTATE_HEADER = "time,machine_id,new_pstate"
_ENERGY_HEADER = "time,energy,event_type,wattmin,epower"


def _state_line(now: float, counts: Sequence[int]) -> str:
    return _g(now) + "," + ",".join(str(c) for c in counts)


def _pstate_line(now: float, machines: str, pstate: int) -> str:
    return f"{_g(now)},{machines},{pstate}"


def _energy_line(now: float, energy: float, kind: str, wattmin: float,
                 epower: float | None) -> str:
    return f"{_f(now)},{_f(energy)},{kind},{_f(wattmin)},{'NA' if epower is None else _f(epower)}"


@dataclass
class _RowStream:
    """One streamed output file: a header, then rows rendered in batches."""

    stream: AtomicTextStream
    pending: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        pending = self.pending
        pending.append(line)
        if len(pending) >= STREAM_FLUSH_ROWS:
            self.flush()

    def flush(self) -> None:
        if self.pending:
            self.stream.write("\n".join(self.pending) + "\n")
            self.pending.clear()


@dataclass
class OutputTables:
    """Everything Batsim writes, accumulated while the simulation runs.

    By default the rows are kept in memory (:attr:`jobs`, :attr:`machine_states`...)
    and :meth:`write` renders them. After :meth:`stream_to`, each row is written
    as it comes to a temporary file beside its final name and nothing is kept
    but :attr:`summary` (what ``out_schedule.csv`` needs); :meth:`write` to the
    same prefix then puts the files in place, each atomically, as before.
    """

    energy_enabled: bool
    jobs: list[JobRow] = field(default_factory=list)
    machine_states: list[tuple[float, tuple[int, ...]]] = field(default_factory=list)
    pstate_changes: list[tuple[float, str, int]] = field(default_factory=list)
    energy_rows: list[tuple[float, float, str, float, float | None]] = field(
        default_factory=list)
    schedule: dict[str, object] = field(default_factory=dict)
    #: The running summary of every job row recorded (streamed or kept).
    summary: JobSummary = field(default_factory=JobSummary)
    #: Whether machine-state rows are recorded (Batsim's ``--disable-machine-state-tracing``).
    trace_machine_states: bool = True
    _last_energy: tuple[float, float] = (0.0, 0.0)
    _prefix: str | None = None
    _streams: dict[str, _RowStream] = field(default_factory=dict)

    def stream_to(self, prefix: str | Path) -> None:
        """Write each row from now on to a temporary file beside Batsim's file for
        ``prefix`` (rows kept so far go first); :meth:`write` puts them in place."""
        if self._prefix is not None:
            raise RuntimeError(f"the outputs already stream to {self._prefix}")
        paths = output_paths(prefix)
        headers = {"jobs": JOB_COLUMNS, "machine_states": _MACHINE_STATES_HEADER}
        if self.energy_enabled:
            headers.update(pstate_changes=_PSTATE_HEADER, consumed_energy=_ENERGY_HEADER)
        for name, header in headers.items():
            stream = AtomicTextStream(paths[name])
            stream.write(header + "\n")
            self._streams[name] = _RowStream(stream)
        self._prefix = str(prefix)
        jobs, self.jobs = self.jobs, []
        states, self.machine_states = self.machine_states, []
        pstates, self.pstate_changes = self.pstate_changes, []
        energy, self.energy_rows = self.energy_rows, []
        for row in jobs:
            self._streams["jobs"].add(row.render())
        for now, counts in states:
            self._streams["machine_states"].add(_state_line(now, counts))
        if self.energy_enabled:
            for row in pstates:
                self._streams["pstate_changes"].add(_pstate_line(*row))
            for row in energy:
                self._streams["consumed_energy"].add(_energy_line(*row))

    def record_job(self, row: JobRow) -> None:
        """A row of ``out_jobs.csv`` (``JobsTracer::write_job``)."""
        self.summary.add(row.submission_time, row.start, row.execution_time, row.final_state)
        if self._prefix is None:
            self.jobs.append(row)
        else:
            self._streams["jobs"].add(row.render())

    def record_states(self, now: float, counts: Sequence[int]) -> None:
        """A row of ``out_machine_states.csv``: how many machines are in each state."""
        if not self.trace_machine_states:
            return
        if self._prefix is None:
            self.machine_states.append((now, tuple(counts)))
        else:
            self._streams["machine_states"].add(_state_line(now, counts))

    def record_pstate(self, now: float, machines: str, pstate: int) -> None:
        """A row of ``out_pstate_changes.csv`` (kept only with energy)."""
        if not self.energy_enabled:
            return
        if self._prefix is None:
            self.pstate_changes.append((now, machines, pstate))
        else:
            self._streams["pstate_changes"].add(_pstate_line(now, machines, pstate))

    def record_energy(self, now: float, energy_j: float, kind: str, wattmin_w: float) -> None:
        """A row of ``out_consumed_energy.csv``; ``epower`` is the mean power since the last
        row (None at the same time as the last row)."""
        last_time, last_energy = self._last_energy
        epower = (energy_j - last_energy) / (now - last_time) if now > last_time else None
        if self._prefix is None:
            self.energy_rows.append((now, energy_j, kind, wattmin_w, epower))
        else:
            self._streams["consumed_energy"].add(
                _energy_line(now, energy_j, kind, wattmin_w, epower))
        self._last_energy = (now, energy_j)

    def render(self) -> dict[str, str]:
        """The text of each output file, keyed by its suffix (``jobs``, ``schedule``...);
        kept rows only (not those of a streamed run)."""
        texts = {
            "jobs": "\n".join([JOB_COLUMNS, *(row.render() for row in self.jobs)]) + "\n",
            "machine_states": "\n".join(
                [_MACHINE_STATES_HEADER]
                + [_state_line(t, counts) for t, counts in self.machine_states]) + "\n",
            "schedule": self._schedule_text(),
        }
        if self.energy_enabled:
            texts["pstate_changes"] = "\n".join(
                [_PSTATE_HEADER] + [_pstate_line(*row) for row in self.pstate_changes]) + "\n"
            texts["consumed_energy"] = "\n".join(
                [_ENERGY_HEADER] + [_energy_line(*row) for row in self.energy_rows]) + "\n"
        return texts

    def _schedule_text(self) -> str:
        return (",".join(SCHEDULE_COLUMNS) + "\n"
                + ",".join(_schedule_cell(self.schedule[c]) for c in SCHEDULE_COLUMNS) + "\n")

    def write(self, prefix: str | Path) -> list[Path]:
        """Write every file under Batsim's names for ``prefix``; return their paths.

        Streamed outputs are put in place (``prefix`` must be the one streamed to);
        the schedule file is written last, once its row is known.
        """
        paths = output_paths(prefix)
        if self._prefix is None:
            return [atomic_write_text(paths[name], text) for name, text in self.render().items()]
        if str(prefix) != self._prefix:
            raise ValueError(f"the outputs stream to {self._prefix}, not to {prefix}")
        written = []
        for rows in self._streams.values():
            rows.flush()
            written.append(rows.stream.commit())
        self._streams.clear()
        self._prefix = None
        written.insert(2, atomic_write_text(paths["schedule"], self._schedule_text()))
        return written

    def abort(self) -> None:
        """Drop the temporary files of streamed outputs (nothing is put in place)."""
        for rows in self._streams.values():
            rows.stream.abort()
        self._streams.clear()
        self._prefix = None


def _schedule_cell(value: object) -> str:
    if isinstance(value, float):
        return _f(value)
    return str(value)


def schedule_summary(jobs: JobSummary, *, nb_jobs: int, nb_machines: int,
                     time_in_state: Sequence[float], stats: EngineStats,
                     energy: bool) -> dict[str, object]:
    """The one row of ``out_schedule.csv``, with Batsim 4.2's definitions.

    As in the recordings: means divide by every job of the workloads (rejected
    ones included), maxima run over the jobs that ran; ``consumed_joules`` is
    the energy from the first submission to the last completion; machine times
    count only the state periods that ended before the simulation did. ``jobs``
    is the running summary of the job rows (:class:`~.summary.JobSummary`).
    """
    first = stats.energy_first_submission or 0.0
    consumed = (stats.energy_last_completion - first) if jobs.finished and energy else 0.0

    def mean(total: float) -> float:
        return float(total / nb_jobs) if nb_jobs else 0.0

    return {
        "batsim_version": f"snficon-{__version__}",
        "consumed_joules": float(consumed),
        "makespan": float(jobs.makespan.value()),
        "max_slowdown": float(jobs.max_slowdown.value()),
        "max_turnaround_time": float(jobs.max_turnaround.value()),
        "max_waiting_time": float(jobs.max_wait.value()),
        "mean_slowdown": mean(jobs.slowdowns.value),
        "mean_turnaround_time": mean(jobs.turnarounds.value),
        "mean_waiting_time": mean(jobs.waits.value),
        "nb_computing_machines": nb_machines,
        "nb_grouped_switches": stats.grouped_switches,
        "nb_jobs": nb_jobs,
        "nb_jobs_finished": jobs.finished,
        "nb_jobs_killed": jobs.killed,
        "nb_jobs_rejected": jobs.rejected,
        "nb_jobs_success": jobs.success,
        "nb_machine_switches": stats.machine_switches,
        "scheduling_time": float(stats.scheduling_wall_s),
        "simulation_time": float(time.perf_counter() - stats.started_wall_s),
        "success_rate": float(jobs.success / nb_jobs) if nb_jobs else 0.0,
        "time_computing": float(time_in_state[MachineState.COMPUTING]),
        "time_idle": float(time_in_state[MachineState.IDLE]),
        "time_sleeping": float(time_in_state[MachineState.SLEEPING]),
        "time_switching_off": float(time_in_state[MachineState.SWITCHING_OFF]),
        "time_switching_on": float(time_in_state[MachineState.SWITCHING_ON]),
        "time_unavailable": 0.0,
    }
