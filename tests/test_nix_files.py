"""The nix expressions of ``nix/``: they parse, their downloads are pinned by hash, and the
shell holds every Python package pyproject.toml depends on.

What needs nix runs where ``nix-instantiate`` is installed and skips saying so otherwise;
the rest reads the files.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
NIX = REPO_ROOT / "nix"
FILES = sorted(path.name for path in NIX.glob("*.nix"))
#: nix's base-32 alphabet; a sha256 in it is 52 characters long.
NIX32 = re.compile(r"^[0-9abcdfghijklmnpqrsvwxyz]{52}$")


def nix_instantiate() -> str:
    tool = shutil.which("nix-instantiate")
    if tool is None:
        pytest.skip("nix-instantiate is not installed (Debian: apt install nix-bin): "
                    "the nix files were not evaluated")
    return tool


def fetch_tarball_arguments(text: str) -> list[str]:
    """The text of each ``fetchTarball`` call's argument (an attribute set or a string)."""
    found = []
    for match in re.finditer(r"\bfetchTarball\s*", text):
        rest = text[match.end():]
        if rest.startswith("{"):
            found.append(rest[:rest.index("}") + 1])
        else:
            found.append(rest.split(")", 1)[0])
    return found


def test_every_nix_file_is_checked():
    assert {"default.nix", "pins.nix", "shell.nix"} <= set(FILES)


@pytest.mark.parametrize("name", FILES)
def test_nix_file_parses(name):
    done = subprocess.run([nix_instantiate(), "--parse", str(NIX / name)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_every_fetch_tarball_has_a_sha256():
    calls = fetch_tarball_arguments((NIX / "pins.nix").read_text())
    assert len(calls) == 2
    for call in calls:
        assert call.startswith("{"), f"fetchTarball of a bare URL: {call}"
        url = re.search(r'url\s*=\s*"([^"]+)"', call).group(1)
        sha256 = re.search(r'sha256\s*=\s*"([^"]+)"', call)
        assert sha256 is not None, f"no sha256 for {url}"
        assert NIX32.match(sha256.group(1)), f"{url}: {sha256.group(1)!r} is no base-32 sha256"
        # pinned to a commit, not to a branch or tag that moves
        assert re.search(r"/archive/[0-9a-f]{40}\.tar\.gz$", url), url
    text = (NIX / "pins.nix").read_text()
    assert "a9e0345f8f5d2cb10ba656f1b23dcdec7f2efa0c" in text
    assert "0wxk6ybnd716fzs8hjh9ia1543aj0r5sh5wn3j9094p6iijb20rh" in text


def test_pins_evaluate_offline_with_each_download_pinned(tmp_path):
    """pins.nix evaluated with a stand-in ``fetchTarball`` that refuses a call without a
    sha256 and returns an empty package set."""
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "default.nix").write_text("{ ... }: { stub = true; }\n")
    expression = """{ stub, pins }:
      let
        sets = builtins.scopedImport {
          fetchTarball = args:
            if builtins.isAttrs args && args ? url && args ? sha256 then /. + stub
            else throw "fetchTarball without a sha256: ${builtins.toJSON args}";
        } (/. + pins);
      in [ sets.pkgs.stub sets.kapack.stub ]"""
    done = subprocess.run([nix_instantiate(), "--eval", "--strict", "--expr", expression,
                           "--argstr", "stub", str(stub), "--argstr", "pins",
                           str(NIX / "pins.nix")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[ true true ]"


def python_dependencies() -> list[str]:
    """The distribution names of pyproject.toml's dependencies, as nix spells them."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    names = [re.match(r"[A-Za-z0-9._-]+", spec).group(0) for spec in project["dependencies"]]
    return [name.lower().replace("_", "-").replace(".", "-") for name in names]


@pytest.mark.parametrize(("name", "prefix"), [("shell.nix", "ps"), ("default.nix", "py")])
def test_nix_python_holds_every_dependency(name, prefix):
    text = (NIX / name).read_text()
    missing = [dependency for dependency in python_dependencies()
               if not re.search(rf"\b(?:{prefix}|kapack)\.{re.escape(dependency)}(?:-\d+)?\b",
                                text)]
    assert not missing, f"nix/{name} lacks {', '.join(missing)} (pyproject.toml's dependencies)"


def test_shell_has_the_linters():
    text = (NIX / "shell.nix").read_text()
    assert "pkgs.ruff" in text and "import-linter" in text
