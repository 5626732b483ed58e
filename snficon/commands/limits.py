"""Ranges of the command-line options that size what a command allocates.

A count typed with a few zeros too many (``--jobs 1000000000000``) would make
a command take memory until the machine kills it; each such option is checked
against a range before any work, and refused in one line naming the option,
the range and the value (exit 2). The upper bounds are far above what the
paper needs (3,000 jobs, 1,152 nodes, 28-day signals, 734 runs).
"""

from __future__ import annotations

from snficon.errors import InputError

#: Jobs a generated workload may hold (each costs a few hundred bytes).
MAX_JOBS = 10_000_000
#: Compute nodes of a generated platform, or of a generated workload's platform.
MAX_NODES = 1_000_000
#: Processes or threads a command starts on this machine.
MAX_WORKERS = 1024
#: Intervals of a synthetic carbon signal (--days x 86400 / --step).
MAX_SIGNAL_INTERVALS = 10_000_000
#: Training epochs and rollout steps of the RL baseline.
MAX_EPOCHS = 1_000_000


def check_count(value: int | None, option: str, low: int, high: int) -> None:
    """Raise :class:`InputError` unless ``low <= value <= high`` (None: option not given)."""
    if value is None:
        return
    if not low <= value <= high:
        raise InputError(f"{option} must be between {low:,} and {high:,}, got {value:,}")


def check_at_most(value: int | None, option: str, high: int) -> None:
    """Raise :class:`InputError` when ``value`` is above ``high`` (the reader below checks
    the lower end with its own message)."""
    if value is not None and value > high:
        raise InputError(f"{option} must be at most {high:,}, got {value:,}")
