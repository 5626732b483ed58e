"""File output: checked before any work, written atomically, marked when a run did not finish.

- :func:`check_output_folder`, :func:`check_output_file`, :func:`check_output_prefix`
  tell at start-up whether a command's outputs can be written (a file in the
  way, no permission, a read-only disk) and raise :class:`OutputError`
  (``cannot write PATH: reason``), so that no simulation runs for nothing.
  Missing folders are fine: they are made when the outputs are written, as
  ``mkdir -p`` would.
- :func:`atomic_write_text`: a result is either absent or complete, never half-written.
- :func:`mark_incomplete`: Batsim's output files of a run that stopped before
  its end (a crashed scheduler, an interrupt) are kept, with a
  ``PREFIX_INCOMPLETE.txt`` marker beside them saying why; metrics refuse
  outputs so marked (:func:`incomplete_reason`).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from snficon.errors import OutputError

#: Name of the marker beside the output files of an unfinished run (after the prefix).
INCOMPLETE_SUFFIX = "_INCOMPLETE.txt"


def _nearest_existing(path: Path) -> Path:
    """``path`` or its nearest ancestor that exists (``.`` for a relative path's start)."""
    probe = path
    while not probe.exists() and not probe.is_symlink():
        parent = probe.parent
        if parent == probe:
            break
        probe = parent
    return probe


def _check_can_create_in(folder: Path, shown: str | Path) -> None:
    """``folder`` (existing) must be a folder in which this process can create files."""
    if not folder.is_dir():
        raise OutputError(f"cannot write {shown}: {folder} is a file, not a folder")
    try:  # the real test: permission bits, read-only mounts, ACLs, quotas, root squash
        handle, probe = tempfile.mkstemp(prefix=".snficon-write-test-", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write {shown}: {folder}: "
                          f"{exc.strerror or exc}") from None
    os.close(handle)
    os.unlink(probe)


def check_output_folder(path: str | Path) -> Path:
    """Check that ``path`` can be an output folder (an existing one, or one to be made).

    Raises :class:`OutputError` when ``path`` or one of its ancestors is a file,
    or when the folder (or the nearest existing ancestor it would be made in)
    is not writable. Makes nothing.
    """
    folder = Path(path)
    existing = _nearest_existing(folder)
    if existing == folder and not folder.is_dir():
        raise OutputError(f"cannot write {path}: it is a file, not a folder")
    _check_can_create_in(existing, path)
    return folder


def check_output_file(path: str | Path) -> Path:
    """Check that the file ``path`` can be written (its folder made if missing).

    Raises :class:`OutputError` when ``path`` is a folder, an ancestor is a
    file, or the folder it goes in cannot be written.
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"cannot write {path}: it is a folder, not a file")
    if target.exists() and not os.access(target, os.W_OK):
        # Atomic writes replace the file, which only needs the folder; plain writes do not.
        raise OutputError(f"cannot write {path}: the file is read-only")
    _check_can_create_in(_nearest_existing(target.parent), path)
    return target


def check_output_prefix(prefix: str | Path) -> Path:
    """Check Batsim's ``-e`` prefix: ``out/x/out`` writes ``out/x/out_jobs.csv``, ...

    A prefix ending in ``/`` names a folder (``out/`` gives ``out/_jobs.csv``).
    """
    text = str(prefix)
    folder = Path(text) if text.endswith(("/", os.sep)) else Path(text).parent
    if text.endswith(("/", os.sep)):
        check_output_folder(folder)
    else:
        check_output_file(f"{text}_jobs.csv")
    return folder


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder, then rename.

    The project's one way of writing a file: a reader (or a run killed half-way)
    sees the old file or the new one, never part of one. Folders are created.
    """
    target = Path(path)
    try:
        handle, temporary = _temporary_beside(target)
    except OSError as exc:
        raise _naming(exc, target) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        _put_in_place(temporary, target)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise _naming(exc, target) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def _naming(exc: OSError, target: Path) -> OSError:
    """``exc`` naming ``target`` (not the hidden temporary file written in its place)."""
    if exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror, str(target))


def _temporary_beside(target: Path) -> tuple[int, str]:
    """A new hidden temporary file in ``target``'s folder (made if missing): fd and name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    return tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)


def _put_in_place(temporary: str, target: Path) -> None:
    """Give the closed ``temporary`` a normal file's mode (mkstemp makes 0600) and rename it
    to ``target`` in one step."""
    os.chmod(temporary, 0o666 & ~_umask())
    os.replace(temporary, target)


def atomic_write_text(path: str | Path, text: str) -> Path:
    """:func:`atomic_write_bytes` of ``text`` in UTF-8 (newlines written as given)."""
    return atomic_write_bytes(path, text.encode("utf-8"))


class AtomicTextStream:
    """A text file written piece by piece and put in place at once (:meth:`commit`).

    For outputs too long to hold in memory (a whole trace's decision log, its job
    table): the pieces go to a temporary file beside ``path``; until
    :meth:`commit` renames it, ``path`` is absent (or the old file), as with
    :func:`atomic_write_bytes`. :meth:`abort` removes the temporary file. The
    file is created at the first :meth:`write`.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._stream: Any = None
        self._temporary: str | None = None

    def write(self, text: str) -> None:
        """Append ``text`` (UTF-8, newlines as given)."""
        try:
            if self._stream is None:
                handle, self._temporary = _temporary_beside(self.path)
                self._stream = os.fdopen(handle, "w", encoding="utf-8", newline="")
            self._stream.write(text)
        except OSError as exc:
            raise _naming(exc, self.path) from None

    def commit(self) -> Path:
        """Close the file and rename it to ``path`` (an empty file if nothing was written)."""
        if self._stream is None:
            self.write("")
        try:
            self._stream.close()
            _put_in_place(self._temporary, self.path)
        except OSError as exc:
            self.abort()
            raise _naming(exc, self.path) from None
        except BaseException:
            self.abort()
            raise
        self._stream = self._temporary = None
        return self.path

    def abort(self) -> None:
        """Drop what was written; ``path`` is left as it was."""
        if self._stream is not None:
            try:
                self._stream.close()
            except OSError:  # a full disk: the buffered rest cannot be written; dropped
                pass
        if self._temporary is not None:
            Path(self._temporary).unlink(missing_ok=True)
        self._stream = self._temporary = None


def incomplete_marker(prefix: str | Path) -> Path:
    """``PREFIX_INCOMPLETE.txt``: the marker of an unfinished run's output files."""
    return Path(f"{prefix}{INCOMPLETE_SUFFIX}")


def mark_incomplete(prefix: str | Path, reason: str) -> Path:
    """Mark the output files at ``prefix`` as those of a run that stopped before its end."""
    text = (f"{reason.strip()}\n\nThe simulation stopped before its end: Batsim's output "
            f"files {prefix}_*.csv hold what happened until then. Metrics computed from "
            "them are not those of the whole run.\n")
    return atomic_write_text(incomplete_marker(prefix), text)


def clear_incomplete(prefix: str | Path) -> None:
    """Remove the marker of an earlier unfinished run at ``prefix`` (a finished run's outputs)."""
    incomplete_marker(prefix).unlink(missing_ok=True)


def incomplete_reason(prefix: str | Path) -> str | None:
    """The first line of the marker at ``prefix`` (why the run stopped), or None if finished."""
    try:
        text = incomplete_marker(prefix).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"(marker unreadable: {exc})"
    return text.splitlines()[0] if text.strip() else "(no reason given)"


def _umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
