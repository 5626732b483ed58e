"""Per-job logs of finished runs, whichever simulator wrote them.

Two formats are read into the same :class:`JobLog`:

- Batsim's ``out_jobs.csv`` (real Batsim or the embedded engine): one row per
  job, ``submission_time``, ``starting_time``, ``finish_time`` and
  ``allocated_resources`` (a resource set, ``"0-3 7"``); a rejected job has no
  start. The wasted energy (SPEC 6) is read from the run's other files when
  they are beside it (``out_schedule.csv``, ``out_consumed_energy.csv``).
- SPARS's ``raw_job_log.csv`` (the paper authors' simulator): one row per
  finished job, ``subtime``, ``start_time``, ``finish_time``, ``res`` and
  ``nodes`` (a list of node ids, ``"[0, 1, 2]"``). Its wasted energy is
  ``total_energy_waste`` of the ``metrics.csv`` beside it (SPARS stops at the
  last job end, the paper's window).

A path is either such a file or a folder holding one. Node ids are Batsim's
resource ids, which are SPARS's node ids on the platforms of the paper.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from pathlib import Path

from snficon.analysis.batsim_outputs import REJECTED, number, read_rows
from snficon.errors import InputError
from snficon.intervals import parse_resources

BATSIM_JOBS = "out_jobs.csv"
SPARS_JOBS = "raw_job_log.csv"
_BATSIM_COLUMNS = ("job_id", "final_state", "submission_time", "starting_time", "finish_time",
                   "allocated_resources", "requested_number_of_resources")
_SPARS_COLUMNS = ("job_id", "subtime", "start_time", "finish_time", "res", "nodes")
_NODE_ID = re.compile(r"\d+")


@dataclass(frozen=True)
class LoggedJob:
    """One job of a log: times in s; ``start``/``finish`` None if it never ran; ``nodes``
    the allocated node ids (None if the log does not say)."""

    job_id: str
    submit: float
    start: float | None
    finish: float | None
    res: int
    nodes: frozenset[int] | None

    @property
    def wait(self) -> float | None:
        """start - submit (SPEC 6), None for a job that never ran."""
        return None if self.start is None else self.start - self.submit


@dataclass(frozen=True)
class JobLog:
    """The jobs of one run in submission order (ties by id), and its wasted energy (J)."""

    source: str
    kind: str  # "batsim" or "spars"
    jobs: tuple[LoggedJob, ...]
    energy_wasted: float | None


def read_job_log(path: str | Path) -> JobLog:
    """Read a run's job log: Batsim's ``out_jobs.csv``, SPARS's ``raw_job_log.csv``, or a
    folder holding one of them. A missing or malformed file raises InputError naming it."""
    target = Path(path)
    if target.is_dir():
        for name in (BATSIM_JOBS, SPARS_JOBS):
            if (target / name).is_file():
                target = target / name
                break
        else:
            raise InputError(f"{target}: no {BATSIM_JOBS} (Batsim) or {SPARS_JOBS} (SPARS) here")
    if not target.is_file():
        raise InputError(f"{target}: no such job log")
    columns = _header(target)
    if set(_BATSIM_COLUMNS) <= columns:
        jobs, kind = _batsim_jobs(target), "batsim"
        energy = _batsim_wasted(target)
    elif set(_SPARS_COLUMNS) <= columns:
        jobs, kind = _spars_jobs(target), "spars"
        energy = _spars_wasted(target)
    else:
        raise InputError(f"{target}: neither a Batsim out_jobs.csv (columns "
                         f"{', '.join(_BATSIM_COLUMNS)}) nor a SPARS raw_job_log.csv "
                         f"(columns {', '.join(_SPARS_COLUMNS)})")
    ids = [job.job_id for job in jobs]
    if len(set(ids)) != len(ids):
        twice = sorted({job_id for job_id in ids if ids.count(job_id) > 1})[:5]
        raise InputError(f"{target}: job id(s) {twice} appear more than once")
    jobs.sort(key=lambda job: (job.submit, _id_key(job.job_id)))
    return JobLog(str(target), kind, tuple(jobs), energy)


def _header(path: Path) -> set[str]:
    """The column names of a CSV file's first line."""
    try:
        with open(path, newline="", encoding="utf-8") as stream:
            return set(next(csv.reader(stream), []))
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(f"{path}: cannot read: {error}") from None


def _id_key(job_id: str) -> tuple[int, float, str]:
    try:
        return (0, float(job_id), job_id)
    except ValueError:
        return (1, 0.0, job_id)


def _batsim_jobs(path: Path) -> list[LoggedJob]:
    rows = read_rows(path, _BATSIM_COLUMNS)
    several = len({row.get("workload_name", "") for row in rows}) > 1
    jobs = []
    for line, row in enumerate(rows, start=2):
        job_id = f"{row['workload_name']}!{row['job_id']}" if several else row["job_id"]
        submit = number(path, line, row, "submission_time")
        res = int(number(path, line, row, "requested_number_of_resources"))
        if row["final_state"] == REJECTED:
            jobs.append(LoggedJob(job_id, submit, None, None, res, None))
            continue
        try:
            nodes, _ = parse_resources(row["allocated_resources"])
        except ValueError as error:
            raise InputError(f"{path}: line {line}: allocated_resources "
                             f"{row['allocated_resources']!r}: {error}") from None
        jobs.append(LoggedJob(job_id, submit, number(path, line, row, "starting_time"),
                              number(path, line, row, "finish_time"), res,
                              frozenset(nodes.tolist())))
    return jobs


def _spars_jobs(path: Path) -> list[LoggedJob]:
    jobs = []
    for line, row in enumerate(read_rows(path, _SPARS_COLUMNS), start=2):
        job_id = row["job_id"].strip()
        if re.fullmatch(r"\d+\.0+", job_id):  # "13.0": an id column pandas wrote as floats
            job_id = job_id.split(".")[0]
        nodes = frozenset(int(n) for n in _NODE_ID.findall(row["nodes"] or ""))
        res = int(number(path, line, row, "res"))
        if len(nodes) != res:
            raise InputError(f"{path}: line {line}: job {job_id} has {len(nodes)} node ids "
                             f"in nodes, res says {res}")
        jobs.append(LoggedJob(job_id, number(path, line, row, "subtime"),
                              number(path, line, row, "start_time"),
                              number(path, line, row, "finish_time"), res, nodes))
    return jobs


def _batsim_wasted(jobs_file: Path) -> float | None:
    """SPEC 6 wasted energy of the run whose ``out_jobs.csv`` is ``jobs_file``, if its
    energy and schedule files are beside it."""
    from snficon.analysis.metrics import metrics_from_outputs

    prefix = str(jobs_file)[: -len("_jobs.csv")] if jobs_file.name.endswith("_jobs.csv") else None
    if prefix is None or not Path(f"{prefix}_consumed_energy.csv").is_file() \
            or not Path(f"{prefix}_schedule.csv").is_file():
        return None
    return metrics_from_outputs(prefix).energy_wasted


def _spars_wasted(jobs_file: Path) -> float | None:
    """``total_energy_waste`` of SPARS's ``metrics.csv`` beside ``jobs_file``, if present."""
    metrics = jobs_file.parent / "metrics.csv"
    if not metrics.is_file():
        return None
    rows = read_rows(metrics, ("total_energy_waste",))
    if len(rows) != 1:
        raise InputError(f"{metrics}: expected one data row, found {len(rows)}")
    value = number(metrics, 2, rows[0], "total_energy_waste")
    return value if math.isfinite(value) else None
