"""Real campaigns and runs started as a user starts them, in their own session, so that a
test can kill them (and see what is left) with real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
#: The ``snficon`` command of this environment (no ``uv run`` in between: a
#: ``kill -9`` must reach the campaign process itself).
SNFICON = Path(sys.executable).with_name("snficon")


def gone(pid: int, within_s: float) -> bool:
    """Whether process ``pid`` is gone (or a zombie) within ``within_s`` seconds."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            with open(f"/proc/{pid}/stat") as stream:
                if stream.read().rpartition(")")[2].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def wait_for(condition: Callable[[], object], what: str, process: subprocess.Popen,
             within_s: float = 60.0) -> object:
    """Poll ``condition`` until it returns something true; fail if ``process`` ends first."""
    deadline = time.monotonic() + within_s
    while True:
        found = condition()
        if found:
            return found
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the process ended (status {process.returncode}) before {what}:\n"
                        f"{out}\n{err}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {within_s:g} s")
        time.sleep(0.05)


@pytest.fixture
def start() -> Iterator[Callable[..., subprocess.Popen]]:
    """Start ``snficon ARGS...`` in a new session; every one still running at the end of the
    test is killed with its process group."""
    started: list[subprocess.Popen] = []

    def launch(*args: str, cwd: Path) -> subprocess.Popen:
        process = subprocess.Popen([str(SNFICON), *args], cwd=cwd, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        started.append(process)
        return process

    yield launch
    for process in started:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
