"""Comparisons of a simulated time with "now", with one documented tolerance.

Simulated times reach the core through floating-point arithmetic on both
sides of the protocol: a wake time ``(now + T_on) - T_on`` may land one ulp
above ``now``; SimGrid's clock is a sum of per-step deltas, so Batsim may
deliver a requested call a few ulps before the time asked for. Every test of
"has this time come?" (an idle timer's expiry, a transition's end, a planned
wake-up, a requested call) goes through :func:`is_due` or :func:`is_future`,
which agree: a time within :data:`TIME_TOLERANCE_S` of now *is* now.

The tolerance is far below any duration the model uses (whole seconds in
traces, 1e-5 s for Batsim's zero-flop jobs) and far above the rounding of
times of the order of 1e7 s (an ulp there is about 2e-9 s).
"""

from __future__ import annotations

import numpy as np

#: Two simulated times closer than this (s) are the same instant.
TIME_TOLERANCE_S = 1e-6


def is_due(when: float, now: float) -> bool:
    """``when`` has come at ``now``: it is before now, or within the tolerance after it."""
    return when <= now + TIME_TOLERANCE_S


def is_future(when: float, now: float) -> bool:
    """``when`` is still ahead of ``now`` (by more than the tolerance): ``not is_due``."""
    return when > now + TIME_TOLERANCE_S


def unexpired_mask(when: np.ndarray, now: float) -> np.ndarray:
    """Elements of ``when`` that are not over at ``now``: after it, at it, or before it
    by no more than the tolerance (``nan`` is never unexpired)."""
    return when >= now - TIME_TOLERANCE_S


def due_mask(when: np.ndarray, now: float) -> np.ndarray:
    """:func:`is_due` for every element of ``when`` (``nan`` is never due)."""
    return when <= now + TIME_TOLERANCE_S


def future_mask(when: np.ndarray, now: float) -> np.ndarray:
    """:func:`is_future` for every element of ``when`` (``nan`` is never in the future)."""
    return when > now + TIME_TOLERANCE_S
