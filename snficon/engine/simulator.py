"""The embedded engine: Batsim 4's simulation semantics, one protocol message at a time.

The engine is the simulator side of the Batsim protocol and nothing else: it
produces ``{"now", "events"}`` messages and consumes the scheduler's answers.
A driver (in-process or ZeroMQ) carries the messages::

    message = engine.first_message()
    while message is not None:
        message = engine.answer(scheduler(message))

Model of Batsim's event order (checked against the recordings of real Batsim
4.2.1 in ``conformance/``). Batsim is a SimGrid program whose server actor
sends the scheduler every event that reached it while the scheduler was busy.
Here that becomes:

* Timed happenings sit in one heap of ``(time, rank, seq, kind, data)``;
  job submissions, known from the start, wait in a sorted list instead.
  Everything due at the same time goes into one message: submissions first
  (the submitters are the first sleeping actors), then by ``rank`` (other
  sleepers, i.e. ``CALL_ME_LATER`` wake-ups; then ended executions: jobs and
  switches) and by ``seq``, the order in which they were scheduled.
  Recording ``energy4-zero`` at t=68 shows a ``REQUESTED_CALL`` before a
  ``RESOURCE_STATE_CHANGED`` of a switch started earlier, hence the rank.
* What a message's answer causes at the same instant (a zero-flop job that
  ends at once, a pstate change between two computation pstates) and the
  submitter's farewell after its last submission (``NOTIFY
  no_more_static_job_to_submit``) form the next message, at the same time:
  Batsim's submitter only says goodbye once the server took its last jobs
  (``energy4-zero`` at t=5; ``energy4-delay`` at t=1000).
* ``SIMULATION_ENDS`` goes alone, once every job is finished or rejected, no
  machine is switching and no ``CALL_ME_LATER`` is pending.

A scheduler that breaks the protocol raises :class:`ProtocolError` naming the
event; :meth:`BatsimEngine.outputs` still holds what happened until then.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from snficon.engine.answers import AnswerPlace, answer_event, answer_events
from snficon.engine.jobs import ZERO_JOB_DURATION_S, EngineJob
from snficon.engine.machines import Machines, MachineState, SwitchRequest
from snficon.engine.outputs import EngineStats, OutputTables, schedule_summary
from snficon.engine.protocol import begins_data, job_description
from snficon.errors import DeadlockError, ProtocolError, UnsupportedError
from snficon.intervals import format_resources, parse_resources
from snficon.platform.model import Platform
from snficon.workload.model import PROFILE_DELAY, Workload

#: Ranks of heap entries due at the same time (see the module docstring).
RANK_SLEEPER = 0
RANK_EXECUTION = 1

class BatsimEngine:
    """Simulate a platform and workloads under a scheduler's decisions (Batsim 4 semantics)."""

    def __init__(self, platform: Platform, workloads: Sequence[Workload], *,
                 energy: bool = True, workload_labels: Sequence[str] | None = None) -> None:
        self.platform = platform
        self.energy = energy
        self.machines = Machines(platform)
        self.now = 0.0
        self.tables = OutputTables(energy_enabled=energy)
        self.stats = EngineStats()
        self._heap: list[tuple[float, int, int, str, Any]] = []
        #: Submission groups (time, workload index, jobs, last of its workload), latest first.
        self._submissions: list[tuple[float, int, list[EngineJob], bool]] = []
        self._seq = 0
        self._pending: list[dict[str, Any]] = []
        self._jobs: dict[str, EngineJob] = {}
        self._unfinished = 0
        self._submitters_left = 0
        self._ends_sent = False
        self._finished = False
        self._awaiting_answer = False
        self._workloads = list(workloads)
        self._labels = list(workload_labels or [w.source for w in workloads])
        self._schedule_submissions()
        if energy:
            for pstate in sorted(set(self.machines.pstate.tolist())):
                nodes = np.flatnonzero(self.machines.pstate == pstate)
                self.tables.pstate_changes.append((0.0, format_resources(nodes), pstate))

    # ------------------------------------------------------------------ driving

    def first_message(self) -> dict[str, Any]:
        """The ``SIMULATION_BEGINS`` message (time 0)."""
        return self._message([self._event(
            "SIMULATION_BEGINS", begins_data(self.platform, self._workloads, self._labels))])

    def answer(self, reply: Any) -> dict[str, Any] | None:
        """Apply the scheduler's answer to the last message; return the next one.

        Returns None once the answer to ``SIMULATION_ENDS`` has been read.
        """
        if not self._awaiting_answer:
            raise RuntimeError("answer() called with no message outstanding")
        self._awaiting_answer = False
        self._apply_answer(reply)
        if self._ends_sent:
            self._finished = True
            self._finalise_schedule()
            return None
        return self._next_message()

    @property
    def finished(self) -> bool:
        return self._finished

    def outputs(self) -> OutputTables:
        """The output tables, complete after the run, up to date after an error."""
        if not self.tables.schedule:
            self._finalise_schedule()
        return self.tables

    def add_scheduling_time(self, seconds: float) -> None:
        """Count wall-clock time spent waiting for the scheduler (``scheduling_time``)."""
        self.stats.scheduling_wall_s += seconds

    # ------------------------------------------------------------------ messages

    def _event(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": self.now, "type": kind, "data": data}

    def _message(self, events: list[dict[str, Any]]) -> dict[str, Any]:
        self._awaiting_answer = True
        return {"now": self.now, "events": events}

    def _next_message(self) -> dict[str, Any]:
        if self._pending:
            events, self._pending = self._pending, []
            return self._message(events)
        while self._heap or self._submissions:
            events = self._pop_due_events()
            if events:
                return self._message(events)
        if self._unfinished == 0 and self._submitters_left == 0:
            self._ends_sent = True
            return self._message([self._event("SIMULATION_ENDS", {})])
        waiting = [job.full_id for job in self._jobs.values() if job.state == "SUBMITTED"]
        raise DeadlockError(
            f"at t={self.now}: nothing left to simulate but {len(waiting)} job(s) were never "
            f"started nor rejected by the scheduler (first: {', '.join(waiting[:5])})")

    def _push(self, when: float, rank: int, kind: str, data: Any) -> None:
        heapq.heappush(self._heap, (when, rank, self._seq, kind, data))
        self._seq += 1

    def _pop_due_events(self) -> list[dict[str, Any]]:
        submissions = self._submissions
        due_time = min(self._heap[0][0] if self._heap else math.inf,
                       submissions[-1][0] if submissions else math.inf)
        self.now = due_time
        events: list[dict[str, Any]] = []
        farewells: list[dict[str, Any]] = []
        # Submitters were the first sleepers to be scheduled: they come first.
        while submissions and submissions[-1][0] == due_time:
            _, _, jobs, last = submissions.pop()
            events.extend(self._submit(jobs))
            if last:
                farewells.extend(self._submitter_done())
        while self._heap and self._heap[0][0] == due_time:
            _, _, _, kind, data = heapq.heappop(self._heap)
            if kind == "call":
                events.append(self._event("REQUESTED_CALL", {}))
            elif kind == "job_end":
                events.append(self._end_job(*data))
            elif kind == "switch_end":
                events.extend(self._end_switch(*data))
        self._pending.extend(farewells)
        return events

    # ------------------------------------------------------------------ submissions

    def _schedule_submissions(self) -> None:
        for index, workload in enumerate(self._workloads):
            name = f"w{index}"
            groups: dict[float, list[EngineJob]] = {}
            for spec in workload.jobs:
                full_id = f"{name}!{spec.id}"
                job = EngineJob(spec=spec, full_id=full_id, workload_name=name,
                                profile=workload.profiles[spec.profile], state="NOT_SUBMITTED")
                self._jobs[full_id] = job
                groups.setdefault(spec.subtime, []).append(job)
            self._unfinished += len(workload.jobs)
            self._submitters_left += 1
            if not groups:
                self._pending.extend(self._submitter_done())
            times = sorted(groups)
            self._submissions.extend(
                (when, index, groups[when], position == len(times) - 1)
                for position, when in enumerate(times))
        # Latest last, so that the next one pops from the end.
        self._submissions.sort(key=lambda item: (item[0], item[1]), reverse=True)

    def _submit(self, jobs: list[EngineJob]) -> list[dict[str, Any]]:
        if self.stats.energy_first_submission is None:
            self.stats.energy_first_submission = self.machines.energy_at(self.now)
        events = []
        for job in jobs:
            job.state = "SUBMITTED"
            events.append(self._event("JOB_SUBMITTED", {
                "job_id": job.full_id, "job": job_description(job.spec, job.full_id)}))
        return events

    def _submitter_done(self) -> list[dict[str, Any]]:
        self._submitters_left -= 1
        if self._submitters_left == 0:
            return [self._event("NOTIFY", {"type": "no_more_static_job_to_submit"})]
        return []

    # ------------------------------------------------------------------ answers

    def _apply_answer(self, reply: Any) -> None:
        for index, event in enumerate(answer_events(reply, self.now)):
            where, data = answer_event(index, event, self.now)
            self._answer_handlers[where.kind](self, where, data)

    def _job_for(self, where: AnswerPlace, data: dict[str, Any]) -> EngineJob:
        job_id = data.get("job_id")
        job = self._jobs.get(job_id) if isinstance(job_id, str) else None
        if job is None or job.state == "NOT_SUBMITTED":
            raise ProtocolError(f"{where}: unknown job {job_id!r}")
        if job.state != "SUBMITTED":
            raise ProtocolError(f"{where}: job {job_id} is already {job.state.lower()}")
        return job

    def _nodes(self, where: AnswerPlace, text: Any, field_name: str) -> tuple[np.ndarray, str]:
        try:
            nodes, canonical = parse_resources(text)
        except ValueError as exc:
            raise ProtocolError(f"{where}: '{field_name}' is not a resource set: {text!r} "
                                f"({exc})") from None
        if nodes[-1] >= self.platform.nb_nodes:
            raise ProtocolError(f"{where}: '{field_name}' names machine {int(nodes[-1])} but "
                                f"the platform has {self.platform.nb_nodes} (0-"
                                f"{self.platform.nb_nodes - 1})")
        return nodes, canonical

    def _execute(self, where: AnswerPlace, data: dict[str, Any]) -> None:
        job = self._job_for(where, data)
        extra = data.keys() - {"job_id", "alloc"}
        if extra:
            raise UnsupportedError(f"{where}: EXECUTE_JOB fields {sorted(extra)} are not "
                                   "supported by the embedded engine")
        nodes, alloc_text = self._nodes(where, data.get("alloc"), "alloc")
        if len(nodes) != job.spec.res:
            raise ProtocolError(f"{where}: job {job.full_id} asks for {job.spec.res} machine(s) "
                                f"but the allocation has {len(nodes)}")
        not_idle = self.machines.state[nodes] != MachineState.IDLE
        if not_idle.any():
            busy = nodes[not_idle]
            node = int(busy[0])
            state = MachineState(int(self.machines.state[node])).label
            raise ProtocolError(f"{where}: job {job.full_id} on machine {node} which is {state}")
        self._start_job(job, nodes, alloc_text)

    def _start_job(self, job: EngineJob, nodes: np.ndarray, alloc_text: str) -> None:
        machines = self.machines
        job.state, job.nodes, job.alloc_text, job.start = "RUNNING", nodes, alloc_text, self.now
        busy = job.profile.type != PROFILE_DELAY
        power = machines.busy_power(nodes) if busy else machines.idle_power(nodes)
        machines.set_state(self.now, nodes, MachineState.COMPUTING, leaving=MachineState.IDLE)
        machines.set_power(self.now, nodes, power)
        self._record_states()
        self._energy_row("s")
        duration = job.duration_on(self.machines, nodes)
        walltime = job.spec.walltime
        final = "COMPLETED_SUCCESSFULLY"
        if walltime > 0 and duration > walltime:
            duration, final = walltime, "COMPLETED_WALLTIME_REACHED"
        job.power_w = float(power.sum())
        if duration == 0:
            self._pending.append(self._end_job(job, final))
        else:
            self._push(self.now + float(duration), RANK_EXECUTION, "job_end", (job, final))

    def _end_job(self, job: EngineJob, final: str) -> dict[str, Any]:
        nodes = job.nodes
        assert nodes is not None
        machines = self.machines
        elapsed = self.now - job.start
        machines.set_state(self.now, nodes, MachineState.IDLE, leaving=MachineState.COMPUTING)
        machines.set_power(self.now, nodes, machines.idle_power(nodes))
        job.state = final
        self._unfinished -= 1
        self._record_states()
        self._energy_row("e")
        self.stats.energy_last_completion = machines.energy_at(self.now)
        self.tables.jobs.append(job.row(
            final, start=job.start, execution_time=elapsed if elapsed > 0 else ZERO_JOB_DURATION_S,
            allocation=job.alloc_text, consumed_energy=job.power_w * elapsed))
        return_code = 0 if final == "COMPLETED_SUCCESSFULLY" else -1
        return self._event("JOB_COMPLETED", {
            "job_id": job.full_id, "job_state": final, "return_code": return_code,
            "alloc": job.alloc_text})

    def _reject(self, where: AnswerPlace, data: dict[str, Any]) -> None:
        job = self._job_for(where, data)
        job.state = "REJECTED"
        self._unfinished -= 1
        self.tables.jobs.append(job.row("REJECTED"))

    def _call_later(self, where: AnswerPlace, data: dict[str, Any]) -> None:
        when = data.get("timestamp")
        if isinstance(when, bool) or not isinstance(when, int | float) or math.isnan(when):
            raise ProtocolError(f"{where}: 'timestamp' is not a number")
        if not when > self.now:
            raise ProtocolError(f"{where}: CALL_ME_LATER at {when!r} is not in the future "
                                f"(now is {self.now!r})")
        if math.isinf(when):
            raise ProtocolError(f"{where}: CALL_ME_LATER at an infinite time")
        self._push(float(when), RANK_SLEEPER, "call", None)

    # ------------------------------------------------------------------ pstates

    def _set_state(self, where: AnswerPlace, data: dict[str, Any]) -> None:
        if not self.energy:
            raise ProtocolError(f"{where}: SET_RESOURCE_STATE needs the energy model: run with -E")
        nodes, alloc_text = self._nodes(where, data.get("resources"), "resources")
        try:
            target = int(data.get("state"))
        except (TypeError, ValueError):
            raise ProtocolError(f"{where}: 'state' is not a pstate number: "
                                f"{data.get('state')!r}") from None
        problem = self.machines.switch_problem(nodes, target)
        if problem is not None:
            raise ProtocolError(f"{where}: {problem}")
        self.stats.grouped_switches += 1
        self.stats.machine_switches += len(nodes)
        self._energy_row("p")
        request, ends = self.machines.begin_switch(self.now, nodes, target, alloc_text)
        if request is None:
            self.tables.pstate_changes.append((self.now, alloc_text, target))
            self._pending.append(self._event("RESOURCE_STATE_CHANGED",
                                             {"resources": alloc_text, "state": str(target)}))
            return
        self.tables.pstate_changes.append((self.now, alloc_text, -2 if request.sleeping else -1))
        self._record_states()
        for duration, group in ends:
            self._push(self.now + duration, RANK_EXECUTION, "switch_end", (request, group))

    def _end_switch(self, request: SwitchRequest, nodes: np.ndarray) -> list[dict[str, Any]]:
        """Machines ``nodes`` of ``request`` reach its target pstate."""
        done = self.machines.end_switch(self.now, request, nodes)
        self._record_states()
        self._energy_row("p")
        if not done:
            return []
        target = request.target_pstate
        self.tables.pstate_changes.append((self.now, request.alloc_text, target))
        return [self._event("RESOURCE_STATE_CHANGED",
                            {"resources": request.alloc_text, "state": str(target)})]

    #: The scheduler's answer events and their handlers (SUPPORTED_ANSWERS).
    _answer_handlers = {"EXECUTE_JOB": _execute, "REJECT_JOB": _reject,
                        "SET_RESOURCE_STATE": _set_state, "CALL_ME_LATER": _call_later}

    # ------------------------------------------------------------------ traces

    def _record_states(self) -> None:
        self.tables.record_states(self.now, self.machines.counts)

    def _energy_row(self, kind: str) -> None:
        if self.energy:
            self.tables.record_energy(self.now, self.machines.energy_at(self.now), kind,
                                      self.machines.wattmin)

    def _finalise_schedule(self) -> None:
        self.tables.schedule = schedule_summary(
            self.tables.jobs, nb_jobs=len(self._jobs), nb_machines=self.platform.nb_nodes,
            time_in_state=self.machines.time_in_state, stats=self.stats, energy=self.energy)
