"""The project's exceptions.

Every error a user can provoke derives from :class:`SnficonError`; its message
names the file, job, node or event at fault and the bad value. The command-line
front ends map each class to its ``exit_code``.
"""

from __future__ import annotations


class SnficonError(Exception):
    """Base class of every error the project raises on purpose."""

    exit_code = 1


class InputError(SnficonError, ValueError):
    """A malformed or invalid input file (platform, workload, trace, options)."""

    exit_code = 2


class UnsupportedError(SnficonError, ValueError):
    """A valid Batsim feature or flag that this project does not implement."""

    exit_code = 2


class ProtocolError(SnficonError):
    """A scheduler broke the Batsim protocol (the run stops, as Batsim does)."""

    exit_code = 3


class SchedulerTimeoutError(SnficonError, TimeoutError):
    """A scheduler did not answer a message within the allowed time."""

    exit_code = 4


class DeadlockError(SnficonError):
    """Nothing can happen any more but some jobs never ran."""

    exit_code = 5


class OutputError(SnficonError):
    """An output location cannot be written (a file in the way, no permission, read-only)."""

    exit_code = 2


class SchedulerCrashError(SnficonError):
    """The scheduler raised an exception or its process died: the run could not go on."""

    exit_code = 6
