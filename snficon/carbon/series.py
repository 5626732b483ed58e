r"""A piecewise-constant series on a regular grid and its exact integral.

Carbon intensity is published per interval (30-min settlement periods for
Great Britain) and a run's power is constant between two of Batsim's energy
rows, so every carbon quantity of the project is an integral of a
piecewise-constant function. :class:`StepSeries` holds one,

.. math:: f(t) = v_k \quad\text{for}\quad t_0 + k\,\Delta \le t < t_0 + (k+1)\,\Delta,

and integrates it exactly through its cumulative function (piecewise
linear, vectorised over numpy arrays of times):

.. math:: F(t) = \int_{t_0}^{t} f = \Delta \sum_{i<k} v_i + (t - t_0 - k\Delta)\, v_k,
          \quad k = \lfloor (t - t_0)/\Delta \rfloor .
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FloatArray = np.ndarray


@dataclass(frozen=True)
class StepSeries:
    """``values[k]`` on ``[t0_s + k step_s, t0_s + (k+1) step_s)``; read-only.

    ``t0_s`` and ``step_s`` are seconds on whatever clock the caller uses
    (POSIX time for a signal file, simulated time once mapped). Times
    outside ``[t0_s, end_s]`` raise ValueError naming the range.
    """

    t0_s: float
    step_s: float
    values: FloatArray
    _cumulative: FloatArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        values = np.array(self.values, dtype=float)  # a private copy
        if values.ndim != 1 or values.size == 0:
            raise ValueError(f"a step series needs a non-empty 1-D array, got shape "
                             f"{values.shape}")
        if not np.all(np.isfinite(values)):
            raise ValueError("a step series needs finite values")
        if not (np.isfinite(self.step_s) and self.step_s > 0):
            raise ValueError(f"step must be positive and finite, got {self.step_s!r}")
        if not np.isfinite(self.t0_s):
            raise ValueError(f"t0 must be finite, got {self.t0_s!r}")
        values.flags.writeable = False
        cumulative = np.concatenate(([0.0], np.cumsum(values) * self.step_s))
        cumulative.flags.writeable = False
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "_cumulative", cumulative)

    @property
    def size(self) -> int:
        return int(self.values.size)

    @property
    def end_s(self) -> float:
        """End of the last interval."""
        return self.t0_s + self.size * self.step_s

    @property
    def total(self) -> float:
        """Integral over the whole series, ``F(end_s)``."""
        return float(self._cumulative[-1])

    def _index(self, t: FloatArray | float) -> tuple[FloatArray, FloatArray]:
        """Interval index (clipped to the last one at ``end_s``) and offset into it (s)."""
        t = np.asarray(t, dtype=float)
        slack = 1e-12 * max(abs(self.t0_s), abs(self.end_s), self.step_s) + 1e-9  # rounding
        if t.size and (np.min(t) < self.t0_s - slack or np.max(t) > self.end_s + slack):
            bad = float(np.min(t)) if np.min(t) < self.t0_s - slack else float(np.max(t))
            raise ValueError(f"t={bad!r} is outside the series' range "
                             f"[{self.t0_s!r}, {self.end_s!r}]")
        t = np.clip(t, self.t0_s, self.end_s)
        x = (t - self.t0_s) / self.step_s
        k = np.clip(np.floor(x), 0, self.size - 1).astype(np.int64)
        return k, (x - k) * self.step_s

    def at(self, t: FloatArray | float) -> FloatArray:
        """``f(t)``, right-continuous (at ``end_s``: the last value)."""
        k, _ = self._index(t)
        return self.values[k]

    def cumulative(self, t: FloatArray | float) -> FloatArray:
        r"""``F(t)`` = :math:`\int_{t_0}^{t} f`, exact, elementwise."""
        k, into = self._index(t)
        return self._cumulative[k] + into * self.values[k]

    def integral(self, a: FloatArray | float, b: FloatArray | float) -> FloatArray:
        r""":math:`\int_a^b f` elementwise (negative when ``b < a``)."""
        return self.cumulative(b) - self.cumulative(a)

    def mean(self, a: FloatArray | float, b: FloatArray | float) -> FloatArray:
        """Mean of ``f`` over ``[a, b]``; ``f(a)`` where ``b == a``."""
        a, b = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float))
        width = b - a
        both = self.cumulative(np.stack((a, b)))  # one pass over both ends
        if np.all(width > 0):
            return (both[1] - both[0]) / width
        safe = np.where(width > 0, width, 1.0)
        return np.where(width > 0, (both[1] - both[0]) / safe, self.at(a))

    def window(self, t_from: float, t_to: float) -> StepSeries:
        """The intervals that meet ``[t_from, t_to]``, as a series of their own."""
        if t_to < t_from:
            raise ValueError(f"empty window [{t_from!r}, {t_to!r}]")
        first, _ = self._index(t_from)
        self._index(t_to)
        last_x = (float(np.clip(t_to, self.t0_s, self.end_s)) - self.t0_s) / self.step_s
        last = min(self.size, max(int(np.ceil(last_x)) + 1, int(first) + 1))
        first = max(int(first) - 1, 0)  # one interval of margin each side against rounding
        return StepSeries(self.t0_s + int(first) * self.step_s, self.step_s,
                          self.values[int(first):last])
