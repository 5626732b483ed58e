"""Readers for the Batsim output files the metrics need.

``{prefix}_jobs.csv`` becomes :class:`JobRecord` rows (streamed by
:func:`iter_jobs`, listed by :func:`read_jobs`), ``{prefix}_consumed_energy.csv``
an :class:`EnergyCurve` and ``{prefix}_schedule.csv`` gives the node count. The
files are read one row at a time, so a whole trace's outputs are never held as
parsed text. A missing or malformed file raises
:class:`~snficon.errors.InputError` naming the file.
"""

from __future__ import annotations

import csv
import math
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from procset import ProcSet

from snficon.errors import InputError

#: ``final_state`` of a job the scheduler rejected (it never ran).
REJECTED = "REJECTED"
#: ``final_state`` values Batsim counts in ``nb_jobs_killed`` (scheduler kill, walltime).
KILLED_STATES = ("COMPLETED_KILLED", "COMPLETED_WALLTIME_REACHED")


@dataclass(frozen=True, slots=True)
class JobRecord:
    """One row of ``out_jobs.csv`` (times in s, energy in J; None for a rejected job)."""

    job_id: str
    final_state: str
    submit: float
    start: float | None
    runtime: float | None
    finish: float | None
    nodes: int
    energy: float | None

    @property
    def ran(self) -> bool:
        """Whether the job ran (was not rejected)."""
        return self.final_state != REJECTED


@dataclass(frozen=True)
class EnergyCurve:
    """Cumulative platform energy (J) against time (s), from ``out_consumed_energy.csv``.

    Between two consecutive rows the power is constant (the later row's
    ``epower``), so the energy is linear there; at a time shared by several
    rows the last of them counts. Batsim writes its first row at the first
    event, with the energy since t = 0 (e.g. 636.776 s and 16 x 600 W x
    636.776 s when the first job arrives then), so a curve whose first row is
    later than 0 starts with the point (0, 0).
    """

    source: str
    times: Sequence[float]
    energies: Sequence[float]

    @property
    def end_time(self) -> float:
        """Time of the last row (the end of the simulation)."""
        return self.times[-1]

    @property
    def end_energy(self) -> float:
        """Energy of the last row: the whole simulation's energy."""
        return self.energies[-1]

    def at(self, t: float) -> float:
        """Cumulative energy at time ``t``; InputError if the file does not cover ``t``."""
        if not self.times[0] <= t <= self.times[-1]:
            raise InputError(f"{self.source}: covers [{self.times[0]:g}, {self.times[-1]:g}] s, "
                             f"no energy at t={t!r}")
        after = bisect_right(self.times, t)
        if self.times[after - 1] == t:
            return self.energies[after - 1]
        t0, t1 = self.times[after - 1], self.times[after]
        e0, e1 = self.energies[after - 1], self.energies[after]
        return e0 + (e1 - e0) * (t - t0) / (t1 - t0)


def iter_rows(path: Path, required: tuple[str, ...]) -> Iterator[dict[str, str]]:
    """The rows of a CSV file with a header holding at least ``required``, one at a time.

    Nothing is read before the iteration starts; a missing file or column, or
    an unreadable line, raises InputError when the iteration reaches it.
    """
    try:
        with open(path, newline="", encoding="utf-8") as stream:
            reader = csv.DictReader(stream)
            header = reader.fieldnames or []
            missing = [name for name in required if name not in header]
            if missing:
                raise InputError(f"{path}: malformed, missing column(s) {missing}")
            yield from reader
    except FileNotFoundError:
        raise InputError(f"{path}: missing Batsim output file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"{path}: cannot read: {error}") from None


def read_rows(path: Path, required: tuple[str, ...]) -> list[dict[str, str]]:
    """The rows of a CSV file with a header holding at least ``required``."""
    return list(iter_rows(path, required))


def number(path: Path, line: int, row: dict[str, str], column: str) -> float:
    """The finite number in ``column`` of a row (``line`` counts the header as 1)."""
    text = row.get(column)
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{path}: line {line}: {column} is not a number: {text!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{path}: line {line}: {column} is not finite: {text!r}")
    return value


_JOB_COLUMNS = ("job_id", "final_state", "submission_time", "starting_time", "execution_time",
                "finish_time", "allocated_resources", "consumed_energy")


def iter_jobs(path: Path) -> Iterator[JobRecord]:
    """The jobs of ``out_jobs.csv`` in file order, one row read at a time; the fields of
    a rejected job are None."""
    for line, row in enumerate(iter_rows(path, _JOB_COLUMNS), start=2):
        submit = number(path, line, row, "submission_time")
        if row["final_state"] == REJECTED:
            yield JobRecord(row["job_id"], REJECTED, submit, None, None, None, 0, None)
            continue
        try:
            nodes = len(ProcSet.from_str(row["allocated_resources"] or ""))
        except ValueError:
            raise InputError(f"{path}: line {line}: allocated_resources is not a node set: "
                             f"{row['allocated_resources']!r}") from None
        energy_text = row["consumed_energy"]
        yield JobRecord(
            job_id=row["job_id"], final_state=row["final_state"], submit=submit,
            start=number(path, line, row, "starting_time"),
            runtime=number(path, line, row, "execution_time"),
            finish=number(path, line, row, "finish_time"), nodes=nodes,
            energy=number(path, line, row, "consumed_energy") if energy_text else None)


def read_jobs(path: Path) -> list[JobRecord]:
    """Every job of ``out_jobs.csv``; the fields of a rejected job are None."""
    return list(iter_jobs(path))


def read_energy_curve(path: Path) -> EnergyCurve:
    """The cumulative energy curve of ``out_consumed_energy.csv`` (at least one row),
    read one row at a time into two arrays of doubles."""
    times, energies = array("d"), array("d")
    for line, row in enumerate(iter_rows(path, ("time", "energy")), start=2):
        times.append(number(path, line, row, "time"))
        energies.append(number(path, line, row, "energy"))
    if not times:
        raise InputError(f"{path}: malformed, no energy rows")
    if times[0] < 0:
        raise InputError(f"{path}: line 2: negative time {times[0]!r}")
    if times[0] > 0:
        times.insert(0, 0.0)
        energies.insert(0, 0.0)
    for line, (before, after) in enumerate(pairwise(times), start=3):
        if after < before:
            raise InputError(f"{path}: line {line}: time goes back from {before!r} to {after!r}")
    return EnergyCurve(str(path), times, energies)


def read_node_count(path: Path) -> int:
    """``nb_computing_machines`` of ``out_schedule.csv``."""
    rows = read_rows(path, ("nb_computing_machines",))
    if len(rows) != 1:
        raise InputError(f"{path}: malformed, expected one data row, found {len(rows)}")
    value = number(path, 2, rows[0], "nb_computing_machines")
    if value != int(value) or value < 1:
        raise InputError(f"{path}: line 2: nb_computing_machines is not a positive integer: "
                         f"{rows[0]['nb_computing_machines']!r}")
    return int(value)
