"""A tiny platform, tiny workloads and a campaign writer, so that campaigns run in seconds."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from snficon.commands import campaign as campaign_command
from snficon.errors import SnficonError
from snficon.platform.generate import NodeModel, render_platform, write_platform

#: Distinct powers for every state (W) and short transitions (s).
TINY_MODEL = NodeModel("tiny", busy_w=200, idle_w=100, sleep_w=10,
                       off_s=8, off_w=50, on_s=32, on_w=150)

#: (subtime s, nodes, runtime s) of the tiny workload's jobs.
TINY_JOBS = [(0, 1, 40), (5, 2, 100), (30, 1, 10), (400, 4, 60), (900, 2, 300),
             (910, 1, 20), (5000, 3, 50), (5100, 1, 700)]


def write_tiny_workload(path: Path, jobs: list[tuple[float, int, float]] = TINY_JOBS) -> Path:
    """A Batsim workload on 4 nodes with ``delay`` profiles and requested times = runtimes."""
    profiles = {f"d{runtime:g}": {"type": "delay", "delay": float(runtime)}
                for _, _, runtime in jobs}
    document = {"nb_res": 4, "profiles": profiles, "jobs": [
        {"id": i + 1, "subtime": float(sub), "res": res, "profile": f"d{runtime:g}",
         "walltime": -1, "reqtime": float(runtime)} for i, (sub, res, runtime) in enumerate(jobs)]}
    path.write_text(json.dumps(document, indent=1))
    return path


@pytest.fixture
def tiny_inputs(tmp_path: Path) -> Path:
    """``tmp_path/inputs/`` with ``p4.xml`` and ``w8.json`` (8 jobs)."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    write_platform(folder / "p4.xml", render_platform(TINY_MODEL, 4))
    write_tiny_workload(folder / "w8.json")
    return folder


#: A campaign of 2 policies x 2 alphas + 2 baselines = 6 runs on the tiny inputs.
TINY_CAMPAIGN = """\
name = "tiny"

[platforms]
p4 = "inputs/p4.xml"

[workloads]
w8 = "inputs/w8.json"
w5 = { file = "inputs/w8.json", jobs = 5 }

[[group]]
name = "base"
platforms = ["p4"]
workloads = ["w8"]
policies = ["fcfsbIpm", "snfIpm", "snficon", "snficon-nf"]

[[group]]
name = "alpha"
cases = [["p4", "w5"]]
policies = ["snficon"]
sweep = { alpha = [10, 5000] }
"""


@pytest.fixture
def tiny_campaign(tmp_path: Path, tiny_inputs: Path) -> Path:
    """``tmp_path/tiny.toml``: 6 runs (4 policies on w8, snficon alpha 10 and 5000 on w5)."""
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_CAMPAIGN)
    return path


@pytest.fixture
def write_campaign(tmp_path: Path, tiny_inputs: Path) -> Callable[[str], Path]:
    """Write a campaign text to ``tmp_path/c.toml`` (inputs in ``inputs/``)."""

    def write(text: str, name: str = "c.toml") -> Path:
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``snficon campaign ...`` through the module's ``register``; (exit code, out, err)."""

    def run(*argv: str) -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog="snficon")
        campaign_command.register(parser.add_subparsers(dest="command", required=True))
        args = parser.parse_args(["campaign", *argv])
        try:
            code = int(args.func(args) or 0)
        except SnficonError as exc:
            print(f"snficon: error: {exc}", file=sys.stderr)
            code = exc.exit_code
        out, err = capsys.readouterr()
        return code, out, err

    return run
