"""The power model of a platform from the resources Batsim sends (``SIMULATION_BEGINS``).

Batsim 4 does not tell a scheduler the pstates of its machines, but it
forwards every ``<prop>`` of a host as the ``properties`` of its resource.
The platforms the project generates (:mod:`.generate`) carry each node's
figures of the paper's power model (section III) as the host properties of
:data:`POWER_PROPERTIES`, so that a scheduler needs nothing but the
simulation's first message::

    <prop id="power_idle_w" value="600"/>     idle power (W)
    <prop id="power_busy_w" value="2100"/>    power while computing (W)
    <prop id="power_sleep_w" value="60"/>     power asleep (W)
    <prop id="switch_off_s" value="600"/>     switch-off duration (s)
    <prop id="switch_off_w" value="600"/>     power while switching off (W)
    <prop id="switch_on_s" value="1200"/>     switch-on duration (s)
    <prop id="switch_on_w" value="600"/>      power while switching on (W)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from snficon.errors import InputError
from snficon.platform.model import PowerModel

#: Host property -> the :class:`~.generate.NodeModel` field it holds.
POWER_PROPERTIES: Mapping[str, str] = MappingProxyType({
    "power_idle_w": "idle_w", "power_busy_w": "busy_w", "power_sleep_w": "sleep_w",
    "switch_off_s": "off_s", "switch_off_w": "off_w",
    "switch_on_s": "on_s", "switch_on_w": "on_w",
})
#: Host property -> the :class:`~.model.PowerModel` array it fills.
_ARRAYS = {"power_idle_w": "p_idle_w", "power_busy_w": "p_busy_w",
           "power_sleep_w": "p_sleep_w", "switch_off_s": "t_off_s", "switch_off_w": "p_off_w",
           "switch_on_s": "t_on_s", "switch_on_w": "p_on_w"}


def power_model_from_resources(resources: Sequence[Mapping[str, Any]]) -> PowerModel | None:
    """Per-node power model (paper, section III) from the ``compute_resources`` of
    ``SIMULATION_BEGINS``; None when no resource carries the power properties.

    Entry ``i`` of each array is resource id ``i``. Every resource must then
    carry all seven properties (:data:`POWER_PROPERTIES`) as finite numbers,
    durations > 0 and powers >= 0; the ids must be 0 .. N-1. Anything else
    raises :class:`InputError` naming the resource and the property.
    """
    if not any(set(POWER_PROPERTIES) & set(r.get("properties") or {}) for r in resources):
        return None
    n = len(resources)
    arrays = {name: np.zeros(n) for name in _ARRAYS.values()}
    seen = set()
    for resource in resources:
        rid = resource.get("id")
        if isinstance(rid, bool) or not isinstance(rid, int) or not 0 <= rid < n or rid in seen:
            raise InputError(f"resource {resource.get('name', rid)!r}: id {rid!r} is not one of "
                             f"0..{n - 1} (or appears twice)")
        seen.add(rid)
        properties = resource.get("properties") or {}
        where = f"resource {rid} ({resource.get('name', '?')})"
        for prop, array in _ARRAYS.items():
            if prop not in properties:
                raise InputError(f"{where}: host property {prop!r} is missing (the platform "
                                 f"must give all of {', '.join(POWER_PROPERTIES)})")
            try:
                value = float(properties[prop])
            except (TypeError, ValueError):
                raise InputError(f"{where}: host property {prop!r} is not a number: "
                                 f"{properties[prop]!r}") from None
            duration = prop.endswith("_s")
            if not math.isfinite(value) or (value <= 0 if duration else value < 0):
                kind = "a duration > 0 s" if duration else "a power >= 0 W"
                raise InputError(f"{where}: host property {prop!r} must be {kind}, "
                                 f"not {properties[prop]!r}")
            arrays[array][rid] = value
    return PowerModel(can_sleep=np.ones(n, dtype=bool), **arrays)
