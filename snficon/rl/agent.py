"""The trained network as an actor, and its checkpoint files (PyTorch, CPU).

A checkpoint (``model.pt``, written by ``snficon rl train``) is one
``torch.save`` of a dict of plain values and tensors, readable with
``weights_only=True``:

- ``format``: :data:`CHECKPOINT_FORMAT`; ``model``: the network's state dict;
  ``config``: its :class:`~snficon.rl.model.ModelConfig` as a dict;
  ``scales``: the observation's :class:`~snficon.rl.features.FeatureScales`;
- ``optimizer``: Adam's state; ``progress``: how far training went (stage,
  epoch, steps, the training options), so that training can resume;
- ``rng``: torch's generator state of the sampling, for a bit-exact resume.

Files are written atomically (:func:`snficon.fileio.atomic_write_bytes`).
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import Any

import numpy as np
import torch

from snficon.core.params import RlParams
from snficon.errors import InputError
from snficon.fileio import atomic_write_bytes
from snficon.rl.features import FeatureScales, Observation
from snficon.rl.model import BudiarjoActorCritic, ModelConfig, act, build_model

CHECKPOINT_FORMAT = "snficon-rl-budiarjo-1"
#: The ``model`` option's value for a network that was never trained.
UNTRAINED = "untrained"


class TorchActor:
    """The network's choice per node: the most likely action (``greedy``, evaluation) or
    one drawn with a generator seeded by ``seed``."""

    def __init__(self, model: BudiarjoActorCritic, greedy: bool = True, seed: int = 0) -> None:
        self.model = model.eval()
        self.greedy = greedy
        self.generator = torch.Generator().manual_seed(seed)

    def __call__(self, observation: Observation) -> np.ndarray:
        return act(self.model, observation, self.generator, greedy=self.greedy).actions


def save_checkpoint(path: str | Path, model: BudiarjoActorCritic,
                    optimizer: torch.optim.Optimizer | None, scales: FeatureScales,
                    progress: dict[str, Any] | None = None,
                    generator: torch.Generator | None = None) -> Path:
    """Write a checkpoint atomically (see the module docstring)."""
    payload: dict[str, Any] = {
        "format": CHECKPOINT_FORMAT,
        "model": model.state_dict(),
        "config": dataclasses.asdict(model.config),
        "scales": dataclasses.asdict(scales),
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "progress": dict(progress or {}),
        "rng": generator.get_state() if generator is not None else None,
    }
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    return atomic_write_bytes(path, buffer.getvalue())


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint's dict; InputError naming the file when it is not one."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: model file not found (write one with 'snficon rl train')")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a damaged or foreign file
        raise InputError(f"{path}: not a readable model checkpoint ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise InputError(f"{path}: not an RL Budiarjo checkpoint (format "
                         f"{payload.get('format') if isinstance(payload, dict) else None!r}, "
                         f"expected {CHECKPOINT_FORMAT!r})")
    return payload


def model_from_checkpoint(payload: dict[str, Any], where: str = "") -> BudiarjoActorCritic:
    """The network of a checkpoint's dict."""
    config = dict(payload["config"])
    config["actor_hidden"] = tuple(config["actor_hidden"])
    config["critic_hidden"] = tuple(config["critic_hidden"])
    model = BudiarjoActorCritic(ModelConfig(**config))
    try:
        model.load_state_dict(payload["model"])
    except RuntimeError as exc:
        raise InputError(f"{where}: the weights do not fit the network "
                         f"({str(exc).splitlines()[0]})") from None
    return model


def load_actor(params: RlParams) -> tuple[TorchActor, FeatureScales]:
    """The actor and observation scales a run's :class:`RlParams` ask for."""
    torch.set_num_threads(params.threads)
    if params.model == UNTRAINED:
        return TorchActor(build_model(seed=params.init_seed), params.greedy,
                          params.seed), FeatureScales()
    payload = read_checkpoint(params.model)
    model = model_from_checkpoint(payload, params.model)
    return TorchActor(model, params.greedy, params.seed), FeatureScales(**payload["scales"])
