"""The learned power manager of RL Budiarjo as a policy part (numpy; the network is an actor).

One invocation, after the dispatch order started what fits (FCFS with EASY
backfilling in the paper's RL Budiarjo; any order of
:data:`snficon.part_registry.PARTS`):

1. account the interval since the previous invocation in the
   :class:`~snficon.rl.ledger.NodeHistory` (each node's wasted energy and
   switching time, from the previous view and decisions);
2. plan the waiting jobs with the order on the release map of requested
   times (SPEC 5, as IPM does) and build the Budiarjo observation
   (:func:`snficon.rl.features.observe`) of the cluster after the starts;
3. the actor answers one action per node (keep / switch on / switch off) --
   on its own clock, every ``period`` seconds (the authors' ``CALL_RL``
   every ``rl.dt`` = 3600 s: between two of its decisions no node switches
   but by the guard), or at every invocation with ``every_event``; an action
   the mask forbids is taken as keep;
4. the **guard** (option ``guard``): the nodes the plan gives the first
   waiting job may not be switched off (masked); and when jobs wait and
   nothing would ever start the first of them -- no node computing or
   switching, so no event but callbacks will come -- wake the sleeping nodes it lacks (and drop this
   invocation's switch-offs). Without it an agent that keeps nodes asleep
   leaves the jobs waiting until its next decision (or for ever);
5. ask to be called back at the clock's next tick (with ``every_event``:
   ``period`` seconds later while a node still has a choice and no call is
   pending);
6. **rest**: after ``idle_calls`` invocations in a row without an arrival or
   a completion (callbacks and finished switches only), stop the clock until
   the next arrival or completion and, when no job runs or waits, switch
   nothing. Without it an agent that keeps switching idle nodes on and off
   after the last job would keep the simulation going for ever (each switch
   is an event).

:meth:`LearnedPower.observe` and :meth:`LearnedPower.settle` are steps 1-2
and 3-5: the Gymnasium environment (:mod:`snficon.rl.env`) calls them with
the agent's action in between; :meth:`LearnedPower.decide` (the policy
seam) calls the actor in between. The actor of a run is built from the
options by :func:`build_rl_power` (PyTorch, :mod:`snficon.rl.agent`), only
when the part is built, so importing the core never imports PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from snficon.core import view as ns
from snficon.core.clock import is_future
from snficon.core.diagnostics import Diagnostics
from snficon.core.names import Trigger
from snficon.core.params import RlParams
from snficon.core.parts import Dispatched, DispatchOrder, PowerOutcome
from snficon.core.plan import PlannedJob
from snficon.core.view import ClusterView, Decisions
from snficon.errors import InputError
from snficon.platform.model import PowerModel
from snficon.rl.features import (
    KEEP,
    SWITCH_OFF,
    SWITCH_ON,
    FeatureScales,
    Observation,
    decision_nodes,
    observe,
    switches,
)
from snficon.rl.ledger import (
    NodeHistory,
    held_nodes,
    interval_usage,
    power_model_of,
    power_view,
)

#: An actor: per-node actions (N,) in :data:`snficon.rl.features.ACTIONS` order.
Actor = Callable[[Observation], np.ndarray]


@dataclass(frozen=True)
class Pending:
    """An invocation observed and not yet settled: what :meth:`LearnedPower.settle` needs."""

    view: ClusterView
    dispatched: Dispatched
    plan: list[PlannedJob]
    release: np.ndarray
    durations: list[float]
    observation: Observation
    turn: bool


def legal_actions(actions: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, int]:
    """``actions`` with every one the mask forbids replaced by keep, and how many were."""
    actions = np.asarray(actions, dtype=np.int64).reshape(-1)
    if actions.shape != mask.shape[:1]:
        raise ValueError(f"expected one action per node ({mask.shape[0]}), got shape "
                         f"{actions.shape}")
    inside = (actions >= 0) & (actions < mask.shape[1])
    allowed = np.zeros(len(actions), dtype=bool)
    allowed[inside] = mask[np.flatnonzero(inside), actions[inside]]
    return np.where(allowed, actions, KEEP), int((~allowed).sum())


def guard_wakes(dispatched: Dispatched, switch_on: list[int]) -> list[int]:
    """Sleeping nodes to wake so that the first waiting job can ever start (may be empty).

    Needed when jobs wait and no event but callbacks can come: no node is
    computing or switching, none is being switched on now. Then the first
    waiting job (the order's first) lacks ``res - idle`` nodes; the lowest
    sleeping ids are woken (and the invocation's switch-offs dropped).
    """
    if not dispatched.waiting:
        return []
    state = dispatched.nodes.state
    busy = np.isin(state, (ns.COMPUTING, ns.SWITCHING_ON, ns.SWITCHING_OFF)).any()
    if busy or switch_on:
        return []
    idle = int((state == ns.IDLE).sum())
    missing = dispatched.waiting[0].res - idle
    sleeping = np.flatnonzero(state == ns.SLEEPING)
    return sleeping[:max(missing, 0)].tolist()


class LearnedPower:
    """The RL Budiarjo power manager (see the module docstring).

    ``actor`` answers the observation of each invocation (None: only
    :meth:`observe` / :meth:`settle` may be used, as the environment does).
    """

    def __init__(self, params: RlParams, p_sleep_w: np.ndarray, actor: Actor | None = None,
                 scales: FeatureScales | None = None) -> None:
        self.params = params
        self.p_sleep_w = np.asarray(p_sleep_w, dtype=float)
        self.actor = actor
        self.scales = scales or FeatureScales()
        self.power: PowerModel | None = None
        self.history: NodeHistory | None = None
        self.pending: Pending | None = None
        self.invalid_actions = 0
        self._last: tuple[ClusterView, Decisions] | None = None
        self._quiet = 0
        self._call_s: float | None = None

    def observe(self, view: ClusterView, dispatched: Dispatched,
                order: DispatchOrder) -> Observation:
        """Steps 1-2: account the last interval, plan, and return the observation."""
        now = view.now
        if self.power is None:
            self.power = power_model_of(view.nodes, self.p_sleep_w)
            self.history = NodeHistory.for_power(self.power, self.scales.arrival_window_s)
        assert self.history is not None
        if self._last is not None:
            last_view, last_decisions = self._last
            held = held_nodes(last_view, last_decisions, self.power)
            self.history.add(interval_usage(held, now, self.power))
        self.history.note_arrivals(view)
        groups, waiting = dispatched.groups, dispatched.waiting
        release = dispatched.requested_release(now)
        durations = [job.req_time_s for job in waiting]
        plan = order.plan(groups, release, waiting, durations, now)
        observation = observe(power_view(view, dispatched), plan, self.history, self.scales)
        if self.params.guard and plan:
            observation.mask[list(plan[0].nodes), SWITCH_OFF] = False  # the head's nodes
        self.pending = Pending(view, dispatched, plan, release, durations, observation,
                               self._is_turn(view))
        return observation

    def _is_turn(self, view: ClusterView) -> bool:
        """Whether the agent acts at this invocation: at every one (``every_event``), else
        on its clock (the first invocation, a due call, or the first one after a rest)."""
        if self.params.every_event or self.params.period <= 0:
            return True
        if self._call_s is None:  # the first invocation, or resting: wait for news
            quiet = view.trigger in (Trigger.CALLBACK, Trigger.TRANSITION)
            return not (quiet and self._quiet >= self.params.idle_calls)
        return not is_future(self._call_s, view.now)

    @property
    def turn(self) -> bool:
        """Whether the observed invocation is the agent's to decide (else it keeps)."""
        return self.pending is not None and self.pending.turn

    def settle(self, actions: np.ndarray) -> PowerOutcome:
        """Steps 3-5: the decisions of the pending invocation under per-node ``actions``."""
        pending = self.pending
        if pending is None:
            raise RuntimeError("LearnedPower.settle: observe() must come first")
        self.pending = None
        view, dispatched = pending.view, pending.dispatched
        mask = pending.observation.mask
        if not pending.turn:
            actions = np.full(mask.shape[0], KEEP, dtype=np.int64)
        actions, invalid = legal_actions(actions, mask)
        self.invalid_actions += invalid
        switch_on, switch_off = switches(actions, mask)
        if self.params.guard:
            woken = guard_wakes(dispatched, switch_on)
            if woken:
                switch_on, switch_off = woken, []
        decisions = Decisions(starts=list(dispatched.starts), switch_on=switch_on,
                              switch_off=switch_off)
        quiet = view.trigger in (Trigger.CALLBACK, Trigger.TRANSITION)
        self._quiet = self._quiet + 1 if quiet else 0
        if self._quiet >= self.params.idle_calls and not (dispatched.waiting or view.running
                                                          or dispatched.starts):
            switch_on, switch_off = [], []  # an empty cluster with nothing new: rest
        resting = self._quiet >= self.params.idle_calls
        if self.params.period > 0:
            if resting:
                self._call_s = None  # the clock stops until an arrival or a completion
            elif self.params.every_event:
                choice = mask[:, SWITCH_ON] | mask[:, SWITCH_OFF]
                choice[switch_on + switch_off] = False
                pending_call = self._call_s is not None and is_future(self._call_s, view.now)
                if choice.any() and not pending_call:
                    self._call_s = view.now + self.params.period
            elif pending.turn:
                self._call_s = view.now + self.params.period
        if self._call_s is not None and is_future(self._call_s, view.now):
            decisions.call_at = [self._call_s]
        decisions.diagnostics = Diagnostics(starts=len(decisions.starts),
                                            wakes=len(switch_on), shutdowns=len(switch_off),
                                            planned_jobs=len(pending.plan))
        self._last = (view, decisions)
        return PowerOutcome(decisions=decisions, plan=pending.plan, release=pending.release,
                            durations=pending.durations)

    def decide(self, view: ClusterView, dispatched: Dispatched,
               order: DispatchOrder) -> PowerOutcome:
        """The policy seam: observe, ask the actor, settle."""
        if self.actor is None:
            raise RuntimeError("LearnedPower.decide needs an actor (see build_rl_power)")
        observation = self.observe(view, dispatched, order)
        if not self.turn or not decision_nodes(observation.mask).any():
            return self.settle(keep_all(observation))
        return self.settle(self.actor(observation))


def keep_all(observation: Observation) -> np.ndarray:
    """The trivial actor: every node keeps its state (a baseline for the agent)."""
    return np.full(observation.mask.shape[0], KEEP, dtype=np.int64)


def switch_off_idle(observation: Observation) -> np.ndarray:
    """A hand-written actor: switch off every idle node that may sleep, wake none (the
    guard wakes what the first waiting job needs)."""
    return np.where(observation.mask[:, SWITCH_OFF], SWITCH_OFF, KEEP).astype(np.int64)


def build_rl_power(params: RlParams, p_sleep_w: np.ndarray) -> LearnedPower:
    """The part of a run: the network of ``params.model`` (or an untrained one) as actor.

    Imports PyTorch (:mod:`snficon.rl.agent`); InputError when it is absent or
    the model file cannot be read.
    """
    try:
        from snficon.rl.agent import load_actor
    except ImportError as exc:
        raise InputError(f"the power manager 'rl' needs PyTorch ({exc}): install the rl "
                         "group (uv sync --group rl, see the README)") from None
    actor, scales = load_actor(params)
    return LearnedPower(params, p_sleep_w, actor=actor, scales=scales)
