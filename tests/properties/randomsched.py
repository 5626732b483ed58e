"""Randomsched: a random but protocol-abiding pybatsim scheduler for property tests.

Loadable with ``load_scheduler("tests/properties/randomsched.py", {"seed": 3})``
and ``pybatsim tests/properties/randomsched.py -o '{"seed": 3}'`` (pybatsim
derives the class name ``Randomsched`` from the file name).

Like the conformance probe, it keeps its own view of every node (idle,
computing, switching_off, sleeping, switching_on) from the protocol hooks and
decides once per message, in :meth:`Randomsched.onNoMoreEvents`, with a
``random.Random(seed)``. The seed also draws the scheduler's temperament (how
eager it is to start jobs, to switch nodes off and on, to ask for calls).

Each decision round, in a random order of the three random phases:

* starts a random selection of queued jobs that fit, on randomly chosen idle nodes;
* switches random idle nodes off (to the sleep pstate of their ``sleep_pstates``),
  in one or more ``SET_RESOURCE_STATE`` requests, up to a random budget of
  switch-offs per node and run;
* wakes random sleeping nodes (pstate 0), in one or more requests;

then rejects the jobs larger than the platform and makes sure the run goes on:
when jobs wait and nothing is pending (no job running, no node switching, no
call requested), the queue head is started if it fits, else just enough
sleeping nodes are woken for it. After a few rounds without a start it stops
switching nodes off and asking for calls and starts the queue head first,
so that every run ends. While jobs remain it sometimes asks ``CALL_ME_LATER``
strictly in the future.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from batsim.batsim import BatsimScheduler, Job
from procset import ProcSet

IDLE, COMPUTING, SLEEPING = "idle", "computing", "sleeping"
SWITCHING_OFF, SWITCHING_ON = "switching_off", "switching_on"
#: Rounds without a job start after which the scheduler only seeks progress.
STALL_LIMIT = 3
#: At most this many random switch-offs per node and run (keeps runs short).
MAX_OFFS_PER_NODE = 6


def _sleep_pstate(resource: dict[str, Any]) -> int | None:
    spec = resource.get("properties", {}).get("sleep_pstates")
    return int(spec.split(",")[0].split(":")[0]) if spec else None


class Randomsched(BatsimScheduler):
    """Random decisions that never break the Batsim protocol and always progress."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(dict(options or {}))
        unknown = set(self.options) - {"seed"}
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)} for Randomsched (known: seed)")
        self.rng = random.Random(int(self.options.get("seed", 0)))
        self.p_start = self.rng.choice([0.2, 0.5, 0.9, 1.0])
        self.p_off = self.rng.choice([0.0, 0.1, 0.3, 0.6])
        self.p_on = self.rng.choice([0.0, 0.1, 0.3, 0.6])
        self.p_call = self.rng.choice([0.0, 0.1, 0.3])
        self.off_budget = 0  # random switch-offs left (set per platform size)
        self.state: list[str] = []
        self.sleep_pstate: list[int | None] = []
        self.queue: list[Job] = []
        self.to_reject: list[Job] = []
        self.calls: list[float] = []
        self.stalled = 0
        self.started_now = False
        self.ended = False

    # ------------------------------------------------------------------ hooks

    def onSimulationBegins(self) -> None:  # noqa: N802 (pybatsim hook)
        resources = self.bs.compute_resources
        self.state = [IDLE] * self.bs.nb_compute_resources
        self.sleep_pstate = [_sleep_pstate(resources[i]) for i in range(len(self.state))]
        self.off_budget = self.rng.randint(0, MAX_OFFS_PER_NODE) * len(self.state)

    def onSimulationEnds(self) -> None:  # noqa: N802
        self.ended = True

    def onJobSubmission(self, job: Job) -> None:  # noqa: N802
        if job.requested_resources > len(self.state):
            self.to_reject.append(job)
        else:
            self.queue.append(job)

    def onJobCompletion(self, job: Job) -> None:  # noqa: N802
        for node in job.allocation:
            self.state[node] = IDLE

    def onMachinePStateChanged(self, nodes: tuple[int, int], pstate: str) -> None:  # noqa: N802
        for node in range(nodes[0], nodes[1] + 1):
            asleep = self.sleep_pstate[node] is not None and int(pstate) == self.sleep_pstate[node]
            self.state[node] = SLEEPING if asleep else IDLE

    def onRequestedCall(self) -> None:  # noqa: N802
        """Decisions are taken once per message, in :meth:`onNoMoreEvents`."""

    # ------------------------------------------------------------------ decisions

    def onNoMoreEvents(self) -> None:  # noqa: N802
        if not self.state or self.ended:
            return
        now = self.bs.time()
        # A call is over once the clock reached it: messages print six decimals.
        self.calls = [t for t in self.calls if t > now + 1e-6]
        self.started_now = False
        forced = bool(self.queue) and self.stalled >= STALL_LIMIT
        if forced:
            self._start_head()
        phases: list[Callable[[], None]] = [self._start_random, self._wake_random]
        if not forced:
            phases.append(self._switch_off_random)
        self.rng.shuffle(phases)
        for phase in phases:
            phase()
        self._reject_oversized()
        self._ensure_progress()
        if not forced:
            self._maybe_call_later(now)
        self.stalled = 0 if self.started_now or not self.queue else self.stalled + 1

    def _nodes(self, state: str) -> list[int]:
        return [node for node, s in enumerate(self.state) if s == state]

    def _execute(self, job: Job, nodes: list[int]) -> None:
        job.allocation = ProcSet(*nodes)
        for node in nodes:
            self.state[node] = COMPUTING
        self.queue.remove(job)
        self.bs.execute_jobs([job])
        self.started_now = True

    def _start_head(self) -> None:
        idle = self._nodes(IDLE)
        head = self.queue[0]
        if head.requested_resources <= len(idle):
            self._execute(head, self.rng.sample(idle, head.requested_resources))

    def _start_random(self) -> None:
        for job in list(self.queue):
            idle = self._nodes(IDLE)
            if job.requested_resources <= len(idle) and self.rng.random() < self.p_start:
                self._execute(job, self.rng.sample(idle, job.requested_resources))

    def _switch(self, nodes: list[int], pstate: int, state: str) -> None:
        """Send ``nodes`` to ``pstate`` in one or more random requests."""
        self.rng.shuffle(nodes)
        while nodes:
            size = self.rng.randint(1, len(nodes))
            group, nodes = sorted(nodes[:size]), nodes[size:]
            for node in group:
                self.state[node] = state
            self.bs.set_resource_state(ProcSet(*group), pstate)

    def _switch_off_random(self) -> None:
        by_pstate: dict[int, list[int]] = {}
        for node in self._nodes(IDLE):
            pstate = self.sleep_pstate[node]
            if pstate is not None and self.off_budget > 0 and self.rng.random() < self.p_off:
                by_pstate.setdefault(pstate, []).append(node)
                self.off_budget -= 1
        for pstate, nodes in sorted(by_pstate.items()):
            self._switch(nodes, pstate, SWITCHING_OFF)

    def _wake_random(self) -> None:
        chosen = [n for n in self._nodes(SLEEPING) if self.rng.random() < self.p_on]
        if chosen:
            self._switch(chosen, 0, SWITCHING_ON)

    def _reject_oversized(self) -> None:
        if self.to_reject:
            self.bs.reject_jobs(self.to_reject)
            self.to_reject = []

    def _pending(self) -> bool:
        """True if something will reach the scheduler later whatever it decides now."""
        moving = (COMPUTING, SWITCHING_OFF, SWITCHING_ON)
        return bool(self.calls) or any(s in moving for s in self.state)

    def _ensure_progress(self) -> None:
        if not self.queue or self._pending():
            return
        head = self.queue[0]
        idle = self._nodes(IDLE)
        if head.requested_resources <= len(idle):
            self._execute(head, self.rng.sample(idle, head.requested_resources))
            return
        sleeping = self._nodes(SLEEPING)
        wake = self.rng.sample(sleeping, head.requested_resources - len(idle))
        self._switch(wake, 0, SWITCHING_ON)

    def _maybe_call_later(self, now: float) -> None:
        jobs_remain = bool(self.queue) or COMPUTING in self.state
        if not jobs_remain or self.rng.random() >= self.p_call:
            return
        if self.rng.random() < 0.5:
            when = now + self.rng.randint(1, 30)
        else:
            when = now + self.rng.uniform(0.01, 40.0)
        if when > now:
            self.calls.append(when)
            self.bs.wake_me_up_at(when)
