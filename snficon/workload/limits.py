"""The latest time the engine represents exactly: 2**33 s, about 272 years.

Batsim writes every time with six decimals and keeps its clock in a double;
so does the embedded engine. Below 2**33 s a double holds every multiple of
2**-20 s (0.95 us), finer than the microsecond Batsim prints: two instants a
microsecond apart stay apart and adding any duration of a microsecond or more
moves the clock. Beyond, the clock cannot tell them apart: a job submitted at
1e300 s "ran" for 1e-5 s (its one-second delay vanished in the sum) and drew
3.8e303 J. Times and durations past the bound are refused where they are read,
naming the job or profile (:func:`check_time`), and the engine refuses a job
whose execution would end past it.
"""

from __future__ import annotations

from snficon.errors import InputError

#: The latest time (s) and the longest duration (s) a workload may hold.
MAX_TIME_S = 2.0 ** 33


def check_time(value: float, where: str, field_name: str) -> float:
    """``value`` (s) if it is at most :data:`MAX_TIME_S`; InputError naming ``where``."""
    if value > MAX_TIME_S:
        raise InputError(f"{where}: {field_name!r} is {value!r} s, beyond the {MAX_TIME_S:.0f} s "
                         "(about 272 years) that the simulation clock represents to the "
                         "microsecond")
    return value
