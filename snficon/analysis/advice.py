r"""Idealised vs realised: what a start-time advisor promised, and what the cluster delivered.

COAST's own evaluation (:mod:`snficon.carbon.evaluate`) measures a plan in
which every job starts at its target. A simulated run shows when the jobs
did start (Batsim's ``out_jobs.csv``). Both are measured here with COAST's
job model and metrics, on the same jobs:

- the job model: arrival = submission, nodes, the *actual* runtime (the
  execution time Batsim reports) and energy = nodes x ``busy_w`` x runtime,
  drawn evenly over the run (the paper's linear model);
- ``ideal_*``: the plan, each job from its target start (the advisor's,
  recomputed by the idealised replay :func:`snficon.carbon.online.plan_trained`
  with the run's layer parameters and signal; a run without a layer: its
  arrivals, COAST's Observed baseline);
- ``real_*``: the same jobs from their realised starts.

For each: job carbon (kg CO2, the jobs' own compute energy x intensity),
mean added wait (s; ideal: target - arrival; real: start - arrival, the
mean wait), peak slot load and load variance (nodes per 30-min slot, every
slot a job's window meets counting its nodes, from the first slot used to
the last). The whole cluster's emissions (idle and switching power
included) are ``carbon_total_kg`` of :mod:`snficon.analysis.carbon`.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from snficon.carbon.coast import FlexJob, IntensitySource, energy_estimate_kwh
from snficon.carbon.evaluate import PlanMetrics, plan_metrics
from snficon.carbon.game import SlotGrid
from snficon.carbon.online import TrainedAdvisor, plan_trained
from snficon.errors import InputError
from snficon.workload.reader import read_workload


def realised_jobs(prefix: str | Path) -> dict[str, tuple[float, int, float, float]]:
    """(submission, nodes, start, execution time) of every job that ran, by id."""
    path = Path(f"{prefix}_jobs.csv")
    try:
        with path.open(newline="", encoding="utf-8") as stream:
            rows = list(csv.DictReader(stream))
        return {row["job_id"]: (float(row["submission_time"]),
                                int(row["requested_number_of_resources"]),
                                float(row["starting_time"]), float(row["execution_time"]))
                for row in rows if row["success"] == "1" or row["starting_time"] not in ("", "-1")}
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the jobs' starts ({exc})") from None


def advice_jobs(prefix: str | Path, workloads: Sequence[str | Path],
                busy_w: float) -> tuple[list[FlexJob], list[FlexJob], np.ndarray]:
    """The workload's jobs as the advisor saw them (requested runtime), the same with their
    actual runtime, and their realised starts (jobs that never ran are left out)."""
    ran = realised_jobs(prefix)
    advised, actual, starts = [], [], []
    for path in workloads:
        for job in read_workload(path).jobs:
            key = str(job.id).split("!")[-1]
            if key not in ran:
                continue
            _, nodes, start, runtime = ran[key]
            advised.append(FlexJob.from_fields(key, job.subtime, job.res,
                                               max(job.requested_time, 0.0), job.raw, busy_w))
            actual.append(FlexJob(key, job.subtime, nodes, runtime,
                                  energy_estimate_kwh(nodes, busy_w, runtime)))
            starts.append(start)
    return advised, actual, np.array(starts, float)


def advice_metrics(prefix: str | Path, workloads: Sequence[str | Path],
                   intensity: IntensitySource, grid: SlotGrid, busy_w: float,
                   advisor: TrainedAdvisor | None = None) -> dict[str, Any]:
    """The ``ideal_*`` and ``real_*`` metrics of a run (see the module), plus the solver's
    effort when ``advisor`` (fresh, with the run's parameters) is given: batches solved,
    median solve time (s) and mean sweeps."""
    advised, actual, starts = advice_jobs(prefix, workloads, busy_w)
    if not actual:
        return {}
    arrivals = np.array([j.arrival_s for j in actual])
    if advisor is None:
        targets = arrivals
    else:
        order = sorted(range(len(advised)), key=lambda i: (advised[i].arrival_s, i))
        planned = plan_trained([advised[i] for i in order], advisor)
        targets = np.empty(len(advised))
        targets[order] = planned
    out: dict[str, Any] = {}
    for name, at in (("ideal", targets), ("real", starts)):
        m: PlanMetrics = plan_metrics(actual, at, intensity, grid)
        out.update({f"{name}_job_carbon_kg": m.carbon_kg,
                    f"{name}_added_wait_s": m.mean_added_wait_s,
                    f"{name}_peak_slot_load": m.peak_slot_load,
                    f"{name}_load_variance": m.load_variance})
    if advisor is not None:
        results = advisor.results
        solves = [r.solve_s for r in results]
        out.update(held_jobs=int(np.sum(targets > arrivals + 1e-9)),
                   coast_batches=len(results),
                   coast_solve_median_s=float(np.median(solves)) if solves else None,
                   coast_sweeps_mean=(float(np.mean([r.sweeps for r in results]))
                                      if results else None))
    return out
