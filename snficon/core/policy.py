"""A policy answers each invocation with its parts: a dispatch order, a power manager
and layers (:mod:`snficon.core.parts`).

Which parts a run uses is chosen above the core, by the part registry
(:mod:`snficon.part_registry`): its :func:`~snficon.part_registry.compose`
checks a choice of parts and their options and builds this :class:`Policy`.
"""

from __future__ import annotations

from dataclasses import dataclass

from snficon.core.dispatch import EasyOrder, SnfOrder
from snficon.core.ipm import IpmPower
from snficon.core.params import IpmParams
from snficon.core.parts import DispatchOrder, Layer, PowerManager
from snficon.core.view import ClusterView, Decisions


@dataclass
class Policy:
    """One run's policy: answers each invocation with its parts (:mod:`snficon.core.parts`)."""

    order: DispatchOrder
    power: PowerManager
    layers: tuple[Layer, ...] = ()

    def __call__(self, view: ClusterView) -> Decisions:
        for layer in self.layers:
            view = layer.admit(view)
        dispatched = self.order.dispatch(view)
        outcome = self.power.decide(view, dispatched, self.order)
        for layer in self.layers:
            layer.amend(view, dispatched, outcome, self.order)
        return outcome.decisions


def decide_snf_ipm(view: ClusterView, params: IpmParams | None = None) -> Decisions:
    """SNF+IPM: smallest-need-first dispatch, PSAS wake planning, idle timeout."""
    return Policy(SnfOrder(), IpmPower(params or IpmParams()))(view)


def decide_fcfs_easy_ipm(view: ClusterView, params: IpmParams | None = None) -> Decisions:
    """FCFS/EASY+IPM: the PSAS+IPM baseline of Prasasta et al."""
    return Policy(EasyOrder(), IpmPower(params or IpmParams()))(view)
