"""The Budiarjo actor-critic network (snficon.rl.model), on synthetic tensors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the RL tests need the 'rl' dependency group "
                    "(uv sync --group rl)")

from snficon.rl.features import (  # noqa: E402 (after the skip)
    ACTIONS,
    KEEP,
    NODE_FEATURES,
    QUEUE_FEATURES,
    SWITCH_OFF,
    SWITCH_ON,
    Observation,
    switches,
)
from snficon.rl.model import (  # noqa: E402
    ModelConfig,
    act,
    build_model,
    masked_action_logits,
    sample_actions,
)

SMALL = ModelConfig(embed_dim=16, heads=2, layers=1, ff_hidden=32)
F, Q = len(NODE_FEATURES), len(QUEUE_FEATURES)


def random_masks(rng, batch, nodes):
    """Per node one of the three real cases: keep only, keep/on (asleep), keep/off (idle)."""
    kind = rng.integers(0, 3, (batch, nodes))
    mask = np.zeros((batch, nodes, 3), dtype=bool)
    mask[..., KEEP] = True
    mask[..., SWITCH_ON] = kind == 1
    mask[..., SWITCH_OFF] = kind == 2
    return torch.from_numpy(mask)


def random_inputs(seed=0, batch=3, nodes=6):
    rng = np.random.default_rng(seed)
    return (torch.from_numpy(rng.normal(size=(batch, nodes, F)).astype(np.float32)),
            torch.from_numpy(rng.normal(size=(batch, Q)).astype(np.float32)),
            random_masks(rng, batch, nodes))


class TestNetwork:
    def test_shapes(self):
        model = build_model(SMALL, seed=1)
        nodes, queue, mask = random_inputs(batch=3, nodes=6)
        out = model(nodes, queue, mask)
        assert out.logits.shape == (3, 6, len(ACTIONS)) and out.value.shape == (3,)
        # the same network takes any number of nodes
        assert model(*random_inputs(batch=2, nodes=11)).logits.shape == (2, 11, 3)

    def test_default_sizes_are_the_authors(self):
        config = ModelConfig()
        assert (config.embed_dim, config.heads, config.layers, config.ff_hidden) == \
            (128, 8, 3, 512)
        with pytest.raises(ValueError, match="multiple of heads"):
            ModelConfig(embed_dim=10, heads=3)

    def test_critic_depends_on_the_state(self):
        # unlike the authors' instance-normalised critic, which is the same for every state
        model = build_model(SMALL, seed=2)
        values = {round(model(*random_inputs(seed=s)).value[0].item(), 6) for s in range(5)}
        assert len(values) == 5

    def test_same_seed_same_weights_and_global_rng_untouched(self):
        torch.manual_seed(123)
        before = torch.rand(1)
        torch.manual_seed(123)
        a, b = build_model(SMALL, seed=7), build_model(SMALL, seed=7)
        assert torch.rand(1) == before  # building models did not draw from the global RNG
        c = build_model(SMALL, seed=8)
        for (name, pa), pb in zip(a.state_dict().items(), b.state_dict().values(),
                                  strict=True):
            assert torch.equal(pa, pb), name
        assert any(not torch.equal(pa, pc) for pa, pc in zip(
            a.parameters(), c.parameters(), strict=True))


class TestMasking:
    def test_masked_actions_have_probability_zero_and_are_never_sampled(self):
        model = build_model(SMALL, seed=3)
        nodes, queue, mask = random_inputs(seed=4, batch=8, nodes=10)
        out = model(nodes, queue, mask)
        probs = torch.softmax(out.logits, dim=-1)
        assert (probs[~mask] == 0).all()
        generator = torch.Generator().manual_seed(0)
        repeats = 500  # 500 draws for each of the 80 nodes
        drawn = sample_actions(out.logits.detach().expand(repeats, -1, -1, -1), generator)
        assert mask.expand(repeats, -1, -1, -1).gather(-1, drawn.unsqueeze(-1)).all()
        # and every allowed action does get drawn somewhere
        counts = torch.zeros(3)
        for action in range(3):
            counts[action] = (drawn == action).sum()
        assert (counts > 0).all()
        greedy = out.logits.argmax(dim=-1)
        assert mask.gather(-1, greedy.unsqueeze(-1)).all()

    def test_keep_only_nodes_add_nothing_to_log_prob_and_entropy(self):
        model = build_model(SMALL, seed=3)
        nodes, queue, _ = random_inputs(batch=1, nodes=4)
        mask = torch.zeros(1, 4, 3, dtype=torch.bool)
        mask[..., KEEP] = True
        out = model(nodes, queue, mask)
        keep = torch.zeros(1, 4, dtype=torch.long)
        assert out.log_prob(keep).item() == 0.0 and out.entropy().item() == 0.0

    def test_two_way_head_means_desired_state(self):
        # desired (off, on) logits of 2 nodes: node 0 asleep (may switch on), node 1 idle
        desired = torch.tensor([[[2.0, -1.0], [0.5, 3.0]]])
        mask = torch.tensor([[[True, True, False], [True, False, True]]])
        probs = torch.softmax(masked_action_logits(desired, mask), dim=-1)
        p_on_0 = torch.softmax(desired[0, 0], dim=0)[1]
        p_off_1 = torch.softmax(desired[0, 1], dim=0)[0]
        assert probs[0, 0, SWITCH_ON] == pytest.approx(float(p_on_0))
        assert probs[0, 0, KEEP] == pytest.approx(1 - float(p_on_0))
        assert probs[0, 1, SWITCH_OFF] == pytest.approx(float(p_off_1))
        assert probs[0, 1, KEEP] == pytest.approx(1 - float(p_off_1))

    def test_act_gives_allowed_switches(self):
        model = build_model(SMALL, seed=5)
        rng = np.random.default_rng(6)
        mask = random_masks(rng, 1, 12)[0].numpy()
        obs = Observation(nodes=rng.normal(size=(12, F)).astype(np.float32),
                          queue=rng.normal(size=Q).astype(np.float32), mask=mask)
        first = act(model, obs, torch.Generator().manual_seed(9))
        again = act(model, obs, torch.Generator().manual_seed(9))
        assert np.array_equal(first.actions, again.actions) and first.log_prob == again.log_prob
        on, off = switches(first.actions, mask)
        assert all(mask[i, SWITCH_ON] for i in on) and all(mask[i, SWITCH_OFF] for i in off)
        greedy = act(model, obs, greedy=True)
        assert greedy.log_prob <= 0

    def test_switches_refuses_a_masked_action(self):
        mask = np.array([[True, False, True], [True, True, False]])
        assert switches(np.array([2, 1]), mask) == ([1], [0])
        with pytest.raises(ValueError, match="node 1 cannot take action 'switch_off'"):
            switches(np.array([0, 2]), mask)
        with pytest.raises(ValueError, match="one action per node"):
            switches(np.array([0]), mask)
