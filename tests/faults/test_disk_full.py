"""A full disk: one line naming the file and the error, exit 2, nothing that looks complete.

The disk is a really full small tmpfs, mounted by the test (root only; the
tests are skipped with the reason otherwise). ``snficon`` runs as a real
process; after the failure, no temporary file is left, an earlier complete
run is untouched, and the same command completes once space is freed.
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path

import pytest

from snficon.manifest import MANIFEST, check_run_folder

from ..conftest import REPO_ROOT

SNFICON = Path(sys.executable).with_name("snficon")
pytestmark = pytest.mark.skipif(not SNFICON.is_file(), reason="the snficon script is not "
                                "installed beside this Python")


@pytest.fixture
def disk(tmp_path: Path):
    """A 400 KiB tmpfs mounted at ``tmp_path/disk``, unmounted afterwards."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (needs root): {made.stderr.strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


@pytest.fixture
def workload(tmp_path: Path) -> Path:
    """300 jobs of the Markovian workload: about 220 KiB of outputs under fcfsbIpm."""
    from snficon.campaign.runs import truncate_workload

    return truncate_workload(REPO_ROOT / "workloads" / "markovian-3000.json", 300,
                             tmp_path / "w300.json")


def fill(disk: Path, keep_bytes: int = 0) -> Path:
    """Write ``disk/filler`` until the disk is full (less ``keep_bytes`` left free)."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as stream:
        try:
            while True:
                stream.write(b"\0" * 4096)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    if keep_bytes:
        filler.write_bytes(b"\0" * max(0, filler.stat().st_size - keep_bytes))
    return filler


def snficon(*argv: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(SNFICON), *map(str, argv)], capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


def run_argv(workload: Path, out: Path, *extra: str) -> list[str | Path]:
    return ["run", "--platform", REPO_ROOT / "platforms" / "aoba-64.xml", "--workload",
            workload, "--policy", "fcfsbIpm", "-o", out, *extra]


def everything(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_a_run_on_a_full_disk_fails_in_one_line_and_completes_afterwards(disk, workload):
    filler = fill(disk, keep_bytes=100_000)
    out = disk / "run"
    failed = snficon(*run_argv(workload, out))
    assert failed.returncode == 2
    lines = failed.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in failed.stderr
    assert lines[0].startswith(f"snficon: error: cannot write {out}/")
    assert lines[0].endswith(f"No space left on device; nothing was kept in {out}/ "
                             "(run again once the cause is fixed)")
    assert everything(disk) == ["filler"]  # no run folder, no hidden temporary file

    filler.unlink()
    done = snficon(*run_argv(workload, out))
    assert done.returncode == 0, done.stderr
    assert check_run_folder(out).complete


def test_a_full_disk_does_not_harm_the_earlier_run(disk, workload):
    out = disk / "run"
    assert snficon(*run_argv(workload, out)).returncode == 0
    before = (out / MANIFEST).read_text()
    fill(disk)
    failed = snficon(*run_argv(workload, out, "--overwrite"))
    assert failed.returncode == 2
    assert "No space left on device" in failed.stderr and len(failed.stderr.splitlines()) == 1
    assert (out / MANIFEST).read_text() == before and check_run_folder(out).complete
    assert [name for name in everything(disk) if not name.startswith("run/")] == ["filler", "run"]


def test_a_reader_writing_to_a_full_disk_fails_in_one_line(disk, workload, tmp_path):
    out = tmp_path / "run"
    assert snficon(*run_argv(workload, out)).returncode == 0
    fill(disk)
    target = disk / "comparison.json"
    failed = snficon("compare", out, out, "--json", target)
    assert failed.returncode == 2
    assert failed.stderr == f"snficon: error: {target}: No space left on device\n"
    assert everything(disk) == ["filler"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["jobs"] == 300
