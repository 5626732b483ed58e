"""Batsim's request-reply actor (``network.cpp``) and its protocol reader (``protocol.cpp``).

One actor per message: it sends the message to the scheduler and blocks (no
simulated time passes) until the answer comes, then turns each event into a
request to the server with ``send_message_at_time``: when the event's
timestamp is later than the clock, the actor first sleeps until then. So an
answer whose ``now`` is later than the clock (a scheduler that consumed time,
or one that rounds the clock up: every double Batsim sends has six decimals)
advances the clock; one slightly earlier is read as it is. The last request
is ``SCHED_READY``, stamped with the answer's ``now``.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

from snficon.engine import answers as A
from snficon.engine.actors import Message
from snficon.engine.context import BatsimContext
from snficon.engine.requests import EXCHANGE, PUT, SLEEP_FOR, put, sleep
from snficon.errors import ProtocolError

SCHED_READY = "SCHED_READY"
SCHED_EXECUTE_JOB = "SCHED_EXECUTE_JOB"
SCHED_REJECT_JOB = "SCHED_REJECT_JOB"
SCHED_KILL_JOB = "SCHED_KILL_JOB"
SCHED_CALL_ME_LATER = "SCHED_CALL_ME_LATER"
SCHED_TELL_ME_ENERGY = "SCHED_TELL_ME_ENERGY"
PSTATE_MODIFICATION = "PSTATE_MODIFICATION"


@dataclass(slots=True)
class OutgoingMessage:
    """A message for the scheduler (``generate_current_message``): its time and events."""

    now: float
    events: list[Any]


def request_reply(ctx: BatsimContext, message: OutgoingMessage) -> Generator[tuple, Any, None]:
    """``request_reply_scheduler_process`` and ``JsonProtocolReader::parse_and_apply_message``."""
    answer, converted = yield (EXCHANGE, message)
    sent_at = message.now
    answer_now, events = A.answer_events(answer, sent_at, converted)
    for index, event in enumerate(events):
        where, stamp, data = A.answer_event(index, event, sent_at, answer_now, converted)
        for request in _requests(ctx, where, data, converted):
            if stamp > ctx.now:  # send_at, written out
                yield (SLEEP_FOR, stamp - ctx.now, -1)
            yield (PUT, request, False)
    if answer_now > ctx.now:
        yield (SLEEP_FOR, answer_now - ctx.now, -1)
    yield (PUT, Message(SCHED_READY), True)


def send_at(ctx: BatsimContext, when: float, request: Message,
            final: bool = False) -> Generator[tuple, Any, None]:
    """``JsonProtocolReader::send_message_at_time``."""
    now = ctx.now
    if when > now:
        yield from sleep(when - now)
    yield from put(request, final)


def _requests(ctx: BatsimContext, where: A.AnswerPlace, data: dict[str, Any],
              converted: bool) -> list[Message]:
    kind = where.kind
    nb_nodes = ctx.platform.nb_nodes
    if kind == "EXECUTE_JOB":
        job_id, nodes, text = A.execute_job(where, data, nb_nodes)
        _known_job(ctx, where, job_id)
        return [Message(SCHED_EXECUTE_JOB, (where, job_id, nodes, text))]
    if kind == "REJECT_JOB":
        job_id = A.job_id_of(where, data)
        _known_job(ctx, where, job_id)
        return [Message(SCHED_REJECT_JOB, (where, job_id))]
    if kind == "SET_RESOURCE_STATE":
        nodes, text, target = A.set_resource_state(where, data, nb_nodes)
        return [Message(PSTATE_MODIFICATION, (where, nodes, text, target))]
    if kind == "CALL_ME_LATER":
        return [Message(SCHED_CALL_ME_LATER, (where, A.call_me_later(where, data, converted)))]
    if kind == "KILL_JOB":
        return [Message(SCHED_KILL_JOB, (where, A.kill_job(where, data)))]
    if kind == "QUERY":
        return [Message(SCHED_TELL_ME_ENERGY, (where, name)) for name in A.query(where, data)]
    raise AssertionError(kind)


def _known_job(ctx: BatsimContext, where: A.AnswerPlace, job_id: str) -> None:
    if job_id not in ctx.jobs:
        raise ProtocolError(f"{where}: unknown job {job_id!r}")
