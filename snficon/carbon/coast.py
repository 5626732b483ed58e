r"""COAST's advisor: micro-batches of job intents, target starts, the layer's interface.

The advisor of Feng et al. (COAST) as pure code, to be called by a scheduler
layer at each invocation:

1. ``submit(job, now)`` when a job arrives. An inflexible job, and every job
   under the ``observed`` method, gets its arrival as target at once (it is
   not held). So does a flexible job whose latest feasible start
   (min(arrival + maximum delay, deadline - requested time)) comes before its
   batch closes: the layer never holds a job past its deadline. Any other
   job joins the micro-batch of its arrival (``batch_s`` = 5 min windows
   from ``slot_origin_s``).
2. ``solve_due(now)`` when ``now`` reaches a batch's close: the batch's game
   is built over the rolling horizon (48 h of 30-min slots,
   :mod:`snficon.carbon.game`) against the background load, solved by the
   method, and each job gets a target start >= the close. The accepted
   targets join the background load of later batches.
3. ``target_start(job_id)``: the job may start from then on (inf while its
   batch is open); ``next_event_time(now)``: the next batch close or target
   after ``now``, for the layer's ``CALL_ME_LATER``; ``forget(job_id)``
   once the job started.

Methods (``CoastParams.method``): ``observed`` (no shifting),
``carbon-greedy`` (each job alone at its lowest-carbon feasible start),
``carbon-waiting`` (each job alone minimising alpha C/C + beta W/W) and
``coast`` (the congestion game). All four see the same candidates. Carbon
scores use the signal over each candidate's window, or a forecast
(:class:`NoisyForecast`) when one is given.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from snficon.carbon.game import (
    BatchJobs,
    Normalisers,
    SlotGrid,
    Weights,
    build_game,
    solve_carbon_greedy,
    solve_carbon_waiting,
    solve_coast,
)
from snficon.carbon.series import StepSeries
from snficon.errors import InputError

METHODS = ("observed", "carbon-greedy", "carbon-waiting", "coast")
#: The workload JSON fields of a job's flexibility (extra fields, sent back in JOB_SUBMITTED):
#: whether the advisor may shift it, its maximum delay (s) and its deadline (s, latest end).
FLEXIBLE, MAX_DELAY, DEADLINE = "flexible", "max_delay", "deadline"
J_PER_KWH = 3.6e6


class IntensitySource(Protocol):
    """Carbon intensity on simulated time (a :class:`~snficon.carbon.mapping.MappedSignal`)."""

    def window(self, t_from: float, t_to: float) -> StepSeries: ...


@dataclass(frozen=True)
class CoastParams:
    """The advisor's parameters (the paper's values as defaults; times in s)."""

    method: str = "coast"
    alpha: float = 4.0
    beta: float = 1.0
    gamma: float = 5e-4
    psi_exponent: float = 2.0
    batch_s: float = 300.0
    slot_s: float = 1800.0
    horizon_s: float = 48 * 3600.0
    slot_origin_s: float = 0.0
    init: str = "insertion"
    max_sweeps: int = 1000
    tolerance: float = 1e-12

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r} (known: {', '.join(METHODS)})")
        for name in ("batch_s", "slot_s", "horizon_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")
        Weights(self.alpha, self.beta, self.gamma, self.psi_exponent)  # checks the weights

    @property
    def weights(self) -> Weights:
        return Weights(self.alpha, self.beta, self.gamma, self.psi_exponent)

    @property
    def grid(self) -> SlotGrid:
        return SlotGrid(self.slot_s, self.slot_origin_s)


@dataclass(frozen=True)
class FlexJob:
    """A job intent as COAST models it (times in s on simulated time, energy in kWh).

    ``runtime_s`` is the requested runtime; ``deadline_s`` the latest end
    (inf: none); ``max_delay_s`` the longest wait after arrival (inf: none).
    """

    job_id: str
    arrival_s: float
    nodes: int
    runtime_s: float
    energy_kwh: float
    flexible: bool = True
    max_delay_s: float = math.inf
    deadline_s: float = math.inf

    @property
    def latest_start_s(self) -> float:
        return min(self.arrival_s + self.max_delay_s, self.deadline_s - self.runtime_s)

    @classmethod
    def from_fields(cls, job_id: str, arrival_s: float, nodes: int, requested_s: float,
                    fields: Mapping[str, Any], busy_w: float) -> FlexJob:
        """A job from its workload JSON's extra fields (``flexible``, ``max_delay``, ``deadline``).

        ``fields`` is the job's JSON object (as ``JOB_SUBMITTED`` carries it);
        ``busy_w`` one node's busy power, for :func:`energy_estimate_kwh`. A
        job without ``flexible`` is not flexible; without ``max_delay`` or
        ``deadline`` it has no such bound. A bad field raises InputError.
        """
        flexible = fields.get(FLEXIBLE, False)
        if not isinstance(flexible, bool):
            raise InputError(f"job {job_id!r}: {FLEXIBLE!r} must be true or false, got "
                             f"{flexible!r}")
        bounds = []
        for name, low in ((MAX_DELAY, 0.0), (DEADLINE, -math.inf)):
            value = fields.get(name)
            if value is None:
                bounds.append(math.inf)
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not math.isfinite(value) or value < low:
                raise InputError(f"job {job_id!r}: {name!r} must be a finite number of seconds"
                                 f"{' >= 0' if low == 0 else ''}, got {value!r}")
            bounds.append(float(value))
        requested = max(float(requested_s), 0.0)
        return cls(job_id=job_id, arrival_s=float(arrival_s), nodes=int(nodes),
                   runtime_s=requested, energy_kwh=energy_estimate_kwh(nodes, busy_w, requested),
                   flexible=flexible, max_delay_s=bounds[0], deadline_s=bounds[1])


def energy_estimate_kwh(nodes: int, busy_w: float, requested_s: float) -> float:
    """COAST's energy estimate: nodes x busy power x requested time (kWh)."""
    return nodes * busy_w * requested_s / J_PER_KWH


@dataclass(frozen=True)
class BatchResult:
    """One solved micro-batch: its jobs' targets and the solver's effort."""

    batch: int
    decided_at: float
    job_ids: tuple[str, ...]
    targets: tuple[float, ...]
    sweeps: int
    updates: int
    converged: bool
    solve_s: float  # wall time of building and solving the game


class NoisyForecast:
    """The signal plus seeded noise: a forecast issued at each batch.

    Each interval's value is multiplied by max(0, 1 + ``relative_sd`` x z),
    z standard normal from ``numpy.random.default_rng((seed, batch))``, so a
    batch's forecast does not depend on the order batches are solved in.
    The error does not grow with lead time.
    """

    def __init__(self, truth: IntensitySource, relative_sd: float, seed: int) -> None:
        if not relative_sd >= 0:
            raise ValueError(f"relative_sd must be >= 0, got {relative_sd!r}")
        self.truth, self.relative_sd, self.seed = truth, relative_sd, seed

    def window(self, t_from: float, t_to: float, batch: int = 0) -> StepSeries:
        exact = self.truth.window(t_from, t_to)
        z = np.random.default_rng((self.seed, batch)).standard_normal(exact.size)
        noisy = exact.values * np.maximum(0.0, 1.0 + self.relative_sd * z)
        return StepSeries(exact.t0_s, exact.step_s, noisy)


class Advisor:
    """COAST's advisor (or a baseline) for one run; see the module's call sequence."""

    def __init__(self, params: CoastParams, intensity: IntensitySource,
                 normalisers: Normalisers, forecast: NoisyForecast | None = None) -> None:
        self.params, self.intensity, self.normalisers = params, intensity, normalisers
        self.forecast = forecast
        self.grid = params.grid
        self._open: dict[int, list[FlexJob]] = {}
        self._open_ids: set[str] = set()
        self._targets: dict[str, float] = {}
        self._load = np.zeros(0)  # committed nodes per absolute slot, from slot 0
        self._upcoming: list[tuple[float, str]] = []  # (target, job id) heap of held jobs
        self.results: list[BatchResult] = []

    # -- the layer's calls -------------------------------------------------------------
    def submit(self, job: FlexJob, now: float) -> float | None:
        """Register ``job`` at ``now``; its target if known at once (not held), else None."""
        if job.job_id in self._targets or job.job_id in self._open_ids:
            raise ValueError(f"job {job.job_id!r} submitted twice")
        batch = self.batch_of(now)
        immediate = (self.params.method == "observed" or not job.flexible
                     or job.latest_start_s < self.batch_close(batch))
        if immediate:
            self._accept(job, job.arrival_s)
            return job.arrival_s
        self._open.setdefault(batch, []).append(job)
        self._open_ids.add(job.job_id)
        return None

    def due_batches(self, now: float) -> list[int]:
        """The open batches whose window closed by ``now``, oldest first."""
        return sorted(b for b in self._open if self.batch_close(b) <= now)

    def solve_due(self, now: float) -> list[BatchResult]:
        """Solve every due batch, oldest first, at ``now``."""
        return [self.solve_batch(b, now) for b in self.due_batches(now)]

    def target_start(self, job_id: str) -> float:
        """When the job may start: its target, inf while its batch is open; KeyError if unknown."""
        if job_id in self._targets:
            return self._targets[job_id]
        if job_id in self._open_ids:
            return math.inf
        raise KeyError(job_id)

    def next_event_time(self, now: float) -> float | None:
        """When the layer must be called again: the first batch close or target after ``now``.

        ``now`` itself when a batch is already due (call :meth:`solve_due`);
        None when no batch is open and no target lies ahead.
        """
        closes = [self.batch_close(b) for b in self._open]
        if any(t <= now for t in closes):
            return now
        heap = self._upcoming
        while heap and (heap[0][0] <= now or self._targets.get(heap[0][1]) != heap[0][0]):
            heapq.heappop(heap)  # passed, forgotten or superseded
        times = closes + ([heap[0][0]] if heap else [])
        return min(times) if times else None

    def forget(self, job_id: str) -> None:
        """Drop a started job's target (its load stays in the background)."""
        self._targets.pop(job_id, None)

    # -- batches -----------------------------------------------------------------------
    def batch_of(self, t: float) -> int:
        return int(math.floor((t - self.params.slot_origin_s) / self.params.batch_s))

    def batch_close(self, batch: int) -> float:
        return self.params.slot_origin_s + (batch + 1) * self.params.batch_s

    def solve_batch(self, batch: int, now: float) -> BatchResult:
        """Decide the targets of ``batch`` at ``now`` (>= its close) and commit their load."""
        if self.batch_close(batch) > now:
            raise ValueError(f"batch {batch} closes at {self.batch_close(batch)!r}, not by "
                             f"{now!r}")
        jobs = self._open.pop(batch)
        self._open_ids.difference_update(j.job_id for j in jobs)
        started = time.perf_counter()
        arrays = BatchJobs(*(np.array([getattr(j, name) for j in jobs], dtype=float) for name in
                             ("arrival_s", "nodes", "runtime_s", "energy_kwh", "max_delay_s",
                              "deadline_s")))
        reach = now + self.params.horizon_s + float(arrays.runtime_s.max()) + self.params.slot_s
        window = (self.forecast.window(now, reach, batch) if self.forecast is not None
                  else self.intensity.window(now, reach))
        game = build_game(arrays, now, window, self._load, 0, self.grid,
                          self.params.horizon_s, self.params.weights, self.normalisers)
        if self.params.method == "coast":
            solution = solve_coast(game, self.params.init, self.params.max_sweeps,
                                   self.params.tolerance)
        elif self.params.method == "carbon-greedy":
            solution = solve_carbon_greedy(game)
        else:
            solution = solve_carbon_waiting(game)
        targets = game.starts[np.arange(len(jobs)), solution.choice]
        elapsed = time.perf_counter() - started
        for job, target in zip(jobs, targets, strict=True):
            self._accept(job, float(target))
        result = BatchResult(batch=batch, decided_at=now, job_ids=tuple(j.job_id for j in jobs),
                             targets=tuple(float(t) for t in targets), sweeps=solution.sweeps,
                             updates=solution.updates, converged=solution.converged,
                             solve_s=elapsed)
        self.results.append(result)
        return result

    def _accept(self, job: FlexJob, target: float) -> None:
        """Record the target and add the job's demand to the slots its window meets."""
        self._targets[job.job_id] = target
        if target > job.arrival_s:
            heapq.heappush(self._upcoming, (target, job.job_id))
        first = int(self.grid.first(np.array(target)))
        last = int(self.grid.last(np.array(target), np.array(job.runtime_s)))
        if first < 0:
            raise ValueError(f"job {job.job_id!r}: target {target!r} is before the slot origin")
        if last >= self._load.size:
            grown = np.zeros(max(last + 1, 2 * self._load.size))
            grown[:self._load.size] = self._load
            self._load = grown
        self._load[first:last + 1] += job.nodes

    def slot_loads(self) -> np.ndarray:
        """Committed nodes per slot from slot 0 (the background load; a copy)."""
        return self._load.copy()
