"""``pybatsim snfIpm``: SNF+IPM (:mod:`snficon.core.baseline`)."""

from snficon.adapter.baselines import SnfIpmScheduler


class SnfIpm(SnfIpmScheduler):
    """The class pybatsim instantiates for ``pybatsim snfIpm``."""
