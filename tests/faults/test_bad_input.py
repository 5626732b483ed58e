"""Bad input as a user meets it: one line naming the file, the documented exit status, no
traceback, and nothing written outside (or instead of) what the user asked for.

Each case runs the real ``snficon`` (or ``snficon-batsim``) command in a subprocess.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.faults.conftest import REPO_ROOT, SNFICON

PLATFORM = REPO_ROOT / "platforms" / "aoba-64.xml"
BATSIM = SNFICON.with_name("snficon-batsim")


def snficon(*args: str | Path, cwd: Path, command: Path = SNFICON,
            timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(command), *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def refused(result: subprocess.CompletedProcess, status: int, *words: str) -> str:
    """The one error line of ``result``, after checking its status and that it names
    ``words`` (the file, the option...)."""
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, result.stderr
    assert result.returncode == status, result.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


def tree(folder: Path) -> set[str]:
    """Every path below ``folder`` (hidden ones included), relative to it."""
    return {str(path.relative_to(folder)) for path in folder.rglob("*")}


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 20-job Markovian workload made by the command itself."""
    folder = tmp_path_factory.mktemp("inputs")
    result = snficon("workload", "markovian", "--jobs", "20", "-o", "w.json", cwd=folder)
    assert result.returncode == 0, result.stderr
    return folder / "w.json"


def swf(path: Path, first_record: list[str]) -> Path:
    other = ["2", "10", "0", "100", "2", "-1", "-1", "2", "100"] + ["-1"] * 9
    path.write_text("; MaxProcs: 4\n" + " ".join(first_record) + "\n" + " ".join(other) + "\n")
    return path


# -- item 3: nothing written outside the chosen folder, no output over an input ---------------

def test_campaign_labels_stay_inside_the_robin_folder(tmp_path: Path, workload: Path) -> None:
    victim = tmp_path / "elsewhere" / "keep.json"
    victim.parent.mkdir()
    victim.write_text('{"mine": 1}\n')
    (tmp_path / "c.toml").write_text(textwrap.dedent(f"""\
        [platforms]
        aoba = "{PLATFORM}"
        [workloads]
        "{victim.with_suffix('')}" = {{ file = "{workload}", jobs = 5 }}
        "../../escape" = {{ file = "{workload}", jobs = 6 }}
        plain = {{ file = "{workload}", jobs = 7 }}
        [[group]]
        name = "g"
        platforms = ["aoba"]
        workloads = ["{victim.with_suffix('')}", "../../escape", "plain"]
        policies = ["snfIpm"]
        """))
    before = tree(tmp_path)
    result = snficon("campaign", "c.toml", "--robin", "robin", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert victim.read_text() == '{"mine": 1}\n'
    written = tree(tmp_path) - before
    assert all(path.startswith("robin") for path in written), written
    cut = sorted(p.name for p in (tmp_path / "robin" / "workloads").iterdir())
    assert len(cut) == 3 and "plain.json" in cut, cut
    assert all("/" not in name and not name.startswith(".") for name in cut)


def test_a_label_no_file_can_be_named_after_is_refused(tmp_path: Path, workload: Path) -> None:
    (tmp_path / "c.toml").write_text(textwrap.dedent(f"""\
        [platforms]
        aoba = "{PLATFORM}"
        [workloads]
        "\\u0007" = {{ file = "{workload}", jobs = 5 }}
        [[group]]
        name = "g"
        platforms = ["aoba"]
        workloads = ["\\u0007"]
        policies = ["snfIpm"]
        """))
    before = tree(tmp_path)
    refused(snficon("campaign", "c.toml", "--robin", "robin", cwd=tmp_path), 2,
            "c.toml", "workload label", "cannot name a file")
    assert tree(tmp_path) == before


@pytest.mark.parametrize("action", ["convert", "flex"])
def test_an_output_that_is_the_input_is_refused(tmp_path: Path, workload: Path,
                                                action: str) -> None:
    source = (swf(tmp_path / "t.swf", ["1", "0", "0", "100", "2", "-1", "-1", "2", "100"]
                  + ["-1"] * 9) if action == "convert" else tmp_path / "w.json")
    if action == "flex":
        source.write_bytes(workload.read_bytes())
    original = source.read_bytes()
    (tmp_path / "sub").mkdir()
    # the same file under another spelling
    result = snficon("workload", action, source.name, "-o", f"sub/../{source.name}",
                     cwd=tmp_path)
    refused(result, 2, source.name, "own input")
    assert source.read_bytes() == original
    assert tree(tmp_path) == {source.name, "sub"}


def test_compare_json_over_its_input_or_into_a_file_is_refused(tmp_path: Path,
                                                               workload: Path) -> None:
    result = snficon("run", "--platform", PLATFORM, "--workload", workload, "--policy",
                     "snfIpm", "-o", "r", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    log = tmp_path / "r" / "out_jobs.csv"
    original = log.read_bytes()
    refused(snficon("compare", log, "r", "--foreign", "--json", log, cwd=tmp_path), 2,
            "out_jobs.csv", "own input")
    assert log.read_bytes() == original
    (tmp_path / "afile").write_text("x")
    refused(snficon("compare", "r", "r", "--json", "afile/c.json", cwd=tmp_path), 2,
            "afile")


# -- item 9: one line instead of a traceback --------------------------------------------------

def test_a_workload_that_is_not_utf8_is_refused(tmp_path: Path, workload: Path) -> None:
    data = workload.read_bytes()
    (tmp_path / "bad.json").write_bytes(data[:40] + b"\xff" + data[40:])
    refused(snficon("workload", "check", "bad.json", cwd=tmp_path), 2, "bad.json", "UTF-8")
    refused(snficon("run", "--platform", PLATFORM, "--workload", "bad.json", "-o", "r",
                    cwd=tmp_path), 2, "bad.json", "UTF-8")
    assert tree(tmp_path) == {"bad.json"}


def test_a_workload_nested_thousands_deep_is_refused(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    refused(snficon("workload", "check", "deep.json", cwd=tmp_path), 2, "deep.json", "nested")


@pytest.mark.parametrize(("field", "name"), [(0, "job number"), (4, "allocated processors")])
def test_an_swf_field_too_large_for_json_is_refused(tmp_path: Path, field: int,
                                                    name: str) -> None:
    record = ["1", "0", "0", "100", "2", "-1", "-1", "2", "100"] + ["-1"] * 9
    record[field] = "1" + "0" * 30
    swf(tmp_path / "t.swf", record)
    refused(snficon("workload", "convert", "t.swf", "-o", "w.json", cwd=tmp_path), 2,
            "t.swf:2", name, "too large")
    assert tree(tmp_path) == {"t.swf"}


def test_a_platform_nested_thousands_deep_is_refused(tmp_path: Path) -> None:
    text = PLATFORM.read_text()
    at = text.index("<zone")
    (tmp_path / "p.xml").write_text(text[:at] + "<a>" * 100_000 + "</a>" * 100_000 + text[at:])
    refused(snficon("platform", "show", "p.xml", cwd=tmp_path), 2, "p.xml", "nested")


BAD_SCHEDULER = """\
import sys
import zmq
socket = zmq.Context().socket(zmq.REP)
socket.bind(sys.argv[1])
socket.recv()
socket.send(b'{"now": 0, "events": [\\xff]}' if sys.argv[2] == "bytes"
            else b'{"now": 0, "events": ' + b"[" * 100000 + b"]" * 100000 + b"}")
socket.recv()
"""


@pytest.mark.parametrize(("answer", "problem"), [("bytes", "not UTF-8"),
                                                 ("deep", "nested too deeply")])
def test_a_scheduler_answer_that_cannot_be_read_ends_the_run_in_one_line(
        tmp_path: Path, workload: Path, answer: str, problem: str) -> None:
    import socket

    with socket.socket() as probe:  # a free loopback port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    endpoint = f"tcp://127.0.0.1:{port}"
    (tmp_path / "sched.py").write_text(BAD_SCHEDULER)
    scheduler = subprocess.Popen([sys.executable, "sched.py", endpoint, answer], cwd=tmp_path)
    try:
        result = snficon("-p", PLATFORM, "-w", workload, "-e", "out/out", "-s", endpoint, "-q",
                         "--answer-timeout", "30", cwd=tmp_path, command=BATSIM)
    finally:
        scheduler.kill()
        scheduler.wait()
    line = refused(result, 3, "the scheduler's answer", problem)
    assert line.startswith("snficon-batsim: error: at t=0")
    assert (tmp_path / "out" / "out_INCOMPLETE.txt").is_file()  # marked, as documented


@pytest.mark.parametrize("endpoint", ["garbage", "tcp://127.0.0.1:notaport", "foo://x"])
def test_an_unparsable_endpoint_is_refused_before_any_output(tmp_path: Path, workload: Path,
                                                            endpoint: str) -> None:
    result = snficon("-p", PLATFORM, "-w", workload, "-e", "out/out", "-s", endpoint,
                     cwd=tmp_path, command=BATSIM)
    refused(result, 2, repr(endpoint))
    assert tree(tmp_path) == set()


@pytest.mark.parametrize(("text", "problem"), [
    ("class Broken(:\n    pass\n", "SyntaxError: invalid syntax (broken.py:1)"),
    ("raise RuntimeError('at import')\n", "RuntimeError: at import in broken.py:1"),
    ("x = 1\n", "no scheduler named Broken"),
])
def test_an_in_process_scheduler_file_that_cannot_load_is_one_line(
        tmp_path: Path, workload: Path, text: str, problem: str) -> None:
    (tmp_path / "broken.py").write_text(text)
    result = snficon("run", "--platform", PLATFORM, "--workload", workload, "--scheduler",
                     "broken.py", "-o", "r", cwd=tmp_path)
    refused(result, 6, "broken.py", problem)
    assert not (tmp_path / "r").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".r.")]


@pytest.fixture(scope="module")
def campaign_results(tmp_path_factory: pytest.TempPathFactory, workload: Path) -> Path:
    folder = tmp_path_factory.mktemp("campaign")
    (folder / "c.toml").write_text(textwrap.dedent(f"""\
        [platforms]
        aoba = "{PLATFORM}"
        [workloads]
        w = {{ file = "{workload}", jobs = 10 }}
        [[group]]
        name = "g"
        platforms = ["aoba"]
        workloads = ["w"]
        policies = ["snfIpm"]
        """))
    result = snficon("campaign", "c.toml", "-o", "results", "--workers", "1", cwd=folder)
    assert result.returncode == 0, result.stderr
    (folder / "results" / "results.parquet").unlink(missing_ok=True)
    return folder / "results"


def _with_metric(text: str, column: str, value: str) -> str:
    """The results table ``text`` with ``column`` of its first row set to ``value``."""
    lines = text.splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[lines[0].split(",").index(column)] = value
    return "".join([lines[0], ",".join(cells), *lines[2:]])


@pytest.mark.parametrize(("damage", "problem"), [
    (lambda text: text.encode() + b"\xff", "cannot read"),
    (lambda text: text.replace("platform,", "", 1).encode(), "no column platform"),
    (lambda text: (text + '1,2,"unterminated\n').encode(), "not a results table"),
    (lambda text: b"", "not a results table"),
    (lambda text: _with_metric(text, "mean_wait", "abc").encode(), "mean_wait is not a number"),
])
def test_report_on_a_malformed_results_table_is_refused(tmp_path: Path, campaign_results: Path,
                                                        damage, problem: str) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "results.csv").write_bytes(damage((campaign_results / "results.csv").read_text()))
    refused(snficon("report", "results", "--no-figures", cwd=tmp_path), 2, "results.csv",
            problem)
    assert tree(tmp_path) == {"results", "results/results.csv"}


# -- item 4: bounded sizes --------------------------------------------------------------------

def test_a_campaign_of_a_trillion_runs_is_counted_and_refused(tmp_path: Path,
                                                             workload: Path) -> None:
    (tmp_path / "c.toml").write_text(textwrap.dedent(f"""\
        [platforms]
        aoba = "{PLATFORM}"
        [workloads]
        w = "{workload}"
        [[group]]
        name = "huge"
        platforms = ["aoba"]
        workloads = ["w"]
        policies = ["snfIpm", "fcfsbIpm"]
        sweep = {{ timeout = {{ start = 1, stop = 1000000000000, step = 1 }} }}
        """))
    for extra in (["--dry-run"], ["--robin", "robin"], ["-o", "results"]):
        result = snficon("campaign", "c.toml", *extra, cwd=tmp_path, timeout=30)
        refused(result, 2, "c.toml", "2,000,000,000,000 runs", "--max-runs 100,000",
                'group "huge"')
    assert tree(tmp_path) == {"c.toml"}
    small = snficon("campaign", "c.toml", "--dry-run", "--max-runs", "1", cwd=tmp_path)
    refused(small, 2, "--max-runs 1")


@pytest.mark.parametrize(("option", "args"), [
    ("--jobs", ("workload", "markovian", "--jobs", "1000000000000", "-o", "w.json")),
    ("--nodes", ("workload", "markovian", "--nodes", "1000000000000", "-o", "w.json")),
    ("--nodes", ("platform", "generate", "aoba", "--nodes", "1000000000000", "-o", "p.xml")),
    ("--group", ("platform", "generate", "--group", "1000000000000:aoba", "-o", "p.xml")),
    ("--days", ("carbon", "synthetic", "--days", "1000000000000", "-o", "c.csv")),
    ("--jobs", ("workload", "checkpoints", "--jobs", "1000000000000", "-o", "w.json")),
    ("--jobs", ("demo", "--jobs", "1000000000000", "-o", "demo")),
    ("--workers", ("campaign", "c.toml", "--workers", "1000000", "-o", "results")),
])
def test_an_option_sizing_an_allocation_is_range_checked(tmp_path: Path, option: str,
                                                         args: tuple[str, ...]) -> None:
    result = snficon(*args, cwd=tmp_path, timeout=30)
    refused(result, 2, option)
    assert tree(tmp_path) == set()


def test_results_json_untouched_by_the_checks(campaign_results: Path) -> None:
    """The fixture's campaign itself ran normally (the checks refuse only what is wrong)."""
    rows = (campaign_results / "results.csv").read_text().splitlines()
    assert len(rows) == 2 and ",done," in rows[1]
    assert json.loads(next((campaign_results / "runs").iterdir()).joinpath(
        "metrics.json").read_text())["jobs"] == 10


def test_a_robin_endpoint_without_a_valid_port_is_refused(tmp_path: Path) -> None:
    endpoint = "tcp://127.0.0.1:99999999"
    (tmp_path / "x.yaml").write_text(
        f"batcmd: batsim -p p.xml -w w.json -e out/out -s {endpoint}\n"
        f"schedcmd: pybatsim snfIpm -s {endpoint}\noutput-dir: out\nsimulation-timeout: 10\n"
        "ready-timeout: 5\nsuccess-timeout: 5\nfailure-timeout: 5\n")
    refused(snficon("robin", "x.yaml", "--engine", "embedded", cwd=tmp_path), 2, "x.yaml",
            repr(endpoint))
    assert tree(tmp_path) == {"x.yaml"}
