"""Carbon metrics: a case worked out by hand, and a brute-force check on real runs.

The brute force shares nothing with :mod:`snficon.analysis.carbon`: it
rebuilds every node's power on a fine time grid from ``out_pstate_changes.csv``,
``out_jobs.csv``, the platform's wattages and the workload's profile types
(not from the energy file, nor from the jobs' energy), and multiplies it by
the signal sampled at the grid's midpoints.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from procset import ProcSet

from snficon.analysis.carbon import CARBON_KEYS, carbon_from_outputs
from snficon.analysis.metrics import metrics_from_outputs
from snficon.campaign.runs import write_run_metrics
from snficon.carbon.mapping import MappedSignal
from snficon.carbon.series import StepSeries
from snficon.carbon.signal import CarbonSignal, parse_instant, parse_signal
from snficon.drivers.session import simulate_in_process
from snficon.errors import InputError
from snficon.platform.generate import NodeModel, render_platform, write_platform
from snficon.platform.reader import read_platform
from tests.conftest import FCFS_SCHEDULER, REPO_ROOT

#: 200 W busy, 100 W idle; the timeout keeps both nodes on during the run.
MODEL = NodeModel("two", busy_w=200, idle_w=100, sleep_w=10, off_s=8, off_w=50, on_s=32,
                  on_w=150)
STEP_SIGNAL = ("timestamp_utc,gco2_per_kwh\n"
               "2023-03-01T00:00:00Z,100\n2023-03-01T01:00:00Z,300\n")


@pytest.fixture
def two_node_run(tmp_path: Path) -> Path:
    """Job 1: 1 node, 3000 s from 0; job 2 (submitted at 1800): 2 nodes, 3600 s from 3000."""
    platform = write_platform(tmp_path / "p2.xml", render_platform(MODEL, 2))
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 2, "jobs": [
        {"id": 1, "subtime": 0, "res": 1, "profile": "c3000", "walltime": -1},
        {"id": 2, "subtime": 1800, "res": 2, "profile": "c3600", "walltime": -1}], "profiles": {
        "c3000": {"type": "parallel_homogeneous", "cpu": 3000e9, "com": 0},
        "c3600": {"type": "parallel_homogeneous", "cpu": 3600e9, "com": 0}}}))
    simulate_in_process(platform, [workload], FCFS_SCHEDULER, {"timeout": 1e6},
                        export_prefix=tmp_path / "out")
    return tmp_path / "out"


def _step_signal(start: str, wrap: bool = True) -> MappedSignal:
    return MappedSignal(parse_signal(STEP_SIGNAL, "step.csv"), parse_instant(start), wrap)


class TestHandComputed:
    def test_two_nodes_step_signal(self, two_node_run: Path):
        """The module docstring's example: 4.74e8, 4.44e8 and 3e7 W s g/kWh."""
        m = metrics_from_outputs(two_node_run)
        assert m.makespan == 6600.0
        c = carbon_from_outputs(two_node_run, _step_signal("2023-03-01T00:00Z"))
        assert c.carbon_total_kg == pytest.approx(4.74e8 / 3.6e9, rel=1e-12)
        assert c.carbon_compute_kg == pytest.approx(4.44e8 / 3.6e9, rel=1e-12)
        assert c.carbon_wasted_kg == pytest.approx(3e7 / 3.6e9, rel=1e-9)

    def test_start_an_hour_later_wraps_round_the_signal(self, two_node_run: Path):
        """Start at 01:00: [0, 3600) is at 300, then the signal starts again at 100.

        Total (300*300*3000 + 400*300*600 + 400*100*3000) = 4.62e8; compute:
        job 1 200*300*3000 = 1.8e8, job 2 400*(300*600 + 100*3000) = 1.92e8.
        """
        c = carbon_from_outputs(two_node_run, _step_signal("2023-03-01T01:00Z"))
        assert c.carbon_total_kg == pytest.approx(4.62e8 / 3.6e9, rel=1e-12)
        assert c.carbon_compute_kg == pytest.approx(3.72e8 / 3.6e9, rel=1e-12)
        with pytest.raises(InputError, match="step.csv: simulated time .* wrapping is off"):
            carbon_from_outputs(two_node_run, _step_signal("2023-03-01T01:00Z", wrap=False))

    def test_constant_signal_is_energy_times_intensity(self, two_node_run: Path):
        m = metrics_from_outputs(two_node_run)
        flat = MappedSignal(CarbonSignal("flat", StepSeries(0.0, 1800.0, np.full(8, 250.0))),
                            0.0)
        c = carbon_from_outputs(two_node_run, flat)
        assert c.carbon_total_kg == pytest.approx(m.energy_total * 250 / 3.6e9, rel=1e-12)
        assert c.carbon_compute_kg == pytest.approx(m.energy_compute * 250 / 3.6e9, rel=1e-12)

    def test_metrics_json_gains_the_three_keys(self, two_node_run: Path, tmp_path: Path):
        path = tmp_path / "metrics.json"
        _, extra = write_run_metrics(two_node_run, None, path,
                                     carbon=_step_signal("2023-03-01T00:00Z"))
        written = json.loads(path.read_text())
        assert set(CARBON_KEYS) <= set(written) and set(CARBON_KEYS) <= set(extra)
        assert written["carbon_total_kg"] == pytest.approx(4.74e8 / 3.6e9, rel=1e-12)
        assert written["carbon_start"] == "2023-03-01T00:00:00Z"
        write_run_metrics(two_node_run, None, path)
        assert not set(CARBON_KEYS) & set(json.loads(path.read_text()))


def _pstate_timeline(path: Path, nodes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per node: the times of its pstate changes and the new pstates."""
    changes: list[list[tuple[float, int]]] = [[] for _ in range(nodes)]
    with open(path, newline="") as stream:
        for row in csv.DictReader(stream):
            for node in ProcSet.from_str(row["machine_id"]):
                changes[node].append((float(row["time"]), int(row["new_pstate"])))
    return [(np.array([t for t, _ in c]), np.array([p for _, p in c])) for c in changes]


def brute_force_carbon(prefix: Path, platform_xml: Path, workload_json: Path,
                       signal: MappedSignal, dt: float) -> tuple[float, float]:
    """(total, compute) kg on a grid of step ``dt``, midpoint rule, from the node states."""
    platform = read_platform(platform_xml)
    document = json.loads(workload_json.read_text())
    profiles = document["profiles"]
    job_profile = {str(j["id"]): j["profile"] for j in document["jobs"]}
    with open(f"{prefix}_jobs.csv", newline="") as stream:
        jobs = [row for row in csv.DictReader(stream) if row["final_state"] != "REJECTED"]
    end = max(float(row["finish_time"]) for row in jobs)
    edges = np.append(np.arange(0.0, end, dt), end)
    mids, widths = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    intensity = signal.at(mids)
    timeline = _pstate_timeline(Path(f"{prefix}_pstate_changes.csv"), platform.nb_nodes)
    total = np.zeros_like(mids)
    compute = np.zeros_like(mids)
    for host in platform.hosts:
        times, pstates = timeline[host.id]
        current = pstates[np.searchsorted(times, mids, side="right") - 1]
        sleep = host.sleep_states[0]
        watts = np.select(
            [current == 0, current == sleep.sleep, current == -2, current == -1],
            [host.pstates[0].watt_idle, host.pstates[sleep.sleep].watt_idle,
             host.pstates[sleep.switch_off].watt_busy, host.pstates[sleep.switch_on].watt_busy],
            np.nan)
        assert not np.isnan(watts).any()
        busy = np.zeros_like(mids)
        for row in jobs:
            if host.id in ProcSet.from_str(row["allocated_resources"]):
                kind = profiles[job_profile[row["job_id"]]]["type"]
                running = (mids >= float(row["starting_time"])) & (mids < float(row["finish_time"]))
                power = host.pstates[0].watt_busy if kind == "parallel_homogeneous" \
                    else host.pstates[0].watt_idle
                busy = np.where(running, power, busy)
        total += np.where(busy > 0, busy, watts)
        compute += busy
    scale = 3.6e9
    return (float(np.sum(total * intensity * widths) / scale),
            float(np.sum(compute * intensity * widths) / scale))


def _random_signal(seed: int, step: float, count: int) -> MappedSignal:
    """A signal with a new random value every ``step`` seconds, so timing matters."""
    values = np.random.default_rng(seed).uniform(20, 300, count)
    return MappedSignal(CarbonSignal("random", StepSeries(0.0, step, values)), 0.0)


class TestAgainstBruteForce:
    @pytest.mark.parametrize(("case", "step", "dt", "rel"), [
        ("energy4-compute", 7.0, 0.01, 1e-12), ("energy4-delay", 7.0, 0.01, 1e-12),
        ("aoba16-delay", 1800.0, 1.0, 1e-5)])
    def test_real_batsim_recordings(self, shared_dir: Path, case: str, step: float, dt: float,
                                    rel: float):
        """Runs of the real Batsim 4.2.1: its own output files, its platform and workload.

        energy4's events fall on the grid: agreement to rounding (measured
        1e-15). Batsim writes ``out_pstate_changes.csv`` times with six
        significant digits (``2531.43`` for 2531.427 s), so aoba16's state
        changes after 1e5 s are known to the second only and the brute force
        drifts by 1.6e-6 relative on the total (the same at dt = 0.1 s).
        """
        cases = shared_dir / "conformance" / "cases"
        spec = json.loads((cases / case / "case.json").read_text())
        signal = _random_signal(3, step, 400)
        prefix = cases / case / "out"
        c = carbon_from_outputs(prefix, signal)
        total, compute = brute_force_carbon(prefix, cases / spec["platform"],
                                            cases / spec["workload"], signal, dt)
        assert c.carbon_total_kg == pytest.approx(total, rel=rel)
        assert c.carbon_compute_kg == pytest.approx(compute, rel=rel)

    def test_embedded_run_on_taurus_with_the_gb_signal(self, shared_dir: Path, tmp_path: Path):
        """200 Markovian jobs on Taurus-64 under SNF-ICON (sleeps and wake-ups), GB 2023.

        The midpoint rule's error shrinks with the grid (measured: 8.8e-6 on
        the total at dt = 2 s, 6.4e-7 at 0.5 s; 1.4e-5 and 2.9e-6 on compute).
        """
        from snficon.campaign.runs import truncate_workload
        from snficon.carbon.mapping import map_signal

        workload = truncate_workload(REPO_ROOT / "workloads" / "markovian-3000.json", 200,
                                     tmp_path / "w.json")
        platform = REPO_ROOT / "platforms" / "taurus-64.xml"
        simulate_in_process(platform, [workload], "snficon",
                            {"platform": str(platform), "decisions": str(tmp_path / "d.csv")},
                            export_prefix=tmp_path / "out")
        signal = map_signal(shared_dir / "data" / "carbon" / "gb-neso-national-2023.csv",
                            "2023-10-19T07:10Z")  # runs across the October gap (filled)
        c = carbon_from_outputs(tmp_path / "out", signal)
        total, compute = brute_force_carbon(tmp_path / "out", platform, workload, signal, 1.0)
        assert c.carbon_total_kg == pytest.approx(total, rel=3e-5)
        assert c.carbon_compute_kg == pytest.approx(compute, rel=3e-5)
        assert 0 < c.carbon_wasted_kg < c.carbon_total_kg
