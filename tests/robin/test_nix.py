"""The nix expressions parse (when nix-instantiate is installed)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.robin.conftest import REPO_ROOT


@pytest.mark.parametrize("name", ["shell.nix", "default.nix", "pins.nix"])
def test_nix_expression_parses(name):
    path = REPO_ROOT / "nix" / name
    assert path.is_file()
    assert "a9e0345f8f5d2cb10ba656f1b23dcdec7f2efa0c" in path.read_text()
    tool = shutil.which("nix-instantiate")
    if tool is None:
        pytest.skip("nix-instantiate is not installed (Debian: apt install nix-bin); "
                    f"nix/{name} was not parsed")
    done = subprocess.run([tool, "--parse", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
