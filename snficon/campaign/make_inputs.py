"""Make a campaign's missing inputs with the ``make`` commands its file gives
(``snficon campaign FILE --make-inputs``).

Each missing platform, workload or carbon signal is made in turn, in the order
the runs first use it, by running its ``make`` command with bash in the current
folder (the folder the missing-input message tells the user to run it from);
the command's own output goes to the terminal, after a progress line::

    [1/2] making workload checkpoints-773 (workloads/checkpoints-773.json): uv run ...
    [1/2] made workloads/checkpoints-773.json (4.2 s)

Nothing is run when an input has no ``make`` key: the usual missing-input
error lists them all. A command that fails, or that succeeds without writing
the file, stops the campaign before it starts.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Sequence
from typing import TextIO

from snficon.campaign.carbon_axis import SignalFile
from snficon.campaign.config import Campaign, InputFile
from snficon.campaign.errors import MissingInputError
from snficon.campaign.expand import RunPlan, check_inputs, missing_inputs, shown


def make_missing_inputs(campaign: Campaign, plans: Sequence[RunPlan], out: TextIO) -> int:
    """Run the ``make`` command of each input of ``plans`` not on disk; return how many.

    Raises MissingInputError (before running anything) when a missing input has no
    ``make`` command, and when a command fails or does not write its file.
    """
    missing = missing_inputs(plans)
    if any(item.make is None for item in missing):
        check_inputs(campaign, plans)  # lists every missing input and how to make it
    shell = shutil.which("bash") or "/bin/sh"
    for number, item in enumerate(missing, start=1):
        step = f"[{number}/{len(missing)}]"
        kind = _kind(campaign, item)
        print(f"{step} making {kind} {item.label} ({shown(item.path)}): {item.make}",
              file=out, flush=True)
        started = time.monotonic()
        done = subprocess.run([shell, "-c", item.make], check=False)
        if done.returncode != 0:
            raise MissingInputError(
                f"{campaign.source}: {kind} {item.label}: its make command failed (exit "
                f"{done.returncode}), so the campaign did not start: {item.make}")
        if not item.path.is_file():
            raise MissingInputError(
                f"{campaign.source}: {kind} {item.label}: its make command succeeded but "
                f"{shown(item.path)} is still missing (the command ran in the current "
                f"folder: run the campaign from the folder its paths are written for)")
        print(f"{step} made {shown(item.path)} ({time.monotonic() - started:.1f} s)",
              file=out, flush=True)
    return len(missing)


def _kind(campaign: Campaign, item: InputFile | SignalFile) -> str:
    """``platform``, ``workload`` or ``carbon signal``: which table names ``item``."""
    if any(entry.path == item.path for entry in campaign.platforms.values()):
        return "platform"
    if any(entry.path == item.path for entry in campaign.workloads.values()):
        return "workload"
    return "carbon signal"
