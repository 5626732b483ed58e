"""Loading Batsim workloads (snficon/workload/reader.py) and ``snficon workload check``."""

from __future__ import annotations

import json

import pytest

from snficon.errors import InputError, UnsupportedError
from snficon.workload.reader import read_workload
from snficon.workload.summary import summarize

PROFILES = {"p1": {"type": "parallel_homogeneous", "cpu": 1e9, "com": 0},
            "d1": {"type": "delay", "delay": 5}}


def job(**changes):
    raw = {"id": 7, "subtime": 10, "res": 2, "profile": "p1", "walltime": -1, "reqtime": 20}
    raw.update(changes)
    return {key: value for key, value in raw.items() if value is not None}


def write_workload(tmp_path, jobs, profiles=None, nb_res=4):
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": nb_res, "jobs": jobs,
                                "profiles": PROFILES if profiles is None else profiles}))
    return path


@pytest.mark.parametrize("raw, message", [
    (job(subtime=None), "missing field 'subtime'"),
    (job(subtime=-1), "'subtime' is negative"),
    (job(subtime="soon"), "'subtime' is not a number"),
    (job(profile="p9"), "profile 'p9' does not exist"),
    (job(res=0), "'res' must be at least 1"),
])
def test_bad_job_names_file_and_job(tmp_path, raw, message):
    path = write_workload(tmp_path, [raw])
    with pytest.raises(InputError, match=message) as info:
        read_workload(path)
    assert str(info.value).startswith(f"{path}: job 7")


@pytest.mark.parametrize("delay", [0, -3])
def test_non_positive_delay_names_file_and_profile(tmp_path, delay):
    path = write_workload(tmp_path, [job(profile="d0")],
                          profiles={"d0": {"type": "delay", "delay": delay}})
    with pytest.raises(InputError, match="'delay' must be positive") as info:
        read_workload(path)
    assert str(info.value).startswith(f"{path}: profile 'd0'")


def test_unsupported_profile_type(tmp_path):
    path = write_workload(tmp_path, [job(profile="m")],
                          profiles={"m": {"type": "msg_par", "cpu": [1], "com": [0]}})
    with pytest.raises(UnsupportedError, match="profile 'm': profile type 'msg_par'") as info:
        read_workload(path)
    assert str(path) in str(info.value)


def test_malformed_json_gives_line_and_column(tmp_path):
    path = tmp_path / "w.json"
    path.write_text('{"nb_res": 4,\n "jobs": [}\n')
    with pytest.raises(InputError, match=r"malformed JSON at line 2 column 11") as info:
        read_workload(path)
    assert str(path) in str(info.value)


def test_job_larger_than_platform_loads(tmp_path):
    workload = read_workload(write_workload(tmp_path, [job(res=64)], nb_res=4))
    assert workload.jobs[0].res == 64
    assert summarize(workload).larger_than_platform == 1


def test_summary_line(tmp_path):
    path = write_workload(tmp_path, [job(), job(id=8, subtime=110, res=3, profile="d1")])
    line = summarize(read_workload(path)).line()
    assert line == (f"{path}: 2 jobs, 2 profiles, subtime 10..110 s (span 100 s), "
                    "max res 3, nb_res 4")


def test_check_command(cli_main, tmp_path, capsys):
    path = write_workload(tmp_path, [job()])
    assert cli_main(["workload", "check", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: 1 jobs, 2 profiles")


def test_check_command_reports_bad_file(cli_main, tmp_path, capsys):
    path = write_workload(tmp_path, [job(res=0)])
    assert cli_main(["workload", "check", str(path)]) == 2
    assert f"{path}: job 7" in capsys.readouterr().err
