"""The schedulers users can name, mapped to their pybatsim classes.

``snficon run --policy NAME`` and the in-process engine look names up here;
``pybatsim NAME`` finds the same classes through the thin modules of the
repository's ``schedulers/`` folder.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from batsim.batsim import BatsimScheduler

from snficon.errors import InputError

#: Policy name -> "module:Class" of its pybatsim scheduler.
POLICIES: dict[str, str] = {
    "snfIpm": "snficon.adapter.baselines:SnfIpmScheduler",
    "fcfsbIpm": "snficon.adapter.baselines:FcfsbIpmScheduler",
    "snficon": "snficon.adapter.icon:SnficonScheduler",
    "snficon-ng": "snficon.adapter.icon:SnficonNgScheduler",
    "snficon-nf": "snficon.adapter.icon:SnficonNfScheduler",
    "snficon-ngnf": "snficon.adapter.icon:SnficonNgnfScheduler",
}

#: Policies that read the platform file (passed to them as the ``platform`` option).
NEEDS_PLATFORM = frozenset(POLICIES)

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
        raise InputError(f"unknown policy {spec!r} (known: {', '.join(sorted(POLICIES))}, "
                         "or a path to a pybatsim scheduler .py file)")
    module_name, class_name = POLICIES[spec].split(":")
    scheduler_class = getattr(importlib.import_module(module_name), class_name)
    try:
        return scheduler_class(options)
    except InputError:
        raise
    except ValueError as exc:
        raise InputError(f"policy {spec}: {exc}") from None
