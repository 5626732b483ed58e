"""A pybatsim scheduler that drives a policy composed of the core's parts.

The ``onX`` hooks only record what happened; at the end of each message
(``onNoMoreEvents``) the adapter freezes a :class:`ClusterView`, calls the
policy once and turns its :class:`Decisions` into ``EXECUTE_JOB``,
``SET_RESOURCE_STATE``, ``CALL_ME_LATER`` and ``KILL_JOB`` events. One
decision-log row is kept per invocation (SPEC section 7).

Which policy: the class attribute ``policy_name`` names a row of
:data:`snficon.policy_table.POLICIES`; :func:`scheduler_class` makes the
class for a row (``schedulers/NAME.py`` are one line each). Options (pybatsim
``-o`` JSON) are the policy's parameters, ``order``/``power``/``layers`` to
change its parts, plus ``platform``, the platform XML the run uses, from which
the transition times and powers of the nodes are read when its hosts do not
carry them as properties (Batsim forwards host properties in
SIMULATION_BEGINS but not pstate speeds; the platforms ``snficon platform
generate`` writes carry them), and ``decisions``, a CSV file where the
decision log is written at the end. The options are checked when the class
is instantiated, before the simulation begins.

pybatsim keeps every job it was told of in ``bs.jobs`` for the whole run; the
adapter removes a job from it once no later event can name it (its
completion, its rejection, or the ``JOB_KILLED`` of a kill it asked for), so
the scheduler's memory follows the jobs in the system, not the trace.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from batsim.batsim import BatsimScheduler, Job
from procset import ProcInt, ProcSet

from snficon.adapter.tracker import ClusterTracker
from snficon.analysis.decision_log import DecisionLog
from snficon.core.clock import is_due, is_future
from snficon.core.names import TRIGGER_PRIORITY, Trigger
from snficon.core.view import ClusterView, Decisions
from snficon.errors import InputError
from snficon.intervals import intervals
from snficon.platform.model import PowerModel
from snficon.platform.reader import read_platform
from snficon.platform.resources import POWER_PROPERTIES, power_model_from_resources
from snficon.policy_table import policy_entry

#: Options of the adapter itself, not of the policy.
ADAPTER_OPTIONS = ("platform", "decisions")

Policy = Callable[[ClusterView], Decisions]


def sleep_pstate_of(resource: dict[str, Any]) -> int | None:
    """The sleep pstate named first in a host's ``sleep_pstates`` property (None: no sleep)."""
    spec = resource.get("properties", {}).get("sleep_pstates")
    return int(spec.split(",")[0].split(":")[0]) if spec else None


def procset_of(nodes: Sequence[int]) -> ProcSet:
    """A ProcSet of node ids, built from their maximal runs in O(k) for k runs.

    ``ProcSet(*intervals)`` merges one interval at a time (O(k^2), and costly even
    for a few intervals); the runs of :func:`~snficon.intervals.intervals` are
    already disjoint, ascending and not adjacent, the canonical interval list a
    ProcSet keeps (procset's ``_itvs``, the layout of the pinned procset 1.0), so
    it is set directly.
    """
    result = ProcSet()
    result._itvs = [ProcInt(first, last) for first, last in intervals(nodes)]
    return result


def requested_time(job: Job) -> float:
    """The scheduler's requested time: the job's ``reqtime`` field, else its walltime."""
    reqtime = job.json_dict.get("reqtime")
    return float(reqtime) if reqtime is not None else float(job.requested_time)


class PolicyScheduler(BatsimScheduler):
    """Keeps the cluster state from protocol events and applies a policy's decisions."""

    #: The named policy (a key of :data:`snficon.policy_table.POLICIES`).
    policy_name = "snficon"

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        options = dict(options or {})
        super().__init__(dict(options))
        self.platform_path = options.pop("platform", None)
        self.decisions_path = options.pop("decisions", None)
        self.composition = policy_entry(self.policy_name).composition(options)
        self.policy: Policy | None = None
        self.tracker: ClusterTracker | None = None
        self.sleep_pstate: int | None = None
        self.decision_log = DecisionLog(self.decisions_path, keep=False)
        self._triggers: set[str] = set()
        self._calls: set[float] = set()
        #: Jobs this scheduler asked to kill: pybatsim needs them until their JOB_KILLED.
        self._killing: set[str] = set()

    # ------------------------------------------------------------------ hooks

    def onSimulationBegins(self) -> None:  # noqa: N802 (pybatsim hook)
        power = self.power_model()
        self.tracker = ClusterTracker(power)
        self.sleep_pstate = sleep_pstate_of(self.bs.compute_resources[0])
        self.policy = self.make_policy(power)
        self._triggers.add(Trigger.INITIAL)

    def make_policy(self, power: PowerModel) -> Policy:
        """The decision function of the composition on these nodes (Algorithm 1 for
        SNF-ICON); a scheduler answered from outside (the RL environment) overrides it."""
        return self.composition.build(power.p_sleep_w)

    def power_model(self) -> PowerModel:
        """The nodes' transition times and powers (paper, section III): from the
        ``platform`` option when given, else from the host properties Batsim sent in
        SIMULATION_BEGINS; InputError with the option to add when neither has them."""
        if self.platform_path is not None:
            power = read_platform(self.platform_path).power_model()
            where = str(self.platform_path)
        else:
            power = power_model_from_resources(list(self.bs.compute_resources.values()))
            where = "SIMULATION_BEGINS"
            if power is None:
                raise InputError(
                    f"{type(self).__name__} needs the nodes' transition times and powers: the "
                    f"platform's hosts carry none of the properties {', '.join(POWER_PROPERTIES)}"
                    " (platforms written by 'snficon platform generate' do); pass -o "
                    "'{\"platform\": \"FILE.xml\"}'")
        if len(power.p_idle_w) != self.bs.nb_compute_resources:
            raise InputError(f"{where}: {len(power.p_idle_w)} nodes, but the "
                             f"simulator has {self.bs.nb_compute_resources}")
        return power

    def onJobSubmission(self, job: Job) -> None:  # noqa: N802
        assert self.tracker is not None
        if job.requested_resources > self.tracker.size:
            self.bs.reject_jobs([job])
            self.forget(job.id)
            return
        self.tracker.submit(job.id, job.requested_resources, requested_time(job),
                            float(job.submit_time), job.json_dict)
        self._triggers.add(Trigger.ARRIVAL)

    def onJobCompletion(self, job: Job) -> None:  # noqa: N802
        assert self.tracker is not None
        self.tracker.complete(job.id, self.bs.time())
        self._triggers.add(Trigger.COMPLETION)
        if job.id not in self._killing:
            self.forget(job.id)

    def onJobsKilled(self, jobs: list[Job]) -> None:  # noqa: N802
        """A KILL_JOB was carried out: its JOB_COMPLETED (COMPLETED_KILLED) came first and
        freed the nodes; nothing more to record, and pybatsim needs the jobs no more.

        pybatsim reports only the jobs the kill found running; one that completed
        before its kill stays in ``bs.jobs`` (a job, not one per job of the trace).
        """
        for job in jobs:
            if job.id in self._killing:
                self._killing.discard(job.id)
                self.forget(job.id)

    def forget(self, job_id: str) -> None:
        """Remove a job no later event names from pybatsim's table of every job."""
        self.bs.jobs.pop(job_id, None)

    def onMachinePStateChanged(self, nodes: tuple[int, int], pstate: str) -> None:  # noqa: N802
        assert self.tracker is not None
        asleep = self.sleep_pstate is not None and int(pstate) == self.sleep_pstate
        self.tracker.switched(list(range(nodes[0], nodes[1] + 1)), asleep, self.bs.time())
        self._triggers.add(Trigger.TRANSITION)

    def onRequestedCall(self) -> None:  # noqa: N802
        self._triggers.add(Trigger.CALLBACK)

    def onNoMoreEvents(self) -> None:  # noqa: N802
        if self.tracker is None or self.policy is None or not self._triggers:
            return
        now = self.bs.time()
        # Calls at or before now were delivered (a few ulps early, it may be): forget them.
        self._calls = {when for when in self._calls if not is_due(when, now)}
        trigger = next(t for t in TRIGGER_PRIORITY if t in self._triggers)
        self._triggers.clear()
        if not self.decision_log.wanted:  # no log asked for: no row, no timing
            self._apply(self.policy(self.tracker.view(now, trigger)), now)
            return
        began = time.perf_counter()
        decisions = self.policy(self.tracker.view(now, trigger))
        wall_us = (time.perf_counter() - began) * 1e6
        self._apply(decisions, now)
        diagnostics = decisions.diagnostics
        columns = diagnostics.columns() if diagnostics is not None else {
            "starts": len(decisions.starts), "wakes": len(decisions.switch_on),
            "shutdowns": len(decisions.switch_off), "kills": len(decisions.kills)}
        self.decision_log.record(now, trigger, wall_us, columns)

    def onSimulationEnds(self) -> None:  # noqa: N802
        self.decision_log.close()

    # ------------------------------------------------------------------ decisions

    def events_of(self, decisions: Decisions, now: float) -> list[dict[str, Any]]:
        """Apply ``decisions`` taken at ``now`` to the tracker and return their protocol
        events instead of queueing them for pybatsim's next answer: for a driver that
        decides after the hook returned and sends them itself (the RL environment)."""
        pending, self.bs._events_to_send = self.bs._events_to_send, []
        try:
            self._apply(decisions, now)
            return self.bs._events_to_send
        finally:
            self.bs._events_to_send = pending

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
        if decisions.kills:
            jobs = [self.bs.jobs[job_id] for job_id in decisions.kills]
            self._killing.update(decisions.kills)
            self.bs.kill_jobs(jobs)
        for when in decisions.call_at:
            if is_future(when, now) and when not in self._calls:
                self._calls.add(when)
                self.bs.wake_me_up_at(when)


def scheduler_class(policy: str) -> type[PolicyScheduler]:
    """The pybatsim scheduler class of a named policy (checked against the table)."""
    policy_entry(policy)
    name = "".join(part[:1].upper() + part[1:] for part in policy.replace("-", " ").split())
    return type(name, (PolicyScheduler,), {"policy_name": policy, "__module__": __name__,
                                           "__doc__": f"The ``{policy}`` policy as a pybatsim "
                                                      "scheduler."})
