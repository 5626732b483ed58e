"""A one-node Slurm on this machine for the tests: one already running, or one started here.

:func:`bring_up` returns a :class:`SlurmNode` (the partition to submit to, the
environment that points ``sbatch``/``squeue`` at its slurm.conf, and what to
stop) or raises :class:`Unavailable` saying exactly why no Slurm could be had,
which the fixture turns into a skip. A Slurm started here is Debian's
``slurm-wlm`` 22.05 with ``munge``: munged as the munge user (unless one
answers already), slurmctld and slurmd as root with a slurm.conf written into
a temporary folder (state, spool, logs and pid files there too), so nothing
under /etc is written; :meth:`SlurmNode.stop` stops the daemons it started
and removes that folder.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

#: Seconds the node may take to show ``idle`` in ``sinfo`` after the daemons start.
READY_TIMEOUT_S = 60.0
#: The partition of a Slurm started here.
PARTITION = "debug"
MUNGE_SOCKET_DIR = Path("/run/munge")

SLURM_CONF = """\
# One-node Slurm for snficon's Slurm test (written by tests/slurm/slurm_node.py).
ClusterName=snficon-test
SlurmctldHost={host}(127.0.0.1)
SlurmUser=root
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool
SlurmctldPidFile={folder}/slurmctld.pid
SlurmdPidFile={folder}/slurmd.pid
SlurmctldLogFile={folder}/slurmctld.log
SlurmdLogFile={folder}/slurmd.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=5
KillWait=5
Waittime=0
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory} State=UNKNOWN
PartitionName={partition} Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


class Unavailable(Exception):
    """No Slurm could be had here; the message says why (the test skips with it)."""


@dataclass
class SlurmNode:
    partition: str
    env: dict[str, str]                     # os.environ plus SLURM_CONF when started here
    started: list[tuple[str, int]] = field(default_factory=list)  # (name, pid), in order
    folder: Path | None = None              # the temporary folder of a Slurm started here
    made_dirs: list[Path] = field(default_factory=list)  # folders made outside it (/run/munge)
    bring_up_s: float = 0.0

    def run(self, *command: str, timeout: float = 20) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(command), env=self.env, capture_output=True, text=True,
                              timeout=timeout, check=False)

    def stop(self) -> None:
        """Stop what :func:`bring_up` started (last started first) and remove its folder."""
        for name, pid in reversed(self.started):
            _terminate(pid, name)
        self.started.clear()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        for made in reversed(self.made_dirs):
            shutil.rmtree(made, ignore_errors=True)
        self.made_dirs.clear()


def _terminate(pid: int, name: str, wait_s: float = 15.0) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not _alive(pid):
            return
        time.sleep(0.2)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _read_pid(path: Path, wait_s: float = 10.0) -> int | None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            return int(path.read_text().strip())
        except (OSError, ValueError):
            time.sleep(0.1)
    return None


def running_partition(env: dict[str, str]) -> str | None:
    """The default (else first) partition of a Slurm that answers ``sinfo`` with an idle or
    mixed node, or None."""
    if shutil.which("sinfo") is None:
        return None
    try:
        shown = subprocess.run(["sinfo", "-h", "-o", "%P %t"], env=env, capture_output=True,
                               text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if shown.returncode != 0:
        return None
    usable = [line.split() for line in shown.stdout.splitlines() if len(line.split()) == 2]
    usable = [(part, state) for part, state in usable if state.rstrip("*~#") in ("idle", "mix")]
    if not usable:
        return None
    defaults = [part for part, _ in usable if part.endswith("*")]
    return (defaults or [usable[0][0]])[0].rstrip("*")


def _munge_answers() -> bool:
    if shutil.which("munge") is None or shutil.which("unmunge") is None:
        return False
    try:
        credential = subprocess.run(["munge", "-n"], capture_output=True, timeout=10,
                                    check=False)
        if credential.returncode != 0:
            return False
        decoded = subprocess.run(["unmunge"], input=credential.stdout, capture_output=True,
                                 timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return decoded.returncode == 0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _node_resources() -> tuple[int, int]:
    """(CPUs, memory in MB) as slurmd itself sees them (``slurmd -C``)."""
    shown = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, timeout=20,
                           check=False)
    cpus = re.search(r"\bCPUs=(\d+)", shown.stdout)
    memory = re.search(r"\bRealMemory=(\d+)", shown.stdout)
    if shown.returncode != 0 or not cpus or not memory:
        raise Unavailable(f"slurmd -C could not tell this machine's CPUs and memory: "
                          f"{(shown.stderr or shown.stdout).strip()!r}")
    return int(cpus.group(1)), int(memory.group(1))


def _tail(path: Path, lines: int = 5) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def bring_up(timeout_s: float = READY_TIMEOUT_S) -> SlurmNode:
    """A Slurm to submit to: the one that answers ``sinfo`` already, else one started here.

    Raises Unavailable (with the reason) when there is none and none can be started:
    not root, slurm-wlm or munge not installed, a daemon that does not start, or a node
    not idle within ``timeout_s``; whatever was started is stopped again then.
    """
    env = dict(os.environ)
    partition = running_partition(env)
    if partition is not None:
        return SlurmNode(partition, env)
    if os.geteuid() != 0:
        raise Unavailable("no Slurm answers sinfo here, and starting one needs root")
    missing = [tool for tool in ("munged", "slurmctld", "slurmd", "sinfo", "sbatch",
                                 "squeue", "scancel")
               if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
               is None]
    if missing:
        raise Unavailable(f"no Slurm answers sinfo here and {', '.join(missing)} "
                          "missing: install Debian's slurm-wlm and munge "
                          "(apt-get install slurm-wlm munge)")
    env["PATH"] = env.get("PATH", "") + ":/usr/sbin:/sbin"
    started = time.monotonic()
    folder = Path(tempfile.mkdtemp(prefix="snficon-slurm-"))
    node = SlurmNode(PARTITION, env, folder=folder)
    try:
        _start(node, folder)
        _wait_idle(node, folder, timeout_s)
    except BaseException:
        node.stop()
        raise
    node.bring_up_s = time.monotonic() - started
    return node


def _start(node: SlurmNode, folder: Path) -> None:
    env = node.env
    if not _munge_answers():
        key = Path("/etc/munge/munge.key")
        if not key.exists():
            raise Unavailable(f"munged needs {key}, which is missing (the munge package "
                              "makes it; or mungekey --create as the munge user)")
        if not MUNGE_SOCKET_DIR.exists():
            MUNGE_SOCKET_DIR.mkdir(parents=True)
            node.made_dirs.append(MUNGE_SOCKET_DIR)
        shutil.chown(MUNGE_SOCKET_DIR, "munge", "munge")
        pid_file = MUNGE_SOCKET_DIR / "munged.pid"
        pid_file.unlink(missing_ok=True)
        munged_path = shutil.which("munged", path=env["PATH"]) or "munged"
        munged = subprocess.run(["runuser", "-u", "munge", "--", munged_path],
                                capture_output=True, text=True, timeout=20, check=False)
        pid = _read_pid(pid_file)
        if munged.returncode != 0 or pid is None:
            raise Unavailable(f"munged did not start (exit {munged.returncode}): "
                              f"{(munged.stderr or munged.stdout).strip()!r}")
        node.started.append(("munged", pid))
        if not _munge_answers():
            raise Unavailable("munged started but munge -n | unmunge fails")
    host = socket.gethostname().split(".")[0]
    cpus, memory = _node_resources()
    for sub in ("state", "spool"):
        (folder / sub).mkdir()
    conf = folder / "slurm.conf"
    conf.write_text(SLURM_CONF.format(host=host, folder=folder, cpus=cpus, memory=memory,
                                      partition=PARTITION, ctld_port=_free_port(),
                                      slurmd_port=_free_port()))
    env["SLURM_CONF"] = str(conf)
    for daemon, extra in (("slurmctld", ["-i"]), ("slurmd", [])):
        ran = subprocess.run([daemon, "-f", str(conf), *extra], env=env, capture_output=True,
                             text=True, timeout=30, check=False)
        pid = _read_pid(folder / f"{daemon}.pid")
        if ran.returncode != 0 or pid is None:
            raise Unavailable(f"{daemon} did not start (exit {ran.returncode}): "
                              f"{(ran.stderr or ran.stdout).strip()!r}; its log: "
                              f"{_tail(folder / f'{daemon}.log')}")
        node.started.append((daemon, pid))


def _wait_idle(node: SlurmNode, folder: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    shown = ""
    while time.monotonic() < deadline:
        for name, pid in node.started:
            if not _alive(pid):
                raise Unavailable(f"{name} exited while the node came up; "
                                  f"its log: {_tail(folder / f'{name}.log')}")
        if running_partition(node.env) == node.partition:
            return
        try:
            shown = node.run("sinfo", "-h", "-o", "%P %t", timeout=10).stdout.strip()
        except subprocess.TimeoutExpired:
            shown = "(sinfo timed out)"
        time.sleep(1)
    raise Unavailable(f"the Slurm started here shows no idle node after {timeout_s:.0f} s "
                      f"(sinfo: {shown!r}); slurmd's log: {_tail(folder / 'slurmd.log')}")


def main() -> int:
    """``python -m tests.slurm.slurm_node``: bring a Slurm up by hand, say how to reach it,
    and stop it again on Ctrl-C or SIGTERM (to try ``--executor slurm`` on this machine)."""
    try:
        node = bring_up()
    except Unavailable as why:
        print(f"no Slurm: {why}", file=sys.stderr)
        return 1
    if not node.started and node.folder is None:
        print(f"a Slurm answers sinfo already: partition {node.partition}")
        return 0

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        print(f"export SLURM_CONF={node.env['SLURM_CONF']}   # partition {node.partition}, "
              f"up in {node.bring_up_s:.1f} s; Ctrl-C stops it", flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        node.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
