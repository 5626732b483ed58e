"""Campaign workloads given as traces: converted once, kept in the results folder's cache.

A ``[workloads]`` entry may name an SWF trace (``.swf``, ``.swf.gz``) or a
SPARS file instead of a Batsim workload; it is converted as ``snficon
workload convert`` does (SPEC section 4) with the options of its ``convert``
table::

    [workloads]
    das2-fs1 = { file = "DAS2-fs1-2003-1.swf.gz", convert = { jobs = 3000, nb_res = 64 } }
    das2-fs1-500 = { file = "DAS2-fs1-2003-1.swf.gz", convert = { nb_res = 64 }, jobs = 500 }

(an ``.swf[.gz]`` file without ``convert`` is converted with the defaults;
``convert = {}`` marks any other file as a trace to convert). The
conversion's options are among the run's parameters (key ``convert``), so
they are part of its id, beside the trace's SHA-256.

The conversion is done by the first run that needs it, in its worker, and
kept in ``RESULTS/cache/conversions/<key>/`` (``workload.json`` and
``conversion.json``, its record), where ``<key>`` hashes the trace's
SHA-256, the conversion options and the converter's code
(:func:`converter_digest`): every other run naming the same trace with the
same options reuses it, and a changed trace, option or converter gives a new
entry. The entry is written under a temporary name and renamed when
complete, under a file lock (``fcntl``; also over NFS), so that two workers
asking at once convert once and a killed conversion leaves no entry; where
locks do not work the rename alone keeps the entry whole (the slower worker
drops its copy). Each run folder's ``conversion.json`` is the entry's record
plus ``converted_by_this_run``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import socket
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import snficon.workload
from snficon.campaign.errors import CampaignFileError
from snficon.errors import InputError
from snficon.fileio import atomic_write_text
from snficon.workload.convert import convert_trace
from snficon.workload.model import PROFILE_PARALLEL_HOMOGENEOUS
from snficon.workload.writer import WALLTIME_PAPER, BatsimOptions

KeyPath = tuple[str | int, ...]

CACHE = "cache"  # RESULTS/cache
CONVERSIONS = "conversions"  # RESULTS/cache/conversions/<key>/
WORKLOAD = "workload.json"
RECORD = "conversion.json"
CONVERT_KEYS = ("jobs", "skip", "nb_res", "drop_oversized", "walltime", "profile",
                "min_runtime")
KEY_LENGTH = 16  # hex digits of SHA-256 kept in a cache key


@dataclass(frozen=True)
class TraceConversion:
    """How a trace becomes a run's Batsim workload: ``snficon workload convert``'s options
    (``--jobs``, ``--skip``, ``--nb-res``, ``--drop-oversized``, ``--walltime``,
    ``--profile``, ``--min-runtime``)."""

    jobs: int | None = None
    skip: int = 0
    nb_res: int | None = None
    drop_oversized: bool = False
    walltime: str = WALLTIME_PAPER
    profile: str = PROFILE_PARALLEL_HOMOGENEOUS
    min_runtime: float | None = None

    def batsim_options(self) -> BatsimOptions:
        """How the trace's jobs are written (raises InputError on a bad combination)."""
        return BatsimOptions(walltime=self.walltime, profile=self.profile,
                             min_runtime_s=self.min_runtime)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ConvertedWorkload:
    """A trace's conversion in the cache; ``converted_here``: made by this call, not reused."""

    path: Path  # the Batsim workload
    key: str
    converted_here: bool
    record: dict[str, Any]


class _Errors(Protocol):
    def error(self, path: KeyPath, message: str) -> CampaignFileError: ...


def is_trace(path: str | Path) -> bool:
    """Whether ``path`` names an SWF trace by its name (``.swf``, ``.swf.gz``)."""
    return Path(path).name.lower().removesuffix(".gz").endswith(".swf")


def read_conversion(reader: _Errors, entry: Mapping[str, Any], path: KeyPath,
                    written: str) -> TraceConversion | None:
    """The ``convert`` table of the workload entry at ``path`` (None: not a trace)."""
    value = entry.get("convert")
    where = path + ("convert",)
    if value is None:
        return TraceConversion() if is_trace(written) else None
    if not isinstance(value, dict):
        raise reader.error(where, f"expected a table of conversion options, got {value!r}")
    checks = {"jobs": (int, 1), "skip": (int, 0), "nb_res": (int, 1),
              "min_runtime": (float, 0)}
    for key, item in value.items():
        if key not in CONVERT_KEYS:
            raise reader.error(where + (key,),
                               f"unknown key {key!r} (known: {', '.join(CONVERT_KEYS)})")
        if key in checks:
            kind, least = checks[key]
            number = isinstance(item, int | float) if kind is float else isinstance(item, int)
            if isinstance(item, bool) or not number or item < least \
                    or (kind is float and item == least):
                what = "a positive number" if kind is float else f"an integer >= {least}"
                raise reader.error(where + (key,), f"expected {what}, got {item!r}")
        elif key == "drop_oversized" and not isinstance(item, bool):
            raise reader.error(where + (key,), f"expected true or false, got {item!r}")
        elif key in ("walltime", "profile") and not isinstance(item, str):
            raise reader.error(where + (key,), f"expected a string, got {item!r}")
    conversion = TraceConversion(**{**value, **({"min_runtime": float(value["min_runtime"])}
                                                if "min_runtime" in value else {})})
    try:
        conversion.batsim_options()
    except InputError as exc:
        raise reader.error(where, str(exc)) from None
    return conversion


@cache
def converter_digest() -> str:
    """SHA-256 over the relative path and bytes of each module of :mod:`snficon.workload`
    (the converter): a cache entry made by other converter code is not reused."""
    root = Path(snficon.workload.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def cache_key(source_sha256: str, conversion: TraceConversion) -> str:
    """The cache entry of a trace's conversion: its SHA-256, the options, the converter."""
    text = json.dumps({"source_sha256": source_sha256, "convert": conversion.as_dict(),
                       "converter_sha256": converter_digest()}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:KEY_LENGTH]


def converted_workload(source: str | Path, source_sha256: str, conversion: TraceConversion,
                       cache_dir: str | Path) -> ConvertedWorkload:
    """The Batsim workload converted from the trace ``source`` (whose SHA-256 the campaign
    computed: ``source_sha256``) with ``conversion``, from the cache or made into it.

    Raises InputError when the trace no longer has that SHA-256 (it changed
    since the campaign started) or does not convert.
    """
    key = cache_key(source_sha256, conversion)
    folder = Path(cache_dir) / CONVERSIONS
    final = folder / key
    found = _entry(final, key)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    with _locked(folder / f".{key}.lock"):
        found = _entry(final, key)
        if found is not None:  # converted by another worker while this one waited
            return found
        work = folder / f".tmp-{key}-{socket.gethostname()}-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            record = _convert(Path(source), source_sha256, conversion, key, work)
            try:
                os.replace(work, final)
            except OSError:  # another worker published it first (no lock here): keep theirs
                found = _entry(final, key)
                if found is None:
                    raise
                shutil.rmtree(work, ignore_errors=True)
                return dataclasses.replace(found, converted_here=True)  # converted in vain
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise
    return ConvertedWorkload(path=final / WORKLOAD, key=key, converted_here=True, record=record)


def _convert(source: Path, source_sha256: str, conversion: TraceConversion, key: str,
             work: Path) -> dict[str, Any]:
    """Convert into ``work``; write and return the record."""
    actual = _file_digest(source)
    if actual != source_sha256:
        raise InputError(f"{source}: the trace changed since the campaign started (SHA-256 "
                         f"{actual[:12]}..., expected {source_sha256[:12]}...): run the "
                         "campaign again")
    report = convert_trace(source, work / WORKLOAD, max_jobs=conversion.jobs,
                           nb_res=conversion.nb_res, drop_oversized=conversion.drop_oversized,
                           options=conversion.batsim_options(), skip=conversion.skip)
    record = {"cache_key": key, "source": str(source), "source_sha256": source_sha256,
              "convert": conversion.as_dict(), "converter_sha256": converter_digest(),
              "jobs": report.read.kept, "nb_res": report.read.nb_res,
              "report": report.lines()[:-1],  # all but "output: <scratch path>"
              "converted_on": socket.gethostname(),
              "converted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    atomic_write_text(work / RECORD, json.dumps(record, sort_keys=True, indent=2) + "\n")
    return record


def _entry(final: Path, key: str) -> ConvertedWorkload | None:
    """The published entry at ``final`` (None when absent or unreadable)."""
    try:
        record = json.loads((final / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (final / WORKLOAD).is_file():
        return None
    return ConvertedWorkload(path=final / WORKLOAD, key=key, converted_here=False,
                             record=record)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing); the kernel drops it when the
    process dies, so a killed worker leaves no stale lock. No lock where fcntl is absent."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the atomic rename alone keeps the entry whole
        yield
        return
    with open(path, "a+b") as handle:
        fcntl.lockf(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.lockf(handle, fcntl.LOCK_UN)


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_run_record(converted: ConvertedWorkload, folder: str | Path) -> Path:
    """``folder/conversion.json``: which cache entry a run read, and whether it made it."""
    record = {**converted.record, "converted_by_this_run": converted.converted_here}
    return atomic_write_text(Path(folder) / RECORD,
                             json.dumps(record, sort_keys=True, indent=2) + "\n")
