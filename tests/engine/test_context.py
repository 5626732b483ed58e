"""What the actors share (``context``): the tracers' energy and machine-state rows."""

from __future__ import annotations

from pathlib import Path

import pytest
from procset import ProcSet

from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine

from .conftest import TEST_MODEL, read_rows, write_workload
from .schedulers_for_tests import OneShot


def test_energy_total_matches_power_times_time(platform4: Path, tmp_path: Path):
    """One busy job and one switch-off, worked out by hand from the model's wattages."""
    profiles = {"c20": {"type": "parallel_homogeneous", "cpu": 20e9, "com": 0}}
    workload = write_workload(tmp_path / "w.json", [
        {"id": 1, "subtime": 0, "res": 1, "profile": "c20"}], profiles)

    def start_and_sleep(bs, job):
        job.allocation = ProcSet(0)
        bs.execute_jobs([job])
        bs.set_resource_state(ProcSet(3), 1)

    engine = build_engine(platform4, [workload])
    run_in_process(engine, OneShot(start_and_sleep))
    engine.outputs().write(tmp_path / "out")
    energy = read_rows(tmp_path / "out_consumed_energy.csv")
    m = TEST_MODEL
    # Ends at t=20 (job end; the switch ended at t=8).
    expected = 20 * m.busy_w + 2 * 20 * m.idle_w + 8 * m.off_w + 12 * m.sleep_w
    assert energy[-1]["time"] == "20.000000"
    assert float(energy[-1]["energy"]) == pytest.approx(expected, rel=1e-12)
    states = read_rows(tmp_path / "out_machine_states.csv")
    assert states[-1] == {"time": "20", "nb_sleeping": "1", "nb_switching_on": "0",
                          "nb_switching_off": "0", "nb_idle": "3", "nb_computing": "0"}
