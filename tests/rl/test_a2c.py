"""A2C updates (snficon.rl.a2c), on synthetic rollouts."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the RL tests need the 'rl' dependency group "
                    "(uv sync --group rl)")

from snficon.rl.a2c import (  # noqa: E402 (after the skip)
    A2CConfig,
    Rollout,
    RolloutBuffer,
    a2c_loss,
    a2c_update,
    discounted_returns,
    make_optimizer,
)
from snficon.rl.features import (  # noqa: E402
    KEEP,
    NODE_FEATURES,
    QUEUE_FEATURES,
    SWITCH_OFF,
    Observation,
)
from snficon.rl.model import ModelConfig, act, build_model  # noqa: E402

SMALL = ModelConfig(embed_dim=16, heads=2, layers=1, ff_hidden=32)
F, Q = len(NODE_FEATURES), len(QUEUE_FEATURES)
PLANNED = NODE_FEATURES.index("planned")


def idle_cluster(rng, nodes=6):
    """All nodes idle (keep or switch off); the ``planned`` feature says which a job needs."""
    features = np.zeros((nodes, F), dtype=np.float32)
    features[:, NODE_FEATURES.index("idle")] = 1
    features[:, PLANNED] = rng.integers(0, 2, nodes)
    mask = np.zeros((nodes, 3), dtype=bool)
    mask[:, KEEP] = mask[:, SWITCH_OFF] = True
    return Observation(nodes=features, queue=np.zeros(Q, dtype=np.float32), mask=mask)


def bandit_reward(obs, actions):
    """+1 per unneeded node switched off, -2 per needed node switched off, over the nodes."""
    off = actions == SWITCH_OFF
    planned = obs.nodes[:, PLANNED] == 1
    return float((off & ~planned).sum() - 2 * (off & planned).sum()) / len(actions)


def random_rollout(seed=0, steps=16, nodes=6):
    rng = np.random.default_rng(seed)
    buffer = RolloutBuffer()
    for _ in range(steps):
        obs = idle_cluster(rng, nodes)
        actions = np.where(rng.random(nodes) < 0.5, SWITCH_OFF, KEEP)
        buffer.append(obs, actions, bandit_reward(obs, actions), done=True)
    return buffer.rollout(last_value=0.0)


class TestReturns:
    def test_closed_form_without_end(self):
        # constant reward 1 for 5 steps, gamma 0.9, V(s_5) = 2
        returns = discounted_returns(np.ones(5), np.zeros(5, bool), 2.0, 0.9)
        expected = [(1 - 0.9 ** (5 - t)) / (1 - 0.9) + 0.9 ** (5 - t) * 2 for t in range(5)]
        assert returns == pytest.approx(expected)

    def test_an_episode_end_cuts_the_sum(self):
        rewards = np.array([1.0, 2.0, 3.0, 4.0])
        dones = np.array([False, True, False, False])
        returns = discounted_returns(rewards, dones, 10.0, 0.5)
        assert returns == pytest.approx([1 + 0.5 * 2, 2, 3 + 0.5 * (4 + 0.5 * 10), 4 + 5])

    def test_environments_side_by_side(self):
        rewards = np.array([[1.0, 0.0], [1.0, 1.0]])
        dones = np.array([[False, False], [False, True]])
        returns = discounted_returns(rewards, dones, np.array([4.0, 4.0]), 0.5)
        assert returns.tolist() == [[1 + 0.5 * 3, 0 + 0.5 * 1], [3, 1]]


class TestUpdate:
    def test_losses_decrease_on_a_fixed_batch(self):
        model = build_model(SMALL, seed=0)
        config = A2CConfig(learning_rate=3e-3, entropy_coef=0.0)
        optimizer = make_optimizer(model, config)
        rollout = random_rollout()
        first = a2c_update(model, optimizer, rollout, config)
        for _ in range(60):
            last = a2c_update(model, optimizer, rollout, config)
        assert last.value_loss < 0.2 * first.value_loss
        # the policy moved towards the actions with a positive return
        nodes, queue = torch.from_numpy(rollout.nodes), torch.from_numpy(rollout.queue)
        out = model(nodes, queue, torch.from_numpy(rollout.mask))
        off_unplanned = torch.softmax(out.logits, -1)[..., SWITCH_OFF][
            torch.from_numpy(rollout.nodes[..., PLANNED] == 0)]
        assert off_unplanned.mean().item() > 0.6

    def test_gradient_is_clipped(self):
        model = build_model(SMALL, seed=1)
        config = A2CConfig(max_grad_norm=1e-3, learning_rate=1e-3)
        stats = a2c_update(model, make_optimizer(model, config), random_rollout(), config)
        norm = torch.linalg.vector_norm(torch.stack(
            [torch.linalg.vector_norm(p.grad) for p in model.parameters() if p.grad is not None]))
        assert stats.grad_norm > 1e-3 and norm.item() <= 1e-3 * (1 + 1e-5)

    def test_same_seeds_same_training(self):
        def train():
            model = build_model(SMALL, seed=2)
            config = A2CConfig(learning_rate=1e-3)
            optimizer = make_optimizer(model, config)
            for seed in range(3):
                a2c_update(model, optimizer, random_rollout(seed), config)
            return [p.detach().clone() for p in model.parameters()]
        for a, b in zip(train(), train(), strict=True):
            assert torch.equal(a, b)

    def test_rollouts_of_environments_side_by_side(self):
        a, b = random_rollout(0, steps=4), random_rollout(1, steps=4)
        both = Rollout(*(np.stack([getattr(a, n), getattr(b, n)], axis=1) for n in
                         ("nodes", "queue", "mask", "actions", "rewards", "dones")),
                       last_value=np.zeros(2))
        model = build_model(SMALL, seed=3)
        config = A2CConfig()
        loss_both, _ = a2c_loss(model, both, config)
        loss_a, _ = a2c_loss(model, a, config)
        loss_b, _ = a2c_loss(model, b, config)
        assert loss_both.item() == pytest.approx((loss_a.item() + loss_b.item()) / 2, rel=1e-5)

    def test_entropy_bonus_keeps_the_policy_spread(self):
        rollout = random_rollout()
        spread = {}
        for coef in (0.0, 1.0):
            model = build_model(SMALL, seed=4)
            config = A2CConfig(learning_rate=3e-3, entropy_coef=coef)
            optimizer = make_optimizer(model, config)
            for _ in range(40):
                stats = a2c_update(model, optimizer, rollout, config)
            spread[coef] = stats.entropy
        assert spread[1.0] > spread[0.0]

    def test_bad_config(self):
        with pytest.raises(ValueError, match="gamma must be in"):
            A2CConfig(gamma=1.5)
        with pytest.raises(ValueError, match="max_grad_norm must be a positive number"):
            A2CConfig(max_grad_norm=0)


def score(policy, episodes=100):
    """Mean reward of ``policy`` (observation -> actions) on a fixed set of clusters."""
    rng = np.random.default_rng(99)
    observations = [idle_cluster(rng) for _ in range(episodes)]
    return float(np.mean([bandit_reward(obs, policy(obs)) for obs in observations]))


def test_learns_to_switch_off_the_nodes_no_job_needs():
    """A one-step task whose right answer is obvious: switch off an idle node exactly
    when the plan does not use it. Sampling from the untrained network scores below 0
    (about half the nodes go off, needed or not); the trained greedy policy scores as
    well as the right rule."""
    rng = np.random.default_rng(0)
    model = build_model(SMALL, seed=0)
    config = A2CConfig(learning_rate=3e-3, entropy_coef=0.001)
    optimizer = make_optimizer(model, config)
    generator = torch.Generator().manual_seed(0)

    def sampled(obs):
        return act(model, obs, generator).actions

    def greedy(obs):
        return act(model, obs, greedy=True).actions

    def right_rule(obs):
        return np.where(obs.nodes[:, PLANNED] == 0, SWITCH_OFF, KEEP)

    before = score(sampled)
    buffer = RolloutBuffer()
    for _ in range(80):
        for _ in range(16):
            obs = idle_cluster(rng)
            actions = sampled(obs)
            buffer.append(obs, actions, bandit_reward(obs, actions), done=True)
        a2c_update(model, optimizer, buffer.rollout(0.0), config)
    assert before < 0.0
    assert score(greedy) == pytest.approx(score(right_rule), abs=1e-9)
