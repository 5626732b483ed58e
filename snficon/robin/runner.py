"""Run a robin experiment file as ``robin FILE.yaml`` (batexpe 1.2) does.

1. Wait up to ``ready-timeout`` for the port of Batsim's socket endpoint
   (``-s``/``--socket-endpoint`` in ``batcmd``, default ``tcp://localhost:28000``)
   to be free, so that an earlier simulation still holding it is not joined.
2. Write ``schedcmd`` and ``batcmd`` as they are to ``OUTPUT-DIR/cmd/sched.bash``
   and ``cmd/batsim.bash`` (mode 755), as robin does, so that either side can be
   re-run by hand (``bash OUTPUT-DIR/cmd/sched.bash`` from the same folder).
3. Start them, the scheduler first, each as robin does (``bash -eux FILE``, so the
   logs begin with bash's trace of the command) in the current folder, the
   repository root prepended to ``PYTHONPATH``; their output goes to
   ``OUTPUT-DIR/log/sched.out.log``, ``log/sched.err.log`` and ``log/batsim.log``.
4. When one process ends, the other gets ``success-timeout`` seconds to end if
   the first succeeded, ``failure-timeout`` if it failed, and is killed after.
   Both are killed when ``simulation-timeout`` seconds have passed since the start.

The run succeeds only when both processes exited with status 0 on their own.
With ``engine="embedded"`` a leading ``batsim`` of ``batcmd`` is replaced by
``snficon-batsim`` (this project's Batsim-compatible engine); ``cmd/batsim.bash``
then holds the command that ran.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from snficon.errors import InputError
from snficon.registry import PROJECT_ROOT
from snficon.robin.files import RobinFile

DEFAULT_ENDPOINT = "tcp://localhost:28000"
ENGINES = ("batsim", "embedded")
_LEADING_BATSIM = re.compile(r"^(\s*)(?:\S*/)?batsim(?=\s|$)")


@dataclass
class ProcessOutcome:
    """How one of the two processes ended."""

    name: str  # "batsim" or "scheduler"
    command: str
    log: str  # where its output is
    returncode: int | None = None
    killed: str = ""  # why robin killed it, if it did

    @property
    def succeeded(self) -> bool:
        return self.returncode == 0 and not self.killed

    def describe(self) -> str:
        if self.killed:
            return f"{self.name} killed ({self.killed})"
        if self.returncode is None:
            return f"{self.name} not started"
        return f"{self.name} exited {self.returncode}"


@dataclass
class RobinOutcome:
    """Both processes' fates, the wall time and an error that stopped the run early."""

    source: str
    output_dir: Path
    processes: list[ProcessOutcome] = field(default_factory=list)
    wall_s: float = 0.0
    error: str = ""

    @property
    def succeeded(self) -> bool:
        return not self.error and len(self.processes) == 2 and all(
            process.succeeded for process in self.processes)

    def summary(self) -> str:
        parts = [process.describe() for process in self.processes]
        if self.error:
            parts.append(self.error)
        state = "succeeded" if self.succeeded else "FAILED"
        return (f"robin {self.source}: {state}: {'; '.join(parts)} ({self.wall_s:.1f} s); "
                f"logs in {self.output_dir / 'log'}/")


def embedded_command(batcmd: str, source: str = "<robin file>") -> str:
    """``batcmd`` with its leading ``batsim`` replaced by ``snficon-batsim``."""
    if not _LEADING_BATSIM.match(batcmd):
        raise InputError(f"{source}: key 'batcmd': --engine embedded needs a command that "
                         f"starts with batsim, got {batcmd!r}")
    return _LEADING_BATSIM.sub(r"\1snficon-batsim", batcmd, count=1)


def socket_port(batcmd: str, source: str = "<robin file>") -> int:
    """The TCP port of Batsim's socket endpoint in ``batcmd`` (28000 when not given)."""
    try:
        words = shlex.split(batcmd)
    except ValueError as exc:
        raise InputError(f"{source}: key 'batcmd': cannot split the command: {exc}") from None
    endpoint = DEFAULT_ENDPOINT
    for i, word in enumerate(words):
        if word in ("-s", "--socket-endpoint") and i + 1 < len(words):
            endpoint = words[i + 1]
        elif word.startswith("--socket-endpoint="):
            endpoint = word.partition("=")[2]
    match = re.search(r":(\d+)$", endpoint)
    if match is None:
        raise InputError(f"{source}: key 'batcmd': no TCP port in the socket endpoint "
                         f"{endpoint!r}")
    if not 0 < int(match.group(1)) <= 65535:
        raise InputError(f"{source}: key 'batcmd': the socket endpoint {endpoint!r} has no "
                         "valid TCP port (1 to 65535)")
    return int(match.group(1))


def port_free(port: int) -> bool:
    """Whether nothing listens on ``port`` (TIME_WAIT leftovers do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True


def child_environment() -> dict[str, str]:
    """This environment with the repository root first on PYTHONPATH and this
    Python's scripts folder (``pybatsim``, ``snficon-batsim``) last on PATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT_ROOT),
                                         *filter(None, [env.get("PYTHONPATH")])])
    scripts = str(Path(sys.executable).parent)
    paths = env.get("PATH", "").split(os.pathsep) if env.get("PATH") else []
    if scripts not in paths:
        env["PATH"] = os.pathsep.join([*paths, scripts])
    return env


def write_command_files(output_dir: Path, batcmd: str, schedcmd: str) -> dict[str, Path]:
    """Write robin's ``cmd/batsim.bash`` and ``cmd/sched.bash`` (the commands as they are,
    mode 755) under ``output_dir``; return their paths by process name."""
    folder = output_dir / "cmd"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"batsim": folder / "batsim.bash", "scheduler": folder / "sched.bash"}
    for name, command in (("batsim", batcmd), ("scheduler", schedcmd)):
        paths[name].write_text(command, encoding="utf-8")
        paths[name].chmod(0o755)
    return paths


def run_robin(experiment: RobinFile, engine: str = "batsim", *,
              poll_s: float = 0.05) -> RobinOutcome:
    """Run ``experiment`` (see the module's text); never raises for a process' failure."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
    batcmd = experiment.batcmd
    if engine == "embedded":
        batcmd = embedded_command(batcmd, experiment.source)
    port = socket_port(batcmd, experiment.source)
    output = Path(experiment.output_dir)
    logs = output / "log"
    logs.mkdir(parents=True, exist_ok=True)
    outcome = RobinOutcome(source=experiment.source, output_dir=output)
    started = time.monotonic()

    ready_deadline = started + experiment.ready_timeout
    while not port_free(port):
        if time.monotonic() >= ready_deadline:
            outcome.error = (f"port {port} of Batsim's socket still in use after the "
                             f"ready-timeout ({experiment.ready_timeout:g} s)")
            outcome.wall_s = time.monotonic() - started
            return outcome
        time.sleep(min(0.2, experiment.ready_timeout))

    commands = write_command_files(output, batcmd, experiment.schedcmd)
    shell = shutil.which("bash") or "/bin/sh"
    env = child_environment()
    sched = ProcessOutcome("scheduler", experiment.schedcmd,
                           f"{logs / 'sched.out.log'}, {logs / 'sched.err.log'}")
    batsim = ProcessOutcome("batsim", batcmd, str(logs / "batsim.log"))
    outcome.processes = [batsim, sched]
    files = [open(logs / "sched.out.log", "wb"), open(logs / "sched.err.log", "wb"),  # noqa: SIM115
             open(logs / "batsim.log", "wb")]  # noqa: SIM115
    running: dict[str, tuple[ProcessOutcome, subprocess.Popen]] = {}
    try:
        running["scheduler"] = (sched, subprocess.Popen(
            [shell, "-eux", str(commands["scheduler"])], stdin=subprocess.DEVNULL, stdout=files[0],
            stderr=files[1], env=env, start_new_session=True))
        running["batsim"] = (batsim, subprocess.Popen(
            [shell, "-eux", str(commands["batsim"])], stdin=subprocess.DEVNULL, stdout=files[2],
            stderr=subprocess.STDOUT, env=env, start_new_session=True))
        _supervise(experiment, running, started, poll_s)
    finally:
        for record, process in running.values():
            if process.poll() is None:
                _kill(process)
                record.killed = record.killed or "robin stopped"
                record.returncode = process.returncode
        for stream in files:
            stream.close()
    outcome.wall_s = time.monotonic() - started
    return outcome


def _supervise(experiment: RobinFile, running: dict[str, tuple[ProcessOutcome, subprocess.Popen]],
               started: float, poll_s: float) -> None:
    """Wait for both processes, applying the simulation, success and failure timeouts."""
    simulation_deadline = started + experiment.simulation_timeout
    grace_deadline: float | None = None
    grace_reason = ""
    live = dict(running)
    while live:
        now = time.monotonic()
        for name, (record, process) in list(live.items()):
            code = process.poll()
            if code is None:
                continue
            record.returncode = code
            del live[name]
            if live and grace_deadline is None:
                ok = code == 0
                key = "success-timeout" if ok else "failure-timeout"
                delay = experiment.success_timeout if ok else experiment.failure_timeout
                grace_deadline = now + delay
                grace_reason = (f"still running {delay:g} s ({key}) after the {name} "
                                f"{'succeeded' if ok else 'failed'}")
        if not live:
            return
        if now >= simulation_deadline:
            reason = f"simulation-timeout of {experiment.simulation_timeout:g} s reached"
        elif grace_deadline is not None and now >= grace_deadline:
            reason = grace_reason
        else:
            time.sleep(poll_s)
            continue
        for record, process in live.values():
            _kill(process)
            record.killed = reason
            record.returncode = process.returncode
        return


def _kill(process: subprocess.Popen, grace_s: float = 2.0) -> None:
    """SIGTERM the process' group, SIGKILL it after ``grace_s``, and reap it."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
