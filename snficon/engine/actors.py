"""Batsim 4.2.1's simulation actors, simcall by simcall.

(A ``(PUT, message, final)`` request is :func:`~.kernel.put` written out.)

Each function is the actor of the Batsim source it names, as a generator of
kernel requests (:mod:`.kernel`). What matters for the order of events is
where each actor makes a simcall before it sends its message to the server:
an answered simcall costs one sub-round, an energy query costs one only for a
host not yet updated at the current clock.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snficon.engine import jobs as J
from snficon.engine.context import BatsimContext
from snficon.engine.machines import COMPUTING, IDLE, SLEEPING
from snficon.engine.requests import CALL, CANCELED, PUT, TIMEOUT, WAIT, sleep
from snficon.engine.wire import long_double_difference
from snficon.errors import InputError
from snficon.workload.limits import MAX_TIME_S
from snficon.workload.model import PROFILE_DELAY

ActorCode = Generator[tuple, Any, None]

# IPC messages to the server (``ipp.hpp`` ``IPMessageType``).
SUBMITTER_HELLO = "SUBMITTER_HELLO"
SUBMITTER_BYE = "SUBMITTER_BYE"
JOB_SUBMITTED = "JOB_SUBMITTED"
JOB_COMPLETED = "JOB_COMPLETED"
WAITING_DONE = "WAITING_DONE"
SWITCHED = "SWITCHED"
KILLING_DONE = "KILLING_DONE"


@dataclass(slots=True)
class Message:
    """An IPC message (``IPMessage``): its type and data."""

    type: str
    data: Any = None


@dataclass
class KillingDone:
    """``KillingDoneMessage``: the jobs of one KILL_JOB and the progress of those running."""

    job_ids: list[str]
    progress: dict[str, dict[str, Any]] = field(default_factory=dict)


# ---------------------------------------------------------------------- submitter

def job_submitter(ctx: BatsimContext, name: str, jobs: Iterable[J.EngineJob]) -> ActorCode:
    """``static_job_submitter_process``: submit the jobs of one workload at their subtimes.

    ``jobs`` come in Batsim's submission order (``job_comparator_subtime_number``:
    subtime, then id *string*; :meth:`~.jobs.JobTable.submission_order`, which
    makes each job only when this loop reaches it). Jobs with the same
    submission time go in one message. The sleep to the next submission is
    computed in long double from the clock reading after the previous one.
    """
    yield (PUT, Message(SUBMITTER_HELLO, name), False)
    current = ctx.now
    batch: list[J.EngineJob] = []
    first = True
    for job in jobs:
        if job.spec.subtime > current:
            if batch:
                yield (PUT, Message(JOB_SUBMITTED, (name, batch)), False)
            batch = []
            yield from sleep(long_double_difference(job.spec.subtime, current))
            current = ctx.now
        batch.append(job)
        if first:
            first = False
            if ctx.energy_first_submission < 0:
                ctx.energy_first_submission = yield from ctx.total_energy()
    if batch:
        yield (PUT, Message(JOB_SUBMITTED, (name, batch)), False)
    yield (PUT, Message(SUBMITTER_BYE, name), True)


# ---------------------------------------------------------------------- waiter

def waiter(ctx: BatsimContext, target: float, server: Any) -> ActorCode:
    """``waiter_process``: sleep until ``target`` (at least 1e-5 s), then tell the server."""
    now = ctx.now
    if now < target:
        duration = target - now
        yield from sleep(max(duration, 1e-5))
    if not (server.end_sent or server.end_acknowledged):
        yield (PUT, Message(WAITING_DONE), True)


# ---------------------------------------------------------------------- switches

def switch_machine(ctx: BatsimContext, node: int, target: int, switching_on: bool) -> ActorCode:
    """``switch_on_machine_process`` / ``switch_off_machine_process`` (``pstate.cpp``).

    The machine enters the virtual pstate, computes one flop there
    (``this_actor::execute(1)``), enters the target pstate and tells the server.
    """
    host = ctx.platform.hosts[node]
    if switching_on:
        virtual = host.sleep_state(int(ctx.machines.pstate[node])).switch_on
    else:
        virtual = host.sleep_state(target).switch_off
    nodes = np.array([node], dtype=np.int64)
    yield (CALL, ctx.set_pstate, node, virtual)
    speeds = ctx.machines.speeds(nodes)
    if ctx.jitter is not None:  # not Batsim: a drawn duration instead of 1 / speed
        speeds = np.array([1.0 / ctx.jitter.duration(1.0 / float(speeds[0]))])
    execution = yield (CALL, ctx.kernel.start_exec, nodes, 1.0, speeds)
    ctx.kernel.energy_updated_at[node] = ctx.now  # Exec::on_start of the energy plugin
    yield (WAIT, execution, -1.0, node)
    yield (CALL, ctx.set_pstate, node, target)
    ctx.machines.set_node_state(ctx.now, node, IDLE if switching_on else SLEEPING)
    yield (PUT, Message(SWITCHED, (node, target)), True)


# ---------------------------------------------------------------------- jobs

def execute_job(ctx: BatsimContext, job: J.EngineJob) -> ActorCode:
    """``execute_job_process``: run one job on its allocation, then report its end."""
    nodes = job.nodes
    assert nodes is not None
    host = int(nodes[0])
    job.start = ctx.now
    remaining = job.spec.walltime
    if ctx.energy:
        job.consumed_energy = yield from ctx.energy_on(nodes)
        yield from ctx.energy_row("s")
    ctx.machines.set_state(ctx.now, nodes, COMPUTING)
    ctx.write_machine_states()
    if job.profile.type == PROFILE_DELAY:
        code = yield from _delay_task(ctx, job, remaining, host)
    else:
        code = yield from _parallel_task(ctx, job, remaining, host)
    job.return_code = code
    if code == 0:
        job.state = J.COMPLETED_SUCCESSFULLY
    elif code > 0:
        job.state = J.COMPLETED_FAILED
    elif code == -1:
        job.state = J.COMPLETED_WALLTIME_REACHED
    else:
        job.state = J.COMPLETED_KILLED
    yield from _job_end(ctx, job)
    if job.state != J.COMPLETED_KILLED:
        yield (PUT, Message(JOB_COMPLETED, job), True)


def _job_end(ctx: BatsimContext, job: J.EngineJob) -> Generator[tuple, Any, None]:
    """The end of a job (``update_machines_on_job_end``, runtime, energy and its row)."""
    nodes = job.nodes
    assert nodes is not None
    ctx.machines.set_state(ctx.now, nodes, IDLE)
    ctx.write_machine_states()
    runtime = ctx.now - job.start
    job.runtime = runtime if runtime != 0 else J.ZERO_JOB_DURATION_S
    if ctx.energy:
        before = job.consumed_energy
        job.consumed_energy = (yield from ctx.energy_on(nodes)) - before
        ctx.energy_last_completion = yield from ctx.energy_row("e")


def _delay_task(ctx: BatsimContext, job: J.EngineJob, remaining: float,
                host: int) -> Generator[tuple, Any, int]:
    """``do_delay_task``: sleep the delay, or until the walltime if it comes first."""
    delay = job.profile.delay_s
    _check_end(ctx, job, delay if remaining < 0 else min(delay, remaining))
    job.delay_start = ctx.now
    job.delay_required = delay
    if remaining < 0 or delay < remaining:
        yield from sleep(delay, host)
        return 0
    yield from sleep(remaining, host)
    return -1


def _check_end(ctx: BatsimContext, job: J.EngineJob, seconds: float) -> None:
    """Refuse a job that would end past the time the clock represents (InputError)."""
    if ctx.now + seconds > MAX_TIME_S:
        raise InputError(
            f"{ctx.jobs.source_of(job)}: job {job.spec.id!r} (profile {job.spec.profile!r}, "
            f"{job.full_id!r} in the outputs): started at {ctx.now!r} s for "
            f"{seconds!r} s, it would end past the {MAX_TIME_S:.0f} s (about 272 years) that the "
            "simulation clock represents to the microsecond")


def _parallel_task(ctx: BatsimContext, job: J.EngineJob, remaining: float,
                   host: int) -> Generator[tuple, Any, int]:
    """``execute_parallel_task``: one parallel task of ``cpu`` flops on each host."""
    nodes = job.nodes
    assert nodes is not None
    execution = yield (CALL, ctx.kernel.start_exec, nodes, job.profile.cpu_flops,
                       ctx.machines.speeds(nodes))
    job.ptask = execution
    action = execution.action
    seconds = action.remains / action.rate
    _check_end(ctx, job, seconds if remaining < 0 else min(seconds, remaining))
    if len(nodes) == 1:
        ctx.kernel.touch(nodes)  # Exec::on_start of the energy plugin (one host)
    outcome = yield (WAIT, execution, remaining if remaining >= 0 else -1.0, host)
    if outcome == CANCELED:
        return -2
    if outcome == TIMEOUT:
        return -1
    return 0


# ---------------------------------------------------------------------- kills

def killer(ctx: BatsimContext, job_ids: list[str]) -> ActorCode:
    """``killer_process``: stop the running jobs among ``job_ids`` and tell the server.

    A parallel task is cancelled (its own actor then ends the job); the
    actor of a delay job is killed and the job ended here.
    """
    done = KillingDone(job_ids)
    for job_id in job_ids:
        job = ctx.jobs[job_id]
        if job.state != J.RUNNING:
            continue
        done.progress[job_id] = {"profile_name": job.profile.name,
                                 "progress": progress_of(ctx, job)}
        if job.ptask is not None:
            yield (CALL, ctx.kernel.cancel_exec, job.ptask)
            continue
        yield (CALL, ctx.kernel.kill, job.actor)
        job.state = J.COMPLETED_KILLED
        yield from _job_end(ctx, job)
    yield (PUT, Message(KILLING_DONE, done), True)


def progress_of(ctx: BatsimContext, job: J.EngineJob) -> float:
    """``BatTask::compute_leaf_progress``: the share of the job done so far."""
    if job.ptask is not None:
        action = job.ptask.action
        return 1.0 - (action.remains if action is not None and action.alive else 0.0)
    if job.delay_required == 0:
        return 1.0
    return (ctx.now - job.delay_start) / job.delay_required
