"""A dispatch order of one's own: the queued jobs that need most nodes start first.

Jobs start in decreasing node count (ties: submission order) on the idle
nodes of lowest id, until one does not fit: the jobs after it wait (no
backfilling). Waiting jobs are planned with the sequential plan. Run it with::

    snficon run --platform PLATFORM.xml --workload WORKLOAD.json \\
        --order largest_first.py:LargestFirst
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from snficon.core.node_choice import StateGroups
from snficon.core.parts import Dispatched
from snficon.core.plan import PlannedJob, sequential_plan
from snficon.core.view import ClusterView, JobStart, NodeState, QueuedJob


class LargestFirst:
    """Largest job first, no backfilling."""

    def __init__(self, params: object) -> None:
        self.params = params

    def dispatch(self, view: ClusterView) -> Dispatched:
        nodes = view.nodes
        queue = sorted(view.queue, key=lambda job: (-job.res, job.order))
        state = nodes.state.copy()
        release_req = nodes.release_req_s.copy()
        idle_since = nodes.idle_since_s.copy()
        idle = np.flatnonzero(state == NodeState.IDLE)
        starts: list[JobStart] = []
        for job in queue:
            if job.res > len(idle):
                break
            chosen, idle = idle[:job.res], idle[job.res:]
            state[chosen] = NodeState.COMPUTING
            release_req[chosen] = view.now + job.req_time_s
            idle_since[chosen] = np.nan
            starts.append(JobStart(job.job_id, tuple(chosen.tolist())))
        after = dataclasses.replace(nodes, state=state, release_req_s=release_req,
                                    idle_since_s=idle_since)
        return Dispatched(starts=starts, groups=StateGroups.of(after),
                          waiting=queue[len(starts):])

    def plan(self, groups: StateGroups, release: np.ndarray, jobs: Sequence[QueuedJob],
             durations: Sequence[float], now: float) -> Sequence[PlannedJob]:
        return sequential_plan(groups, release, jobs, durations, now)
