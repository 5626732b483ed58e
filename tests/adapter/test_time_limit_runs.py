"""The time-limit layer end to end: KILL_JOB through the adapter and the embedded engine.

Four nodes; jobs a, b, c checkpoint every 420 s with limit 1440 s, d does not
checkpoint (limit 500 s), e (checkpointing) waits for the first free node.
All would run 5000 s (d 900 s). Under the baseline d is killed at 500, e starts
then, a, b, c are killed at 1440 and e at 500 + 1440 = 1940: Batsim reports
COMPLETED_KILLED for all, the metrics count 5 TIMEOUTs and a tail of 4 x 180 =
720 node-s (3 checkpoints each). Early cancellation (polls every 20 s, on the
checkpoints here) cancels a, b, c at 1260 and e at 500 + 1260 = 1760: no tail.
Extension cancels them after their 4th checkpoint, at 1680 and 2180.
"""

from __future__ import annotations

import csv

import pytest

from snficon.analysis.time_limits import time_limit_metrics
from snficon.drivers.session import simulate_in_process, simulate_with_pybatsim
from snficon.platform.generate import render_platform, write_platform
from tests.engine.conftest import TEST_MODEL, write_workload

CKPT = {"reqtime": 1440, "checkpoint_interval": 420}


@pytest.fixture
def platform4(tmp_path):
    """Four nodes of the engine tests' model (their idle timers outlast the runs)."""
    return write_platform(tmp_path / "p4.xml", render_platform(TEST_MODEL, 4))


def _workload(tmp_path):
    jobs = [{"id": name, "subtime": 0, "res": 1, "profile": "long", **CKPT} for name in "abc"]
    jobs.append({"id": "d", "subtime": 0, "res": 1, "profile": "short", "reqtime": 500})
    jobs.append({"id": "e", "subtime": 0, "res": 1, "profile": "long", **CKPT})
    return write_workload(tmp_path / "w.json", jobs, {
        "long": {"type": "delay", "delay": 5000}, "short": {"type": "delay", "delay": 900}})


def _ends(prefix):
    with open(f"{prefix}_jobs.csv", newline="") as stream:
        return {row["job_id"]: (row["final_state"], float(row["finish_time"]))
                for row in csv.DictReader(stream)}


def _run(tmp_path, platform, tl_policy, engine="inprocess"):
    workload = _workload(tmp_path)
    prefix = tmp_path / f"{tl_policy}-{engine}" / "out"
    prefix.parent.mkdir()
    options = {"platform": str(platform), "layers": ["time-limits"], "tl_policy": tl_policy}
    simulate = simulate_in_process if engine == "inprocess" else simulate_with_pybatsim
    simulate(platform, [workload], "fcfsbIpm", options, export_prefix=prefix)
    return prefix, workload


@pytest.mark.parametrize(("tl_policy", "ends", "tail", "counts"), [
    ("baseline", {"a": 1440, "b": 1440, "c": 1440, "d": 500, "e": 1940}, 720.0, (5, 0, 0)),
    ("early-cancel", {"a": 1260, "b": 1260, "c": 1260, "d": 500, "e": 1760}, 0.0, (1, 4, 0)),
    ("extend", {"a": 1680, "b": 1680, "c": 1680, "d": 500, "e": 2180}, 0.0, (1, 0, 4)),
])
def test_kills_reach_the_engine_and_the_metrics_read_them(tmp_path, platform4, tl_policy,
                                                          ends, tail, counts):
    prefix, workload = _run(tmp_path, platform4, tl_policy)
    assert _ends(prefix) == {job: ("COMPLETED_KILLED", float(t)) for job, t in ends.items()}
    metrics = time_limit_metrics(prefix, [workload])
    assert (metrics.jobs_timeout, metrics.jobs_early_cancelled, metrics.jobs_extended) == counts
    assert metrics.tail_waste_node_s == pytest.approx(tail, abs=1e-3)
    assert metrics.checkpoints == (12 if tl_policy != "extend" else 16)


def test_the_same_kills_over_zeromq(tmp_path, platform4):
    """The layer in a pybatsim process talking to snficon-batsim: the same output file."""
    in_process, _ = _run(tmp_path, platform4, "hybrid")
    over_zmq, _ = _run(tmp_path, platform4, "hybrid", engine="zmq")
    assert _ends(over_zmq) == _ends(in_process)
    assert (tmp_path / "hybrid-zmq" / "out_jobs.csv").read_text() == (
        tmp_path / "hybrid-inprocess" / "out_jobs.csv").read_text()
