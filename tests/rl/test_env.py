"""The Gymnasium environment (snficon.rl.env) on the tiny case and on AOBA-64."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

gym = pytest.importorskip(
    "gymnasium", reason="Gymnasium is not installed: the RL tests need the 'rl' dependency "
                        "group (uv sync --group rl)")

from gymnasium.utils.env_checker import check_env  # noqa: E402 (after the skip)

from snficon.analysis.metrics import metrics_from_outputs  # noqa: E402
from snficon.rl.env import ENV_ID, PowerManagementEnv, as_observation  # noqa: E402
from snficon.rl.features import KEEP, SWITCH_OFF, SWITCH_ON  # noqa: E402
from snficon.rl.power import keep_all, switch_off_idle  # noqa: E402
from tests.rl.conftest import TINY_JOBS  # noqa: E402


def run_episode(env: PowerManagementEnv, actor, seed: int = 0) -> tuple[list[float], dict]:
    """Rewards of one episode under ``actor`` (an Observation -> actions function)."""
    obs, info = env.reset(seed=seed)
    rewards = []
    while True:
        obs, reward, terminated, truncated, info = env.step(actor(as_observation(obs)))
        rewards.append(reward)
        if terminated or truncated:
            return rewards, info


def test_check_env_passes(tiny_case):
    platform, workload = tiny_case
    check_env(PowerManagementEnv(platform, [workload]), skip_render_check=True)


def test_registered_and_spaces(tiny_case):
    platform, workload = tiny_case
    env = gym.make(ENV_ID, platform=platform, workloads=[workload])
    obs, info = env.reset(seed=3)
    assert env.action_space.shape == (4,)
    assert obs["nodes"].shape == (4, 13) and obs["queue"].shape == (7,)
    assert obs["mask"].shape == (4, 3) and obs["mask"][:, KEEP].all()
    assert env.observation_space.contains(obs)
    env.close()


def test_every_job_runs_and_the_episode_ends(tiny_case):
    platform, workload = tiny_case
    env = PowerManagementEnv(platform, [workload])
    rewards, info = run_episode(env, switch_off_idle)
    jobs = env.outputs().jobs
    assert len(jobs) == TINY_JOBS
    assert all(r <= 0 for r in rewards)


def test_reset_with_a_seed_is_reproducible(tiny_case):
    platform, workload = tiny_case
    env = PowerManagementEnv(platform, [workload])

    def sampled(seed):
        obs, _ = env.reset(seed=seed)
        out = []
        while True:
            obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
            out.append(reward)
            if terminated or truncated:
                return out

    first, again, other = sampled(7), sampled(7), sampled(8)
    assert first == again
    assert first != other


def test_switching_off_unused_nodes_beats_keeping_them(tiny_case):
    """Hand check of the reward: three nodes are never needed, so switching idle nodes off
    must give a better episode reward than keeping every node on. Keeping, the nodes with
    a choice are idle the whole step: energy term 100 W / 150 W (idle over the largest
    non-computing power, switch-on's), no waiting, so each step's reward is -0.5 x 2/3."""
    platform, workload = tiny_case
    env = PowerManagementEnv(platform, [workload])
    keep, _ = run_episode(env, keep_all)
    off, _ = run_episode(env, switch_off_idle)
    assert sum(off) > sum(keep) + 0.1 * len(keep)
    assert np.mean(keep) == pytest.approx(-1 / 3, abs=0.02)


def test_forbidden_actions_are_kept_and_counted(tiny_case):
    platform, workload = tiny_case
    env = PowerManagementEnv(platform, [workload])
    obs, _ = env.reset(seed=0)
    action = np.full(4, SWITCH_ON)  # every node is idle at t=0: switch-on is forbidden
    assert not obs["mask"][:, SWITCH_ON].any()
    _, _, _, _, info = env.step(action)
    assert info["invalid_actions"] == 4


def test_max_steps_truncates(tiny_case):
    platform, workload = tiny_case
    env = PowerManagementEnv(platform, [workload], max_steps=3)
    env.reset(seed=0)
    flags = [env.step(np.full(4, SWITCH_OFF))[3] for _ in range(3)]
    assert flags == [False, False, True]


def test_curriculum_episodes_take_the_workloads_in_turn(tiny_case, tmp_path):
    platform, workload = tiny_case
    env = PowerManagementEnv(platform, [workload, workload])
    names = [env.reset()[1]["workload"] for _ in range(3)]
    assert names == [str(workload)] * 3
    with pytest.raises(Exception, match="not an index"):
        env.reset(options={"workload": 2})


def test_async_vector_env_with_two_processes(tiny_case):
    platform, workload = tiny_case
    envs = gym.vector.AsyncVectorEnv(
        [lambda: gym.make(ENV_ID, platform=platform, workloads=[workload])] * 2)
    try:
        obs, _ = envs.reset(seed=[1, 2])
        assert obs["nodes"].shape == (2, 4, 13)
        for _ in range(20):
            actions = np.where(obs["mask"][..., SWITCH_OFF] == 1, SWITCH_OFF, KEEP)
            obs, rewards, terminated, truncated, _ = envs.step(actions)
            assert rewards.shape == (2,)
    finally:
        envs.close()


def test_the_env_simulates_what_the_policy_runs(tiny_case, tmp_path):
    """The same actor inside ``snficon run``'s in-process driver and stepped through the
    environment gives the same simulation, job for job and joule for joule."""
    pytest.importorskip("torch", reason="PyTorch is not installed (uv sync --group rl)")
    from snficon.core.params import RlParams
    from snficon.drivers.session import simulate_in_process
    from snficon.rl.agent import load_actor

    platform, workload = tiny_case
    simulate_in_process(platform, [workload], "rlBudiarjo",
                              {"model": "untrained", "init_seed": 3, "platform": str(platform)},
                              export_prefix=tmp_path / "run" / "out")
    env = PowerManagementEnv(platform, [workload])
    actor, _ = load_actor(RlParams(init_seed=3))
    run_episode(env, actor)
    stepped = env.outputs().write(tmp_path / "env" / "out")
    assert stepped
    switches = (tmp_path / "run" / "out_pstate_changes.csv").read_text().splitlines()
    assert len(switches) > 3  # the actor switched nodes: the comparison is not of idle runs
    for name in ("jobs", "machine_states"):
        assert (tmp_path / "run" / f"out_{name}.csv").read_text() == \
            (tmp_path / "env" / f"out_{name}.csv").read_text()
    a = metrics_from_outputs(tmp_path / "run" / "out")
    b = metrics_from_outputs(tmp_path / "env" / "out")
    assert a.energy_wasted == b.energy_wasted and a.mean_wait == b.mean_wait


def test_importing_the_core_does_not_import_torch():
    code = ("import sys, snficon.core.policy, snficon.part_registry, snficon.policy_table, "
            "snficon.rl.power; "
            "sys.exit(int('torch' in sys.modules or 'gymnasium' in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
