"""Read the paper authors' SPARS JSON workloads (SPEC section 4).

``{"nb_res": N, "jobs": [{"job_id", "res", "subtime", "reqtime", "runtime",
...}]}``: ``nb_res`` is optional, other job fields (``profile``, ``user_id``)
are ignored. Times are kept as they are (no rebasing: the Markovian file's
first job arrives after one gap), unless kept records are skipped: then they
are made relative to the last skipped job's submission, as for SWF. The
keep/drop rules are the SWF ones (:mod:`snficon.workload.selection`); a
missing or negative ``reqtime`` becomes the runtime.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from snficon.errors import InputError
from snficon.workload.selection import JobSelector
from snficon.workload.textio import read_text
from snficon.workload.trace import ReadReport, Trace

_REQUIRED = ("job_id", "res", "subtime", "runtime")


def _number(raw: dict[str, Any], key: str, where: str) -> float:
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InputError(f"{where}: {key!r} is not a finite number: {value!r}")
    return float(value)


def _integer(raw: dict[str, Any], key: str, where: str) -> int:
    value = _number(raw, key, where)
    if not value.is_integer():
        raise InputError(f"{where}: {key!r} is not an integer: {raw[key]!r}")
    return int(value)


def _load(path: Path) -> dict[str, Any]:
    text = read_text(path)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: malformed JSON at line {exc.lineno} column {exc.colno}: "
                         f"{exc.msg}") from None
    if not isinstance(document, dict) or not isinstance(document.get("jobs"), list):
        raise InputError(f"{path}: not a SPARS workload (expected an object with a "
                         "'jobs' array)")
    return document


def read_spars(path: str | Path, *, max_jobs: int | None = None, nb_res: int | None = None,
               drop_oversized: bool = False, skip: int = 0) -> Trace:
    """Read the ``max_jobs`` kept jobs (all when None) after the first ``skip`` of a SPARS file.

    ``nb_res`` overrides the file's ``nb_res``; one of the two is required.
    Raises :class:`InputError` naming the file and the job for a missing or
    non-numeric field.
    """
    path = Path(path)
    document = _load(path)
    size, size_source = nb_res, "--nb-res"
    if size is None and document.get("nb_res") is not None:
        raw_size = document["nb_res"]
        if isinstance(raw_size, bool) or not isinstance(raw_size, int) or raw_size < 1:
            raise InputError(f"{path}: 'nb_res' is not a positive integer: {raw_size!r}")
        size, size_source = raw_size, "file's nb_res"
    if size is None:
        raise InputError(f"{path}: no 'nb_res' in the file; give the platform size "
                         "with --nb-res N")
    if size < 1:
        raise InputError(f"--nb-res must be at least 1, got {size}")
    selector = JobSelector(str(path), max_jobs=max_jobs, nb_res=size,
                           drop_oversized=drop_oversized, skip=skip)
    for index, raw in enumerate(document["jobs"]):
        where = f"{path}: job #{index}"
        if not isinstance(raw, dict):
            raise InputError(f"{where} is not a JSON object")
        if "job_id" in raw:
            where += f" (job_id {raw['job_id']!r})"
        for key in _REQUIRED:
            if key not in raw:
                raise InputError(f"{where}: missing field {key!r}")
        reqtime = _number(raw, "reqtime", where) if "reqtime" in raw else -1.0
        selector.offer(_integer(raw, "job_id", where), _integer(raw, "res", where),
                       _number(raw, "subtime", where), _number(raw, "runtime", where),
                       reqtime, where=where)
        if selector.full:
            break
    jobs = tuple(selector.kept)
    origin = 0.0
    if selector.skipped:
        origin = selector.origin()
        jobs = tuple(replace(job, subtime=job.subtime - origin) for job in jobs)
    report = ReadReport(source=str(path), format="spars", records=selector.records,
                        kept=len(jobs), dropped=dict(selector.dropped),
                        reqtime_missing=selector.reqtime_missing, nb_res=size,
                        nb_res_source=size_source, stopped_early=selector.full,
                        skipped=selector.skipped, origin_s=origin)
    return Trace(jobs=jobs, nb_res=size, report=report)
