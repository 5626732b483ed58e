"""Convert PM100's ``job_table.parquet`` into a checkpoint workload (the time-limits paper).

PM100 (CINECA Marconi100, May-October 2020; the exclusive jobs of M100) is
published with its job table as a parquet file; its columns are documented
with the dataset (``documentation/job_features.md`` of its repository). This
converter reads ``job_id``, ``submit_time`` (timestamp), ``run_time`` (s),
``time_limit`` (minutes), ``num_nodes_alloc``, ``num_cores_alloc``,
``job_state``, ``partition`` and ``qos``, and rebuilds the paper's construction
(section 4): keep one partition, one queue (``qos``) and one month, the
COMPLETED and TIMEOUT jobs that ran at least ``min_runtime_s``; divide every
duration by ``scale``; a job that timed out at ``checkpoint_limit_min`` (the
24-h maximum) checkpoints every ``interval_s`` (scaled) seconds; a job that
timed out runs past its limit (``overrun`` x limit; the layer kills it there);
a completed job runs its ``run_time``. Jobs keep their submission order (then
``job_id``) and are released at 0 (``arrivals = zero``, the paper) or at their
scaled submission times from the first one (``trace``). Each job carries its
cores per node, ``num_cores_alloc / num_nodes_alloc``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snficon.errors import InputError
from snficon.workload.checkpoints import CheckpointJobs
from snficon.workload.trace import TraceJob

COLUMNS = ("job_id", "submit_time", "run_time", "time_limit", "num_nodes_alloc",
           "num_cores_alloc", "job_state", "partition", "qos")
PM100_ARRIVALS = ("zero", "trace")


@dataclass(frozen=True)
class Pm100Selection:
    """Which PM100 jobs are kept and how they are scaled (defaults: the paper's).

    ``partition`` and ``qos`` compare as text (PM100 anonymises them as
    numbers); ``month`` is ``YYYY-MM`` of the submission (None: every month).
    """

    partition: str | None = "1"
    qos: str | None = "1"
    month: str | None = "2020-05"
    states: tuple[str, ...] = ("COMPLETED", "TIMEOUT")
    min_runtime_s: float = 3600.0
    checkpoint_limit_min: float = 1440.0
    scale: float = 60.0
    arrivals: str = "zero"
    overrun: float = 2.0

    def __post_init__(self) -> None:
        if self.arrivals not in PM100_ARRIVALS:
            raise InputError(f"arrivals must be one of {', '.join(PM100_ARRIVALS)}, "
                             f"got {self.arrivals!r}")
        if not self.scale > 0 or not self.overrun > 1:
            raise InputError(f"scale must be > 0 and overrun > 1, got {self.scale!r} and "
                             f"{self.overrun!r}")


@dataclass(frozen=True)
class Pm100Result:
    """The converted jobs, their cores per node (by id) and what was dropped, per reason."""

    jobs: CheckpointJobs
    cores: dict[int, int]
    rows: int
    dropped: dict[str, int] = field(default_factory=dict)

    def lines(self) -> list[str]:
        return [f"PM100 rows read: {self.rows}", f"jobs kept: {len(self.jobs.jobs)}",
                *(f"  dropped, {reason}: {count}" for reason, count in sorted(
                    self.dropped.items()))]


def read_pm100(path: str | Path, selection: Pm100Selection | None = None) -> Pm100Result:
    """Read and convert a PM100 job table (module docstring); InputError names the file."""
    import pandas as pd  # heavy: only this converter needs it

    selection = selection or Pm100Selection()
    try:
        table = pd.read_parquet(path)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except Exception as exc:  # pyarrow raises several kinds for a file that is not parquet
        raise InputError(f"{path}: not a readable parquet file ({exc})") from None
    missing = [name for name in COLUMNS if name not in table.columns]
    if missing:
        raise InputError(f"{path}: not a PM100 job table, missing column(s) {missing}")
    dropped: dict[str, int] = {}
    table = table.sort_values(["submit_time", "job_id"], kind="stable")
    kept = table
    for reason, keep in _filters(selection):
        mask = keep(kept).fillna(False).to_numpy(dtype=bool)
        dropped[reason] = int((~mask).sum())
        kept = kept[mask]
    return _convert(kept, len(table), dropped, selection, path)


def _filters(selection: Pm100Selection) -> list[tuple[str, Callable[[Any], Any]]]:
    """The paper's selection, one (reason, rows kept) test at a time, in this order."""
    filters: list[tuple[str, Callable[[Any], Any]]] = []
    if selection.partition is not None:
        filters.append(("other partition",
                        lambda t: t["partition"].astype(str) == selection.partition))
    if selection.qos is not None:
        filters.append(("other queue (qos)", lambda t: t["qos"].astype(str) == selection.qos))
    if selection.month is not None:
        filters.append(("other month",
                        lambda t: t["submit_time"].dt.strftime("%Y-%m") == selection.month))
    filters.append(("other state", lambda t: t["job_state"].isin(selection.states)))
    filters.append((f"shorter than {selection.min_runtime_s:g} s",
                    lambda t: t["run_time"] >= selection.min_runtime_s))
    filters.append(("no limit or no nodes",
                    lambda t: (t["time_limit"] > 0) & (t["num_nodes_alloc"] > 0)))
    return filters


def _convert(table: Any, rows: int, dropped: dict[str, int], selection: Pm100Selection,
             path: str | Path) -> Pm100Result:
    if table.empty:
        raise InputError(f"{path}: no job kept ({rows} rows; dropped {dropped})")
    first = table["submit_time"].iloc[0]
    jobs, checkpointing, cores = [], set(), {}
    for row in table.itertuples(index=False):
        job_id = int(row.job_id)
        limit_s = float(row.time_limit) * 60.0
        timed_out = row.job_state == "TIMEOUT"
        runtime = selection.overrun * limit_s if timed_out else float(row.run_time)
        if timed_out and math.isclose(float(row.time_limit), selection.checkpoint_limit_min):
            checkpointing.add(job_id)
        subtime = 0.0
        if selection.arrivals == "trace":
            subtime = (row.submit_time - first).total_seconds() / selection.scale
        nodes = int(row.num_nodes_alloc)
        jobs.append(TraceJob(id=job_id, res=nodes, subtime=subtime,
                             runtime=runtime / selection.scale,
                             reqtime=limit_s / selection.scale))
        cores[job_id] = max(int(row.num_cores_alloc) // nodes, 1)
    return Pm100Result(jobs=CheckpointJobs(tuple(jobs), frozenset(checkpointing)), cores=cores,
                       rows=rows, dropped=dropped)
