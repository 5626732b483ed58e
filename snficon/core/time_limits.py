"""Checkpoint-aware time limits as a policy layer (the time-limits paper's autonomy loop).

Batsim 4 cannot change a running job's walltime, so jobs of this layer's
workloads carry ``walltime: -1`` and their limit as a job field
(``tl_limit_field``, default ``reqtime``, the requested time the scheduler
plans with); the layer enforces the limit itself: it asks to be called at
start + limit and kills the job then (``KILL_JOB``; Batsim reports
COMPLETED_KILLED, the metrics count a TIMEOUT). A job without a positive
limit is never killed. Checkpointing jobs carry ``tl_interval_field`` (and
optionally ``tl_offset_field``); the daemon sees their checkpoints as
:mod:`snficon.core.checkpoints` describes (polls every ``tl_poll_s``,
predicts the next from the reports) and acts once per job, at the first
poll at which the next checkpoint is predicted past the limit:

* ``baseline``: no daemon; limits are enforced as given.
* ``early-cancel`` (Early Cancellation): kill the job at that poll, right
  after its last checkpoint that fits in its limit.
* ``extend`` (Time Limit Extension): move its limit to the predicted next
  checkpoint + ``tl_margin_s``; once the daemon sees that checkpoint (at the
  next poll after it) it cancels the job, its work saved. If the checkpoint
  comes later than the new limit, the new limit kills the job.
* ``hybrid``: extend when no protected queued job's planned start moves
  later, cancel otherwise (:meth:`TimeLimitLayer.extension_delays_nobody`).

Non-checkpointing jobs are never adjusted. The order and the power manager
see an extended job's nodes released at its new limit (``admit`` rewrites the
view's requested end of the job's nodes), so EASY's reservation, the PSAS
plan, IPM's keep rule and ICON's predictions all plan with it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from snficon.core.checkpoints import CheckpointSchedule, DaemonAction, daemon_action, next_poll
from snficon.core.clock import is_due, is_future
from snficon.core.names import CheckpointField
from snficon.core.params import option
from snficon.core.parts import Dispatched, DispatchOrder, PowerOutcome
from snficon.core.view import ClusterView, Decisions, QueuedJob
from snficon.errors import InputError

BASELINE, EARLY_CANCEL, EXTEND, HYBRID = "baseline", "early-cancel", "extend", "hybrid"
TL_POLICIES = (BASELINE, EARLY_CANCEL, EXTEND, HYBRID)
#: Which queued jobs a hybrid extension may not delay: every job the order's plan
#: places, or only the first (EASY's reserved head; SNF's first job).
PROTECT_ALL, PROTECT_HEAD = "all", "head"


@dataclass(frozen=True)
class TimeLimitParams:
    """Options of the time-limit layer (``--set NAME=VALUE``; all start with ``tl_``).

    ``tl_policy``: baseline, early-cancel, extend or hybrid. ``tl_poll_s``:
    the daemon's poll interval (s; the paper's 20 s; 0: it sees every
    checkpoint at once). ``tl_margin_s``: an extension's limit is the
    predicted next checkpoint plus this (s). ``tl_protect``: the queued jobs a
    hybrid extension may not delay (``all`` planned jobs or the ``head``).
    ``tl_limit_field``, ``tl_interval_field``, ``tl_offset_field``: the job
    fields holding the limit, the checkpoint interval and offset (s).
    """

    tl_policy: str = option(BASELINE, choices=TL_POLICIES)
    tl_poll_s: float = option(20.0, low=0.0)
    tl_margin_s: float = option(20.0, low=0.0)
    tl_protect: str = option(PROTECT_ALL, choices=(PROTECT_ALL, PROTECT_HEAD))
    tl_limit_field: str = option(CheckpointField.LIMIT)
    tl_interval_field: str = option(CheckpointField.INTERVAL)
    tl_offset_field: str = option(CheckpointField.OFFSET)


def _seconds(job_id: str, extra: Mapping[str, Any], name: str) -> float | None:
    """Job field ``name`` as a finite number of seconds (None when absent or null)."""
    value = extra.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"job {job_id}: field {name!r} must be a finite number of seconds, "
                         f"got {value!r}")
    return float(value)


@dataclass
class LimitedJob:
    """A job whose limit the layer enforces: its original limit, checkpoints and state.

    ``end_s`` is the current limit's end (start + limit, later once extended);
    ``daemon`` the poll at which the daemon decides (None: it never does);
    ``action_s`` the next poll at which the daemon acts and ``action`` what it
    does then (``decide``, or ``cancel`` once an extension's checkpoint is seen).
    """

    job_id: str
    limit_s: float
    schedule: CheckpointSchedule | None
    start_s: float | None = None
    nodes: tuple[int, ...] = ()
    end_s: float = math.inf
    daemon: DaemonAction | None = None
    action_s: float | None = None
    action: str = ""
    extended: bool = False
    killed: bool = False


def limited_job(job: QueuedJob, params: TimeLimitParams) -> LimitedJob | None:
    """The layer's record of an arriving job (None: no positive limit, never killed).

    Raises InputError naming the job for a limit, interval or offset that is
    not a number, an interval <= 0 or an offset < 0.
    """
    limit = _seconds(job.job_id, job.extra, params.tl_limit_field)
    if limit is None or limit <= 0:
        return None
    interval = _seconds(job.job_id, job.extra, params.tl_interval_field)
    schedule = None
    if interval is not None:
        offset = _seconds(job.job_id, job.extra, params.tl_offset_field) or 0.0
        if interval <= 0 or offset < 0:
            raise InputError(f"job {job.job_id}: checkpoint interval must be > 0 and offset "
                             f">= 0, got {interval!r} and {offset!r}")
        schedule = CheckpointSchedule(interval_s=interval, offset_s=offset)
    return LimitedJob(job_id=job.job_id, limit_s=limit, schedule=schedule)


class TimeLimitLayer:
    """The time-limit layer as a policy part (:class:`~snficon.core.parts.Layer`).

    It keeps one :class:`LimitedJob` per known job with a limit, from its
    arrival (``view.arrivals``) to its completion or kill (``view.completions``).
    """

    def __init__(self, params: TimeLimitParams) -> None:
        self.params = params
        self.jobs: dict[str, LimitedJob] = {}
        self.extensions = 0
        self.cancels = 0

    # ------------------------------------------------------------------ before the order

    def admit(self, view: ClusterView) -> ClusterView:
        """Record arrivals, starts and ends; show extended jobs with their new limit."""
        for job in view.arrivals:
            record = limited_job(job, self.params)
            if record is not None:
                self.jobs[job.job_id] = record
        for done in view.completions:
            self.jobs.pop(done.job_id, None)
        for run in view.running:
            record = self.jobs.get(run.job_id)
            if record is not None and record.start_s is None:
                self._started(record, run.start_s, run.nodes)
        extended = [run for run in view.running
                    if run.job_id in self.jobs and self.jobs[run.job_id].extended]
        if not extended:
            return view
        release = view.nodes.release_req_s.copy()
        moved = {}
        for run in extended:
            end = self.jobs[run.job_id].end_s
            release[list(run.nodes)] = end
            moved[run.job_id] = dataclasses.replace(run, req_time_s=end - run.start_s)
        running = tuple(moved.get(run.job_id, run) for run in view.running)
        nodes = dataclasses.replace(view.nodes, release_req_s=release)
        return dataclasses.replace(view, nodes=nodes, running=running)

    # ------------------------------------------------------------------ after the power manager

    def amend(self, view: ClusterView, dispatched: Dispatched, outcome: PowerOutcome,
              order: DispatchOrder) -> None:
        """The daemon's decisions due now, the kills of limits reached, the next callback."""
        decisions, now = outcome.decisions, view.now
        for start in decisions.starts:
            record = self.jobs.get(start.job_id)
            if record is not None and record.start_s is None:
                self._started(record, now, start.nodes)
        release: np.ndarray | None = None  # the plan's release map, with this call's changes
        for record in self._running():
            if record.action_s is None or not is_due(record.action_s, now):
                continue
            if record.action == "cancel" or self.params.tl_policy == EARLY_CANCEL:
                self._kill(record, decisions, cancel=True)
            elif self.params.tl_policy == EXTEND:
                self._extend(record)
            else:  # hybrid
                if release is None and outcome.release is not None:
                    release = outcome.release.copy()
                if self.extension_delays_nobody(record, release, now, dispatched, outcome,
                                                order):
                    self._extend(record)
                    if release is not None:
                        release[list(record.nodes)] = record.end_s
                else:
                    self._kill(record, decisions, cancel=True)
                    if release is not None:
                        release[list(record.nodes)] = now
        for record in self._running():
            if is_due(record.end_s, now):
                self._kill(record, decisions, cancel=False)
        self._call_back(decisions, now)

    def extension_delays_nobody(self, record: LimitedJob, release: np.ndarray | None,
                                now: float,
                                dispatched: Dispatched, outcome: PowerOutcome,
                                order: DispatchOrder) -> bool:
        """The hybrid rule: may ``record``'s limit be extended without delaying a queued job?

        The dispatch order plans the jobs still waiting (``dispatched.waiting``,
        with the power manager's planned durations) twice on the power
        manager's release map: with the job's nodes released at its current
        limit, and at the extended one. The protected jobs are those the first
        plan places (``tl_protect = all``: every one, the whole PSAS plan of
        SNF or every job of EASY's plan; ``head``: only the first, EASY's
        reserved head). The extension is allowed when none of them is planned
        later in the second plan (or left out of it).
        """
        waiting = dispatched.waiting
        if not waiting:
            return True
        if release is None:
            raise ValueError("a power manager planned the waiting jobs on no release map")
        ids = list(record.nodes)
        current, extended = release.copy(), release.copy()
        current[ids] = record.end_s
        extended[ids] = self._extended_end(record)
        before = order.plan(dispatched.groups, current, waiting, outcome.durations, now)
        after = {planned.job.job_id: planned.start
                 for planned in order.plan(dispatched.groups, extended, waiting,
                                           outcome.durations, now)}
        protected = before[:1] if self.params.tl_protect == PROTECT_HEAD else before
        return all(planned.job.job_id in after and is_due(after[planned.job.job_id],
                                                          planned.start)
                   for planned in protected)

    # ------------------------------------------------------------------ helpers

    def _running(self) -> list[LimitedJob]:
        return [record for record in self.jobs.values()
                if record.start_s is not None and not record.killed]

    def _started(self, record: LimitedJob, start_s: float, nodes: tuple[int, ...]) -> None:
        record.start_s, record.nodes = start_s, tuple(nodes)
        record.end_s = start_s + record.limit_s
        if record.schedule is not None and self.params.tl_policy != BASELINE:
            record.daemon = daemon_action(start_s, record.end_s, record.schedule,
                                          self.params.tl_poll_s)
            if record.daemon is not None:
                record.action_s, record.action = record.daemon.time_s, "decide"

    def _extended_end(self, record: LimitedJob) -> float:
        """The limit end an extension gives: the predicted next checkpoint + the margin."""
        assert record.daemon is not None
        return record.daemon.predicted_s + self.params.tl_margin_s

    def _extend(self, record: LimitedJob) -> None:
        """Extend to the next checkpoint; the daemon cancels the job once it sees it."""
        assert record.start_s is not None and record.schedule is not None
        assert record.daemon is not None
        record.end_s = self._extended_end(record)
        record.extended = True
        self.extensions += 1
        saved = record.schedule.time_of(record.start_s, record.daemon.seen + 1)
        poll = next_poll(saved, self.params.tl_poll_s)
        record.action_s, record.action = (poll, "cancel") if is_due(poll, record.end_s) else (
            None, "")

    def _kill(self, record: LimitedJob, decisions: Decisions, cancel: bool) -> None:
        record.killed = True
        record.action_s = None
        decisions.kills.append(record.job_id)
        if cancel and not record.extended:
            self.cancels += 1
        if decisions.diagnostics is not None:
            decisions.diagnostics = dataclasses.replace(decisions.diagnostics,
                                                        kills=len(decisions.kills))

    def _call_back(self, decisions: Decisions, now: float) -> None:
        """Ask to be called at the earliest future daemon action or limit of a running job."""
        times = [t for record in self._running()
                 for t in (record.action_s, record.end_s)
                 if t is not None and is_future(t, now)]
        if times:
            decisions.call_at.append(min(times))


def build_time_limits(params: TimeLimitParams, p_sleep_w: np.ndarray) -> TimeLimitLayer:
    """The layer for one run (the parts table's builder; the platform is not needed)."""
    return TimeLimitLayer(params)

