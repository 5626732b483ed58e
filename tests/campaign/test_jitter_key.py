"""The campaign's transition-jitter keys: checked, hashed only when set, run and recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.errors import CampaignFileError
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runs import execute

from .test_config import GROUP, HEAD

EXPE = Path(__file__).resolve().parents[2] / "expe"


@pytest.mark.parametrize(("extra", "words"), [
    ("transition_jitter = 0.1\n", "needs a seed"),
    ("seed = 42\n", "only seeds transition_jitter"),
    ("transition_jitter = 1.5\nseed = 1\n", "in [0, 1)"),
    ("transition_jitter = 0.1\nseed = -3\n", "integer >= 0"),
])
def test_bad_jitter_keys(write_campaign, extra: str, words: str):
    with pytest.raises(CampaignFileError, match=words.replace("[", "\\[").replace(")", "\\)")):
        read_campaign(write_campaign(HEAD + GROUP + extra))


def test_jitter_runs_are_their_own_and_recorded(write_campaign, tmp_path: Path):
    text = HEAD + GROUP + GROUP.replace('name = "g"', 'name = "j"') \
        + "transition_jitter = 0.1\nseed = 42\n"
    plans = expand(read_campaign(write_campaign(text))).plans
    assert len(plans) == 2  # same policy and options, but one is jittered
    specs = make_specs(plans, tmp_path / "runs")
    plain, jittered = sorted(specs, key=lambda s: "transition_jitter" in s.params)
    assert "transition_jitter" not in plain.params and "seed" not in plain.params
    assert (jittered.params["transition_jitter"], jittered.params["seed"]) == (0.1, 42)
    folder = execute(jittered)
    metrics = json.loads((folder / "metrics.json").read_text())
    assert (metrics["transition_jitter"], metrics["seed"]) == (0.1, 42)
    assert "transition_jitter" not in json.loads(
        (execute(plain) / "metrics.json").read_text())


def test_paper_jitter_campaign_is_the_base_group_jittered():
    campaign = read_campaign(EXPE / "paper-jitter.toml")
    (group,) = campaign.groups
    assert (group.transition_jitter, group.seed) == (0.1, 42)
    assert len(expand(campaign).plans) == 36
    base = next(g for g in read_campaign(EXPE / "paper.toml").groups if g.name == "base")
    assert (group.cases, group.policies) == (base.cases, base.policies)
