"""Drive a scheduler process over ZeroMQ, as the ``batsim`` process does.

The engine connects a REQ socket to the scheduler's REP socket (pybatsim binds
``tcp://*:28000`` by default) and exchanges one JSON message per step: the
engine's own text of each message (Batsim's six-decimal numbers) and the
scheduler's answer text, which the engine reads with Batsim's number parser.
A scheduler that dies or stops answering is detected by a timeout on each
answer: the run stops with :class:`SchedulerTimeoutError` instead of hanging.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import zmq

from snficon.drivers.transcript import Transcript
from snficon.engine.simulator import BatsimEngine
from snficon.errors import InputError, ProtocolError, SchedulerTimeoutError

DEFAULT_ENDPOINT = "tcp://localhost:28000"


def run_over_zmq(engine: BatsimEngine, endpoint: str = DEFAULT_ENDPOINT, *,
                 answer_timeout_s: float = 600.0,
                 transcript: Transcript | None = None,
                 peer_alive: Callable[[], bool] | None = None) -> None:
    """Run the engine against the scheduler listening at ``endpoint``.

    ``answer_timeout_s`` bounds the wall-clock wait for each answer (the first
    one included, which covers a scheduler that never started). When the
    caller owns the scheduler process, ``peer_alive`` tells whether it still
    runs, so that a crash ends the run at once rather than at the timeout.
    """
    context = zmq.Context()
    socket = context.socket(zmq.REQ)
    socket.setsockopt(zmq.LINGER, 0)
    try:
        _connect(socket, endpoint)
    except InputError:
        socket.close(linger=0)
        context.term()
        raise
    poller = zmq.Poller()
    poller.register(socket, zmq.POLLIN)
    try:
        message: dict[str, Any] | None = engine.first_message()
        while message is not None:
            if transcript is not None:
                transcript.record("sim->sched", message)
            socket.send_string(engine.message_text())
            sent_at = time.perf_counter()
            _wait_for_answer(poller, message, endpoint, answer_timeout_s, peer_alive)
            raw = _answer_text(socket.recv(), message)
            engine.add_scheduling_time(time.perf_counter() - sent_at)
            if transcript is not None:
                transcript.record_text("sched->sim", raw)
            message = engine.answer_text(raw)
    finally:
        socket.close(linger=0)
        context.term()


def _connect(socket: zmq.Socket, endpoint: str) -> None:
    """``socket.connect(endpoint)``; InputError naming an endpoint ZeroMQ cannot parse."""
    try:
        socket.connect(endpoint)
    except zmq.ZMQError as exc:  # not transport://address, or an unknown transport
        raise InputError(f"cannot connect to the scheduler endpoint {endpoint!r}: {exc} "
                         "(give tcp://HOST:PORT, e.g. tcp://127.0.0.1:28000)") from None


def check_endpoint(endpoint: str) -> None:
    """Raise InputError now if ``endpoint`` is not one ZeroMQ can connect to (before any
    output is written); nothing is sent."""
    context = zmq.Context()
    socket = context.socket(zmq.REQ)
    try:
        _connect(socket, endpoint)
    finally:
        socket.close(linger=0)
        context.term()


def _answer_text(data: bytes, message: dict[str, Any]) -> str:
    """The scheduler's answer as text; ProtocolError when it is not UTF-8 (Batsim's JSON)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"at t={message['now']}: the scheduler's answer is not UTF-8 text "
                            f"(byte 0x{data[exc.start]:02x} at offset {exc.start}): "
                            f"{data[:200]!r}") from None


def _wait_for_answer(poller: zmq.Poller, message: dict[str, Any], endpoint: str,
                     timeout_s: float, peer_alive: Callable[[], bool] | None) -> None:
    deadline = time.monotonic() + timeout_s
    kinds = ", ".join(e["type"] for e in message["events"])
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise SchedulerTimeoutError(
                f"the scheduler at {endpoint} did not answer within {timeout_s:g} s "
                f"(message at t={message['now']} with {kinds}); is it running?")
        if poller.poll(int(min(left, 0.2) * 1000) + 1):
            return
        if peer_alive is not None and not peer_alive():
            raise SchedulerTimeoutError(
                f"the scheduler process exited before answering the message at "
                f"t={message['now']} ({kinds})")
