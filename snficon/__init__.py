"""snficon: energy-aware HPC job scheduling for the Batsim simulator.

The paper's SNF-ICON controller and its baselines as pybatsim schedulers, plus
an embedded engine that reproduces Batsim 4's behaviour on the same inputs.
"""

__version__ = "0.1.0"
