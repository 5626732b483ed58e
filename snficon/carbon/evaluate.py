"""COAST's own, idealised evaluation: normalisers from a training window, planned targets, metrics.

Under the paper's realisation model every job starts exactly at its target
(no queue, no node waking up). :func:`plan_workload` replays a workload
through an :class:`~snficon.carbon.coast.Advisor` in that model and
:func:`plan_metrics` measures the plan as the paper does (carbon, mean added
wait, peak slot load, load variance); a simulated run measures what the
cluster delivered, so the two can be set side by side ("idealised vs
realised").

**Normalisers** (:func:`freeze_normalisers`): the paper freezes medians
computed on training windows. Here, over the jobs of a training window at
their observed starts (arrivals): the carbon normaliser is the median job
carbon C_j(a_j), the load normaliser the median node load over the slots
with any load. The summary does not say what waiting is normalised by; the
default here is one hour (so beta weighs hours of waiting), settable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from snficon.carbon.coast import Advisor, FlexJob, IntensitySource
from snficon.carbon.game import G_PER_KG, Normalisers, SlotGrid

if TYPE_CHECKING:
    from snficon.carbon.online import TrainedAdvisor


def _arrays(jobs: Sequence[FlexJob]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return (np.array([j.arrival_s for j in jobs], float), np.array([j.runtime_s for j in jobs],
                                                                    float),
            np.array([j.energy_kwh for j in jobs], float), np.array([j.nodes for j in jobs],
                                                                     float))


def carbon_of_starts(jobs: Sequence[FlexJob], starts: np.ndarray,
                     intensity: IntensitySource) -> np.ndarray:
    """Each job's carbon (kg) if it runs its requested time from ``starts``: C_j(x_j)."""
    _, runtime, energy, _ = _arrays(jobs)
    starts = np.asarray(starts, float)
    series = intensity.window(float(starts.min()), float((starts + runtime).max()))
    return energy * series.mean(starts, starts + runtime) / G_PER_KG


def slot_loads(jobs: Sequence[FlexJob], starts: np.ndarray,
               grid: SlotGrid) -> tuple[int, np.ndarray]:
    """(first slot, nodes per slot) of the jobs run from ``starts``, every slot they meet."""
    _, runtime, _, nodes = _arrays(jobs)
    first, last = grid.first(starts), grid.last(starts, runtime)
    slot0 = int(first.min())
    diff = np.zeros(int(last.max()) - slot0 + 2)
    np.add.at(diff, first - slot0, nodes)
    np.add.at(diff, last - slot0 + 1, -nodes)
    return slot0, np.cumsum(diff)[:-1]


def freeze_normalisers(training: Sequence[FlexJob], intensity: IntensitySource, grid: SlotGrid,
                       wait_s: float = 3600.0) -> Normalisers:
    """Medians over a training window's jobs at their arrivals (see the module's note)."""
    if not training:
        raise ValueError("the training window has no jobs")
    arrival = np.array([j.arrival_s for j in training], float)
    carbon = float(np.median(carbon_of_starts(training, arrival, intensity)))
    _, loads = slot_loads(training, arrival, grid)
    busy = loads[loads > 0]
    load = float(np.median(busy)) if busy.size else 1.0
    if not carbon > 0:
        raise ValueError(f"the training jobs' median carbon is {carbon!r}: no energy to "
                         "normalise by")
    return Normalisers(carbon_kg=carbon, wait_s=wait_s, load=load)


def plan_workload(jobs: Sequence[FlexJob], advisor: Advisor | TrainedAdvisor) -> np.ndarray:
    """Every job's target start under the idealised model (each batch solved at its close):
    at each arrival the batches already closed are solved first, then the job is
    submitted, as the layer does."""
    order = sorted(range(len(jobs)), key=lambda i: (jobs[i].arrival_s, i))
    for i in order:
        job = jobs[i]
        for batch in advisor.due_batches(job.arrival_s):
            advisor.solve_batch(batch, advisor.batch_close(batch))
        advisor.submit(job, job.arrival_s)
    for batch in advisor.due_batches(math.inf):
        advisor.solve_batch(batch, advisor.batch_close(batch))
    return np.array([advisor.target_start(j.job_id) for j in jobs], float)


@dataclass(frozen=True)
class PlanMetrics:
    """A plan measured as COAST's evaluation does (kg, s, nodes, nodes squared)."""

    carbon_kg: float
    mean_added_wait_s: float  # over all jobs
    mean_added_wait_flexible_s: float  # over the flexible jobs (nan without any)
    peak_slot_load: float
    load_variance: float
    slots: int


def plan_metrics(jobs: Sequence[FlexJob], starts: np.ndarray, intensity: IntensitySource,
                 grid: SlotGrid) -> PlanMetrics:
    """Carbon, added wait and slot-load statistics of the jobs run from ``starts``.

    The load statistics run over every slot from the first one used to the
    last, empty ones included.
    """
    arrival, *_ = _arrays(jobs)
    starts = np.asarray(starts, float)
    wait = starts - arrival
    flexible = np.array([j.flexible for j in jobs])
    _, loads = slot_loads(jobs, starts, grid)
    return PlanMetrics(
        carbon_kg=float(np.sum(carbon_of_starts(jobs, starts, intensity))),
        mean_added_wait_s=float(wait.mean()),
        mean_added_wait_flexible_s=float(wait[flexible].mean()) if flexible.any() else math.nan,
        peak_slot_load=float(loads.max()), load_variance=float(loads.var()),
        slots=int(loads.size))
