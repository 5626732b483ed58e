r"""Training RL Budiarjo: A2C on the environment, a curriculum of workloads, checkpoints.

The paper trains one policy per dataset on the 1000 jobs that follow the
evaluated 3000, with the curriculum simple -> real -> complex (paper
section VI-A; ``snficon workload curriculum`` writes the three). Here a
*stage* is one workload file of the curriculum, in the order given; each
stage runs ``epochs`` epochs, one epoch being one episode (a whole
simulation of the stage's workload) in :mod:`snficon.rl.env`. Within an
episode the agent samples its actions (seeded) and updates the network
every ``rollout_steps`` steps and at the episode's end
(:func:`snficon.rl.a2c.a2c_update`; returns bootstrapped from the critic).
The authors' schedule is 10 epochs per stage; their policy is never
trained (see :mod:`snficon.rl`).

After every epoch ``MODEL_DIR/model.pt`` is written atomically (network,
optimiser, generator state, progress: :mod:`snficon.rl.agent`) and a row
is appended to ``MODEL_DIR/train.csv``. Training again into the same folder
resumes after the last finished epoch, with the same result as an
uninterrupted run (the environment is deterministic and every random draw
comes from the saved generator); a folder trained with other settings is
refused.
"""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from snficon.errors import InputError
from snficon.fileio import atomic_write_text
from snficon.rl.a2c import A2CConfig, RolloutBuffer, a2c_update, make_optimizer
from snficon.rl.agent import model_from_checkpoint, read_checkpoint, save_checkpoint
from snficon.rl.env import PowerManagementEnv, as_observation
from snficon.rl.features import FeatureScales
from snficon.rl.model import ModelConfig, act, build_model, observation_tensors

MODEL_FILE = "model.pt"
LOG_FILE = "train.csv"
LOG_COLUMNS = ("stage", "workload", "epoch", "steps", "updates", "reward", "mean_reward",
               "energy_term", "waiting_term", "invalid_actions", "wall_s")


@dataclass(frozen=True)
class TrainConfig:
    """What a training run is: inputs, schedule, seed and the update's settings."""

    platform: str
    workloads: tuple[str, ...]
    epochs: int = 10
    seed: int = 0
    order: str = "fcfs-easy"
    energy_weight: float = 0.5
    waiting_weight: float = 0.5
    period: float = 3600.0
    every_event: bool = False
    a2c: A2CConfig = field(default_factory=A2CConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    threads: int = 1

    def __post_init__(self) -> None:
        if not self.workloads:
            raise InputError("rl train: give at least one training workload (--train)")
        if self.epochs < 1:
            raise InputError(f"rl train: --epochs must be at least 1, got {self.epochs}")

    def key(self) -> dict[str, Any]:
        """The settings a resumed run must share (everything but the thread count)."""
        data = asdict(self)
        data.pop("threads")
        data["workloads"] = list(self.workloads)
        data["model"]["actor_hidden"] = list(self.model.actor_hidden)
        data["model"]["critic_hidden"] = list(self.model.critic_hidden)
        return json.loads(json.dumps(data))


@dataclass(frozen=True)
class EpochStats:
    """One epoch: the episode's totals and means (reward terms as the environment gives)."""

    stage: int
    workload: str
    epoch: int
    steps: int
    updates: int
    reward: float
    energy_term: float
    waiting_term: float
    invalid_actions: int
    wall_s: float

    def row(self) -> dict[str, Any]:
        return {"stage": self.stage, "workload": self.workload, "epoch": self.epoch,
                "steps": self.steps, "updates": self.updates, "reward": f"{self.reward:.6g}",
                "mean_reward": f"{self.reward / max(self.steps, 1):.6g}",
                "energy_term": f"{self.energy_term:.6g}",
                "waiting_term": f"{self.waiting_term:.6g}",
                "invalid_actions": self.invalid_actions, "wall_s": f"{self.wall_s:.3f}"}


def run_epoch(env: PowerManagementEnv, stage: int, model: torch.nn.Module,
              optimizer: torch.optim.Optimizer, config: A2CConfig,
              generator: torch.Generator,
              progress: Callable[[int, float], None] | None = None) -> tuple[int, float, list]:
    """One episode of the stage's workload with A2C updates; (steps, updates, per-step terms)."""
    obs, _ = env.reset(options={"workload": stage})
    buffer = RolloutBuffer()
    steps = updates = 0
    terms: list[tuple[float, float, float, int]] = []
    while True:
        observation = as_observation(obs)
        decision = act(model, observation, generator)
        obs, reward, terminated, truncated, info = env.step(decision.actions)
        steps += 1
        terms.append((reward, info.get("energy_term", 0.0), info.get("waiting_term", 0.0),
                      info.get("invalid_actions", 0)))
        buffer.append(observation, decision.actions, reward, terminated)
        if len(buffer) >= config.rollout_steps or terminated or truncated:
            last_value = 0.0
            if not terminated:
                with torch.no_grad():
                    last_value = model(*observation_tensors([as_observation(obs)])).value[0].item()
            a2c_update(model, optimizer, buffer.rollout(last_value), config)
            updates += 1
        if progress is not None and steps % 200 == 0:
            progress(steps, info["time"])
        if terminated or truncated:
            return steps, updates, terms


def _resume(folder: Path, config: TrainConfig):
    path = folder / MODEL_FILE
    if not path.exists():
        return None
    payload = read_checkpoint(path)
    trained = payload["progress"].get("config")
    if trained != config.key():
        raise InputError(f"{path}: this folder holds a model trained with other settings; "
                         "train into a new folder (-o) or remove it")
    return payload


def train(config: TrainConfig, folder: str | Path,
          log: Callable[[str], None] = print) -> list[EpochStats]:
    """Train (or resume training) into ``folder``; the stats of the epochs run now."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(config.threads)
    env = PowerManagementEnv(config.platform, list(config.workloads), order=config.order,
                             options={"period": config.period,
                                      "every_event": config.every_event},
                             energy_weight=config.energy_weight,
                             waiting_weight=config.waiting_weight)
    scales = FeatureScales()
    payload = _resume(folder, config)
    generator = torch.Generator()
    if payload is None:
        model = build_model(config.model, seed=config.seed)
        optimizer = make_optimizer(model, config.a2c)
        generator.manual_seed(config.seed)
        done_epochs = 0
        _write_log_header(folder / LOG_FILE)
    else:
        model = model_from_checkpoint(payload, str(folder / MODEL_FILE))
        optimizer = make_optimizer(model, config.a2c)
        optimizer.load_state_dict(payload["optimizer"])
        generator.set_state(payload["rng"])
        done_epochs = int(payload["progress"]["epochs_done"])
        log(f"resuming after epoch {done_epochs} of {config.epochs * len(config.workloads)}")
    model.train()
    total = config.epochs * len(config.workloads)
    ran: list[EpochStats] = []
    for index in range(done_epochs, total):
        stage, epoch = divmod(index, config.epochs)
        workload = config.workloads[stage]
        began = time.perf_counter()

        def progress(steps: int, now: float, _index=index) -> None:
            log(f"  epoch {_index + 1}/{total}: {steps} steps, simulated {now / 3600:.0f} h")

        steps, updates, terms = run_epoch(env, stage, model, optimizer, config.a2c, generator,
                                          progress)
        rewards = np.array(terms)
        stats = EpochStats(stage=stage, workload=Path(workload).name, epoch=epoch + 1,
                           steps=steps, updates=updates, reward=float(rewards[:, 0].sum()),
                           energy_term=float(rewards[:, 1].mean()),
                           waiting_term=float(rewards[:, 2].mean()),
                           invalid_actions=int(rewards[:, 3].sum()),
                           wall_s=time.perf_counter() - began)
        save_checkpoint(folder / MODEL_FILE, model, optimizer, scales,
                        {"config": config.key(), "epochs_done": index + 1},
                        generator)
        _append_log(folder / LOG_FILE, stats)
        ran.append(stats)
        log(f"epoch {index + 1}/{total} [{Path(workload).name} {epoch + 1}/{config.epochs}]: "
            f"{steps} steps, reward {stats.reward:.1f} (mean {stats.reward / steps:.4f}), "
            f"energy {stats.energy_term:.3f}, waiting {stats.waiting_term:.3f}, "
            f"{stats.wall_s:.1f} s")
    return ran


def _write_log_header(path: Path) -> None:
    with open(path, "w", newline="") as out:
        csv.DictWriter(out, LOG_COLUMNS).writeheader()


def _append_log(path: Path, stats: EpochStats) -> None:
    if not path.exists():
        _write_log_header(path)
    with open(path, "a", newline="") as out:
        csv.DictWriter(out, LOG_COLUMNS).writerow(stats.row())


def evaluate(platform: str | Path, workload: str | Path, actor: Callable,
             options: dict[str, Any] | None = None, max_steps: int | None = None) -> float:
    """The episode reward of ``actor`` on one workload (for comparisons)."""
    env = PowerManagementEnv(platform, [workload], options=options, max_steps=max_steps)
    obs, _ = env.reset(seed=0)
    while True:
        obs, _, terminated, truncated, _ = env.step(actor(as_observation(obs)))
        if terminated or truncated:
            return env.episode_reward


def write_summary(folder: str | Path, stats: Sequence[EpochStats]) -> None:
    """``MODEL_DIR/summary.json``: wall time and the last epoch's figures (atomically)."""
    folder = Path(folder)
    rows = list(csv.DictReader(open(folder / LOG_FILE)))
    wall = sum(float(row["wall_s"]) for row in rows)
    summary = {"epochs": len(rows), "train_wall_s": round(wall, 3),
               "last": rows[-1] if rows else None,
               "nan_rewards": any(math.isnan(float(row["reward"])) for row in rows)}
    atomic_write_text(folder / "summary.json", json.dumps(summary, indent=2) + "\n")
