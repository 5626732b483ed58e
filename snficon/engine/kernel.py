"""SimGrid 3.32's maestro loop: actors, simcalls, activities and Batsim's server mailbox.

``EngineImpl::run`` alternates *sub-rounds* and *solves*. In a sub-round every
runnable actor runs until its next simcall (``run_all_actors``); the simcalls
are then handled in the order those actors ran (``simcall_handle``) and the
actors whose activities ended are woken (``handle_ended_actions``). When no
actor is runnable, ``solve`` advances the clock (:class:`~.surf.Surf`). An
actor woken by a simcall answer or an ended activity is appended to the
run list (``ActorImpl::simcall_answer``), so the order in which events reach
Batsim's server is the order in which their actors reach their ``put``:
first by how many simcalls each made since it woke, then by wake order.

Actors are generators that yield requests (:mod:`~.requests`).

Energy updates at the current clock happen also in the kernel: when an action
ends or is cancelled, on its hosts (``on_action_state_change`` of the energy
plugin), and when a host changes pstate (``on_host_change``); the user-side
update of ``Exec::on_start`` for single-host executions is done by the actors.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator
from typing import Any

import numpy as np

from snficon.engine.requests import (
    CALL,
    CANCELED,
    COMM_ACTIVITY,
    DONE,
    ENERGY,
    EXCHANGE,
    EXEC_ACTIVITY,
    PUT,
    RECV,
    SLEEP_ACTIVITY,
    SLEEP_FOR,
    TIMEOUT,
    TIMEOUT_ACTIVITY,
    UPDATE,
    WAIT,
    Activity,
    Actor,
    ActorCode,
    Request,
)
from snficon.engine.surf import Surf

#: A simcall's handler: the actor that made it and its request.
Handler = Callable[[Actor, tuple], None]


class Kernel:
    """The actors, their run list and Batsim's ``server`` mailbox, over a :class:`Surf`."""

    def __init__(self, surf: Surf, nb_hosts: int, on_load_change) -> None:
        self.surf = surf
        self.to_run: list[Actor] = []
        #: The actors alive, in spawn order (a dead one is dropped: memory stays flat).
        self.actors: dict[Actor, None] = {}
        #: ``HostEnergy::last_updated_`` of each compute host.
        self.energy_updated_at = np.zeros(nb_hosts)
        self.all_hosts = np.arange(nb_hosts, dtype=np.int64)
        #: A clock value at which every host's energy was updated (nothing is pending for
        #: any traversal until the clock moves: updates only ever set the current clock).
        self._all_updated_at = -1.0
        self._queue: deque[Activity] = deque()
        self._receiver: Activity | None = None
        #: A comm started while nothing else was due at the next solve: it ends then
        #: without an action of its own (the solve would have a delta of 0 and end it).
        self._comm: Activity | None = None
        self._on_load_change = on_load_change

    # ------------------------------------------------------------------ actors

    def spawn(self, name: str, code: ActorCode, host: int = -1) -> Actor:
        """``ActorImpl::start``: the new actor is appended to the run list."""
        actor = Actor(name, code, host)
        self.actors[actor] = None
        self.to_run.append(actor)
        return actor

    def kill(self, victim: Actor) -> None:
        """``ActorImpl::exit``: cancel what the victim waits for; it never runs again."""
        self._forget(victim)
        waiting = victim.waiting
        if waiting is not None and waiting.action is not None and waiting.action.alive:
            self.surf.remove(waiting.action)
            self.touch(waiting.action.hosts)
        victim.waiting = None
        victim.code.close()

    def mailbox_empty(self) -> bool:
        """``Mailbox::empty`` of the server's mailbox: no send waiting for a receiver."""
        return not self._queue

    def touch(self, hosts: np.ndarray) -> None:
        """The energy of ``hosts`` is updated at the current clock."""
        if len(hosts):
            self.energy_updated_at[hosts] = self.surf.now

    # ------------------------------------------------------------------ the loop

    def run(self) -> Generator[Any, Any, None]:
        """``EngineImpl::run`` as a generator: yields each message for the scheduler and
        receives its answer; returns when nothing can happen any more."""
        surf = self.surf
        step = self._step
        handlers = self._simcall_handlers()
        while True:
            while self.to_run:
                ran = self.to_run
                if ran[0].traversal is not None:
                    self._fast_forward_energy()
                self.to_run = []
                for actor in ran:
                    if not actor.alive:
                        continue
                    message = step(actor)
                    while message is not None:  # the request-reply actor's round trip
                        actor.result = yield message
                        message = step(actor)
                for actor in ran:
                    request = actor.request
                    if request is not None:
                        actor.request = None
                        handlers[request[0]](actor, request)
                if surf.failed or surf.finished:
                    self._handle_ended()
            comm = self._comm
            if comm is not None:  # a delta-0 solve: the comm ends first (it was started first)
                self._comm = None
                if surf.has_instant():
                    surf.instant_step()
                self._post(comm, DONE)
                if surf.failed or surf.finished:  # the instant step ended more (rarely)
                    self._handle_ended()
                continue
            if surf.solve() < 0.0:
                return
            self._handle_ended()

    def _step(self, actor: Actor) -> Any:
        """Run ``actor`` until its next simcall (``ActorImpl`` context switch), which it
        leaves in ``actor.request``.

        Requests that are no simcall are served on the spot and the actor runs on:
        ``sleep_for`` of no time, an energy query of hosts already updated. Returns the
        message of an ``EXCHANGE`` (the actor resumes with the answer put in its
        ``result``), else None.
        """
        if actor.pending_wait is not None:  # the second half of Mailbox::put
            actor.request = (WAIT, actor.pending_wait, -1.0, actor.host)
            actor.pending_wait = None
            return None
        value = actor.result
        actor.result = None
        if actor.traversal is not None:
            if self._traverse(actor):
                return None
            value = None
        while True:
            try:
                request = actor.code.send(value)
            except StopIteration:
                self._forget(actor)
                return None
            value = None
            kind = request[0]
            if kind == EXCHANGE:
                return request[1]
            if kind == ENERGY:
                actor.traversal = (request[1], 0)
                if self._traverse(actor):
                    return None
            elif not (kind == SLEEP_FOR and request[1] <= 0.0):
                actor.request = request
                return None

    def _forget(self, actor: Actor) -> None:
        """The actor is dead: it never runs again."""
        actor.alive = False
        self.actors.pop(actor, None)

    def _traverse(self, actor: Actor) -> bool:
        """Advance an energy traversal to its next host needing a simcall (True) or its end."""
        assert actor.traversal is not None
        hosts, position = actor.traversal
        now = self.surf.now
        if position < len(hosts) and self._all_updated_at != now:
            host = int(hosts[position])
            if self.energy_updated_at[host] < now:  # the very next host (the usual case)
                actor.traversal = (hosts, position + 1)
                actor.request = (UPDATE, host)
                return True
            every = hosts is self.all_hosts
            if every:  # a slice, not a gather
                pending = self.energy_updated_at[position:] < now
            else:
                pending = self.energy_updated_at[hosts[position:]] < now
            first = int(pending.argmax())
            if pending[first]:
                index = position + first
                actor.traversal = (hosts, index + 1)
                actor.request = (UPDATE, int(hosts[index]))
                return True
            if every and position == 0:
                self._all_updated_at = now
        actor.traversal = None
        return False

    def _fast_forward_energy(self) -> None:
        """Skip sub-rounds in which only energy traversals in lockstep run.

        When every runnable actor is mid-way through the same traversal, at the
        same host, they stay in lockstep until its end and nothing else can run
        meanwhile: the remaining hosts end up updated, the actors resume in the
        same order. Only the number of skipped sub-rounds is lost, which nothing
        observes.
        """
        first = self.to_run[0].traversal
        assert first is not None
        hosts, position = first
        for actor in self.to_run:
            traversal = actor.traversal
            if traversal is None or traversal[0] is not hosts or traversal[1] != position:
                return
        if hosts is self.all_hosts:  # the hosts before were updated: now all are
            self.energy_updated_at[position:] = self.surf.now
            self._all_updated_at = self.surf.now
        elif position < len(hosts):
            self.energy_updated_at[hosts[position:]] = self.surf.now
        for actor in self.to_run:
            actor.traversal = (hosts, len(hosts))

    # ------------------------------------------------------------------ simcalls

    def _on_call(self, actor: Actor, request: tuple) -> None:
        """An answered simcall: its function runs now, the actor resumes with the result."""
        actor.result = request[1](*request[2:])
        self.to_run.append(actor)

    def _on_update(self, actor: Actor, request: tuple) -> None:
        """One host's energy update of a traversal (``HostEnergy::update``)."""
        self.energy_updated_at[request[1]] = self.surf.now
        self.to_run.append(actor)

    def _on_sleep(self, actor: Actor, request: tuple) -> None:
        """``ActorImpl::sleep``: a sleep action the actor waits for."""
        activity = Activity(SLEEP_ACTIVITY)
        activity.action = self.surf.sleep(request[1], request[2], activity)
        activity.waiters.append(actor)
        actor.waiting = activity

    def _on_unknown(self, _actor: Actor, request: tuple) -> None:
        raise RuntimeError(f"unknown simcall {request!r}")

    def _simcall_handlers(self) -> list[Handler]:
        """``simcall_handle``: the handler of each simcall kind, indexed by its
        :class:`Request` (``ENERGY`` and ``EXCHANGE`` are served in the context switch)."""
        handlers: list[Handler] = [self._on_unknown] * len(Request)
        handlers[CALL] = self._on_call
        handlers[SLEEP_FOR] = self._on_sleep
        handlers[WAIT] = self._wait
        handlers[PUT] = self._put
        handlers[RECV] = self._recv
        handlers[UPDATE] = self._on_update
        return handlers

    def _wait(self, actor: Actor, request: tuple) -> None:
        """``ActivityImpl::wait_for``: ``(WAIT, activity, timeout, host)``."""
        _, activity, timeout, host = request
        if activity.state is not None:  # already over: answered at once
            actor.result = activity.state
            self.to_run.append(actor)
            return
        activity.waiters.append(actor)
        actor.waiting = activity
        if timeout >= 0.0:
            detector = Activity(TIMEOUT_ACTIVITY)
            detector.exec = activity
            detector.waiters.append(actor)
            detector.action = self.surf.sleep(timeout, host, detector)
            activity.timeout = detector

    def _put(self, actor: Actor, request: tuple) -> None:
        """``CommImpl::isend`` of ``(PUT, payload, final)``, and the sender's wait one
        sub-round later.

        When the server already waits (the usual case), the comm starts now
        and the sender's wait, which would come next sub-round and do nothing
        else, is registered at once, after the receiver as it would be; when
        the send is queued, the wait keeps its own sub-round. A final sender
        (nothing left to do after its put) is not woken again: it ends.
        """
        _, payload, final = request
        receiver = self._receiver
        if receiver is not None:
            self._receiver = None
            receiver.payload = payload
            self._start_comm(receiver)
            if final:
                self._end(actor)
            else:
                receiver.waiters.append(actor)
                actor.waiting = receiver
            return
        comm = Activity(COMM_ACTIVITY)
        comm.payload = payload
        self._queue.append(comm)
        if final:
            self._end(actor)
        else:
            actor.pending_wait = comm
            self.to_run.append(actor)

    def _start_comm(self, comm: Activity) -> None:
        """``CommImpl::start``: a comm between two actors of ``master_host`` ends at the next
        solve, at once (remains 0)."""
        if self._comm is None and not self.surf.has_instant():
            self._comm = comm
        else:
            comm.action = self.surf.communicate(comm)

    def _end(self, actor: Actor) -> None:
        self._forget(actor)
        actor.code.close()

    def _recv(self, actor: Actor, _request: tuple) -> None:
        """``CommImpl::irecv`` of the server: the oldest queued send, or wait for one."""
        if self._queue:
            comm = self._queue.popleft()
            comm.waiters.append(actor)
            self._start_comm(comm)
        else:
            comm = Activity(COMM_ACTIVITY)
            comm.waiters.append(actor)
            self._receiver = comm
        actor.waiting = comm

    # ------------------------------------------------------------------ ends

    def start_exec(self, hosts: np.ndarray, flops: float, speeds: np.ndarray) -> Activity:
        """``ExecImpl::start`` (an answered simcall): the action starts now."""
        activity = Activity(EXEC_ACTIVITY)
        activity.action = self.surf.execute(hosts, flops, speeds, activity)
        if activity.action.loads:
            self._on_load_change(hosts, +1)
        return activity

    def cancel_exec(self, activity: Activity) -> None:
        """``ExecImpl::cancel``: the action fails now (its waiters see ``CANCELED``)."""
        action = activity.action
        if action is not None and action.alive:
            self.surf.cancel(action)
            self.touch(action.hosts)
            if action.loads:
                self._on_load_change(action.hosts, -1)

    def destroy_exec(self, activity: Activity) -> None:
        """An execution's activity is freed before its end (a walltime-killed job deleted)."""
        action = activity.action
        if action is not None and action.alive:
            self.surf.remove(action)
            if action.loads:
                self._on_load_change(action.hosts, -1)

    def _handle_ended(self) -> None:
        """``EngineImpl::handle_ended_actions``: failed actions first, then finished ones."""
        surf = self.surf
        if surf.failed:
            for action in surf.take_failed():
                self._post(action.activity, CANCELED)
        if not surf.finished:
            return
        for action in surf.take_finished():
            if len(action.hosts):
                self.energy_updated_at[action.hosts] = surf.now
            if action.loads:
                self._on_load_change(action.hosts, -1)
            self._post(action.activity, DONE)

    def _post(self, activity: Activity, state: str) -> None:
        if activity.kind == TIMEOUT_ACTIVITY:
            exec_activity = activity.exec
            assert exec_activity is not None
            if exec_activity.state is not None:
                return
            exec_activity.timeout = None
            for actor in activity.waiters:
                if actor in exec_activity.waiters:
                    exec_activity.waiters.remove(actor)
                self._answer(actor, TIMEOUT)
            return
        activity.state = state
        if activity.timeout is not None:
            detector = activity.timeout
            activity.timeout = None
            if detector.action is not None:
                self.surf.remove(detector.action)
        for actor in activity.waiters:
            if actor.alive:
                self._answer(actor, activity.payload if activity.kind == COMM_ACTIVITY
                             and state == DONE else state)
        activity.waiters = []

    def _answer(self, actor: Actor, result: Any) -> None:
        actor.waiting = None
        actor.result = result
        self.to_run.append(actor)

    def blocked_actors(self) -> list[Actor]:
        return list(self.actors)


__all__ = ["Kernel"]
