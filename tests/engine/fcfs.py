"""A plain FCFS pybatsim scheduler with an idle timeout, for the engine's tests.

Jobs start in submission order on the lowest-numbered idle nodes, without
backfilling; a job larger than the platform is rejected. When the queue head
does not fit, just enough sleeping nodes are woken for it. An idle node whose
timer (``timeout`` seconds since it became idle) expired while the queue is
empty is switched off. It shares no code with the decision core, so the
engine's tests and benchmark do not depend on the policies. Load it as pybatsim
does, by file: ``load_scheduler("tests/engine/fcfs.py", {"timeout": 15})``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from batsim.batsim import BatsimScheduler, Job

from snficon.adapter.scheduler import procset_of, sleep_pstate_of
from snficon.core.view import COMPUTING, IDLE, SLEEPING, SWITCHING_OFF, SWITCHING_ON

DEFAULT_TIMEOUT_S = 7200.0


class Fcfs(BatsimScheduler):
    """FCFS without backfilling, wake on demand, switch off after ``timeout`` idle seconds."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(dict(options or {}))
        unknown = set(self.options) - {"timeout"}
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)} for Fcfs "
                             "(known: timeout)")
        self.timeout_s = float(self.options.get("timeout", DEFAULT_TIMEOUT_S))
        self.queue: list[Job] = []
        self.state = np.zeros(0, dtype=np.int8)
        self.idle_since = np.zeros(0)
        self.sleep_pstate: int | None = None
        self.calls: set[float] = set()

    def onSimulationBegins(self) -> None:  # noqa: N802 (pybatsim hook)
        n = self.bs.nb_compute_resources
        self.sleep_pstate = sleep_pstate_of(self.bs.compute_resources[0])
        self.state = np.full(n, IDLE, dtype=np.int8)
        self.idle_since = np.zeros(n)

    def onJobSubmission(self, job: Job) -> None:  # noqa: N802
        if job.requested_resources > len(self.state):
            self.bs.reject_jobs([job])
        else:
            self.queue.append(job)

    def onJobCompletion(self, job: Job) -> None:  # noqa: N802
        for first, last in job.allocation.intervals():
            self.state[first:last + 1] = IDLE
            self.idle_since[first:last + 1] = self.bs.time()

    def onMachinePStateChanged(self, nodes: tuple[int, int], pstate: str) -> None:  # noqa: N802
        asleep = self.sleep_pstate is not None and int(pstate) == self.sleep_pstate
        self.state[nodes[0]:nodes[1] + 1] = SLEEPING if asleep else IDLE
        self.idle_since[nodes[0]:nodes[1] + 1] = self.bs.time()

    def onRequestedCall(self) -> None:  # noqa: N802
        """Decisions are taken once per message, in :meth:`onNoMoreEvents`."""

    def _in_state(self, state: int) -> np.ndarray:
        return np.flatnonzero(self.state == state)

    def onNoMoreEvents(self) -> None:  # noqa: N802
        if not len(self.state):
            return
        self._start_jobs()
        if self.queue:
            self._wake_for_head()
        else:
            self._switch_off_expired()
        self._request_next_expiry()

    def _start_jobs(self) -> None:
        started = []
        idle = self._in_state(IDLE)
        while self.queue and self.queue[0].requested_resources <= len(idle):
            job = self.queue.pop(0)
            chosen, idle = idle[:job.requested_resources], idle[job.requested_resources:]
            job.allocation = procset_of(chosen.tolist())
            self.state[chosen] = COMPUTING
            started.append(job)
        if started:
            self.bs.execute_jobs(started)

    def _wake_for_head(self) -> None:
        ready = int(np.count_nonzero((self.state == IDLE) | (self.state == SWITCHING_ON)))
        missing = self.queue[0].requested_resources - ready
        wake = self._in_state(SLEEPING)[:max(missing, 0)]
        if len(wake) and self.sleep_pstate is not None:
            self.state[wake] = SWITCHING_ON
            self.bs.set_resource_state(procset_of(wake.tolist()), 0)

    def _switch_off_expired(self) -> None:
        if self.sleep_pstate is None:
            return
        idle = self._in_state(IDLE)
        expired = idle[self.bs.time() - self.idle_since[idle] >= self.timeout_s]
        if len(expired):
            self.state[expired] = SWITCHING_OFF
            self.bs.set_resource_state(procset_of(expired.tolist()), self.sleep_pstate)

    def _request_next_expiry(self) -> None:
        if self.sleep_pstate is None:
            return
        ends = self.idle_since[self.state == IDLE] + self.timeout_s
        future = ends[ends > self.bs.time()]
        if len(future):
            first = float(future.min())
            if first not in self.calls:
                self.calls.add(first)
                self.bs.wake_me_up_at(first)
