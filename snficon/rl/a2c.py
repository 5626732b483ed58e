r"""Advantage actor-critic updates (Mnih et al. 2016) for the Budiarjo network.

A rollout is T consecutive steps of one environment, or of E environments
side by side (then every per-step array has a leading (T, E) shape). The
update, for returns bootstrapped from the critic's value of the state after
the rollout:

.. math::

    R_t = r_t + \gamma (1 - d_t) R_{t+1}, \qquad R_T = V(s_T)

    A_t = R_t - V(s_t) \quad \text{(not differentiated)}

    L = -\frac{1}{T} \sum_t A_t \log\pi(a_t \mid s_t)
        + c_V \frac{1}{T} \sum_t (R_t - V(s_t))^2
        - c_H \frac{1}{T} \sum_t H(\pi(\cdot \mid s_t))

with :math:`\log\pi(a_t \mid s_t)` and :math:`H` summed over the nodes
(independent per-node choices), then one optimiser step after clipping the
gradient's global norm. Defaults: the authors' gamma 0.99, Adam with
learning rate 1e-4, norm clip 0.5, rollouts of 32 steps (their
``episode_batch_size``); value weight 0.5 and entropy weight 0.01 are the
usual A2C values.

Differences from the authors' ``SPARS/Gym/learners/Budiarjo.py``: there the
log-probabilities are computed while sampling under ``torch.no_grad()`` and
stored detached, so the actor's loss has no gradient and only the critic is
ever trained (the policy stays at its random initialisation; checked: the
stored log-probabilities do not require a gradient); here they are
recomputed from the stored observations with the gradient. The authors sum
the actor loss over the steps and have no entropy bonus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from snficon.rl.features import Observation
from snficon.rl.model import BudiarjoActorCritic


@dataclass(frozen=True)
class A2CConfig:
    """Hyper-parameters of the update (see the module docstring)."""

    gamma: float = 0.99
    learning_rate: float = 1e-4
    value_coef: float = 0.5
    entropy_coef: float = 0.01
    max_grad_norm: float = 0.5
    rollout_steps: int = 32

    def __post_init__(self) -> None:
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma!r}")
        for name in ("learning_rate", "max_grad_norm"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        for name in ("value_coef", "entropy_coef"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a number >= 0, got {value!r}")
        if self.rollout_steps < 1:
            raise ValueError(f"rollout_steps must be at least 1, got {self.rollout_steps}")


@dataclass(frozen=True)
class Rollout:
    """Stored steps: observations (``nodes``, ``queue``, ``mask``), per-node ``actions``,
    ``rewards``, ``dones`` (the step ended its episode) and ``last_value`` V(s_T).

    Shapes: nodes (*L, N, F), queue (*L, Q), mask (*L, N, 3), actions (*L, N),
    rewards and dones (*L,), last_value L[1:] (or a number), with L = (T,) or (T, E).
    """

    nodes: np.ndarray
    queue: np.ndarray
    mask: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    last_value: np.ndarray | float = 0.0

    @property
    def steps(self) -> int:
        return int(self.rewards.shape[0])


@dataclass
class RolloutBuffer:
    """Collects one environment's steps until a rollout is full."""

    observations: list[Observation] = field(default_factory=list)
    actions: list[np.ndarray] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    dones: list[bool] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rewards)

    def append(self, observation: Observation, actions: np.ndarray, reward: float,
               done: bool) -> None:
        """Store the observation acted on, the actions taken and what followed."""
        self.observations.append(observation)
        self.actions.append(np.asarray(actions, dtype=np.int64))
        self.rewards.append(float(reward))
        self.dones.append(bool(done))

    def rollout(self, last_value: float) -> Rollout:
        """The stored steps as a :class:`Rollout` (``last_value``: V of the next state,
        ignored when the last step ended the episode); the buffer is emptied."""
        rollout = Rollout(nodes=np.stack([o.nodes for o in self.observations]),
                          queue=np.stack([o.queue for o in self.observations]),
                          mask=np.stack([o.mask for o in self.observations]),
                          actions=np.stack(self.actions),
                          rewards=np.asarray(self.rewards, dtype=np.float64),
                          dones=np.asarray(self.dones, dtype=bool), last_value=last_value)
        self.observations, self.actions, self.rewards, self.dones = [], [], [], []
        return rollout


def discounted_returns(rewards: np.ndarray, dones: np.ndarray, last_value: np.ndarray | float,
                       gamma: float) -> np.ndarray:
    """R_t = r_t + gamma (1 - d_t) R_{t+1}, R_T = ``last_value``, along the first axis."""
    rewards = np.asarray(rewards, dtype=np.float64)
    returns = np.zeros_like(rewards)
    following = np.broadcast_to(np.asarray(last_value, dtype=np.float64),
                                rewards.shape[1:]).copy()
    for t in range(rewards.shape[0] - 1, -1, -1):
        following = rewards[t] + gamma * np.where(dones[t], 0.0, following)
        returns[t] = following
    return returns


@dataclass(frozen=True)
class A2CStats:
    """One update: the loss and its parts (before the step), and the gradient's norm
    before clipping."""

    loss: float
    policy_loss: float
    value_loss: float
    entropy: float
    grad_norm: float


def a2c_loss(model: BudiarjoActorCritic, rollout: Rollout,
             config: A2CConfig) -> tuple[torch.Tensor, dict[str, float]]:
    """The A2C loss of a rollout (differentiable) and its parts as numbers."""
    lead = rollout.rewards.shape
    flat = int(np.prod(lead))

    def flatten(array: np.ndarray, trailing: int) -> torch.Tensor:
        """(*L, ...) -> (T*E, ...) keeping the ``trailing`` last dimensions."""
        values = torch.from_numpy(np.ascontiguousarray(array))
        return values.reshape(flat, *values.shape[values.dim() - trailing:])

    nodes = flatten(rollout.nodes.astype(np.float32), 2)
    queue = flatten(rollout.queue.astype(np.float32), 1)
    mask = flatten(rollout.mask.astype(bool), 2)
    actions = flatten(rollout.actions.astype(np.int64), 1)
    returns = torch.from_numpy(discounted_returns(rollout.rewards, rollout.dones,
                                                  rollout.last_value, config.gamma)
                               .reshape(flat)).float()
    out = model(nodes, queue, mask)
    advantage = (returns - out.value).detach()
    policy_loss = -(advantage * out.log_prob(actions)).mean()
    value_loss = (returns - out.value).pow(2).mean()
    entropy = out.entropy().mean()
    loss = policy_loss + config.value_coef * value_loss - config.entropy_coef * entropy
    return loss, {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(),
                  "entropy": entropy.item()}


def make_optimizer(model: BudiarjoActorCritic, config: A2CConfig) -> torch.optim.Adam:
    """Adam over all the network's parameters (the authors' optimiser)."""
    return torch.optim.Adam(model.parameters(), lr=config.learning_rate)


def a2c_update(model: BudiarjoActorCritic, optimizer: torch.optim.Optimizer, rollout: Rollout,
               config: A2CConfig) -> A2CStats:
    """One gradient step on ``rollout``: loss, backward, clip the global norm, step."""
    loss, parts = a2c_loss(model, rollout, config)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
    optimizer.step()
    return A2CStats(loss=loss.item(), grad_norm=norm.item(), **parts)
