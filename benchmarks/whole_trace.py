"""Whole traces: wall time, peak memory and cost per 1000 jobs of one in-process run.

Issue 16's table. Each run is its own ``snficon run`` process (so its peak RSS
is its own, read from the kernel when it ends). Cases:

- ``markovian-3000``: the project's Markovian workload on AOBA-64;
- ``das2-fs1-whole``: the whole DAS2 FS1 log (``../shared/data/traces``) on AOBA-64;
- ``curve``: Markovian workloads of ``--sizes`` jobs on a 1152-node AOBA platform
  at load 0.4 (``snficon workload markovian --jobs N --nodes 1152 --load 0.4``),
  printing the cost per 1000 jobs at each size and its ratio to the smallest.

The first two cases also run on an older commit (``--base``, default
``1bd5209``, the commit issue 16 was filed against; ``--base none`` skips it),
checked out in a temporary git worktree, so that the table shows old and new
on this machine. The curve runs on this tree only.

Run by hand (the 1 M-job point takes minutes)::

    uv run python benchmarks/whole_trace.py [--policies snficon fcfsbIpm]
        [--cases markovian-3000 das2-fs1-whole curve] [--sizes 10000 100000 1000000]
        [--base 1bd5209]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from child_run import commit_worktree, run_child, tree_env

REPO = Path(__file__).resolve().parents[1]
TRACE = REPO.parent / "shared" / "data" / "traces" / "DAS2-fs1-2003-1.swf.gz"


def snficon(*args: str) -> None:
    """Run ``snficon ARGS`` quietly; stop with its message when it fails."""
    done = subprocess.run([sys.executable, "-m", "snficon.cli", *args], cwd=REPO,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"snficon {' '.join(args)} failed:\n{done.stderr[-2000:]}")


#: The commit issue 16 was filed against.
ISSUE_BASE = "1bd5209"


def timed_run(platform: Path, workload: Path, policy: str, out: Path,
              tree: Path = REPO) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of ``snficon run`` of ``tree``'s code in its own
    process."""
    child = run_child([sys.executable, "-m", "snficon.cli", "run", "--platform", str(platform),
                       "--workload", str(workload), "--policy", policy, "-o", str(out)],
                      cwd=tree, env=tree_env(tree), what=f"{tree}: {policy} on {workload.name}")
    return child.wall_s, child.peak_rss_mb


def jobs_in(workload: Path) -> int:
    return len(json.loads(workload.read_text())["jobs"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=["snficon", "fcfsbIpm"])
    parser.add_argument("--cases", nargs="+", default=["markovian-3000", "das2-fs1-whole", "curve"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--base", default=ISSUE_BASE,
                        help=f"older commit for the table's cases (default {ISSUE_BASE}; none: "
                             "skip)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="snficon-whole-") as folder, \
            contextlib.ExitStack() as stack:
        work = Path(folder)
        base = (None if args.base == "none"
                else stack.enter_context(commit_worktree(REPO, args.base, work)))
        aoba64 = REPO / "platforms" / "aoba-64.xml"
        rows: list[tuple[str, str, int, float, float]] = []
        #: (name, platform, workload, run on the base too)
        cases: list[tuple[str, Path, Path, bool]] = []
        if "markovian-3000" in args.cases:
            cases.append(("markovian-3000 / AOBA-64", aoba64,
                          REPO / "workloads" / "markovian-3000.json", True))
        if "das2-fs1-whole" in args.cases:
            if TRACE.is_file():
                whole = work / "das2-fs1-whole.json"
                snficon("workload", "convert", str(TRACE), "--nb-res", "64", "-o", str(whole))
                cases.append(("DAS2 FS1 whole / AOBA-64", aoba64, whole, True))
            else:
                print(f"skipped das2-fs1-whole: {TRACE} is absent")
        if "curve" in args.cases:
            aoba1152 = work / "aoba-1152.xml"
            snficon("platform", "generate", "aoba", "--nodes", "1152", "-o", str(aoba1152))
            for size in args.sizes:
                workload = work / f"markovian-{size}.json"
                snficon("workload", "markovian", "--jobs", str(size), "--nodes", "1152",
                        "--load", "0.4", "-o", str(workload))
                cases.append((f"Markovian {size} / AOBA-1152", aoba1152, workload, False))
        old = f"{'old wall':>9s} {'old MB':>7s} " if base is not None else ""
        print(f"{'case':32s} {'policy':9s} {'jobs':>9s} {old}{'wall s':>9s} {'peak MB':>8s} "
              f"{'s/1000 jobs':>11s}")
        for name, platform, workload, on_base in cases:
            jobs = jobs_in(workload)
            for policy in args.policies:
                before = ""
                if base is not None:
                    before = f"{'':9s} {'':7s} "
                    if on_base:
                        old_wall, old_peak = timed_run(base / platform.relative_to(REPO),
                                                       workload, policy, work / "out", base)
                        before = f"{old_wall:9.1f} {old_peak:7.0f} "
                wall, peak = timed_run(platform, workload, policy, work / "out")
                rows.append((name, policy, jobs, wall, peak))
                print(f"{name:32s} {policy:9s} {jobs:9d} {before}{wall:9.1f} {peak:8.0f} "
                      f"{1000 * wall / jobs:11.3f}", flush=True)
        curve = [row for row in rows if row[0].startswith("Markovian") and "AOBA-1152" in row[0]]
        for policy in args.policies:
            points = [row for row in curve if row[1] == policy]
            if len(points) > 1:
                base = points[0][3] / points[0][2]
                ratios = ", ".join(f"{row[2]}: x{(row[3] / row[2]) / base:.2f}" for row in points)
                print(f"cost per job vs {points[0][2]} jobs, {policy}: {ratios}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
