"""The lazy job table makes each job when it is needed, in Batsim's submission order."""

from __future__ import annotations

import json
from pathlib import Path

from snficon.engine import jobs as J
from snficon.workload.packed import PackedWorkload, read_packed_workload
from snficon.workload.reader import read_workload


def _workload(tmp_path: Path):
    # Ids whose string order differs from their numeric order, and equal subtimes.
    spec = [(10, 5.0), (9, 5.0), (2, 1.0), (100, 5.0), (3, 0.0)]
    document = {
        "nb_res": 4,
        "jobs": [{"id": job_id, "subtime": subtime, "res": 1, "profile": "p",
                  "walltime": -1} for job_id, subtime in spec],
        "profiles": {"p": {"type": "delay", "delay": 7.0}},
    }
    path = tmp_path / "w.json"
    path.write_text(json.dumps(document))
    return read_workload(path)


def test_submission_order_is_subtime_then_id_string_and_makes_jobs_as_reached(tmp_path):
    table = J.JobTable([("w0", _workload(tmp_path))])
    assert len(table) == 5
    assert list(table.values()) == []  # nothing made up front
    order = table.submission_order("w0")
    first = next(order)
    assert first.full_id == "w0!3"
    assert [job.full_id for job in table.values()] == ["w0!3"]
    rest = [job.full_id for job in order]
    # subtime 1.0, then the three at 5.0 by id *string*: "10" < "100" < "9".
    assert rest == ["w0!2", "w0!10", "w0!100", "w0!9"]
    assert all(job.state == J.NOT_SUBMITTED for job in table.values())


def test_lookup_makes_an_unsubmitted_job_once_and_finish_reduces_it(tmp_path):
    table = J.JobTable([("w0", _workload(tmp_path))])
    assert "w0!9" in table and "w0!8" not in table and "w1!9" not in table
    assert table.get("w0!8") is None
    job = table["w0!9"]
    assert isinstance(job, J.EngineJob) and job.profile.type == "delay"
    assert table["w0!9"] is job
    # The submitter reuses the job made by the lookup rather than making another.
    assert job in list(table.submission_order("w0"))
    job.state = J.COMPLETED_SUCCESSFULLY
    table.finish(job)
    finished = table["w0!9"]
    assert isinstance(finished, J.FinishedJob)
    assert finished.is_complete and finished.full_id == "w0!9"
    assert len(table) == 5


def test_a_finished_job_keeps_its_state_and_a_late_kill_request(tmp_path):
    table = J.JobTable([("w0", _workload(tmp_path))])
    job = table["w0!2"]
    job.state, job.kill_requested = J.COMPLETED_KILLED, False
    table.finish(job)
    assert list(table.values()) == []  # forgotten but for its records
    finished = table["w0!2"]
    assert isinstance(finished, J.FinishedJob) and finished.state == J.COMPLETED_KILLED
    assert not finished.kill_requested and finished.ptask is None
    finished.kill_requested = True  # what server_on_kill_jobs does to a completed job
    assert table["w0!2"].kill_requested and table["w0!2"].state == J.COMPLETED_KILLED
    assert not table["w0!3"].kill_requested  # made now, unsubmitted


def test_the_table_reads_a_packed_workload_as_a_loaded_one(tmp_path):
    _workload(tmp_path)
    packed = read_packed_workload(tmp_path / "w.json")
    assert isinstance(packed, PackedWorkload)
    table = J.JobTable([("w0", packed)])
    loaded = J.JobTable([("w0", _workload(tmp_path))])
    assert [(j.full_id, j.spec, j.description) for j in table.submission_order("w0")] == \
        [(j.full_id, j.spec, j.description) for j in loaded.submission_order("w0")]
    assert "w0!100" in table and "w0!101" not in table and table.get("w0!7") is None
