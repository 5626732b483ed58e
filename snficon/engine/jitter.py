"""Random switch-on/off durations: an opt-in departure from Batsim's model.

Batsim times every transition as one flop in its virtual pstate: always the
same duration. The paper authors' simulator (SPARS, ``PlatformControl.
sample_transition_time``) instead draws each transition's duration from a
normal law around its mean, with a standard deviation of 10 % of the mean
and a ``numpy`` generator seeded with 42, one draw per machine and
transition. With :class:`TransitionJitter` the engine does the same: each
machine's switch lasts ``mean + jitter * mean * z``, ``z`` the next standard
normal draw of ``numpy.random.default_rng(seed)`` (SPARS: ``scipy.stats.norm
(loc=mean, scale=std).rvs(random_state=rng)``, the same arithmetic), in the
order the machines start switching. A draw below 1 % of the mean -- more
than 9.9 standard deviations away at jitter 0.1, which SPARS would keep as a
negative duration -- is raised to 1 % of the mean.
"""

from __future__ import annotations

import math

import numpy as np

from snficon.errors import InputError

#: Shortest duration a draw may give, as a share of the mean.
MIN_SHARE_OF_MEAN = 0.01


class TransitionJitter:
    """Normal(mean, ``jitter`` x mean) transition durations from a seeded generator."""

    def __init__(self, jitter: float, seed: int) -> None:
        if isinstance(jitter, bool) or not isinstance(jitter, int | float) \
                or not math.isfinite(jitter) or not 0 <= jitter < 1:
            raise InputError(f"transition jitter must be a number in [0, 1), not {jitter!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise InputError(f"the jitter's seed must be an integer >= 0, not {seed!r}")
        self.jitter = float(jitter)
        self.seed = seed
        self._rng = np.random.default_rng(seed)

    def duration(self, mean_s: float) -> float:
        """The next transition's duration (s) for a transition of mean ``mean_s``."""
        drawn = mean_s + self.jitter * mean_s * float(self._rng.standard_normal())
        return max(drawn, MIN_SHARE_OF_MEAN * mean_s)
