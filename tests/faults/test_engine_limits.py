"""Numbers the engine cannot represent are refused, naming the job or the option.

Each case as a user meets it: ``snficon run`` started as a real process on a
tiny workload, then the exit code, the message and what is on disk: nothing,
when the fault is found while reading; files marked unfinished (no manifest)
when it is found during the run.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from snficon.manifest import MANIFEST
from snficon.platform.generate import NODE_MODELS, render_platform, write_platform
from snficon.workload.limits import MAX_TIME_S

SNFICON = Path(sys.executable).with_name("snficon")
pytestmark = pytest.mark.skipif(not SNFICON.is_file(), reason="the snficon script is not "
                                "installed beside this Python")

DELAY = {"d": {"type": "delay", "delay": 10.0}}


@pytest.fixture
def platform(tmp_path: Path) -> Path:
    """A 4-node AOBA platform."""
    return write_platform(tmp_path / "p4.xml", render_platform(NODE_MODELS["aoba"], 4))


def workload(path: Path, jobs: list[dict], profiles: dict | None = None) -> Path:
    """A workload of ``jobs`` (one node, no walltime, profile ``d`` unless given)."""
    for job in jobs:
        job.setdefault("res", 1)
        job.setdefault("profile", "d")
        job.setdefault("walltime", -1)
    path.write_text(json.dumps({"nb_res": 4, "jobs": jobs, "profiles": profiles or DELAY}))
    return path


def run(platform: Path, jobs: Path, out: Path, *extra: str,
        policy: str = "fcfsbIpm") -> subprocess.CompletedProcess:
    return subprocess.run([str(SNFICON), "run", "--platform", str(platform), "--workload",
                           str(jobs), "--policy", policy, "-o", str(out), *extra],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def one_line(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr  # an error line, no traceback
    return lines[0]


@pytest.mark.parametrize(("field", "jobs", "profiles"), [
    ("subtime", [{"id": 1, "subtime": 0}, {"id": 2, "subtime": 1e300}], None),
    ("walltime", [{"id": 1, "subtime": 0}, {"id": 2, "subtime": 5, "walltime": 1e12}], None),
    ("delay", [{"id": 1, "subtime": 0}, {"id": 2, "subtime": 5, "profile": "far"}],
     {**DELAY, "far": {"type": "delay", "delay": 1e300}}),
])
def test_a_time_past_the_clock_is_refused_while_reading(platform, tmp_path, field, jobs,
                                                        profiles):
    path = workload(tmp_path / "w.json", jobs, profiles)
    out = tmp_path / "out"
    done = run(platform, path, out)
    assert done.returncode == 2
    message = one_line(done)
    assert str(path) in message and repr(field) in message
    assert ("job 2" in message) if field != "delay" else ("profile 'far'" in message)
    assert not out.exists()


def test_a_job_ending_past_the_clock_stops_the_run_naming_it(platform, tmp_path):
    # 1e300 flops take 1e291 s on an AOBA node: the job would end 1e291 s after 10 s.
    path = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0}, {"id": 7, "subtime": 10,
                                                                    "profile": "huge"}],
                    {**DELAY, "huge": {"type": "parallel_homogeneous", "cpu": 1e300, "com": 0}})
    out = tmp_path / "out"
    done = run(platform, path, out)
    assert done.returncode == 2
    message = one_line(done)
    assert "job '7'" in message and "profile 'huge'" in message and str(path) in message
    assert (out / "out_INCOMPLETE.txt").is_file() and not (out / MANIFEST).exists()


def test_a_job_submitted_near_the_bound_runs_and_one_ending_past_it_is_refused(platform,
                                                                               tmp_path):
    near = workload(tmp_path / "near.json", [{"id": 1, "subtime": MAX_TIME_S - 1e5}])
    done = run(platform, near, tmp_path / "near")
    assert done.returncode == 0, done.stderr
    jobs = (tmp_path / "near" / "out_jobs.csv").read_text().splitlines()
    header, row = jobs[0].split(","), dict(zip(jobs[0].split(","), jobs[1].split(","),
                                               strict=True))
    assert "execution_time" in header and float(row["execution_time"]) == 10.0
    past = workload(tmp_path / "past.json", [{"id": 1, "subtime": MAX_TIME_S - 5}])
    done = run(platform, past, tmp_path / "past")
    assert done.returncode == 2 and "job '1'" in one_line(done)


@pytest.mark.parametrize("option", ["s_min", "s_max"])
def test_a_spare_bound_above_the_node_count_is_refused_naming_it(platform, tmp_path, option):
    path = workload(tmp_path / "w.json", [{"id": 1, "subtime": 0}])
    out = tmp_path / "out"
    done = run(platform, path, out, "--set", f"{option}=5", policy="snficon")
    assert done.returncode == 2
    message = one_line(done)
    assert repr(option) in message and "(5)" in message and "4 nodes" in message
    assert not (out / MANIFEST).exists()
    fits = run(platform, path, tmp_path / "fits", "--set", f"{option}=4", policy="snficon")
    assert fits.returncode == 0, fits.stderr
