"""How a carbon signal reaches a policy part: four options, read once when the part is built.

A part that decides with carbon intensity (the start-time advisor layers of
:mod:`snficon.core.carbon_layer`, the carbon-aware warm-spare controller of
:mod:`snficon.core.carbon_icon`) has four options under its own prefix
(``coast_`` or ``jx_``): ``PREFIXsignal`` (the ``timestamp_utc,gco2_per_kwh``
file), ``PREFIXstart`` (the instant of simulated t = 0, ISO 8601; ``first``: the
signal's first interval), ``PREFIXfill`` (the gap rule) and ``PREFIXwrap``.
``PREFIXsignal`` is ``none`` until a file is named. They mean what
``snficon run --carbon FILE --carbon-start ISO [--carbon-fill RULE]
[--carbon-no-wrap]`` mean for the accounting, and those options (or a
campaign's carbon axis) fill them in when the signal is left ``none``,
so the part sees the very signal the run is accounted with
(:func:`fill_signal_options`). Being set at run time, the file's path is not
among the parameters a campaign's run id hashes (the axis's signal digest
and start are).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from snficon.carbon.mapping import MappedSignal
from snficon.carbon.signal import parse_instant, read_signal
from snficon.errors import InputError

#: The option prefixes of the parts that read a signal.
SIGNAL_PREFIXES = ("coast_", "jx_")
#: A signal option's value when no file is named; a start option's for the signal's first
#: interval (text options cannot be empty).
NO_SIGNAL, SIGNAL_FIRST = "none", "first"


def load_signal(who: str, prefix: str, path: str, start: str, fill: str,
                wrap: bool) -> MappedSignal:
    """The signal the options name, mapped onto simulated time; InputError when none is named."""
    path = "" if path == NO_SIGNAL else path
    start = "" if start == SIGNAL_FIRST else start
    if not path:
        raise InputError(f"{who} needs a carbon-intensity signal: give --carbon FILE to "
                         f"snficon run, a carbon axis to the campaign group, or the option "
                         f"{prefix}signal")
    signal = read_signal(path, fill)
    instant = signal.first_s if not start else parse_instant(start, f"option {prefix}start")
    return MappedSignal(signal, instant, wrap)


def fill_signal_options(options: dict[str, Any], names: Iterable[str], path: str, start: str,
                        fill: str, wrap: bool) -> dict[str, Any]:
    """``options`` with every empty signal option of the parts present filled in.

    ``names`` are the option keys the policy accepts (flat ``coast_signal`` or
    addressed ``part.coast_signal``); a signal option already given (not
    ``none``) keeps its value, with its start, gap rule and wrap.
    """
    filled = dict(options)
    for key in names:
        part, dot, name = key.rpartition(".")
        for prefix in SIGNAL_PREFIXES:
            if name != f"{prefix}signal" or filled.get(key, NO_SIGNAL) != NO_SIGNAL:
                continue
            head = f"{part}{dot}{prefix}"
            filled.update({key: path, f"{head}start": start, f"{head}fill": fill,
                           f"{head}wrap": wrap})
    return filled


def signal_option_names(params: Mapping[str, Any]) -> list[str]:
    """The signal-file option keys among the resolved options ``params``."""
    return [key for key in params
            if any(key.rpartition(".")[2] == f"{p}signal" for p in SIGNAL_PREFIXES)]
