"""SPEC section 6 metrics, checked against values worked out by hand from the files.

The recorded cases are runs of the real Batsim 4.2.1 (``../shared``); the
synthetic case is a run of the embedded engine whose energy is computed here
from the node model's wattages.
"""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import fields
from pathlib import Path

import pytest

from snficon.analysis.batsim_outputs import read_energy_curve
from snficon.analysis.metrics import RunMetrics, metrics_from_outputs, write_metrics
from snficon.drivers.session import simulate_in_process
from snficon.errors import InputError
from snficon.platform.generate import NodeModel, render_platform, write_platform
from tests.conftest import FCFS_SCHEDULER

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CASES = SHARED / "conformance" / "cases"

#: Distinct power per state (W, s), as in the engine tests.
MODEL = NodeModel("test", busy_w=200, idle_w=100, sleep_w=10,
                  off_s=8, off_w=50, on_s=32, on_w=150)


@pytest.fixture
def cases() -> Path:
    if not CASES.is_dir():
        pytest.skip("../shared is absent: the recordings of real Batsim runs are not here")
    return CASES


def _schedule(case_dir: Path) -> dict[str, str]:
    with open(case_dir / "out_schedule.csv", newline="") as stream:
        return next(csv.DictReader(stream))


class TestRecordedRuns:
    def test_energy4_delay_by_hand(self, cases: Path):
        m = metrics_from_outputs(cases / "energy4-delay" / "out")
        # 11 jobs, job 6 (5 nodes on a 4-node platform) rejected.
        assert (m.jobs, m.jobs_rejected, m.jobs_killed, m.nodes) == (10, 1, 0, 4)
        # Waits 0,0,0,90,32,22,32,46,32,92.
        assert m.mean_wait == pytest.approx(346 / 10)
        assert m.max_wait == 92.0
        # Responses 30,50,100,110,72,22.5,47,61,92,97.
        assert m.mean_response == pytest.approx(681.5 / 10)
        # Slowdowns 1,1,1,110/20,72/40,22.5/0.5,47/15,61/15,92/60,97/5.
        slowdowns = [1, 1, 1, 110 / 20, 72 / 40, 22.5 / 0.5, 47 / 15, 61 / 15, 92 / 60, 97 / 5]
        assert m.mean_slowdown == pytest.approx(sum(slowdowns) / 10)
        assert m.makespan == 1097.0
        # Energy row at t=1097: 249125 J; jobs' consumed_energy sum to 78550 J.
        assert m.energy_total == pytest.approx(249125.0)
        assert m.energy_compute == pytest.approx(3000 + 5000 + 20000 + 8000 + 12000 + 50
                                                 + 3000 + 3000 + 24000 + 500)
        assert m.energy_wasted == pytest.approx(249125.0 - 78550.0)
        assert m.energy_wasted_to_end == pytest.approx(273375.0 - 78550.0)  # last row, t=1165
        assert m.ee == pytest.approx(78550.0 / 249125.0)
        # Node-seconds 30+50+2*100+4*20+3*40+0.5+2*15+2*15+4*60+5 = 785.5.
        assert m.utilization == pytest.approx(785.5 / (4 * 1097))

    def test_batsim_means_count_rejected_jobs_ours_do_not(self, cases: Path):
        """Batsim divides by all 11 jobs; SPEC 6 averages over the 10 that ran."""
        m = metrics_from_outputs(cases / "energy4-delay" / "out")
        schedule = _schedule(cases / "energy4-delay")
        assert float(schedule["mean_waiting_time"]) * 11 == pytest.approx(m.mean_wait * 10)

    def test_energy4_zero_leaves_zero_runtime_jobs_out_of_slowdown(self, cases: Path):
        m = metrics_from_outputs(cases / "energy4-zero" / "out")
        # Jobs 1 and 2 have no flops (1e-5 s); job 3 runs 3 s on one node without waiting.
        assert (m.jobs, m.mean_wait, m.max_wait, m.makespan) == (3, 0.0, 0.0, 8.0)
        assert m.mean_slowdown == 1.0
        assert m.mean_response == pytest.approx((1e-5 + 1e-5 + 3) / 3)
        assert m.utilization == pytest.approx(3 / (4 * 8))
        # 400 W for 5 s, then one node busy (200 W) and three idle for 3 s.
        assert m.energy_total == pytest.approx(400 * 5 + 500 * 3)
        assert m.energy_compute == pytest.approx(600.0)
        assert m.energy_wasted_to_end == pytest.approx(27390.0 - 600.0)

    def test_zero_runtime_job_that_waited_is_not_in_the_slowdown(self, cases: Path,
                                                                 tmp_path: Path):
        """Job 2 of energy4-zero made to wait 2 s: counted, its slowdown would be 2e5."""
        source = cases / "energy4-zero"
        for suffix in ("schedule", "consumed_energy"):
            shutil.copy(source / f"out_{suffix}.csv", tmp_path / f"out_{suffix}.csv")
        text = (source / "out_jobs.csv").read_text()
        text = text.replace("COMPLETED_SUCCESSFULLY,5.000000,0.000010,5.000010",
                            "COMPLETED_SUCCESSFULLY,7.000000,0.000010,7.000010")
        (tmp_path / "out_jobs.csv").write_text(text)
        m = metrics_from_outputs(tmp_path / "out")
        assert m.max_wait == 2.0
        assert m.mean_slowdown == 1.0

    @pytest.mark.parametrize("case", ["energy4-delay", "energy4-compute", "energy4-zero",
                                      "aoba16-delay"])
    def test_utilization_agrees_with_batsim_time_computing(self, cases: Path, case: str):
        m = metrics_from_outputs(cases / case / "out")
        schedule = _schedule(cases / case)
        assert m.makespan == float(schedule["makespan"])
        assert m.utilization * m.nodes * m.makespan == pytest.approx(
            float(schedule["time_computing"]), abs=1e-6)

    def test_energy_before_the_first_row_counts_from_zero(self, cases: Path):
        """aoba16's first energy row is at the first submission, 636.776 s, 16 x 600 W idle.

        Batsim's ``consumed_joules`` starts there; the paper's window starts at 0.
        """
        m = metrics_from_outputs(cases / "aoba16-delay" / "out")
        consumed = float(_schedule(cases / "aoba16-delay")["consumed_joules"])
        assert m.energy_total == pytest.approx(consumed + 16 * 600 * 636.776, rel=1e-12)


class TestInterpolation:
    def test_between_two_recorded_rows(self, cases: Path):
        curve = read_energy_curve(cases / "energy4-delay" / "out_consumed_energy.csv")
        # Rows (1097 s, 249125 J) and (1152 s, 271125 J): 400 W in between.
        assert curve.at(1100.0) == pytest.approx(249125.0 + 3 * 400)

    def test_rows_sharing_a_time_and_the_file_range(self, tmp_path: Path):
        path = tmp_path / "e.csv"
        path.write_text("time,energy,event_type,wattmin,epower\n0,0,s,0,NA\n10,1000,e,0,100\n"
                        "10,1500,p,0,NA\n20,2500,p,0,100\n")
        curve = read_energy_curve(path)
        assert curve.at(10.0) == 1500.0  # the last row with that time
        assert curve.at(5.0) == pytest.approx(500.0)
        assert curve.at(15.0) == pytest.approx(2000.0)
        with pytest.raises(InputError, match="e.csv"):
            curve.at(21.0)


class TestEmbeddedEngine:
    def test_energy_matches_power_times_time(self, tmp_path: Path):
        """Two jobs under ``fcfs`` (timeout 20 s), energy from MODEL's wattages by hand.

        Job 1: 2 nodes, 20 s of computing from t=0 (200 W each); job 2: 1 node,
        a 10 s delay from t=5 (a delay job draws idle power, 100 W); node 3 idle.
        """
        platform = write_platform(tmp_path / "p4.xml", render_platform(MODEL, 4))
        workload = tmp_path / "w.json"
        workload.write_text(json.dumps({"nb_res": 4, "jobs": [
            {"id": 1, "subtime": 0, "res": 2, "profile": "c20", "walltime": -1},
            {"id": 2, "subtime": 5, "res": 1, "profile": "d10", "walltime": -1}], "profiles": {
            "c20": {"type": "parallel_homogeneous", "cpu": 20e9, "com": 0},
            "d10": {"type": "delay", "delay": 10.0}}}))
        simulate_in_process(platform, [workload], FCFS_SCHEDULER, {"timeout": 20},
                            export_prefix=tmp_path / "out")
        m = metrics_from_outputs(tmp_path / "out")
        busy, idle = MODEL.busy_w, MODEL.idle_w
        assert m.makespan == 20.0
        assert m.energy_total == pytest.approx(2 * busy * 20 + 2 * idle * 20)
        assert m.energy_compute == pytest.approx(2 * busy * 20 + idle * 10)
        assert m.energy_wasted == pytest.approx(2 * idle * 20 - idle * 10)
        assert m.utilization == pytest.approx((2 * 20 + 10) / (4 * 20))
        # After t=20 each node's timer expires (node 3 at 20, node 2 at 35, nodes 0-1
        # at 40), then it switches off for 8 s and sleeps until the last one does (48).
        off, sleep = MODEL.off_s * MODEL.off_w, MODEL.sleep_w
        after = (off + 20 * sleep) + (15 * idle + off + 5 * sleep) + 2 * (20 * idle + off)
        assert m.energy_wasted_to_end == pytest.approx(m.energy_wasted + after)
        curve = read_energy_curve(tmp_path / "out_consumed_energy.csv")
        # Between the rows at t=5 and t=15: two busy nodes and two at idle power.
        assert curve.at(10.0) == pytest.approx(2 * busy * 10 + 2 * idle * 10)


class TestFiles:
    def _copy(self, cases: Path, tmp_path: Path, *suffixes: str) -> Path:
        for suffix in suffixes:
            shutil.copy(cases / "energy4-delay" / f"out_{suffix}.csv", tmp_path)
        return tmp_path / "out"

    @pytest.mark.parametrize("absent", ["jobs", "schedule"])
    def test_missing_file_is_named(self, cases: Path, tmp_path: Path, absent: str):
        present = [s for s in ("jobs", "schedule", "consumed_energy") if s != absent]
        prefix = self._copy(cases, tmp_path, *present)
        with pytest.raises(InputError, match=f"out_{absent}.csv: missing"):
            metrics_from_outputs(prefix)

    def test_without_energy_file_energy_fields_are_none(self, cases: Path, tmp_path: Path):
        m = metrics_from_outputs(self._copy(cases, tmp_path, "jobs", "schedule"))
        assert m.mean_wait == pytest.approx(34.6)
        assert (m.energy_total, m.energy_compute, m.energy_wasted,
                m.energy_wasted_to_end, m.ee) == (None,) * 5

    def test_malformed_files_are_named(self, cases: Path, tmp_path: Path):
        prefix = self._copy(cases, tmp_path, "jobs", "schedule", "consumed_energy")
        (tmp_path / "out_consumed_energy.csv").write_text("time,energy\n0,0\nten,5\n")
        with pytest.raises(InputError, match=r"out_consumed_energy.csv: line 3: time"):
            metrics_from_outputs(prefix)
        (tmp_path / "out_schedule.csv").write_text("makespan\n3\n")
        with pytest.raises(InputError, match="out_schedule.csv: malformed"):
            metrics_from_outputs(prefix)

    def test_write_metrics(self, cases: Path, tmp_path: Path):
        m = metrics_from_outputs(cases / "energy4-delay" / "out")
        path = write_metrics(m, tmp_path / "run" / "metrics.json", {"icon_time_share": 0.25})
        text = path.read_text()
        record = json.loads(text)
        assert list(record) == sorted(record)
        assert record["icon_time_share"] == 0.25
        assert RunMetrics(**{f.name: record[f.name] for f in fields(RunMetrics)}) == m
        with pytest.raises(ValueError, match="makespan"):
            write_metrics(m, tmp_path / "x.json", {"makespan": 1.0})

    def test_field_order_is_the_spec_order(self):
        assert [f.name for f in fields(RunMetrics)] == [
            "jobs", "mean_wait", "max_wait", "mean_slowdown", "mean_response", "utilization",
            "energy_total", "energy_compute", "energy_wasted", "energy_wasted_to_end",
            "makespan", "jobs_rejected", "jobs_killed", "ee", "nodes"]
