"""One campaign at a time on a results folder: an exclusive lock on ``RESULTS/.campaign.lock``.

Two campaigns on one folder would both run every run not done yet (each sees
it due) and overwrite each other's results table. The second one is refused
at once with :class:`ResultsBusyError`, naming the folder and the process
holding it; it does not wait. The lock is the kernel's (``flock``): it is
released when the campaign process and its workers end, however they end
(also ``kill -9``), so a stale lock file never blocks a resume. On a network
file system it holds as far as that file system implements ``flock``
(NFS v4 and Lustre do for the processes of one machine; locking across
machines depends on the mount options).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from snficon.campaign.errors import ResultsBusyError

LOCK = ".campaign.lock"


@contextmanager
def results_lock(results: str | Path) -> Iterator[Path]:
    """Hold the lock of ``results`` (created if missing) within the block; raise
    :class:`ResultsBusyError` when another process holds it. Without ``fcntl``
    (Windows) nothing is locked."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield Path(results) / LOCK
        return
    path = Path(results) / LOCK
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(descriptor, 200).decode("utf-8", "replace").strip()
            who = f" ({holder})" if holder else ""
            raise ResultsBusyError(
                f"{Path(results)}: another campaign{who} is running on this results folder; "
                "wait for it to end (then run this command again to resume) or choose "
                "another -o") from None
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"pid {os.getpid()} on {socket.gethostname()}\n".encode())
        yield path
    finally:
        os.close(descriptor)  # releases the lock
