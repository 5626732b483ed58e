"""Run folders: a done run is never replaced, whatever publishes after it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from snficon.campaign.config import read_campaign
from snficon.campaign.expand import expand, make_specs
from snficon.campaign.runs import (
    METRICS,
    clean_scratch,
    execute,
    record_failure,
    run_status,
)


def test_a_done_run_is_not_replaced_by_a_late_failure_record(tiny_campaign: Path,
                                                              tmp_path: Path):
    """E.g. a worker of an interrupted campaign dying after a resumed one finished the run."""
    spec = make_specs(expand(read_campaign(tiny_campaign)).plans, tmp_path / "runs")[0]
    folder = execute(spec)
    assert run_status(folder) == "done"
    metrics = (folder / METRICS).read_bytes()
    assert record_failure(spec, "BrokenProcessPool: a worker died") == folder
    assert run_status(folder) == "done" and not (folder / "error.txt").exists()
    assert (folder / METRICS).read_bytes() == metrics
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [spec.run_id]  # no scratch left


def test_scratch_cleaning_removes_dead_and_own_folders_but_not_a_live_process(tmp_path: Path):
    """Scratch folders of a gone process and of the cleaning process itself (none of its
    runs is in progress when it cleans) are removed; another live process's are kept."""
    host = socket.gethostname()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True)
        names = {pid: f".tmp-{'0' * 16}-{host}-{pid}" for pid in
                 (int(dead.stdout), os.getpid(), live.pid)}
        for name in names.values():
            (tmp_path / name).mkdir()
        assert clean_scratch(tmp_path) == 2
        assert [p.name for p in tmp_path.iterdir()] == [names[live.pid]]
    finally:
        live.kill()
        live.wait()
