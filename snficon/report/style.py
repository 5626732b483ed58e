"""How the report names and draws each policy: one small lookup per attribute.

Every figure and table asks :func:`policy_label`, :func:`policy_colour`,
:func:`policy_marker` and :func:`policy_rank`, never the tables below, so
that the policies' display attributes can move to one policy table without
touching the figures. A policy the tables do not know (a user's scheduler
file) keeps its own name, a spare colour and a plain marker, after the known
ones.
"""

from __future__ import annotations

#: Display names of the policies, in the paper's order (§VI-A: SNF-ICON and its NG, NF
#: and NGNF variants, SNF+IPM, and FCFS/B+IPM, the PSAS+IPM configuration).
POLICY_LABELS = {
    "fcfs": "FCFS",
    "fcfsbIpm": "FCFS/B+IPM",
    "snfIpm": "SNF+IPM",
    "snficon": "SNF-ICON",
    "snficon-ng": "SNF-ICON-NG",
    "snficon-nf": "SNF-ICON-NF",
    "snficon-ngnf": "SNF-ICON-NGNF",
}

#: One colour per policy, stable across figures.
POLICY_COLOURS = {
    "fcfs": "#7f7f7f", "fcfsbIpm": "#1f77b4", "snfIpm": "#ff7f0e", "snficon": "#2ca02c",
    "snficon-ng": "#d62728", "snficon-nf": "#9467bd", "snficon-ngnf": "#8c564b",
}

#: One marker per policy, so that points of different policies stay apart in print.
POLICY_MARKERS = {
    "fcfs": "P", "fcfsbIpm": "s", "snfIpm": "D", "snficon": "o",
    "snficon-ng": "^", "snficon-nf": "v", "snficon-ngnf": "X",
}

#: Line styles of the SNF-ICON family in time-series panels (Fig. 5), where the
#: variants' curves may coincide.
POLICY_LINESTYLES = {
    "snficon": "-", "snficon-ng": (0, (5, 2)), "snficon-nf": (0, (1, 1.5)),
    "snficon-ngnf": (0, (6, 2, 1, 2)),
}

#: The SNF-ICON family: the complete method and its gate/fallback variants.
ICON_FAMILY = ("snficon", "snficon-ng", "snficon-nf", "snficon-ngnf")
#: The heuristic baselines the paper compares SNF-ICON with (§VI-A).
BASELINES = ("fcfsbIpm", "snfIpm")

SPARE_COLOUR = "#17becf"


def policy_label(name: str) -> str:
    """The display name of policy ``name`` (``snfIpm`` -> ``SNF+IPM``)."""
    return POLICY_LABELS.get(name, name)


def policy_colour(name: str) -> str:
    """The colour (hex) of policy ``name`` in every figure."""
    return POLICY_COLOURS.get(name, SPARE_COLOUR)


def policy_marker(name: str) -> str:
    """The matplotlib marker of policy ``name`` in the scatter figures."""
    return POLICY_MARKERS.get(name, "o")


def policy_linestyle(name: str) -> str | tuple:
    """The matplotlib line style of policy ``name`` in the time-series figures."""
    return POLICY_LINESTYLES.get(name, "-")


def policy_rank(name: str) -> int:
    """The position of policy ``name`` in the paper's order (unknown ones last)."""
    order = list(POLICY_LABELS)
    return order.index(name) if name in order else len(order)
