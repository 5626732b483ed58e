"""IPM's callbacks when a job outruns its request while another job waits for a wake-up.

SPEC 5: in the PSAS release map a running job's nodes are free at its start +
requested time while that lies ahead and never once it has passed, so the plan
changes with time alone, between two events. The authors' code is called
back, while a node sleeps, T_on before each running job's requested end
(option ``request_end_calls``, on by default): the plan made then sees the
jobs that outran their request and wakes a sleeping node in time. Without
those calls the wake waits for the next event.

The hand-made run (4 nodes, T_on = 32 s, T_off = 8 s, idle timeout 5 s):

- t = 0: A (2 nodes, requested 20 s, runs 200 s) and B (1 node, requested
  100 s, runs 100 s) start on nodes 0-2 (written here for FCFS: A on 0-1, B
  on 2; SNF starts B first, on node 0); node 3 stays idle.
- t = 5: node 3's timer expires, no job waits: it is switched off (asleep at 13).
- t = 15: W (2 nodes, requested 50 s, runs 10 s) arrives. Releases: nodes 0-1
  at 20 (A's requested end), node 2 at 100, node 3 at 15 + 32 = 47: W is
  planned at 20 on nodes 0-1, no wake. A then outruns its request (at 20).
- With the rule, the calls asked while node 3 sleeps are at 100 - 32 = 68
  (B's requested end; A's 20 - 32 is past). At 68: nodes 0-1 are never free,
  B's node is free at 100, node 3 at 68 + 32 = 100: W is planned at 100 on
  B's node and node 3, whose wake time 100 - 32 = 68 has come: it is woken at
  68 and is on at 100, when B ends: W starts at 100 (wait 85 s).
- Without it, nothing happens between 15 and B's end at 100. At 100: B's node
  is idle, node 3 free at 100 + 32 = 132: node 3 is woken at 100 and W
  starts at 132 (wait 117 s).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from snficon.cli import main
from snficon.platform.generate import NodeModel, render_platform, write_platform

MODEL = NodeModel("overrun", busy_w=200, idle_w=100, sleep_w=10,
                  off_s=8, off_w=50, on_s=32, on_w=150)


def _ids(allocation: str) -> set[int]:
    """The node ids of an ``allocated_resources`` field (``0 3``, ``1-2``)."""
    ids: set[int] = set()
    for part in allocation.split():
        low, _, high = part.partition("-")
        ids.update(range(int(low), int(high or low) + 1))
    return ids


def _run(tmp_path: Path, policy: str, rule: bool) -> dict[int, tuple[float, set[int]]]:
    """The hand-made run under ``policy``: each job's start and nodes."""
    platform = write_platform(tmp_path / "p.xml", render_platform(MODEL, 4))
    jobs = [{"id": 1, "subtime": 0.0, "res": 2, "reqtime": 20.0, "profile": "d200"},
            {"id": 2, "subtime": 0.0, "res": 1, "reqtime": 100.0, "profile": "d100"},
            {"id": 3, "subtime": 15.0, "res": 2, "reqtime": 50.0, "profile": "d10"}]
    for job in jobs:
        job["walltime"] = -1
    profiles = {f"d{d}": {"type": "delay", "delay": float(d)} for d in (200, 100, 10)}
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles}))
    folder = tmp_path / f"{policy}-{rule}"
    code = main(["run", "--platform", str(platform), "--workload", str(workload),
                 "--policy", policy, "--set", "timeout=5",
                 "--set", f"request_end_calls={str(rule).lower()}", "-o", str(folder)])
    assert code == 0
    with (folder / "out_jobs.csv").open() as f:
        return {int(row["job_id"]): (float(row["starting_time"]), _ids(row["allocated_resources"]))
                for row in csv.DictReader(f)}


@pytest.mark.parametrize("policy", ["snfIpm", "fcfsbIpm"])
def test_a_call_before_a_requested_end_wakes_the_node_the_overrun_leaves_needed(
        tmp_path: Path, policy: str):
    runs = _run(tmp_path, policy, rule=True)
    assert runs[1][0] == pytest.approx(0.0) and runs[2][0] == pytest.approx(0.0)
    start, nodes = runs[3]
    assert start == pytest.approx(100.0, abs=1e-4)  # woken at 100 - T_on = 68
    assert nodes == runs[2][1] | {3}  # B's node and the woken one


@pytest.mark.parametrize("policy", ["snfIpm", "fcfsbIpm"])
def test_without_the_calls_the_wake_waits_for_the_next_event(tmp_path: Path, policy: str):
    runs = _run(tmp_path, policy, rule=False)
    start, nodes = runs[3]
    assert start == pytest.approx(132.0, abs=1e-4)  # woken at B's end (100) + T_on
    assert nodes == runs[2][1] | {3}
