"""The named policies: one frozen record each, the one table everything else reads.

A named policy is a composition of parts of :mod:`snficon.part_registry`
(a dispatch order, a power manager, layers) with preset options. From this
table derive ``snficon run --policy``, the pybatsim entry modules of
``schedulers/``, robin's pybatsim command lines, the report's labels and
colours, and the campaign's option checking (which builds the parts'
parameters dataclasses, never a scheduler).

Any composition is reachable without code: the options ``order``, ``power``
and ``layers`` replace a named policy's parts (``snficon run --policy snfIpm
--power icon``, ``pybatsim snfIpm -o '{"power": "icon"}'``, or the same keys
in a campaign's ``options``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from snficon.errors import InputError
from snficon.part_registry import Composition, compose, parts_label, resolve_part

#: Options that choose parts instead of setting a parameter.
COMPOSITION_KEYS = ("order", "power", "layers")


@dataclass(frozen=True)
class PolicyEntry:
    """A named policy: its parts, presets and how it is shown and launched.

    ``label`` is the paper's name, ``colour`` its colour in every figure,
    ``pybatsim`` the module of ``schedulers/`` that ``pybatsim`` runs it as
    (with ``preset`` passed as options: variants share their parent's module);
    ``marker`` and ``linestyle`` how figures draw it. The table's order is the
    paper's.
    """

    name: str
    label: str
    colour: str
    order: str
    power: str
    pybatsim: str
    summary: str
    layers: tuple[str, ...] = ()
    preset: tuple[tuple[str, Any], ...] = ()
    marker: str = "o"  # its matplotlib marker in scatter figures
    linestyle: str | tuple = "-"  # its line style in time-series figures

    def parts(self, options: Mapping[str, Any] | None = None) -> tuple[str, str, tuple[str, ...]]:
        """(order, power, layers): this policy's parts, or those ``options`` choose."""
        options = options or {}
        order = options.get("order", self.order)
        power = options.get("power", self.power)
        layers = options.get("layers", self.layers)
        if isinstance(layers, str):  # "a,b" from a campaign file or --set
            layers = [name.strip() for name in layers.split(",") if name.strip()]
        if not isinstance(order, str) or not isinstance(power, str) or not isinstance(
                layers, list | tuple) or not all(isinstance(x, str) for x in layers):
            raise InputError(f"policy {self.name}: 'order' and 'power' take a part name, "
                             "'layers' a list of part names")
        return order, power, tuple(layers)

    def composition(self, options: Mapping[str, Any] | None = None) -> Composition:
        """The checked composition of this policy under ``options`` (presets applied first)."""
        settings = {**dict(self.preset), **dict(options or {})}
        order, power, layers = self.parts(settings)
        for key in COMPOSITION_KEYS:
            settings.pop(key, None)
        return compose(order, power, layers, settings)

    @property
    def parameters(self) -> tuple[type, ...]:
        """The parameters dataclasses of this policy's parts."""
        return tuple(resolve_part(name).params
                     for name in (self.order, self.power, *self.layers))


POLICIES: dict[str, PolicyEntry] = {entry.name: entry for entry in (
    PolicyEntry("fcfsbIpm", "FCFS/B+IPM", "#1f77b4", "fcfs-easy", "ipm", "fcfsbIpm",
                "FCFS with EASY backfilling, PSAS wake planning, IPM idle timeout (PSAS+IPM)",
                marker="s"),
    PolicyEntry("snfIpm", "SNF+IPM", "#ff7f0e", "snf", "ipm", "snfIpm",
                "smallest-need-first dispatch, PSAS wake planning, IPM idle timeout",
                marker="D"),
    PolicyEntry("snficon", "SNF-ICON", "#2ca02c", "snf", "icon", "snficon",
                "SNF-ICON (the paper's Algorithm 1)", marker="o", linestyle="-"),
    PolicyEntry("snficon-ng", "SNF-ICON-NG", "#d62728", "snf", "icon", "snficon",
                "SNF-ICON without the arrival-recency gate", preset=(("gate", False),),
                marker="^", linestyle=(0, (5, 2))),
    PolicyEntry("snficon-nf", "SNF-ICON-NF", "#9467bd", "snf", "icon", "snficon",
                "SNF-ICON without the Markovianity fallback", preset=(("fallback", False),),
                marker="v", linestyle=(0, (1, 1.5))),
    PolicyEntry("snficon-ngnf", "SNF-ICON-NGNF", "#8c564b", "snf", "icon", "snficon",
                "SNF-ICON without gate nor fallback",
                preset=(("gate", False), ("fallback", False)),
                marker="X", linestyle=(0, (6, 2, 1, 2))),
    PolicyEntry("rlBudiarjo", "RL Budiarjo", "#bcbd22", "fcfs-easy", "rl", "rlBudiarjo",
                "FCFS with EASY backfilling and a learned power manager (the paper's RL "
                "baseline; option model=FILE)", marker="*", linestyle=(0, (3, 1, 1, 1))),
    PolicyEntry("snficon-carbon", "SNF-ICON/C", "#e377c2", "snf", "icon-carbon", "snficon",
                "SNF-ICON with the carbon-aware J(x) (energy weighted by carbon intensity)",
                preset=(("power", "icon-carbon"),), marker="P", linestyle=(0, (3, 1, 1, 1))),
)}

#: The colour of a policy that is not in the table.
OTHER_COLOUR = "#17becf"


def policy_entry(name: str) -> PolicyEntry:
    """The entry of a named policy; InputError listing the names otherwise."""
    entry = POLICIES.get(name)
    if entry is None:
        raise InputError(f"unknown policy {name!r} (known: {', '.join(POLICIES)})")
    return entry


def resolved_options(name: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every parameter of the policy under ``options``, defaults filled in, checked.

    Two option sets that ask for the same run give the same dict. Parts that
    differ from the entry's are included as ``order``/``power``/``layers``.
    """
    entry = policy_entry(name)
    composition = entry.composition(options)
    resolved: dict[str, Any] = {}
    for part in composition.parts:
        for key, value in asdict(composition.params[part]).items():
            resolved[f"{part}.{key}" if key in resolved else key] = value
    if composition.order != entry.order:
        resolved["order"] = composition.order
    if composition.power != entry.power:
        resolved["power"] = composition.power
    if composition.layers != entry.layers:
        resolved["layers"] = list(composition.layers)
    return resolved


def policy_label(name: str, options: Mapping[str, Any] | None = None) -> str:
    """The name a report shows: the paper's label, or the parts' labels of a composition
    whose parts differ from the named policy's (``FCFS/B+ICON``)."""
    entry = POLICIES.get(name)
    if entry is None:
        return name
    if options and any(key in options for key in COMPOSITION_KEYS):
        parts = entry.parts(options)
        if parts != (entry.order, entry.power, entry.layers):
            order, power, layers = parts
            return parts_label((order, power, *layers))
    return entry.label


def policy_colour(name: str) -> str:
    """The colour of a named policy in every figure."""
    entry = POLICIES.get(name)
    return entry.colour if entry is not None else OTHER_COLOUR
