"""Drive a pybatsim scheduler with the engine in the same process, without sockets.

pybatsim's ``Batsim`` object pulls messages from its network handler and
pushes answers back to it. :class:`EngineLink` stands in for that handler and
forwards each answer to the engine by a function call, so the scheduler class
runs unchanged, exactly as under ``pybatsim`` with a real socket.
"""

from __future__ import annotations

import time
from typing import Any

from batsim.batsim import Batsim, BatsimScheduler

from snficon.drivers.progress import RunProgress
from snficon.drivers.transcript import Transcript
from snficon.engine.simulator import BatsimEngine


class EngineLink:
    """A pybatsim network handler whose peer is an in-process :class:`BatsimEngine`."""

    def __init__(self, engine: BatsimEngine, transcript: Transcript | None = None,
                 progress: RunProgress | None = None) -> None:
        self.engine = engine
        self.transcript = transcript
        self.progress = progress
        self._answer: dict[str, Any] | None = None
        self._started = False
        self._sent_at = 0.0

    def bind(self) -> None:
        """Nothing to bind: pybatsim calls this on its network handler."""

    def close(self) -> None:
        """Nothing to close: pybatsim calls this after ``SIMULATION_ENDS``."""

    def recv(self, blocking: bool = False) -> dict[str, Any] | None:
        """The next simulator message (after handing the previous answer to the engine)."""
        if not self._started:
            self._started = True
            message = self.engine.first_message()
        else:
            message = self._deliver()
        if self.transcript is not None and message is not None:
            self.transcript.record("sim->sched", message)
        if self.progress is not None:
            self.progress.tick(self.engine)
        self._sent_at = time.perf_counter()
        return message

    def send(self, message: dict[str, Any]) -> None:
        """Keep the scheduler's answer until the engine asks for it."""
        self.engine.add_scheduling_time(time.perf_counter() - self._sent_at)
        if self.transcript is not None:
            self.transcript.record("sched->sim", message)
        self._answer = message

    def amend(self, events: list[dict[str, Any]]) -> None:
        """Add ``events`` to the answer the engine has not received yet (an answer
        completed after the scheduler's hook returned, as :mod:`snficon.rl.env` does)."""
        if self._answer is None:
            raise RuntimeError("no answer is waiting to be delivered")
        merged = list(self._answer.get("events", [])) + list(events)
        self._answer = {**self._answer,
                        "events": sorted(merged, key=lambda event: event["timestamp"])}

    def _deliver(self) -> dict[str, Any] | None:
        answer, self._answer = self._answer, None
        return self.engine.answer(answer)

    def finish(self) -> None:
        """Hand the answer to ``SIMULATION_ENDS`` to the engine, ending the run."""
        if self._answer is not None:
            self._deliver()


class LinkedBatsim(Batsim):
    """pybatsim's ``Batsim`` talking to an :class:`EngineLink` instead of a ZeroMQ socket.

    ``Batsim.__init__`` assigns ``self.network`` a socket handler and reads the
    first message from it; the property keeps the link in its place.
    """

    def __init__(self, scheduler: BatsimScheduler, link: EngineLink) -> None:
        self._link = link
        super().__init__(scheduler, network_endpoint="inproc://unused", timeout=0)

    @property
    def network(self) -> EngineLink:
        return self._link

    @network.setter
    def network(self, _handler: object) -> None:
        """Ignore the socket handler pybatsim builds (it is never bound)."""


def run_in_process(engine: BatsimEngine, scheduler: BatsimScheduler,
                   transcript: Transcript | None = None,
                   progress: RunProgress | None = None) -> None:
    """Run ``scheduler`` against ``engine`` until ``SIMULATION_ENDS`` is answered
    (``progress`` ticked once per message)."""
    link = EngineLink(engine, transcript, progress)
    batsim = LinkedBatsim(scheduler, link)
    batsim.start()
    link.finish()
