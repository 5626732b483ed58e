r"""Time-limit metrics (the time-limits paper's Table 1) from Batsim's ``out_jobs.csv``.

Computed from the output file and the workload's job fields only (never from
the scheduler's state), so they mean the same for real-Batsim runs. A job's
limit :math:`\tau`, checkpoint interval :math:`I`, offset :math:`o` and cores
per node come from its workload fields (:class:`~snficon.core.names.CheckpointField`).
For a job that ran :math:`d` = ``execution_time`` s on :math:`n` nodes:

- its state: COMPLETED when Batsim reports COMPLETED_SUCCESSFULLY; a killed
  job (COMPLETED_KILLED: the layer's ``KILL_JOB``; or Batsim's own
  COMPLETED_WALLTIME_REACHED) is a TIMEOUT when :math:`d = \tau`, *early
  cancelled* when :math:`d < \tau` and *extended* when :math:`d > \tau`
  (within :data:`SAME_TIME_S`);
- its checkpoints: :math:`k = \lfloor (d - o) / I \rfloor` (0 if negative);
- its tail waste, for a killed checkpointing job: :math:`(d - (o + kI)) n`
  node-s when :math:`k \ge 1`, the whole :math:`d n` otherwise; a
  non-checkpointing job or a completed one has none (the paper, section 3);
- CPU time: :math:`d n` node-s; core-s multiply by the cores per node;
- wait :math:`w = ` start - submit; the node-weighted mean wait is
  :math:`\sum w n / \sum n` (the paper's weighted average wait).

Core-seconds are given only when every job's cores per node is known.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snficon.analysis.batsim_outputs import REJECTED, iter_jobs, iter_rows
from snficon.core.names import CheckpointField
from snficon.errors import InputError
from snficon.workload.reader import read_workload

#: Two durations closer than this (s) are equal (Batsim writes six decimals).
SAME_TIME_S = 1e-4
COMPLETED = "COMPLETED_SUCCESSFULLY"


@dataclass(frozen=True)
class FieldNames:
    """The job fields the metrics read (the layer's ``tl_*_field`` options)."""

    limit: str = CheckpointField.LIMIT
    interval: str = CheckpointField.INTERVAL
    offset: str = CheckpointField.OFFSET
    cores: str = CheckpointField.CORES

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> FieldNames:
        """The names a policy's options set (``tl_limit_field``...), defaults otherwise."""
        return cls(limit=options.get("tl_limit_field", cls.limit),
                   interval=options.get("tl_interval_field", cls.interval),
                   offset=options.get("tl_offset_field", cls.offset))


@dataclass(frozen=True)
class TimeLimitMetrics:
    """Table 1 of the time-limits paper for one run (s, node-s, core-s); the field names
    are ``metrics.json``'s keys."""

    jobs_completed: int
    jobs_timeout: int
    jobs_early_cancelled: int
    jobs_extended: int
    checkpointing_jobs: int
    checkpoints: int
    tail_waste_node_s: float
    tail_waste_core_s: float | None
    cpu_time_node_s: float
    cpu_time_core_s: float | None
    weighted_mean_wait: float | None


#: Bytes of a workload file searched at a time by :func:`has_checkpoints`.
SCAN_BYTES = 1 << 20


def has_checkpoints(workloads: Sequence[str | Path], fields: FieldNames = FieldNames()) -> bool:
    """Whether a job of ``workloads`` carries a checkpoint interval.

    A file whose text never spells the field's name as a JSON string (and has
    no escape that could spell it otherwise) has no such job, and is not
    parsed: a whole trace's workload is then never held decoded.
    """
    return any(_may_name(path, fields.interval)
               and any(fields.interval in job.raw for job in read_workload(path).jobs)
               for path in workloads)


def _may_name(path: str | Path, name: str) -> bool:
    """Whether the JSON file at ``path`` could hold the key ``name``: its text holds the
    name as a JSON string, or a backslash (an escape may spell any character).

    Read :data:`SCAN_BYTES` at a time (a whole trace's file is not held), each
    piece searched with the end of the one before.
    """
    needle = json.dumps(name, ensure_ascii=False).encode("utf-8")
    keep = len(needle) - 1
    try:
        with open(path, "rb") as handle:
            tail = b""
            while chunk := handle.read(SCAN_BYTES):
                window = tail + chunk
                if b"\\" in chunk or needle in window:
                    return True
                tail = window[-keep:] if keep else b""
    except OSError:
        return True  # read_workload names the file and the problem
    return False


def time_limit_metrics(prefix: str | Path, workloads: Sequence[str | Path],
                       fields: FieldNames = FieldNames()) -> TimeLimitMetrics:
    """The metrics of the run at ``prefix`` (``{prefix}_jobs.csv``) on ``workloads``
    (Batsim's ``-w`` files in order: workload ``w{i}`` is ``workloads[i]``)."""
    kept = ("id", fields.limit, fields.interval, fields.offset, fields.cores)
    raw = {(f"w{i}", job.id): {key: job.raw[key] for key in kept if key in job.raw}
           for i, path in enumerate(workloads) for job in read_workload(path).jobs}
    path = Path(f"{prefix}_jobs.csv")
    names = _workload_names(path)
    counts = {"completed": 0, "timeout": 0, "early": 0, "extended": 0}
    checkpointing = checkpoints = 0
    tail = cpu = tail_cores = cpu_cores = 0.0
    cores_known = True
    weighted = nodes_sum = 0.0
    for record, name in zip(iter_jobs(path), names, strict=True):
        if record.final_state == REJECTED:
            continue
        job = raw.get((name, record.job_id))
        if job is None:
            raise InputError(f"{path}: job {name}!{record.job_id} is not in the workloads")
        assert record.runtime is not None and record.start is not None
        ran, nodes = record.runtime, record.nodes
        cores = _number(job, fields.cores, path)
        cores_known = cores_known and cores is not None
        cpu += ran * nodes
        cpu_cores += ran * nodes * (cores or 0.0)
        weighted += (record.start - record.submit) * nodes
        nodes_sum += nodes
        state = _state(record.final_state, ran, _number(job, fields.limit, path))
        counts[state] += 1
        interval = _number(job, fields.interval, path)
        if interval is None:
            continue
        offset = _number(job, fields.offset, path) or 0.0
        reached = max(math.floor((ran - offset + SAME_TIME_S) / interval), 0)
        checkpointing += 1
        checkpoints += reached
        if state != "completed":
            lost = ran - (offset + reached * interval) if reached else ran
            tail += max(lost, 0.0) * nodes
            tail_cores += max(lost, 0.0) * nodes * (cores or 0.0)
    return TimeLimitMetrics(
        jobs_completed=counts["completed"], jobs_timeout=counts["timeout"],
        jobs_early_cancelled=counts["early"], jobs_extended=counts["extended"],
        checkpointing_jobs=checkpointing, checkpoints=checkpoints, tail_waste_node_s=tail,
        tail_waste_core_s=tail_cores if cores_known else None, cpu_time_node_s=cpu,
        cpu_time_core_s=cpu_cores if cores_known else None,
        weighted_mean_wait=weighted / nodes_sum if nodes_sum else None)


def _state(final_state: str, ran: float, limit: float | None) -> str:
    if final_state == COMPLETED or limit is None or limit <= 0:
        return "completed" if final_state == COMPLETED else "timeout"
    if abs(ran - limit) <= SAME_TIME_S:
        return "timeout"
    return "early" if ran < limit else "extended"


def _number(job: Mapping[str, Any], name: str, path: Path) -> float | None:
    value = job.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{path}: job {job.get('id')!r}: field {name!r} is not a number: "
                         f"{value!r}")
    return float(value)


def _workload_names(path: Path) -> Iterator[str]:
    """The ``workload_name`` column of ``out_jobs.csv``, one row at a time."""
    return (row["workload_name"] for row in iter_rows(path, ("workload_name",)))
