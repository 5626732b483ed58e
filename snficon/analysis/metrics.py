"""The metrics of SPEC section 6, from Batsim's output files only.

All quantities are over the jobs that ran (not rejected), in seconds and
joules, in the paper's window [0, last job end] unless the name says
otherwise:

- wait = start - submit, response = finish - submit, slowdown =
  response / runtime for jobs with runtime > 0 (Batsim reports 1e-5 s for a
  zero-flop job: a runtime <= :data:`ZERO_RUNTIME_S` counts as zero, and such
  jobs are left out of the slowdown mean and of the computing node-seconds);
- ``makespan``: the last job end (max ``finish_time``);
- ``energy_total``: energy of every node in the window (the cumulative energy
  of ``out_consumed_energy.csv`` at the makespan, interpolated linearly);
- ``energy_compute``: the sum of the jobs' ``consumed_energy`` (Batsim's
  energy of a job's nodes while it runs);
- ``energy_wasted`` = total - compute (idle, switching, sleeping), and
  ``energy_wasted_to_end`` the same to the last energy row (end of simulation);
- ``utilization`` (SU): computing node-seconds / (nodes x makespan);
- ``ee`` (EE): computing energy / total energy.

Means over no jobs, ratios over zero and, for a run without energy files
(no ``-E``), the energy fields are None.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from snficon.analysis.batsim_outputs import (
    KILLED_STATES,
    JobRecord,
    iter_jobs,
    read_energy_curve,
    read_node_count,
)
from snficon.fileio import atomic_write_text

#: Batsim's execution time for a job of zero flops (s); runtimes up to it count as zero.
ZERO_RUNTIME_S = 1e-5


@dataclass(frozen=True)
class RunMetrics:
    """SPEC section 6 quantities of one run (s, J); the field names are ``metrics.json``'s keys."""

    jobs: int
    mean_wait: float | None
    max_wait: float | None
    mean_slowdown: float | None
    mean_response: float | None
    utilization: float | None
    energy_total: float | None
    energy_compute: float | None
    energy_wasted: float | None
    energy_wasted_to_end: float | None
    makespan: float
    jobs_rejected: int
    jobs_killed: int
    ee: float | None
    nodes: int


@dataclass(frozen=True)
class _Energy:
    """The energy fields of :class:`RunMetrics` (None without energy files)."""

    total: float | None = None
    compute: float | None = None
    wasted: float | None = None
    wasted_to_end: float | None = None
    ee: float | None = None


@dataclass
class _JobPass:
    """What the metrics need of ``out_jobs.csv``, gathered in one pass over its rows.

    Each quantity summed is kept as a column of doubles (8 bytes a job), so that
    :func:`math.fsum` gives exactly what it gives over the whole file's list.
    """

    rows: int = 0
    ran: int = 0
    killed: int = 0
    last_finish: float | None = None
    max_wait: float | None = None
    waits: array[float] = field(default_factory=lambda: array("d"))
    responses: array[float] = field(default_factory=lambda: array("d"))
    slowdowns: array[float] = field(default_factory=lambda: array("d"))
    node_seconds: array[float] = field(default_factory=lambda: array("d"))
    energies: array[float] = field(default_factory=lambda: array("d"))

    @property
    def makespan(self) -> float:
        """The last job end (0 without jobs): :func:`window_end` of the rows added."""
        return 0.0 if self.last_finish is None else self.last_finish

    def add(self, job: JobRecord) -> None:
        """Count one row of the file (in file order)."""
        self.rows += 1
        if not job.ran:
            return
        self.ran += 1
        self.killed += job.final_state in KILLED_STATES
        if job.finish is not None and (self.last_finish is None or job.finish > self.last_finish):
            self.last_finish = job.finish
        if job.start is not None:
            wait = job.start - job.submit
            self.waits.append(wait)
            if self.max_wait is None or wait > self.max_wait:
                self.max_wait = wait
        if job.finish is not None:
            self.responses.append(job.finish - job.submit)
        if job.runtime is not None and job.runtime > ZERO_RUNTIME_S:
            if job.finish is not None:
                self.slowdowns.append((job.finish - job.submit) / job.runtime)
            self.node_seconds.append(job.runtime * job.nodes)
        if job.energy is not None:
            self.energies.append(job.energy)


def metrics_from_outputs(prefix: str | Path) -> RunMetrics:
    """Metrics of a run from ``{prefix}_jobs.csv``, ``_schedule.csv`` and ``_consumed_energy.csv``.

    The energy file is optional (a run without ``-E``); the other two are
    required. A missing or malformed file raises
    :class:`~snficon.errors.InputError` naming it. The job file is read one row
    at a time and only a few numbers per job are kept.
    """
    jobs = _JobPass()
    for job in iter_jobs(Path(f"{prefix}_jobs.csv")):
        jobs.add(job)
    nodes = read_node_count(Path(f"{prefix}_schedule.csv"))
    makespan = jobs.makespan
    energy_path = Path(f"{prefix}_consumed_energy.csv")
    energy = (_energy(energy_path, math.fsum(jobs.energies), makespan) if energy_path.exists()
              else _Energy())
    return RunMetrics(
        jobs=jobs.ran, mean_wait=_mean(jobs.waits), max_wait=jobs.max_wait,
        mean_slowdown=_mean(jobs.slowdowns), mean_response=_mean(jobs.responses),
        utilization=_ratio(math.fsum(jobs.node_seconds), nodes * makespan),
        energy_total=energy.total, energy_compute=energy.compute, energy_wasted=energy.wasted,
        energy_wasted_to_end=energy.wasted_to_end, makespan=makespan,
        jobs_rejected=jobs.rows - jobs.ran, jobs_killed=jobs.killed,
        ee=energy.ee, nodes=nodes)


def window_end(ran: list[JobRecord]) -> float:
    """End of the paper's window [0, last job end]: the ``makespan`` (0 without jobs)."""
    return max((job.finish for job in ran if job.finish is not None), default=0.0)


def metered_jobs(ran: list[JobRecord]) -> list[JobRecord]:
    """The jobs whose ``consumed_energy`` sums to ``energy_compute`` (the computing part)."""
    return [job for job in ran if job.energy is not None]


def _energy(path: Path, compute: float, makespan: float) -> _Energy:
    """Total, computing and wasted energy from the energy curve and the jobs' energy
    (``compute``: the sum of their ``consumed_energy``)."""
    curve = read_energy_curve(path)
    total = curve.at(makespan) - curve.at(0.0)
    return _Energy(total=total, compute=compute, wasted=total - compute,
                   wasted_to_end=curve.end_energy - curve.at(0.0) - compute,
                   ee=_ratio(compute, total))


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator > 0 else None


def write_metrics(metrics: RunMetrics, path: str | Path,
                  extra: dict[str, Any] | None = None) -> Path:
    """Write ``metrics`` (plus ``extra`` keys, e.g. ``icon_time_share``) as JSON, atomically.

    Keys are sorted, indent 2, strict JSON (no NaN). An ``extra`` key that
    names a metric raises ValueError rather than overwrite it.
    """
    record = asdict(metrics)
    clashes = sorted(set(record) & set(extra or {}))
    if clashes:
        raise ValueError(f"extra keys {clashes} would overwrite metrics")
    record.update(extra or {})
    text = json.dumps(record, sort_keys=True, indent=2, allow_nan=False) + "\n"
    return atomic_write_text(path, text)
