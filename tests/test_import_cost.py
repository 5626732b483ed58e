"""What the command line loads: scipy.special takes ~0.3 s to import, and only
SNF-ICON's remaining-time predictions (eq. 50) need it, so the CLI and the
baselines' runs must not load it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys
from pathlib import Path
import snficon.cli
loaded = {"cli": sorted(m for m in sys.modules if m.split(".")[0] == "scipy")}
from snficon.cli import main
main(["workload", "markovian", "--jobs", "40", "--seed", "3", "-o", sys.argv[1] + "/w.json"])
for policy in sys.argv[2:]:
    main(["run", "--platform", "platforms/taurus-20.xml", "--workload", sys.argv[1] + "/w.json",
          "--policy", policy, "-o", sys.argv[1] + "/" + policy])
    loaded[policy] = sorted(m for m in sys.modules if m.split(".")[0] == "scipy")
print(json.dumps(loaded))
"""


def _loaded(tmp_path: Path, *policies: str) -> dict[str, list[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path), *policies], cwd=REPO,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_cli_and_the_baselines_do_not_load_scipy(tmp_path: Path) -> None:
    loaded = _loaded(tmp_path, "fcfsbIpm", "snfIpm")
    assert loaded == {"cli": [], "fcfsbIpm": [], "snfIpm": []}


def test_snficon_loads_it_when_it_predicts(tmp_path: Path) -> None:
    """The probe can see scipy: SNF-ICON's run loads it."""
    assert "scipy.special" in _loaded(tmp_path, "snficon")["snficon"]
