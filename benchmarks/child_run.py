"""One child process measured by the kernel: its wall time, CPU time and peak RSS.

Shared by the benchmarks that run each case in a fresh interpreter
(``paper_speed.py``, ``whole_trace.py``), on this tree or on an older commit
checked out beside it. The child's output goes to files, not pipes, so a
chatty child cannot block on a full pipe while it is waited for.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ChildRun:
    """What one finished child used, and what it printed."""

    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    stdout: str


def run_child(command: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None,
              what: str | None = None) -> ChildRun:
    """Run ``command`` to its end; stop with its last error lines when it fails."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        began = time.perf_counter()
        process = subprocess.Popen(list(command), cwd=cwd, env=None if env is None else dict(env),
                                   stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - began
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{what or ' '.join(command)} failed (exit {process.returncode}):"
                             f"\n{err.read()[-2000:]}")
        out.seek(0)
        return ChildRun(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0,
                        out.read())


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1 (a count of runs)."""
    value = int(text)
    if value < 1:
        raise ValueError(f"{text} is not at least 1")
    return value


def tree_env(tree: Path) -> dict[str, str]:
    """This environment, with ``tree``'s code first on the import path."""
    return {**os.environ, "PYTHONPATH": str(tree)}


@contextlib.contextmanager
def commit_worktree(repo: Path, commit: str, scratch: Path) -> Iterator[Path]:
    """A detached worktree of ``commit`` under ``scratch``, removed afterwards
    (SystemExit if git cannot check it out)."""
    target = scratch / f"base-{commit}"
    done = subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", str(target),
                           commit], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"cannot check out {commit}: {done.stderr.strip()}")
    try:
        yield target
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(target)],
                       capture_output=True)


def callgrind_instructions(command: Sequence[str], *, cwd: Path,
                           env: Mapping[str, str] | None = None, what: str | None = None) -> int:
    """The instructions ``command`` executes, counted by valgrind's callgrind.

    A count, not a time: the same for the same code and inputs whatever else the
    machine runs, so two trees can be compared on a shared machine to well under
    1 %, at about 50 times the run's time. Python's hash seed is fixed (set and
    dict orders would otherwise differ from run to run), and OpenBLAS runs in the
    calling thread (its idle worker threads' wait loop would otherwise add about
    0.4 % that grows with the wall time: 66 to 93 million instructions on DAS2 FS1).
    """
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (Debian: apt install valgrind)")
    with tempfile.TemporaryDirectory(prefix="callgrind-") as folder:
        counts = Path(folder) / "callgrind.out"
        run_child(["valgrind", "--tool=callgrind", f"--callgrind-out-file={counts}",
                   *command], cwd=cwd, env={**(env or os.environ), "PYTHONHASHSEED": "0",
                        "OPENBLAS_NUM_THREADS": "1"},
                  what=what)
        for line in counts.read_text(encoding="utf-8").splitlines():
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise SystemExit(f"{what or ' '.join(command)}: callgrind wrote no total")
