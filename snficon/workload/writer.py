"""Write trace jobs as a Batsim JSON workload (SPEC section 4).

Each job becomes ``{"id", "subtime", "res", "profile", "walltime",
"reqtime"}``; ``reqtime`` is an extra field Batsim passes through to the
scheduler, which plans with it. Jobs with the same runtime share one profile,
named from the runtime, so files stay small and the names are deterministic.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snficon.errors import InputError
from snficon.fileio import atomic_write_text
from snficon.workload.model import PROFILE_DELAY, PROFILE_PARALLEL_HOMOGENEOUS
from snficon.workload.trace import TraceJob

WALLTIME_PAPER = "paper"
WALLTIME_KILL = "kill"
WALLTIME_MODES = (WALLTIME_PAPER, WALLTIME_KILL)
PROFILE_KINDS = (PROFILE_PARALLEL_HOMOGENEOUS, PROFILE_DELAY)
FLOPS_PER_SECOND = 1e9
"""Compute speed of pstate 0 (SPEC section 3): cpu = runtime x 1e9."""


@dataclass(frozen=True)
class BatsimOptions:
    """How trace jobs become Batsim jobs.

    ``walltime``: ``paper`` (``walltime: -1``, a job runs past its request,
    the paper's semantics) or ``kill`` (``walltime = reqtime``, Batsim kills
    an overrunning job). ``profile``: ``parallel_homogeneous`` (``cpu =
    runtime x 1e9``, ``com = 0``; busy power) or ``delay`` (idle power).
    ``min_runtime_s``: zero runtimes are raised to it; required (> 0) with
    ``delay`` profiles, since Batsim refuses ``delay: 0``; optional otherwise
    (a zero ``cpu`` runs in 1e-5 s in Batsim).
    """

    walltime: str = WALLTIME_PAPER
    profile: str = PROFILE_PARALLEL_HOMOGENEOUS
    min_runtime_s: float | None = None

    def __post_init__(self) -> None:
        if self.walltime not in WALLTIME_MODES:
            raise InputError(f"walltime mode must be one of {', '.join(WALLTIME_MODES)}, "
                             f"got {self.walltime!r}")
        if self.profile not in PROFILE_KINDS:
            raise InputError(f"profile type must be one of {', '.join(PROFILE_KINDS)}, "
                             f"got {self.profile!r}")
        if self.min_runtime_s is not None and not (
                math.isfinite(self.min_runtime_s) and self.min_runtime_s > 0):
            raise InputError(f"--min-runtime must be a positive number of seconds, "
                             f"got {self.min_runtime_s!r}")
        if self.profile == PROFILE_DELAY and self.min_runtime_s is None:
            raise InputError("delay profiles need --min-runtime S > 0 "
                             "(Batsim refuses delay: 0, so zero runtimes are raised to S)")


@dataclass(frozen=True)
class WriteReport:
    """What the writer did: ``zero_runtimes_raised`` jobs had runtime 0 raised
    to ``min_runtime_s``; ``unlimited_walltime`` jobs kept ``walltime: -1`` in
    ``kill`` mode because their reqtime was <= 0 (Batsim needs a positive
    walltime); ``larger_than_platform`` jobs need more than ``nb_res`` nodes
    (kept: the scheduler rejects them)."""

    jobs: int
    profiles: int
    nb_res: int
    walltime: str
    profile: str
    zero_runtimes_raised: int
    unlimited_walltime: int
    larger_than_platform: int

    def lines(self) -> list[str]:
        """The report as human-readable lines (the CLI prints them)."""
        return [
            f"jobs written: {self.jobs} (nb_res {self.nb_res})",
            f"profiles: {self.profiles} {self.profile}",
            f"walltime: {self.walltime}",
            f"zero runtimes raised to --min-runtime: {self.zero_runtimes_raised}",
            f"kill mode, reqtime <= 0, walltime left -1: {self.unlimited_walltime}",
            f"jobs larger than nb_res (kept): {self.larger_than_platform}",
        ]


def _json_number(value: float) -> int | float:
    """An integral value as a JSON integer (``1924`` not ``1924.0``), else the float."""
    if float(value).is_integer() and abs(value) < 2**53:
        return int(value)
    return float(value)


def _profile_name(kind: str, duration_s: float) -> str:
    prefix = "delay" if kind == PROFILE_DELAY else "ph"
    return f"{prefix}_{_json_number(duration_s)!r}"


def _profile(kind: str, duration_s: float) -> dict[str, Any]:
    if kind == PROFILE_DELAY:
        return {"type": PROFILE_DELAY, "delay": _json_number(duration_s)}
    return {"type": PROFILE_PARALLEL_HOMOGENEOUS,
            "cpu": _json_number(duration_s * FLOPS_PER_SECOND), "com": 0}


def _check(job: TraceJob) -> None:
    for name in ("subtime", "runtime", "reqtime"):
        value = getattr(job, name)
        if not math.isfinite(value) or value < 0:
            raise InputError(f"job {job.id}: {name} must be finite and >= 0, got {value!r}")
    if job.res < 1:
        raise InputError(f"job {job.id}: res must be at least 1, got {job.res!r}")


def batsim_document(jobs: Iterable[TraceJob], nb_res: int,
                    options: BatsimOptions | None = None) -> tuple[dict[str, Any], WriteReport]:
    """Build the Batsim workload document ``{nb_res, jobs, profiles}`` (SPEC section 4).

    Jobs keep their order. Raises :class:`InputError` for a negative or
    non-finite time, a size below 1, a repeated id or a bad ``nb_res``.
    """
    options = options or BatsimOptions()
    if isinstance(nb_res, bool) or not isinstance(nb_res, int) or nb_res < 1:
        raise InputError(f"nb_res must be a positive integer, got {nb_res!r}")
    out_jobs: list[dict[str, Any]] = []
    profiles: dict[str, dict[str, Any]] = {}
    seen: set[int] = set()
    raised = unlimited = larger = 0
    for job in jobs:
        _check(job)
        if job.id in seen:
            raise InputError(f"job id {job.id} appears twice")
        seen.add(job.id)
        runtime = job.runtime
        if runtime == 0 and options.min_runtime_s is not None:
            runtime = options.min_runtime_s
            raised += 1
        walltime: float = -1
        if options.walltime == WALLTIME_KILL:
            if job.reqtime > 0:
                walltime = job.reqtime
            else:
                unlimited += 1
        larger += job.res > nb_res
        name = _profile_name(options.profile, runtime)
        if name not in profiles:
            profiles[name] = _profile(options.profile, runtime)
        out_jobs.append({"id": job.id, "subtime": _json_number(job.subtime), "res": job.res,
                         "profile": name, "walltime": _json_number(walltime),
                         "reqtime": _json_number(job.reqtime)})
    document = {"nb_res": nb_res, "jobs": out_jobs, "profiles": profiles}
    report = WriteReport(jobs=len(out_jobs), profiles=len(profiles), nb_res=nb_res,
                         walltime=options.walltime, profile=options.profile,
                         zero_runtimes_raised=raised, unlimited_walltime=unlimited,
                         larger_than_platform=larger)
    return document, report


def format_workload_json(document: dict[str, Any]) -> str:
    """Compact but readable JSON: one job per line, one profile per line."""
    def dumps(value: Any) -> str:
        return json.dumps(value, allow_nan=False)

    jobs = ",\n".join(f"    {dumps(job)}" for job in document["jobs"])
    profiles = ",\n".join(f"    {dumps(name)}: {dumps(profile)}"
                          for name, profile in document["profiles"].items())
    head = "".join(f"  {dumps(key)}: {dumps(value)},\n" for key, value in document.items()
                   if key not in ("jobs", "profiles"))
    return (f"{{\n{head}  \"jobs\": [\n{jobs}\n  ],\n"
            f"  \"profiles\": {{\n{profiles}\n  }}\n}}\n")


def write_batsim_workload(path: str | Path, jobs: Iterable[TraceJob], nb_res: int,
                          options: BatsimOptions | None = None) -> WriteReport:
    """Write ``jobs`` as a Batsim JSON workload at ``path`` (atomically)."""
    document, report = batsim_document(jobs, nb_res, options)
    atomic_write_text(path, format_workload_json(document))
    return report
