"""A Gymnasium environment for power management over the embedded engine.

``gymnasium.make("snficon/PowerManagement-v0", platform=..., workloads=[...])``
(:data:`ENV_ID`, registered when this module is imported). One step is one
scheduler invocation where the agent decides and some node has a choice;
the other invocations are answered "keep all" and folded into the step
(``skip_forced``). The agent decides on its clock, every ``period`` = 3600 s
as the authors' agent does, or at every invocation with the option
``every_event`` (see :mod:`snficon.rl.power`):

- the **dispatch order** (``order``: FCFS with EASY backfilling by default,
  any order of :mod:`snficon.part_registry`) has started what fits;
- the **observation** is the Budiarjo design's (:mod:`snficon.rl.features`):
  ``{"nodes": (N, 13), "queue": (7,), "mask": (N, 3)}`` -- per-node
  features, queue features and which of keep / switch on / switch off each
  node may take (1 = allowed);
- the **action** is one of keep / switch on / switch off per node
  (``MultiDiscrete([3] * N)``); an action the mask forbids is taken as keep
  and counted in ``info["invalid_actions"]``;
- the **reward** is the Budiarjo reward of the step
  (:class:`snficon.rl.reward.StepMeter`: -w_E x wasted-energy share of the
  nodes that had a choice - w_W x waiting share of the jobs; weights
  ``energy_weight``, ``waiting_weight``);
- an **episode** is one simulation of one workload file; ``workloads`` is a
  list of them (a curriculum) taken in turn, one per :meth:`reset`
  (``reset(options={"workload": i})`` picks one). The episode is
  *terminated* when the simulation ends, *truncated* after ``max_steps``
  steps.

The decisions are those of the ``rlBudiarjo`` policy with its ``rl`` part
(:class:`snficon.rl.power.LearnedPower`, guard and periodic calls
included): what is learnt here runs unchanged under ``snficon run`` and
real Batsim.

How control is inverted, without threads: the engine already runs one
message at a time (:meth:`BatsimEngine.answer` returns the next message),
and pybatsim's ``Batsim.do_next_event`` handles one message. The
environment's pybatsim scheduler (:class:`SteppedScheduler`, the adapter's
:class:`~snficon.adapter.scheduler.PolicyScheduler` with a policy that only
records the invocation) answers each message with nothing; the in-process
link (:class:`~snficon.drivers.inprocess.EngineLink`) holds that answer
until the next message is asked for. In between, the environment runs the
order, shows the observation, and on :meth:`step` adds the decisions to the
held answer (:meth:`EngineLink.amend`) before the engine gets it. The
simulation is the same message for message as under ``snficon run``.

Everything here is deterministic (the engine has no randomness unless a
transition jitter is asked for); ``reset(seed=...)`` seeds ``np_random`` and
the action space, so sampled agents are reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from snficon.adapter.scheduler import Policy, PolicyScheduler
from snficon.core.names import Trigger
from snficon.core.view import ClusterView, Decisions
from snficon.drivers.inprocess import EngineLink, LinkedBatsim
from snficon.drivers.session import build_engine
from snficon.errors import InputError
from snficon.part_registry import Composition
from snficon.platform.model import PowerModel
from snficon.platform.reader import read_platform
from snficon.rl.features import ACTIONS, NODE_FEATURES, QUEUE_FEATURES, Observation, decision_nodes
from snficon.rl.power import LearnedPower, keep_all
from snficon.rl.reward import RewardTerms, RewardWeights, StepMeter

ENV_ID = "snficon/PowerManagement-v0"


class SteppedScheduler(PolicyScheduler):
    """The ``rlBudiarjo`` scheduler whose invocations are answered from outside.

    Its policy records the invocation's view and decides nothing; the
    environment builds the parts itself (the learned power manager without an
    actor) and applies their decisions with :meth:`events_of`.
    """

    policy_name = "rlBudiarjo"

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        super().__init__(options)
        self.invocation: ClusterView | None = None
        self.parts: tuple[Any, LearnedPower, tuple[Any, ...]] | None = None

    def make_policy(self, power: PowerModel) -> Policy:
        self.parts = build_parts(self.composition, power.p_sleep_w)
        return self._record

    def _record(self, view: ClusterView) -> Decisions:
        self.invocation = view
        return Decisions()



def build_parts(composition: Composition,
                p_sleep_w: np.ndarray) -> tuple[Any, LearnedPower, tuple[Any, ...]]:
    """The order, an actor-less learned power manager and the layers of a composition."""
    specs = composition.specs
    order = specs[composition.order].build(composition.params[composition.order], p_sleep_w)
    power = LearnedPower(composition.params["rl"], p_sleep_w)
    layers = tuple(specs[name].build(composition.params[name], p_sleep_w)
                   for name in composition.layers)
    return order, power, layers


class PowerManagementEnv(gym.Env):
    """Per-node power decisions on the embedded engine (see the module docstring).

    ``platform``: a platform XML; ``workloads``: one workload JSON or a list
    (episodes take them in turn); ``order``: the dispatch order's part name or
    spec (``file.py:Class``, :mod:`snficon.part_registry`); ``layers``: layer part
    names or specs; ``options``: the parts' options (e.g.
    ``{"period": 1800}``; ``model`` is ignored: the agent acts);
    ``energy_weight``/``waiting_weight``: w_E, w_W; ``skip_forced``: fold
    invocations where no node has a choice into the step; ``max_steps``:
    truncate an episode after that many steps (None: never).
    """

    metadata = {"render_modes": []}

    def __init__(self, platform: str | Path, workloads: str | Path | Sequence[str | Path],
                 order: str = "fcfs-easy", layers: Sequence[str] = (),
                 options: dict[str, Any] | None = None, energy_weight: float = 0.5,
                 waiting_weight: float = 0.5, skip_forced: bool = True,
                 max_steps: int | None = None) -> None:
        super().__init__()
        self.platform = Path(platform)
        if isinstance(workloads, str | Path):
            workloads = [workloads]
        self.workloads = [Path(w) for w in workloads]
        if not self.workloads:
            raise InputError("PowerManagementEnv: no workload given")
        for path in (self.platform, *self.workloads):
            if not path.is_file():
                raise InputError(f"{path}: file not found")
        self.weights = RewardWeights(energy_weight, waiting_weight)
        self.skip_forced = skip_forced
        if max_steps is not None and max_steps < 1:
            raise InputError(f"max_steps must be at least 1, got {max_steps}")
        self.max_steps = max_steps
        self.scheduler_options = {**dict(options or {}), "order": order,
                                  "layers": list(layers)}
        self.scheduler_options.pop("model", None)
        SteppedScheduler(self.scheduler_options)  # check the options now
        self.size = read_platform(self.platform).nb_nodes
        n = self.size
        self.observation_space = spaces.Dict({
            "nodes": spaces.Box(-1.0, np.inf, (n, len(NODE_FEATURES)), np.float32),
            "queue": spaces.Box(0.0, np.inf, (len(QUEUE_FEATURES),), np.float32),
            "mask": spaces.MultiBinary((n, len(ACTIONS))),
        })
        self.action_space = spaces.MultiDiscrete(np.full(n, len(ACTIONS)))
        self._episode = -1
        self._started = False

    # ------------------------------------------------------------------ gymnasium

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(seed)
        self._episode += 1
        index = (options or {}).get("workload", self._episode % len(self.workloads))
        if not isinstance(index, int) or not 0 <= index < len(self.workloads):
            raise InputError(f"reset option 'workload': {index!r} is not an index of the "
                             f"{len(self.workloads)} workloads")
        self.workload = self.workloads[index]
        self.engine = build_engine(self.platform, [self.workload])
        self.scheduler = SteppedScheduler(self.scheduler_options)
        self.link = EngineLink(self.engine)
        self._ended = False
        self._steps = 0
        self.meter: StepMeter | None = None
        self.episode_reward = 0.0
        self._batsim = LinkedBatsim(self.scheduler, self.link)  # reads SIMULATION_BEGINS
        self.order, self.power, self.layers = self.scheduler.parts
        self.meter = StepMeter(self.scheduler.tracker.power, self.weights)
        self._started = True
        observation = self._next_decision()
        if observation is None:
            raise InputError(f"{self.workload}: the simulation ended before any decision")
        return self._obs(observation), self._info(None)

    def step(self, action: np.ndarray) -> tuple[dict[str, np.ndarray], float, bool, bool,
                                                  dict]:
        if not self._started or self._ended:
            raise RuntimeError("step() needs reset() first (the episode is over)")
        before = self.power.invalid_actions
        view, decisions = self._settle(np.asarray(action))
        self.meter.begin(view, decisions)
        self._steps += 1
        observation = self._next_decision()
        done = observation is None
        terms = self.meter.finish(self._final_view() if done else self._view, done=done)
        self.episode_reward += terms.reward
        truncated = not done and self.max_steps is not None and self._steps >= self.max_steps
        info = self._info(terms)
        info["invalid_actions"] = self.power.invalid_actions - before
        if done:
            observation = self._last_observation
        return self._obs(observation), float(terms.reward), done, truncated, info

    # ------------------------------------------------------------------ engine

    def _next_decision(self) -> Observation | None:
        """Run the engine to the next invocation where a node has a choice (None: the end)."""
        scheduler = self.scheduler
        while True:
            if scheduler.invocation is None:
                if self._ended:
                    return None
                if not self._batsim.do_next_event():
                    self.link.finish()
                    self._ended = True
                continue
            view = scheduler.invocation
            scheduler.invocation = None
            admitted = view
            for layer in self.layers:
                admitted = layer.admit(admitted)
            dispatched = self.order.dispatch(admitted)
            observation = self.power.observe(admitted, dispatched, self.order)
            self._view, self._dispatched, self._admitted = view, dispatched, admitted
            self._last_observation = observation
            forced = not self.power.turn or not decision_nodes(observation.mask).any()
            if self.skip_forced and forced:
                _, decisions = self._settle(keep_all(observation))
                if self.meter is not None and self._steps:
                    self.meter.add(view, decisions)
                continue
            return observation

    def _settle(self, actions: np.ndarray) -> tuple[ClusterView, Decisions]:
        outcome = self.power.settle(actions)
        for layer in self.layers:
            layer.amend(self._admitted, self._dispatched, outcome, self.order)
        view = self._view
        events = self.scheduler.events_of(outcome.decisions, view.now)
        if events:
            self.link.amend(events)
        return view, outcome.decisions

    def _final_view(self) -> ClusterView:
        return self.scheduler.tracker.view(self.engine.now, Trigger.COMPLETION)

    def _obs(self, observation: Observation) -> dict[str, np.ndarray]:
        return {"nodes": observation.nodes, "queue": observation.queue,
                "mask": observation.mask.astype(np.int8)}

    def _info(self, terms: RewardTerms | None) -> dict[str, Any]:
        info: dict[str, Any] = {"time": float(self._view.now), "workload": str(self.workload),
                                "queue": len(self._dispatched.waiting)}
        if terms is not None:
            info.update(energy_term=terms.energy, waiting_term=terms.waiting,
                        duration_s=terms.duration_s)
        return info

    def outputs(self):
        """The engine's output tables (Batsim's files) of the episode so far."""
        return self.engine.outputs()


def as_observation(obs: dict[str, np.ndarray]) -> Observation:
    """The :class:`~snficon.rl.features.Observation` of an environment observation."""
    return Observation(nodes=obs["nodes"], queue=obs["queue"], mask=obs["mask"].astype(bool))


if ENV_ID not in gym.registry:
    gym.register(id=ENV_ID, entry_point="snficon.rl.env:PowerManagementEnv")
