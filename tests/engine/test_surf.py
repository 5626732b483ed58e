"""The host model's clock: each solve advances to the next end, ends come in list order."""

from __future__ import annotations

import numpy as np

from snficon.engine.surf import Surf

HOSTS = np.arange(2, dtype=np.int64)


def test_a_solve_advances_to_the_nearest_end_by_hand():
    surf = Surf()
    slow = surf.execute(HOSTS, 4e9, np.array([2e9, 1e9]), "slow")  # 4 s at the slower host
    fast = surf.execute(HOSTS, 1e9, np.array([1e9, 1e9]), "fast")  # 1 s
    nap = surf.sleep(2.5, -1, "nap")
    assert surf.solve() == 1.0 and surf.now == 1.0
    assert surf.take_finished() == [fast]
    assert surf.solve() == 1.5 and surf.now == 2.5
    assert surf.take_finished() == [nap]
    assert surf.solve() == 1.5 and surf.now == 4.0
    assert surf.take_finished() == [slow]
    assert surf.solve() == -1.0


def test_actions_ending_together_end_in_the_order_they_started():
    surf = Surf()
    nap = surf.sleep(2.0, -1, "nap")
    work = surf.execute(HOSTS, 2e9, np.array([1e9, 1e9]), "work")
    early = surf.sleep(2.0, -1, "early")
    assert surf.solve() == 2.0
    assert surf.take_finished() == [nap, work, early]


def test_a_removed_action_does_not_end_and_a_cancelled_one_fails():
    surf = Surf()
    short = surf.execute(HOSTS, 1e9, np.array([1e9, 1e9]), "short")
    cancelled = surf.sleep(0.5, -1, "cancelled")
    long = surf.sleep(3.0, -1, "long")
    surf.remove(short)
    surf.cancel(cancelled)
    assert surf.take_failed() == [cancelled]
    assert surf.solve() == 3.0
    assert surf.take_finished() == [long]


def test_a_comm_ends_at_once_with_a_solve_of_no_time():
    surf = Surf()
    surf.sleep(5.0, -1, "nap")
    comm = surf.communicate("comm")
    assert surf.has_instant()
    assert surf.solve() == 0.0 and surf.now == 0.0
    assert surf.take_finished() == [comm]
