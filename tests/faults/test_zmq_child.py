"""``kill -9`` of ``snficon run --engine zmq``: its pybatsim child ends with it instead of
listening on its loopback port for ever."""

from __future__ import annotations

import signal
import sys
import time

import pytest

from tests.faults.conftest import REPO_ROOT, gone, wait_for

psutil = pytest.importorskip("psutil")


@pytest.mark.skipif(not sys.platform.startswith("linux"),
                    reason="the child's end with its parent relies on Linux's prctl")
def test_kill_9_of_a_zmq_run_ends_its_scheduler_process(tmp_path, start):
    out = tmp_path / "run"
    process = start("run", "--platform", str(REPO_ROOT / "platforms/aoba-64.xml"),
                    "--workload", str(REPO_ROOT / "workloads/markovian-3000.json"),
                    "--policy", "snficon", "--engine", "zmq", "-o", str(out), cwd=tmp_path)

    def scheduler() -> object:
        children = psutil.Process(process.pid).children()
        listening = [c for c in children
                     if any(conn.status == psutil.CONN_LISTEN for conn in c.net_connections())]
        return listening[0] if listening else None

    child = wait_for(scheduler, "pybatsim process listening", process)
    port = next(conn.laddr.port for conn in child.net_connections()
                if conn.status == psutil.CONN_LISTEN)
    assert child.net_connections()[0].laddr.ip == "127.0.0.1"
    process.kill()
    process.communicate(timeout=10)
    assert process.returncode == -signal.SIGKILL
    assert gone(child.pid, within_s=3.0), "the pybatsim process outlived `snficon run`"
    # The leader thread shows as a zombie while the killed process's other threads (ZeroMQ's
    # I/O thread holds the socket) are still being torn down: give the port the same bound.
    deadline = time.monotonic() + 3.0
    while True:
        still = [c for c in psutil.net_connections("tcp")
                 if c.status == psutil.CONN_LISTEN and c.laddr.port == port]
        if not still or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert still == [], f"port {port} still listened on"
