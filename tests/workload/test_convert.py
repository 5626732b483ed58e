"""SWF and SPARS readers, the Batsim writer and ``snficon workload convert`` (SPEC section 4)."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from snficon.errors import InputError
from snficon.workload.convert import convert_trace, detect_format, read_trace
from snficon.workload.reader import read_workload
from snficon.workload.spars import read_spars
from snficon.workload.swf import read_swf
from snficon.workload.trace import TraceJob
from snficon.workload.writer import BatsimOptions, batsim_document, write_batsim_workload

HEADER = """; Version: 2.2
;      MaxNodes: 32 (dual CPU)
;      MaxProcs: 64
;
"""


def swf_record(job_id, submit, runtime, procs, reqtime):
    """One 18-field SWF line (fields 1, 2, 4, 5, 9 set; the rest -1 or 1)."""
    fields = [job_id, submit, 0, runtime, procs, 0, -1, procs, reqtime, -1, 1, 1, 1, 1, 1,
              -1, -1, -1]
    return " ".join(str(v) for v in fields) + "\n"


SMALL_SWF = HEADER + "".join([
    swf_record(1, 100, 50, 8, 60),
    swf_record(2, 130, -1, -1, -1),      # dropped: runtime and processors unknown
    swf_record(3, 160, 0, 2, 600),       # zero runtime, kept
    swf_record(4, 200, 30, 128, -1),     # larger than 64; reqtime missing
    swf_record(5, 250, 40, 4, 100),
])


def write(path, text):
    path.write_text(text)
    return path


class TestDas2Fs1:
    def test_first_3000_kept_jobs_equal_paper_file(self, das2_fs1_swf, paper_das2_fs1):
        trace = read_swf(das2_fs1_swf, max_jobs=3000)
        paper = json.loads(paper_das2_fs1.read_text())
        assert trace.nb_res == paper["nb_res"] == 64
        ours = [(j.id, j.res, j.subtime, j.runtime, j.reqtime) for j in trace.jobs]
        theirs = [(p["job_id"], p["res"], p["subtime"], p["runtime"], p["reqtime"])
                  for p in paper["jobs"]]
        assert ours == theirs
        # The 138 left-out records (ids up to 3138) all have runtime and processors -1.
        assert trace.report.records == 3138
        assert trace.report.dropped == {"runtime unknown (-1)": 138}

    def test_convert_command_on_the_trace(self, cli_main, das2_fs1_swf, tmp_path, capsys):
        out = tmp_path / "fs1.json"
        assert cli_main(["workload", "convert", str(das2_fs1_swf), "--jobs", "3000",
                         "-o", str(out)]) == 0
        workload = read_workload(out)
        assert len(workload.jobs) == 3000 and workload.nb_res == 64
        zero = [p for p in workload.profiles.values() if p.cpu_flops == 0]
        assert len(zero) == 1  # the 86 zero-runtime jobs share one cpu-0 profile
        assert "runtime unknown (-1): 138" in capsys.readouterr().out


class TestSkip:
    """``--skip K``: pass over K kept records; subtimes from the last skipped job's submission."""

    def test_das2_fs1_jobs_3001_to_4000_equal_the_authors_segment(self, das2_fs1_swf):
        trace = read_swf(das2_fs1_swf, skip=3000, max_jobs=1000)
        jobs = trace.jobs
        assert trace.report.skipped == 3000 and len(jobs) == 1000
        # Reference: the paper authors' training segment DAS2-fs1-3001-4000.json
        # (SPARS-ICON repository, workloads/curriculum-small/), read with json and summed:
        # first and last job ids 3139 and 4149, first subtimes 80, 88, 161, last 1902341,
        # sums of subtime 888528556, runtime 1752994, res 8612, reqtime 161299020.
        assert (jobs[0].id, jobs[-1].id) == (3139, 4149)
        assert [j.subtime for j in jobs[:3]] == [80, 88, 161]
        assert jobs[-1].subtime == 1902341
        assert sum(j.subtime for j in jobs) == 888528556
        assert sum(j.runtime for j in jobs) == 1752994
        assert sum(j.res for j in jobs) == 8612
        assert sum(j.reqtime for j in jobs) == 161299020
        # The same jobs as the first 4000 kept ones, rebased on job 3000's submission.
        whole = read_swf(das2_fs1_swf, max_jobs=4000).jobs
        origin = whole[2999].subtime
        assert trace.report.origin_s == origin
        assert [(j.id, j.res, j.subtime - origin, j.runtime, j.reqtime) for j in whole[3000:]] \
            == [(j.id, j.res, j.subtime, j.runtime, j.reqtime) for j in jobs]

    def test_drop_rules_apply_before_skipping(self, tmp_path):
        # Records 1, 3, 4, 5 are kept (2 is dropped): skipping 2 passes over 1 and 3.
        trace = read_swf(write(tmp_path / "t.swf", SMALL_SWF), skip=2)
        assert [(j.id, j.subtime) for j in trace.jobs] == [(4, 40), (5, 90)]  # origin 160
        assert trace.report.skipped == 2 and trace.report.origin_s == 160
        assert trace.report.dropped == {"runtime unknown (-1)": 1}
        assert trace.report.reqtime_missing == 1  # job 4's, kept
        assert read_swf(tmp_path / "t.swf", skip=3).report.reqtime_missing == 0  # skipped
        assert [j.id for j in read_swf(tmp_path / "t.swf", skip=1, max_jobs=2).jobs] == [3, 4]

    def test_skip_zero_keeps_the_first_kept_job_origin(self, tmp_path):
        path = write(tmp_path / "t.swf", SMALL_SWF)
        assert read_swf(path, skip=0) == read_swf(path)

    def test_unsorted_trace_never_gives_negative_subtimes(self, tmp_path):
        text = HEADER + swf_record(1, 100, 5, 1, 5) + swf_record(2, 300, 5, 1, 5) \
            + swf_record(3, 200, 5, 1, 5)
        trace = read_swf(write(tmp_path / "t.swf", text), skip=2)
        assert [(j.id, j.subtime) for j in trace.jobs] == [(3, 0)]

    def test_duplicate_of_a_skipped_id_is_an_error(self, tmp_path):
        path = write(tmp_path / "d.swf", SMALL_SWF + swf_record(1, 300, 5, 1, 5))
        with pytest.raises(InputError, match="job id 1 appears twice"):
            read_swf(path, skip=3)

    def test_spars_skip_rebases_on_the_last_skipped_job(self, tmp_path):
        doc = {"nb_res": 4, "jobs": [
            {"job_id": i, "res": 1, "subtime": 10 * i, "runtime": 3, "reqtime": 4}
            for i in range(1, 6)]}
        path = write(tmp_path / "s.json", json.dumps(doc))
        assert [j.subtime for j in read_spars(path).jobs] == [10, 20, 30, 40, 50]
        trace = read_spars(path, skip=3, max_jobs=1)
        assert [(j.id, j.subtime) for j in trace.jobs] == [(4, 10)]

    def test_negative_skip_and_skipping_everything(self, tmp_path):
        path = write(tmp_path / "t.swf", SMALL_SWF)
        with pytest.raises(InputError, match="--skip must be at least 0, got -1"):
            read_swf(path, skip=-1)
        with pytest.raises(InputError, match=r"no job kept \(5 records read, 4 kept records "
                                             r"skipped\)"):
            convert_trace(path, tmp_path / "o.json", skip=4)
        assert not (tmp_path / "o.json").exists()

    def test_convert_command_with_skip(self, cli_main, tmp_path, capsys):
        source = write(tmp_path / "t.swf", SMALL_SWF)
        out = tmp_path / "seg.json"
        assert cli_main(["workload", "convert", str(source), "--skip", "1", "--jobs", "2",
                         "-o", str(out)]) == 0
        assert [(j.id, j.subtime) for j in read_workload(out).jobs] == [("3", 60), ("4", 100)]
        assert "kept jobs skipped: 1 (subtimes relative to the last skipped job's " \
               "submission, 100 s)" in capsys.readouterr().out


class TestSwf:
    def test_paper_rules(self, tmp_path):
        trace = read_swf(write(tmp_path / "t.swf", SMALL_SWF))
        assert trace.nb_res == 64
        assert trace.report.nb_res_source == "SWF header MaxProcs"
        assert [(j.id, j.res, j.subtime, j.runtime, j.reqtime) for j in trace.jobs] == [
            (1, 8, 0, 50, 60), (3, 2, 60, 0, 600), (4, 128, 100, 30, 30), (5, 4, 150, 40, 100)]
        assert trace.report.dropped == {"runtime unknown (-1)": 1}
        assert trace.report.reqtime_missing == 1
        assert (trace.report.records, trace.report.kept) == (5, 4)

    def test_first_k_and_rebase_on_first_kept(self, tmp_path):
        text = HEADER + swf_record(1, 90, -1, -1, -1) + SMALL_SWF.split(HEADER)[1]
        trace = read_swf(write(tmp_path / "t.swf", text), max_jobs=2)
        assert [(j.id, j.subtime) for j in trace.jobs] == [(1, 0), (3, 60)]
        assert trace.report.stopped_early and trace.report.records == 4

    def test_drop_oversized_only_when_asked(self, tmp_path):
        path = write(tmp_path / "t.swf", SMALL_SWF)
        trace = read_swf(path, drop_oversized=True)
        assert [j.id for j in trace.jobs] == [1, 3, 5]
        assert trace.report.dropped["larger than nb_res"] == 1
        assert [j.id for j in read_swf(path, nb_res=4, drop_oversized=True).jobs] == [3, 5]

    def test_nb_res_from_max_nodes_or_option(self, tmp_path):
        text = "; MaxNodes: 16\n" + swf_record(1, 0, 10, 2, 20)
        assert read_swf(write(tmp_path / "a.swf", text)).nb_res == 16
        assert read_swf(tmp_path / "a.swf", nb_res=8).nb_res == 8

    def test_nb_res_required_without_header(self, tmp_path):
        path = write(tmp_path / "t.swf", swf_record(1, 0, 10, 2, 20))
        with pytest.raises(InputError, match="--nb-res"):
            read_swf(path)
        assert read_swf(path, nb_res=4).nb_res == 4

    def test_gzip_input(self, tmp_path):
        path = tmp_path / "t.swf.gz"
        path.write_bytes(gzip.compress(SMALL_SWF.encode()))
        assert [j.id for j in read_swf(path).jobs] == [1, 3, 4, 5]

    @pytest.mark.parametrize("line, message", [
        ("1 0 0 10 2 0 -1 2 20 -1 1 1 1 1 1 -1 -1\n", "18 fields, this line has 17"),
        ("1 0 0 ten 2 0 -1 2 20 -1 1 1 1 1 1 -1 -1 -1\n", "field 4 (run time)"),
        ("1 0 0 10 2.5 0 -1 2 20 -1 1 1 1 1 1 -1 -1 -1\n", "field 5 (allocated processors)"),
    ])
    def test_malformed_record_names_file_and_line(self, tmp_path, line, message):
        path = write(tmp_path / "bad.swf", SMALL_SWF + line)
        with pytest.raises(InputError, match=re.escape(message)) as info:
            read_swf(path)
        assert f"{path}:10" in str(info.value)

    def test_duplicate_id(self, tmp_path):
        path = write(tmp_path / "dup.swf", SMALL_SWF + swf_record(3, 300, 5, 1, 5))
        with pytest.raises(InputError, match=r"job id 3 appears twice \(first at .*dup.swf:7\)"):
            read_swf(path)

    def test_missing_file(self, tmp_path):
        with pytest.raises(InputError, match="nope.swf: file not found"):
            read_swf(tmp_path / "nope.swf")

    def test_not_gzip(self, tmp_path):
        path = write(tmp_path / "t.swf.gz", SMALL_SWF)
        with pytest.raises(InputError, match="t.swf.gz: not a gzip file"):
            read_swf(path)

    def test_truncated_gzip(self, tmp_path):
        path = tmp_path / "t.swf.gz"
        text = HEADER + "".join(swf_record(i, i, 5, 1, 9) for i in range(1, 500))
        path.write_bytes(gzip.compress(text.encode())[:-30])
        with pytest.raises(InputError, match="t.swf.gz: bad or truncated gzip data"):
            read_swf(path)


class TestSpars:
    def test_round_trip_of_paper_markovian(self, paper_markovian, tmp_path):
        out = tmp_path / "m.json"
        report = convert_trace(paper_markovian, out)
        assert report.read.format == "spars" and report.write.jobs == 3000
        paper = json.loads(paper_markovian.read_text())["jobs"]
        workload = read_workload(out)
        assert workload.nb_res == 64
        assert [(j.id, j.res, j.subtime, j.reqtime, j.walltime) for j in workload.jobs] == [
            (str(p["job_id"]), p["res"], p["subtime"], p["reqtime"], -1) for p in paper]
        cpu = [workload.profiles[j.profile].cpu_flops for j in workload.jobs]
        assert cpu == [p["runtime"] * 1e9 for p in paper]

    def test_missing_reqtime_and_dropped_records(self, tmp_path):
        doc = {"jobs": [{"job_id": 1, "res": 2, "subtime": 5, "runtime": 7},
                        {"job_id": 2, "res": -1, "subtime": 6, "runtime": 7, "reqtime": 9},
                        {"job_id": 3, "res": 1, "subtime": 8, "runtime": 3, "reqtime": 4}]}
        trace = read_spars(write(tmp_path / "s.json", json.dumps(doc)), nb_res=4)
        assert trace.jobs == (TraceJob(1, 2, 5, 7, 7), TraceJob(3, 1, 8, 3, 4))
        assert trace.report.reqtime_missing == 1
        assert trace.report.dropped == {"processors unknown (-1)": 1}

    @pytest.mark.parametrize("job, message", [
        ({"job_id": 4, "res": 1, "subtime": 0}, r"job #0 \(job_id 4\): missing field 'runtime'"),
        ({"job_id": 4, "res": 1, "subtime": "x", "runtime": 1}, r"'subtime' is not a finite"),
        ({"job_id": 4.5, "res": 1, "subtime": 0, "runtime": 1}, r"'job_id' is not an integer"),
    ])
    def test_bad_job(self, tmp_path, job, message):
        path = write(tmp_path / "s.json", json.dumps({"nb_res": 4, "jobs": [job]}))
        with pytest.raises(InputError, match=message) as info:
            read_spars(path)
        assert str(path) in str(info.value)

    def test_nb_res_required(self, tmp_path):
        path = write(tmp_path / "s.json", '{"jobs": []}')
        with pytest.raises(InputError, match="--nb-res"):
            read_spars(path)

    def test_malformed_json(self, tmp_path):
        path = write(tmp_path / "s.json", '{"jobs": [\n  {"job_id": 1,,}]}')
        with pytest.raises(InputError, match="s.json: malformed JSON at line 2 column"):
            read_spars(path)


class TestWriter:
    JOBS = (TraceJob(1, 2, 0, 0, 0), TraceJob(2, 3, 10, 5, 4), TraceJob(3, 9, 12, 5, 0.5))

    def test_default_paper_semantics_and_shared_profiles(self):
        doc, report = batsim_document(self.JOBS, nb_res=4)
        assert doc["jobs"][1] == {"id": 2, "subtime": 10, "res": 3, "profile": "ph_5",
                                  "walltime": -1, "reqtime": 4}
        assert doc["profiles"] == {
            "ph_0": {"type": "parallel_homogeneous", "cpu": 0, "com": 0},
            "ph_5": {"type": "parallel_homogeneous", "cpu": 5000000000, "com": 0}}
        assert (report.profiles, report.larger_than_platform) == (2, 1)

    def test_kill_mode_keeps_unlimited_walltime_for_zero_reqtime(self):
        doc, report = batsim_document(self.JOBS, 4, BatsimOptions(walltime="kill"))
        assert [job["walltime"] for job in doc["jobs"]] == [-1, 4, 0.5]
        assert report.unlimited_walltime == 1

    def test_delay_profiles_raise_zero_runtimes(self):
        doc, report = batsim_document(self.JOBS, 4,
                                      BatsimOptions(profile="delay", min_runtime_s=1))
        assert doc["profiles"] == {"delay_1": {"type": "delay", "delay": 1},
                                   "delay_5": {"type": "delay", "delay": 5}}
        assert report.zero_runtimes_raised == 1

    @pytest.mark.parametrize("options", [
        {"profile": "delay"}, {"profile": "delay", "min_runtime_s": 0},
        {"min_runtime_s": -1.0}, {"walltime": "soft"}, {"profile": "smpi"}])
    def test_bad_options(self, options):
        with pytest.raises(InputError):
            BatsimOptions(**options)

    def test_output_loads_and_is_one_job_per_line(self, tmp_path):
        path = tmp_path / "w.json"
        write_batsim_workload(path, self.JOBS, 4, BatsimOptions(profile="delay",
                                                                min_runtime_s=2.5))
        lines = path.read_text().splitlines()
        assert sum('"id":' in line for line in lines) == 3
        workload = read_workload(path)
        assert [job.id for job in workload.jobs] == ["1", "2", "3"]
        assert workload.profiles["delay_2.5"].delay_s == 2.5

    def test_rejects_bad_jobs(self):
        with pytest.raises(InputError, match="job 7: subtime"):
            batsim_document([TraceJob(7, 1, -1, 1, 1)], 4)
        with pytest.raises(InputError, match="job id 1 appears twice"):
            batsim_document([TraceJob(1, 1, 0, 1, 1)] * 2, 4)
        with pytest.raises(InputError, match="nb_res"):
            batsim_document([], 0)


class TestConvert:
    def test_format_detection(self, tmp_path):
        assert detect_format(tmp_path / "x.swf.gz") == "swf"
        assert detect_format(tmp_path / "x.JSON") == "spars"
        assert detect_format(write(tmp_path / "noext", ' \n{"jobs": []}')) == "spars"
        assert detect_format(write(tmp_path / "trace", SMALL_SWF)) == "swf"
        assert len(read_trace(tmp_path / "trace").jobs) == 4

    def test_no_job_kept(self, tmp_path):
        path = write(tmp_path / "t.swf", HEADER + swf_record(1, 0, -1, -1, -1))
        with pytest.raises(InputError, match="no job kept"):
            convert_trace(path, tmp_path / "out.json")

    def test_convert_command(self, cli_main, tmp_path, capsys):
        source = write(tmp_path / "t.swf", SMALL_SWF)
        out = tmp_path / "out" / "t.json"
        assert cli_main(["workload", "convert", str(source), "-o", str(out), "--jobs", "3",
                         "--walltime", "kill", "--profile", "delay", "--min-runtime", "1",
                         "--drop-oversized"]) == 0
        workload = read_workload(out)
        assert [(j.id, j.walltime) for j in workload.jobs] == [("1", 60), ("3", 600),
                                                               ("5", 100)]
        printed = capsys.readouterr().out
        assert "larger than nb_res: 1" in printed
        assert "zero runtimes raised to --min-runtime: 1" in printed

    def test_convert_command_spars(self, cli_main, paper_das2_fs1, tmp_path):
        out = tmp_path / "fs1.json"
        assert cli_main(["workload", "convert", str(paper_das2_fs1), "--jobs", "100",
                         "-o", str(out)]) == 0
        assert len(read_workload(out).jobs) == 100

    def test_malformed_swf_via_command(self, cli_main, tmp_path, capsys):
        source = write(tmp_path / "bad.swf", HEADER + "1 2 3\n")
        assert cli_main(["workload", "convert", str(source), "-o",
                         str(tmp_path / "o.json")]) == 2
        assert f"{source}:5" in capsys.readouterr().err
        assert not (tmp_path / "o.json").exists()
