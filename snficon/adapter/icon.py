"""SNF-ICON as a pybatsim scheduler (``pybatsim snficon``) and its variants."""

from __future__ import annotations

from typing import Any

import numpy as np

from snficon.adapter.scheduler import Policy, PolicyScheduler
from snficon.core.controller import IconMemory, decide_icon
from snficon.core.params import IconParams
from snficon.core.spare import SpareCosts
from snficon.core.view import ClusterView, Decisions
from snficon.platform.model import PowerModel

#: The paper's variants as option presets (NG: no gate, NF: no fallback).
VARIANTS: dict[str, dict[str, bool]] = {
    "snficon": {},
    "snficon-ng": {"gate": False},
    "snficon-nf": {"fallback": False},
    "snficon-ngnf": {"gate": False, "fallback": False},
}


class IconPolicy:
    """Holds SNF-ICON's memory between invocations; each call is :func:`decide_icon`."""

    def __init__(self, params: IconParams, power: PowerModel) -> None:
        self.params = params
        self.p_sleep_w = np.asarray(power.p_sleep_w)
        self.memory = IconMemory.initial(len(self.p_sleep_w), params)
        self.costs: SpareCosts | None = None

    def __call__(self, view: ClusterView) -> Decisions:
        if self.costs is None:  # the platform's constants, from the first view's node arrays
            self.costs = SpareCosts.of(view.nodes, self.p_sleep_w, self.params)
        decisions, self.memory = decide_icon(view, self.memory, self.params, self.costs)
        return decisions


class SnficonScheduler(PolicyScheduler):
    """SNF-ICON (options: every parameter of Table I, ``platform``, ``decisions``)."""

    preset: dict[str, bool] = {}

    def configure(self, options: dict[str, Any]) -> None:
        self.params = IconParams.from_options({**self.preset, **options})

    def make_policy(self, power: PowerModel) -> Policy:
        return IconPolicy(self.params, power)


class SnficonNgScheduler(SnficonScheduler):
    preset = VARIANTS["snficon-ng"]


class SnficonNfScheduler(SnficonScheduler):
    preset = VARIANTS["snficon-nf"]


class SnficonNgnfScheduler(SnficonScheduler):
    preset = VARIANTS["snficon-ngnf"]
