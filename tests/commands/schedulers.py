"""Broken pybatsim schedulers written into a test's folder: one that crashes, one that hangs.

Both run one-node jobs on node 0 until the third job is submitted; then the
crashing one raises ``RuntimeError('scheduler bug')`` and the hanging one
writes the file named by its ``flag`` option and sleeps for ten minutes.
"""

from __future__ import annotations

import json
from pathlib import Path

_BODY = """\
import time
from pathlib import Path

from batsim.batsim import BatsimScheduler
from procset import ProcSet


class {name}(BatsimScheduler):
    def onJobSubmission(self, job):
        if job.id.endswith("!3"):
            {action}
        job.allocation = ProcSet(0)
        self.bs.execute_jobs([job])

    def onJobCompletion(self, job):
        pass
"""

CRASH = "raise RuntimeError('scheduler bug')"
HANG = "Path(self.options['flag']).write_text('hung')\n            time.sleep(600)"


def write_scheduler(folder: Path, kind: str) -> Path:
    """``folder/crasher.py`` (kind ``crash``) or ``folder/hanger.py`` (kind ``hang``)."""
    stem, action = {"crash": ("crasher", CRASH), "hang": ("hanger", HANG)}[kind]
    path = folder / f"{stem}.py"
    path.write_text(_BODY.format(name=stem.capitalize(), action=action))
    return path


def write_one_node_workload(path: Path, jobs: int = 5) -> Path:
    """``jobs`` one-node jobs of 10 s, one every 20 s, on a 4-node platform."""
    document = {"nb_res": 4, "profiles": {"d10": {"type": "delay", "delay": 10.0}},
                "jobs": [{"id": i, "subtime": 20.0 * i, "res": 1, "profile": "d10",
                          "walltime": -1} for i in range(1, jobs + 1)]}
    path.write_text(json.dumps(document))
    return path
