"""A run owns its output folder: written aside, moved into place at the end.

:func:`claim_output` checks the target folder and makes a fresh hidden
folder beside it (``.NAME.run-PID``) where the run writes everything;
:func:`publish` moves it into place once its manifest is written;
:func:`keep_partial` moves an unfinished run's files there instead (marked
``PREFIX_INCOMPLETE.txt``, never with a manifest); :func:`discard` drops them.

The target may be absent or empty. A folder holding an earlier run (only
files a run writes: Batsim's ``out_*`` files, ``metrics.json``,
``decisions.csv``, ``log/``, ``manifest.json``) is replaced with
``overwrite``, refused without, but for an unfinished run (a
``PREFIX_INCOMPLETE.txt`` marker, no manifest), replaced by the run that
finishes it. A folder holding anything else is refused
even with ``overwrite``: snficon never deletes files it did not write.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from snficon.errors import OutputError
from snficon.fileio import INCOMPLETE_SUFFIX, check_output_folder
from snficon.lifeline import process_alive

#: Names a run writes in its folder (Batsim's files start with ``out``).
RUN_FILES = frozenset(("metrics.json", "decisions.csv", "log", "manifest.json"))
RUN_PREFIX = "out"


@dataclass(frozen=True)
class StagedOutput:
    """A run's target folder and the hidden folder it is written in meanwhile."""

    target: Path
    work: Path
    made: Path | None = None  # the outermost folder claim_output made for it, if any

    def shown(self, path: str | os.PathLike[str]) -> str:
        """``path`` with the hidden folder's name replaced by the target's (for messages)."""
        return str(path).replace(str(self.work), str(self.target))


def _written_by_a_run(name: str) -> bool:
    return name in RUN_FILES or name.startswith(RUN_PREFIX)


def claim_output(target: str | Path, overwrite: bool = False) -> StagedOutput:
    """Check ``target`` (see the module docstring) and make the hidden folder to fill.

    Raises OutputError naming the folder when it cannot be used. Hidden folders
    left beside it by runs whose process is gone (``kill -9``) are removed.
    """
    folder = check_output_folder(target)
    if folder.is_dir():
        names = sorted(entry.name for entry in folder.iterdir())
        foreign = [name for name in names if not _written_by_a_run(name)]
        if foreign:
            raise OutputError(f"cannot write {folder}: it holds files snficon did not write "
                              f"({', '.join(foreign[:3])}{', ...' if len(foreign) > 3 else ''})"
                              "; choose a new or empty folder (--overwrite replaces only an "
                              "earlier run's folder)")
        unfinished = (any(name.endswith(INCOMPLETE_SUFFIX) for name in names)
                      and "manifest.json" not in names)
        if names and not overwrite and not unfinished:
            raise OutputError(f"cannot write {folder}: it holds an earlier run; give "
                              "--overwrite to replace it, or choose another folder")
    parent = folder.absolute().parent
    _remove_left_overs(parent, folder.name)
    made = None
    probe = parent
    while not probe.exists() and probe.parent != probe:
        made, probe = probe, probe.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        work = parent / f".{folder.name}.run-{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
    except OSError as exc:
        raise OutputError(f"cannot write {folder}: {exc.strerror or exc}") from None
    return StagedOutput(folder, work, made)


def _remove_left_overs(parent: Path, name: str) -> None:
    """Remove ``.NAME.run-PID`` folders of processes that are gone."""
    if not parent.is_dir():
        return
    for left in parent.glob(f".{name}.run-*"):
        pid = left.name.rpartition("-")[2]
        if pid.isdigit() and not process_alive(int(pid)):
            shutil.rmtree(left, ignore_errors=True)



def publish(staged: StagedOutput) -> Path:
    """Move the filled hidden folder to the target, replacing what was there."""
    target = staged.target
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    if target.exists():
        shutil.rmtree(old, ignore_errors=True)
        os.replace(target, old)
    os.replace(staged.work, target)
    shutil.rmtree(old, ignore_errors=True)
    return target


def keep_partial(staged: StagedOutput) -> bool:
    """Move an unfinished run's files to the target for inspection (True), or drop them
    when they cannot be moved (False)."""
    try:
        publish(staged)
    except OSError:
        discard(staged)
        return False
    return True


def discard(staged: StagedOutput) -> None:
    """Remove the hidden folder and everything in it, and the empty folders made for it."""
    shutil.rmtree(staged.work, ignore_errors=True)
    if staged.made is None:
        return
    folder = staged.work.parent
    while True:
        try:
            folder.rmdir()
        except OSError:
            return
        if folder == staged.made:
            return
        folder = folder.parent
