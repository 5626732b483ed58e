"""Transition jitter (not Batsim's model): seeded switch durations, refused where Batsim is."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from procset import ProcSet

from snficon.cli import main
from snficon.drivers.batsim_cli import main as batsim_main
from snficon.drivers.inprocess import run_in_process
from snficon.drivers.session import build_engine
from snficon.drivers.transcript import Transcript
from snficon.engine.jitter import TransitionJitter
from snficon.errors import InputError

from .conftest import TEST_MODEL, write_workload
from .schedulers_for_tests import OneShot


def _switch_times(platform4: Path, tmp_path: Path, **jitter) -> list[float]:
    """Switch off machines 1-3 at t=0 (one request) then machine 0 alone; RSC times."""
    workload = write_workload(tmp_path / "w.json", [{"id": 1, "subtime": 0, "res": 1}])

    def sleep_all(bs, job):
        bs.reject_jobs([job])
        bs.set_resource_state(ProcSet((1, 3)), 1)
        bs.set_resource_state(ProcSet(0), 1)

    engine = build_engine(platform4, [workload], **jitter)
    transcript = Transcript()
    run_in_process(engine, OneShot(sleep_all), transcript)
    return [e["timestamp"] for _, m in transcript.entries for e in m["events"]
            if e["type"] == "RESOURCE_STATE_CHANGED"]


def test_without_jitter_switches_last_their_mean(platform4: Path, tmp_path: Path):
    assert _switch_times(platform4, tmp_path) == [TEST_MODEL.off_s, TEST_MODEL.off_s]


def test_jittered_switches_follow_the_seeded_draws(platform4: Path, tmp_path: Path):
    """The durations are mean + 0.1 mean z, z drawn in the order machines start switching
    (1, 2, 3, then 0); a request is acknowledged when its last machine is done."""
    z = np.random.default_rng(42).standard_normal(4)
    off = TEST_MODEL.off_s * (1 + 0.1 * z)
    expected = sorted([max(off[:3]), off[3]])
    times = _switch_times(platform4, tmp_path, transition_jitter=0.1, seed=42)
    assert sorted(times) == pytest.approx(expected, abs=1e-6)  # six decimals on the wire
    assert _switch_times(platform4, tmp_path, transition_jitter=0.1, seed=42) == times
    assert _switch_times(platform4, tmp_path, transition_jitter=0.1, seed=7) != times


def test_jitter_values_are_checked():
    with pytest.raises(InputError, match="in \\[0, 1\\)"):
        TransitionJitter(1.5, 42)
    with pytest.raises(InputError, match="seed"):
        TransitionJitter(0.1, -1)
    assert TransitionJitter(0.9, 1).duration(10.0) >= 0.1  # clipped at 1 % of the mean


def test_run_command_records_the_jitter(platform4: Path, tmp_path: Path, capsys):
    workload = write_workload(tmp_path / "w.json", [{"id": i, "subtime": 100.0 * i, "res": 1}
                                                    for i in range(1, 6)])
    base = ["run", "--platform", str(platform4), "--workload", str(workload),
            "--policy", "snfIpm", "--set", "timeout=30"]
    assert main([*base, "--transition-jitter", "0.1", "--seed", "42",
                 "-o", str(tmp_path / "j")]) == 0
    metrics = json.loads((tmp_path / "j" / "metrics.json").read_text())
    assert (metrics["transition_jitter"], metrics["seed"]) == (0.1, 42)
    assert "not Batsim's model" in capsys.readouterr().out
    assert main([*base, "-o", str(tmp_path / "plain")]) == 0
    assert "transition_jitter" not in json.loads((tmp_path / "plain" / "metrics.json")
                                                 .read_text())
    code = main([*base, "--transition-jitter", "0.1", "--seed", "42", "--engine", "zmq",
                 "-o", str(tmp_path / "z")])
    assert code != 0 and "outside Batsim's model" in capsys.readouterr().err
    code = main([*base, "--transition-jitter", "0.1", "-o", str(tmp_path / "n")])
    assert code != 0 and "--seed" in capsys.readouterr().err


def test_snficon_batsim_refuses_the_jitter(capsys):
    with pytest.raises(SystemExit) as caught:
        batsim_main(["-p", "p.xml", "-w", "w.json", "--transition-jitter", "0.1"])
    assert caught.value.code == 2
    assert "not Batsim's model" in capsys.readouterr().err
