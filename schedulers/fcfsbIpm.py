"""``pybatsim fcfsbIpm``: FCFS/EASY+IPM, the PSAS+IPM baseline (:mod:`snficon.core.baseline`)."""

from snficon.adapter.baselines import FcfsbIpmScheduler


class FcfsbIpm(FcfsbIpmScheduler):
    """The class pybatsim instantiates for ``pybatsim fcfsbIpm``."""
