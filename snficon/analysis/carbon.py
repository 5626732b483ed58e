r"""Carbon emissions of a run, from Batsim's output files and a carbon signal.

The same partition and window as the energy metrics of
:mod:`snficon.analysis.metrics` (the paper's window [0, M], M the last job
end), with each joule weighted by the grid's intensity when it was drawn:

- ``carbon_total_kg``: the platform's power P(t) (the sum of every node's
  power, constant between two rows of ``out_consumed_energy.csv``, each
  interval's energy spread evenly over it) against the intensity I(t),

  .. math:: C_{total} = \frac{1}{3.6\cdot 10^{9}} \int_0^M P(t)\, I(t)\, dt ;

- ``carbon_compute_kg``: each job's ``consumed_energy`` E_j spread evenly over
  its execution [s_j, f_j] (its nodes draw a constant power while it runs:
  busy power for ``parallel_homogeneous``, idle for ``delay``),

  .. math:: C_{compute} = \frac{1}{3.6\cdot 10^{9}} \sum_j \frac{E_j}{f_j - s_j}
            \int_{s_j}^{f_j} I(t)\, dt ;

- ``carbon_wasted_kg`` = total - compute (nodes idle, switching, sleeping).

With E in J and I in gCO2/kWh, J x g/kWh / (3.6e6 J/kWh x 1e3 g/kg) = kg.
Both integrals are exact for a piecewise-constant power and a
piecewise-constant signal (:class:`~snficon.carbon.mapping.MappedSignal`),
vectorised over the intervals.

**Worked example** (``tests/analysis/test_carbon.py``): two nodes of 200 W
busy, 100 W idle; job 1 on one node over [0, 3000) s, job 2 on both over
[3000, 6600) s; the signal is 100 gCO2/kWh on [0, 3600) and 300 on
[3600, 7200). Power is 300 W on [0, 3000) and 400 W on [3000, 6600), so

- total: (300 x 100 x 3000 + 400 x 100 x 600 + 400 x 300 x 3000) / 3.6e9
  = 4.74e8 / 3.6e9 = 0.131667 kg;
- compute: job 1 200 x 100 x 3000 = 6e7, job 2 400 x (100 x 600 + 300 x 3000)
  = 3.84e8, so 4.44e8 / 3.6e9 = 0.123333 kg;
- wasted: the idle node, 100 x 100 x 3000 / 3.6e9 = 0.008333 kg.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from snficon.analysis.batsim_outputs import EnergyCurve, read_energy_curve, read_jobs
from snficon.analysis.metrics import metered_jobs, window_end
from snficon.carbon.mapping import MappedSignal

#: The ``metrics.json`` keys this module adds.
CARBON_KEYS = ("carbon_total_kg", "carbon_compute_kg", "carbon_wasted_kg")


@dataclass(frozen=True)
class RunCarbon:
    """Emissions (kg CO2) of a run in the paper's window; the names are ``metrics.json`` keys."""

    carbon_total_kg: float
    carbon_compute_kg: float
    carbon_wasted_kg: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def carbon_from_outputs(prefix: str | Path, signal: MappedSignal) -> RunCarbon | None:
    """Emissions of the run whose files are ``{prefix}_*.csv``; None without an energy file.

    Reads ``_jobs.csv`` and ``_consumed_energy.csv`` only (so a run of the
    real Batsim is measured the same way); a malformed file raises
    :class:`~snficon.errors.InputError` naming it, and a run longer than a
    non-wrapping signal raises it too.
    """
    energy_path = Path(f"{prefix}_consumed_energy.csv")
    if not energy_path.exists():
        return None
    ran = [job for job in read_jobs(Path(f"{prefix}_jobs.csv")) if job.ran]
    end = window_end(ran)
    total = platform_carbon_kg(read_energy_curve(energy_path), signal, end)
    jobs = metered_jobs(ran)
    starts = np.array([job.start for job in jobs], dtype=float)
    finishes = np.array([job.finish for job in jobs], dtype=float)
    energies = np.array([job.energy for job in jobs], dtype=float)
    compute = float(np.sum(signal.carbon_kg(energies, starts, finishes))) if jobs else 0.0
    return RunCarbon(carbon_total_kg=total, carbon_compute_kg=compute,
                     carbon_wasted_kg=total - compute)


def platform_carbon_kg(curve: EnergyCurve, signal: MappedSignal, end: float,
                       start: float = 0.0) -> float:
    """Emissions (kg) of the platform's energy curve over ``[start, end]``.

    The curve's cumulative energy is linear between consecutive distinct
    times (rows sharing a time: the last counts, as in
    :meth:`~snficon.analysis.batsim_outputs.EnergyCurve.at`), so each
    interval's energy is drawn at constant power.
    """
    if end <= start:
        return 0.0
    times = np.asarray(curve.times, dtype=float)
    energies = np.asarray(curve.energies, dtype=float)
    last_of_time = np.append(times[1:] != times[:-1], True)
    times, energies = times[last_of_time], energies[last_of_time]
    inside = (times > start) & (times < end)
    knots = np.concatenate(([start], times[inside], [end]))
    cumulative = np.concatenate(([curve.at(start)], energies[inside], [curve.at(end)]))
    return float(np.sum(signal.carbon_kg(np.diff(cumulative), knots[:-1], knots[1:])))
