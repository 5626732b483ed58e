"""Carbon intensity and COAST's carbon-aware start-time advisor, as pure code.

- :mod:`~snficon.carbon.series`: a piecewise-constant series and its exact
  integral (the building block of every carbon quantity);
- :mod:`~snficon.carbon.signal`: a ``timestamp_utc,gco2_per_kwh`` file read
  and checked, its gaps filled by a stated rule, and mapped onto simulated
  time from a start instant (:class:`~snficon.carbon.signal.MappedSignal`);
- :mod:`~snficon.carbon.synthetic`: a synthetic diurnal signal for demos and
  tests (not measured data);
- :mod:`~snficon.carbon.game`, :mod:`~snficon.carbon.coast`: COAST's
  micro-batch congestion game, its three baselines and the advisor a
  scheduler layer calls (Feng et al., "COAST: Congestion-Aware Start-Time
  Recommendations for Carbon-Aware HPC Jobs");
- :mod:`~snficon.carbon.evaluate`: COAST's own idealised evaluation
  (training-window normalisers, planned targets, carbon / wait / slot-load
  metrics), to set beside what a simulated run realises.

Like :mod:`snficon.core`, this package imports only numpy and
:mod:`snficon.errors` (contract ``carbon-pure`` of ``.importlinter``), so a
scheduler running under the real Batsim can use it.
"""
