"""A CLI runner that knows ``snficon robin`` and a tiny campaign on the repository's inputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from snficon import cli
from snficon.commands import robin as robin_command

REPO_ROOT = Path(__file__).resolve().parents[2]
PLATFORM = REPO_ROOT / "platforms" / "aoba-64.xml"
WORKLOAD = REPO_ROOT / "workloads" / "markovian-3000.json"


@pytest.fixture
def run_cli(monkeypatch) -> Callable[..., int]:
    """``snficon ARGS...`` in this process, with the robin command registered."""
    if robin_command not in cli.SUBCOMMANDS:
        monkeypatch.setattr(cli, "SUBCOMMANDS", cli.SUBCOMMANDS + (robin_command,))

    def run(*args: str) -> int:
        return cli.main([str(arg) for arg in args])

    return run


@pytest.fixture
def tiny_campaign(tmp_path: Path) -> Path:
    """5 runs on AOBA-64: three policies on the first 40 Markovian jobs, two alphas on 30."""
    if not PLATFORM.is_file() or not WORKLOAD.is_file():
        pytest.skip("platforms/aoba-64.xml or workloads/markovian-3000.json is absent")
    path = tmp_path / "tiny.toml"
    path.write_text(f"""\
name = "tiny-robin"

[platforms]
aoba-64 = "{PLATFORM.as_posix()}"

[workloads]
m40 = {{ file = "{WORKLOAD.as_posix()}", jobs = 40 }}
m30 = {{ file = "{WORKLOAD.as_posix()}", jobs = 30 }}

[[group]]
name = "base"
platforms = ["aoba-64"]
workloads = ["m40"]
policies = ["fcfsbIpm", "snficon", "snficon-nf"]

[[group]]
name = "alpha"
platforms = ["aoba-64"]
workloads = ["m30"]
policies = ["snficon"]
sweep = {{ alpha = [10, 20000] }}
""")
    return path
