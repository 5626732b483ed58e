"""Output checks before any work, and the marker of an unfinished run's outputs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from snficon.errors import OutputError
from snficon.fileio import (
    AtomicTextStream,
    check_output_file,
    check_output_folder,
    check_output_prefix,
    clear_incomplete,
    incomplete_marker,
    incomplete_reason,
    mark_incomplete,
)


@pytest.fixture
def regular_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a folder\n")
    return path


@pytest.fixture
def read_only_folder(tmp_path: Path):
    """A folder without write permission; skips where permission bits do not stop writes."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as root: permission bits do not stop writes here (the "
                        "parent-is-a-file cases cover the same check)")
        yield folder
    finally:
        folder.chmod(0o755)


class TestCheckOutputFolder:
    def test_missing_folders_are_fine_and_nothing_is_made(self, tmp_path: Path):
        target = tmp_path / "a" / "b" / "c"
        assert check_output_folder(target) == target
        assert not (tmp_path / "a").exists()
        assert list(tmp_path.iterdir()) == []  # the write test left nothing behind

    def test_an_existing_folder(self, tmp_path: Path):
        check_output_folder(tmp_path)
        assert list(tmp_path.iterdir()) == []

    def test_the_folder_is_a_file(self, regular_file: Path):
        with pytest.raises(OutputError, match=f"cannot write {regular_file}: it is a file"):
            check_output_folder(regular_file)

    def test_a_parent_is_a_file(self, regular_file: Path):
        target = regular_file / "sub" / "out"
        with pytest.raises(OutputError) as caught:
            check_output_folder(target)
        assert str(caught.value) == (f"cannot write {target}: {regular_file} is a file, "
                                     "not a folder")
        assert caught.value.exit_code == 2

    def test_read_only_folder(self, read_only_folder: Path):
        with pytest.raises(OutputError, match="Permission denied"):
            check_output_folder(read_only_folder / "results")


class TestCheckOutputFile:
    def test_missing_parents_are_fine(self, tmp_path: Path):
        check_output_file(tmp_path / "x" / "y.json")
        assert list(tmp_path.iterdir()) == []

    def test_the_file_is_a_folder(self, tmp_path: Path):
        with pytest.raises(OutputError, match="it is a folder, not a file"):
            check_output_file(tmp_path)

    def test_a_parent_is_a_file(self, regular_file: Path):
        with pytest.raises(OutputError, match=f"{regular_file} is a file, not a folder"):
            check_output_file(regular_file / "p.xml")

    def test_read_only_folder(self, read_only_folder: Path):
        with pytest.raises(OutputError, match="Permission denied"):
            check_output_file(read_only_folder / "p.xml")


class TestCheckOutputPrefix:
    def test_prefix_names_the_files(self, regular_file: Path, tmp_path: Path):
        assert check_output_prefix(tmp_path / "x" / "out") == tmp_path / "x"
        with pytest.raises(OutputError, match=f"{regular_file}/out_jobs.csv"):
            check_output_prefix(regular_file / "out")

    def test_prefix_ending_in_a_slash_is_a_folder(self, regular_file: Path, tmp_path: Path):
        assert check_output_prefix(f"{tmp_path}/") == tmp_path
        with pytest.raises(OutputError, match="it is a file"):
            check_output_prefix(f"{regular_file}/")


class TestIncompleteMarker:
    def test_mark_read_and_clear(self, tmp_path: Path):
        prefix = tmp_path / "out"
        assert incomplete_reason(prefix) is None
        path = mark_incomplete(prefix, "stopped at t=60 by SchedulerCrashError: boom")
        assert path == incomplete_marker(prefix) == tmp_path / "out_INCOMPLETE.txt"
        assert incomplete_reason(prefix) == "stopped at t=60 by SchedulerCrashError: boom"
        assert "hold what happened until then" in path.read_text()
        clear_incomplete(prefix)
        assert not path.exists() and incomplete_reason(prefix) is None
        clear_incomplete(prefix)  # nothing to clear: no error


def test_atomic_text_stream_appears_whole_or_not_at_all(tmp_path: Path):
    target = tmp_path / "sub" / "log.csv"
    target.parent.mkdir()
    target.write_text("old\n")
    stream = AtomicTextStream(target)
    stream.write("a,b\n")
    stream.write("1,2\n")
    assert target.read_text() == "old\n"  # the old file until commit
    stream.abort()
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["log.csv"]
    stream = AtomicTextStream(target)
    stream.write("a,b\n")
    stream.write("1,2\n")
    assert stream.commit() == target
    assert target.read_text() == "a,b\n1,2\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["log.csv"]
