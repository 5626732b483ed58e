"""Read a Standard Workload Format trace (``.swf`` or ``.swf.gz``).

The Parallel Workloads Archive format: header lines start with ``;``
(``;  MaxProcs: 64``), every other non-blank line is one job of 18
whitespace-separated numbers, -1 meaning unknown.

The paper's conversion (SPEC section 4, paper section VI-B): job id = field 1,
``res`` = field 5 (allocated processors; processors are nodes), runtime =
field 4, reqtime = field 9, subtime = field 2 minus that of the first kept
job; records whose runtime or processor count is -1 are dropped
(:mod:`snficon.workload.selection`), and the first K kept records are the
jobs. On DAS2 FS1 this rule gives the paper's ``DAS2-fs1-0-3000.json``
exactly: its 3000 jobs are the first 3000 kept records (ids 1..3138; the 138
records left out all have runtime and processors -1), with every field equal.

Two points the rule leaves open, settled here: the submission-time origin is
the earliest kept submission (the first kept job's in a trace sorted by
submission time, as archive traces are), and a missing reqtime (-1) becomes
the runtime (counted in the report). With ``skip`` K the first K kept records
are passed over (the paper trains its RL baseline on the 1000 jobs after the
evaluated 3000) and the origin is the last skipped job's submission, so the
segment's first job arrives after its real gap (see
:meth:`~snficon.workload.selection.JobSelector.origin`); on DAS2 FS1, K = 3000
and 1000 jobs give the paper authors' ``DAS2-fs1-3001-4000.json``, every field
equal. The platform size is the header's
``MaxProcs``, else ``MaxNodes`` (``res`` counts processors, and DAS2 states
``MaxNodes: 32 (dual CPU)``, ``MaxProcs: 64``), unless ``nb_res`` is given.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from snficon.errors import InputError
from snficon.workload.selection import JobSelector
from snficon.workload.textio import iter_lines
from snficon.workload.trace import ReadReport, Trace

SWF_FIELDS = 18
_HEADER = re.compile(r"^;\s*(\w+)\s*:\s*(-?\d+)")
_SIZE_KEYS = ("MaxProcs", "MaxNodes")
#: Largest whole number a JSON reader keeps exactly (a double's 53-bit mantissa): job
#: numbers and sizes beyond it would be written as other numbers than the trace's.
LARGEST_EXACT = 2**53
# 0-based positions of the fields used (SWF numbers them from 1).
_ID, _SUBMIT, _RUN, _PROCS, _REQTIME = 0, 1, 3, 4, 8
_NAMES = {_ID: "job number", _SUBMIT: "submit time", _RUN: "run time",
          _PROCS: "allocated processors", _REQTIME: "requested time"}


def _header_size(header: dict[str, int]) -> tuple[int | None, str]:
    for key in _SIZE_KEYS:
        if header.get(key, 0) > 0:
            return header[key], f"SWF header {key}"
    return None, ""


def _header_number(text: str, path: Path, line: int) -> int:
    """A header value (``; MaxProcs: 128``) as an int; InputError when it is out of range."""
    if len(text.lstrip("-")) > 16 or abs(int(text)) > LARGEST_EXACT:
        raise InputError(f"{path}:{line}: header value too large (above 2^53): {_shown(text)}")
    return int(text)


def _resolve_nb_res(path: Path, explicit: int | None,
                    header: dict[str, int]) -> tuple[int, str]:
    if explicit is not None:
        if explicit < 1:
            raise InputError(f"--nb-res must be at least 1, got {explicit}")
        return explicit, "--nb-res"
    size, source = _header_size(header)
    if size is None:
        raise InputError(f"{path}: the SWF header gives neither MaxProcs nor MaxNodes; "
                         "give the platform size with --nb-res N")
    return size, source


def _shown(field: str, longest: int = 40) -> str:
    """``field`` quoted for a message, cut to ``longest`` characters."""
    return repr(field) if len(field) <= longest else f"{field[:longest]!r}... ({len(field)} chars)"


def _parse_record(line: str, where: str) -> tuple[int, int, float, float, float]:
    fields = line.split()
    if len(fields) != SWF_FIELDS:
        raise InputError(f"{where}: an SWF record has {SWF_FIELDS} fields, "
                         f"this line has {len(fields)}")
    values: dict[int, float] = {}
    for index in (_ID, _SUBMIT, _RUN, _PROCS, _REQTIME):
        try:
            values[index] = float(fields[index])
        except ValueError:
            raise InputError(f"{where}: field {index + 1} ({_NAMES[index]}) is not a number: "
                             f"{_shown(fields[index])}") from None
    for index in (_ID, _PROCS):
        if not values[index].is_integer():
            raise InputError(f"{where}: field {index + 1} ({_NAMES[index]}) is not an "
                             f"integer: {_shown(fields[index])}")
        if abs(values[index]) > LARGEST_EXACT:
            raise InputError(f"{where}: field {index + 1} ({_NAMES[index]}) is too large to "
                             f"be written exactly in JSON (above 2^53): {_shown(fields[index])}")
    return (int(values[_ID]), int(values[_PROCS]), values[_SUBMIT], values[_RUN],
            values[_REQTIME])


def read_swf(path: str | Path, *, max_jobs: int | None = None, nb_res: int | None = None,
             drop_oversized: bool = False, skip: int = 0) -> Trace:
    """Read the ``max_jobs`` kept jobs (all when None) after the first ``skip`` of an SWF trace.

    ``nb_res`` overrides the header's platform size (one of the two is
    required); with ``drop_oversized`` jobs larger than it are dropped and
    counted, otherwise they are kept (the scheduler rejects them). Raises
    :class:`InputError` naming the file and line of a malformed record.
    """
    path = Path(path)
    header: dict[str, int] = {}
    selector: JobSelector | None = None
    size, size_source = 0, ""
    for number, line in iter_lines(path):
        if line.startswith(";"):
            match = _HEADER.match(line)
            if match:
                header.setdefault(match.group(1), _header_number(match.group(2), path, number))
            continue
        if not line.strip():
            continue
        if selector is None:
            size, size_source = _resolve_nb_res(path, nb_res, header)
            selector = JobSelector(str(path), max_jobs=max_jobs, nb_res=size,
                                   drop_oversized=drop_oversized, skip=skip)
        where = f"{path}:{number}"
        selector.offer(*_parse_record(line, where), where=where)
        if selector.full:
            break
    if selector is None:
        size, size_source = _resolve_nb_res(path, nb_res, header)
        selector = JobSelector(str(path), max_jobs=max_jobs, nb_res=size,
                               drop_oversized=drop_oversized, skip=skip)
    origin = selector.origin()
    jobs = tuple(replace(job, subtime=job.subtime - origin) for job in selector.kept)
    report = ReadReport(source=str(path), format="swf", records=selector.records,
                        kept=len(jobs), dropped=dict(selector.dropped),
                        reqtime_missing=selector.reqtime_missing, nb_res=size,
                        nb_res_source=size_source, stopped_early=selector.full,
                        skipped=selector.skipped, origin_s=origin)
    return Trace(jobs=jobs, nb_res=size, report=report)
