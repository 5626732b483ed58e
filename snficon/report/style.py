"""How the report names and draws each policy: one small lookup per attribute.

Every figure and table asks :func:`policy_label`, :func:`policy_colour`,
:func:`policy_marker`, :func:`policy_linestyle` and :func:`policy_rank`; the
attributes themselves are fields of the one policy table
(:data:`snficon.policy_table.POLICIES`). A policy the table does not know (a
user's scheduler file) keeps its own name, a spare colour and a plain marker,
after the known ones.
"""

from __future__ import annotations

from snficon import policy_table
from snficon.policy_table import POLICIES

#: The SNF-ICON family: the complete method and its gate/fallback variants.
ICON_FAMILY = tuple(name for name, e in POLICIES.items() if (e.order, e.power) == ("snf", "icon"))
#: The heuristic baselines the paper compares SNF-ICON with (§VI-A).
BASELINES = tuple(name for name, e in POLICIES.items() if e.power == "ipm")


def policy_label(name: str) -> str:
    """The display name of policy ``name`` (``snfIpm`` -> ``SNF+IPM``)."""
    return policy_table.policy_label(name)


def policy_colour(name: str) -> str:
    """The colour (hex) of policy ``name`` in every figure."""
    return policy_table.policy_colour(name)


def policy_marker(name: str) -> str:
    """The matplotlib marker of policy ``name`` in the scatter figures."""
    entry = POLICIES.get(name)
    return entry.marker if entry is not None else "P"


def policy_linestyle(name: str) -> str | tuple:
    """The matplotlib line style of policy ``name`` in the time-series figures."""
    entry = POLICIES.get(name)
    return entry.linestyle if entry is not None else "-"


def policy_rank(name: str) -> int:
    """The position of policy ``name`` in the paper's order (unknown ones last)."""
    order = list(POLICIES)
    return order.index(name) if name in order else len(order)
