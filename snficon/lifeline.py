"""Child processes that end when their parent does, even when it is killed with SIGKILL.

A campaign's worker processes and the ``pybatsim`` process of
``snficon run --engine zmq`` are useless once the process that started them
is gone: nobody reads their results, and a scheduler would stay listening
on its loopback port for ever. Nothing tells them when the parent is killed
with ``kill -9`` (no clean-up runs), so they watch for it themselves:

- on Linux the kernel sends the child SIGKILL when its parent dies
  (``prctl(PR_SET_PDEATHSIG)``); "parent" is the *thread* that forked the
  child, so children are started from the main thread;
- elsewhere, a worker runs a daemon thread that checks every
  :data:`WATCH_PERIOD_S` whether its parent process changed
  (:func:`die_with_parent`); a child that runs another program
  (:func:`exec_dies_with_parent`) has no such thread, so there the guarantee
  is Linux's only.

Either way a child whose parent died before it could arrange this ends at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

#: ``PR_SET_PDEATHSIG`` of ``<linux/prctl.h>``.
PR_SET_PDEATHSIG = 1
#: Seconds between two checks of the parent's pid by the watchdog thread.
WATCH_PERIOD_S = 0.5


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this machine (another user's counts as alive):
    how a left-over scratch folder named after its writer's pid is told from one in use."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _prctl() -> Callable[..., int] | None:
    """libc's ``prctl`` on Linux (None elsewhere or when it cannot be found)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        return libc.prctl  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def die_with_parent(parent_pid: int) -> None:
    """In a forked or spawned child of ``parent_pid``: end (SIGKILL) when that process does.

    Linux's death signal where available, else a watchdog thread polling the
    parent's pid.
    """
    prctl = _prctl()
    if prctl is not None and prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0:
        _end_if_orphaned(parent_pid)
        return
    _end_if_orphaned(parent_pid)
    threading.Thread(target=_watch, args=(parent_pid,), name="snficon-lifeline",
                     daemon=True).start()


def exec_dies_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` for :class:`subprocess.Popen` making the child program end (SIGKILL)
    when this process does; None where the system offers no way (not Linux).

    libc's ``prctl`` is looked up here, before the fork: between fork and exec
    the child only calls it and compares two pids.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def arrange() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        _end_if_orphaned(parent)

    return arrange


def _end_if_orphaned(parent_pid: int) -> None:
    """Kill this process when its parent is no longer ``parent_pid`` (it died meanwhile)."""
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGKILL)


def _watch(parent_pid: int) -> None:
    while True:
        time.sleep(WATCH_PERIOD_S)
        _end_if_orphaned(parent_pid)
