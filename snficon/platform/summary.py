"""Summarise a platform by node power model (what ``snficon platform show`` prints)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from snficon.platform.generate import NODE_MODELS, NodeModel
from snficon.platform.model import Platform


@dataclass(frozen=True)
class ModelGroup:
    """The nodes of a platform that share one power model.

    ``name`` is the registry name of a matching model of :data:`NODE_MODELS`
    (``"aoba"``, ``"taurus"``), else ``"custom"``, or ``"no-sleep"`` for nodes
    without a sleep state (then ``model`` is None). ``ids`` are resource ids.
    """

    name: str
    ids: tuple[int, ...]
    idle_w: float
    busy_w: float
    model: NodeModel | None

    @property
    def count(self) -> int:
        return len(self.ids)


def summarize(platform: Platform,
              known: Mapping[str, NodeModel] = NODE_MODELS) -> tuple[ModelGroup, ...]:
    """Group the nodes by identical power model, groups in order of their first id.

    The power model is the one of :meth:`Platform.power_model` (first sleep state).
    """
    power = platform.power_model()
    members: dict[tuple, list[int]] = {}
    for node in range(platform.nb_nodes):
        key = (bool(power.can_sleep[node]),) + tuple(float(array[node]) for array in (
            power.p_busy_w, power.p_idle_w, power.p_sleep_w,
            power.t_off_s, power.p_off_w, power.t_on_s, power.p_on_w))
        members.setdefault(key, []).append(node)
    groups = []
    for (can_sleep, busy, idle, sleep, t_off, p_off, t_on, p_on), ids in members.items():
        model = None
        name = "no-sleep"
        if can_sleep:
            model = NodeModel("custom", busy_w=busy, idle_w=idle, sleep_w=sleep,
                              off_s=t_off, off_w=p_off, on_s=t_on, on_w=p_on)
            name = next((key for key, candidate in known.items() if candidate.same_power(model)),
                        "custom")
            model = replace(model, name=name)
        groups.append(ModelGroup(name=name, ids=tuple(ids), idle_w=idle, busy_w=busy,
                                 model=model))
    return tuple(groups)


def format_ids(ids: Iterable[int]) -> str:
    """Compact id list: ``[0, 1, 2, 5]`` -> ``"0-2,5"``."""
    ranges: list[list[int]] = []
    for value in sorted(ids):
        if ranges and value == ranges[-1][1] + 1:
            ranges[-1][1] = value
        else:
            ranges.append([value, value])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def describe(groups: Sequence[ModelGroup]) -> list[str]:
    """One human-readable line per group (the CLI prints them)."""
    lines = []
    for group in groups:
        head = f"{group.count} x {group.name} (ids {format_ids(group.ids)}):"
        model = group.model
        if model is None:
            lines.append(f"{head} idle {group.idle_w:g} W, busy {group.busy_w:g} W, "
                         "cannot sleep")
            continue
        lines.append(
            f"{head} busy {model.busy_w:g} W, idle {model.idle_w:g} W, "
            f"sleep {model.sleep_w:g} W, switch-off {model.off_s:g} s at {model.off_w:g} W "
            f"({model.off_j:g} J), switch-on {model.on_s:g} s at {model.on_w:g} W "
            f"({model.on_j:g} J)")
    return lines
