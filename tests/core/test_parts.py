"""The records passed between the parts of a policy (snficon.core.parts).

Figures: T_on 30 s (``conftest``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from snficon.core.dispatch import dispatch_fcfs_easy
from snficon.core.node_choice import StateGroups
from snficon.core.parts import Dispatched

from .conftest import computing, idle, job, sleeping, switching_off, switching_on, table, view


def test_requested_release_of_a_dispatch_that_made_none():
    """At now = 40 s (SPEC 5's release map of requested times): idle -> now; computing
    until 100 -> 100; computing past its request (until 30) -> never; sleeping ->
    now + T_on = 70; switching off until 45 -> 45 + T_on = 75; switching on until 50 -> 50.
    The map is made when asked and cannot be changed."""
    nodes = table([idle(0.0), computing(100.0), computing(30.0), sleeping(),
                   switching_off(45.0), switching_on(50.0)])
    dispatched = Dispatched(starts=[], groups=StateGroups.of(nodes), waiting=[])
    release = dispatched.requested_release(40.0)
    assert release.tolist() == [40.0, 100.0, math.inf, 70.0, 75.0, 50.0]
    with pytest.raises(ValueError):
        release[0] = 0.0
    assert dispatched.nodes is nodes


def test_requested_release_is_the_orders_own_when_it_made_one():
    """FCFS/EASY reserved the head's start on the map of the table it leaves: that map is
    the one handed on, not a second one. Node 0 idle, node 1 computing until 100; the
    head needs 2 nodes and waits: its reservation was made on [now, 100]."""
    the_view = view([idle(0.0), computing(100.0)], [job("j0", 2, 50.0)], now=40.0)
    dispatched = dispatch_fcfs_easy(the_view)
    assert dispatched.release is not None
    assert dispatched.requested_release(40.0) is dispatched.release
    np.testing.assert_array_equal(dispatched.release, [40.0, 100.0])
