"""The shape of a scheduler's answer, checked before the engine applies it.

An answer is a Batsim message ``{"now", "events"}`` whose ``now`` is the time of the
message it answers (the embedded engine does not let a scheduler consume simulated
time) and whose events are the decisions the engine supports, stamped ``now``. What
the decisions mean (an unknown job, a busy machine...) is checked by the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snficon.errors import ProtocolError, UnsupportedError

SUPPORTED_ANSWERS = ("EXECUTE_JOB", "REJECT_JOB", "SET_RESOURCE_STATE", "CALL_ME_LATER")


@dataclass(frozen=True)
class AnswerPlace:
    """Where an answer event sits, for error messages; formatted only when one is raised."""

    now: float
    index: int
    kind: str = ""
    data: Any = None

    def __str__(self) -> str:
        place = f"at t={self.now}, answer event #{self.index}"
        return f"{place} {self.kind} {self.data!r:.200}" if self.kind else place


def answer_events(reply: Any, now: float) -> list[Any]:
    """The events of ``reply``, an answer to the message sent at ``now``."""
    if not isinstance(reply, dict) or "events" not in reply or "now" not in reply:
        raise ProtocolError(f"at t={now}: the scheduler's answer is not a Batsim "
                            f"message with 'now' and 'events': {reply!r:.200}")
    if not isinstance(reply["events"], list):
        raise ProtocolError(f"at t={now}: 'events' of the answer is not a list")
    stamp = reply["now"]
    if isinstance(stamp, bool) or not isinstance(stamp, int | float) or stamp < now:
        raise ProtocolError(f"at t={now}: the answer's 'now' ({stamp!r}) is in the past")
    if stamp > now:
        raise UnsupportedError(
            f"at t={now}: the answer's 'now' is {stamp!r}: schedulers that consume "
            "simulated time are not supported by the embedded engine")
    return reply["events"]


def answer_event(index: int, event: Any, now: float) -> tuple[AnswerPlace, dict[str, Any]]:
    """Event ``index`` of an answer at ``now``: its place (type included) and its data."""
    if not isinstance(event, dict) or "type" not in event:
        raise ProtocolError(f"{AnswerPlace(now, index)}: not an event object: {event!r:.200}")
    kind, data = event["type"], event.get("data", {})
    where = AnswerPlace(now, index, kind, data)
    stamp = event.get("timestamp", now)
    if stamp != now:
        raise UnsupportedError(f"{where}: timestamp {stamp!r} differs from now; "
                               "delayed decisions are not supported by the embedded engine")
    if kind not in SUPPORTED_ANSWERS:
        raise UnsupportedError(f"{where}: event type {kind!r} is not supported by the "
                               f"embedded engine (supported: {', '.join(SUPPORTED_ANSWERS)})")
    if not isinstance(data, dict):
        raise ProtocolError(f"{where}: 'data' is not an object")
    return where, data
