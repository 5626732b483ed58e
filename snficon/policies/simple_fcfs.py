"""A plain FCFS scheduler with an idle timeout: the project's first, simplest policy.

Jobs start in submission order on the lowest-numbered idle nodes, without
backfilling; a job larger than the platform is rejected. When the queue head
does not fit, just enough sleeping nodes are woken for it. An idle node whose
timer (``timeout`` seconds since it became idle) expired while the queue is
empty is switched off. It is the reference point of the demo until the paper's
policies arrive; it uses only protocol features the paper's policies need.
"""

from __future__ import annotations

from typing import Any

from batsim.batsim import BatsimScheduler, Job
from procset import ProcSet

DEFAULT_TIMEOUT_S = 7200.0


def _sleep_pstate(resource: dict[str, Any]) -> int | None:
    spec = resource.get("properties", {}).get("sleep_pstates")
    return int(spec.split(",")[0].split(":")[0]) if spec else None


class SimpleFcfs(BatsimScheduler):
    """FCFS without backfilling, wake on demand, switch off after ``timeout`` idle seconds."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(dict(options or {}))
        unknown = set(self.options) - {"timeout"}
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)} for SimpleFcfs "
                             "(known: timeout)")
        self.timeout_s = float(self.options.get("timeout", DEFAULT_TIMEOUT_S))
        self.queue: list[Job] = []
        self.state: list[str] = []
        self.idle_since: list[float] = []
        self.sleep_pstate: int | None = None
        self.calls: set[float] = set()

    def onSimulationBegins(self) -> None:  # noqa: N802 (pybatsim hook)
        n = self.bs.nb_compute_resources
        self.sleep_pstate = _sleep_pstate(self.bs.compute_resources[0])
        self.state = ["idle"] * n
        self.idle_since = [0.0] * n

    def onJobSubmission(self, job: Job) -> None:  # noqa: N802
        if job.requested_resources > len(self.state):
            self.bs.reject_jobs([job])
        else:
            self.queue.append(job)

    def onJobCompletion(self, job: Job) -> None:  # noqa: N802
        for node in job.allocation:
            self.state[node] = "idle"
            self.idle_since[node] = self.bs.time()

    def onMachinePStateChanged(self, nodes: tuple[int, int], pstate: str) -> None:  # noqa: N802
        asleep = self.sleep_pstate is not None and int(pstate) == self.sleep_pstate
        for node in range(nodes[0], nodes[1] + 1):
            self.state[node] = "sleeping" if asleep else "idle"
            self.idle_since[node] = self.bs.time()

    def onRequestedCall(self) -> None:  # noqa: N802
        """Decisions are taken once per message, in :meth:`onNoMoreEvents`."""

    def _in_state(self, state: str) -> list[int]:
        return [node for node, s in enumerate(self.state) if s == state]

    def onNoMoreEvents(self) -> None:  # noqa: N802
        if not self.state:
            return
        self._start_jobs()
        if self.queue:
            self._wake_for_head()
        else:
            self._switch_off_expired()
        self._request_next_expiry()

    def _start_jobs(self) -> None:
        started = []
        idle = self._in_state("idle")
        while self.queue and self.queue[0].requested_resources <= len(idle):
            job = self.queue.pop(0)
            chosen, idle = idle[:job.requested_resources], idle[job.requested_resources:]
            job.allocation = ProcSet(*chosen)
            for node in chosen:
                self.state[node] = "computing"
            started.append(job)
        if started:
            self.bs.execute_jobs(started)

    def _wake_for_head(self) -> None:
        ready = len(self._in_state("idle")) + len(self._in_state("switching_on"))
        missing = self.queue[0].requested_resources - ready
        wake = self._in_state("sleeping")[:max(missing, 0)]
        if wake and self.sleep_pstate is not None:
            for node in wake:
                self.state[node] = "switching_on"
            self.bs.set_resource_state(ProcSet(*wake), 0)

    def _switch_off_expired(self) -> None:
        if self.sleep_pstate is None:
            return
        now = self.bs.time()
        expired = [n for n in self._in_state("idle") if now - self.idle_since[n] >= self.timeout_s]
        if expired:
            for node in expired:
                self.state[node] = "switching_off"
            self.bs.set_resource_state(ProcSet(*expired), self.sleep_pstate)

    def _request_next_expiry(self) -> None:
        if self.sleep_pstate is None:
            return
        now = self.bs.time()
        future = [self.idle_since[n] + self.timeout_s for n in self._in_state("idle")]
        future = [t for t in future if t > now]
        if future and min(future) not in self.calls:
            self.calls.add(min(future))
            self.bs.wake_me_up_at(min(future))
