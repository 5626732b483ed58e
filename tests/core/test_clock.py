"""The one time tolerance of the core (``clock``): a time within 1e-6 s after now is now.

The edges are worked by hand with TIME_TOLERANCE_S = 1e-6 and now = 100: the last
due time is 100 + 1e-6 (``<=``), anything above it is in the future; a time that
is over is more than 1e-6 before now. Times near 1e7 s (an ulp about 2e-9 s) show
that the rounding of sums stays far inside the tolerance.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from snficon.core.clock import (
    TIME_TOLERANCE_S,
    due_mask,
    future_mask,
    is_due,
    is_future,
    unexpired_mask,
)

NOW = 100.0
EDGE = NOW + TIME_TOLERANCE_S  # 100.000001, the latest time still due at 100


class TestIsDue:
    def test_the_tolerance_is_a_microsecond(self):
        assert TIME_TOLERANCE_S == 1e-6

    @pytest.mark.parametrize("when", [0.0, 99.0, NOW, NOW + 5e-7, EDGE])
    def test_times_up_to_now_plus_the_tolerance_are_due(self, when):
        assert is_due(when, NOW) and not is_future(when, NOW)

    @pytest.mark.parametrize("when", [math.nextafter(EDGE, math.inf), NOW + 2e-6, 101.0])
    def test_times_beyond_the_tolerance_are_future(self, when):
        assert is_future(when, NOW) and not is_due(when, NOW)

    def test_a_wake_one_ulp_above_now_is_due(self):
        """(now + T_on) - T_on with now = 1489.0031088499188, T_on = 1200 (an AOBA run):
        the sum rounds, and the difference may land an ulp (2.3e-13 s) off now."""
        now = 1489.0031088499188
        wake = (now + 1200.0) - 1200.0
        assert abs(wake - now) <= 4.6e-13
        assert is_due(wake, now)

    def test_a_call_a_few_ulps_early_near_1e7_is_due(self):
        """At 1e7 s an ulp is 2**-29 s, about 1.9e-9 s: five ulps early is still due."""
        asked = 1e7
        delivered = asked - 5 * math.ulp(asked)
        assert math.ulp(asked) == 2.0 ** -29
        assert is_due(asked, delivered)

    def test_infinity_is_never_due_and_nan_is_neither(self):
        assert is_future(math.inf, NOW) and not is_due(math.inf, NOW)
        assert not is_due(math.nan, NOW) and not is_future(math.nan, NOW)


class TestMasks:
    WHEN = np.array([99.0, NOW - 2e-6, NOW - 5e-7, NOW, EDGE, NOW + 2e-6, math.inf, math.nan])

    def test_due_and_future_masks_are_is_due_and_is_future_element_wise(self):
        """Elements 0-4 are due (at most 100 + 1e-6), 5-6 future, nan neither."""
        assert due_mask(self.WHEN, NOW).tolist() == [True] * 5 + [False] * 3
        assert future_mask(self.WHEN, NOW).tolist() == [False] * 5 + [True, True, False]
        assert due_mask(self.WHEN, NOW).tolist() == [is_due(w, NOW) for w in self.WHEN]
        assert future_mask(self.WHEN, NOW).tolist() == [is_future(w, NOW) for w in self.WHEN]

    def test_unexpired_mask_keeps_times_no_more_than_the_tolerance_before_now(self):
        """99 and 100 - 2e-6 are over; 100 - 5e-7 (within 1e-6) and later are not; nan
        is never unexpired."""
        assert unexpired_mask(self.WHEN, NOW).tolist() == [False, False] + [True] * 5 + [False]

    def test_masks_of_an_empty_array_are_empty(self):
        empty = np.array([], dtype=float)
        for mask in (due_mask, future_mask, unexpired_mask):
            assert mask(empty, NOW).shape == (0,)
