"""The RL baseline's training curriculum: simple, real and complex workloads from one segment.

The paper trains RL Budiarjo on the 1000 jobs that follow each evaluated
trace, with the curriculum simple -> real -> complex, "where the simple and
complex workloads are generated from the characteristics of the
corresponding real training segment" (section VI-B). What the paper leaves
open is fixed as the authors' ``BuildCurriculum.py`` does:

- the segment's series are its interarrival times, with a leading 0
  (the first gap is the first job's subtime), and its runtimes;
- *simple*: interarrivals and runtimes drawn from exponential laws with the
  segment's means (a Markovian version of the segment);
- *complex*: interarrivals and runtimes drawn independently from Gaussian
  kernel density estimates (``scipy.stats.gaussian_kde``, Scott's bandwidth)
  of ``log1p`` of the segment's values, draws below 0 after ``expm1``
  rejected (a series with fewer than 2 values or no spread is resampled
  with replacement instead);
- both keep the segment's job sizes and requested times, job by job in
  submission order; times are rounded to whole seconds (``numpy.rint``),
  subtimes are the cumulative sums of the rounded gaps, ids are 1..n;
- one seed (default 42) is split by ``numpy.random.SeedSequence(seed).spawn(2)``
  into the simple and the complex generator, draws in the order above, so a
  seed gives the same files byte for byte. With the segment of DAS2 FS1
  (jobs 3001-4000) and seed 42 this reproduces the authors' published
  ``DAS2-fs1-3001-4000_simple.json`` and ``_complex.json``, every field of
  every job (compared once with their files; the tests check sums and first
  jobs taken from them).

One difference: the authors' files set ``nb_res`` to the largest job of the
segment (48 on FS1); these keep the segment's ``nb_res`` (the platform size).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from snficon.errors import InputError
from snficon.fileio import atomic_write_text
from snficon.workload.model import PROFILE_DELAY, JobSpec, Workload
from snficon.workload.reader import read_workload
from snficon.workload.trace import TraceJob
from snficon.workload.writer import FLOPS_PER_SECOND, BatsimOptions, write_batsim_workload

DEFAULT_SEED = 42
#: The stages in training order, each the name of its file in the output folder.
STAGES = ("simple", "real", "complex")
SUMMARY_NAME = "curriculum.json"
#: Below this spread of log1p(values), a KDE is degenerate: resample instead.
MIN_LOG_SPREAD = 1e-12
MIN_KDE_DRAW = 32


@dataclass(frozen=True)
class SeriesStats:
    """The means a curriculum workload is built from or shows (s)."""

    jobs: int
    mean_interarrival_s: float
    mean_runtime_s: float


@dataclass(frozen=True)
class Segment:
    """A real training segment: its jobs in submission order and its two series."""

    jobs: tuple[TraceJob, ...]
    nb_res: int
    interarrivals_s: np.ndarray
    runtimes_s: np.ndarray

    def stats(self) -> SeriesStats:
        return SeriesStats(len(self.jobs), float(self.interarrivals_s.mean()),
                           float(self.runtimes_s.mean()))


def job_runtime_s(job: JobSpec, workload: Workload) -> float:
    """How long a job of a Batsim workload runs: ``delay``, or ``cpu`` / 1e9 (SPEC 4)."""
    profile = workload.profiles[job.profile]
    if profile.type == PROFILE_DELAY:
        return profile.delay_s
    return profile.cpu_flops / FLOPS_PER_SECOND


def segment_from_workload(workload: Workload) -> Segment:
    """The segment's jobs (stable submission order) and series.

    Interarrivals are the gaps between consecutive subtimes with a leading 0,
    so the first is the first job's subtime. Raises :class:`InputError` for
    an empty workload or one whose means are not positive.
    """
    if not workload.jobs:
        raise InputError(f"{workload.source}: the segment has no job")
    jobs = []
    for job in workload.jobs:
        runtime = job_runtime_s(job, workload)
        requested = job.requested_time
        reqtime = requested if requested >= 0 else runtime
        jobs.append(TraceJob(id=int(job.id) if job.id.isdigit() else len(jobs) + 1,
                             res=job.res, subtime=job.subtime, runtime=runtime,
                             reqtime=reqtime))
    subtimes = np.array([job.subtime for job in jobs])
    interarrivals = np.diff(np.concatenate(([0.0], subtimes)))
    runtimes = np.array([job.runtime for job in jobs])
    nb_res = workload.nb_res or max(job.res for job in jobs)
    segment = Segment(tuple(jobs), nb_res, interarrivals, runtimes)
    stats = segment.stats()
    if not stats.mean_interarrival_s > 0:
        raise InputError(f"{workload.source}: the mean interarrival time is "
                         f"{stats.mean_interarrival_s!r} s; a curriculum needs it > 0")
    if not stats.mean_runtime_s > 0:
        raise InputError(f"{workload.source}: the mean runtime is {stats.mean_runtime_s!r} s; "
                         "a curriculum needs it > 0")
    return segment


def kde_sample(values: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``count`` non-negative values from a Gaussian KDE of ``log1p(values)``.

    Draws are made in rounds of ``max(2 x missing, 32)`` and those whose
    ``expm1`` is negative or not finite are rejected (a truncation at 0). With
    fewer than 2 values, or no spread in ``log1p(values)``, the values are
    resampled with replacement.
    """
    values = np.asarray(values, dtype=np.float64)
    logs = np.log1p(values)
    if len(logs) < 2 or np.std(logs) <= MIN_LOG_SPREAD:
        return rng.choice(values, size=count, replace=True)
    # scipy.stats costs about 50 MB and a second to import: only the curriculum needs it,
    # so every other command (a simulation above all) goes without it.
    from scipy.stats import gaussian_kde

    kde = gaussian_kde(logs)
    kept: list[np.ndarray] = []
    missing = count
    while missing > 0:
        drawn = np.expm1(kde.resample(max(2 * missing, MIN_KDE_DRAW), seed=rng).reshape(-1))
        drawn = drawn[np.isfinite(drawn) & (drawn >= 0)][:missing]
        kept.append(drawn)
        missing -= len(drawn)
    return np.concatenate(kept)


def _jobs_from_series(template: Sequence[TraceJob], interarrivals: np.ndarray,
                      runtimes: np.ndarray) -> tuple[TraceJob, ...]:
    """Jobs 1..n with the template's sizes and requests and the drawn times (whole seconds)."""
    gaps = np.clip(np.rint(interarrivals), 0, None).astype(np.int64)
    durations = np.clip(np.rint(runtimes), 0, None).astype(np.int64)
    subtimes = np.cumsum(gaps)
    return tuple(TraceJob(id=index + 1, res=job.res, subtime=float(subtimes[index]),
                          runtime=float(durations[index]), reqtime=job.reqtime)
                 for index, job in enumerate(template))


def simple_jobs(segment: Segment, rng: np.random.Generator) -> tuple[TraceJob, ...]:
    """The *simple* workload: exponential interarrivals, then runtimes, with the segment's means."""
    stats = segment.stats()
    n = len(segment.jobs)
    interarrivals = rng.exponential(stats.mean_interarrival_s, n)
    runtimes = rng.exponential(stats.mean_runtime_s, n)
    return _jobs_from_series(segment.jobs, interarrivals, runtimes)


def complex_jobs(segment: Segment, rng: np.random.Generator) -> tuple[TraceJob, ...]:
    """The *complex* workload: interarrivals, then runtimes, from KDEs of the segment's series."""
    n = len(segment.jobs)
    interarrivals = kde_sample(segment.interarrivals_s, n, rng)
    runtimes = kde_sample(segment.runtimes_s, n, rng)
    return _jobs_from_series(segment.jobs, interarrivals, runtimes)


def stage_generators(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """The simple and complex generators: ``SeedSequence(seed).spawn(2)``."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"--seed must be a non-negative integer, got {seed!r}")
    simple_seed, complex_seed = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(simple_seed), np.random.default_rng(complex_seed)


def _stats_of(jobs: Sequence[TraceJob]) -> SeriesStats:
    subtimes = np.array([job.subtime for job in jobs])
    gaps = np.diff(np.concatenate(([0.0], subtimes)))
    return SeriesStats(len(jobs), float(gaps.mean()),
                       float(np.mean([job.runtime for job in jobs])))


@dataclass(frozen=True)
class CurriculumReport:
    """What ``snficon workload curriculum`` wrote: one file per stage, the summary, the stats."""

    files: dict[str, str]
    summary: str
    seed: int
    stats: dict[str, SeriesStats]

    def lines(self) -> list[str]:
        """The report as human-readable lines (the CLI prints them)."""
        out = [f"seed: {self.seed}"]
        for stage in STAGES:
            s = self.stats[stage]
            out.append(f"{stage}: {self.files[stage]} ({s.jobs} jobs, mean interarrival "
                       f"{s.mean_interarrival_s:.10g} s, mean runtime {s.mean_runtime_s:.10g} s)")
        out.append(f"summary: {self.summary}")
        return out


def write_curriculum(segment_path: str | Path, out_dir: str | Path, *, seed: int = DEFAULT_SEED,
                     options: BatsimOptions | None = None) -> CurriculumReport:
    """Write ``simple.json``, ``real.json`` (the segment, byte for byte) and ``complex.json``
    into ``out_dir``, with ``curriculum.json`` naming the stages in training order.

    Each file is written atomically. Raises :class:`InputError` for a bad
    segment or seed.
    """
    simple_rng, complex_rng = stage_generators(seed)
    workload = read_workload(segment_path)
    segment = segment_from_workload(workload)
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: exists and is not a folder")
    generated = {"simple": simple_jobs(segment, simple_rng),
                 "complex": complex_jobs(segment, complex_rng)}
    files = {stage: str(out / f"{stage}.json") for stage in STAGES}
    for stage, jobs in generated.items():
        write_batsim_workload(files[stage], jobs, segment.nb_res, options)
    _copy_atomically(Path(segment_path), Path(files["real"]))
    stats = {"simple": _stats_of(generated["simple"]), "real": segment.stats(),
             "complex": _stats_of(generated["complex"])}
    summary = {
        "seed": seed,
        "segment": Path(segment_path).name,
        "stages": [{"stage": stage, "workload": f"{stage}.json", **asdict(stats[stage])}
                   for stage in STAGES],
        "complex_distribution": "Gaussian KDE of log1p(interarrival), of log1p(runtime)",
        "simple_distribution": "exponential interarrival and runtime with the segment's means",
    }
    summary_path = out / SUMMARY_NAME
    atomic_write_text(summary_path, json.dumps(summary, indent=2) + "\n")
    return CurriculumReport(files=files, summary=str(summary_path), seed=seed, stats=stats)


def _copy_atomically(source: Path, target: Path) -> None:
    """Copy a text file byte for byte (UTF-8, newlines untouched), atomically."""
    with open(source, encoding="utf-8", newline="") as stream:
        atomic_write_text(target, stream.read())
