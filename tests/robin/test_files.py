"""Robin files written by ``snficon campaign --robin`` and how bad files are rejected."""

from __future__ import annotations

import csv
import json
import shlex

import pytest

from snficon.errors import InputError
from snficon.robin.campaign import repo_path
from snficon.robin.files import KEYS, parse_flat_yaml, parse_robin, read_robin, render_robin
from tests.robin.conftest import PLATFORM, REPO_ROOT

GOOD = """\
batcmd: batsim -p platforms/aoba-64.xml -w w.json -E -e out/x/out
schedcmd: "pybatsim fcfs -t 0 -o '{}'"
output-dir: out/x
simulation-timeout: 604800
ready-timeout: 10
success-timeout: 3600
failure-timeout: 5
"""


def written_files(run_cli, campaign, folder):
    assert run_cli("campaign", campaign, "--robin", folder) == 0
    return sorted(folder.glob("*.yaml"))


def test_campaign_writes_one_robin_file_per_run(run_cli, tiny_campaign, tmp_path, capsys):
    files = written_files(run_cli, tiny_campaign, tmp_path / "robin")
    assert len(files) == 5
    yaml = pytest.importorskip("yaml")
    index = {row["file"]: row for row in csv.DictReader(open(tmp_path / "robin" / "index.csv"))}
    assert sorted(index) == [path.name for path in files]
    for path in files:
        data = yaml.safe_load(path.read_text())
        assert list(data) == list(KEYS)
        assert parse_flat_yaml(path.read_text()) == data  # the fallback reader agrees
        experiment = read_robin(path)
        bat = shlex.split(experiment.batcmd)
        assert bat[:3] == ["batsim", "-p", "platforms/aoba-64.xml"]  # relative to the root
        assert "-E" in bat and bat[bat.index("-e") + 1] == f"{experiment.output_dir}/out"
        sched = shlex.split(experiment.schedcmd)
        assert sched[0] == "pybatsim" and sched[2:4] == ["-t", "0"] and sched[4] == "-o"
        # both ends on loopback: pybatsim would bind every interface by default
        assert sched[6:8] == ["-s", "tcp://127.0.0.1:28000"]
        assert sched[8:] == ["-v", "warning"]  # pybatsim logs every message otherwise
        assert bat[bat.index("-s") + 1] == "tcp://127.0.0.1:28000"
        options = json.loads(sched[5])
        policy = index[path.name]["policy"]
        assert sched[1] == {"fcfsbIpm": "fcfsbIpm"}.get(policy, "snficon")
        assert options["platform"] == "platforms/aoba-64.xml"
        assert options["decisions"] == f"{experiment.output_dir}/decisions.csv"
        if policy == "snficon-nf":
            assert options["fallback"] is False and options["gate"] is True
        assert experiment.output_dir.endswith(path.stem)
        assert all(getattr(experiment, key.replace("-", "_")) > 0 for key in KEYS[3:])
    # the cut workloads hold the first N jobs
    for label, jobs in (("m40", 40), ("m30", 30)):
        document = json.loads((tmp_path / "robin" / "workloads" / f"{label}.json").read_text())
        assert len(document["jobs"]) == jobs


def test_paths_are_relative_to_the_repository_root(tmp_path):
    assert repo_path(PLATFORM) == "platforms/aoba-64.xml"
    assert repo_path(REPO_ROOT / "out" / "r") == "out/r"
    assert repo_path(tmp_path) == str(tmp_path.resolve())  # outside the repository: absolute


def test_render_and_parse_round_trip():
    experiment = parse_robin(GOOD, "good.yaml")
    again = parse_robin(render_robin(experiment), "again.yaml")
    assert again.as_dict() == experiment.as_dict()
    assert experiment.schedcmd == "pybatsim fcfs -t 0 -o '{}'"


@pytest.mark.parametrize(("edit", "words"), [
    (lambda text: text.replace("ready-timeout: 10\n", ""), ["'ready-timeout'", "missing"]),
    (lambda text: text.replace("failure-timeout: 5", "failure-timeout: soon"),
     ["bad.yaml:7", "'failure-timeout'", "seconds"]),
    (lambda text: text.replace("success-timeout: 3600", "success-timeout: -1"),
     ["bad.yaml:6", "'success-timeout'"]),
    (lambda text: text.replace("output-dir: out/x", "output-dir: ''"),
     ["bad.yaml:3", "'output-dir'", "non-empty string"]),
    (lambda text: text + "sched-cmd: x\n", ["bad.yaml:8", "unknown key 'sched-cmd'"]),
    (lambda text: "- just\n- a list\n", ["bad.yaml", "mapping"]),
    (lambda text: text.replace("batcmd: batsim", "batcmd: [batsim"), ["bad.yaml", "YAML"]),
])
def test_bad_robin_file_is_rejected_naming_the_key(tmp_path, edit, words):
    path = tmp_path / "bad.yaml"
    path.write_text(edit(GOOD))
    with pytest.raises(InputError) as error:
        read_robin(path)
    for word in words:
        assert word in str(error.value)


@pytest.mark.parametrize(("key", "value", "words"), [
    ("ready-timeout", "0.5", ["bad.yaml:5", "'ready-timeout'", "whole seconds", "0 s"]),
    ("success-timeout", "0.5", ["bad.yaml:6", "'success-timeout'", "whole seconds"]),
    ("simulation-timeout", "90.25", ["bad.yaml:4", "would wait 90 s, not 90.25"]),
    ("failure-timeout", "20000000000", ["bad.yaml:7", "'failure-timeout'", "overflows"]),
])
def test_timeouts_robin_would_misread_are_refused(tmp_path, key, value, words):
    path = tmp_path / "bad.yaml"
    path.write_text("\n".join(f"{line.split(':')[0]}: {value}" if line.startswith(key + ":")
                              else line for line in GOOD.splitlines()) + "\n")
    assert f"{key}: {value}" in path.read_text()
    with pytest.raises(InputError) as error:
        read_robin(path)
    for word in words:
        assert word in str(error.value)


def test_whole_seconds_written_as_floats_are_accepted(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(GOOD.replace("ready-timeout: 10", "ready-timeout: 10.0"))
    assert read_robin(path).ready_timeout == 10


def test_fractional_timeout_on_the_command_line(run_cli, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD.replace("success-timeout: 3600", "success-timeout: 0.5"))
    assert run_cli("robin", path) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "'success-timeout'" in err and "whole seconds" in err
    assert not (tmp_path / "out").exists()


def test_bad_robin_file_on_the_command_line(run_cli, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(GOOD.replace("simulation-timeout: 604800\n", ""))
    assert run_cli("robin", path) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "'simulation-timeout'" in err


def test_flat_parser_reads_quoting_styles():
    data = parse_flat_yaml('a: "x \\"y\\"" # note\nb: \'it\'\'s\'\nc: 1.5\nd: plain text\n---\n')
    assert data == {"a": 'x "y"', "b": "it's", "c": 1.5, "d": "plain text"}
    with pytest.raises(InputError, match="given twice"):
        parse_flat_yaml("a: 1\na: 2\n")


def test_missing_inputs_are_a_warning_when_only_writing_robin_files(run_cli, tiny_campaign,
                                                                    tmp_path, capsys):
    text = tiny_campaign.read_text()
    missing = tmp_path / "das2-fs2-3000.json"
    text = text.replace("[workloads]\n", f'[workloads]\ndas2 = {{ file = "{missing}", '
                        'make = "uv run snficon workload convert ..." }\n')
    text += ('\n[[group]]\nname = "traces"\nplatforms = ["aoba-64"]\nworkloads = ["das2"]\n'
             'policies = ["snficon", "fcfsbIpm"]\n')
    tiny_campaign.write_text(text)
    capsys.readouterr()
    files = written_files(run_cli, tiny_campaign, tmp_path / "robin")
    out, err = capsys.readouterr()
    assert len(files) == 5  # the runs whose inputs exist
    assert err.startswith("snficon: warning: 1 input file(s) of ")
    assert "the 2 runs using them get no robin file" in err
    assert f"das2: {missing}" in err and "make it with: uv run snficon workload convert" in err
    assert "5 robin files in" in out
    rows = list(csv.DictReader(open(tmp_path / "robin" / "index.csv")))
    assert "das2" not in {row["workload"] for row in rows} and len(rows) == 5


def test_a_trace_is_converted_once_for_its_robin_files(run_cli, tmp_path):
    """Two runs naming one SWF trace (one cut to 3 jobs): one conversion in DIR/cache, which
    the uncut run's batsim command reads and the cut workload is made from."""
    from snficon.campaign.conversion import CONVERSIONS
    from snficon.workload.convert import convert_trace
    from tests.campaign.test_conversion import write_swf

    trace = write_swf(tmp_path / "t.swf")
    campaign = tmp_path / "trace.toml"
    campaign.write_text(f"""\
[platforms]
aoba-64 = "{PLATFORM.as_posix()}"
[workloads]
t = {{ file = "t.swf", convert = {{ nb_res = 64 }} }}
t3 = {{ file = "t.swf", convert = {{ nb_res = 64 }}, jobs = 3 }}
[[group]]
name = "g"
platforms = ["aoba-64"]
workloads = ["t", "t3"]
policies = ["fcfsbIpm"]
""")
    folder = tmp_path / "robin"
    files = written_files(run_cli, campaign, folder)
    [entry] = [p for p in (folder / "cache" / CONVERSIONS).iterdir() if not p.name[0] == "."]
    direct = tmp_path / "direct.json"
    convert_trace(trace, direct, nb_res=64)
    assert (entry / "workload.json").read_bytes() == direct.read_bytes()
    workloads = sorted(shlex.split(read_robin(path).batcmd)[4] for path in files)
    assert workloads == sorted([str(entry / "workload.json"),
                                str(folder / "workloads" / "t3.json")])
    assert len(json.loads((folder / "workloads" / "t3.json").read_text())["jobs"]) == 3
