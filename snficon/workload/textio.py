"""Read plain or gzip-compressed text inputs with errors that name the file.

A file is gunzipped when it starts with the gzip magic bytes; a name ending
in ``.gz`` without them is an error. Read failures become
:class:`~snficon.errors.InputError`.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from snficon.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
_READ_ERRORS = (OSError, EOFError, zlib.error)


def _open(path: Path) -> IO[str]:
    try:
        with open(path, "rb") as probe:
            magic = probe.read(2)
    except FileNotFoundError:
        raise InputError(f"{path}: file not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if magic == GZIP_MAGIC:
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    if path.name.lower().endswith(".gz"):
        raise InputError(f"{path}: not a gzip file (no gzip header)")
    return open(path, encoding="utf-8", errors="replace")


def iter_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, line)`` from 1, gunzipping when needed."""
    path = Path(path)
    number = 0
    with _open(path) as stream:
        try:
            for number, line in enumerate(stream, start=1):
                yield number, line
        except _READ_ERRORS as exc:
            raise InputError(f"{path}: bad or truncated gzip data after line {number}: "
                             f"{exc}") from None


def read_text(path: str | Path) -> str:
    """The whole text of ``path``, gunzipped when needed."""
    path = Path(path)
    with _open(path) as stream:
        try:
            return stream.read()
        except _READ_ERRORS as exc:
            raise InputError(f"{path}: bad or truncated gzip data: {exc}") from None


def first_text_char(path: str | Path) -> str:
    """The first non-blank character of ``path`` ('' for an empty file)."""
    for _, line in iter_lines(path):
        stripped = line.strip()
        if stripped:
            return stripped[0]
    return ""
