r"""Workloads with checkpointing jobs and time limits, for the time-limit layer.

The time-limits paper (section 4, "Workload Construction") took 773 jobs of
PM100 (Marconi100: partition 1, queue 1, May 2020, exclusive nodes,
COMPLETED or TIMEOUT, >= 1 h), scaled every duration 60x down (1 h -> 1
min), released them all at t = 0 on 20 nodes and made the 109 jobs that
timed out at the 24-h maximum checkpoint every 7 scaled minutes; 108 other
jobs timed out below it and 556 completed. :func:`generate_checkpoint_workload`
draws a workload of that shape from parameters (PM100 itself cannot be
shipped; :mod:`snficon.workload.pm100` converts it for users who have it),
and :func:`annotate_limit_hits` turns a trace's jobs that reached their
requested time into checkpointing jobs.

Every job is written with ``walltime: -1`` and its limit as ``reqtime`` (the
layer enforces it, :mod:`snficon.core.time_limits`); a checkpointing job also
carries ``checkpoint_interval`` (and ``checkpoint_offset`` when not 0), every
job ``cores_per_node`` when it is known (:class:`~snficon.core.names.CheckpointField`).
A job's profile holds its true runtime, which for a job that hits its limit
lies past the limit (the layer kills it there).

The generator's model, drawn from one ``numpy.random.default_rng(seed)`` in
this order (all in unscaled hours, then divided by ``scale``):

1. categories: ``round(n x timeout_share)`` jobs hit their limit, of which
   ``round(hits x checkpoint_share)`` checkpoint; the rest complete; a random
   permutation places them in the queue;
2. sizes: ``min(geometric(size_p), size_cap)`` nodes;
3. limits: checkpointing jobs the maximum; other limit hitters a whole
   number of hours in [2, max); completing jobs the maximum with probability
   ``max_limit_share``, else a whole number of hours in [2, max);
4. runtime fractions ``u ~ U(runtime_low, 1)``: a completing job runs
   ``max(u x limit, min_runtime)`` (below its limit); a job that hits its
   limit would run ``overrun x limit``;
5. interarrival gaps (``arrivals = poisson``): exponential of mean
   ``mean_interarrival_s`` (scaled seconds), the first job at 0; with
   ``arrivals = zero`` every job is released at 0 (the paper).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from snficon.core.names import CheckpointField
from snficon.errors import InputError
from snficon.workload.trace import TraceJob
from snficon.workload.writer import BatsimOptions, WriteReport, batsim_document

ARRIVALS = ("zero", "poisson")


@dataclass(frozen=True)
class CheckpointFields:
    """The checkpoint fields every job of a written workload gets (times in s)."""

    interval_s: float
    offset_s: float = 0.0
    cores_per_node: int | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.interval_s) and self.interval_s > 0):
            raise InputError(f"checkpoint interval must be a positive number of seconds, "
                             f"got {self.interval_s!r}")
        if not (math.isfinite(self.offset_s) and self.offset_s >= 0):
            raise InputError(f"checkpoint offset must be >= 0 s, got {self.offset_s!r}")
        if self.cores_per_node is not None and self.cores_per_node < 1:
            raise InputError(f"cores per node must be at least 1, got {self.cores_per_node!r}")


@dataclass(frozen=True)
class CheckpointWorkloadParams:
    """Parameters of :func:`generate_checkpoint_workload`; the defaults are the paper's shape.

    Shares: ``timeout_share`` of the jobs hit their limit (217 of 773),
    ``checkpoint_share`` of those checkpoint (109 of 217). Times in hours
    before scaling, except ``interval_s``, ``offset_s`` and
    ``mean_interarrival_s``, which are in scaled seconds (7 min = 420 s).
    """

    seed: int = 2020
    n_jobs: int = 773
    nodes: int = 20
    timeout_share: float = 217 / 773
    checkpoint_share: float = 109 / 217
    max_limit_h: int = 24
    max_limit_share: float = 0.7
    min_runtime_h: float = 1.0
    runtime_low: float = 0.6
    size_p: float = 0.45
    size_cap: int = 16
    overrun: float = 2.0
    scale: float = 60.0
    interval_s: float = 420.0
    offset_s: float = 0.0
    cores_per_node: int = 20
    arrivals: str = "zero"
    mean_interarrival_s: float = 60.0

    def __post_init__(self) -> None:
        checks = [
            (self.n_jobs >= 1, "n_jobs", "at least 1"),
            (self.nodes >= 1, "nodes", "at least 1"),
            (0 <= self.timeout_share <= 1, "timeout_share", "in [0, 1]"),
            (0 <= self.checkpoint_share <= 1, "checkpoint_share", "in [0, 1]"),
            (self.max_limit_h >= 3, "max_limit_h", "at least 3 (limits are drawn in [2, max))"),
            (0 <= self.max_limit_share <= 1, "max_limit_share", "in [0, 1]"),
            (0 < self.min_runtime_h < 2, "min_runtime_h", "in (0, 2) (below the least limit)"),
            (0 <= self.runtime_low < 1, "runtime_low", "in [0, 1)"),
            (0 < self.size_p <= 1, "size_p", "in (0, 1]"),
            (1 <= self.size_cap <= self.nodes, "size_cap", "in [1, nodes]"),
            (self.overrun > 1, "overrun", "> 1 (such jobs run past their limit)"),
            (self.scale > 0, "scale", "positive"),
            (self.mean_interarrival_s > 0, "mean_interarrival_s", "positive"),
        ]
        for ok, name, rule in checks:
            if not ok:
                raise InputError(f"checkpoint workload parameter {name} must be {rule}, "
                                 f"got {getattr(self, name)!r}")
        if self.arrivals not in ARRIVALS:
            raise InputError(f"checkpoint workload parameter arrivals must be one of "
                             f"{', '.join(ARRIVALS)}, got {self.arrivals!r}")
        self.fields  # checks the interval, offset and cores  # noqa: B018

    @property
    def fields(self) -> CheckpointFields:
        return CheckpointFields(self.interval_s, self.offset_s, self.cores_per_node)

    @property
    def counts(self) -> tuple[int, int]:
        """(jobs that hit their limit, of which checkpointing), as the generator rounds them."""
        hits = round(self.n_jobs * self.timeout_share)
        return hits, round(hits * self.checkpoint_share)


@dataclass(frozen=True)
class CheckpointJobs:
    """Trace jobs (``reqtime`` = the limit, ``runtime`` = the true runtime) and the ids of
    the checkpointing ones."""

    jobs: tuple[TraceJob, ...]
    checkpointing: frozenset[int]


def generate_checkpoint_workload(params: CheckpointWorkloadParams | None = None) -> CheckpointJobs:
    """Draw a workload of the paper's shape (module docstring: the model and draw order)."""
    params = params or CheckpointWorkloadParams()
    n = params.n_jobs
    hits, checkpointing = params.counts
    rng = np.random.default_rng(seed=params.seed)
    kind = np.zeros(n, dtype=np.int8)  # 0 completes, 1 hits its limit, 2 also checkpoints
    kind[:hits] = 1
    kind[:checkpointing] = 2
    kind = rng.permutation(kind)
    sizes = np.minimum(rng.geometric(p=params.size_p, size=n), params.size_cap)
    top = params.max_limit_h
    lower = rng.integers(2, top, size=n).astype(float)
    at_max = rng.random(n) < params.max_limit_share
    limit_h = np.where((kind == 2) | ((kind == 0) & at_max), float(top), lower)
    fraction = rng.uniform(params.runtime_low, 1.0, size=n)
    runtime_h = np.where(kind == 0, np.maximum(fraction * limit_h, params.min_runtime_h),
                         params.overrun * limit_h)
    if params.arrivals == "poisson":
        gaps = rng.exponential(params.mean_interarrival_s, size=n)
        subtimes = np.concatenate([[0.0], np.cumsum(gaps[1:])])
    else:
        subtimes = np.zeros(n)
    to_s = 3600.0 / params.scale
    jobs = tuple(TraceJob(id=i + 1, res=int(sizes[i]), subtime=float(subtimes[i]),
                          runtime=float(runtime_h[i] * to_s), reqtime=float(limit_h[i] * to_s))
                 for i in range(n))
    return CheckpointJobs(jobs=jobs, checkpointing=frozenset(
        int(i) + 1 for i in np.flatnonzero(kind == 2)))


def annotate_limit_hits(jobs: tuple[TraceJob, ...], share: float, overrun_mean: float,
                        seed: int) -> CheckpointJobs:
    r"""Make a trace's jobs that reached their requested time checkpointing jobs.

    A job *reached its limit* when its reqtime is positive and its runtime is
    at least its reqtime (the trace's system killed it, or it ended at the
    limit). ``round(share x hits)`` of them, chosen with
    ``numpy.random.default_rng(seed).permutation``, checkpoint; the trace does
    not say how long they would have run, so their true runtime is drawn past
    the limit, :math:`\tau (1 + X)` with :math:`X` exponential of mean
    ``overrun_mean`` (drawn after the permutation, in job order). Other jobs
    are unchanged (one that ran past its request is killed at it).
    """
    if not 0 <= share <= 1:
        raise InputError(f"the share of checkpointing jobs must be in [0, 1], got {share!r}")
    if not (math.isfinite(overrun_mean) and overrun_mean > 0):
        raise InputError(f"the mean overrun must be positive, got {overrun_mean!r}")
    hit = [i for i, job in enumerate(jobs) if job.reqtime > 0 and job.runtime >= job.reqtime]
    rng = np.random.default_rng(seed=seed)
    chosen = sorted(int(hit[k]) for k in rng.permutation(len(hit))[:round(share * len(hit))])
    overruns = rng.exponential(overrun_mean, size=len(chosen))
    out = list(jobs)
    for index, extra in zip(chosen, overruns, strict=True):
        job = out[index]
        out[index] = replace(job, runtime=job.reqtime * (1.0 + float(extra)))
    return CheckpointJobs(jobs=tuple(out), checkpointing=frozenset(jobs[i].id for i in chosen))


def checkpoint_document(jobs: CheckpointJobs, nb_res: int, fields: CheckpointFields,
                        cores_by_id: Mapping[int, int] | None = None,
                        ) -> tuple[dict[str, Any], WriteReport]:
    """The Batsim document of ``jobs``: ``walltime: -1``, ``reqtime`` = the limit, and the
    checkpoint fields (module docstring). ``cores_by_id`` gives each job's cores per node
    when ``fields`` has none for all."""
    document, report = batsim_document(jobs.jobs, nb_res, BatsimOptions())
    for raw in document["jobs"]:
        if raw["id"] in jobs.checkpointing:
            raw[CheckpointField.INTERVAL] = _number(fields.interval_s)
            if fields.offset_s:
                raw[CheckpointField.OFFSET] = _number(fields.offset_s)
        cores = fields.cores_per_node
        if cores is None and cores_by_id is not None:
            cores = cores_by_id.get(raw["id"])
        if cores is not None:
            raw[CheckpointField.CORES] = cores
    return document, report


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


@dataclass(frozen=True)
class CheckpointSummary:
    """What a checkpoint workload holds: jobs that complete, hit their limit, checkpoint;
    checkpoints that fit in the limits; the tail (node-s) the baseline leaves, when
    checkpoints count from the start."""

    jobs: int
    completing: int
    limit_hits: int
    checkpointing: int
    checkpoints_in_limits: int
    baseline_tail_node_s: float

    def lines(self) -> list[str]:
        return [f"jobs: {self.jobs} ({self.completing} complete, {self.limit_hits} hit their "
                f"limit, {self.checkpointing} of them checkpointing)",
                f"checkpoints within the limits: {self.checkpoints_in_limits}",
                f"tail waste if limits are enforced as given: "
                f"{self.baseline_tail_node_s:.10g} node-s"]


def summarize_checkpoints(jobs: CheckpointJobs, fields: CheckpointFields) -> CheckpointSummary:
    """The :class:`CheckpointSummary` of ``jobs`` (checkpoint k at offset + k x interval)."""
    hits = [job for job in jobs.jobs if job.runtime > job.reqtime > 0]
    count = tail = 0.0
    for job in jobs.jobs:
        if job.id not in jobs.checkpointing:
            continue
        ran = min(job.runtime, job.reqtime)
        k = max(math.floor((ran - fields.offset_s) / fields.interval_s), 0)
        count += k
        if job.runtime > job.reqtime:
            tail += (ran - (fields.offset_s + k * fields.interval_s if k else 0.0)) * job.res
    return CheckpointSummary(jobs=len(jobs.jobs), completing=len(jobs.jobs) - len(hits),
                             limit_hits=len(hits), checkpointing=len(jobs.checkpointing),
                             checkpoints_in_limits=int(count), baseline_tail_node_s=tail)
