"""The embedded engine: Batsim 4.2.1 on SimGrid 3.32, one protocol message at a time.

The engine is the simulator side of the Batsim protocol and nothing else: it
produces ``{"now", "events"}`` messages and consumes the scheduler's answers.
A driver (in-process or ZeroMQ) carries the messages::

    message = engine.first_message()
    while message is not None:
        message = engine.answer(scheduler(message))

Inside, it runs Batsim's own actors -- the server, one job submitter per
workload, a request-reply actor per message, and the actors of jobs,
``CALL_ME_LATER`` waiters, kills and pstate switches (:mod:`.server`,
:mod:`.reader`, :mod:`.actors`) -- on a model of SimGrid's maestro loop
(:mod:`.kernel`) and of its clock and actions (:mod:`.surf`). Event times,
their grouping into messages and their order within a message follow from
that model, floating-point clock included; nothing is ordered by a rule of
its own.

The messages given to an in-process scheduler carry what a JSON parser reads
from Batsim's text (six decimals); :meth:`BatsimEngine.message_text` is that
text, for a driver that sends it. Answers are read as Batsim reads them:
:meth:`BatsimEngine.answer` takes the scheduler's decoded message,
:meth:`BatsimEngine.answer_text` its text.

A scheduler that breaks the protocol raises :class:`ProtocolError` naming the
event; :meth:`BatsimEngine.outputs` still holds what happened until then.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Sequence
from typing import Any

import numpy as np

from snficon.engine import jobs as J
from snficon.engine.actors import job_submitter
from snficon.engine.context import BatsimContext
from snficon.engine.jitter import TransitionJitter
from snficon.engine.kernel import Kernel
from snficon.engine.machines import Machines
from snficon.engine.outputs import EngineStats, OutputTables, schedule_summary
from snficon.engine.reader import OutgoingMessage
from snficon.engine.server import Server
from snficon.engine.surf import Surf
from snficon.engine.wire import parse_answer, six_decimals
from snficon.errors import DeadlockError, ProtocolError
from snficon.intervals import format_resources
from snficon.platform.model import Platform
from snficon.workload.model import Workload


class BatsimEngine:
    """Simulate a platform and workloads under a scheduler's decisions (Batsim 4.2.1)."""

    def __init__(self, platform: Platform, workloads: Sequence[Workload], *,
                 energy: bool = True, workload_labels: Sequence[str] | None = None,
                 transition_jitter: TransitionJitter | None = None) -> None:
        """``transition_jitter``: draw each switch's duration (not Batsim's model, see
        :mod:`.jitter`); None (the default) keeps Batsim's fixed durations."""
        self.platform = platform
        self.energy = energy
        surf = Surf()
        machines = Machines(platform)
        kernel = Kernel(surf, platform.nb_nodes,
                        lambda nodes, delta: machines.change_load(surf.now, nodes, delta))
        self.machines = machines
        self.stats = EngineStats()
        self.tables = OutputTables(energy_enabled=energy)
        self.ctx = BatsimContext(platform=platform, energy=energy, surf=surf, kernel=kernel,
                                 machines=machines, tables=self.tables, stats=self.stats,
                                 jitter=transition_jitter)
        self._workloads = list(workloads)
        labels = list(workload_labels or [w.source for w in workloads])
        self.server = Server(self.ctx, self._workloads, labels, len(self._workloads))
        names = [f"w{index}" for index in range(len(self._workloads))]
        self.ctx.jobs = J.JobTable(list(zip(names, self._workloads, strict=True)))
        for name in names:
            kernel.spawn(f"workload_submitter_{name}",
                         job_submitter(self.ctx, name, self.ctx.jobs.submission_order(name)))
        kernel.spawn("server", self.server.code())
        if energy:
            for pstate in sorted(set(machines.pstate.tolist())):
                nodes = np.flatnonzero(machines.pstate == pstate)
                self.tables.record_pstate(0.0, format_resources(nodes), pstate)
        self._loop: Generator[Any, Any, None] = kernel.run()
        self._message: OutgoingMessage | None = None
        self._finished = False

    # ------------------------------------------------------------------ driving

    @property
    def now(self) -> float:
        """SimGrid's clock."""
        return self.ctx.surf.now

    def first_message(self) -> dict[str, Any]:
        """The ``SIMULATION_BEGINS`` message (time 0)."""
        return self._next(None)

    def answer(self, reply: Any) -> dict[str, Any] | None:
        """Apply the scheduler's answer (a decoded message) to the last message; return the
        next one, or None once the answer to ``SIMULATION_ENDS`` has been read."""
        return self._next((reply, False))

    def answer_text(self, text: str) -> dict[str, Any] | None:
        """Like :meth:`answer` for the answer's JSON text, read with Batsim's number parser."""
        try:
            reply = parse_answer(text)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, a 5,000-digit number
            now = self._message.now if self._message else 0.0
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else (
                "nested too deeply" if isinstance(exc, RecursionError) else str(exc))
            raise ProtocolError(f"at t={now}: the scheduler's answer is not JSON "
                                f"({why}): {text[:200]!r}") from None
        return self._next((reply, True))

    def message_text(self) -> str:
        """The last message as Batsim writes it (doubles with six decimals)."""
        message = self._message
        assert message is not None
        return (f'{{"now":{message.now:f},"events":['
                + ",".join(event.as_text() for event in message.events) + "]}")

    def _next(self, value: Any) -> dict[str, Any] | None:
        if self._finished:
            raise RuntimeError("the simulation is over")
        if value is None and self._message is not None:
            raise RuntimeError("first_message() called twice")
        if value is not None and self._message is None:
            raise RuntimeError("answer() called with no message outstanding")
        try:
            message = next(self._loop) if value is None else self._loop.send(value)
        except StopIteration:
            self._finished = True
            self._message = None
            self._finalise_schedule()
            if not self.server.end_acknowledged:
                self._deadlock()
            return None
        self._message = message
        now = six_decimals(message.now)
        stamps = {message.now: now}  # the events of a message mostly share one timestamp
        events = []
        for event in message.events:
            stamp = stamps.get(event.timestamp)
            if stamp is None:
                stamp = stamps[event.timestamp] = six_decimals(event.timestamp)
            events.append(event.as_decoded(stamp))
        return {"now": now, "events": events}

    def _deadlock(self) -> None:
        waiting = [job.full_id for job in self.ctx.jobs.values() if job.state == J.SUBMITTED]
        raise DeadlockError(
            f"at t={self.now}: nothing left to simulate but {len(waiting)} job(s) were never "
            f"started nor rejected by the scheduler (first: {', '.join(waiting[:5])})")

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

    def _finalise_schedule(self) -> None:
        ctx = self.ctx
        self.stats.energy_first_submission = max(ctx.energy_first_submission, 0.0)
        self.stats.energy_last_completion = ctx.energy_last_completion
        self.tables.schedule = schedule_summary(
            self.tables.summary, nb_jobs=len(ctx.jobs), nb_machines=self.platform.nb_nodes,
            time_in_state=self.machines.time_in_state, stats=self.stats, energy=self.energy)
