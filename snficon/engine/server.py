"""Batsim's server actor (``server.cpp`` ``server_process`` and its ``server_on_*`` handlers).

The server receives the messages of every other actor, one at a time, in the
order they reached its mailbox, and appends the protocol events they cause.
After each message it sends the scheduler what it collected, if the
scheduler is ready and no other message is waiting in its mailbox. That is
where Batsim groups the events of one instant into one message -- and splits
them when an actor's message arrives after the server found its mailbox empty
(the submitter's farewell after its last submission, for instance).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from snficon.engine import actors as act
from snficon.engine import jobs as J
from snficon.engine.context import BatsimContext, Switch
from snficon.engine.machines import IDLE, SLEEPING, MachineState
from snficon.engine.protocol import begins_data
from snficon.engine.reader import (
    PSTATE_MODIFICATION,
    SCHED_CALL_ME_LATER,
    SCHED_EXECUTE_JOB,
    SCHED_KILL_JOB,
    SCHED_READY,
    SCHED_REJECT_JOB,
    SCHED_TELL_ME_ENERGY,
    OutgoingMessage,
    request_reply,
)
from snficon.engine.requests import CALL, RECV
from snficon.errors import ProtocolError

Handler = Callable[["Server", Any], None]
GeneratorHandler = Callable[["Server", Any], Generator[tuple, Any, None]]


class Server:
    """The server's counters and its actor code."""

    def __init__(self, ctx: BatsimContext, workloads: list[Any], labels: list[str],
                 nb_submitters: int) -> None:
        self.ctx = ctx
        self._workloads = workloads
        self._labels = labels
        self.expected_submitters = nb_submitters
        self.submitters: set[str] = set()
        self.submitters_finished = 0
        self.sched_ready = False
        self.end_sent = False
        self.end_acknowledged = False
        self.nb_submitted = 0
        self.nb_completed = 0
        self.nb_running = 0
        self.nb_switching = 0
        self.nb_waiters = 0
        self.nb_killers = 0
        self.to_delete: list[J.EngineJob] = []

    # ------------------------------------------------------------------ the loop

    def code(self) -> Generator[tuple, Any, None]:
        """``server_process``."""
        ctx = self.ctx
        ctx.append("SIMULATION_BEGINS", begins_data(ctx.platform, self._workloads, self._labels))
        yield (CALL, self._spawn_request_reply, self._take_message())
        self.sched_ready = False
        kernel = ctx.kernel
        while not self.end_acknowledged:
            message = yield (RECV,)
            handler = _HANDLERS.get(message.type)
            if handler is not None:
                handler(self, message.data)
            else:
                yield from _GENERATOR_HANDLERS[message.type](self, message.data)
            if self.sched_ready and not self.end_acknowledged and kernel.mailbox_empty():
                if ctx.events:
                    yield from self._send()
                elif self.finished() and not self.end_sent:
                    ctx.append("SIMULATION_ENDS", {})
                    yield from self._send()
                    self.end_sent = True

    def _take_message(self) -> OutgoingMessage:
        ctx = self.ctx
        message = OutgoingMessage(ctx.now, ctx.events)
        ctx.events = []
        return message

    def _spawn_request_reply(self, message: OutgoingMessage) -> None:
        self.ctx.kernel.spawn("Scheduler REQ-REP", request_reply(self.ctx, message))

    def _send(self) -> Generator[tuple, Any, None]:
        """``generate_and_send_message``; the jobs reported in it are then deleted."""
        yield (CALL, self._spawn_request_reply, self._take_message())
        self.sched_ready = False
        jobs = self.ctx.jobs
        for job in self.to_delete:
            if job.ptask is not None:  # a walltime-killed parallel task ends with its job
                self.ctx.kernel.destroy_exec(job.ptask)
            jobs.finish(job)
        self.to_delete = []

    def finished(self) -> bool:
        """``is_simulation_finished``."""
        return (self.submitters_finished == self.expected_submitters
                and self.nb_completed == self.nb_submitted and self.nb_running == 0
                and self.nb_switching == 0 and self.nb_waiters == 0 and self.nb_killers == 0)

    # ------------------------------------------------------------------ submitters

    def on_submitter_hello(self, name: str) -> None:
        self.submitters.add(name)

    def on_submitter_bye(self, name: str) -> None:
        self.submitters.discard(name)
        self.submitters_finished += 1
        if self.submitters_finished == self.expected_submitters:
            self.ctx.append("NOTIFY", {"type": "no_more_static_job_to_submit"})

    def on_job_submitted(self, data: tuple[str, list[J.EngineJob]]) -> None:
        for job in data[1]:
            job.state = J.SUBMITTED
            self.nb_submitted += 1
            self.ctx.append("JOB_SUBMITTED", {}, job)

    # ------------------------------------------------------------------ jobs

    def on_job_completed(self, job: J.EngineJob) -> None:
        self.nb_running -= 1
        self.nb_completed += 1
        self._report_completion(job)

    def _report_completion(self, job: J.EngineJob) -> None:
        self.ctx.append("JOB_COMPLETED", {"job_id": job.full_id, "job_state": job.state,
                                          "return_code": job.return_code,
                                          "alloc": job.alloc_text})
        self.ctx.tables.record_job(job.row())
        self.to_delete.append(job)

    def on_execute_job(self, data: tuple) -> Generator[tuple, Any, None]:
        """``server_on_execute_job``: checks, then the job's actor on its first machine."""
        where, job_id, nodes, text = data
        ctx = self.ctx
        job = ctx.jobs[job_id]
        if job.state == J.NOT_SUBMITTED:
            raise ProtocolError(f"{where}: unknown job {job_id!r} (not submitted yet)")
        if job.state != J.SUBMITTED:
            raise ProtocolError(f"{where}: job {job_id} is already {job.state.lower()}")
        if len(nodes) != job.spec.res:
            raise ProtocolError(f"{where}: job {job.full_id} asks for {job.spec.res} "
                                f"machine(s) but the allocation has {len(nodes)}")
        machines = ctx.machines
        states = machines.state[nodes]
        if not (states == IDLE).all():
            node = int(nodes[states != IDLE][0])
            raise ProtocolError(f"{where}: job {job.full_id} on machine {node} which is "
                                f"{machines.state_of(node).label}")
        if ctx.energy:
            computes = machines.computes_now[nodes]
            if not computes.all():
                node = int(nodes[~computes][0])
                raise ProtocolError(f"{where}: job {job.full_id} on machine {node} which "
                                    "is not in a computation pstate")
        job.state = J.RUNNING
        job.nodes, job.alloc_text = nodes, text
        self.nb_running += 1
        yield (CALL, self._spawn_job, job)

    def _spawn_job(self, job: J.EngineJob) -> None:
        assert job.nodes is not None
        job.actor = self.ctx.kernel.spawn(f"job_{job.full_id}", act.execute_job(self.ctx, job),
                                          int(job.nodes[0]))

    def on_reject_job(self, data: tuple) -> None:
        where, job_id = data
        job = self.ctx.jobs[job_id]
        if job.state != J.SUBMITTED:
            raise ProtocolError(f"{where}: job {job_id} cannot be rejected: it is "
                                f"{job.state.lower().replace('_', ' ')}, not waiting")
        job.state = J.REJECTED
        self.nb_completed += 1
        self.ctx.tables.record_job(job.row())
        self.to_delete.append(job)

    def on_kill_jobs(self, data: tuple) -> Generator[tuple, Any, None]:
        """``server_on_kill_jobs``: killing a job that is not running nor over is fatal."""
        where, job_ids = data
        to_kill = []
        for job_id in job_ids:
            job = self.ctx.jobs.get(job_id)
            if job is None:
                raise ProtocolError(f"{where}: KILL_JOB of job {job_id!r}, which does not exist")
            if job.kill_requested:
                continue
            if not (job.state == J.RUNNING or job.is_complete):
                raise ProtocolError(
                    f"{where}: invalid KILL_JOB: job {job_id} is {job.state.lower()}, not "
                    "being executed nor completed (Batsim: \"Invalid KILL_JOB: job_id "
                    f"'{job_id}' refers to a job not being executed nor completed.\")")
            job.kill_requested = True
            to_kill.append(job_id)
        if to_kill:
            yield (CALL, self._spawn, "killer_process", act.killer(self.ctx, to_kill))
            self.nb_killers += 1

    def on_killing_done(self, done: act.KillingDone) -> None:
        for job_id in done.job_ids:
            job = self.ctx.jobs[job_id]
            if job.state == J.COMPLETED_KILLED and job not in self.to_delete \
                    and job.full_id in done.progress:
                self.nb_running -= 1
                self.nb_completed += 1
                self._report_completion(job)
        self.ctx.append("JOB_KILLED", {"job_ids": list(done.job_ids),
                                       "job_progress": dict(done.progress)})
        self.nb_killers -= 1

    def _spawn(self, name: str, code: Generator[tuple, Any, None], host: int = -1) -> None:
        self.ctx.kernel.spawn(name, code, host)

    # ------------------------------------------------------------------ time

    def on_call_me_later(self, data: tuple) -> Generator[tuple, Any, None]:
        where, target = data
        now = self.ctx.now
        if not target > now:
            raise ProtocolError(f"{where}: CALL_ME_LATER at {target!r} is not in the future "
                                f"(now is {now!r})")
        yield (CALL, self._spawn, f"waiter {target:f}", act.waiter(self.ctx, target, self))
        self.nb_waiters += 1

    def on_waiting_done(self, _data: Any) -> None:
        self.ctx.append("REQUESTED_CALL", {})
        self.nb_waiters -= 1

    def on_sched_ready(self, _data: Any) -> None:
        self.sched_ready = True
        if self.end_sent:
            self.end_acknowledged = True

    def on_tell_me_energy(self, _data: Any) -> Generator[tuple, Any, None]:
        energy = yield from self.ctx.total_energy()
        self.ctx.append("ANSWER", {"consumed_energy": energy})

    # ------------------------------------------------------------------ pstates

    def on_pstate_modification(self, data: tuple) -> Generator[tuple, Any, None]:
        """``server_on_pstate_modification``: switches between computation pstates at once,
        to and from sleep through one actor per machine."""
        where, nodes, text, target = data
        ctx = self.ctx
        if not ctx.energy:
            raise ProtocolError(f"{where}: SET_RESOURCE_STATE needs the energy model: run with -E")
        problem = _switch_problem(ctx, nodes, target)
        if problem is not None:
            raise ProtocolError(f"{where}: {problem}")
        ctx.switches.setdefault(target, []).append(
            Switch(text, nodes, target, set(nodes.tolist())))
        yield from ctx.energy_row("p")
        hosts = ctx.platform.hosts
        first = hosts[int(nodes[0])]
        if first.is_computation_pstate(target):
            transition = -1
        elif target in first.sleep_pstates:
            transition = -2
        else:
            transition = -42
        ctx.pstate_row(text, transition)
        ctx.stats.grouped_switches += 1
        ctx.stats.machine_switches += len(nodes)
        machines = ctx.machines
        for node in nodes.tolist():
            host = hosts[node]
            current = int(machines.pstate[node])
            if host.is_computation_pstate(current):
                if host.is_computation_pstate(target):
                    yield (CALL, ctx.set_pstate, node, target)
                    request = yield from ctx.mark_switch_done(node, target)
                    if request is not None:
                        ctx.append("RESOURCE_STATE_CHANGED",
                                   {"resources": request.all_machines, "state": str(target)})
                else:
                    machines.set_node_state(ctx.now, node, MachineState.SWITCHING_OFF)
                    yield (CALL, self._spawn, f"switch OFF {node}",
                           act.switch_machine(ctx, node, target, False), node)
                    self.nb_switching += 1
            else:
                machines.set_node_state(ctx.now, node, MachineState.SWITCHING_ON)
                yield (CALL, self._spawn, f"switch ON {node}",
                       act.switch_machine(ctx, node, target, True), node)
                self.nb_switching += 1
        ctx.write_machine_states()

    def on_switched(self, data: tuple[int, int]) -> Generator[tuple, Any, None]:
        node, target = data
        request = yield from self.ctx.mark_switch_done(node, target)
        if request is not None:
            self.ctx.write_machine_states()
            self.ctx.append("RESOURCE_STATE_CHANGED",
                            {"resources": request.all_machines, "state": str(target)})
        self.nb_switching -= 1


def _switch_problem(ctx: BatsimContext, nodes: np.ndarray, target: int) -> str | None:
    """Why ``nodes`` cannot be sent to pstate ``target`` now (None: they can).

    Only idle or sleeping machines switch; the target must be a resting pstate
    the host has; a sleeping machine wakes to a computation pstate only.
    """
    hosts = ctx.platform.hosts
    machines = ctx.machines
    for node, code in zip(nodes.tolist(), machines.state[nodes].tolist(), strict=True):
        if code != IDLE and code != SLEEPING:
            return f"machine {node} is {MachineState(code).label} and cannot be switched"
        host = hosts[node]
        if not 0 <= target < len(host.pstates) or target in host.virtual_pstates:
            return f"machine {node} has no pstate {target} to rest in"
        if code == SLEEPING and not host.is_computation_pstate(target):
            return (f"machine {node} is already asleep (pstate {int(machines.pstate[node])}) "
                    f"and can only be woken to a computation pstate")
    return None


#: Handlers that make no simcall (plain functions) and those that do (generators).
_HANDLERS: dict[str, Handler] = {
    act.SUBMITTER_HELLO: Server.on_submitter_hello,
    act.SUBMITTER_BYE: Server.on_submitter_bye,
    act.JOB_SUBMITTED: Server.on_job_submitted,
    act.JOB_COMPLETED: Server.on_job_completed,
    act.WAITING_DONE: Server.on_waiting_done,
    act.KILLING_DONE: Server.on_killing_done,
    SCHED_READY: Server.on_sched_ready,
    SCHED_REJECT_JOB: Server.on_reject_job,
}
_GENERATOR_HANDLERS: dict[str, GeneratorHandler] = {
    act.SWITCHED: Server.on_switched,
    SCHED_EXECUTE_JOB: Server.on_execute_job,
    SCHED_KILL_JOB: Server.on_kill_jobs,
    SCHED_CALL_ME_LATER: Server.on_call_me_later,
    SCHED_TELL_ME_ENERGY: Server.on_tell_me_energy,
    PSTATE_MODIFICATION: Server.on_pstate_modification,
}
