r"""Flexibility of a workload's jobs, assigned where a trace lacks it (COAST's job model).

COAST models each job with a deadline and a maximum delay; traces (SWF,
SPARS) have neither, so the paper synthesises them. This generator adds
three extra fields to a Batsim workload's jobs (Batsim passes them on in
``JOB_SUBMITTED``; :meth:`snficon.carbon.coast.FlexJob.from_fields` reads them):

- ``flexible`` (bool): whether the advisor may shift the job;
- ``max_delay`` (s): the longest wait after submission the advisor may ask
  for, D_j (0 for inflexible jobs);
- ``deadline`` (s, simulated time): the latest end,
  :math:`d_j = s_j + D_j + f\,p_j` with :math:`s_j` the submission time,
  :math:`p_j` the requested time (``reqtime``, else a positive
  ``walltime``) and f the ``deadline_factor`` (1 by default: the deadline
  lets the job start at its maximum delay and run its request; below 1 it
  binds first). Flexible jobs without a requested time get no deadline.

Which jobs are flexible: among the jobs that do not already carry a
``flexible`` field (those keep theirs), exactly round(share x count) are
drawn without replacement by ``numpy.random.default_rng(seed).choice``, in
file order; then, when ``min_delay_s`` is given, their delays are drawn
uniformly in [min_delay_s, max_delay_s] by the same generator (else all get
``max_delay_s``).
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from snficon.carbon.coast import DEADLINE, FLEXIBLE, MAX_DELAY, FlexJob
from snficon.errors import InputError
from snficon.workload.model import Workload
from snficon.workload.reader import parse_workload

_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """Seconds of ``90``, ``90s``, ``30m``, ``24h`` or ``2d``; InputError otherwise."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-z]*)\s*", str(text))
    if not match or match.group(2) not in _UNITS:
        raise InputError(f"not a duration: {text!r} (expected e.g. 3600, 30m, 24h, 2d)")
    return float(match.group(1)) * _UNITS[match.group(2)]


@dataclass(frozen=True)
class FlexParams:
    """Parameters of :func:`assign_flexibility` (see the module's rules)."""

    share: float = 0.5
    max_delay_s: float = 86400.0
    min_delay_s: float | None = None
    deadline_factor: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.share <= 1:
            raise InputError(f"share of flexible jobs must be in [0, 1], got {self.share!r}")
        if not (math.isfinite(self.max_delay_s) and self.max_delay_s >= 0):
            raise InputError(f"max delay must be >= 0 s, got {self.max_delay_s!r}")
        if self.min_delay_s is not None and not 0 <= self.min_delay_s <= self.max_delay_s:
            raise InputError(f"min delay must be in [0, max delay], got {self.min_delay_s!r}")
        if not (math.isfinite(self.deadline_factor) and self.deadline_factor > 0):
            raise InputError(f"deadline factor must be positive, got {self.deadline_factor!r}")


@dataclass(frozen=True)
class FlexReport:
    """What :func:`assign_flexibility` did."""

    jobs: int
    kept: int  # jobs that already had a ``flexible`` field
    flexible: int  # flexible jobs drawn now
    without_deadline: int  # flexible jobs drawn now that have no requested time
    mean_max_delay_s: float  # over the flexible jobs drawn now (nan without any)

    def lines(self) -> list[str]:
        delay = ("" if math.isnan(self.mean_max_delay_s)
                 else f", mean max delay {self.mean_max_delay_s / 3600:.3g} h")
        return [f"jobs: {self.jobs} ({self.kept} kept their own flexibility fields)",
                f"flexible: {self.flexible} of {self.jobs - self.kept} drawn{delay}; "
                f"{self.without_deadline} without a requested time, so without deadline"]


def _requested(job: dict[str, Any]) -> float | None:
    for key in ("reqtime", "walltime"):
        value = job.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return float(value)
    return None


def assign_flexibility(document: dict[str, Any], params: FlexParams,
                       source: str = "workload") -> tuple[dict[str, Any], FlexReport]:
    """A copy of the workload ``document`` with the flexibility fields; the input is checked."""
    parse_workload(document, source)
    result = copy.deepcopy(document)
    jobs = result["jobs"]
    open_jobs = [job for job in jobs if FLEXIBLE not in job]
    rng = np.random.default_rng(params.seed)
    count = int(round(params.share * len(open_jobs)))
    chosen = set(rng.choice(len(open_jobs), size=count, replace=False).tolist())
    if params.min_delay_s is None:
        delays = np.full(count, params.max_delay_s)
    else:
        delays = rng.uniform(params.min_delay_s, params.max_delay_s, count)
    drawn = iter(delays)
    without = 0
    for i, job in enumerate(open_jobs):
        if i not in chosen:
            job.update({FLEXIBLE: False, MAX_DELAY: 0.0})
            continue
        delay = float(next(drawn))
        job.update({FLEXIBLE: True, MAX_DELAY: delay})
        requested = _requested(job)
        if requested is None:
            without += 1
        else:
            job[DEADLINE] = float(job["subtime"]) + delay + params.deadline_factor * requested
    report = FlexReport(jobs=len(jobs), kept=len(jobs) - len(open_jobs), flexible=count,
                        without_deadline=without,
                        mean_max_delay_s=float(delays.mean()) if count else math.nan)
    return result, report


def flex_jobs(workload: Workload, busy_w: float) -> list[FlexJob]:
    """The workload's jobs as COAST's advisor models them (file fields, energy from ``busy_w``).

    Arrival = ``subtime``, demand = ``res``, runtime = the requested time
    (``reqtime``, else ``walltime``; 0 when neither is positive), energy =
    ``res`` x ``busy_w`` x requested time; flexibility from the job's fields
    (:meth:`~snficon.carbon.coast.FlexJob.from_fields`), e.g. for
    :func:`snficon.carbon.evaluate.freeze_normalisers` on a training window.
    """
    return [FlexJob.from_fields(job.id, job.subtime, job.res, max(job.requested_time, 0.0),
                                job.raw, busy_w) for job in workload.jobs]
