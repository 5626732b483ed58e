"""A pybatsim scheduler that drives a pure policy of :mod:`snficon.core`.

The ``onX`` hooks only record what happened; at the end of each message
(``onNoMoreEvents``) the adapter freezes a :class:`ClusterView`, calls the
policy once and turns its :class:`Decisions` into ``EXECUTE_JOB``,
``SET_RESOURCE_STATE`` and ``CALL_ME_LATER`` events. One decision-log row is
kept per invocation (SPEC section 7).

Options (pybatsim ``-o`` JSON) are the policy's parameters plus ``platform``,
the platform XML the run uses, from which the transition times and powers of
the nodes are read (Batsim does not send pstate speeds to schedulers), and
``decisions``, a CSV file where the decision log is written at the end.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from batsim.batsim import BatsimScheduler, Job
from procset import ProcSet

from snficon.adapter.tracker import ClusterTracker
from snficon.analysis.decision_log import DecisionLog, DecisionRow
from snficon.core.view import ClusterView, Decisions, Trigger
from snficon.errors import InputError
from snficon.intervals import intervals
from snficon.platform.model import PowerModel
from snficon.platform.reader import read_platform

#: When several kinds of events share a message, the trigger logged is the first here.
TRIGGER_PRIORITY = (Trigger.INITIAL, Trigger.ARRIVAL, Trigger.COMPLETION, Trigger.TRANSITION,
                    Trigger.CALLBACK)

Policy = Callable[[ClusterView], Decisions]


def sleep_pstate_of(resource: dict[str, Any]) -> int | None:
    """The sleep pstate named first in a host's ``sleep_pstates`` property (None: no sleep)."""
    spec = resource.get("properties", {}).get("sleep_pstates")
    return int(spec.split(",")[0].split(":")[0]) if spec else None


def procset_of(nodes: Sequence[int]) -> ProcSet:
    """A ProcSet of node ids, built from their intervals in O(k log k) for k intervals.

    ``ProcSet(*intervals)`` merges one interval at a time, O(k^2); halves are merged
    here instead (each union is linear).
    """
    return _union_of(intervals(nodes))


def _union_of(pieces: Sequence[tuple[int, int]]) -> ProcSet:
    if len(pieces) <= 8:
        return ProcSet(*pieces)
    middle = len(pieces) // 2
    return _union_of(pieces[:middle]) | _union_of(pieces[middle:])


def requested_time(job: Job) -> float:
    """The scheduler's requested time: the job's ``reqtime`` field, else its walltime."""
    reqtime = job.json_dict.get("reqtime")
    return float(reqtime) if reqtime is not None else float(job.requested_time)


class PolicyScheduler(BatsimScheduler):
    """Keeps the cluster state from protocol events and applies a policy's decisions."""

    def configure(self, options: dict[str, Any]) -> None:
        """Read the policy's options (all but ``platform`` and ``decisions``); fail early."""
        raise NotImplementedError

    def make_policy(self, power: PowerModel) -> Policy:
        """The policy for this platform (called once the simulation begins)."""
        raise NotImplementedError

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        options = dict(options or {})
        super().__init__(dict(options))
        self.platform_path = options.pop("platform", None)
        self.decisions_path = options.pop("decisions", None)
        self.configure(options)
        self.policy: Policy | None = None
        self.tracker: ClusterTracker | None = None
        self.sleep_pstate: int | None = None
        self.decision_log = DecisionLog()
        self._triggers: set[str] = set()
        self._calls: set[float] = set()

    # ------------------------------------------------------------------ hooks

    def onSimulationBegins(self) -> None:  # noqa: N802 (pybatsim hook)
        if self.platform_path is None:
            raise InputError(f"{type(self).__name__} needs the platform file to know the nodes' "
                             "transition times: pass -o '{\"platform\": \"FILE.xml\"}'")
        power = read_platform(self.platform_path).power_model()
        if len(power.p_idle_w) != self.bs.nb_compute_resources:
            raise InputError(f"{self.platform_path}: {len(power.p_idle_w)} nodes, but the "
                             f"simulator has {self.bs.nb_compute_resources}")
        self.tracker = ClusterTracker(power)
        self.policy = self.make_policy(power)
        self.sleep_pstate = sleep_pstate_of(self.bs.compute_resources[0])
        self._triggers.add(Trigger.INITIAL)

    def onJobSubmission(self, job: Job) -> None:  # noqa: N802
        assert self.tracker is not None
        if job.requested_resources > self.tracker.size:
            self.bs.reject_jobs([job])
            return
        self.tracker.submit(job.id, job.requested_resources, requested_time(job),
                            float(job.submit_time))
        self._triggers.add(Trigger.ARRIVAL)

    def onJobCompletion(self, job: Job) -> None:  # noqa: N802
        assert self.tracker is not None
        self.tracker.complete(job.id, self.bs.time())
        self._triggers.add(Trigger.COMPLETION)

    def onMachinePStateChanged(self, nodes: tuple[int, int], pstate: str) -> None:  # noqa: N802
        assert self.tracker is not None
        asleep = self.sleep_pstate is not None and int(pstate) == self.sleep_pstate
        self.tracker.switched(list(range(nodes[0], nodes[1] + 1)), asleep, self.bs.time())
        self._triggers.add(Trigger.TRANSITION)

    def onRequestedCall(self) -> None:  # noqa: N802
        self._calls.discard(self.bs.time())
        self._triggers.add(Trigger.CALLBACK)

    def onNoMoreEvents(self) -> None:  # noqa: N802
        if self.tracker is None or self.policy is None or not self._triggers:
            return
        now = self.bs.time()
        trigger = next(t for t in TRIGGER_PRIORITY if t in self._triggers)
        self._triggers.clear()
        began = time.perf_counter()
        decisions = self.policy(self.tracker.view(now, trigger))
        wall_us = (time.perf_counter() - began) * 1e6
        self._apply(decisions, now)
        self.decision_log.append(DecisionRow(time=now, trigger=trigger, wall_us=wall_us,
                                             **decisions.log))

    def onSimulationEnds(self) -> None:  # noqa: N802
        if self.decisions_path is not None:
            self.decision_log.to_csv(self.decisions_path)

    # ------------------------------------------------------------------ decisions

    def _apply(self, decisions: Decisions, now: float) -> None:
        tracker = self.tracker
        assert tracker is not None
        if decisions.starts:
            jobs = []
            for start in decisions.starts:
                job = self.bs.jobs[start.job_id]
                job.allocation = procset_of(start.nodes)
                tracker.start(start.job_id, start.nodes, now)
                jobs.append(job)
            self.bs.execute_jobs(jobs)
        if decisions.switch_off and self.sleep_pstate is not None:
            tracker.switching(decisions.switch_off, on=False, now=now)
            self.bs.set_resource_state(procset_of(decisions.switch_off), self.sleep_pstate)
        if decisions.switch_on:
            tracker.switching(decisions.switch_on, on=True, now=now)
            self.bs.set_resource_state(procset_of(decisions.switch_on), 0)
        for when in decisions.call_at:
            if when > now and when not in self._calls:
                self._calls.add(when)
                self.bs.wake_me_up_at(when)
