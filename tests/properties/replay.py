"""Rebuild what happened to every node and job from a protocol transcript alone.

:class:`Replay` walks the messages in order, keeps the scheduler-visible
state of each node (idle, computing, switching_off, sleeping, switching_on)
and checks each decision against it: a job starts only on idle nodes, a node
is switched only when idle (to sleep) or asleep (to pstate 0), a
``RESOURCE_STATE_CHANGED`` answers an outstanding request at its request time
plus the longest transition, a ``REQUESTED_CALL`` answers a ``CALL_ME_LATER``.

It also builds each node's physical timeline from the case's node models
(never from the engine): idle wattage when idle or running a ``delay`` job,
busy wattage running a ``parallel_homogeneous`` job, the switch-off/on
wattage for 1/speed of the virtual pstate (``off_s``/``on_s``) on each node,
the sleep wattage asleep. :meth:`Replay.energy_until` integrates it.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from procset import ProcSet

from snficon.platform.generate import NodeModel

from .cases import Case

IDLE, COMPUTING, SLEEPING = "idle", "computing", "sleeping"
SWITCHING_OFF, SWITCHING_ON = "switching_off", "switching_on"
#: Column order of ``out_machine_states.csv``.
STATE_COLUMNS = (SLEEPING, SWITCHING_ON, SWITCHING_OFF, IDLE, COMPUTING)
SLEEP_PSTATE = 1  # the generator's ``sleep_pstates="1:2:3"``
TIME_TOL = 1e-9
#: Times in messages are Batsim's six-decimal prints of the clock.
MESSAGE_TIME_TOL = 5.1e-7


class ReplayError(AssertionError):
    """The transcript shows a decision or an event that breaks a property."""


def require(condition: bool, message: str) -> None:
    """Raise :class:`ReplayError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise ReplayError(message)


def same_time(a: float, b: float) -> bool:
    """Two times equal up to the rounding of two six-decimal message prints (one may be a
    sum of a printed time and an exact duration, the other a printed time)."""
    return math.isclose(a, b, rel_tol=TIME_TOL, abs_tol=2 * MESSAGE_TIME_TOL)


def transition_seconds(seconds: float) -> float:
    """Duration of a generated transition: one flop at the written speed 1/seconds."""
    return 1.0 / (1.0 / seconds)


@dataclass
class JobTrace:
    """One job as the transcript shows it."""

    job: dict[str, Any]
    submitted: float | None = None
    started: float | None = None
    ended: float | None = None
    nodes: list[int] = field(default_factory=list)
    alloc: str = ""
    final_state: str | None = None
    rejected: bool = False
    completions: int = 0


@dataclass
class SwitchTrace:
    """One ``SET_RESOURCE_STATE`` request and its expected acknowledgement time."""

    nodes: list[int]
    target: int
    asked: float
    done_at: float


@dataclass
class NodeTimeline:
    """Piecewise-constant (time, watts, state) of one node; each entry holds until the next."""

    times: list[float] = field(default_factory=lambda: [0.0])
    watts: list[float] = field(default_factory=list)
    states: list[str] = field(default_factory=lambda: [IDLE])

    def change(self, when: float, watts: float, state: str) -> None:
        require(when >= self.times[-1] - 2 * MESSAGE_TIME_TOL,
                f"node timeline goes back in time ({when} < {self.times[-1]})")
        self.times.append(max(when, self.times[-1]))  # six-decimal message times
        self.watts.append(watts)
        self.states.append(state)

    def energy_until(self, end: float) -> float:
        total = 0.0
        for index, start in enumerate(self.times):
            stop = self.times[index + 1] if index + 1 < len(self.times) else math.inf
            if start >= end:
                break
            total += self.watts[index] * (min(stop, end) - start)
        return total

    def state_at(self, when: float) -> str:
        """The state after every change at or before ``when``."""
        return self.states[bisect.bisect_right(self.times, when) - 1]


class Replay:
    """Replay a transcript of ``case``; raise :class:`ReplayError` on the first violation."""

    def __init__(self, case: Case, entries: list[tuple[str, dict[str, Any]]]) -> None:
        self.case = case
        self.models: list[NodeModel] = case.node_models()
        self.visible = [IDLE] * case.nb_nodes
        self.nodes = [NodeTimeline(watts=[m.idle_w]) for m in self.models]
        self.jobs = {f"w0!{job['id']}": JobTrace(job) for job in case.jobs}
        self.switches: dict[tuple[str, str], SwitchTrace] = {}
        #: (asked, done) of every request whose machines switch for different durations.
        self.uneven_switches: list[tuple[float, float]] = []
        self.calls: Counter[float] = Counter()
        self.now = 0.0
        self.end_time: float | None = None
        self.change_times: list[float] = [0.0]
        for index, (direction, message) in enumerate(entries):
            self._message(index, direction, message, last=index == len(entries) - 1)

    # ------------------------------------------------------------------ walking

    def _message(self, index: int, direction: str, message: dict[str, Any], last: bool) -> None:
        now = float(message["now"])
        require(now >= self.now, f"message {index}: time goes back ({now} < {self.now})")
        require(self.end_time is None or last and direction == "sched->sim",
                f"message {index}: sent after SIMULATION_ENDS")
        self.now = now
        for event in message["events"]:
            require(same_time(float(event["timestamp"]), now),
                    f"message {index}: event at {event['timestamp']} in a message at {now}")
            where = f"message {index} (t={now}) {event['type']} {event.get('data')}"
            handler = getattr(self, f"_on_{event['type'].lower()}", None)
            require(handler is not None, f"{where}: unexpected event type")
            handler(where, event.get("data", {}))

    def _job(self, where: str, job_id: str) -> JobTrace:
        require(job_id in self.jobs, f"{where}: unknown job {job_id}")
        return self.jobs[job_id]

    def _set(self, nodes: list[int], when: float, state: str, watts: list[float]) -> None:
        for node, watt in zip(nodes, watts, strict=True):
            self.nodes[node].change(when, watt, state)
        self.change_times.append(when)

    # ------------------------------------------------------------------ simulator events

    def _on_simulation_begins(self, where: str, data: dict[str, Any]) -> None:
        require(data["nb_compute_resources"] == self.case.nb_nodes,
                f"{where}: wrong number of resources")

    def _on_job_submitted(self, where: str, data: dict[str, Any]) -> None:
        trace = self._job(where, data["job_id"])
        require(trace.submitted is None, f"{where}: job submitted twice")
        require(same_time(self.now, float(trace.job["subtime"])),
                f"{where}: submitted at {self.now}, not at its subtime {trace.job['subtime']}")
        trace.submitted = self.now

    def _on_job_completed(self, where: str, data: dict[str, Any]) -> None:
        trace = self._job(where, data["job_id"])
        require(trace.started is not None and trace.ended is None,
                f"{where}: completion of a job that is not running")
        require(data["alloc"] == trace.alloc, f"{where}: alloc differs from {trace.alloc}")
        trace.ended, trace.final_state = self.now, data["job_state"]
        trace.completions += 1
        for node in trace.nodes:
            self.visible[node] = IDLE
        self._set(trace.nodes, self.now, IDLE, [self.models[n].idle_w for n in trace.nodes])

    def _on_resource_state_changed(self, where: str, data: dict[str, Any]) -> None:
        key = (data["resources"], data["state"])
        require(key in self.switches, f"{where}: no such request is outstanding")
        switch = self.switches.pop(key)
        require(same_time(self.now, switch.done_at),
                f"{where}: acknowledged at {self.now}, expected {switch.done_at} "
                f"(asked at {switch.asked})")
        for node in switch.nodes:
            self.visible[node] = SLEEPING if switch.target == SLEEP_PSTATE else IDLE

    def _on_requested_call(self, where: str, _data: dict[str, Any]) -> None:
        # Messages carry Batsim's six-decimal times: the call is the one that prints as now.
        due = [when for when, count in self.calls.items() if count > 0
               and f"{when:f}" == f"{self.now:f}"]
        require(bool(due), f"{where}: no CALL_ME_LATER at that time")
        self.calls[min(due)] -= 1

    def _on_notify(self, where: str, data: dict[str, Any]) -> None:
        require(data.get("type") == "no_more_static_job_to_submit", f"{where}: unknown NOTIFY")

    def _on_simulation_ends(self, where: str, _data: dict[str, Any]) -> None:
        require(not self.switches, f"{where}: switches still outstanding")
        require(not +self.calls, f"{where}: calls still outstanding: {+self.calls}")
        waiting = [i for i, t in self.jobs.items() if t.ended is None and not t.rejected]
        require(not waiting, f"{where}: jobs never finished: {waiting[:5]}")
        self.end_time = self.now

    # ------------------------------------------------------------------ scheduler decisions

    def _on_execute_job(self, where: str, data: dict[str, Any]) -> None:
        trace = self._job(where, data["job_id"])
        require(trace.submitted is not None, f"{where}: job started before its submission")
        require(trace.started is None and not trace.rejected, f"{where}: job started twice")
        nodes = list(ProcSet.from_str(data["alloc"]))
        busy = [n for n in nodes if self.visible[n] != IDLE]
        require(not busy, f"{where}: node(s) {busy} not idle: "
                          f"{[self.visible[n] for n in busy]}")
        trace.started, trace.nodes, trace.alloc = self.now, nodes, data["alloc"]
        for node in nodes:
            self.visible[node] = COMPUTING
        busy_power = self.case.busy(trace.job)
        self._set(nodes, self.now, COMPUTING,
                  [self.models[n].busy_w if busy_power else self.models[n].idle_w
                   for n in nodes])

    def _on_reject_job(self, where: str, data: dict[str, Any]) -> None:
        trace = self._job(where, data["job_id"])
        require(trace.submitted is not None and trace.started is None and not trace.rejected,
                f"{where}: cannot reject that job")
        trace.rejected = True

    def _on_set_resource_state(self, where: str, data: dict[str, Any]) -> None:
        nodes = list(ProcSet.from_str(data["resources"]))
        target = int(data["state"])
        to_sleep = target == SLEEP_PSTATE
        expected = IDLE if to_sleep else SLEEPING
        wrong = [n for n in nodes if self.visible[n] != expected]
        require(not wrong, f"{where}: node(s) {wrong} are not {expected}")
        durations = []
        for node in nodes:
            model = self.models[node]
            seconds = transition_seconds(model.off_s if to_sleep else model.on_s)
            durations.append(seconds)
            self.visible[node] = SWITCHING_OFF if to_sleep else SWITCHING_ON
            self.nodes[node].change(self.now, model.off_w if to_sleep else model.on_w,
                                    self.visible[node])
            self.nodes[node].change(self.now + seconds,
                                    model.sleep_w if to_sleep else model.idle_w,
                                    SLEEPING if to_sleep else IDLE)
            self.change_times.append(self.now + seconds)
        self.change_times.append(self.now)
        key = (data["resources"], data["state"])
        require(key not in self.switches, f"{where}: same request already outstanding")
        self.switches[key] = SwitchTrace(nodes, target, self.now, self.now + max(durations))
        if min(durations) != max(durations):
            self.uneven_switches.append((self.now, self.now + max(durations)))

    def _on_call_me_later(self, where: str, data: dict[str, Any]) -> None:
        when = float(data["timestamp"])
        require(when > self.now, f"{where}: CALL_ME_LATER not in the future")
        self.calls[when] += 1

    # ------------------------------------------------------------------ results

    def energy_until(self, end: float) -> float:
        """Energy (J) of all nodes from 0 to ``end``, from the node models."""
        return sum(node.energy_until(end) for node in self.nodes)

    def counts_at(self, when: float) -> tuple[int, ...]:
        """Machines per state (``out_machine_states.csv`` order) after the changes at ``when``."""
        states = Counter(node.state_at(when) for node in self.nodes)
        return tuple(states[s] for s in STATE_COLUMNS)

    def job_energy(self, trace: JobTrace) -> float:
        """Energy the job's nodes drew while it ran (J)."""
        assert trace.started is not None and trace.ended is not None
        elapsed = trace.ended - trace.started
        busy = self.case.busy(trace.job)
        return sum((self.models[n].busy_w if busy else self.models[n].idle_w) * elapsed
                   for n in trace.nodes)
