"""How many runs a campaign lists, counted before any of them is made.

A sweep range ``{start = 0, stop = 1e12, step = 1}`` is kept as a lazy
sequence (a :class:`range`, or a :class:`FloatSpan` for decimal steps) and
each group's grid is counted arithmetically: cases x policies x the length of
each sweep axis x carbon alignments. :func:`check_run_count` refuses a campaign
listing more than ``max_runs`` grid points (``snficon campaign --max-runs``)
before any list of runs, option check or file is made, so a typo in a range
costs nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, overload

from snficon.campaign.errors import CampaignFileError

if TYPE_CHECKING:
    from snficon.campaign.config import Campaign, Group

#: ``snficon campaign --max-runs`` by default: the paper's evaluation is 734 runs.
DEFAULT_MAX_RUNS = 100_000


@dataclass(frozen=True)
class FloatSpan(Sequence[float]):
    """``start, start + step, ...`` (``length`` values), made one at a time when asked for."""

    start: float
    step: float
    length: int

    @classmethod
    def between(cls, start: float, stop: float, step: float) -> FloatSpan:
        """Every ``start + k * step`` up to ``stop`` included (a 1e-9 step of slack)."""
        return cls(start, step, math.floor((stop - start) / step + 1e-9) + 1)

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> float: ...
    @overload
    def __getitem__(self, index: slice) -> list[float]: ...

    def __getitem__(self, index: int | slice) -> float | list[float]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(self.length))]
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError(index)
        return self.start + index * self.step

    def __iter__(self) -> Iterator[float]:
        return (self.start + k * self.step for k in range(self.length))


def axis_length(values: Sequence[object]) -> int:
    """The number of values of a sweep axis, without making them (``len`` of a range of
    more than 2^63 values raises OverflowError)."""
    if isinstance(values, range):
        return max(0, -(-(values.stop - values.start) // values.step))
    if isinstance(values, FloatSpan):
        return values.length
    return len(values)


def group_run_count(group: Group) -> int:
    """The grid points of ``group``: cases x policies x sweep axes x carbon alignments."""
    count = len(group.cases) * len(group.policies)
    for _, values in group.sweep:
        count *= axis_length(values)
    if group.carbon is not None:
        count *= len(group.carbon.starts) or group.carbon.offsets
    return count


def _number(count: int) -> str:
    return f"{count:,}" if count < 10**15 else f"{count:.3e}"


def check_run_count(campaign: Campaign, max_runs: int = DEFAULT_MAX_RUNS) -> int:
    """The number of grid points ``campaign`` lists; CampaignFileError above ``max_runs``.

    The message names the file, the count, the cap and the largest group.
    """
    counts = [(group_run_count(group), group.name) for group in campaign.groups]
    total = sum(count for count, _ in counts)
    if total > max_runs:
        largest, name = max(counts)
        raise CampaignFileError(
            campaign.source, f"the campaign lists {_number(total)} runs, more than --max-runs "
            f"{_number(max_runs)} (group \"{name}\": {_number(largest)}); narrow its sweep "
            "ranges, or raise --max-runs if you mean it")
    return total
