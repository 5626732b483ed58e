"""What made a run: the package version, a hash of the code, a hash of each input file.

A run's id hashes its parameters, the platform, workload and carbon-signal
files among them (:func:`snficon.campaign.expand.run_params`), so a changed
input makes a new run. What the id cannot see is the code that simulated it:
each run folder therefore keeps ``provenance.json`` (:class:`Provenance`),
and a campaign compares it with what it would use now
(:func:`stale_reason`). A run made by other code (a new version or an edited
module) or from an input file that changed since (an option naming a file,
e.g. a trained model) is *stale*: the campaign reports it and runs it again,
unless asked to reuse stale runs.

The code hash covers every Python module of the package that takes part in a
run (all but :mod:`snficon.report` and :mod:`snficon.commands`, which only
present results or parse command lines); it changes with any edit of them,
also one that changes no result: reusing such runs is a user's choice
(``snficon campaign --reuse-stale``), never a silent one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import snficon
from snficon.fileio import atomic_write_text

PROVENANCE = "provenance.json"
#: Sub-packages that present results or parse command lines: not part of a run's code.
NOT_RUN_CODE = ("report", "commands")


@dataclass(frozen=True)
class Provenance:
    """The package version, the code's SHA-256 and each input file's (by role)."""

    version: str
    code_sha256: str
    inputs: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "inputs": dict(self.inputs)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Provenance:
        return cls(version=str(data["version"]), code_sha256=str(data["code_sha256"]),
                   inputs={str(k): str(v) for k, v in dict(data.get("inputs", {})).items()})


def package_version() -> str:
    """The installed distribution's version (the package's own when not installed)."""
    try:
        return metadata.version("snficon")
    except metadata.PackageNotFoundError:
        return snficon.__version__


def code_digest(package_dir: str | Path | None = None) -> str:
    """SHA-256 over the relative path and bytes of each run-code module, in path order."""
    root = Path(package_dir) if package_dir is not None else Path(snficon.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in NOT_RUN_CODE:
            continue
        digest.update(relative.as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def stale_reason(recorded: Provenance | None, current: Provenance) -> str | None:
    """Why a done run cannot stand for the run ``current`` describes (None: it can)."""
    if recorded is None:
        return f"no {PROVENANCE} (made before runs recorded their code)"
    if recorded.version != current.version:
        return f"made by snficon {recorded.version}, this is {current.version}"
    if recorded.code_sha256 != current.code_sha256:
        return "made by other code (the package's modules changed since)"
    changed = sorted(role for role, digest in current.inputs.items()
                     if recorded.inputs.get(role) != digest)
    if changed:
        return f"input file changed since: {', '.join(changed)}"
    return None


def write_provenance(folder: str | Path, provenance: Provenance) -> Path:
    """Write ``folder/provenance.json``."""
    text = json.dumps(provenance.as_dict(), sort_keys=True, indent=2) + "\n"
    return atomic_write_text(Path(folder) / PROVENANCE, text)


def read_provenance(folder: str | Path) -> Provenance | None:
    """The record of ``folder`` (None when absent or unreadable: then the run is stale)."""
    try:
        data = json.loads((Path(folder) / PROVENANCE).read_text(encoding="utf-8"))
        return Provenance.from_dict(data)
    except (OSError, ValueError, KeyError, TypeError):
        return None
