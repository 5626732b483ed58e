"""Schedulers by name or file: what ``snficon run`` and the in-process engine instantiate.

A policy name of :data:`snficon.policy_table.POLICIES` gives its pybatsim
class (:func:`snficon.adapter.scheduler.scheduler_class`); a ``.py`` file is
loaded as ``pybatsim FILE`` would. ``pybatsim NAME`` finds the same classes
through the thin modules of the repository's ``schedulers/`` folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from batsim.batsim import BatsimScheduler

from snficon.adapter.scheduler import scheduler_class
from snficon.errors import InputError
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
        return instanciate_scheduler(spec, options)
    if spec not in POLICIES:
        raise InputError(f"unknown policy {spec!r} (known: {', '.join(POLICIES)}, "
                         "or a path to a pybatsim scheduler .py file)")
    try:
        return scheduler_class(spec)(options)
    except InputError as exc:
        raise InputError(f"policy {spec}: {exc}") from None
