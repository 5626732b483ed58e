r"""COAST's advisor with its normalisers frozen from a training window of the run itself.

The paper calibrates its normalisers :math:`\bar C, \bar L` (medians) on
training windows and freezes them before the held-out windows it evaluates.
A scheduler layer sees one run, from its start, and must not look ahead, so
:class:`TrainedAdvisor` takes its training window from the run's own past:
the first ``train_jobs`` jobs to arrive are not shifted (they start as
Observed would start them) and, once the last of them arrived, the
normalisers are the medians of :func:`~snficon.carbon.evaluate.freeze_normalisers`
over them (carbon of each at its arrival, node load of the slots they
occupy); the :class:`~snficon.carbon.coast.Advisor` is created then and
advises every later job. Normalisers given explicitly skip the training
(every job is advised from the first).

The same object serves the layer in a simulation (:mod:`snficon.core.carbon_layer`)
and the idealised replay (:func:`plan_trained`), so the targets the layer
acted on and the plan COAST promises are the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from snficon.carbon.coast import (
    Advisor,
    BatchResult,
    CoastParams,
    FlexJob,
    IntensitySource,
    NoisyForecast,
)
from snficon.carbon.evaluate import freeze_normalisers, plan_workload
from snficon.carbon.game import Normalisers


class TrainedAdvisor:
    """An :class:`Advisor` preceded by a training window of ``train_jobs`` arrivals.

    The calls are the advisor's (``submit``, ``due_batches``, ``solve_batch``,
    ``batch_close``, ``target_start``, ``next_event_time``, ``forget``); during
    training ``submit`` returns the job's arrival (not held) and no batch is
    open. ``wait_s`` is the waiting normaliser (:math:`\\bar W`, s).
    """

    def __init__(self, params: CoastParams, intensity: IntensitySource, train_jobs: int,
                 wait_s: float = 3600.0, normalisers: Normalisers | None = None,
                 forecast: NoisyForecast | None = None) -> None:
        if train_jobs < 0:
            raise ValueError(f"train_jobs must be >= 0, got {train_jobs!r}")
        self.params, self.intensity, self.forecast = params, intensity, forecast
        self.train_jobs, self.wait_s = train_jobs, wait_s
        self.training: list[FlexJob] = []
        self.advisor: Advisor | None = None
        self._trained_targets: dict[str, float] = {}
        if normalisers is not None or train_jobs == 0:
            if normalisers is None:
                raise ValueError("train_jobs = 0 needs explicit normalisers")
            self.advisor = Advisor(params, intensity, normalisers, forecast)

    @property
    def normalisers(self) -> Normalisers | None:
        """The frozen normalisers (None while training)."""
        return self.advisor.normalisers if self.advisor is not None else None

    @property
    def results(self) -> list[BatchResult]:
        """Every solved micro-batch (its targets, sweeps and solve time)."""
        return self.advisor.results if self.advisor is not None else []

    def submit(self, job: FlexJob, now: float) -> float | None:
        """The job's target when known at once (training: its arrival), else None (held)."""
        if self.advisor is not None:
            return self.advisor.submit(job, now)
        self.training.append(job)
        self._trained_targets[job.job_id] = job.arrival_s
        if len(self.training) >= self.train_jobs:
            norms = freeze_normalisers(self.training, self.intensity, self.params.grid,
                                       self.wait_s)
            self.advisor = Advisor(self.params, self.intensity, norms, self.forecast)
        return job.arrival_s

    def due_batches(self, now: float) -> list[int]:
        return self.advisor.due_batches(now) if self.advisor is not None else []

    def solve_batch(self, batch: int, now: float) -> BatchResult:
        assert self.advisor is not None, "no batch is open while training"
        return self.advisor.solve_batch(batch, now)

    def batch_close(self, batch: int) -> float:
        return self.params.slot_origin_s + (batch + 1) * self.params.batch_s

    def target_start(self, job_id: str) -> float:
        if job_id in self._trained_targets:
            return self._trained_targets[job_id]
        if self.advisor is None:
            raise KeyError(job_id)
        return self.advisor.target_start(job_id)

    def next_event_time(self, now: float) -> float | None:
        return self.advisor.next_event_time(now) if self.advisor is not None else None

    def forget(self, job_id: str) -> None:
        self._trained_targets.pop(job_id, None)
        if self.advisor is not None:
            self.advisor.forget(job_id)


def plan_trained(jobs: Sequence[FlexJob], advisor: TrainedAdvisor) -> np.ndarray:
    """Every job's target under COAST's idealised model (batches solved at their close).

    The same sequence as :func:`snficon.carbon.evaluate.plan_workload`, and as
    the layer's: at each arrival the batches already closed are solved first,
    then the job is submitted.
    """
    return plan_workload(jobs, advisor)
