"""Job-by-job comparison of two runs (``snficon compare``), on hand-made logs in both formats.

The two hand-made logs describe the same three jobs:

=====  ======  ============================  ===============================
job    submit  A: Batsim out_jobs.csv        B: SPARS raw_job_log.csv
=====  ======  ============================  ===============================
1      0       start 0, finish 50, nodes 0-1  start 0, finish 50, [0, 1]
2      10      start 50, finish 70, node 0    start 60, finish 80, [1]
3      20      start 20, finish 50, node 2    start 20, finish 50, [3]
=====  ======  ============================  ===============================

so, in submission order, job 2 is the first that differs (start +10 s, other
node), job 3 differs by its node only. Waits: A 0, 40, 0; B 0, 50, 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snficon.analysis.compare import compare_logs, job_metrics
from snficon.analysis.job_logs import read_job_log
from snficon.cli import main
from snficon.errors import InputError

BATSIM_HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,"
                 "requested_time,success,final_state,starting_time,execution_time,finish_time,"
                 "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,"
                 "metadata\n")
BATSIM_ROWS = (
    '1,w0,p1,0.000000,2,100.000000,1,COMPLETED_SUCCESSFULLY,0.000000,50.000000,50.000000,'
    '0.000000,50.000000,1.000000,0-1,100.000000,""\n'
    '2,w0,p1,10.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,50.000000,20.000000,70.000000,'
    '40.000000,60.000000,3.000000,0,100.000000,""\n'
    '3,w0,p1,20.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,20.000000,30.000000,50.000000,'
    '0.000000,30.000000,1.000000,2,100.000000,""\n')
SPARS_HEADER = ("job_id,type,res,nodes,start_time,subtime,reqtime,req_finish_time,runtime,"
                "actual_finish_time,user_id,terminated,finish_time\n")
# SPARS writes a job when it finishes: jobs 1 and 3 at 50, job 2 at 80.
SPARS_ROWS = ('1,execution_finished,2,"[0, 1]",0.0,0,100,100.0,50,50.0,7,False,50.0\n'
              '3,execution_finished,1,"[3]",20.0,20,100,120.0,30,50.0,7,False,50.0\n'
              '2,execution_finished,1,"[1]",60.0,10,100,160.0,20,80.0,7,False,80.0\n')
SPARS_METRICS = ("total_waiting_time,mean_waiting_time,total_energy_waste,"
                 "total_energy_consumption,energy_effective\n50.0,16.666,1234.5,5000.0,3765.5\n")


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "ours", tmp_path / "spars"
    a.mkdir()
    b.mkdir()
    (a / "out_jobs.csv").write_text(BATSIM_HEADER + BATSIM_ROWS)
    (b / "raw_job_log.csv").write_text(SPARS_HEADER + SPARS_ROWS)
    (b / "metrics.csv").write_text(SPARS_METRICS)
    return a, b


class TestReadJobLog:
    def test_batsim_folder_and_file(self, runs):
        a, _ = runs
        log = read_job_log(a)
        assert log.kind == "batsim" and log.source.endswith("out_jobs.csv")
        assert read_job_log(a / "out_jobs.csv").jobs == log.jobs
        assert [(j.job_id, j.submit, j.start, j.finish, j.res, sorted(j.nodes)) for j in log.jobs] \
            == [("1", 0.0, 0.0, 50.0, 2, [0, 1]), ("2", 10.0, 50.0, 70.0, 1, [0]),
                ("3", 20.0, 20.0, 50.0, 1, [2])]
        assert log.energy_wasted is None  # no energy file beside it

    def test_spars_rows_are_put_in_submission_order(self, runs):
        _, b = runs
        log = read_job_log(b)
        assert log.kind == "spars"
        assert [(j.job_id, j.start, sorted(j.nodes)) for j in log.jobs] == \
            [("1", 0.0, [0, 1]), ("2", 60.0, [1]), ("3", 20.0, [3])]
        assert log.energy_wasted == 1234.5  # total_energy_waste of metrics.csv

    def test_folder_without_a_log_is_named(self, tmp_path):
        with pytest.raises(InputError, match="no out_jobs.csv .* or raw_job_log.csv"):
            read_job_log(tmp_path)

    def test_unknown_columns_are_an_error(self, tmp_path):
        path = tmp_path / "jobs.csv"
        path.write_text("a,b\n1,2\n")
        with pytest.raises(InputError, match="neither a Batsim out_jobs.csv"):
            read_job_log(path)

    def test_spars_node_count_must_match_res(self, tmp_path):
        path = tmp_path / "raw_job_log.csv"
        row = '1,execution_finished,2,"[0]",0.0,0,1,1.0,1,1.0,7,False,1.0\n'
        path.write_text(SPARS_HEADER + row)
        with pytest.raises(InputError, match="line 2: job 1 has 1 node ids"):
            read_job_log(path)

    def test_duplicate_ids_are_an_error(self, tmp_path):
        path = tmp_path / "raw_job_log.csv"
        row = '1,execution_finished,1,"[0]",0.0,0,1,1.0,1,1.0,7,False,1.0\n'
        path.write_text(SPARS_HEADER + row + row)
        with pytest.raises(InputError, match=r"job id\(s\) \['1'\] appear more than once"):
            read_job_log(path)

    def test_rejected_batsim_job_never_ran(self, shared_dir):
        """energy4-delay (real Batsim 4.2.1): 11 jobs, job 6 rejected (5 nodes of 4)."""
        log = read_job_log(shared_dir / "conformance" / "cases" / "energy4-delay")
        never = [j.job_id for j in log.jobs if j.start is None]
        assert len(log.jobs) == 11 and never == ["6"]
        # Wasted energy of that run, worked out in tests/analysis/test_metrics.py: the
        # energy row at t = 1097 (249125 J) minus the jobs' consumed energy (78550 J).
        assert log.energy_wasted == pytest.approx(249125.0 - 78550.0)


class TestCompareLogs:
    def test_first_differing_job_and_counts(self, runs):
        result = compare_logs(read_job_log(runs[0]), read_job_log(runs[1]))
        assert result.matched == 3 and result.only_a == () and result.only_b == ()
        assert [d.a.job_id for d in result.differences] == ["2", "3"]
        first = result.first
        assert (first.a.job_id, first.start_delta, first.nodes_differ) == ("2", 10.0, True)
        assert (result.start_differs, result.nodes_differs) == (1, 2)
        # Job 3 starts at 20 in both, before job 2 (50 and 60): the runs part there first.
        assert result.earliest.a.job_id == "3"

    def test_metrics_recomputed_from_both_logs(self, runs):
        result = compare_logs(read_job_log(runs[0]), read_job_log(runs[1]))
        by_name = {m.name: m for m in result.metrics}
        assert by_name["mean_wait"].a == pytest.approx(40 / 3)
        assert by_name["mean_wait"].b == pytest.approx(50 / 3)
        assert by_name["mean_wait"].relative == pytest.approx(0.25)
        assert (by_name["max_wait"].a, by_name["max_wait"].b) == (40.0, 50.0)
        # Responses A 50, 60, 30; B 50, 70, 30. Slowdowns A 1, 3, 1; B 1, 3.5, 1.
        assert by_name["mean_response"].delta == pytest.approx(10 / 3)
        assert by_name["mean_slowdown"].b - by_name["mean_slowdown"].a == pytest.approx(0.5 / 3)
        assert (by_name["makespan"].a, by_name["makespan"].b) == (70.0, 80.0)
        assert by_name["energy_wasted"].a is None and by_name["energy_wasted"].relative is None
        assert result.worst_relative() == ("mean_wait", pytest.approx(0.25))
        assert result.worst_relative(("makespan",)) == ("makespan", pytest.approx(10 / 70))

    def test_zero_flop_jobs_are_left_out_of_the_slowdown(self, tmp_path):
        """Job 9 has zero flops: Batsim runs it 1e-5 s, written at t = 1432730 to six
        decimals, so finish - start reads 1.0000076e-5 s; SPARS gives it no runtime. Both
        leave it out of the mean slowdown (SPEC 6), which is job 1's 1 in both."""
        batsim, spars = tmp_path / "out_jobs.csv", tmp_path / "raw_job_log.csv"
        batsim.write_text(BATSIM_HEADER + BATSIM_ROWS.splitlines(keepends=True)[0]
                          + '9,w0,p2,1432000.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,'
                          '1432730.000000,0.000010,1432730.000010,730.000000,730.000010,'
                          '73000000.000000,3,0.000000,""\n')
        spars.write_text(SPARS_HEADER + SPARS_ROWS.splitlines(keepends=True)[0]
                         + '9,execution_finished,1,"[3]",1432730.0,1432000,100,1432830.0,0,'
                         '1432730.0,7,False,1432730.0\n')
        for log in (batsim, spars):
            assert job_metrics(read_job_log(log))["mean_slowdown"] == 1.0

    def test_tolerance_hides_small_start_differences(self, runs):
        result = compare_logs(read_job_log(runs[0]), read_job_log(runs[1]), tolerance_s=10.0)
        assert result.start_differs == 0
        assert [d.a.job_id for d in result.differences] == ["2", "3"]  # nodes still differ
        with pytest.raises(ValueError, match="tolerance_s"):
            compare_logs(read_job_log(runs[0]), read_job_log(runs[1]), tolerance_s=-1.0)

    def test_a_run_against_itself(self, shared_dir):
        log = read_job_log(shared_dir / "conformance" / "cases" / "energy4-delay")
        result = compare_logs(log, log)
        assert result.matched == 10 and result.differences == ()
        assert all(m.delta in (0.0, None) for m in result.metrics)
        assert job_metrics(log)["jobs"] == 10.0


class TestCommand:
    def test_prints_the_first_differing_job(self, runs, capsys):
        assert main(["compare", "--foreign", str(runs[0]), str(runs[1])]) == 0
        out = capsys.readouterr().out
        assert "first differing job: 2 (submitted 10 s, 1 nodes)" in out
        assert "A: start 50  finish 70  nodes 0" in out
        assert "B: start 60  finish 80  nodes 1" in out
        assert "differing jobs: 2 (start differs: 1, node set differs: 2" in out
        assert "earliest differing start: 3 (submitted 20 s, 1 nodes)" in out

    def test_fail_above(self, runs, capsys):
        # mean and max wait differ by 25 %, makespan by 14.3 %.
        assert main(["compare", "--foreign", str(runs[0]), str(runs[1]), "--fail-above", "20"]) == 1
        assert "FAIL: mean_wait differs by 25.000 %" in capsys.readouterr().out
        assert main(["compare", "--foreign", str(runs[0]), str(runs[1]), "--fail-above", "30"]) == 0
        assert main(["compare", "--foreign", str(runs[0]), str(runs[1]), "--fail-above", "20",
                     "--metric", "makespan"]) == 0
        assert main(["compare", "--foreign", str(runs[0]), str(runs[1]), "--fail-above", "10",
                     "--metric", "makespan"]) == 1

    def test_json_record(self, runs, tmp_path):
        out = tmp_path / "cmp.json"
        assert main(["compare", "--foreign", str(runs[0]), str(runs[1]), "--json", str(out)]) == 0
        record = json.loads(out.read_text())
        assert record["first"] == {"job_id": "2", "submit": 10.0, "res": 1, "start_a": 50.0,
                                   "start_b": 60.0, "nodes_a": [0], "nodes_b": [1]}
        assert record["earliest"]["job_id"] == "3"
        assert (record["differing_jobs"], record["start_differs"]) == (2, 1)
        assert record["metrics"]["max_wait"] == {"a": 40.0, "b": 50.0, "delta": 10.0,
                                                 "relative": 0.25}

    def test_bad_input_exits_2_and_names_it(self, tmp_path, capsys):
        assert main(["compare", str(tmp_path), str(tmp_path)]) == 2
        assert str(tmp_path) in capsys.readouterr().err
