"""The command line does not import ``scipy.stats`` (about 50 MB) until a curriculum is drawn."""

from __future__ import annotations

import subprocess
import sys


def test_the_command_line_goes_without_scipy_stats():
    code = "import sys, snficon.cli; print('scipy.stats' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"
