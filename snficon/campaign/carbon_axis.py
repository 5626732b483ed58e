"""The carbon part of a campaign file: signals by label, and each group's start alignments.

::

    [carbon]                                        # signals, paths relative to this file
    gb-2023 = { file = "../data/gb-neso-national-2023.csv", fill = "linear" }
    syn = { file = "../carbon/syn.csv", make = "uv run snficon carbon synthetic -o carbon/syn.csv" }

    [[group]]
    ...
    carbon = { signal = "gb-2023", starts = ["2023-03-01T00:00Z", "2023-07-01T00:00Z"] }
    # or: carbon = { signal = "gb-2023", offsets = 20, seed = 1 }

Each start alignment is one more axis of the group's grid. ``starts`` lists
the instants of simulated t = 0; ``offsets = N`` draws N starts through the
signal, seeded: fractions u_1 <= ... <= u_N of ``numpy.random.default_rng(seed)
.random(N)`` (sorted), and start k is the signal's interval
floor(u_k x intervals), so every start is an interval boundary. ``wrap``
(default true) lets a run that outlasts the signal continue from its start
(:mod:`snficon.carbon.mapping`). ``fill`` is the gap rule of
:mod:`snficon.carbon.signal` (default ``linear``).

A run's parameters (and so its id) gain ``carbon = {signal, signal_sha256,
start, wrap, fill}`` with the start resolved to an instant; runs without
carbon keep the parameters, and the ids, they had before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from snficon.carbon.signal import FILL_RULES, format_instant, parse_instant, read_signal
from snficon.errors import InputError

SIGNAL_KEYS = ("file", "make", "fill")
AXIS_KEYS = ("signal", "starts", "offsets", "seed", "wrap")
MAX_OFFSETS = 10000


class _Reader(Protocol):
    def error(self, path: tuple[str | int, ...], message: str) -> Exception: ...

    def known(self, table: dict[str, Any], path: tuple[str | int, ...],
              keys: tuple[str, ...]) -> None: ...


@dataclass(frozen=True)
class SignalFile:
    """A carbon signal the campaign names: label, file, gap rule and how to make it."""

    label: str
    path: Path
    written: str
    make: str | None = None
    fill: str = "linear"


@dataclass(frozen=True)
class CarbonPoint:
    """One start alignment of a signal: an explicit instant or a fraction of the signal."""

    signal: SignalFile
    start: str | None
    fraction: float | None
    wrap: bool = True

    def text(self) -> str:
        where = self.start if self.start is not None else f"at {self.fraction:.4f} of the signal"
        return f"carbon {self.signal.label} {where}"


@dataclass(frozen=True)
class CarbonAxis:
    """A group's carbon alignments: ``starts`` or ``offsets`` seeded draws."""

    signal: SignalFile
    starts: tuple[str, ...] = ()
    offsets: int = 0
    seed: int = 0
    wrap: bool = True

    def points(self) -> tuple[CarbonPoint, ...]:
        if self.starts:
            return tuple(CarbonPoint(self.signal, s, None, self.wrap) for s in self.starts)
        fractions = np.sort(np.random.default_rng(self.seed).random(self.offsets))
        return tuple(CarbonPoint(self.signal, None, float(u), self.wrap) for u in fractions)


def read_signals(reader: _Reader, data: dict[str, Any], folder: Path) -> dict[str, SignalFile]:
    """The ``[carbon]`` table (may be absent)."""
    table = data.get("carbon", {})
    if not isinstance(table, dict):
        raise reader.error(("carbon",), "expected a [carbon] table of signal files")
    found = {}
    for label, entry in table.items():
        path: tuple[str | int, ...] = ("carbon", label)
        if isinstance(entry, str):
            entry = {"file": entry}
        if not isinstance(entry, dict):
            raise reader.error(path, f"expected a path or a table {{file = ...}}, got {entry!r}")
        reader.known(entry, path, SIGNAL_KEYS)
        written = entry.get("file")
        if not isinstance(written, str) or not written:
            raise reader.error(path + ("file",), f"expected a non-empty string, got {written!r}")
        make = entry.get("make")
        if make is not None and (not isinstance(make, str) or not make):
            raise reader.error(path + ("make",), f"expected a command (string), got {make!r}")
        fill = entry.get("fill", "linear")
        if fill not in FILL_RULES:
            raise reader.error(path + ("fill",), f"unknown gap rule {fill!r} "
                               f"(known: {', '.join(FILL_RULES)})")
        found[label] = SignalFile(label, (folder / written).resolve(), written, make, fill)
    return found


def read_axis(reader: _Reader, raw: dict[str, Any], path: tuple[str | int, ...],
              signals: dict[str, SignalFile]) -> CarbonAxis | None:
    """A group's ``carbon`` key (None when absent)."""
    if "carbon" not in raw:
        return None
    value, where = raw["carbon"], path + ("carbon",)
    if not isinstance(value, dict):
        raise reader.error(where, "expected a table {signal = ..., starts = [...]} or "
                           "{signal = ..., offsets = N, seed = S}")
    reader.known(value, where, AXIS_KEYS)
    label = value.get("signal")
    if label not in signals:
        raise reader.error(where + ("signal",), f"unknown signal {label!r} (the [carbon] "
                           f"table names: {', '.join(signals) or 'none'})")
    wrap = value.get("wrap", True)
    if not isinstance(wrap, bool):
        raise reader.error(where + ("wrap",), f"expected true or false, got {wrap!r}")
    if ("starts" in value) == ("offsets" in value):
        raise reader.error(where, "give either starts = [...] or offsets = N")
    if "starts" in value:
        starts = value["starts"]
        if not isinstance(starts, list) or not starts:
            raise reader.error(where + ("starts",), "expected a non-empty array of instants")
        for i, text in enumerate(starts):
            if not isinstance(text, str):
                raise reader.error(where + ("starts", i), f"expected an ISO 8601 instant "
                                   f"(a string such as \"2023-03-01T00:00Z\"), got {text!r}")
            try:
                parse_instant(text)
            except InputError as exc:
                raise reader.error(where + ("starts", i), str(exc)) from None
        if "seed" in value:
            raise reader.error(where + ("seed",), "seed goes with offsets, not starts")
        return CarbonAxis(signals[label], starts=tuple(starts), wrap=wrap)
    offsets, seed = value["offsets"], value.get("seed", 0)
    for key, item, low in (("offsets", offsets, 1), ("seed", seed, 0)):
        if isinstance(item, bool) or not isinstance(item, int) or item < low:
            raise reader.error(where + (key,), f"expected an integer >= {low}, got {item!r}")
    if offsets > MAX_OFFSETS:
        raise reader.error(where + ("offsets",), f"at most {MAX_OFFSETS} offsets, got {offsets}")
    return CarbonAxis(signals[label], offsets=offsets, seed=seed, wrap=wrap)


def resolve_start(point: CarbonPoint,
                  cache: dict[tuple[str, str], tuple[float, float, int]] | None = None,
                  digest: str = "") -> str:
    """The start instant of ``point`` as ``...Z`` text; reads the signal once per ``cache``.

    ``cache`` is keyed by the file's ``digest`` (SHA-256) and gap rule, so an
    edited file is read again. An explicit start outside the signal raises
    InputError naming the signal file.
    """
    key = (digest or str(point.signal.path), point.signal.fill)
    if cache is not None and key in cache:
        first, step, size = cache[key]
    else:
        signal = read_signal(point.signal.path, point.signal.fill)
        first, step, size = signal.first_s, signal.step_s, signal.series.size
        if cache is not None:
            cache[key] = (first, step, size)
    if point.start is None:
        index = min(int(np.floor(float(point.fraction) * size)), size - 1)
        return format_instant(first + index * step)
    start = parse_instant(point.start)
    if not first <= start < first + size * step:
        raise InputError(f"{point.signal.path}: carbon start {format_instant(start)} is "
                         f"outside the signal {point.signal.label!r}, which covers "
                         f"{format_instant(first)} .. {format_instant(first + size * step)}")
    return format_instant(start)
