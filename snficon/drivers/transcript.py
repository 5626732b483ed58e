"""The protocol transcript of a run: every message, in order, as JSON lines.

Same format as the recordings of real Batsim in ``conformance/cases/*/transcript.jsonl``:
one ``{"dir": "sim->sched" | "sched->sim", "msg": {...}}`` object per line.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snficon.fileio import atomic_write_text

SIM_TO_SCHED = "sim->sched"
SCHED_TO_SIM = "sched->sim"


@dataclass
class Transcript:
    """Messages exchanged between simulator and scheduler, in order."""

    entries: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def record(self, direction: str, message: dict[str, Any]) -> None:
        """Keep a copy of ``message`` (the scheduler may mutate what it received)."""
        self.entries.append((direction, copy.deepcopy(message)))

    def record_text(self, direction: str, text: str) -> None:
        """Keep a message received as text (decoded; unreadable text kept as a string)."""
        try:
            message = json.loads(text)
        except json.JSONDecodeError:
            message = {"unreadable": text}
        self.entries.append((direction, message))

    def write(self, path: str | Path) -> Path:
        lines = [json.dumps({"dir": d, "msg": m}) for d, m in self.entries]
        return atomic_write_text(path, "\n".join(lines) + "\n")

    @classmethod
    def read(cls, path: str | Path) -> Transcript:
        entries = []
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    item = json.loads(line)
                    entries.append((item["dir"], item["msg"]))
        return cls(entries)
