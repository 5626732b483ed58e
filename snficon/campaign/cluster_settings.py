"""The ``[cluster]`` table of a campaign file: where ``--executor slurm`` runs its workers.

::

    [cluster]
    queue = "batch"                  # Slurm partition (#SBATCH -p)
    account = "my-project"           # #SBATCH -A
    cores = 8                        # CPUs of one Slurm job (#SBATCH --cpus-per-task)
    memory = "16GB"                  # memory of one Slurm job (#SBATCH --mem)
    walltime = "04:00:00"            # #SBATCH -t: MM, MM:SS, HH:MM:SS, D-HH[:MM[:SS]]
    processes = 8                    # Dask workers per job, one run each (default: cores)
    minimum_workers = 0              # adaptive scaling: workers kept when idle ...
    maximum_workers = 64             # ... and at most (default: one job's processes)
    job_extra_directives = ["--exclusive"]          # more #SBATCH lines
    job_script_prologue = ["module load python"]    # shell lines before the worker starts
    local_directory = "$TMPDIR"      # the workers' scratch folder on the compute nodes

A worker is one Dask worker process; it runs one simulation at a time, so
``maximum_workers`` bounds the campaign's parallel runs. Keys left out are
taken from the site's Dask configuration (``jobqueue.slurm`` in
``~/.config/dask/jobqueue.yaml``) when it has them. Every key of the table
except the two lists can also be given on the command line
(``--cluster-walltime 01:00:00``), which wins over the file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from snficon.campaign.errors import CampaignFileError
from snficon.errors import InputError

KeyPath = tuple[str | int, ...]

#: The scalar keys (also command-line flags ``--cluster-KEY`` with ``_`` as ``-``).
SCALAR_KEYS = ("queue", "account", "cores", "memory", "walltime", "processes",
               "minimum_workers", "maximum_workers", "local_directory")
LIST_KEYS = ("job_extra_directives", "job_script_prologue")
CLUSTER_KEYS = SCALAR_KEYS + LIST_KEYS

_WALLTIME = re.compile(r"^(?:(?P<days>\d+)-(?P<dh>\d{1,2})"
                       r"(?::(?P<dm>\d{1,2})(?::(?P<ds>\d{1,2}))?)?"
                       r"|(?P<a>\d+)(?::(?P<b>\d{1,2})(?::(?P<c>\d{1,2}))?)?)$")
#: The keys a check across keys involves, by the key it reports.
_CLASHES = {"processes": ("processes", "cores"),
            "minimum_workers": ("minimum_workers", "maximum_workers")}
_MEMORY = re.compile(r"^\s*\d+(\.\d+)?\s*[kKmMgGtTpP]i?[bB]?\s*$")
WALLTIME_FORMATS = "MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS"


@dataclass(frozen=True)
class ClusterSettings:
    """What one Slurm job of Dask workers asks for, and how many workers adaptive scaling keeps.

    ``None`` leaves a setting to the site's Dask configuration (``cores``,
    ``memory``...) or to the default said in the module docstring.
    """

    queue: str | None = None
    account: str | None = None
    cores: int | None = None
    memory: str | None = None
    walltime: str | None = None
    processes: int | None = None
    minimum_workers: int = 0
    maximum_workers: int | None = None
    local_directory: str | None = None
    job_extra_directives: tuple[str, ...] = ()
    job_script_prologue: tuple[str, ...] = ()
    source: str | None = None  # the campaign file, for messages (not a key of the table)

    def worker_processes(self) -> int | None:
        """Dask workers per Slurm job: ``processes``, else one per core (None: both unknown)."""
        return self.processes if self.processes is not None else self.cores


class _Errors(Protocol):
    def error(self, path: KeyPath, message: str) -> CampaignFileError: ...


def walltime_seconds(text: str) -> int:
    """Seconds of a Slurm time limit (``sbatch -t``: ``MM``, ``MM:SS``, ``HH:MM:SS``,
    ``D-HH``, ``D-HH:MM``, ``D-HH:MM:SS``); raises ValueError on another text or zero."""
    match = _WALLTIME.match(text.strip())
    if match is None:
        raise ValueError(f"malformed walltime {text!r} (expected {WALLTIME_FORMATS})")
    part = {key: int(value) for key, value in match.groupdict().items() if value is not None}
    if "days" in part:
        hours, minutes, seconds = part["dh"], part.get("dm", 0), part.get("ds", 0)
        if hours >= 24:
            raise ValueError(f"malformed walltime {text!r}: {hours} hours after the days")
        total = ((part["days"] * 24 + hours) * 60 + minutes) * 60 + seconds
    else:
        numbers = [part[key] for key in ("a", "b", "c") if key in part]
        if len(numbers) == 3:
            hours, minutes, seconds = numbers
        else:
            hours, (minutes, seconds) = 0, (numbers + [0])[:2]
        if len(numbers) > 1 and (seconds >= 60 or (len(numbers) == 3 and minutes >= 60)):
            raise ValueError(f"malformed walltime {text!r}: minutes and seconds go up to 59")
        total = (hours * 60 + minutes) * 60 + seconds
    if total <= 0:
        raise ValueError(f"walltime {text!r} is zero")
    return total


def _check_value(key: str, value: Any) -> Any:
    """``value`` for ``key`` as the settings keep it; raises ValueError saying what is wrong."""
    if key in LIST_KEYS:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ValueError(f"expected an array of strings, got {value!r}")
        return tuple(value)
    if key in ("cores", "processes", "minimum_workers", "maximum_workers"):
        least = 0 if key == "minimum_workers" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"expected an integer >= {least}, got {value!r}")
        return value
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected a non-empty string, got {value!r}")
    if key == "walltime":
        walltime_seconds(value)
    if key == "memory" and not _MEMORY.match(value):
        raise ValueError(f"expected an amount with a unit such as '16GB' or '4 GiB', "
                         f"got {value!r}")
    return value


def _check_together(settings: ClusterSettings, fail: Callable[[str, str], Exception]) -> None:
    """Checks across keys; ``fail(key, message)`` makes the error to raise."""
    if settings.cores is not None and settings.processes is not None \
            and settings.processes > settings.cores:
        raise fail("processes", f"{settings.processes} worker processes per job, more than "
                   f"its {settings.cores} cores (each process needs a core)")
    if settings.maximum_workers is not None \
            and settings.minimum_workers > settings.maximum_workers:
        raise fail("minimum_workers", f"minimum_workers {settings.minimum_workers} is above "
                   f"maximum_workers {settings.maximum_workers}")


def read_cluster(reader: _Errors, data: Mapping[str, Any]) -> ClusterSettings | None:
    """The campaign file's ``[cluster]`` table (None without one); errors name the key."""
    table = data.get("cluster")
    if table is None:
        return None
    if not isinstance(table, dict):
        raise reader.error(("cluster",), f"expected a [cluster] table, got {table!r}")
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in CLUSTER_KEYS:
            raise reader.error(("cluster", key),
                               f"unknown key {key!r} (known: {', '.join(CLUSTER_KEYS)})")
        try:
            values[key] = _check_value(key, value)
        except ValueError as exc:
            raise reader.error(("cluster", key), str(exc)) from None
    settings = ClusterSettings(**values, source=getattr(reader, "source", None))
    _check_together(settings, lambda key, message: reader.error(("cluster", key), message))
    return settings


def flag_of(key: str) -> str:
    """The command-line flag of a ``[cluster]`` key: ``--cluster-minimum-workers``."""
    return "--cluster-" + key.replace("_", "-")


def with_overrides(settings: ClusterSettings | None, overrides: Mapping[str, Any],
                   source: str) -> ClusterSettings:
    """``settings`` (the file's ``[cluster]`` table) with the command line's values
    (``key -> value``, None: not given) in place of the file's.

    Raises InputError naming the flag at fault, or, for a clash between keys,
    both the flag and the campaign file ``source``.
    """
    base = settings or ClusterSettings()
    given: dict[str, Any] = {}
    for key, value in overrides.items():
        if value is None:
            continue
        if key not in SCALAR_KEYS:
            raise InputError(f"{flag_of(key)}: not a [cluster] setting")
        try:
            given[key] = _check_value(key, value)
        except ValueError as exc:
            raise InputError(f"{flag_of(key)}: {exc}") from None
    merged = dataclasses.replace(base, **given, source=source)

    def fail(key: str, message: str) -> InputError:
        flags = [flag_of(k) for k in given if k in _CLASHES[key]]
        where = f"{', '.join(flags)} with " if flags else ""
        return InputError(f"{where}{source} [cluster]: {message}")

    _check_together(merged, fail)
    return merged
