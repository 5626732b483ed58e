"""A run folder's manifest: written last, checked by every reader of the folder.

``manifest.json`` lists the run's parameters and every other file of the folder
with its size and SHA-256. It is the last file a run writes
(:func:`write_manifest`), so a folder holding one is a complete run; a reader
(:func:`check_run_folder`, :func:`accept_run_folder`) tells apart:

- ``complete``: the manifest is there and every file matches it;
- ``partial``: a ``PREFIX_INCOMPLETE.txt`` marker says the run stopped early
  (:func:`snficon.fileio.mark_incomplete`), or the manifest is missing but
  snficon's own files are there;
- ``modified``: a listed file is missing or differs, or a file was added;
- ``foreign``: no manifest and no marker: made by another program (the real
  Batsim, the authors' simulator) or by snficon before manifests.

Readers refuse all but ``complete`` unless told otherwise
(``--allow-incomplete``; ``--foreign`` for another program's outputs), and
then say what they read.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snficon import __version__
from snficon.errors import InputError
from snficon.fileio import INCOMPLETE_SUFFIX, atomic_write_text

#: The manifest's file name in a run folder.
MANIFEST = "manifest.json"
#: Its format tag (``format`` key).
FORMAT = "snficon-run-manifest/1"

COMPLETE, PARTIAL, MODIFIED, FOREIGN = "complete", "partial", "modified", "foreign"


@dataclass(frozen=True)
class FolderState:
    """What a reader found in a run folder: its state and, unless complete, why."""

    folder: Path
    state: str
    reason: str = ""

    @property
    def complete(self) -> bool:
        return self.state == COMPLETE


def file_digest(path: Path) -> tuple[str, int]:
    """SHA-256 (hex) and size in bytes of the file ``path``, read in blocks."""
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def _listed_files(folder: Path) -> list[Path]:
    """Every regular file under ``folder`` but the manifest, as sorted relative paths."""
    return sorted(path.relative_to(folder) for path in folder.rglob("*")
                  if path.is_file() and path.relative_to(folder) != Path(MANIFEST))


def _entries(folder: Path) -> dict[str, dict[str, Any]]:
    entries = {}
    for relative in _listed_files(folder):
        sha, size = file_digest(folder / relative)
        entries[relative.as_posix()] = {"sha256": sha, "bytes": size}
    return entries


def write_manifest(folder: str | Path, parameters: dict[str, Any]) -> Path:
    """Write ``folder/manifest.json``: ``parameters`` and each file's size and SHA-256.

    Call it last, once every other file of the run is in place.
    """
    root = Path(folder)
    record = {"format": FORMAT, "snficon": __version__, "parameters": parameters,
              "files": _entries(root)}
    return atomic_write_text(root / MANIFEST, json.dumps(record, indent=2, sort_keys=True,
                                                         allow_nan=False) + "\n")


def amend_manifest(folder: str | Path, name: str, note: str) -> None:
    """After snficon itself rewrote ``folder/name`` (e.g. ``carbon account --metrics``),
    record its new digest and ``note`` in the manifest, if the folder has one."""
    root = Path(folder)
    record = _read_manifest(root)
    if not isinstance(record, dict):
        return
    sha, size = file_digest(root / name)
    record["files"][name] = {"sha256": sha, "bytes": size}
    record.setdefault("amended", []).append(f"{name}: {note}")
    atomic_write_text(root / MANIFEST, json.dumps(record, indent=2, sort_keys=True,
                                                  allow_nan=False) + "\n")


def _read_manifest(folder: Path) -> dict[str, Any] | str | None:
    """The manifest's record, None when absent, or why it cannot be used (a string)."""
    path = folder / MANIFEST
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return f"{path} is unreadable ({exc})"
    if not (isinstance(record, dict) and record.get("format") == FORMAT
            and isinstance(record.get("files"), dict)):
        return f"{path} is not a snficon run manifest"
    return record


def incomplete_markers(folder: Path) -> list[Path]:
    """The ``*_INCOMPLETE.txt`` markers directly in ``folder``."""
    return sorted(folder.glob(f"*{INCOMPLETE_SUFFIX}"))


def check_run_folder(folder: str | Path) -> FolderState:
    """The state of the run folder ``folder`` (see the module's docstring)."""
    root = Path(folder)
    markers = incomplete_markers(root)
    if markers:
        first = markers[0].read_text(encoding="utf-8", errors="replace").strip()
        why = first.splitlines()[0] if first else "no reason given"
        return FolderState(root, PARTIAL, f"the run did not finish ({markers[0].name}: {why})")
    record = _read_manifest(root)
    if record is None:
        return FolderState(root, FOREIGN, f"no {MANIFEST}: not a complete snficon run (another "
                                          "program's outputs, or a run that did not finish)")
    if isinstance(record, str):
        return FolderState(root, MODIFIED, record)
    files: dict[str, Any] = record["files"]
    for name, entry in sorted(files.items()):
        path = root / name
        if not path.is_file():
            return FolderState(root, MODIFIED, f"{path} is missing (listed in {MANIFEST})")
        sha, size = file_digest(path)
        if not isinstance(entry, dict) or (sha, size) != (entry.get("sha256"),
                                                          entry.get("bytes")):
            return FolderState(root, MODIFIED, f"{path} changed after the run (its SHA-256 "
                                               f"differs from {MANIFEST}'s)")
    added = [p.as_posix() for p in _listed_files(root) if p.as_posix() not in files]
    if added:
        return FolderState(root, MODIFIED, f"{root / added[0]} was added after the run "
                                           f"(not in {MANIFEST})")
    return FolderState(root, COMPLETE)


def run_folder_of(path: str | Path) -> Path:
    """The run folder of a reader's argument: a folder, or the folder of a file or prefix."""
    target = Path(path)
    return target if target.is_dir() else target.parent


def accept_run_folder(path: str | Path, *, allow_incomplete: bool = False,
                      foreign: bool = False) -> str | None:
    """Check the run folder of ``path`` before reading it.

    Returns None for a complete run, or a note saying what is read when the
    folder is not one but the caller allows it (``foreign`` accepts a folder
    without manifest, e.g. the real Batsim's; ``allow_incomplete`` accepts
    any). Raises InputError naming the folder and the reason otherwise.
    """
    state = check_run_folder(run_folder_of(path))
    if state.complete:
        return None
    if allow_incomplete or (foreign and state.state == FOREIGN):
        return f"{state.folder}: read although {state.state}: {state.reason}"
    hint = ("give --foreign to read another program's outputs as they are"
            if state.state == FOREIGN else "give --allow-incomplete to read it anyway")
    raise InputError(f"{state.folder}: refused, {state.state} run folder: {state.reason}; "
                     f"{hint}")
