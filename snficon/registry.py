"""Schedulers by name or file: what ``snficon run`` and the in-process engine instantiate.

A policy name of :data:`snficon.policy_table.POLICIES` gives its pybatsim
class (:func:`snficon.adapter.scheduler.scheduler_class`); a ``.py`` file is
loaded as ``pybatsim FILE`` would. ``pybatsim NAME`` finds the same classes
through the thin modules of the repository's ``schedulers/`` folder.
"""

from __future__ import annotations

import contextlib
import io
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from batsim.batsim import BatsimScheduler

from snficon.adapter.scheduler import scheduler_class
from snficon.errors import InputError, SchedulerCrashError
from snficon.policy_table import POLICIES

#: The folder holding ``schedulers/``, the package ``pybatsim NAME`` imports.
PROJECT_ROOT = Path(__file__).resolve().parents[1]


def load_scheduler(spec: str, options: dict[str, Any] | None = None) -> BatsimScheduler:
    """Instantiate a scheduler from a policy name of :data:`POLICIES` or a ``.py`` file.

    A file is loaded as ``pybatsim FILE`` would: its class is the file's name
    with a capital first letter.
    """
    options = dict(options or {})
    if spec.endswith(".py"):
        from batsim.tools.launcher import instanciate_scheduler

        if not Path(spec).is_file():
            raise InputError(f"{spec}: scheduler file not found")
        return _load_file(instanciate_scheduler, spec, options)
    if spec not in POLICIES:
        raise InputError(f"unknown policy {spec!r} (known: {', '.join(POLICIES)}, "
                         "or a path to a pybatsim scheduler .py file)")
    try:
        return scheduler_class(spec)(options)
    except InputError as exc:
        raise InputError(f"policy {spec}: {exc}") from None


def _load_file(instanciate: Callable[[str, dict[str, Any]], BatsimScheduler], spec: str,
               options: dict[str, Any]) -> BatsimScheduler:
    """pybatsim's loading of the file ``spec``, its failures as one-line errors.

    A syntax error, an exception while importing or building the class, and
    pybatsim's own exit when the file holds no class of the expected name all
    become :class:`SchedulerCrashError` (exit 6, as the same file fails under
    ``--engine zmq``), naming the file and, for an exception, where it rose; a
    ValueError (the scheduler refusing its options) becomes :class:`InputError`.
    """
    said = io.StringIO()
    try:
        with contextlib.redirect_stdout(said):
            return instanciate(spec, options)
    except SyntaxError as exc:
        raise SchedulerCrashError(
            f"the scheduler {spec} cannot be loaded: SyntaxError: {exc.msg} "
            f"({Path(exc.filename or spec).name}:{exc.lineno})") from None
    except SystemExit:  # pybatsim prints why (no class named after the file) and exits
        why = " ".join(said.getvalue().split()) or "pybatsim gave up loading it"
        raise SchedulerCrashError(f"the scheduler {spec} cannot be loaded: {why}") from None
    except Exception as exc:  # noqa: BLE001 -- the scheduler's own code, whatever it raises
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" in {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
        text = str(exc).splitlines()[0] if str(exc) else ""
        what = f"{type(exc).__name__}{': ' + text if text else ''}{where}"
        if isinstance(exc, ValueError):  # the scheduler refuses its options: bad input
            raise InputError(f"the scheduler {spec} refused its options: {what}") from exc
        raise SchedulerCrashError(f"the scheduler {spec} cannot be loaded: {what}") from exc
