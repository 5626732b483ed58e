"""Paths built from names in input files, and outputs that would replace inputs.

Two rules keep a command's writes where the user asked for them:

- :func:`label_file_name` maps a name read from an input file (a campaign's
  workload or platform label, a group name, an option value) to one file name
  that stays inside the folder it is joined to: no separator, no ``..``, no
  absolute path, no hidden file. A name already made of letters, digits and
  ``-_.+`` is kept as it is; any other is spelt with those characters and a
  short digest of the name, so two different names never share a file.
  :func:`file_in` joins such a name to its folder and checks the result.
- :func:`refuse_output_over_input` stops a command whose output file is one
  of its own inputs (``workload convert T -o T``), before anything is written.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from snficon.errors import InputError

#: The characters a label may keep in a file name; anything else is replaced.
_KEPT = re.compile(r"[A-Za-z0-9_+-][A-Za-z0-9._+-]*")
_REPLACED = re.compile(r"[^A-Za-z0-9._+-]+")
#: Longest file name made (most file systems allow 255 bytes; a suffix is added).
_LONGEST = 120


def label_file_name(label: str, *, source: str | Path, what: str = "label") -> str:
    """The file name (without suffix) for ``label``, read from the file ``source``.

    Raises :class:`InputError` naming ``source`` and the label when it holds
    nothing a file name can be made of (empty, or control characters only).
    """
    if not isinstance(label, str) or not label.strip() or not label.isprintable():
        raise InputError(f"{source}: {what} {label!r} cannot name a file (it is empty or "
                         "holds control characters); use letters, digits, '-', '_' or '.'")
    if _KEPT.fullmatch(label) and len(label) <= _LONGEST:
        return label
    spelt = _REPLACED.sub("_", label).strip("._") or "label"
    digest = hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"{spelt[:_LONGEST - 11]}-{digest}"


def file_in(folder: str | Path, label: str, suffix: str, *, source: str | Path,
            what: str = "label") -> Path:
    """``folder/<label_file_name(label)><suffix>``, checked to lie inside ``folder``."""
    base = Path(folder)
    target = base / f"{label_file_name(label, source=source, what=what)}{suffix}"
    if target.resolve().parent != base.resolve():  # a symlink inside can still lead out
        raise InputError(f"{source}: {what} {label!r} would write {target}, outside "
                         f"{base}/")
    return target


def _same_file(first: Path, second: Path) -> bool:
    """Whether the two paths name one existing file (links and ``..`` resolved)."""
    try:
        return os.path.samefile(first, second)
    except OSError:
        return first.resolve() == second.resolve()


def refuse_output_over_input(output: str | Path | None, inputs: Iterable[str | Path | None],
                             *, option: str = "-o") -> None:
    """Raise :class:`InputError` when ``output`` is one of ``inputs`` (the same file).

    Checked before any work, so the input is still intact when the command stops.
    """
    if output is None:
        return
    for source in inputs:
        if source is not None and _same_file(Path(output), Path(source)):
            raise InputError(f"{output}: {option} names the command's own input {source}; "
                             "writing it would destroy the input: choose another output file")
