"""The scheduler's answers as Batsim's ``JsonProtocolReader`` reads them.

An answer is a Batsim message ``{"now", "events"}``. Each event is checked for
its shape as ``parse_and_apply_event`` and the ``handle_*`` functions of
``protocol.cpp`` check it, and turned into the request the server will handle
(what the request means -- an unknown job, a busy machine -- is checked when
the server handles it). Numbers are the doubles Batsim reads: the in-process
driver passes Python floats, which go through the scheduler's JSON encoding
and rapidjson's parser first (:func:`~.wire.as_batsim_reads`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from snficon.engine.wire import as_batsim_reads
from snficon.errors import ProtocolError, UnsupportedError
from snficon.intervals import parse_resources

SUPPORTED_ANSWERS = ("EXECUTE_JOB", "REJECT_JOB", "SET_RESOURCE_STATE", "CALL_ME_LATER",
                     "KILL_JOB", "QUERY")
BATSIM_ONLY_ANSWERS = ("ANSWER", "CHANGE_JOB_STATE", "REGISTER_JOB", "REGISTER_PROFILE",
                       "SET_JOB_METADATA", "NOTIFY", "TO_JOB_MSG")
ACCEPTED_QUERIES = ("consumed_energy",)
_EXECUTE_JOB_FIELDS = frozenset({"job_id", "alloc", "mapping"})


@dataclass(slots=True)
class AnswerPlace:
    """Where an answer event sits, for error messages; formatted only when one is raised."""

    now: float
    index: int
    kind: str = ""
    data: Any = None

    def __str__(self) -> str:
        place = f"at t={self.now}, answer event #{self.index}"
        return f"{place} {self.kind} {self.data!r:.200}" if self.kind else place


def _number(value: Any, converted: bool) -> float | None:
    if type(value) is float and converted:  # the usual case, checked first
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if converted else as_batsim_reads(value)


def answer_events(reply: Any, now: float, converted: bool) -> tuple[float, list[Any]]:
    """The ``now`` and events of ``reply``, an answer to the message sent at ``now``.

    ``converted``: the numbers were decoded as Batsim decodes them (answer text).
    """
    if not isinstance(reply, dict) or "events" not in reply or "now" not in reply:
        raise ProtocolError(f"at t={now}: the scheduler's answer is not a Batsim "
                            f"message with 'now' and 'events': {reply!r:.200}")
    stamp = _number(reply["now"], converted)
    if stamp is None or math.isnan(stamp) or math.isinf(stamp):
        raise ProtocolError(f"at t={now}: the answer's 'now' is not a number: {reply['now']!r}")
    if not isinstance(reply["events"], list):
        raise ProtocolError(f"at t={now}: 'events' of the answer is not a list")
    return stamp, reply["events"]


def answer_event(index: int, event: Any, now: float, answer_now: float,
                 converted: bool) -> tuple[AnswerPlace, float, dict[str, Any]]:
    """Event ``index`` of an answer: its place, timestamp and data (``parse_and_apply_event``)."""
    if not isinstance(event, dict) or "type" not in event:
        raise ProtocolError(f"{AnswerPlace(now, index)}: not an event object: {event!r:.200}")
    kind, data = event["type"], event.get("data", {})
    where = AnswerPlace(now, index, kind, data)
    if "timestamp" not in event:
        raise ProtocolError(f"{where}: the event has no 'timestamp'")
    stamp = _number(event["timestamp"], converted)
    if stamp is None or math.isnan(stamp):
        raise ProtocolError(f"{where}: 'timestamp' is not a number: {event['timestamp']!r}")
    if stamp > answer_now:
        raise ProtocolError(f"{where}: timestamp {stamp!r} is later than the answer's now "
                            f"({answer_now!r})")
    if kind in BATSIM_ONLY_ANSWERS:
        raise UnsupportedError(f"{where}: event type {kind!r} is not supported by the "
                               f"embedded engine (supported: {', '.join(SUPPORTED_ANSWERS)})")
    if kind not in SUPPORTED_ANSWERS:
        raise ProtocolError(f"{where}: unknown event type {kind!r}")
    if not isinstance(data, dict):
        raise ProtocolError(f"{where}: 'data' is not an object")
    return where, stamp, data


def resource_set(where: AnswerPlace, text: Any, field_name: str,
                 nb_nodes: int) -> tuple[np.ndarray, str]:
    """A resource set of an answer (``IntervalSet::from_string_hyphen``), within the platform."""
    try:
        nodes, canonical = parse_resources(text)
    except ValueError as exc:
        raise ProtocolError(f"{where}: '{field_name}' is not a resource set: {text!r} "
                            f"({exc})") from None
    if nodes[-1] >= nb_nodes:
        raise ProtocolError(f"{where}: '{field_name}' names machine {int(nodes[-1])} but "
                            f"the platform has {nb_nodes} (0-{nb_nodes - 1})")
    return nodes, canonical


def job_id_of(where: AnswerPlace, data: dict[str, Any]) -> str:
    job_id = data.get("job_id")
    if not isinstance(job_id, str):
        raise ProtocolError(f"{where}: 'job_id' is not a string: {job_id!r}")
    return job_id


def check_mapping(where: AnswerPlace, data: dict[str, Any], nb_allocated: int) -> None:
    """EXECUTE_JOB's ``mapping`` (executor -> rank in the allocation): the identity only."""
    if "mapping" not in data:
        return
    mapping = data["mapping"]
    if not isinstance(mapping, dict) or not mapping:
        raise ProtocolError(f"{where}: 'mapping' is not a non-empty object")
    pairs: dict[int, int] = {}
    try:
        for key, value in mapping.items():
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise ValueError
            pairs[int(key)] = int(value)
    except ValueError:
        raise ProtocolError(f"{where}: 'mapping' keys and values must be integers (or "
                            "strings of integers)") from None
    for executor, (key, rank) in enumerate(sorted(pairs.items())):
        if key != executor:
            raise ProtocolError(f"{where}: 'mapping' gives no resource to executor {executor}")
        if not 0 <= rank < nb_allocated:
            raise ProtocolError(f"{where}: 'mapping' puts executor {key} on resource {rank} "
                                f"of an allocation of {nb_allocated}")
    if len(pairs) != nb_allocated or any(k != v for k, v in pairs.items()):
        raise UnsupportedError(f"{where}: EXECUTE_JOB 'mapping' {mapping!r:.100} is not the "
                               "identity (executor i on the i-th allocated machine): other "
                               "mappings are not supported by the embedded engine")


def execute_job(where: AnswerPlace, data: dict[str, Any], nb_nodes: int
                ) -> tuple[str, np.ndarray, str]:
    """``handle_execute_job``: the job, its machines and their text."""
    extra = () if len(data) == 2 and "alloc" in data and "job_id" in data \
        else data.keys() - _EXECUTE_JOB_FIELDS  # the usual two fields, checked first
    if extra:
        raise UnsupportedError(f"{where}: EXECUTE_JOB fields {sorted(extra)} are not "
                               "supported by the embedded engine")
    job_id = job_id_of(where, data)
    nodes, text = resource_set(where, data.get("alloc"), "alloc", nb_nodes)
    check_mapping(where, data, len(nodes))
    return job_id, nodes, text


def set_resource_state(where: AnswerPlace, data: dict[str, Any], nb_nodes: int
                       ) -> tuple[np.ndarray, str, int]:
    """``handle_set_resource_state``: the machines, their text and the target pstate."""
    nodes, text = resource_set(where, data.get("resources"), "resources", nb_nodes)
    state = data.get("state")
    try:
        if isinstance(state, bool) or not isinstance(state, str | int):
            raise ValueError
        target = int(state)
    except ValueError:
        raise ProtocolError(f"{where}: 'state' is not a pstate number: {state!r}") from None
    return nodes, text, target


def call_me_later(where: AnswerPlace, data: dict[str, Any], converted: bool) -> float:
    """``handle_call_me_later``: the requested time."""
    when = _number(data.get("timestamp"), converted)
    if when is None or math.isnan(when):
        raise ProtocolError(f"{where}: 'timestamp' is not a number")
    if math.isinf(when):
        raise ProtocolError(f"{where}: CALL_ME_LATER at an infinite time")
    return when


def kill_job(where: AnswerPlace, data: dict[str, Any]) -> list[str]:
    """``handle_kill_job``: the ids of the jobs to kill."""
    ids = data.get("job_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise ProtocolError(f"{where}: 'job_ids' is not a non-empty list of job ids")
    return list(ids)


def query(where: AnswerPlace, data: dict[str, Any]) -> list[str]:
    """``handle_query``: the requests (only ``consumed_energy``)."""
    requests = data.get("requests")
    if len(data) != 1 or not isinstance(requests, dict) or not requests:
        raise ProtocolError(f"{where}: QUERY needs one non-empty 'requests' object")
    for key, value in requests.items():
        if key not in ACCEPTED_QUERIES:
            raise ProtocolError(f"{where}: unknown QUERY {key!r} (known: "
                                f"{', '.join(ACCEPTED_QUERIES)})")
        if value != {}:
            raise ProtocolError(f"{where}: QUERY {key!r} takes an empty object")
    return list(requests)
