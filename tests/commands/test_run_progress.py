"""``snficon run`` shows its progress on a terminal, and nothing when its output is not one."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from snficon.drivers.progress import simulated_time, terminal_progress

REPO_ROOT = Path(__file__).resolve().parents[2]
PLATFORM = REPO_ROOT / "platforms" / "aoba-64.xml"
WORKLOAD = REPO_ROOT / "workloads" / "markovian-3000.json"


def run_command(output: Path) -> list[str]:
    """A run of 6000 jobs (the Markovian workload twice): a few seconds, more than one."""
    if not PLATFORM.is_file() or not WORKLOAD.is_file():
        pytest.skip("platforms/aoba-64.xml or workloads/markovian-3000.json is absent")
    return [sys.executable, "-m", "snficon.cli", "run", "--platform", str(PLATFORM),
            "--workload", str(WORKLOAD), "--workload", str(WORKLOAD), "--policy", "fcfsbIpm",
            "-o", str(output)]


def test_progress_on_a_terminal(tmp_path):
    leader, follower = pty.openpty()
    process = subprocess.Popen(run_command(tmp_path / "run"), stdin=subprocess.DEVNULL,
                               stdout=follower, stderr=follower, cwd=REPO_ROOT)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal's other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0
    text = b"".join(chunks).decode()
    lines = [part for part in text.split("\r") if "jobs done" in part]
    assert lines, text
    # simulated time reached, jobs done out of all, the rate
    assert "/6000 jobs done" in lines[0] and "simulated s per s" in lines[0]
    assert lines[0].startswith("simulated ")
    assert "wall time" in text  # the summary follows on a line of its own


def test_no_progress_when_not_a_terminal(tmp_path):
    done = subprocess.run(run_command(tmp_path / "run"), capture_output=True, text=True,
                          cwd=REPO_ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "jobs done" not in done.stderr + done.stdout
    assert "\r" not in done.stderr + done.stdout
    assert "wall time" in done.stdout


def test_progress_needs_a_terminal():
    assert terminal_progress(io.StringIO()) is None


def test_simulated_time_reads_as_days_and_clock():
    assert simulated_time(59.9) == "00:00:59"
    assert simulated_time(3 * 86400 + 4 * 3600 + 5 * 60 + 6) == "3d 04:05:06"
