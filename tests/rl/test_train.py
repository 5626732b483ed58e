"""Training RL Budiarjo (snficon.rl.train) on the tiny case: it must learn the obvious.

Three of the four nodes are never needed and the fourth is idle 40 % of the
time, so switching idle nodes off is right (sleep draws 10 W, idle 100 W;
a job that arrives to sleeping nodes waits 32 s for a wake-up). A small
network trained for a few hundred steps must beat keeping every node on,
the trivial baseline, by a clear share of the hand-written switch-off
policy's advantage over it.
"""

from __future__ import annotations

import csv

import pytest

torch = pytest.importorskip(
    "torch", reason="PyTorch is not installed: the RL tests need the 'rl' dependency group "
                    "(uv sync --group rl)")
pytest.importorskip("gymnasium", reason="Gymnasium is not installed (uv sync --group rl)")

from snficon.errors import InputError  # noqa: E402 (after the skip)
from snficon.rl.a2c import A2CConfig  # noqa: E402
from snficon.rl.agent import TorchActor, model_from_checkpoint, read_checkpoint  # noqa: E402
from snficon.rl.model import ModelConfig  # noqa: E402
from snficon.rl.power import keep_all, switch_off_idle  # noqa: E402
from snficon.rl.train import LOG_FILE, MODEL_FILE, TrainConfig, evaluate, train  # noqa: E402

SMALL = ModelConfig(embed_dim=16, heads=2, layers=1, ff_hidden=32, actor_hidden=(16,),
                    critic_hidden=(16,))
OPTIONS = {"every_event": True}


def tiny_config(platform, workload, epochs: int, seed: int = 0) -> TrainConfig:
    return TrainConfig(platform=str(platform), workloads=(str(workload),), epochs=epochs,
                       seed=seed, every_event=True, model=SMALL,
                       a2c=A2CConfig(learning_rate=3e-3, rollout_steps=8, entropy_coef=0.0))


def greedy_reward(platform, workload, folder) -> float:
    model = model_from_checkpoint(read_checkpoint(folder / MODEL_FILE))
    return evaluate(platform, workload, TorchActor(model, greedy=True), OPTIONS)


def test_training_beats_keeping_every_node_on(tiny_case, tmp_path):
    platform, workload = tiny_case
    keep = evaluate(platform, workload, keep_all, OPTIONS)
    off = evaluate(platform, workload, switch_off_idle, OPTIONS)
    assert off > keep  # the case is what it claims
    stats = train(tiny_config(platform, workload, epochs=12), tmp_path / "m", log=lambda _: None)
    steps = sum(s.steps for s in stats)
    assert 200 <= steps <= 2000  # "a few hundred steps"
    trained = greedy_reward(platform, workload, tmp_path / "m")
    assert trained > keep + 0.5 * (off - keep), (keep, off, trained)


def test_training_resumes_to_the_same_model(tiny_case, tmp_path):
    """Two epochs then two more give the network four epochs in one go give."""
    platform, workload = tiny_case
    train(tiny_config(platform, workload, epochs=4), tmp_path / "once", log=lambda _: None)
    config_two = tiny_config(platform, workload, epochs=4)
    folder = tmp_path / "twice"
    # stop after two epochs: train a 2-epoch run, then re-key it as the 4-epoch one
    import dataclasses

    train(dataclasses.replace(config_two, epochs=2), folder, log=lambda _: None)
    payload = read_checkpoint(folder / MODEL_FILE)
    payload["progress"]["config"] = config_two.key()
    torch.save(payload, folder / MODEL_FILE)
    ran = train(config_two, folder, log=lambda _: None)
    assert [s.epoch for s in ran] == [3, 4]
    once = read_checkpoint(tmp_path / "once" / MODEL_FILE)["model"]
    twice = read_checkpoint(folder / MODEL_FILE)["model"]
    assert all(torch.equal(once[k], twice[k]) for k in once)
    rows = list(csv.DictReader(open(folder / LOG_FILE)))
    assert [int(r["epoch"]) for r in rows] == [1, 2, 3, 4]


def test_a_folder_of_other_settings_is_refused(tiny_case, tmp_path):
    platform, workload = tiny_case
    train(tiny_config(platform, workload, epochs=1), tmp_path / "m", log=lambda _: None)
    with pytest.raises(InputError, match="other settings"):
        train(tiny_config(platform, workload, epochs=1, seed=5), tmp_path / "m",
              log=lambda _: None)


def test_a_trained_model_runs_as_the_rlbudiarjo_policy(tiny_case, tmp_path):
    from snficon.drivers.session import simulate_in_process

    platform, workload = tiny_case
    train(tiny_config(platform, workload, epochs=1), tmp_path / "m", log=lambda _: None)
    result = simulate_in_process(platform, [workload], "rlBudiarjo",
                                 {"model": str(tmp_path / "m" / MODEL_FILE),
                                  "every_event": True, "platform": str(platform)})
    assert len(result.tables.jobs) == 12
    with pytest.raises(InputError, match="model file not found"):
        simulate_in_process(platform, [workload], "rlBudiarjo",
                            {"model": str(tmp_path / "none.pt"), "platform": str(platform)})
