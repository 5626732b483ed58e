"""A run owns its folder, and readers refuse partial, modified and foreign folders.

Each case as a user meets it: ``snficon`` started as a real process (the
project's console script), real signals, then what is on disk and what the
readers (``compare``, ``carbon account``) say.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from snficon.manifest import MANIFEST, check_run_folder
from snficon.platform.generate import NODE_MODELS, render_platform, write_platform

from ..commands.schedulers import write_one_node_workload, write_scheduler

SNFICON = Path(sys.executable).with_name("snficon")
pytestmark = pytest.mark.skipif(not SNFICON.is_file(), reason="the snficon script is not "
                                "installed beside this Python")


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    """(a 4-node platform, five one-node jobs)."""
    platform = write_platform(tmp_path / "p4.xml", render_platform(NODE_MODELS["aoba"], 4))
    return platform, write_one_node_workload(tmp_path / "w5.json")


def snficon(*argv: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(SNFICON), *map(str, argv)], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def run_argv(inputs, out: Path, *extra: str | Path) -> list[str | Path]:
    return ["run", "--platform", inputs[0], "--workload", inputs[1], "--policy", "fcfsbIpm",
            "-o", out, *extra]


def hidden_beside(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith("."))


def test_a_run_writes_its_manifest_last_and_owns_its_folder(inputs, tmp_path):
    out = tmp_path / "run"
    done = snficon(*run_argv(inputs, out, "--transcript"))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((out / MANIFEST).read_text())
    listed = set(manifest["files"])
    assert listed == {p.name for p in out.iterdir()} - {MANIFEST}
    assert {"out_jobs.csv", "metrics.json", "decisions.csv", "out_transcript.jsonl"} <= listed
    assert manifest["parameters"]["scheduler"] == "fcfsbIpm"
    assert check_run_folder(out).complete
    assert hidden_beside(out) == []

    # Another run into the same folder: refused, the first run untouched.
    again = snficon(*run_argv(inputs, out, "--policy", "snfIpm"))
    assert again.returncode == 2
    assert again.stderr == (f"snficon: error: cannot write {out}: it holds an earlier run; "
                            "give --overwrite to replace it, or choose another folder\n")
    assert json.loads((out / MANIFEST).read_text()) == manifest
    assert check_run_folder(out).complete

    # --overwrite replaces the whole folder: the first run's transcript does not stay.
    replaced = snficon(*run_argv(inputs, out, "--policy", "snfIpm", "--overwrite"))
    assert replaced.returncode == 0, replaced.stderr
    assert not (out / "out_transcript.jsonl").exists()
    assert json.loads((out / MANIFEST).read_text())["parameters"]["scheduler"] == "snfIpm"
    assert check_run_folder(out).complete
    assert hidden_beside(out) == []


def test_a_folder_holding_other_files_is_never_replaced(inputs, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("keep me")
    for extra in ((), ("--overwrite",)):
        refused = snficon(*run_argv(inputs, out, *extra))
        assert refused.returncode == 2
        assert f"cannot write {out}: it holds files snficon did not write (thesis.tex)" \
            in refused.stderr
        assert [p.name for p in out.iterdir()] == ["thesis.tex"]
        assert hidden_beside(out) == []


def test_an_interrupted_run_leaves_nothing_that_looks_complete(inputs, tmp_path):
    hanger = write_scheduler(tmp_path, "hang")
    out = tmp_path / "run"
    flag = tmp_path / "hung"
    process = subprocess.Popen(
        [str(SNFICON), "run", "--platform", str(inputs[0]), "--workload", str(inputs[1]),
         "--scheduler", str(hanger), "--engine", "zmq", "--set", f"flag={flag}",
         "-o", str(out)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True)
    deadline = time.monotonic() + 60
    while not flag.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert f"the output files until the interrupt are in {out}/" in err
    assert (out / "out_INCOMPLETE.txt").is_file() and (out / "out_jobs.csv").is_file()
    assert not (out / MANIFEST).exists() and not (out / "metrics.json").exists()
    assert hidden_beside(out) == []
    assert check_run_folder(out).state == "partial"

    # Readers refuse it, naming the folder and the reason.
    for argv in (("compare", out, out), ("carbon", "account", out / "out", "--carbon",
                                          _signal(tmp_path))):
        refused = snficon(*argv)
        assert refused.returncode == 2, refused.stderr
        assert f"{out}: refused, partial run folder: the run did not finish " \
               "(out_INCOMPLETE.txt: stopped at" in refused.stderr
        assert "--allow-incomplete" in refused.stderr
    allowed = snficon("compare", out, out, "--allow-incomplete", "--json", tmp_path / "c.json")
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout.startswith(f"NOTE: {out}: read although partial: ")
    assert "read although partial" in json.loads((tmp_path / "c.json").read_text())["notes"][0]

    # Running again into it (no --overwrite needed for an unfinished run) completes it.
    done = snficon(*run_argv(inputs, out))
    assert done.returncode == 0, done.stderr
    assert check_run_folder(out).complete and not (out / "out_INCOMPLETE.txt").exists()


def _signal(folder: Path) -> Path:
    path = folder / "signal.csv"
    path.write_text("timestamp_utc,gco2_per_kwh\n"
                    + "".join(f"2023-01-01T{h:02d}:00Z,{100 + h}\n" for h in range(24)))
    return path


def test_modified_and_foreign_folders_are_refused(inputs, tmp_path):
    out = tmp_path / "run"
    assert snficon(*run_argv(inputs, out)).returncode == 0
    signal_file = _signal(tmp_path)
    assert snficon("compare", out, out).returncode == 0
    assert snficon("carbon", "account", out / "out", "--carbon", signal_file,
                   "--metrics", out / "metrics.json").returncode == 0
    assert check_run_folder(out).complete  # carbon account --metrics amends the manifest

    jobs = out / "out_jobs.csv"
    jobs.write_text(jobs.read_text().replace(",COMPLETED_SUCCESSFULLY,", ",COMPLETED_KILLED,", 1))
    for argv in (("compare", out, jobs), ("carbon", "account", out / "out", "--carbon",
                                         signal_file)):
        refused = snficon(*argv)
        assert refused.returncode == 2
        assert f"{out}: refused, modified run folder: {jobs} changed after the run" \
            in refused.stderr

    foreign = tmp_path / "batsim"
    foreign.mkdir()
    (foreign / "out_jobs.csv").write_bytes(jobs.read_bytes())
    refused = snficon("compare", foreign, out, "--allow-incomplete")
    assert refused.returncode == 0  # --allow-incomplete reads anything, and says so
    assert refused.stdout.count("NOTE: ") == 2
    refused = snficon("compare", foreign, foreign)
    assert refused.returncode == 2
    assert f"{foreign}: refused, foreign run folder: no manifest.json" in refused.stderr
    assert "--foreign" in refused.stderr
    accepted = snficon("compare", "--foreign", foreign, foreign)
    assert accepted.returncode == 0, accepted.stderr
    assert accepted.stdout.startswith(f"NOTE: {foreign}: read although foreign")


def test_report_refuses_a_campaign_whose_run_folder_changed(inputs, tmp_path):
    results = tmp_path / "results"
    run = results / "runs" / "0123456789abcdef"
    assert snficon(*run_argv(inputs, run)).returncode == 0
    (results / "results.csv").write_text("id,status,platform,workload,policy,options\n"
                                         f"{run.name},done,p4,w5,fcfsbIpm,\n")
    (run / "metrics.json").write_text('{"jobs": 5}\n')
    refused = snficon("report", results, "--no-figures")
    assert refused.returncode == 2
    assert f"{run}: refused, modified run folder: {run / 'metrics.json'} changed" \
        in refused.stderr
    assert not (results / "report").exists()
