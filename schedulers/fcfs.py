"""``pybatsim fcfs``: plain FCFS with an idle timeout (:mod:`snficon.policies.simple_fcfs`)."""

from snficon.policies.simple_fcfs import SimpleFcfs


class Fcfs(SimpleFcfs):
    """The class pybatsim instantiates for ``pybatsim fcfs``."""
