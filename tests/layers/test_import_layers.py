"""The import layering of ``.importlinter``: kept by the package, broken by a violation.

The contracts are checked with import-linter on the real package; a copy of
the package with one forbidden import added (the decision core importing the
engine) must make the same check fail, so the contract can catch a change.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

CONTRACTS = REPO_ROOT / ".importlinter"


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """Run import-linter on the ``snficon`` package found under ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    script = ("import sys; from importlinter.cli import lint_imports_command; "
              "sys.exit(lint_imports_command())")
    command = [sys.executable, "-c", script, "--config", str(CONTRACTS), "--no-cache"]
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True,
                          timeout=120)


def test_the_package_keeps_every_contract():
    result = lint_imports(REPO_ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_core_module_importing_the_engine_breaks_the_contracts(tmp_path):
    shutil.copytree(REPO_ROOT / "snficon", tmp_path / "snficon",
                    ignore=shutil.ignore_patterns("__pycache__"))
    violator = tmp_path / "snficon" / "core" / "violation.py"
    violator.write_text("from snficon.engine.simulator import BatsimEngine  # noqa: F401\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "snficon.core.violation -> snficon.engine.simulator" in result.stdout


def test_a_carbon_module_importing_the_platform_breaks_the_carbon_contract(tmp_path):
    shutil.copytree(REPO_ROOT / "snficon", tmp_path / "snficon",
                    ignore=shutil.ignore_patterns("__pycache__"))
    violator = tmp_path / "snficon" / "carbon" / "violation.py"
    violator.write_text("from snficon.platform.reader import read_platform  # noqa: F401\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "Carbon signals and COAST's advisor are pure" in result.stdout
    assert "snficon.carbon.violation -> snficon.platform.reader" in result.stdout
