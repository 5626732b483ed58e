r"""The Budiarjo actor-critic (PyTorch, CPU): attention over the nodes, a per-node head, a critic.

As the paper authors' ``RL_Agent/SPARS/Budiarjo.py`` has it: each node's
features are embedded (``Linear``, 128 wide), then 3 layers of 8-head self
attention over the nodes, each attention and feed-forward (512 wide) block
with a skip connection and a normalisation; a per-node actor MLP (64, 32)
with two outputs; a critic MLP (20, 20) on the pooled node embeddings.
Differences, and why:

- **Normalisation**: LayerNorm over each node's embedding instead of the
  authors' InstanceNorm over the nodes. Normalising each channel across the
  nodes makes the mean over the nodes of the last layer's output equal to
  its bias, so the authors' critic, which reads that mean, returns the same
  value for every state (checked: their critic gives one value, to 7 digits,
  for inputs scaled from 1 to 1e4). It also takes away much of what all
  nodes share, such as the queue features repeated on every node.
- **The queue features** are concatenated to every node's features (the
  authors repeat them in each node's row) and given to the critic beside
  the pooled embeddings.
- **One encoder** shared by the actor and the critic (the authors train two
  copies), as in the usual A2C; the value loss has its own weight.
- **Actions**: the head's two outputs per node are, as in the authors'
  code, the node's desired state (off, on). They become the three masked
  actions of :data:`snficon.rl.features.ACTIONS`: for a sleeping node
  "switch on" is "on" and "keep" is "off"; for an idle node "switch off" is
  "off" and "keep" is "on"; any other node can only keep. The authors
  sample the two outputs of every switchable node and drop the action that
  is not allowed, which is the same distribution.

Masked logits are the float's lowest value, so a masked action has
probability exactly 0 and is never sampled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from snficon.rl.features import (
    ACTIONS,
    KEEP,
    NODE_FEATURES,
    QUEUE_FEATURES,
    SWITCH_OFF,
    SWITCH_ON,
    Observation,
)

DESIRED_OFF, DESIRED_ON = 0, 1


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the network (defaults: the authors' configuration)."""

    node_features: int = len(NODE_FEATURES)
    queue_features: int = len(QUEUE_FEATURES)
    embed_dim: int = 128
    heads: int = 8
    layers: int = 3
    ff_hidden: int = 512
    actor_hidden: tuple[int, ...] = (64, 32)
    critic_hidden: tuple[int, ...] = (20, 20)

    def __post_init__(self) -> None:
        if self.embed_dim % self.heads:
            raise ValueError(f"embed_dim ({self.embed_dim}) must be a multiple of heads "
                             f"({self.heads})")
        for name in ("node_features", "queue_features", "embed_dim", "heads", "layers",
                     "ff_hidden"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")


def _mlp(sizes: Sequence[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for index, (width_in, width_out) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        layers.append(nn.Linear(width_in, width_out))
        if index < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def masked_action_logits(desired: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Logits of keep / switch on / switch off (..., N, 3) from desired-state logits (..., N, 2).

    Keep takes the logit of the state the node is in (off for a node that may
    be switched on, on otherwise); actions not in ``mask`` get the lowest
    float, i.e. probability 0.
    """
    off, on = desired[..., DESIRED_OFF], desired[..., DESIRED_ON]
    columns = {KEEP: torch.where(mask[..., SWITCH_ON], off, on), SWITCH_ON: on,
               SWITCH_OFF: off}
    logits = torch.stack([columns[action] for action in range(len(ACTIONS))], dim=-1)
    return logits.masked_fill(~mask, torch.finfo(logits.dtype).min)


@dataclass(frozen=True)
class PolicyOutput:
    """The network's answer: masked action ``logits`` (B, N, 3) and the ``value`` (B,)."""

    logits: torch.Tensor
    value: torch.Tensor

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        """log pi(a | s) of joint per-node actions (B, N): the sum over the nodes (B,)."""
        log_p = torch.log_softmax(self.logits, dim=-1)
        return log_p.gather(-1, actions.unsqueeze(-1)).squeeze(-1).sum(dim=-1)

    def entropy(self) -> torch.Tensor:
        """Entropy of the joint per-node policy (B,): the sum over the nodes (0 for keep-only)."""
        log_p = torch.log_softmax(self.logits, dim=-1)
        return -(log_p.exp() * log_p).sum(dim=-1).sum(dim=-1)


class BudiarjoActorCritic(nn.Module):
    """Attention encoder over the nodes, per-node action head, critic (see the module doc)."""

    def __init__(self, config: ModelConfig | None = None) -> None:
        super().__init__()
        self.config = config = config or ModelConfig()
        self.embed = nn.Linear(config.node_features + config.queue_features, config.embed_dim)
        layer = nn.TransformerEncoderLayer(config.embed_dim, config.heads, config.ff_hidden,
                                           dropout=0.0, batch_first=True, norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, config.layers, enable_nested_tensor=False)
        self.actor = _mlp((config.embed_dim, *config.actor_hidden, 2))
        self.critic = _mlp((config.embed_dim + config.queue_features, *config.critic_hidden, 1))

    def forward(self, nodes: torch.Tensor, queue: torch.Tensor,
                mask: torch.Tensor) -> PolicyOutput:
        """``nodes`` (B, N, F), ``queue`` (B, Q), ``mask`` (B, N, 3) bool."""
        repeated = queue.unsqueeze(1).expand(-1, nodes.shape[1], -1)
        embedded = self.encoder(self.embed(torch.cat((nodes, repeated), dim=-1)))
        logits = masked_action_logits(self.actor(embedded), mask)
        pooled = torch.cat((embedded.mean(dim=1), queue), dim=-1)
        return PolicyOutput(logits=logits, value=self.critic(pooled).squeeze(-1))


def build_model(config: ModelConfig | None = None, seed: int = 0) -> BudiarjoActorCritic:
    """A freshly initialised network; the same ``seed`` gives the same weights.

    The initialisation draws from a forked generator: torch's global random
    state is left as it was.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return BudiarjoActorCritic(config)


def observation_tensors(observations: Sequence[Observation]) -> tuple[torch.Tensor, ...]:
    """Stack observations of the same cluster into (B, N, F), (B, Q) and (B, N, 3) tensors."""
    nodes = torch.from_numpy(np.stack([obs.nodes for obs in observations]))
    queue = torch.from_numpy(np.stack([obs.queue for obs in observations]))
    mask = torch.from_numpy(np.stack([obs.mask for obs in observations]))
    return nodes, queue, mask


@dataclass(frozen=True)
class Act:
    """One decision: per-node ``actions`` (N,) in :data:`ACTIONS` order, their joint
    ``log_prob`` and the critic's ``value``."""

    actions: np.ndarray
    log_prob: float
    value: float


def sample_actions(logits: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """Draw one action per node from the masked logits (..., N, 3) with ``generator``."""
    probs = torch.softmax(logits, dim=-1)
    flat = probs.reshape(-1, len(ACTIONS))
    drawn = torch.multinomial(flat, 1, generator=generator).squeeze(-1)
    return drawn.reshape(probs.shape[:-1])


@torch.no_grad()
def act(model: BudiarjoActorCritic, observation: Observation,
        generator: torch.Generator | None = None, greedy: bool = False) -> Act:
    """Choose the nodes' actions: sampled (training) or the most likely (evaluation, as the
    authors' code does when not learning)."""
    nodes, queue, mask = observation_tensors([observation])
    out = model(nodes, queue, mask)
    actions = out.logits.argmax(dim=-1) if greedy else sample_actions(out.logits, generator)
    return Act(actions=actions[0].numpy().astype(np.int64),
               log_prob=out.log_prob(actions)[0].item(), value=out.value[0].item())
