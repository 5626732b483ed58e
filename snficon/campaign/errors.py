"""The campaign's errors, each also a builtin (signac's ``errors.py`` pattern).

They derive from :class:`~snficon.errors.SnficonError`, so the command line
prints their message and exits with their ``exit_code``.
"""

from __future__ import annotations

from snficon.errors import InputError, SnficonError


class CampaignFileError(InputError):
    """A campaign file that does not parse or does not validate.

    The message starts with the file, the line when known and the key at
    fault: ``expe/paper.toml, line 12, group "base".policies: ...``.
    """

    def __init__(self, source: str, message: str, *, key: str | None = None,
                 line: int | None = None) -> None:
        self.source, self.key, self.line = source, key, line
        where = source if line is None else f"{source}, line {line}"
        super().__init__(f"{where}, {key}: {message}" if key else f"{where}: {message}")


class MissingInputError(InputError, FileNotFoundError):
    """Inputs (platforms, workloads) the campaign names but that are not on disk."""


class CorruptedRunError(SnficonError, OSError):
    """A run folder whose ``params.json`` does not hash to the folder's name."""

    exit_code = 6


class ExecutorUnavailableError(SnficonError, ImportError):
    """An executor whose package is not installed (e.g. ``dask`` without ``distributed``)."""

    exit_code = 2


class WorkerDiedError(SnficonError, ChildProcessError):
    """A worker process that died while running a run (killed by a signal, e.g. the
    out-of-memory killer's SIGKILL): that run is recorded as failed, the others go on."""

    exit_code = 1


class ResultsBusyError(SnficonError, BlockingIOError):
    """Another campaign holds the results folder's lock (:mod:`snficon.campaign.lock`)."""

    exit_code = 2
