"""Checkpoint workloads: the generator, trace annotation, PM100 conversion and commands."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from snficon.errors import InputError
from snficon.workload.checkpoints import (
    CheckpointFields,
    CheckpointWorkloadParams,
    annotate_limit_hits,
    checkpoint_document,
    generate_checkpoint_workload,
    summarize_checkpoints,
)
from snficon.workload.pm100 import Pm100Selection, read_pm100
from snficon.workload.reader import parse_workload
from snficon.workload.trace import TraceJob

ROOT = Path(__file__).resolve().parents[2]
DAS2 = ROOT.parent / "shared" / "data" / "traces" / "DAS2-fs1-2003-1.swf.gz"


def test_the_default_workload_has_the_papers_counts():
    """773 jobs: 217 hit their limit (109 checkpointing, all at the 24-h maximum, 1440 s
    scaled), 556 complete below their limit and run at least 1 scaled minute. With
    checkpoints every 420 s from the start, 3 fit in each 1440-s limit: 327 in all, as
    in the paper's Table 1 (Baseline and Early Cancellation)."""
    jobs = generate_checkpoint_workload()
    summary = summarize_checkpoints(jobs, CheckpointWorkloadParams().fields)
    assert (summary.jobs, summary.limit_hits, summary.checkpointing) == (773, 217, 109)
    assert summary.checkpoints_in_limits == 327
    by_id = {job.id: job for job in jobs.jobs}
    assert {by_id[i].reqtime for i in jobs.checkpointing} == {1440.0}
    completing = [j for j in jobs.jobs if j.runtime <= j.reqtime]
    assert len(completing) == 556 and min(j.runtime for j in completing) >= 60.0
    assert all(j.subtime == 0.0 for j in jobs.jobs) and max(j.res for j in jobs.jobs) <= 16
    # each checkpointing job loses 1440 - 1260 = 180 s x its nodes under the baseline
    tail = sum(180.0 * by_id[i].res for i in jobs.checkpointing)
    assert summary.baseline_tail_node_s == tail


def test_the_generator_is_seeded_and_bit_reproducible():
    """Same seed, same bytes; another seed, other jobs. The digest pins the default file
    (``snficon workload checkpoints -o FILE``, numpy's default_rng(2020))."""
    def text(**changes):
        params = CheckpointWorkloadParams(**changes)
        document, _ = checkpoint_document(generate_checkpoint_workload(params), params.nodes,
                                          params.fields)
        return json.dumps(document, sort_keys=True)

    assert text() == text()
    assert text(seed=1) != text()
    poisson = generate_checkpoint_workload(CheckpointWorkloadParams(arrivals="poisson"))
    subtimes = np.array([job.subtime for job in poisson.jobs])
    assert subtimes[0] == 0.0 and np.all(np.diff(subtimes) > 0)
    assert np.diff(subtimes).mean() == pytest.approx(60.0, rel=0.1)


def test_the_document_carries_the_layers_fields():
    params = CheckpointWorkloadParams(n_jobs=40, offset_s=30.0)
    document, _ = checkpoint_document(generate_checkpoint_workload(params), 20, params.fields)
    workload = parse_workload(document, "generated")
    checkpointing = [job for job in workload.jobs if "checkpoint_interval" in job.raw]
    assert checkpointing and all(job.raw["checkpoint_offset"] == 30 for job in checkpointing)
    assert all(job.walltime == -1 and job.raw["cores_per_node"] == 20 for job in workload.jobs)


@pytest.mark.parametrize(("changes", "message"), [
    ({"timeout_share": 1.5}, "timeout_share must be in \\[0, 1\\]"),
    ({"size_cap": 30}, "size_cap must be in \\[1, nodes\\]"),
    ({"overrun": 1.0}, "overrun must be > 1"),
    ({"arrivals": "burst"}, "arrivals must be one of zero, poisson"),
    ({"interval_s": 0.0}, "checkpoint interval must be a positive"),
])
def test_bad_generator_parameters_are_refused(changes, message):
    with pytest.raises(InputError, match=message):
        CheckpointWorkloadParams(**changes)


def test_annotation_makes_limit_reaching_jobs_checkpoint():
    """Jobs 2 (runtime 600 = reqtime) and 3 (700 > 600) reached their limit; 1 (300 of
    600) and 4 (no request) did not. With share 1 both checkpoint and run past 600;
    with share 0.5 one of them, drawn by the seed; the others are unchanged."""
    jobs = (TraceJob(1, 1, 0.0, 300.0, 600.0), TraceJob(2, 1, 0.0, 600.0, 600.0),
            TraceJob(3, 2, 5.0, 700.0, 600.0), TraceJob(4, 1, 9.0, 50.0, 0.0))
    annotated = annotate_limit_hits(jobs, 1.0, 1.0, seed=0)
    assert annotated.checkpointing == {2, 3}
    assert all(job.runtime > 600.0 for job in annotated.jobs if job.id in {2, 3})
    assert [j for j in annotated.jobs if j.id in {1, 4}] == [jobs[0], jobs[3]]
    half = annotate_limit_hits(jobs, 0.5, 1.0, seed=0)
    assert len(half.checkpointing) == 1
    assert half == annotate_limit_hits(jobs, 0.5, 1.0, seed=0)


@pytest.mark.skipif(not DAS2.is_file(), reason="the DAS2 trace is not in ../shared")
def test_convert_annotates_the_das2_trace(tmp_path):
    """The first 3000 DAS2-fs1 jobs: 246 reached their requested time."""
    out = tmp_path / "das2.json"
    done = subprocess.run([sys.executable, "-m", "snficon.cli", "workload", "convert", str(DAS2),
                           "--jobs", "3000", "--checkpoint-interval", "420", "-o", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "246 hit their limit, 246 of them checkpointing" in done.stdout
    jobs = json.loads(out.read_text())["jobs"]
    assert sum("checkpoint_interval" in job for job in jobs) == 246


def _pm100_table(path: Path) -> Path:
    """Seven hand-made PM100 rows; the paper's filters keep jobs 10, 11 and 12.

    10: COMPLETED, 2 h of a 4-h limit, 2 nodes x 64 cores; 11: TIMEOUT at the 24-h
    maximum (checkpointing); 12: TIMEOUT at 6 h; 13: too short (30 min); 14: FAILED;
    15: June; 16: partition 2.
    """
    stamp = pd.Timestamp
    rows = [(10, "2020-05-03 10:00", 7200, 240, 2, 128, "COMPLETED", 1, 1),
            (11, "2020-05-01 08:00", 86460, 1440, 1, 32, "TIMEOUT", 1, 1),
            (12, "2020-05-02 09:00", 21600, 360, 4, 128, "TIMEOUT", 1, 1),
            (13, "2020-05-02 09:30", 1800, 60, 1, 32, "COMPLETED", 1, 1),
            (14, "2020-05-02 10:00", 7200, 240, 1, 32, "FAILED", 1, 1),
            (15, "2020-06-02 10:00", 7200, 240, 1, 32, "COMPLETED", 1, 1),
            (16, "2020-05-02 11:00", 7200, 240, 1, 32, "COMPLETED", 2, 1)]
    table = pd.DataFrame(rows, columns=["job_id", "submit_time", "run_time", "time_limit",
                                        "num_nodes_alloc", "num_cores_alloc", "job_state",
                                        "partition", "qos"])
    table["submit_time"] = table["submit_time"].map(stamp)
    table.to_parquet(path)
    return path


def test_pm100_conversion_follows_the_papers_selection(tmp_path):
    """Kept in submission order: 11 (May 1st), 12, 10. Scaled 60x: 11's limit 1440 s,
    it checkpoints and would run 2 x 1440; 12's limit 360 s (not the maximum: no
    checkpoints); 10 runs 7200 / 60 = 120 s of a 240-s limit, 64 cores per node. With
    trace arrivals: 12 comes 25 h after 11 (1500 scaled s), 10 50 h after (3000)."""
    result = read_pm100(_pm100_table(tmp_path / "job_table.parquet"))
    assert [job.id for job in result.jobs.jobs] == [11, 12, 10]
    assert result.jobs.checkpointing == {11}
    by_id = {job.id: job for job in result.jobs.jobs}
    assert (by_id[11].reqtime, by_id[11].runtime, by_id[11].res) == (1440.0, 2880.0, 1)
    assert (by_id[12].reqtime, by_id[10].runtime, by_id[10].reqtime) == (360.0, 120.0, 240.0)
    assert result.cores == {11: 32, 12: 32, 10: 64}
    assert result.dropped == {"other partition": 1, "other queue (qos)": 0, "other month": 1,
                              "other state": 1, "shorter than 3600 s": 1,
                              "no limit or no nodes": 0}
    trace = read_pm100(tmp_path / "job_table.parquet", Pm100Selection(arrivals="trace"))
    assert [job.subtime for job in trace.jobs.jobs] == [0.0, 1500.0, 3000.0]


def test_pm100_errors_name_the_file(tmp_path):
    bad = tmp_path / "t.parquet"
    pd.DataFrame({"job_id": [1]}).to_parquet(bad)
    with pytest.raises(InputError, match="not a PM100 job table, missing column"):
        read_pm100(bad)
    (tmp_path / "x.parquet").write_text("no")
    with pytest.raises(InputError, match="x.parquet: not a readable parquet file"):
        read_pm100(tmp_path / "x.parquet")


def test_the_pm100_command_writes_a_checkpoint_workload(tmp_path):
    table = _pm100_table(tmp_path / "job_table.parquet")
    out = tmp_path / "pm100.json"
    done = subprocess.run([sys.executable, "-m", "snficon.cli", "workload", "pm100", str(table),
                           "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    jobs = {job["id"]: job for job in json.loads(out.read_text())["jobs"]}
    assert jobs[11]["checkpoint_interval"] == 420 and jobs[10]["cores_per_node"] == 64
    assert "checkpoint_interval" not in jobs[12]


def test_the_committed_workload_is_the_generators_default():
    """``workloads/checkpoints-773.json`` is ``snficon workload checkpoints`` with defaults."""
    params = CheckpointWorkloadParams()
    document, _ = checkpoint_document(generate_checkpoint_workload(params), 20, params.fields)
    from snficon.workload.writer import format_workload_json

    committed = (ROOT / "workloads" / "checkpoints-773.json").read_bytes()
    assert hashlib.sha256(format_workload_json(document).encode()).digest() == (
        hashlib.sha256(committed).digest())
    assert CheckpointFields(420.0).offset_s == 0.0
