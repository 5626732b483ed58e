"""What actors yield to the kernel and what they wait for: requests, actors, activities.

Actors are generators that yield requests, tuples whose first item is a
:class:`Request` kind:

* ``(CALL, fn, *args)``: an answered simcall (``simcall_answered``): ``fn`` runs
  when the simcall is handled, the actor resumes one sub-round later with its
  result (``Host::set_pstate``, ``Actor::create``, ``Exec::start``, ``cancel``...);
* ``(SLEEP_FOR, duration, host)``: ``this_actor::sleep_for`` (a no-op if duration <= 0);
* ``(WAIT, activity, timeout, host)``: ``Activity::wait_for`` (timeout -1: none);
* ``(PUT, payload, final)``: ``Mailbox::put`` to the server, i.e. an ``isend`` simcall,
  then, one sub-round later, a blocking wait for the comm (``final``: the actor's last
  act, after which it only ends);
* ``(RECV,)``: the server's ``Mailbox::get``;
* ``(ENERGY, hosts)``: ``sg_host_get_consumed_energy`` on each host in turn, which
  is a simcall (``HostEnergy::get_consumed_energy``) only for a host whose
  energy was not yet updated at the current clock;
* ``(EXCHANGE, message)``: the request-reply actor's blocking ZeroMQ round trip
  (no simulated time passes): the kernel hands the message to its driver.
"""

from __future__ import annotations

from collections.abc import Generator
from enum import IntEnum
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from snficon.engine.surf import Action


class Request(IntEnum):
    """The kind of a request an actor yields (the first item of its tuple)."""

    CALL = 0
    SLEEP_FOR = 1
    WAIT = 2
    PUT = 3
    RECV = 4
    ENERGY = 5
    EXCHANGE = 6
    #: Made by the kernel, not yielded: one energy simcall of an ``ENERGY`` traversal.
    UPDATE = 7


#: The kinds at module level too, as ``signal.SIGINT`` is ``signal.Signals.SIGINT``: a
#: global is read in 17 ns, a member through its class in 0.5 us (Python 3.11), and
#: actors and the kernel read one several times per request.
CALL, SLEEP_FOR, WAIT, PUT, RECV, ENERGY, EXCHANGE, UPDATE = Request


class ActivityKind(IntEnum):
    """What an :class:`Activity` is."""

    EXEC = 0
    SLEEP = 1
    COMM = 2
    TIMEOUT = 3


#: The activity kinds at module level too, as the request kinds: the kernel reads one at
#: every activity it makes and every end it posts.
EXEC_ACTIVITY, SLEEP_ACTIVITY, COMM_ACTIVITY, TIMEOUT_ACTIVITY = ActivityKind

#: Outcomes of a wait.
DONE = "done"
CANCELED = "canceled"
TIMEOUT = "timeout"

ActorCode = Generator[tuple, Any, None]


class Actor:
    """A SimGrid actor: its code, the host it runs on (-1: ``master_host``), its state."""

    __slots__ = ("name", "code", "host", "request", "result", "alive", "waiting", "traversal",
                 "pending_wait")

    def __init__(self, name: str, code: ActorCode, host: int) -> None:
        self.name = name
        self.code = code
        self.host = host
        self.request: tuple | None = None
        self.result: Any = None
        self.alive = True
        self.waiting: Activity | None = None
        self.traversal: tuple[np.ndarray, int] | None = None
        #: The comm of an ``isend`` still queued: the actor's next simcall is its wait.
        self.pending_wait: Activity | None = None

    def __repr__(self) -> str:
        return f"Actor({self.name})"


class Activity:
    """What an actor waits for: an exec, a sleep, a comm, or an exec's timeout."""

    __slots__ = ("kind", "action", "waiters", "state", "payload", "timeout", "exec")

    def __init__(self, kind: ActivityKind) -> None:
        self.kind = kind
        self.action: Action | None = None
        self.waiters: list[Actor] = []
        self.state: str | None = None
        self.payload: Any = None
        self.timeout: Activity | None = None
        self.exec: Activity | None = None


def put(payload: Any, final: bool = False) -> Generator[tuple, Any, None]:
    """``Mailbox::put`` to the server; ``final`` when the actor ends right after."""
    yield (PUT, payload, final)


def sleep(duration: float, host: int = -1) -> Generator[tuple, Any, None]:
    """``this_actor::sleep_for``."""
    yield (SLEEP_FOR, duration, host)


__all__ = ["Actor", "ActorCode", "Activity", "ActivityKind", "Request", "put", "sleep", "CALL",
           "EXEC_ACTIVITY", "SLEEP_ACTIVITY", "COMM_ACTIVITY", "TIMEOUT_ACTIVITY",
           "SLEEP_FOR", "WAIT", "PUT", "RECV", "ENERGY", "EXCHANGE", "UPDATE", "DONE", "CANCELED",
           "TIMEOUT"]
