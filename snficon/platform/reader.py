"""Read a SimGrid/Batsim platform XML file into a :class:`Platform`.

Hosts may sit in nested zones; ``<cluster>`` elements are expanded into their
hosts (``prefix + radical + suffix``, the cluster's ``<prop>`` given to each).
The host named ``master_host`` (or with ``role="master"``) is not a compute
resource; a platform without one is refused, as Batsim 4.2.1 refuses it
(``Cannot find the "master" role in the platform file``). Wattages follow
SimGrid's energy plugin: ``wattage_per_state`` holds one ``idle:busy`` (or
``idle:one-core:all-cores``) entry per pstate; a host without it draws 0 W
(:func:`warn_hosts_without_energy` says so, as SimGrid does).

Resource ids are what Batsim 4 gives: the compute hosts sorted by name, byte
by byte (SimGrid keeps its hosts in a name-ordered map and Batsim numbers them
in that order), so ``node10`` comes before ``node2``. The conformance run
``aoba16-delay`` shows it: its resource 2 is ``node10``.
"""

from __future__ import annotations

import logging
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from snficon.errors import InputError
from snficon.platform.model import Host, Platform, Pstate, SleepState

MASTER_HOST = "master_host"
#: The property of SimGrid's energy plugin without which a host draws 0 W.
WATTAGE = "wattage_per_state"

LOG = logging.getLogger(__name__)

_DECIMAL_PREFIXES = (("k", "kilo"), ("M", "mega"), ("G", "giga"), ("T", "tera"),
                     ("P", "peta"), ("E", "exa"), ("Z", "zeta"), ("Y", "yotta"))


def _speed_units() -> Mapping[str, float]:
    """SimGrid's speed units: ``f`` with short decimal prefixes, ``flops`` with long ones."""
    units = {"": 1.0, "f": 1.0, "flops": 1.0}
    scale = 1.0
    for short, long in _DECIMAL_PREFIXES:
        scale *= 1000.0  # as SimGrid builds its table
        units[f"{short}f"] = scale
        units[f"{long}flops"] = scale
    return MappingProxyType(units)


_SPEED_UNITS = _speed_units()
_SPEED = re.compile(r"^\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)([A-Za-z]*)\s*$")


def parse_speed(text: str) -> float:
    """Parse one SimGrid speed (``"1Gf"``, ``"0.125f"``, ``"1e-9Mf"``) into flop/s.

    Units are SimGrid's: ``f`` with a decimal prefix (``kf`` ... ``Yf``) or
    ``flops`` with a long one (``megaflops``); a bare number is in flop/s. The
    result is finite and >= 0 (ValueError otherwise).
    """
    match = _SPEED.match(text)
    if not match or match.group(2) not in _SPEED_UNITS:
        raise ValueError(f"not a speed: {text!r} (expected e.g. '1Gf', '0.125f', '2megaflops')")
    value = float(match.group(1)) * _SPEED_UNITS[match.group(2)]
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"speed must be finite and >= 0: {text!r}")
    return value


def _parse_wattages(text: str, nb_pstates: int) -> list[tuple[float, float]]:
    entries = [entry.strip() for entry in text.split(",")]
    if len(entries) < nb_pstates:
        raise ValueError(
            f"{len(entries)} wattage entries for {nb_pstates} pstates "
            "(SimGrid needs one per pstate)")
    result = []
    for entry in entries[:nb_pstates]:
        values = [float(v) for v in entry.split(":")]
        if len(values) not in (2, 3) or not all(math.isfinite(v) and v >= 0 for v in values):
            raise ValueError(f"entry {entry!r} is not 'idle:busy' or 'idle:one:all' (W >= 0)")
        result.append((values[0], values[-1]))
    return result


def _parse_sleep_states(text: str, nb_pstates: int) -> tuple[SleepState, ...]:
    states = []
    for entry in text.split(","):
        parts = entry.strip().split(":")
        if len(parts) != 3:
            raise ValueError(f"entry {entry!r} is not 'sleep:switch_off:switch_on'")
        sleep, off, on = (int(p) for p in parts)
        for pstate in (sleep, off, on):
            if not 0 <= pstate < nb_pstates:
                raise ValueError(f"pstate {pstate} does not exist (host has {nb_pstates})")
        states.append(SleepState(sleep=sleep, switch_off=off, switch_on=on))
    used = [p for state in states for p in (state.sleep, state.switch_off, state.switch_on)]
    if len(set(used)) != len(used):
        raise ValueError("a pstate is used twice (a pstate is either a computation, a sleep "
                         "or a transition one)")
    return tuple(states)


def _host(element: ET.Element, name: str, inherited: dict[str, str], source: str,
          resource_id: int) -> Host:
    where = f"{source}: host {name!r}"
    properties = dict(inherited)
    for prop in element.findall("prop"):
        if "id" not in prop.attrib or "value" not in prop.attrib:
            raise InputError(f"{where}: <prop> needs 'id' and 'value' attributes")
        properties[prop.attrib["id"]] = prop.attrib["value"]
    speed_text = element.attrib.get("speed") or element.attrib.get("power")
    if not speed_text:
        raise InputError(f"{where}: missing 'speed' attribute")
    try:
        speeds = [parse_speed(s) for s in speed_text.split(",")]
    except ValueError as exc:
        raise InputError(f"{where}: property 'speed': {exc}") from None
    try:
        initial = int(element.attrib.get("pstate", "0"))
    except ValueError:
        raise InputError(f"{where}: 'pstate' is not an integer: "
                         f"{element.attrib['pstate']!r}") from None
    if not 0 <= initial < len(speeds):
        raise InputError(f"{where}: initial pstate {initial} does not exist")
    if "wattage_per_state" in properties:
        try:
            watts = _parse_wattages(properties["wattage_per_state"], len(speeds))
        except ValueError as exc:
            raise InputError(f"{where}: property 'wattage_per_state': {exc}") from None
    else:
        watts = [(0.0, 0.0)] * len(speeds)
    sleep_states: tuple[SleepState, ...] = ()
    if "sleep_pstates" in properties:
        try:
            sleep_states = _parse_sleep_states(properties["sleep_pstates"], len(speeds))
        except ValueError as exc:
            raise InputError(f"{where}: property 'sleep_pstates': {exc}") from None
        if "wattage_per_state" not in properties:
            raise InputError(f"{where}: 'sleep_pstates' needs a 'wattage_per_state' property")
    for state in sleep_states:
        for virtual in (state.switch_off, state.switch_on):
            if speeds[virtual] <= 0:
                raise InputError(f"{where}: property 'speed': transition pstate {virtual} has "
                                 "speed 0 (a switch lasts 1/speed)")
    host = Host(
        id=resource_id,
        name=name,
        pstates=tuple(Pstate(s, w[0], w[1]) for s, w in zip(speeds, watts, strict=True)),
        initial_pstate=initial,
        sleep_states=sleep_states,
        properties=properties,
    )
    if not host.is_computation_pstate(initial):
        raise InputError(f"{where}: initial pstate {initial} is a sleep or transition pstate")
    for pstate, speed in enumerate(speeds):
        if host.is_computation_pstate(pstate) and speed <= 0:
            raise InputError(f"{where}: property 'speed': computation pstate {pstate} "
                             "has speed 0")
    return host


def _cluster_hosts(element: ET.Element, source: str) -> list[tuple[str, ET.Element]]:
    where = f"{source}: cluster {element.attrib.get('id', '?')!r}"
    try:
        prefix = element.attrib.get("prefix", "")
        suffix = element.attrib.get("suffix", "")
        radical = element.attrib["radical"]
    except KeyError:
        raise InputError(f"{where}: missing 'radical' attribute") from None
    numbers: list[int] = []
    try:
        for part in radical.split(","):
            bounds = [int(b) for b in part.split("-")]
            numbers.extend(range(bounds[0], bounds[-1] + 1))
    except ValueError:
        raise InputError(f"{where}: 'radical' is not a list of ranges: {radical!r}") from None
    return [(f"{prefix}{n}{suffix}", element) for n in numbers]


def read_platform(path: str | Path) -> Platform:
    """Load the compute hosts of a SimGrid platform file (Batsim's ``-p``).

    The hosts come in resource-id order, which is Batsim's: sorted by name
    (byte-wise), not file order. Any problem raises :class:`InputError` naming
    the file and, where it applies, the host and the property.
    """
    source = str(path)
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        raise InputError(f"{source}: platform file not found") from None
    except OSError as exc:
        raise InputError(f"{source}: cannot read platform file: {exc.strerror or exc}") from None
    except ET.ParseError as exc:
        raise InputError(f"{source}: malformed XML: {exc}") from None
    if root.tag != "platform":
        raise InputError(f"{source}: root element is <{root.tag}>, expected <platform>")

    compute: dict[str, ET.Element] = {}
    seen: set[str] = set()
    masters: list[str] = []

    def visit(element: ET.Element) -> None:
        for child in element:
            if child.tag == "host":
                if "id" not in child.attrib:
                    raise InputError(f"{source}: a <host> has no 'id' attribute")
                candidates = [(child.attrib["id"], child)]
            elif child.tag == "cluster":
                candidates = _cluster_hosts(child, source)
            else:
                visit(child)
                continue
            for name, element_of_host in candidates:
                if name in seen:
                    raise InputError(f"{source}: host {name!r} is defined twice")
                seen.add(name)
                role = {p.attrib.get("id"): p.attrib.get("value")
                        for p in element_of_host.findall("prop")}.get("role", "")
                if name == MASTER_HOST or role == "master":
                    masters.append(name)
                    continue
                if role == "storage":
                    continue
                compute[name] = element_of_host

    try:
        visit(root)
    except RecursionError:  # thousands of nested zones: no platform SimGrid would load
        raise InputError(f"{source}: elements nested too deeply to be a platform") from None
    if not masters:
        raise InputError(f"{source}: Cannot find the \"master\" role in the platform file "
                         f"(as Batsim 4.2.1 says): add a host with id=\"{MASTER_HOST}\" "
                         "(or one with <prop id=\"role\" value=\"master\"/>), which runs "
                         "no job")
    if not compute:
        raise InputError(f"{source}: no compute host (only '{MASTER_HOST}' or none at all)")
    hosts = tuple(_host(compute[name], name, {}, source, resource_id)
                  for resource_id, name in enumerate(sorted(compute, key=batsim_order_key)))
    return Platform(source=source, hosts=hosts)


def warn_hosts_without_energy(platform: Platform) -> list[str]:
    """Log a warning naming the hosts without ``wattage_per_state``; return their names.

    SimGrid's energy plugin (Batsim's ``-E``) counts such a host at 0 W and
    warns once per host; one warning here lists them all.
    """
    missing = [host.name for host in platform.hosts if WATTAGE not in host.properties]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5
                                          else "")
        LOG.warning("%s: no energy profile (%s) for %d host(s): %s; they are counted at 0 W, "
                    "as SimGrid's energy plugin does", platform.source, WATTAGE, len(missing),
                    shown)
    return missing


def batsim_order_key(name: str) -> bytes:
    """Sort key giving Batsim's resource order of host names (byte-wise, as C++ strings)."""
    return name.encode("utf-8")
