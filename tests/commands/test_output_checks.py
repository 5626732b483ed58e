"""Every command that writes checks its outputs before any work (issue 12).

Each command is given an output below a regular file (or in a read-only
folder) and inputs that do not exist: the error must be about the output,
which shows that it was checked before any input was read or any run made.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from snficon.cli import main
from snficon.drivers import batsim_cli
from snficon.robin.files import RobinFile, write_robin

from ..conftest import REPO_ROOT

MISSING = "no-such-input"

#: name -> (argv builder from (bad output folder, tmp_path), what the error names).
Argv = Callable[[Path, Path], list[str]]


def _campaign(tmp_path: Path) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'name = "c"\n[platforms]\np = "{REPO_ROOT / "platforms/aoba-64.xml"}"\n'
                    f'[workloads]\nw = "{tmp_path / MISSING}.json"\n'
                    '[[group]]\nname = "g"\nplatforms = ["p"]\nworkloads = ["w"]\n'
                    'policies = ["fcfsbIpm"]\n')
    return path


def _robin(bad: Path, tmp_path: Path) -> list[str]:
    experiment = RobinFile(batcmd="batsim -p p.xml -w w.json -e out", schedcmd="pybatsim x",
                           output_dir=str(bad / "run"), simulation_timeout=10,
                           ready_timeout=1, success_timeout=1, failure_timeout=1)
    return ["robin", str(write_robin(tmp_path / "r.yaml", experiment)), "--engine", "embedded"]


COMMANDS: dict[str, tuple[Argv, str]] = {
    "run": (lambda bad, tmp: ["run", "--platform", MISSING, "--workload", MISSING,
                              "-o", str(bad / "run")], "run"),
    "run --set decisions": (lambda bad, tmp: [
        "run", "--platform", MISSING, "--workload", MISSING, "--policy", "fcfsbIpm",
        "-o", str(tmp / "fine"), "--set", f"decisions={bad / 'd.csv'}"], "d.csv"),
    "campaign": (lambda bad, tmp: ["campaign", str(_campaign(tmp)), "-o", str(bad / "res")],
                 "res"),
    "campaign --robin": (lambda bad, tmp: ["campaign", str(_campaign(tmp)),
                                           "--robin", str(bad / "robin")], "robin"),
    "demo": (lambda bad, tmp: ["demo", "-o", str(bad / "demo"), "--platform",
                               str(tmp / "p.xml"), "--workload", str(tmp / "w.json")], "demo"),
    "report": (lambda bad, tmp: ["report", str(tmp / MISSING), "-o", str(bad / "report")],
               "report"),
    "workload convert": (lambda bad, tmp: ["workload", "convert", MISSING, "-o",
                                           str(bad / "w.json")], "w.json"),
    "workload markovian": (lambda bad, tmp: ["workload", "markovian", "-o",
                                             str(bad / "w.json")], "w.json"),
    "platform generate": (lambda bad, tmp: ["platform", "generate", "aoba", "--nodes", "4",
                                            "-o", str(bad / "p.xml")], "p.xml"),
    "robin": (_robin, "run"),
}


@pytest.fixture
def bad_folder(request, tmp_path: Path):
    """A place where nothing can be written, and the reason the error must give."""
    if request.param == "below-a-file":
        blocker = tmp_path / "blocker"
        blocker.write_text("a regular file\n")
        yield blocker, f"{blocker} is a file, not a folder"
        return
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as root: permission bits do not stop writes here (the "
                        "below-a-file case checks the same path)")
        yield folder, "Permission denied"
    finally:
        folder.chmod(0o755)


def _cases() -> list:
    """Every command below a file; two of them in a read-only folder too (skipped as root)."""
    cases = [pytest.param(name, "below-a-file", id=f"below-a-file-{name}") for name in COMMANDS]
    return cases + [pytest.param(name, "read-only", id=f"read-only-{name}")
                    for name in ("run", "platform generate")]


@pytest.mark.parametrize(("name", "bad_folder"), _cases(), indirect=["bad_folder"])
def test_output_checked_before_any_work(name: str, bad_folder, tmp_path: Path, capsys):
    folder, reason = bad_folder
    build, named = COMMANDS[name]
    before = sorted(p.name for p in tmp_path.iterdir())
    code = main(build(folder, tmp_path))
    err = capsys.readouterr().err
    assert code == 2, err
    line = err.strip().splitlines()[-1]
    assert line.startswith(f"snficon: error: cannot write {folder}/"), err
    assert named in line and reason in line
    made = set(p.name for p in tmp_path.iterdir()) - set(before)
    assert made <= {"c.toml", "r.yaml"}  # nothing but the inputs this test wrote


def test_snficon_batsim_checks_its_prefix_first(tmp_path: Path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("a regular file\n")
    code = batsim_cli.main(["-p", MISSING, "-w", MISSING, "-E", "-e", str(blocker / "out")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == (f"snficon-batsim: error: cannot write {blocker}/out_jobs.csv: "
                           f"{blocker} is a file, not a folder")


def test_file_output_that_is_a_folder(tmp_path: Path, capsys):
    code = main(["platform", "generate", "aoba", "--nodes", "4", "-o", str(tmp_path)])
    assert code == 2
    assert f"cannot write {tmp_path}: it is a folder, not a file" in capsys.readouterr().err


def test_missing_parent_folders_are_made(tmp_path: Path, capsys):
    target = tmp_path / "new" / "deeper" / "p.xml"
    assert main(["platform", "generate", "aoba", "--nodes", "4", "-o", str(target)]) == 0
    assert target.read_text().startswith("<?xml")
