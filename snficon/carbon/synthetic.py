r"""A synthetic diurnal carbon-intensity signal, for demos and tests (not measured data).

.. math:: I_k = \max\bigl(I_{min},\ \bar I + A \cos\bigl(2\pi (h_k - h_{peak})/24\bigr)
          + \epsilon_k\bigr),\qquad \epsilon_k = \phi\,\epsilon_{k-1} + \sigma\sqrt{1-\phi^2}\,z_k

with :math:`h_k` the hour of day (UTC) of interval k, :math:`z_k` standard
normal draws of ``numpy.random.default_rng(seed)`` and :math:`\epsilon_0`
drawn from the stationary law. The defaults (mean 150 gCO2/kWh, amplitude
60, evening peak at 18:00, AR(1) noise of standard deviation 15 and lag-one
correlation 0.9 per half-hour) give a signal of the GB grid's order of
magnitude (GB 2023: 26..309, mean 152), not a model of it. Its label says
``synthetic``, which :func:`~snficon.carbon.signal.read_signal` keeps.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from snficon.carbon.series import StepSeries
from snficon.carbon.signal import CarbonSignal, format_instant, parse_instant


@dataclass(frozen=True)
class DiurnalParams:
    """Parameters of :func:`synthetic_diurnal` (intensities in gCO2/kWh)."""

    days: float = 28.0
    step_s: float = 1800.0
    start: str = "2023-01-01T00:00Z"
    mean: float = 150.0
    amplitude: float = 60.0
    peak_hour: float = 18.0
    noise_sd: float = 15.0
    noise_lag1: float = 0.9
    floor: float = 5.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.days > 0 or not self.step_s > 0:
            raise ValueError(f"days and step_s must be positive, got {self.days!r}, "
                             f"{self.step_s!r}")
        if not 0 <= self.noise_lag1 < 1 or self.noise_sd < 0:
            raise ValueError(f"need 0 <= noise_lag1 < 1 and noise_sd >= 0, got "
                             f"{self.noise_lag1!r}, {self.noise_sd!r}")


def synthetic_diurnal(params: DiurnalParams | None = None) -> CarbonSignal:
    """A seeded synthetic diurnal signal, labelled as synthetic (see the module's formula)."""
    p = params or DiurnalParams()
    t0 = parse_instant(p.start, "synthetic signal start")
    n = max(1, int(round(p.days * 86400 / p.step_s)))
    rng = np.random.default_rng(p.seed)
    z = rng.standard_normal(n)
    noise = np.empty(n)
    noise[0] = p.noise_sd * z[0]
    innovation = p.noise_sd * np.sqrt(1 - p.noise_lag1 ** 2)
    for k in range(1, n):
        noise[k] = p.noise_lag1 * noise[k - 1] + innovation * z[k]
    hours = ((t0 + np.arange(n) * p.step_s) % 86400) / 3600
    values = p.mean + p.amplitude * np.cos(2 * np.pi * (hours - p.peak_hour) / 24) + noise
    values = np.round(np.maximum(values, p.floor), 1)
    settings = ", ".join(f"{k}={v}" for k, v in asdict(p).items())
    label = (f"synthetic diurnal carbon intensity, NOT measured data "
             f"(snficon.carbon.synthetic: {settings}); from {format_instant(t0)}")
    return CarbonSignal(source=f"synthetic-diurnal-seed{p.seed}",
                        series=StepSeries(t0, p.step_s, values), fill_rule="linear",
                        synthetic=True, label=label, measured=np.ones(n, bool))
