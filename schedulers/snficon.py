"""``pybatsim snficon``: SNF-ICON (:mod:`snficon.core.controller`).

Variants through options: ``-o '{"gate": false}'`` (NG), ``{"fallback": false}`` (NF).
"""

from snficon.adapter.icon import SnficonScheduler


class Snficon(SnficonScheduler):
    """The class pybatsim instantiates for ``pybatsim snficon``."""
