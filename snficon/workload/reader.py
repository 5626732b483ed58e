"""Load and validate a Batsim JSON workload.

Errors name the file, the job or profile and the bad value. A job larger than
the platform is valid input (the scheduler rejects it); a ``delay`` of 0 is not
(Batsim refuses it at load time), nor is a profile this project cannot run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Container
from pathlib import Path
from typing import Any

from snficon.errors import InputError, UnsupportedError
from snficon.workload.limits import check_time
from snficon.workload.model import (
    PROFILE_DELAY,
    PROFILE_PARALLEL_HOMOGENEOUS,
    SUPPORTED_PROFILE_TYPES,
    JobSpec,
    Profile,
    Workload,
)


def _number(value: Any, where: str, field_name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"{where}: '{field_name}' is not a number: {value!r}")
    if not math.isfinite(value):
        raise InputError(f"{where}: '{field_name}' is not finite: {value!r}")
    return float(value)


def parse_profile(name: str, raw: Any, source: str) -> Profile:
    """Validate the profile ``name`` of the file ``source`` (its decoded JSON ``raw``)."""
    where = f"{source}: profile {name!r}"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: is not a JSON object")
    kind = raw.get("type")
    if kind is None:
        raise InputError(f"{where}: missing field 'type'")
    if kind not in SUPPORTED_PROFILE_TYPES:
        raise UnsupportedError(
            f"{where}: profile type {kind!r} is not supported "
            f"(supported: {', '.join(SUPPORTED_PROFILE_TYPES)})")
    if kind == PROFILE_DELAY:
        if "delay" not in raw:
            raise InputError(f"{where}: missing field 'delay'")
        delay = _number(raw["delay"], where, "delay")
        if delay <= 0:
            raise InputError(f"{where}: 'delay' must be positive (Batsim refuses {delay!r})")
        check_time(delay, where, "delay")
        return Profile(name=name, type=kind, delay_s=delay, raw=raw)
    for key in ("cpu", "com"):
        if key not in raw:
            raise InputError(f"{where}: missing field {key!r}")
    cpu = _number(raw["cpu"], where, "cpu")
    com = _number(raw["com"], where, "com")
    if cpu < 0:
        raise InputError(f"{where}: 'cpu' must be >= 0, got {cpu!r}")
    if com != 0:
        raise UnsupportedError(
            f"{where}: {PROFILE_PARALLEL_HOMOGENEOUS} with com={com!r}: only com = 0 is supported")
    return Profile(name=name, type=kind, cpu_flops=cpu, raw=raw)


def parse_job(raw: Any, index: int, profiles: Container[str], source: str) -> JobSpec:
    """Validate job number ``index`` of the file ``source`` (its decoded JSON ``raw``);
    its profile must be one of ``profiles`` (names)."""
    if not isinstance(raw, dict):
        raise InputError(f"{source}: job #{index} is not a JSON object")
    if "id" not in raw:
        raise InputError(f"{source}: job #{index}: missing field 'id'")
    job_id = raw["id"]
    where = f"{source}: job {job_id!r}"
    for key in ("subtime", "res", "profile"):
        if key not in raw:
            raise InputError(f"{where}: missing field {key!r}")
    subtime = _number(raw["subtime"], where, "subtime")
    if subtime < 0:
        raise InputError(f"{where}: 'subtime' is negative: {subtime!r}")
    check_time(subtime, where, "subtime")
    res = raw["res"]
    if isinstance(res, bool) or not isinstance(res, int):
        if isinstance(res, float) and res.is_integer():
            res = int(res)
        else:
            raise InputError(f"{where}: 'res' is not an integer: {raw['res']!r}")
    if res <= 0:
        raise InputError(f"{where}: 'res' must be at least 1, got {res}")
    profile = raw["profile"]
    if profile not in profiles:
        raise InputError(f"{where}: profile {profile!r} does not exist")
    walltime = _number(raw.get("walltime", -1), where, "walltime")
    if walltime <= 0 and walltime != -1:
        raise InputError(f"{where}: 'walltime' must be positive or -1, got {walltime!r}")
    check_time(walltime, where, "walltime")
    reqtime = None
    if "reqtime" in raw:
        reqtime = _number(raw["reqtime"], where, "reqtime")
        if reqtime < 0:
            raise InputError(f"{where}: 'reqtime' is negative: {reqtime!r}")
        check_time(reqtime, where, "reqtime")
    return JobSpec(id=str(job_id), subtime=subtime, res=res, profile=profile,
                   walltime=walltime, reqtime=reqtime, raw=raw)


def parse_workload(document: Any, source: str) -> Workload:
    """Validate a decoded workload document (see :func:`read_workload`)."""
    if not isinstance(document, dict):
        raise InputError(f"{source}: the workload is not a JSON object")
    for key in ("jobs", "profiles"):
        if key not in document:
            raise InputError(f"{source}: missing top-level field {key!r}")
    if not isinstance(document["profiles"], dict):
        raise InputError(f"{source}: 'profiles' is not a JSON object")
    if not isinstance(document["jobs"], list):
        raise InputError(f"{source}: 'jobs' is not a JSON array")
    nb_res = document.get("nb_res")
    if nb_res is not None and (isinstance(nb_res, bool) or not isinstance(nb_res, int)
                               or nb_res <= 0):
        raise InputError(f"{source}: 'nb_res' is not a positive integer: {nb_res!r}")
    profiles = {name: parse_profile(name, raw, source)
                for name, raw in document["profiles"].items()}
    jobs = [parse_job(raw, i, profiles, source) for i, raw in enumerate(document["jobs"])]
    seen: set[str] = set()
    for job in jobs:
        if job.id in seen:
            raise InputError(f"{source}: job id {job.id!r} appears twice")
        seen.add(job.id)
    jobs.sort(key=lambda job: job.subtime)
    return Workload(source=source, nb_res=nb_res, jobs=tuple(jobs), profiles=profiles)


def read_workload(path: str | Path, *,
                  parse_float: Callable[[str], float] = float) -> Workload:
    """Load a Batsim JSON workload file (Batsim's ``-w``) and validate it.

    ``parse_float`` turns the text of a JSON number with a fraction or an
    exponent into a double: Python's correctly rounded reading by default. The
    embedded engine passes Batsim's own reading (rapidjson's default parser),
    which is a few ulps off it for some numbers of 16 or 17 significant digits,
    so that the engine simulates the very submission times, walltimes and
    amounts of work Batsim does.
    """
    source = str(path)
    try:
        with open(path, encoding="utf-8") as handle:
            document = json.load(handle, parse_float=parse_float)
    except FileNotFoundError:
        raise InputError(f"{source}: workload file not found") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{source}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{source}: not UTF-8 text: byte 0x{exc.object[exc.start]:02x} at "
                         f"offset {exc.start} ({exc.reason})") from None
    except RecursionError:
        raise InputError(f"{source}: JSON nested too deeply to be a workload") from None
    except ValueError as exc:  # a number beyond what Python reads (an integer of 4,300 digits)
        raise InputError(f"{source}: unreadable JSON value: {exc}") from None
    return parse_workload(document, source)
