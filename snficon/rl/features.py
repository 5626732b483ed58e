r"""The Budiarjo observation of one power-manager invocation, and its action mask (numpy only).

The power manager is invoked after the dispatch order started what fits. It
sees the cluster then (a :class:`~snficon.core.view.ClusterView` whose
started jobs run and whose queue holds the jobs still waiting; build it
with :func:`snficon.rl.ledger.after_starts` from the scheduler's view) and
the dispatch order's plan of the waiting jobs
(:class:`~snficon.core.plan.PlannedJob`: start, finish, nodes).

The design is the one of Budiarjo et al. (SCA 2025) as the paper authors'
code has it (SPARS-ICON ``SPARS/Gym/features/Budiarjo.py``: eleven features
per node, f1-f5 about the queue and the cluster repeated on every node,
f6-f11 about the node). Here the node features and the queue features are
two arrays; the network repeats the queue features on every node. The
authors feed raw values (seconds, joules: up to ~1e9); here every feature
is scaled to a few units:

- a duration d (s) becomes :math:`\log(1 + \min(\max(d, 0), H)/\tau)`, with
  the time scale :math:`\tau` (default 3600 s, the authors' decision period
  ``rl.dt``) and the cap :math:`H` (default 86400 s, the paper's H_max), so
  it lies in [0, log(1 + H/tau)] ~ [0, 3.2];
- a count n becomes log(1 + n);
- cumulative energies and times become shares of what they could be at
  most (in [0, 1]).

Node features (:data:`NODE_FEATURES`, one row per node):

==================  =====================================================================
``computing`` ..    one-hot of the node's state (computing, idle, switching on,
``sleeping``        switching off, sleeping): the authors' f6 (state code) and f7
                    (computing flag)
``idle_time``       idle node: duration of its idle period, ``now - idle_since`` (f8)
``request_left``    computing node: ``(start + requested - now) / requested``, its
                    job's requested time left as a share, clipped to [-1, 1]
                    (negative once the job overruns its request) (f9)
``transition_left`` switching node: share of its transition still to go,
                    ``(end - now) / T_on`` (or ``T_off``), in [0, 1] (not in the
                    authors' code)
``ready_in``        duration until the node could compute: the PSAS release map
                    (SPEC 5) minus now; capped at H for a job past its request
``planned``         1 if the plan uses the node for a waiting job
``planned_in``      duration until the node's first planned use (H if none)
``wasted_share``    its wasted energy since 0 over (max non-computing power x
                    elapsed time) (f10, cumulative)
``switching_share`` its time spent switching since 0 over the elapsed time (f11)
==================  =====================================================================

Queue features (:data:`QUEUE_FEATURES`):

==================  =====================================================================
``queue_length``    log(1 + waiting jobs) (f1)
``recent_arrivals`` log(1 + arrivals in the last ``arrival_window_s``) (f2: the
                    authors' rate over the last decision period, times the period)
``mean_wait``       duration: mean of ``now - submit`` over the waiting jobs (f3)
``wasted_share``    the cluster's wasted energy since 0 over (sum of max
                    non-computing powers x elapsed time) (f4)
``mean_request``    duration: mean requested time of the waiting jobs (f5)
``queue_demand``    log(1 + nodes requested by the waiting jobs / cluster size)
``next_start_in``   duration until the plan's first start (H if nothing is planned)
==================  =====================================================================

Action mask (:func:`action_mask`): per node :data:`ACTIONS` = keep, switch on,
switch off. Keep is always allowed; only a sleeping node may be switched on,
only an idle node that can sleep may be switched off (SPEC 2: no switch
while computing or switching).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from snficon.core import view as ns
from snficon.core.node_choice import state_groups
from snficon.core.plan import PlannedJob, release_map
from snficon.core.view import ClusterView, NodeTable
from snficon.rl.ledger import NodeHistory

NODE_FEATURES = ("computing", "idle", "switching_on", "switching_off", "sleeping",
                 "idle_time", "request_left", "transition_left", "ready_in", "planned",
                 "planned_in", "wasted_share", "switching_share")
QUEUE_FEATURES = ("queue_length", "recent_arrivals", "mean_wait", "wasted_share",
                  "mean_request", "queue_demand", "next_start_in")
ACTIONS = ("keep", "switch_on", "switch_off")
KEEP, SWITCH_ON, SWITCH_OFF = range(len(ACTIONS))
#: One-hot column of each NodeState code.
_STATE_COLUMNS = (ns.COMPUTING, ns.IDLE, ns.SWITCHING_ON, ns.SWITCHING_OFF, ns.SLEEPING)


@dataclass(frozen=True)
class FeatureScales:
    """Scales of the observation: time scale tau (s), duration cap H (s), arrival window (s)."""

    time_scale_s: float = 3600.0
    horizon_s: float = 86400.0
    arrival_window_s: float = 3600.0

    def __post_init__(self) -> None:
        for name in ("time_scale_s", "horizon_s", "arrival_window_s"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")

    def duration(self, seconds: np.ndarray | float) -> np.ndarray:
        """log(1 + min(max(d, 0), H) / tau); infinite durations count as H."""
        clipped = np.clip(np.nan_to_num(np.asarray(seconds, dtype=np.float64),
                                        nan=0.0, posinf=self.horizon_s), 0.0, self.horizon_s)
        return np.log1p(clipped / self.time_scale_s)


@dataclass(frozen=True)
class Observation:
    """One invocation's observation: ``nodes`` (N, len(NODE_FEATURES)) and ``queue``
    (len(QUEUE_FEATURES),) float32, ``mask`` (N, len(ACTIONS)) bool."""

    nodes: np.ndarray
    queue: np.ndarray
    mask: np.ndarray


def action_mask(nodes: NodeTable) -> np.ndarray:
    """Which of keep / switch on / switch off each node may take now (N, 3) bool."""
    mask = np.zeros((nodes.size, len(ACTIONS)), dtype=bool)
    mask[:, KEEP] = True
    mask[:, SWITCH_ON] = nodes.state == ns.SLEEPING
    can_sleep = np.isfinite(nodes.t_off_s) & np.isfinite(nodes.t_on_s)
    mask[:, SWITCH_OFF] = (nodes.state == ns.IDLE) & can_sleep
    return mask


def decision_nodes(mask: np.ndarray) -> np.ndarray:
    """Nodes with a choice to make (a switch is allowed): the authors' ``need_decision_idx``."""
    return mask[:, SWITCH_ON] | mask[:, SWITCH_OFF]


def switches(actions: np.ndarray, mask: np.ndarray) -> tuple[list[int], list[int]]:
    """The nodes to switch on and off for per-node ``actions`` (N,) in :data:`ACTIONS` order.

    Raises ``ValueError`` naming the first node whose action ``mask`` forbids.
    """
    actions = np.asarray(actions, dtype=np.int64)
    if actions.shape != mask.shape[:1]:
        raise ValueError(f"expected one action per node ({mask.shape[0]}), got shape "
                         f"{actions.shape}")
    if ((actions < 0) | (actions >= len(ACTIONS))).any():
        raise ValueError(f"actions must be in 0..{len(ACTIONS) - 1} ({', '.join(ACTIONS)})")
    allowed = mask[np.arange(len(actions)), actions]
    if not allowed.all():
        node = int(np.flatnonzero(~allowed)[0])
        raise ValueError(f"node {node} cannot take action {ACTIONS[actions[node]]!r} now")
    return (np.flatnonzero(actions == SWITCH_ON).tolist(),
            np.flatnonzero(actions == SWITCH_OFF).tolist())


def first_planned_start(size: int, plan: Sequence[PlannedJob]) -> np.ndarray:
    """Per node, the earliest planned start of a waiting job that uses it (inf if none)."""
    first = np.full(size, np.inf)
    for planned in plan:
        ids = np.asarray(planned.nodes, dtype=np.int64)
        np.minimum.at(first, ids, planned.start)
    return first


def _request_left(view: ClusterView) -> np.ndarray:
    left = np.zeros(view.nodes.size)
    for job in view.running:
        share = -1.0
        if job.req_time_s > 0:
            share = (job.start_s + job.req_time_s - view.now) / job.req_time_s
        left[list(job.nodes)] = min(max(share, -1.0), 1.0)
    return left


def _transition_left(nodes: NodeTable, now: float) -> np.ndarray:
    left = np.zeros(nodes.size)
    for code, duration in ((ns.SWITCHING_ON, nodes.t_on_s), (ns.SWITCHING_OFF, nodes.t_off_s)):
        moving = nodes.state == code
        if moving.any():
            share = (nodes.transition_end_s[moving] - now) / duration[moving]
            left[moving] = np.clip(np.nan_to_num(share, nan=0.0), 0.0, 1.0)
    return left


def node_features(view: ClusterView, plan: Sequence[PlannedJob], history: NodeHistory | None,
                  scales: FeatureScales) -> np.ndarray:
    """The (N, len(NODE_FEATURES)) float32 array (see the module docstring)."""
    nodes, now = view.nodes, view.now
    out = np.zeros((nodes.size, len(NODE_FEATURES)))
    for column, code in enumerate(_STATE_COLUMNS):
        out[:, column] = nodes.state == code
    idle = nodes.state == ns.IDLE
    out[idle, 5] = scales.duration(now - nodes.idle_since_s[idle])
    out[:, 6] = _request_left(view)
    out[:, 7] = _transition_left(nodes, now)
    out[:, 8] = scales.duration(release_map(state_groups(view), now) - now)
    first = first_planned_start(nodes.size, plan)
    out[:, 9] = np.isfinite(first)
    out[:, 10] = scales.duration(first - now)
    if history is not None:
        out[:, 11] = history.wasted_share()
        out[:, 12] = history.switching_share()
    return out.astype(np.float32)


def queue_features(view: ClusterView, plan: Sequence[PlannedJob], history: NodeHistory | None,
                   scales: FeatureScales) -> np.ndarray:
    """The (len(QUEUE_FEATURES),) float32 array (see the module docstring)."""
    now, queue = view.now, view.queue
    out = np.zeros(len(QUEUE_FEATURES))
    out[0] = np.log1p(len(queue))
    if history is not None:
        arrivals = history.recent_arrivals(now)
    else:
        arrivals = sum(now - scales.arrival_window_s < job.submit_s <= now
                       for job in view.arrivals)
    out[1] = np.log1p(arrivals)
    if queue:
        out[2] = scales.duration(np.mean([now - job.submit_s for job in queue]))
        out[4] = scales.duration(np.mean([job.req_time_s for job in queue]))
        out[5] = np.log1p(sum(job.res for job in queue) / view.nodes.size)
    if history is not None:
        out[3] = history.total_wasted_share()
    first = min((planned.start for planned in plan), default=np.inf)
    out[6] = scales.duration(first - now)
    return out.astype(np.float32)


def observe(view: ClusterView, plan: Sequence[PlannedJob], history: NodeHistory | None = None,
            scales: FeatureScales | None = None) -> Observation:
    """The observation and action mask of one power-manager invocation.

    ``view``: the cluster after the dispatch order's starts; ``plan``: its plan
    of the waiting jobs; ``history``: the totals since 0, updated up to
    ``view.now`` (without it the cumulative features are 0 and the recent
    arrivals are those of ``view.arrivals``).
    """
    scales = scales or FeatureScales()
    return Observation(nodes=node_features(view, plan, history, scales),
                       queue=queue_features(view, plan, history, scales),
                       mask=action_mask(view.nodes))
