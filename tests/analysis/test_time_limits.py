"""Time-limit metrics from a hand-written ``out_jobs.csv`` (``snficon.analysis.time_limits``).

Five jobs (limit 1440 s, interval 420 s where they checkpoint, 20 cores per node):

=====  =====  =====================  ======  =====  =====================================
job    nodes  final state            ran     start  what it is
=====  =====  =====================  ======  =====  =====================================
1      2      COMPLETED_SUCCESSFULLY 1000    0      completed (non-checkpointing)
2      1      COMPLETED_KILLED       1440    0      timeout, no checkpoints
3      1      COMPLETED_KILLED       1440    100    timeout, ckpt: k = 3, tail 180
4      3      COMPLETED_KILLED       1270    200    early cancelled: k = 3, tail 10
5      1      COMPLETED_KILLED       1690    300    extended: k = 4, tail 10
=====  =====  =====================  ======  =====  =====================================

Tail: 180 x 1 + 10 x 3 + 10 x 1 = 220 node-s (4400 core-s); checkpoints 3 + 3 + 4 = 10;
CPU time 2000 + 1440 + 1440 + 3810 + 1690 = 10380 node-s; weighted wait
(0 x 2 + 0 + 100 + 200 x 3 + 300) / 8 = 125 s.
"""

from __future__ import annotations

import json

import pytest

from snficon.analysis.time_limits import FieldNames, has_checkpoints, time_limit_metrics
from snficon.errors import InputError

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,"
          "requested_time,success,final_state,starting_time,execution_time,finish_time,"
          "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata")
ROWS = [("1", "COMPLETED_SUCCESSFULLY", 0, 1000, "0-1"), ("2", "COMPLETED_KILLED", 0, 1440, "2"),
        ("3", "COMPLETED_KILLED", 100, 1440, "3"), ("4", "COMPLETED_KILLED", 200, 1270, "4-6"),
        ("5", "COMPLETED_KILLED", 300, 1690, "7")]


def _write(tmp_path, cores=20, rows=ROWS):
    lines = [HEADER]
    for job_id, state, start, ran, alloc in rows:
        lines.append(f"{job_id},w0,p,0.000000,1,-1.000000,1,{state},{start:.6f},{ran:.6f},"
                     f"{start + ran:.6f},{start:.6f},{start + ran:.6f},1,{alloc},0,\"\"")
    (tmp_path / "out_jobs.csv").write_text("\n".join(lines) + "\n")
    jobs = []
    for job_id, *_ in ROWS:
        job = {"id": int(job_id), "subtime": 0, "res": 1, "profile": "p", "walltime": -1,
               "reqtime": 1440}
        if job_id in "345":
            job["checkpoint_interval"] = 420
        if cores is not None:
            job["cores_per_node"] = cores
        jobs.append(job)
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 8, "jobs": jobs,
                                    "profiles": {"p": {"type": "delay", "delay": 1}}}))
    return tmp_path / "out", workload


def test_table_one_quantities_from_the_output_file(tmp_path):
    prefix, workload = _write(tmp_path)
    metrics = time_limit_metrics(prefix, [workload])
    assert (metrics.jobs_completed, metrics.jobs_timeout, metrics.jobs_early_cancelled,
            metrics.jobs_extended) == (1, 2, 1, 1)
    assert (metrics.checkpointing_jobs, metrics.checkpoints) == (3, 10)
    assert metrics.tail_waste_node_s == pytest.approx(220.0)
    assert metrics.tail_waste_core_s == pytest.approx(4400.0)
    assert metrics.cpu_time_node_s == pytest.approx(10380.0)
    assert metrics.cpu_time_core_s == pytest.approx(207600.0)
    assert metrics.weighted_mean_wait == pytest.approx(125.0)
    assert has_checkpoints([workload])


def test_core_seconds_need_the_cores(tmp_path):
    prefix, workload = _write(tmp_path, cores=None)
    metrics = time_limit_metrics(prefix, [workload])
    assert metrics.tail_waste_core_s is None and metrics.cpu_time_core_s is None
    assert metrics.tail_waste_node_s == pytest.approx(220.0)


def test_a_killed_checkpointing_job_without_a_checkpoint_wastes_its_whole_run(tmp_path):
    """Job 3 killed after 400 s (< 420): its 400 s are lost; it is early cancelled."""
    rows = [*ROWS[:2], ("3", "COMPLETED_KILLED", 100, 400, "3"), *ROWS[3:]]
    prefix, workload = _write(tmp_path, rows=rows)
    metrics = time_limit_metrics(prefix, [workload])
    assert metrics.tail_waste_node_s == pytest.approx(400.0 + 30.0 + 10.0)
    assert metrics.jobs_early_cancelled == 2


def test_other_field_names_and_unknown_jobs(tmp_path):
    prefix, workload = _write(tmp_path)
    assert not has_checkpoints([workload], FieldNames(interval="every"))
    assert FieldNames.from_options({"tl_interval_field": "every"}).interval == "every"
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"nb_res": 1, "jobs": [], "profiles": {}}))
    with pytest.raises(InputError, match="job w0!1 is not in the workloads"):
        time_limit_metrics(prefix, [other])


def test_a_file_that_never_names_the_field_is_read_as_text_only(tmp_path):
    """The name spelt only through an escape, or in a profile, is still found or refused
    by parsing the file, as without the text check."""
    _, workload = _write(tmp_path)
    document = json.loads(workload.read_text())
    escaped = tmp_path / "escaped.json"
    escaped.write_text(json.dumps(document).replace('"checkpoint_interval"',
                                                     '"checkpoint\\u005finterval"'))
    assert '"checkpoint_interval"' not in escaped.read_text()
    assert has_checkpoints([escaped])
    for job in document["jobs"]:
        job.pop("checkpoint_interval", None)
    document["profiles"]["p"]["checkpoint_interval"] = 420
    in_profile = tmp_path / "in_profile.json"
    in_profile.write_text(json.dumps(document))
    assert not has_checkpoints([in_profile])
    del document["profiles"]["p"]["checkpoint_interval"]
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(document))
    assert not has_checkpoints([plain]) and has_checkpoints([plain, workload])


@pytest.mark.parametrize("scan_bytes", [1, 5, 17, 1 << 20])
def test_the_field_name_is_found_across_the_pieces_the_file_is_read_in(tmp_path, monkeypatch,
                                                                        scan_bytes):
    import snficon.analysis.time_limits as module

    monkeypatch.setattr(module, "SCAN_BYTES", scan_bytes)
    _, workload = _write(tmp_path)
    assert module._may_name(workload, "checkpoint_interval")
    assert not module._may_name(workload, "no_such_field")
    assert has_checkpoints([workload])
