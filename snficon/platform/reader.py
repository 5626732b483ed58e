"""Read a SimGrid/Batsim platform XML file into a :class:`Platform`.

Hosts may sit in nested zones; ``<cluster>`` elements are expanded into their
hosts (``prefix + radical + suffix``). The host named ``master_host`` (or with
``role="master"``) is not a compute resource. Wattages follow SimGrid's
energy plugin: ``wattage_per_state`` holds one ``idle:busy`` (or
``idle:one-core:all-cores``) entry per pstate.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from snficon.errors import InputError
from snficon.platform.model import Host, Platform, Pstate, SleepState

MASTER_HOST = "master_host"

_PREFIXES = {
    "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21,
    "Y": 1e24, "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50,
}
_SPEED = re.compile(r"^\s*([0-9.eE+-]+)\s*(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P|E|Z|Y)?(f|flops)?\s*$")


def parse_speed(text: str) -> float:
    """Parse one SimGrid speed (``"1Gf"``, ``"0.125f"``, ``"1e-9Mf"``) into flop/s."""
    match = _SPEED.match(text)
    if not match:
        raise ValueError(f"not a speed: {text!r}")
    value = float(match.group(1)) * _PREFIXES[match.group(2) or ""]
    if not value > 0:
        raise ValueError(f"speed must be positive: {text!r}")
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
        if len(values) not in (2, 3) or any(v < 0 for v in values):
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
    """Load the compute hosts of a SimGrid platform file (Batsim's ``-p``)."""
    source = str(path)
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        raise InputError(f"{source}: platform file not found") from None
    except ET.ParseError as exc:
        raise InputError(f"{source}: malformed XML: {exc}") from None
    if root.tag != "platform":
        raise InputError(f"{source}: root element is <{root.tag}>, expected <platform>")

    hosts: list[Host] = []
    seen: set[str] = set()

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
                if name == MASTER_HOST or role in ("master", "storage"):
                    continue
                hosts.append(_host(element_of_host, name, {}, source, len(hosts)))

    visit(root)
    if not hosts:
        raise InputError(f"{source}: no compute host (only '{MASTER_HOST}' or none at all)")
    return Platform(source=source, hosts=tuple(hosts))
