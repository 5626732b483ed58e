"""A policy is a composition of parts; the parts table names every part users can pick.

:data:`PARTS` is the one table of parts: dispatch orders, power managers and
layers (:mod:`snficon.core.parts`). A new kind of decision is one new module
and one line here. :func:`compose` checks a choice of parts and their options
(each part's parameters dataclass checks its own fields) and returns a
:class:`Composition`; :meth:`Composition.build` makes the run's
:class:`Policy`, which answers each invocation.

Options are addressed by flat name (``alpha``: the one part of the
composition that has it) or by part (``icon.alpha``); a flat name two parts
share must be addressed by part.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from snficon.core.carbon_icon import CarbonIconParams, build_carbon_icon
from snficon.core.carbon_layer import CarbonLayerParams, build_carbon_layer
from snficon.core.controller import IconPower
from snficon.core.dispatch import EasyOrder, SnfOrder
from snficon.core.ipm import IpmPower
from snficon.core.params import (
    EasyParams,
    IconParams,
    IpmParams,
    NoParams,
    RlParams,
    params_from_options,
    unknown_option_error,
)
from snficon.core.parts import (
    LAYER,
    ORDER,
    POWER,
    DispatchOrder,
    Layer,
    PartSpec,
    PowerManager,
)
from snficon.core.time_limits import TimeLimitParams, build_time_limits
from snficon.core.view import ClusterView, Decisions
from snficon.errors import InputError

#: Every part users can name, by name.
PARTS: dict[str, PartSpec] = {spec.name: spec for spec in (
    PartSpec("snf", ORDER, "SNF", NoParams, lambda params, p_sleep: SnfOrder(),
             "smallest-need-first (eq. 4), sequential PSAS plan"),
    PartSpec("fcfs-easy", ORDER, "FCFS/B", EasyParams, lambda params, p_sleep: EasyOrder(params),
             "first-come-first-served with EASY backfilling (SPEC 5)"),
    PartSpec("ipm", POWER, "IPM", IpmParams, lambda params, p_sleep: IpmPower(params),
             "PSAS wake planning and the idle timeout"),
    PartSpec("icon", POWER, "ICON", IconParams, IconPower,
             "SNF-ICON's Markovianity-gated warm-spare controller (Algorithm 1)"),
    PartSpec("rl", POWER, "RL", RlParams, lambda params, p_sleep: importlib.import_module(
        "snficon.rl.power").build_rl_power(params, p_sleep),  # PyTorch, only when built
             "RL Budiarjo's learned power manager (attention actor-critic, snficon.rl)"),
    PartSpec("time-limits", LAYER, "TL", TimeLimitParams, build_time_limits,
             "checkpoint-aware time limits: enforce, early-cancel, extend or hybrid"),
    PartSpec("icon-carbon", POWER, "ICON/C", CarbonIconParams, build_carbon_icon,
             "SNF-ICON's controller with J(x)'s energy weighted by carbon intensity"),
    PartSpec("coast", LAYER, "COAST", CarbonLayerParams, build_carbon_layer("coast"),
             "COAST's carbon- and congestion-aware start times (the congestion game)"),
    PartSpec("carbon-greedy", LAYER, "CG", CarbonLayerParams, build_carbon_layer(
        "carbon-greedy"), "each flexible job alone at its lowest-carbon start"),
    PartSpec("carbon-wait", LAYER, "CW", CarbonLayerParams, build_carbon_layer("carbon-wait"),
             "each flexible job alone minimising carbon plus waiting"),
)}


def part_names(kind: str) -> list[str]:
    """The names of the parts of one kind (``order``, ``power`` or ``layer``)."""
    return [name for name, spec in PARTS.items() if spec.kind == kind]


def parts_label(parts: Sequence[str]) -> str:
    """The label of a composition from its parts' labels, joined by ``+`` (an unknown
    part shows its name)."""
    return "+".join(PARTS[name].label if name in PARTS else name for name in parts)


def _part(name: str, kind: str) -> PartSpec:
    spec = PARTS.get(name)
    if spec is None or spec.kind != kind:
        raise InputError(f"unknown {kind} {name!r} (known: {', '.join(part_names(kind))})")
    return spec


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


@dataclass(frozen=True)
class Composition:
    """A checked choice of parts and the parameters of each (by part name)."""

    order: str
    power: str
    layers: tuple[str, ...]
    params: Mapping[str, Any]

    @property
    def parts(self) -> tuple[str, ...]:
        return (self.order, self.power, *self.layers)

    @property
    def label(self) -> str:
        """``ORDER+POWER[+LAYER...]`` from the parts' labels (e.g. ``FCFS/B+ICON``)."""
        return parts_label(self.parts)

    def build(self, p_sleep_w: np.ndarray) -> Policy:
        """The policy for a run on a platform with per-node sleep power ``p_sleep_w`` (W)."""
        made = [PARTS[name].build(self.params[name], p_sleep_w) for name in self.parts]
        return Policy(order=made[0], power=made[1], layers=tuple(made[2:]))


def compose(order: str, power: str, layers: Sequence[str] = (),
            options: Mapping[str, Any] | None = None) -> Composition:
    """Check a composition and its options; raise InputError naming the fault.

    ``options`` are flat names or ``part.name``; each goes to the part that has
    the field, and each part's parameters dataclass checks its own values.
    """
    specs = [_part(order, ORDER), _part(power, POWER), *(_part(n, LAYER) for n in layers)]
    if len({spec.name for spec in specs}) != len(specs):
        raise InputError(f"a part is named twice in {[spec.name for spec in specs]}")
    fields = {spec.name: {f.name for f in dataclasses.fields(spec.params)} for spec in specs}
    chosen: dict[str, dict[str, Any]] = {spec.name: {} for spec in specs}
    for key, value in (options or {}).items():
        part, dot, name = key.rpartition(".")
        if dot:
            if part not in chosen:
                raise InputError(f"option {key!r}: {part!r} is not a part of this policy "
                                 f"({', '.join(chosen)})")
            owners = [part] if name in fields[part] else []
        else:
            owners = [p for p, names in fields.items() if name in names]
        if len(owners) > 1:
            raise InputError(f"option {key!r} belongs to {' and '.join(owners)}: write "
                             f"{' or '.join(f'{o}.{name}' for o in owners)}")
        if not owners:
            scope = part if dot else None
            known = sorted(fields[scope] if scope else set().union(*fields.values()))
            raise unknown_option_error(name, known, f"part {scope}" if scope else
                                       "+".join(chosen))
        chosen[owners[0]][name] = value
    params = {spec.name: params_from_options(spec.params, chosen[spec.name], spec.name)
              for spec in specs}
    return Composition(order=order, power=power, layers=tuple(layers), params=params)


def decide_snf_ipm(view: ClusterView, params: IpmParams | None = None) -> Decisions:
    """SNF+IPM: smallest-need-first dispatch, PSAS wake planning, idle timeout."""
    return Policy(SnfOrder(), IpmPower(params or IpmParams()))(view)


def decide_fcfs_easy_ipm(view: ClusterView, params: IpmParams | None = None) -> Decisions:
    """FCFS/EASY+IPM: the PSAS+IPM baseline of Prasasta et al."""
    return Policy(EasyOrder(), IpmPower(params or IpmParams()))(view)
