"""Ctrl-C (SIGINT) and Slurm's or a shell's SIGTERM, handled alike by the command-line tools.

The first of these signals raises :class:`Interrupted` (a ``KeyboardInterrupt``,
so every clean-up written for Ctrl-C runs: a campaign's pool workers are
ended, a scheduler process is stopped, the output files of what happened
until then are written and marked unfinished). The signals that follow are
ignored until the process exits, so that the clean-up is never cut short:
``uv run`` forwards the signal it gets to its child, and a terminal's Ctrl-C
reaches the whole process group, so one Ctrl-C often arrives twice. The
clean-up is bounded (a few seconds); SIGKILL remains to force an exit.

The exit status is ``128 + signal number``, as shells report a process
killed by that signal: 130 after SIGINT, 143 after SIGTERM.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

#: The signals that stop a run cleanly.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived; ``signum`` says which (``exit_code`` = 128 + signum)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def exit_code_of(interrupt: BaseException) -> int:
    """128 + the signal behind ``interrupt`` (a plain ``KeyboardInterrupt`` is SIGINT: 130)."""
    return 128 + signal_of(interrupt)


def signal_of(interrupt: BaseException) -> int:
    """The signal number behind a ``KeyboardInterrupt`` (SIGINT unless it says otherwise)."""
    return int(getattr(interrupt, "signum", signal.SIGINT))


def describe(interrupt: BaseException) -> str:
    """``interrupted`` after SIGINT, ``terminated`` after SIGTERM."""
    return "terminated" if signal_of(interrupt) == signal.SIGTERM else "interrupted"


@dataclass
class _Catcher:
    """The handler: raise once, then only count."""

    first: int | None = None
    repeats: int = 0

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.first is not None:
            self.repeats += 1  # clean-up in progress: let it finish
            return
        self.first = signum
        raise Interrupted(signum)


@contextmanager
def stop_signals_raise() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`Interrupted` once (see the module).

    On leaving, the previous handlers come back unless a signal arrived: then
    both signals stay ignored until the process exits, so a late duplicate
    cannot turn a clean exit into a traceback. Outside the main thread it does
    nothing (Python delivers signals to the main thread only).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    catcher = _Catcher()
    previous = {signum: signal.signal(signum, catcher) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_IGN if catcher.first is not None else handler)


def default_stop_signals_in_child() -> None:
    """In a forked worker: SIGINT ignored (the parent handles Ctrl-C), SIGTERM ends it at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

