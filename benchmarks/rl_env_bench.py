"""Steps per second of the Gymnasium environment (run by hand, not by pytest).

    uv run python benchmarks/rl_env_bench.py --workload workloads/das2-fs1-3001-4000.json
    uv run python benchmarks/rl_env_bench.py --workload W.json --actor model --repeat 3

One episode of ``snficon/PowerManagement-v0`` on AOBA-64 (default) per
repetition, with an actor: ``keep`` (every node keeps: the environment
alone), ``off`` (switch every idle node off: many more switches, so more
invocations), ``random`` (masked uniform actions) or ``model`` (the
untrained Budiarjo network, greedy, one PyTorch thread: what evaluation
costs). Prints steps, simulated invocations, wall time and steps/s per
repetition, and the median.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from snficon.rl.env import PowerManagementEnv, as_observation
from snficon.rl.features import SWITCH_OFF, SWITCH_ON
from snficon.rl.power import keep_all, switch_off_idle


def random_actor(seed: int):
    rng = np.random.default_rng(seed)

    def actor(observation):
        choice = rng.integers(0, 3, size=observation.mask.shape[0])
        allowed = observation.mask[np.arange(len(choice)), choice]
        return np.where(allowed, choice, 0)
    return actor


def make_actor(name: str):
    if name == "keep":
        return keep_all
    if name == "off":
        return switch_off_idle
    if name == "random":
        return random_actor(0)
    import torch

    from snficon.core.params import RlParams
    from snficon.rl.agent import load_actor

    torch.set_num_threads(1)
    return load_actor(RlParams())[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platform", default="platforms/aoba-64.xml")
    parser.add_argument("--workload", required=True)
    parser.add_argument("--actor", choices=("keep", "off", "random", "model"), default="keep")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    rates = []
    for rep in range(args.repeat):
        env = PowerManagementEnv(args.platform, [args.workload])
        actor = make_actor(args.actor)
        began = time.perf_counter()
        obs, _ = env.reset(seed=rep)
        steps, done = 0, False
        switched = 0
        while not done:
            actions = actor(as_observation(obs))
            switched += int(np.isin(actions, (SWITCH_ON, SWITCH_OFF)).sum())
            obs, _, terminated, truncated, _ = env.step(actions)
            steps += 1
            done = terminated or truncated
        wall = time.perf_counter() - began
        rates.append(steps / wall)
        print(f"rep {rep}: {steps} steps, {switched} switch actions, "
              f"{env.episode_reward:.2f} reward, {wall:.2f} s, {steps / wall:.0f} steps/s")
    print(f"median: {statistics.median(rates):.0f} steps/s ({args.actor} actor, "
          f"{args.workload})")


if __name__ == "__main__":
    main()
