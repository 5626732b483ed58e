"""Traces named by a campaign are converted once, cached by input hash and options."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest

from snficon.campaign.config import read_campaign
from snficon.campaign.conversion import (
    CONVERSIONS,
    RECORD,
    TraceConversion,
    cache_key,
    converted_workload,
)
from snficon.campaign.errors import CampaignFileError
from snficon.campaign.expand import expand, file_digest, make_specs
from snficon.campaign.runner import run_campaign
from snficon.campaign.runs import METRICS, PARAMS
from snficon.errors import InputError
from snficon.workload.convert import convert_trace

#: (submit s, run time s, processors, requested time s) of the tiny trace's jobs; the
#: fourth has run time -1, so the paper's rule (SPEC 4) drops it: 7 jobs are kept.
TRACE_JOBS = [(0, 40, 1, 60), (5, 100, 2, 100), (30, 10, 1, 20), (400, -1, 4, 60),
              (900, 300, 2, 400), (910, 20, 1, 20), (5000, 50, 3, 90), (5100, 700, 1, 900)]


def write_swf(path: Path, jobs: list[tuple[int, int, int, int]] = TRACE_JOBS) -> Path:
    """An SWF trace of 18-field records with the header's MaxProcs 4."""
    lines = ["; Version: 2.2", "; MaxProcs: 4"]
    for number, (submit, run, procs, req) in enumerate(jobs, start=1):
        fields = [number, submit, 0, run, procs, -1, -1, procs, req] + [-1] * 9
        lines.append(" ".join(str(value) for value in fields))
    path.write_text("\n".join(lines) + "\n")
    return path


CAMPAIGN = """\
[platforms]
p4 = "inputs/p4.xml"
[workloads]
trace = { file = "inputs/t.swf", convert = { nb_res = 4 } }
trace-5 = { file = "inputs/t.swf", convert = { nb_res = 4 }, jobs = 5 }
[[group]]
name = "g"
platforms = ["p4"]
workloads = ["trace", "trace-5"]
policies = ["fcfsbIpm", "snfIpm"]
"""


def entries(results: Path) -> list[Path]:
    return sorted(path for path in (results / "cache" / CONVERSIONS).iterdir()
                  if not path.name.startswith("."))


def test_runs_naming_one_trace_convert_it_once(write_campaign, tiny_inputs, tmp_path):
    trace = write_swf(tiny_inputs / "t.swf")
    path = write_campaign(CAMPAIGN)
    results = tmp_path / "results"
    specs = make_specs(expand(read_campaign(path)).plans, results / "runs")
    assert len(specs) == 4
    # Two workers racing for the one conversion: the lock makes one of them convert.
    outcome = run_campaign(specs, results, executor="local", workers=2)
    assert (outcome.done, outcome.failed) == (4, 0)
    [entry] = entries(results)
    records = [json.loads((results / "runs" / s.run_id / RECORD).read_text()) for s in specs]
    assert sum(record["converted_by_this_run"] for record in records) == 1
    assert {record["cache_key"] for record in records} == {entry.name}
    # The cached workload is what `snficon workload convert t.swf --nb-res 4` writes.
    direct = tmp_path / "direct.json"
    convert_trace(trace, direct, nb_res=4)
    assert (entry / "workload.json").read_bytes() == direct.read_bytes()
    for spec in specs:
        params = json.loads((results / "runs" / spec.run_id / PARAMS).read_text())
        assert params["workload_sha256"] == file_digest(trace)
        assert params["convert"]["nb_res"] == 4
        metrics = json.loads((results / "runs" / spec.run_id / METRICS).read_text())
        assert metrics["jobs"] == (5 if params["jobs"] == 5 else 7)
    # Run again: every run is done, nothing converts, the entry is untouched.
    stamp = (entry / "workload.json").stat().st_mtime_ns
    again = run_campaign(specs, results, executor="serial")
    assert (again.done, again.skipped) == (0, 4)
    assert entries(results) == [entry]
    assert (entry / "workload.json").stat().st_mtime_ns == stamp
    # A changed trace is another input: new run ids and a second cache entry.
    write_swf(trace, TRACE_JOBS + [(6000, 30, 2, 30)])
    changed = make_specs(expand(read_campaign(path)).plans, results / "runs")
    assert not {s.run_id for s in changed} & {s.run_id for s in specs}
    outcome = run_campaign(changed, results, executor="serial")
    assert outcome.done == 4
    assert len(entries(results)) == 2
    jobs = [json.loads((results / "runs" / s.run_id / METRICS).read_text())["jobs"]
            for s in changed]
    assert sorted(jobs) == [5, 5, 8, 8]


def test_changed_options_give_a_new_entry(tmp_path):
    trace = write_swf(tmp_path / "t.swf")
    digest = file_digest(trace)
    cache = tmp_path / "cache"
    first = converted_workload(trace, digest, TraceConversion(nb_res=4), cache)
    same = converted_workload(trace, digest, TraceConversion(nb_res=4), cache)
    other = converted_workload(trace, digest, TraceConversion(nb_res=4, skip=2), cache)
    assert first.converted_here and not same.converted_here and other.converted_here
    assert first.path == same.path != other.path
    assert first.key == cache_key(digest, TraceConversion(nb_res=4)) != other.key
    # skip 2 passes over the first two kept jobs: 5 of the 7 are left.
    assert len(json.loads(other.path.read_text())["jobs"]) == 5
    assert len(json.loads(first.path.read_text())["jobs"]) == 7


def test_trace_changed_after_expansion_is_refused(tmp_path):
    trace = write_swf(tmp_path / "t.swf")
    digest = file_digest(trace)
    write_swf(trace, TRACE_JOBS[:3])
    with pytest.raises(InputError, match="changed since the campaign started"):
        converted_workload(trace, digest, TraceConversion(nb_res=4), tmp_path / "cache")
    assert not [p for p in (tmp_path / "cache" / CONVERSIONS).iterdir()
                if not p.name.endswith(".lock")]  # no entry, no scratch folder


def _convert_in_worker(trace: str, digest: str, cache: str, start: Any, out: Any) -> None:
    start.wait()  # all at once
    out.put(converted_workload(trace, digest, TraceConversion(nb_res=4), cache).converted_here)


def test_racing_processes_convert_once(tmp_path):
    """Three processes asking at once: one converts, the others wait for its entry (the
    lock); without it each would convert (counted, though only one copy is kept)."""
    # A trace big enough (20,000 jobs) that the conversion takes long beside a process start.
    jobs = [(10 * i, 60, 1 + i % 4, 90) for i in range(20_000)]
    trace = write_swf(tmp_path / "big.swf", jobs)
    context = multiprocessing.get_context("fork")
    start, out = context.Barrier(3), context.Queue()
    arguments = (str(trace), file_digest(trace), str(tmp_path / "cache"), start, out)
    workers = [context.Process(target=_convert_in_worker, args=arguments) for _ in range(3)]
    for worker in workers:
        worker.start()
    made = [out.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(10)
    assert sorted(made) == [False, False, True]
    assert len(entries(tmp_path)) == 1


def test_plain_swf_is_converted_with_defaults(write_campaign, tiny_inputs):
    write_swf(tiny_inputs / "t.swf")
    loaded = read_campaign(write_campaign(CAMPAIGN.replace(
        '{ file = "inputs/t.swf", convert = { nb_res = 4 } }', '"inputs/t.swf"')))
    assert loaded.workloads["trace"].convert == TraceConversion()
    assert loaded.workloads["trace-5"].convert == TraceConversion(nb_res=4)
    plain = read_campaign(write_campaign(
        CAMPAIGN.replace("inputs/t.swf", "inputs/w8.json").replace(
            ', convert = { nb_res = 4 }', ''), "plain.toml"))
    assert plain.workloads["trace"].convert is None  # a Batsim workload: read as it is


@pytest.mark.parametrize(("table", "key", "words"), [
    ("{ nb_res = 4, jbos = 3 }", "workloads.trace.convert.jbos", "unknown key 'jbos'"),
    ("{ jobs = 0 }", "workloads.trace.convert.jobs", "integer >= 1"),
    ("{ skip = -1 }", "workloads.trace.convert.skip", "integer >= 0"),
    ("{ drop_oversized = 1 }", "workloads.trace.convert.drop_oversized", "true or false"),
    ('{ profile = "delay" }', "workloads.trace.convert", "delay profiles need"),
    ('{ walltime = "never" }', "workloads.trace.convert", "walltime mode must be"),
    ("3000", "workloads.trace.convert", "table of conversion options"),
])
def test_bad_conversion_options_name_the_key(write_campaign, table, key, words):
    path = write_campaign(CAMPAIGN.replace("convert = { nb_res = 4 } }",
                                           f"convert = {table} }}", 1))
    with pytest.raises(CampaignFileError) as caught:
        read_campaign(path)
    assert caught.value.key == key and caught.value.line == 4
    assert str(caught.value).startswith(f"{path}, line 4, {key}: ") and words in str(caught.value)
