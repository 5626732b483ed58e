"""Generate SimGrid/Batsim platform files from node power models (SPEC section 3).

A :class:`NodeModel` holds the paper's per-node figures; :data:`NODE_MODELS`
names the two of the paper. :func:`render_platform` writes the XML of a
homogeneous platform in the layout of the Batsim conformance file
``aoba16.xml``: a ``master_host``, then hosts ``node0`` .. ``nodeN-1`` with

- pstate 0: compute at 1 Gflop/s, wattage ``idle:busy``;
- pstate 1: sleep (``1e-9Mf``), wattage ``sleep:sleep``;
- pstate 2: switch-off, speed ``1/off_s`` flop/s (one flop lasts ``off_s``),
  wattage ``off_w:off_w``;
- pstate 3: switch-on, speed ``1/on_s``, wattage ``on_w:on_w``;
- ``wattage_off`` = sleep power, ``sleep_pstates="1:2:3"``;
- the model's figures once more, as the host properties of
  :data:`~snficon.platform.resources.POWER_PROPERTIES`: Batsim forwards every
  host property to the scheduler in ``SIMULATION_BEGINS`` (it does not send
  pstates), so a scheduler can build its power model from them alone
  (:func:`~snficon.platform.resources.power_model_from_resources`).

:func:`render_heterogeneous_platform` takes groups of (count, model).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from types import MappingProxyType
from xml.sax.saxutils import quoteattr

from snficon.errors import InputError
from snficon.fileio import atomic_write_text
from snficon.platform.resources import POWER_PROPERTIES

COMPUTE_SPEED = "1Gf"
SLEEP_SPEED = "1e-9Mf"
HOST_PREFIX = "node"

_HEADER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
<zone id="AS0" routing="Vivaldi">
    <host id="master_host" coordinates="0 0 0" speed="100Mf">
        <prop id="wattage_per_state" value="100:200"/>
        <prop id="wattage_off" value="10"/>
    </host>
"""
_FOOTER = """</zone>
</platform>
"""


@dataclass(frozen=True)
class NodeModel:
    """The power figures of one kind of node (W and s), as in SPEC section 3.

    ``busy_w``/``idle_w``: power while computing / idle (pstate 0);
    ``sleep_w``: power asleep; ``off_s``/``off_w``: duration and power of a
    switch-off; ``on_s``/``on_w``: the same for a switch-on. Powers are finite
    and >= 0, durations finite and > 0 (:class:`InputError` otherwise).
    """

    name: str
    busy_w: float
    idle_w: float
    sleep_w: float
    off_s: float
    off_w: float
    on_s: float
    on_w: float

    def __post_init__(self) -> None:
        for field in fields(self):
            if field.name == "name":
                continue
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f"node model {self.name!r}: {field.name} is not a number: "
                                 f"{value!r}")
            if field.name.endswith("_s"):
                if not (math.isfinite(value) and value > 0):
                    raise InputError(f"node model {self.name!r}: {field.name} must be a "
                                     f"finite duration > 0 s, not {value!r}")
            elif not (math.isfinite(value) and value >= 0):
                raise InputError(f"node model {self.name!r}: {field.name} must be a "
                                 f"finite power >= 0 W, not {value!r}")

    @property
    def off_j(self) -> float:
        """Energy of one switch-off (J)."""
        return self.off_s * self.off_w

    @property
    def on_j(self) -> float:
        """Energy of one switch-on (J)."""
        return self.on_s * self.on_w

    def same_power(self, other: NodeModel) -> bool:
        """True if both models have the same figures (names aside, durations to 1e-12)."""
        return all(math.isclose(getattr(self, f.name), getattr(other, f.name), rel_tol=1e-12)
                   for f in fields(self) if f.name != "name")


AOBA = NodeModel("aoba", busy_w=2100, idle_w=600, sleep_w=60,
                 off_s=600, off_w=600, on_s=1200, on_w=600)
TAURUS = NodeModel("taurus", busy_w=167, idle_w=91, sleep_w=8,
                   off_s=15, off_w=110, on_s=182, on_w=130)

NODE_MODELS: Mapping[str, NodeModel] = MappingProxyType({"aoba": AOBA, "taurus": TAURUS})
"""The node models of SPEC section 3, by the name users type (read-only)."""


def format_number(value: float) -> str:
    """Write a power the way the platform files do: ``600`` for 600.0, else Python's repr."""
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def transition_speed(seconds: float) -> str:
    """SimGrid speed of a transition pstate lasting ``seconds``: one flop at 1/seconds.

    Written as Python's repr of the float (``600`` -> ``0.0016666666666666668f``),
    which SimGrid reads back to the same double. Batsim times the switch as
    ``1 / speed``: exactly ``seconds`` for the SPEC 3 durations, within one
    rounding (relative 2e-16) for some others, such as 7.3 s.
    """
    return f"{1.0 / seconds!r}f"


def _host_xml(name: str, model: NodeModel) -> str:
    speed = ", ".join((COMPUTE_SPEED, SLEEP_SPEED,
                       transition_speed(model.off_s), transition_speed(model.on_s)))
    wattages = ", ".join((
        f"{format_number(model.idle_w)}:{format_number(model.busy_w)}",
        f"{format_number(model.sleep_w)}:{format_number(model.sleep_w)}",
        f"{format_number(model.off_w)}:{format_number(model.off_w)}",
        f"{format_number(model.on_w)}:{format_number(model.on_w)}",
    ))
    return (
        f'    <host id={quoteattr(name)} speed="{speed}" pstate="0" coordinates="0 0 0">\n'
        f'        <prop id="wattage_per_state" value="{wattages}"/>\n'
        f'        <prop id="wattage_off" value="{format_number(model.sleep_w)}"/>\n'
        '        <prop id="sleep_pstates" value="1:2:3"/>\n'
        + "".join(f'        <prop id="{prop}" value="{format_number(getattr(model, field))}"/>\n'
                  for prop, field in POWER_PROPERTIES.items())
        + "    </host>\n"
    )


def _render(groups: Sequence[tuple[int, NodeModel]], pad_names: bool) -> str:
    counts = []
    for count, model in groups:
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InputError(f"node count must be an integer >= 1, not {count!r}")
        if not isinstance(model, NodeModel):
            raise InputError(f"not a node model: {model!r}")
        counts.append(count)
    if not counts:
        raise InputError("a platform needs at least one group of nodes")
    total = sum(counts)
    width = len(str(total - 1)) if pad_names else 0
    parts = [_HEADER]
    index = 0
    for count, model in groups:
        for _ in range(count):
            parts.append(_host_xml(f"{HOST_PREFIX}{index:0{width}d}", model))
            index += 1
    parts.append(_FOOTER)
    return "".join(parts)


def render_platform(model: NodeModel, nb_nodes: int) -> str:
    """The platform XML of ``nb_nodes`` identical nodes ``node0`` .. ``node{N-1}`` and a master.

    The text is the layout of the conformance file ``aoba16.xml`` (which real
    Batsim 4.2 loads): for AOBA and 16 nodes it is that file, byte for byte,
    plus the power properties of each host.
    """
    return _render([(nb_nodes, model)], pad_names=False)


def render_heterogeneous_platform(groups: Sequence[tuple[int, NodeModel]]) -> str:
    """The platform XML of groups of (count, model), in that order, and a master.

    Host names are zero-padded to one width (``node00`` .. ``node63``) so that
    Batsim's resource ids, which follow host names sorted as strings, are the
    file order: the first group gets ids ``0 .. count-1``, and so on.
    """
    return _render(list(groups), pad_names=True)


def write_platform(path: str | Path, xml_text: str) -> Path:
    """Write a rendered platform to ``path`` atomically (complete file or none)."""
    return atomic_write_text(path, xml_text)
