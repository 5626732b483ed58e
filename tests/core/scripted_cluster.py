"""A scripted cluster that drives a composed policy as the adapter does, for layer tests.

Nodes never sleep (the tests give IPM and ICON a timeout longer than the
runs), every node has the ``conftest`` figures. Each message is one instant:
the arrivals, true completions and requested calls due then, or the kills
the previous answer asked for (a ``KILL_JOB`` ends the job at once, as in
Batsim, and the scheduler hears of it in a new message at the same time).
:meth:`ScriptedCluster.run` returns how each job ended.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from snficon.core.clock import is_due
from snficon.core.names import Trigger
from snficon.core.policy import Policy
from snficon.core.view import (
    ClusterView,
    CompletedJob,
    NodeState,
    NodeTable,
    QueuedJob,
    RunningJob,
)
from snficon.part_registry import compose

from .conftest import E_OFF_J, E_ON_J, P_IDLE_W, T_OFF_S, T_ON_S

#: Longer than any scripted run: no node is ever switched off.
NEVER_S = 1e9


@dataclass(frozen=True)
class ScriptedJob:
    """A job of the script: it arrives at ``submit``, needs ``res`` nodes, plans with
    ``req`` (its limit) and would run ``runtime`` s; ``extra`` holds its other fields."""

    job_id: str
    res: int
    req: float
    runtime: float
    submit: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    """How a job ended: its start, end, nodes and whether it was killed."""

    start: float
    end: float
    nodes: tuple[int, ...]
    killed: bool


def policy(order: str, power: str, nodes: int, **options: Any) -> Policy:
    """``order`` + ``power`` + the time-limit layer on ``nodes`` nodes (sleep power 0 W),
    with timeouts that never expire."""
    timeout = {"timeout": NEVER_S}
    composition = compose(order, power, ("time-limits",), {**timeout, **options})
    return composition.build(np.zeros(nodes))


class ScriptedCluster:
    """``nodes`` idle nodes and a list of jobs, driven through a policy to the end."""

    def __init__(self, nodes: int, jobs: list[ScriptedJob]) -> None:
        self.size = nodes
        self.jobs = {job.job_id: job for job in jobs}
        self.invocations: list[float] = []

    def run(self, decide: Policy, horizon: float = 1e7) -> dict[str, Outcome]:
        state = np.full(self.size, NodeState.IDLE, dtype=np.int8)
        idle_since = np.zeros(self.size)
        release_req = np.full(self.size, np.nan)
        queue: dict[str, QueuedJob] = {}
        running: dict[str, tuple[tuple[int, ...], float]] = {}
        ended: dict[str, Outcome] = {}
        calls: set[float] = set()
        kills: list[str] = []
        arrivals = sorted(self.jobs.values(), key=lambda j: (j.submit, j.job_id))
        now, order, trigger = 0.0, 0, Trigger.INITIAL
        while True:
            new_arrivals, completions = [], []
            for job_id in kills:
                nodes, start = running.pop(job_id)
                completions.append(self._end(job_id, nodes, start, now, True, ended))
            while arrivals and is_due(arrivals[0].submit, now):
                job = arrivals.pop(0)
                queued = QueuedJob(job.job_id, job.res, job.req, job.submit, order,
                                   {"reqtime": job.req, **job.extra})
                order += 1
                queue[job.job_id] = queued
                new_arrivals.append(queued)
            for job_id, (nodes, start) in list(running.items()):
                if is_due(start + self.jobs[job_id].runtime, now):
                    del running[job_id]
                    completions.append(self._end(job_id, nodes, start, now, False, ended))
            for done in completions:
                state[list(done.nodes)] = NodeState.IDLE
                idle_since[list(done.nodes)] = now
                release_req[list(done.nodes)] = np.nan
            view = ClusterView(
                now=now, trigger=trigger, nodes=self._table(state, idle_since, release_req),
                queue=tuple(queue.values()),
                running=tuple(RunningJob(j, nodes, start, self.jobs[j].req)
                              for j, (nodes, start) in running.items()),
                arrivals=tuple(new_arrivals), completions=tuple(completions))
            self.invocations.append(now)
            decisions = decide(view)
            assert not decisions.switch_on and not decisions.switch_off, "nodes never switch"
            for start in decisions.starts:
                job = queue.pop(start.job_id)
                running[start.job_id] = (start.nodes, now)
                state[list(start.nodes)] = NodeState.COMPUTING
                idle_since[list(start.nodes)] = np.nan
                release_req[list(start.nodes)] = now + job.req_time_s
            kills = list(decisions.kills)
            calls.update(t for t in decisions.call_at if t > now)
            calls = {t for t in calls if not is_due(t, now)}
            if kills:
                trigger = Trigger.COMPLETION
                continue
            if not running and not queue and not arrivals:
                break  # what is left are idle-timer calls
            upcoming = list(calls)
            upcoming += [start + self.jobs[j].runtime for j, (_, start) in running.items()]
            upcoming += [arrivals[0].submit] if arrivals else []
            if not upcoming:
                break
            now = min(upcoming)
            assert now < horizon, "the script does not end"
            trigger = (Trigger.ARRIVAL if arrivals and is_due(arrivals[0].submit, now)
                       else Trigger.COMPLETION if any(
                           is_due(start + self.jobs[j].runtime, now)
                           for j, (_, start) in running.items()) else Trigger.CALLBACK)
        assert not queue, f"jobs never started: {sorted(queue)}"
        return ended

    def _end(self, job_id: str, nodes: tuple[int, ...], start: float, now: float,
             killed: bool, ended: dict[str, Outcome]) -> CompletedJob:
        ended[job_id] = Outcome(start=start, end=now, nodes=nodes, killed=killed)
        return CompletedJob(job_id, nodes, now - start, self.jobs[job_id].req, now)

    def _table(self, state: np.ndarray, idle_since: np.ndarray,
               release_req: np.ndarray) -> NodeTable:
        full = np.full(self.size, 1.0)
        return NodeTable(state=state.copy(), idle_since_s=idle_since.copy(),
                         transition_end_s=np.full(self.size, math.nan),
                         release_req_s=release_req.copy(), p_idle_w=full * P_IDLE_W,
                         t_on_s=full * T_ON_S, t_off_s=full * T_OFF_S, e_on_j=full * E_ON_J,
                         e_off_j=full * E_OFF_J)
