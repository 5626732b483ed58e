"""Jobs and profiles of a Batsim JSON workload (SPEC section 4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PROFILE_DELAY = "delay"
PROFILE_PARALLEL_HOMOGENEOUS = "parallel_homogeneous"
SUPPORTED_PROFILE_TYPES = (PROFILE_DELAY, PROFILE_PARALLEL_HOMOGENEOUS)


@dataclass(frozen=True)
class Profile:
    """A job profile: ``delay`` (seconds, idle power) or ``parallel_homogeneous``
    (``cpu`` flops on every node, busy power; ``com`` must be 0)."""

    name: str
    type: str
    delay_s: float = 0.0
    cpu_flops: float = 0.0
    raw: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class JobSpec:
    """One job as the workload file gives it.

    ``id`` is the file's id as a string (Batsim prefixes it with the workload
    name: ``w0!12``). ``walltime`` is -1 when the job may run past its request
    (the paper's semantics); ``reqtime`` is the user's requested runtime when
    the file carries it. ``raw`` is the job's JSON object, sent back verbatim
    in ``JOB_SUBMITTED``.
    """

    id: str
    subtime: float
    res: int
    profile: str
    walltime: float
    reqtime: float | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def requested_time(self) -> float:
        """The scheduler's requested time: ``reqtime`` when present, else ``walltime``."""
        return self.reqtime if self.reqtime is not None else self.walltime


@dataclass(frozen=True)
class Workload:
    """A loaded workload: jobs sorted by submission time (stable), profiles by name."""

    source: str
    nb_res: int | None
    jobs: tuple[JobSpec, ...]
    profiles: dict[str, Profile]
