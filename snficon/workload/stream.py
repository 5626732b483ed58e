"""Read a Batsim JSON workload one job and one profile at a time.

``json.load`` builds the whole document, several hundred bytes a job, before
anything can be dropped. :func:`stream_workload` walks the top-level object
with :meth:`json.JSONDecoder.raw_decode`, a buffer of about a megabyte at a
time, and hands each element of ``jobs`` and each entry of ``profiles`` to a
callback with its decoded value and its exact text. Top-level values other
than those two are decoded whole (only ``nb_res`` is kept).

It reads only what ``json.load`` reads the same way: anything else -- a
syntax error, a key given twice, ``jobs`` that is not an array -- raises
:class:`LeftToFullReader` (or the decoder's own error), and the caller reads
the file whole, which names the problem as it always has.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

#: Characters read at a time.
CHUNK_CHARS = 1 << 20
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class LeftToFullReader(Exception):  # noqa: N818 -- a signal to the caller, not an error
    """The file is not one the stream reader takes; read it whole."""


@dataclass
class _Scanner:
    """A window on a text file and a position in it."""

    handle: IO[str]
    decoder: json.JSONDecoder
    buffer: str = ""
    pos: int = 0
    eof: bool = False

    def _more(self) -> bool:
        """Read the next chunk (dropping what was consumed); False at the end of the file."""
        if self.eof:
            return False
        chunk = self.handle.read(CHUNK_CHARS)
        if not chunk:
            self.eof = True
            return False
        self.buffer = self.buffer[self.pos:] + chunk
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character after whitespace ("" at the end of the file)."""
        while True:
            self.pos = _WHITESPACE.match(self.buffer, self.pos).end()
            if self.pos < len(self.buffer):
                return self.buffer[self.pos]
            if not self._more():
                return ""

    def expect(self, char: str) -> None:
        """Step over ``char``, the next character after whitespace."""
        if self.peek() != char:
            raise LeftToFullReader(f"expected {char!r}")
        self.pos += 1

    def value(self) -> tuple[Any, str]:
        """The next JSON value and its text.

        A value that ends where the buffer does may be cut (a number), so it is
        decoded again with more text, unless the file ends there.
        """
        self.peek()
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError:
                if not self._more():
                    raise
                continue
            if end < len(self.buffer) or not self._more():
                break
        text = self.buffer[self.pos:end]
        self.pos = end
        return value, text

    def key(self) -> str:
        """An object's next key and the colon after it."""
        key, _ = self.value()
        if not isinstance(key, str):
            raise LeftToFullReader("an object key is not a string")
        self.expect(":")
        return key

    def more_items(self, close: str) -> bool:
        """After an item: True on a comma, False on ``close``."""
        char = self.peek()
        if char == ",":
            self.pos += 1
            return True
        if char == close:
            self.pos += 1
            return False
        raise LeftToFullReader(f"expected ',' or {close!r}")

    def opens(self, char: str, close: str) -> bool:
        """Step over the opening ``char`` of an array or object; False when it is empty."""
        self.expect(char)
        if self.peek() == close:
            self.pos += 1
            return False
        return True


def _stream_jobs(scanner: _Scanner, job: Callable[[Any, str], None]) -> None:
    if scanner.opens("[", "]"):
        while True:
            job(*scanner.value())
            if not scanner.more_items("]"):
                return


def _stream_profiles(scanner: _Scanner, profile: Callable[[str, Any, str], None]) -> None:
    if scanner.opens("{", "}"):
        while True:
            name = scanner.key()
            profile(name, *scanner.value())
            if not scanner.more_items("}"):
                return


def stream_workload(path: str | Path, decoder: json.JSONDecoder, *,
                    job: Callable[[Any, str], None],
                    profile: Callable[[str, Any, str], None]) -> int | None:
    """Walk the workload file ``path``: ``job(value, text)`` for each job in the file's
    order, ``profile(name, value, text)`` for each profile; return ``nb_res`` (None
    when absent).

    Raises :class:`LeftToFullReader` or a decoding error for a file to read whole,
    including a valid one whose ``nb_res`` is not a positive integer or that
    lacks ``jobs`` or ``profiles``.
    """
    seen: set[str] = set()
    nb_res: Any = None
    with open(path, encoding="utf-8") as handle:
        scanner = _Scanner(handle, decoder)
        if scanner.opens("{", "}"):
            while True:
                key = scanner.key()
                if key in seen:
                    raise LeftToFullReader(f"top-level key {key!r} appears twice")
                seen.add(key)
                if key == "jobs":
                    _stream_jobs(scanner, job)
                elif key == "profiles":
                    _stream_profiles(scanner, profile)
                else:
                    value, _ = scanner.value()
                    if key == "nb_res":
                        nb_res = value
                if not scanner.more_items("}"):
                    break
        if scanner.peek() != "":
            raise LeftToFullReader("extra data after the workload")
    if not {"jobs", "profiles"} <= seen:
        raise LeftToFullReader("jobs or profiles missing")
    if nb_res is not None and (type(nb_res) is not int or nb_res <= 0):
        raise LeftToFullReader("nb_res is not a positive integer")
    return nb_res
