"""A progress line for a long in-process run, on a terminal only.

``snficon run`` on a whole trace may simulate for minutes; on a terminal it
shows, rewritten in place on stderr about once a second::

    simulated 12d 03:25:10, 1834/3000 jobs done, 2.9e+04 simulated s per s (36 s)

The link between the scheduler and the engine calls :meth:`RunProgress.tick`
once per message; the clock is read only every :data:`CHECK_EVERY` messages,
so the cost in the loop is one counter. Nothing is shown when stderr is not
a terminal (:func:`terminal_progress` returns None).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TextIO

from snficon.engine.simulator import BatsimEngine

#: Messages between two looks at the wall clock.
CHECK_EVERY = 64


def simulated_time(seconds: float) -> str:
    """``[Nd ]HH:MM:SS`` of simulated seconds."""
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    text = f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
    return f"{days}d {text}" if days else text


@dataclass
class RunProgress:
    """Rewrites one line on ``stream`` at most every ``interval_s`` seconds of wall time."""

    stream: TextIO
    interval_s: float = 1.0
    _count: int = 0
    _started: float = field(default_factory=time.monotonic)
    _next_at: float = 0.0
    _width: int = 0

    def __post_init__(self) -> None:
        self._next_at = self._started + self.interval_s

    def tick(self, engine: BatsimEngine) -> None:
        """One message passed; show the line if its time has come."""
        self._count += 1
        if self._count % CHECK_EVERY:
            return
        now = time.monotonic()
        if now >= self._next_at:
            self._next_at = now + self.interval_s
            self.show(engine, now)

    def show(self, engine: BatsimEngine, now: float | None = None) -> None:
        """Write the line for ``engine``'s state now."""
        elapsed = (time.monotonic() if now is None else now) - self._started
        summary = engine.tables.summary
        done = summary.finished + summary.rejected
        rate = engine.now / elapsed if elapsed > 0 else 0.0
        line = (f"simulated {simulated_time(engine.now)}, {done}/{len(engine.ctx.jobs)} jobs "
                f"done, {rate:.2g} simulated s per s ({elapsed:.0f} s)")
        self.stream.write("\r" + line.ljust(self._width))
        self.stream.flush()
        self._width = len(line)

    def close(self) -> None:
        """End the line (when one was shown), so what follows starts on its own."""
        if self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0


def terminal_progress(stream: TextIO) -> RunProgress | None:
    """A :class:`RunProgress` on ``stream`` when it is a terminal, else None."""
    isatty = getattr(stream, "isatty", None)
    return RunProgress(stream) if isatty is not None and isatty() else None
