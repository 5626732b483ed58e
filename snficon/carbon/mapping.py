r"""A carbon signal on simulated time.

Simulated time t (s) is mapped onto the signal's clock by a start instant:
t = 0 is ``--carbon-start`` (e.g. ``2023-03-01T00:00Z``), t seconds later is
that instant plus t. The start must lie inside the signal's span.

**Past the end**, a run meets the signal's first interval again: by default
the signal *wraps around*, repeating with period P (its span; one year for
the GB 2023 file, so a run started on 20 December continues into January
of the same year's data, a seasonal join that is accepted, not hidden). With
``wrap=False`` a time past the end is refused with an error instead.

With :math:`u = t + (t_{start} - t_{first})` and :math:`F` the cumulative
integral of the signal over one period (:class:`~snficon.carbon.series.StepSeries`),

.. math:: \int_0^t I = G(u) - G(u_0),\qquad
          G(u) = \lfloor u/P \rfloor\, F(P) + F(u - \lfloor u/P \rfloor P),

exact for any t, vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from snficon.carbon.series import FloatArray, StepSeries
from snficon.carbon.signal import CarbonSignal, format_instant, parse_instant, read_signal
from snficon.errors import InputError

#: Joules per kWh, and grams per kg: energy (J) x intensity (g/kWh) / J_PER_KWH_G_PER_KG = kg.
J_PER_KWH = 3.6e6
G_PER_KG = 1e3


@dataclass(frozen=True)
class MappedSignal:
    """``signal`` on simulated time: t = 0 is the POSIX instant ``start_s``."""

    signal: CarbonSignal
    start_s: float
    wrap: bool = True

    def __post_init__(self) -> None:
        s = self.signal.series
        if not s.t0_s <= self.start_s < s.end_s:
            raise InputError(f"{self.signal.source}: carbon start {format_instant(self.start_s)}"
                             f" is outside the signal, which covers {format_instant(s.t0_s)} .. "
                             f"{format_instant(s.end_s)}")

    @property
    def offset_s(self) -> float:
        """Seconds from the signal's first interval start to simulated t = 0."""
        return self.start_s - self.signal.series.t0_s

    @property
    def start_text(self) -> str:
        return format_instant(self.start_s)

    def _unrolled(self, t: FloatArray | float) -> tuple[FloatArray, FloatArray]:
        """Whole periods and position within the period (s) of simulated times ``t``."""
        u = np.asarray(t, dtype=float) + self.offset_s
        period = self.signal.period_s
        if not self.wrap and u.size and (np.min(u) < 0 or np.max(u) > period):
            bad = float(np.max(u) if np.max(u) > period else np.min(u)) - self.offset_s
            raise InputError(f"{self.signal.source}: simulated time t={bad:.6g} s is "
                             f"{format_instant(self.start_s + bad)}, outside the signal "
                             f"(ends {format_instant(self.signal.series.end_s)}) and "
                             "wrapping is off")
        whole = np.floor(u / period)
        within = np.clip(u - whole * period, 0.0, period)
        return whole, within

    def cumulative(self, t: FloatArray | float) -> FloatArray:
        r""":math:`\int_0^t I` (gCO2/kWh x s), exact, elementwise."""
        series = self.signal.series
        whole, within = self._unrolled(t)
        g = whole * series.total + series.cumulative(series.t0_s + within)
        w0, r0 = self._unrolled(0.0)
        return g - (w0 * series.total + series.cumulative(series.t0_s + r0))

    def integral(self, a: FloatArray | float, b: FloatArray | float) -> FloatArray:
        r""":math:`\int_a^b I` (gCO2/kWh x s) on simulated time."""
        return self.cumulative(b) - self.cumulative(a)

    def at(self, t: FloatArray | float) -> FloatArray:
        """Intensity (gCO2/kWh) at simulated time ``t``."""
        series = self.signal.series
        _, within = self._unrolled(t)
        return series.at(np.minimum(series.t0_s + within, np.nextafter(series.end_s, 0)))

    def mean(self, a: FloatArray | float, b: FloatArray | float) -> FloatArray:
        """Mean intensity over ``[a, b]``; the intensity at ``a`` where ``b == a``."""
        a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
        width = b - a
        safe = np.where(width > 0, width, 1.0)
        return np.where(width > 0, self.integral(a, b) / safe, self.at(a))

    def carbon_kg(self, energy_j: FloatArray | float, a: FloatArray | float,
                  b: FloatArray | float) -> FloatArray:
        """Emissions (kg) of ``energy_j`` drawn at constant power over ``[a, b]``."""
        return np.asarray(energy_j, float) * self.mean(a, b) / (J_PER_KWH * G_PER_KG)

    def window(self, t_from: float, t_to: float) -> StepSeries:
        """The signal's intervals that meet ``[t_from, t_to]``, on simulated time, unrolled."""
        if t_to < t_from:
            raise ValueError(f"empty window [{t_from!r}, {t_to!r}]")
        self._unrolled(np.array([t_from, t_to]))  # refuses past the end without wrap
        series = self.signal.series
        step = series.step_s
        first = int(np.floor((t_from + self.offset_s) / step)) - 1  # a margin each side
        last = int(np.ceil((t_to + self.offset_s) / step)) + 1  # against rounding
        if not self.wrap:
            first, last = max(first, 0), min(last, series.size)
        index = np.arange(first, last) % series.size
        return StepSeries(first * step - self.offset_s, step, series.values[index])

    def describe(self) -> dict[str, object]:
        """The mapping as plain data (for ``params.json`` and reports)."""
        return {"carbon_source": self.signal.source, "carbon_start": self.start_text,
                "carbon_wrap": self.wrap, "carbon_fill": self.signal.fill_rule}


def map_signal(path: str | Path, start: str, fill: str = "linear",
               wrap: bool = True) -> MappedSignal:
    """Read the signal file at ``path`` and map it so that simulated t = 0 is ``start`` (ISO)."""
    signal = read_signal(path, fill)
    return MappedSignal(signal, parse_instant(start, f"{path}: carbon start"), wrap)
