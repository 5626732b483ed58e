"""The cluster state a scheduler rebuilds from protocol events.

Batsim tells a scheduler what happened (submissions, completions, finished
switches); the tracker keeps the node arrays and the job lists that follow
from those events and from the scheduler's own decisions, and freezes them
into a :class:`ClusterView` for the policy.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from snficon.core.node_choice import StateGroups
from snficon.core.view import (
    ClusterView,
    CompletedJob,
    NodeState,
    NodeTable,
    QueuedJob,
    RunningJob,
    RunningTable,
)
from snficon.platform.model import PowerModel


class RunningArrays:
    """The running jobs' start and requested times, one entry per job in start order,
    and each node's job index, kept up to date job by job (the source of a view's
    :class:`RunningTable`, so that no invocation walks the running jobs one by one)."""

    def __init__(self, nb_nodes: int, capacity: int = 64) -> None:
        self.count = 0
        self.start_s = np.empty(capacity)
        self.req_time_s = np.empty(capacity)
        self.node_job = np.full(nb_nodes, -1, dtype=np.int64)

    def append(self, nodes: tuple[int, ...], start_s: float, req_time_s: float) -> None:
        """A job started on ``nodes``: it becomes the last entry."""
        n = self.count
        if n == len(self.start_s):  # full: double the room
            self.start_s = np.concatenate([self.start_s, np.empty(max(n, 1))])
            self.req_time_s = np.concatenate([self.req_time_s, np.empty(max(n, 1))])
        self.start_s[n], self.req_time_s[n] = start_s, req_time_s
        self.node_job[list(nodes)] = n
        self.count = n + 1

    def remove(self, nodes: tuple[int, ...]) -> None:
        """The job on ``nodes`` ended: its entry goes, the later entries move up one.

        Its entry is the job index of any of its nodes (a job has at least one)."""
        n = self.count
        index = int(self.node_job[nodes[0]])
        self.start_s[index:n - 1] = self.start_s[index + 1:n]
        self.req_time_s[index:n - 1] = self.req_time_s[index + 1:n]
        self.node_job[list(nodes)] = -1
        self.node_job[self.node_job > index] -= 1
        self.count = n - 1

    def table(self, jobs: tuple[RunningJob, ...]) -> RunningTable:
        """A frozen copy for a view whose running records are ``jobs`` (the same jobs)."""
        n = self.count
        return RunningTable(jobs=jobs, start_s=self.start_s[:n].copy(),
                            req_time_s=self.req_time_s[:n].copy(),
                            node_job=self.node_job.copy())


class ClusterTracker:
    """Node and job state of the cluster as seen from the scheduler."""

    def __init__(self, power: PowerModel) -> None:
        n = len(power.p_idle_w)
        self.power = power
        self._e_on_j = power.e_on_j
        self._e_off_j = power.e_off_j
        self.state = np.full(n, NodeState.IDLE, dtype=np.int8)
        self.idle_since = np.zeros(n)
        self.transition_end = np.full(n, np.nan)
        self.release_req = np.full(n, np.nan)
        self.queue: dict[str, QueuedJob] = {}
        #: The policy's record of each running job, made once when it starts, in start
        #: order.
        self.running: dict[str, RunningJob] = {}
        #: The same jobs as arrays, in the same order (see :class:`RunningArrays`).
        self._running_arrays = RunningArrays(n)
        self._arrivals = 0
        self._new_arrivals: list[QueuedJob] = []
        self._new_completions: list[CompletedJob] = []
        self._queue_view: tuple[QueuedJob, ...] | None = None
        self._running_view: tuple[RunningJob, ...] | None = None
        self._running_table: RunningTable | None = None
        self._nodes_view: NodeTable | None = None
        #: the state groups of ``_nodes_view``, made with it
        self._groups_view: StateGroups | None = None

    @property
    def size(self) -> int:
        return len(self.state)

    def _writable(self) -> None:
        """Before a change of the node arrays: the last view holds them (read-only), so
        they are copied once (copy on write); a view with no change since reuses them."""
        if self._nodes_view is not None:
            self._nodes_view = None
            self.state = self.state.copy()
            self.idle_since = self.idle_since.copy()
            self.transition_end = self.transition_end.copy()
            self.release_req = self.release_req.copy()

    def submit(self, job_id: str, res: int, req_time_s: float, submit_s: float,
               extra: Mapping[str, Any] | None = None) -> QueuedJob:
        """A job arrives in the queue (its arrival rank breaks SNF ties); ``extra``: its
        workload fields, as Batsim forwards them."""
        job = QueuedJob(job_id=job_id, res=res, req_time_s=req_time_s, submit_s=submit_s,
                        order=self._arrivals, extra=extra if extra is not None else {})
        self._arrivals += 1
        self.queue[job_id] = job
        self._new_arrivals.append(job)
        self._queue_view = None
        return job

    def start(self, job_id: str, nodes: tuple[int, ...], now: float) -> None:
        """The scheduler started a queued job on ``nodes``."""
        job = self.queue.pop(job_id)
        self.running[job_id] = RunningJob(job_id, nodes, now, job.req_time_s)
        self._running_arrays.append(nodes, now, job.req_time_s)
        self._queue_view = self._running_view = None
        self._writable()
        index = list(nodes)
        self.state[index] = NodeState.COMPUTING
        self.idle_since[index] = np.nan
        self.release_req[index] = now + job.req_time_s

    def complete(self, job_id: str, now: float) -> RunningJob:
        """A running job ended: its nodes are idle from ``now``."""
        job = self.running.pop(job_id)
        self._running_arrays.remove(job.nodes)
        self._running_view = None
        self._new_completions.append(CompletedJob(
            job_id=job_id, nodes=job.nodes, runtime_s=now - job.start_s,
            req_time_s=job.req_time_s, end_s=now))
        self._writable()
        index = list(job.nodes)
        self.state[index] = NodeState.IDLE
        self.idle_since[index] = now
        self.release_req[index] = np.nan
        return job

    def switching(self, nodes: list[int], on: bool, now: float) -> None:
        """The scheduler asked ``nodes`` to switch on (or off)."""
        self._writable()
        self.state[nodes] = NodeState.SWITCHING_ON if on else NodeState.SWITCHING_OFF
        duration = self.power.t_on_s if on else self.power.t_off_s
        self.transition_end[nodes] = now + duration[nodes]
        self.idle_since[nodes] = np.nan

    def switched(self, nodes: list[int], asleep: bool, now: float) -> None:
        """Batsim acknowledged a switch: ``nodes`` are asleep, or idle from ``now``."""
        self._writable()
        self.state[nodes] = NodeState.SLEEPING if asleep else NodeState.IDLE
        self.transition_end[nodes] = np.nan
        self.idle_since[nodes] = np.nan if asleep else now

    def view(self, now: float, trigger: str) -> ClusterView:
        """Freeze the current state for the policy (and hand over the new records): the
        node arrays as a :class:`NodeTable` with its state groups (Definition 1), made
        once per change of the nodes and shared by the views until the next one."""
        power = self.power
        nodes = self._nodes_view
        if nodes is None:
            nodes = self._nodes_view = NodeTable(
                state=self.state, idle_since_s=self.idle_since,
                transition_end_s=self.transition_end, release_req_s=self.release_req,
                p_idle_w=power.p_idle_w, t_on_s=power.t_on_s, t_off_s=power.t_off_s,
                e_on_j=self._e_on_j, e_off_j=self._e_off_j)
            self._groups_view = StateGroups.of(nodes)
        if self._running_view is None:
            self._running_view = tuple(self.running.values())
            self._running_table = self._running_arrays.table(self._running_view)
        if self._queue_view is None:
            self._queue_view = tuple(self.queue.values())
        arrivals, completions = tuple(self._new_arrivals), tuple(self._new_completions)
        self._new_arrivals.clear()
        self._new_completions.clear()
        return ClusterView(now=now, trigger=trigger, nodes=nodes,
                           queue=self._queue_view, running=self._running_view,
                           arrivals=arrivals, completions=completions,
                           running_arrays=self._running_table, groups=self._groups_view)
